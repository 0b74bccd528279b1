/* clt-bench's output code, with no device: json_out_string's escaping, bench_report's JSON lines
 * (parsed back strictly here) and markdown table, and bench_compare's joined table over JSON-lines
 * files written into a temp directory. Output is captured with open_memstream. gnuplot is never
 * run: PATH points at a fake one that records what it was sent. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_compare.h"
#include "bench_report.h"
#include "json_out.h"
#include "util/test_util.h"

/* ---------------------------------------------------------------- a strict flat-JSON reader */

/* One JSON string at *p (after its opening quote), unescaped into out. Returns 0, -1 if malformed. */
static int parse_string(const char **p, char *out, size_t cap)
{
    size_t n = 0;
    for (const char *s = *p; *s; s++) {
        char c = *s;
        if ((unsigned char)c < 0x20)
            return -1; /* raw control characters are not allowed in JSON strings */
        if (c == '"') {
            out[n] = '\0';
            *p = s + 1;
            return 0;
        }
        if (c == '\\') {
            s++;
            switch (*s) {
            case '"': case '\\': case '/': c = *s; break;
            case 'n': c = '\n'; break;
            case 'r': c = '\r'; break;
            case 't': c = '\t'; break;
            case 'u': {
                unsigned v;
                if (sscanf(s + 1, "%4x", &v) != 1 || v > 0x7f)
                    return -1;
                c = (char)v;
                s += 4;
                break;
            }
            default: return -1;
            }
        }
        if (n + 1 >= cap)
            return -1;
        out[n++] = c;
    }
    return -1;
}

/* The value of key in a one-line flat JSON object ending in "}\n" (strings unescaped, numbers as
 * written). The whole line must parse. Returns 1 found, 0 absent; fails the test if malformed. */
static int jget(const char *line, const char *key, char *out, size_t cap)
{
    const char *p = line;
    int found = 0;
    char k[64], v[1024];
    ck_assert_msg(*p++ == '{', "not an object: %s", line);
    for (;;) {
        ck_assert_msg(*p++ == '"' && parse_string(&p, k, sizeof k) == 0 && *p++ == ':',
                      "bad key in: %s", line);
        if (*p == '"') {
            p++;
            ck_assert_msg(parse_string(&p, v, sizeof v) == 0, "bad string in: %s", line);
        } else {
            size_t n = strspn(p, "-+.0123456789eE");
            ck_assert_msg(n > 0 && n < sizeof v, "bad number in: %s", line);
            memcpy(v, p, n);
            v[n] = '\0';
            p += n;
        }
        if (strcmp(k, key) == 0) {
            ck_assert_msg(!found, "key %s twice in: %s", key, line);
            found = 1;
            snprintf(out, cap, "%s", v);
        }
        if (*p == '}')
            break;
        ck_assert_msg(*p++ == ',', "bad separator in: %s", line);
    }
    ck_assert_msg(strcmp(p, "}\n") == 0, "trailing text in: %s", line);
    return found;
}

static void expect_field(const char *line, const char *key, const char *want)
{
    char v[1024];
    ck_assert_msg(jget(line, key, v, sizeof v), "no %s in: %s", key, line);
    ck_assert_msg(strcmp(v, want) == 0, "%s = \"%s\", expected \"%s\" in: %s", key, v, want, line);
}

static void expect_absent(const char *line, const char *key)
{
    char v[1024];
    ck_assert_msg(!jget(line, key, v, sizeof v), "unexpected %s in: %s", key, line);
}

/* Line i (0-based) of text, copied with its '\n' into out. */
static void nth_line(const char *text, int i, char *out, size_t cap)
{
    for (; i > 0; i--) {
        text = strchr(text, '\n');
        ck_assert_ptr_nonnull(text);
        text++;
    }
    const char *end = strchr(text, '\n');
    ck_assert_ptr_nonnull(end);
    ck_assert_uint_lt((size_t)(end - text) + 1, cap);
    snprintf(out, (size_t)(end - text) + 2, "%s", text);
}

static int count_lines(const char *text, const char *prefix)
{
    int n = 0;
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        n += strncmp(p, prefix, strlen(prefix)) == 0;
    return n;
}

/* ---------------------------------------------------------------- json_out_string */

START_TEST(json_string_escapes)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    json_out_string(f, "a\"b\\c\nd\re\tf\x01g\x1fh/\x7f\xc3\xa9");
    json_out_string(f, "");
    fclose(f);
    ck_assert_str_eq(buf, "\"a\\\"b\\\\c\\nd\\re\\tf\\u0001g\\u001fh/\x7f\xc3\xa9\"\"\"");
    free(buf);
}
END_TEST

/* ---------------------------------------------------------------- bench_report */

static bench_result ok_result(const char *name, double us, double work, bench_unit unit)
{
    bench_result r;
    memset(&r, 0, sizeof r);
    snprintf(r.name, sizeof r.name, "%s", name);
    r.outcome = BENCH_OK;
    r.timing.us_median = us;
    r.timing.us_min = us * 0.5;
    r.timing.us_max = us * 2;
    r.timing.samples = 7;
    r.timing.reps = 123;
    r.work = work;
    r.unit = unit;
    return r;
}

static bench_result other_result(const char *name, bench_outcome o, const char *note)
{
    bench_result r;
    memset(&r, 0, sizeof r);
    snprintf(r.name, sizeof r.name, "%s", name);
    r.outcome = o;
    snprintf(r.note, sizeof r.note, "%s", note);
    return r;
}

/* Six rows, one of each kind; json and table captured. */
static void report_all(int with_split, char **json, char **table)
{
    size_t jlen = 0, tlen = 0;
    FILE *jf = open_memstream(json, &jlen), *tf = open_memstream(table, &tlen);
    ck_assert(jf && tf);
    bench_report rep;
    bench_report_init(&rep, jf, "clt\"peer", "Dev \\ \"X\"\n2", "native");
    bench_result rows[6] = {
        ok_result("add/1M", 2.0, 4e6, BENCH_UNIT_BYTES),
        ok_result("matmul/256", 0.5, 1.5e6, BENCH_UNIT_FLOPS),
        ok_result("startup/driver_init", 1234.5678, 0, BENCH_UNIT_NONE),
        other_result("conv/none", BENCH_NOT_IMPLEMENTED, ""),
        other_result("gpu/only", BENCH_SKIPPED, "GPU only"),
        other_result("bad/case", BENCH_FAILED, "clt_add: \"x\" a|b \\ path\nsecond line"),
    };
    snprintf(rows[2].note, sizeof rows[2].note, "program \"cold\"");
    if (with_split) {
        rows[1].timing.has_split = 1;
        rows[1].timing.kernel_us = 0.25;
        rows[1].timing.transfer_us = 0.125;
        rows[1].timing.host_us = 0.0625;
        rows[1].timing.idle_us = 0.0625;
    }
    for (int i = 0; i < 6; i++)
        ck_assert_int_eq(bench_report_add(&rep, &rows[i]), 0);
    ck_assert_int_eq(rep.count, 6);
    bench_report_table(&rep, tf);
    bench_report_free(&rep);
    ck_assert_int_eq(rep.count, 0);
    fclose(jf);
    fclose(tf);
}

START_TEST(report_json_lines)
{
    char *json, *table, line[2048];
    report_all(1, &json, &table);
    ck_assert_int_eq(count_lines(json, "{"), 6);
    for (int i = 0; i < 6; i++) {
        nth_line(json, i, line, sizeof line);
        expect_field(line, "peer", "clt\"peer");
        expect_field(line, "device", "Dev \\ \"X\"\n2");
        expect_field(line, "profile", "native");
    }
    nth_line(json, 0, line, sizeof line);
    expect_field(line, "case", "add/1M");
    expect_field(line, "us", "2.000");
    expect_field(line, "us_min", "1.000");
    expect_field(line, "us_max", "4.000");
    expect_field(line, "samples", "7");
    expect_field(line, "reps", "123");
    expect_field(line, "bytes", "4000000");
    expect_field(line, "gbps", "2000.000"); /* 4e6 B in 2 us */
    expect_absent(line, "gflops");
    expect_absent(line, "status");
    expect_absent(line, "note");
    expect_absent(line, "kernel_us");

    nth_line(json, 1, line, sizeof line);
    expect_field(line, "case", "matmul/256");
    expect_field(line, "flop", "1500000");
    expect_field(line, "gflops", "3000.000"); /* 1.5e6 FLOP in 0.5 us */
    expect_absent(line, "gbps");
    expect_field(line, "kernel_us", "0.250");
    expect_field(line, "transfer_us", "0.125");
    expect_field(line, "host_us", "0.062");
    expect_field(line, "idle_us", "0.062");

    nth_line(json, 2, line, sizeof line);
    expect_field(line, "us", "1234.568");
    expect_field(line, "note", "program \"cold\"");
    expect_absent(line, "gbps");
    expect_absent(line, "gflops");

    nth_line(json, 3, line, sizeof line);
    expect_field(line, "case", "conv/none");
    expect_field(line, "status", "not_implemented");
    expect_absent(line, "us");
    expect_absent(line, "note");

    nth_line(json, 4, line, sizeof line);
    expect_field(line, "status", "skipped");
    expect_field(line, "note", "GPU only");

    nth_line(json, 5, line, sizeof line);
    expect_field(line, "status", "failed");
    expect_field(line, "error", "clt_add: \"x\" a|b \\ path\nsecond line");
    expect_absent(line, "note");
    expect_absent(line, "us");
    free(json);
    free(table);
}
END_TEST

START_TEST(report_table_plain)
{
    char *json, *table;
    report_all(0, &json, &table);
    ck_assert_ptr_nonnull(strstr(table, "\nclt\"peer on Dev \\ \"X\"\n2 (profile native)\n\n"));
    ck_assert_ptr_nonnull(
        strstr(table, "\n| case | us | GB/s or GFLOP/s | note |\n| --- | ---: | ---: | --- |\n"));
    ck_assert_int_eq(count_lines(table, "| "), 2 + 6);
    ck_assert_ptr_nonnull(strstr(table, "\n| add/1M | 2.00 | 2000.00 GB/s |  |\n"));
    ck_assert_ptr_nonnull(strstr(table, "\n| matmul/256 | 0.50 | 3000.00 GFLOP/s |  |\n"));
    ck_assert_ptr_nonnull(strstr(table, "\n| startup/driver_init | 1234.57 | - | program \"cold\" |\n"));
    ck_assert_ptr_nonnull(strstr(table, "\n| conv/none | - | - | not implemented |\n"));
    ck_assert_ptr_nonnull(strstr(table, "\n| gpu/only | - | - | skipped: GPU only |\n"));
    /* first line of the message only, '|' kept out of the cell */
    ck_assert_ptr_nonnull(strstr(table, "\n| bad/case | - | - | FAILED: clt_add: \"x\" a/b \\ path |\n"));
    ck_assert_ptr_null(strstr(table, "second line"));
    free(json);
    free(table);
}
END_TEST

START_TEST(report_table_split)
{
    char *json, *table;
    report_all(1, &json, &table);
    ck_assert_ptr_nonnull(strstr(table, "\n| case | us | kernel_us | transfer_us | host_us | idle_us "
                                        "| GB/s or GFLOP/s | note |\n"
                                        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n"));
    ck_assert_int_eq(count_lines(table, "| "), 2 + 6);
    ck_assert_ptr_nonnull(strstr(table, "\n| add/1M | 2.00 | - | - | - | - | 2000.00 GB/s |  |\n"));
    ck_assert_ptr_nonnull(
        strstr(table, "\n| matmul/256 | 0.50 | 0.25 | 0.12 | 0.06 | 0.06 | 3000.00 GFLOP/s |  |\n"));
    ck_assert_ptr_nonnull(strstr(table, "\n| conv/none | - | - | - | - | - | - | not implemented |\n"));
    free(json);
    free(table);
}
END_TEST

START_TEST(report_many_rows)
{
    /* past the first capacity (64), every row kept in order */
    FILE *jf = fopen("/dev/null", "w");
    ck_assert_ptr_nonnull(jf);
    bench_report rep;
    bench_report_init(&rep, jf, "p", "d", "gfx902");
    for (int i = 0; i < 200; i++) {
        char name[32];
        snprintf(name, sizeof name, "case/%d", i);
        bench_result r = ok_result(name, i + 1, 0, BENCH_UNIT_NONE);
        ck_assert_int_eq(bench_report_add(&rep, &r), 0);
    }
    ck_assert_int_eq(rep.count, 200);
    ck_assert_str_eq(rep.rows[199].name, "case/199");
    ck_assert(rep.rows[63].timing.us_median == 64);
    bench_report_free(&rep);
    fclose(jf);
}
END_TEST

/* ---------------------------------------------------------------- bench_compare */

static char *tmp;

static void setup_tmp(void) { tmp = tu_make_temp_dir(); }
static void teardown_tmp(void)
{
    tu_remove_dir(tmp);
    free(tmp);
}

/* tmp/name with that content; returns the path (static slots, 8 at a time). */
static char *write_in_tmp(const char *name, const char *text)
{
    static char paths[8][512];
    static int next;
    char *path = paths[next++ % 8];
    snprintf(path, sizeof paths[0], "%s/%s", tmp, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    return path;
}

/* bench_compare's return code; *text is what it printed (heap). */
static int compare(int n, char **files, const char *png, char **text)
{
    size_t len = 0;
    FILE *f = open_memstream(text, &len);
    ck_assert_ptr_nonnull(f);
    int rc = bench_compare(n, files, png, f);
    fclose(f);
    return rc;
}

static void expect_row(const char *text, const char *row)
{
    ck_assert_msg(strstr(text, row) != NULL, "no row\n%s\nin\n%s", row, text);
}

#define RUN_A "{\"peer\":\"cltensor\",\"device\":\"Dev\",\"profile\":\"native\","
#define RUN_C "{\"peer\":\"cltensor\",\"device\":\"Dev\",\"profile\":\"gfx902\","

static char **three_runs(void)
{
    static char *files[3];
    files[0] = write_in_tmp("a.jsonl",
        RUN_A "\"case\":\"startup/driver_init\",\"us\":220506.474,\"samples\":1}\n"
        RUN_A "\"case\":\"add/1M\",\"us\":12.500,\"us_min\":12.0,\"gbps\":3.0}\n"
        RUN_A "\"case\":\"matmul/256\",\"us\":30.000}\n"
        RUN_A "\"case\":\"conv/x\",\"status\":\"not_implemented\"}\n");
    /* Python's json.dumps spacing, as the PyTorch peer writes it */
    files[1] = write_in_tmp("torch.jsonl",
        "{\"peer\": \"torch\", \"device\": \"Dev\", \"case\": \"startup/driver_init\", \"us\": 110253.237}\n"
        "{\"peer\": \"torch\", \"device\": \"Dev\", \"case\": \"add/1M\", \"us\": 30.0}\n"
        "{\"peer\": \"torch\", \"device\": \"Dev\", \"case\": \"matmul/256\", \"us\": 12.0}\n"
        "{\"peer\": \"torch\", \"device\": \"Dev\", \"case\": \"conv/x\", \"status\": \"failed\", "
        "\"error\": \"boom \\\"us\\\": 3\"}\n");
    files[2] = write_in_tmp("c.jsonl",
        RUN_C "\"case\":\"add/1M\",\"us\":50}\n"
        RUN_C "\"case\":\"only/c\",\"us\":5.5}\n");
    return files;
}

START_TEST(compare_three_runs)
{
    char *text;
    ck_assert_int_eq(compare(3, three_runs(), NULL, &text), 0);
    ck_assert_ptr_nonnull(strstr(text, "| case | cltensor @ Dev (us) | torch @ Dev (us) | cltensor @ Dev "
                                       "(gfx902) (us) | fastest | by |\n"
                                       "| --- | ---: | ---: | ---: | --- | ---: |\n"));
    /* startup rows are rows like any other */
    expect_row(text, "\n| startup/driver_init | 220506.47 | 110253.24 | - | torch @ Dev | 2.00x |\n");
    /* fastest of three, by the second fastest: 30 / 12.5 */
    expect_row(text, "\n| add/1M | 12.50 | 30.00 | 50.00 | cltensor @ Dev | 2.40x |\n");
    expect_row(text, "\n| matmul/256 | 30.00 | 12.00 | - | torch @ Dev | 2.50x |\n");
    /* measured by one run only: it is fastest, by nothing */
    expect_row(text, "\n| only/c | - | - | 5.50 | cltensor @ Dev (gfx902) | |\n");
    /* not implemented / failed everywhere: no row at all */
    ck_assert_ptr_null(strstr(text, "conv/x"));
    ck_assert_int_eq(count_lines(text, "| "), 2 + 4);
    /* order: cases in the order first seen */
    ck_assert(strstr(text, "startup/driver_init") < strstr(text, "add/1M"));
    ck_assert(strstr(text, "matmul/256") < strstr(text, "only/c"));
    free(text);
}
END_TEST

START_TEST(compare_bad_input)
{
    char *text;
    char *files[3] = {three_runs()[0], NULL, NULL};
    char missing[512];
    snprintf(missing, sizeof missing, "%s/missing.jsonl", tmp);
    files[1] = missing;
    ck_assert_int_eq(compare(2, files, NULL, &text), -1);
    ck_assert_str_eq(text, ""); /* no half table */
    free(text);

    /* junk, empty, truncated and over-long lines: skipped, the good lines still count */
    char longline[6000 + 200];
    snprintf(longline, sizeof longline, RUN_A "\"case\":\"long\",\"us\":7,\"note\":\"%06000d\"}\n", 0);
    char *body = malloc(strlen(longline) + 1000);
    ck_assert_ptr_nonnull(body);
    snprintf(body, strlen(longline) + 1000, "not json at all\n\n{\n\"case\"\n{\"case\":\"x\"}\n%s"
             RUN_A "\"case\":\"add/1M\",\"us\":4}\n" RUN_A "\"case\":\"trunc", longline);
    files[0] = write_in_tmp("junk.jsonl", body);
    free(body);
    ck_assert_int_eq(compare(1, files, NULL, &text), 0);
    expect_row(text, "\n| long | 7.00 | cltensor @ Dev | |\n");
    expect_row(text, "\n| add/1M | 4.00 | cltensor @ Dev | |\n");
    ck_assert_ptr_null(strstr(text, "| x |"));
    ck_assert_ptr_null(strstr(text, "trunc"));
    ck_assert_ptr_null(strstr(text, "000000")); /* the rest of the long line is no row */
    free(text);

    /* no files: an empty table, not a crash */
    ck_assert_int_eq(compare(0, files, NULL, &text), 0);
    ck_assert_int_eq(count_lines(text, "| "), 2);
    free(text);
}
END_TEST

START_TEST(compare_duplicates)
{
    char *text;
    /* a run split over two files (suites run separately) is one column; a case measured twice
     * keeps its last time */
    char *files[2];
    files[0] = write_in_tmp("p1.jsonl", RUN_A "\"case\":\"add/1M\",\"us\":9}\n"
                                        RUN_A "\"case\":\"add/1M\",\"us\":3}\n");
    files[1] = write_in_tmp("p2.jsonl", RUN_A "\"case\":\"matmul/256\",\"us\":8}\n");
    ck_assert_int_eq(compare(2, files, NULL, &text), 0);
    ck_assert_ptr_nonnull(strstr(text, "| case | cltensor @ Dev (us) | fastest | by |\n"));
    expect_row(text, "\n| add/1M | 3.00 | cltensor @ Dev | |\n");
    expect_row(text, "\n| matmul/256 | 8.00 | cltensor @ Dev | |\n");
    ck_assert_int_eq(count_lines(text, "| add/1M"), 1);
    free(text);

    /* the same file twice: still one column, equal times */
    files[1] = files[0];
    ck_assert_int_eq(compare(2, files, NULL, &text), 0);
    ck_assert_int_eq(count_lines(text, "| add/1M"), 1);
    free(text);
}
END_TEST

/* A fake gnuplot first on PATH: it saves its script to tmp/script and exits with `rc`. */
static char *fake_gnuplot(int rc)
{
    char bin[600], tool[700], marker[600];
    snprintf(bin, sizeof bin, "%s/bin", tmp);
    ck_assert_int_eq(mkdir(bin, 0700), 0);
    snprintf(tool, sizeof tool, "%s/gnuplot", bin);
    snprintf(marker, sizeof marker, "%s/script", tmp);
    FILE *f = fopen(tool, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "#!/bin/sh\ncat > '%s'\nexit %d\n", marker, rc);
    fclose(f);
    ck_assert_int_eq(chmod(tool, 0700), 0);
    char *saved = tu_env_save("PATH");
    char path[1200];
    snprintf(path, sizeof path, "%s:%s", bin, saved ? saved : "/usr/bin:/bin");
    setenv("PATH", path, 1);
    return saved;
}

static int script_exists(void)
{
    char marker[600];
    snprintf(marker, sizeof marker, "%s/script", tmp);
    return access(marker, F_OK) == 0;
}

START_TEST(compare_png)
{
    char *saved = fake_gnuplot(0), *text;
    ck_assert_int_eq(compare(3, three_runs(), NULL, &text), 0);
    ck_assert(!script_exists()); /* png = NULL: nothing drawn */
    free(text);

    char png[600], marker[600], script[8192];
    snprintf(png, sizeof png, "%s/chart.png", tmp);
    ck_assert_int_eq(compare(3, three_runs(), png, &text), 0);
    free(text);
    snprintf(marker, sizeof marker, "%s/script", tmp);
    FILE *f = fopen(marker, "r");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(script, 1, sizeof script - 1, f);
    fclose(f);
    script[n] = '\0';
    char want[700];
    snprintf(want, sizeof want, "set output '%s'\n", png);
    ck_assert_ptr_nonnull(strstr(script, want));
    ck_assert_ptr_nonnull(strstr(script, "title 'cltensor @ Dev (gfx902)'"));
    ck_assert_ptr_nonnull(strstr(script, "using 4:xtic(1)")); /* one series per run */
    ck_assert_ptr_null(strstr(script, "using 5:"));
    tu_env_restore("PATH", saved);
}
END_TEST

START_TEST(compare_png_gnuplot_fails)
{
    char *saved = fake_gnuplot(3), *text, png[600];
    snprintf(png, sizeof png, "%s/chart.png", tmp);
    ck_assert_int_eq(compare(3, three_runs(), png, &text), -1);
    expect_row(text, "| add/1M |"); /* the table was printed before the chart failed */
    free(text);
    tu_env_restore("PATH", saved);
}
END_TEST

Suite *bench_output_suite(void)
{
    Suite *s = suite_create("bench_output");
    TCase *t = tcase_create("report");
    tcase_add_test(t, json_string_escapes);
    tcase_add_test(t, report_json_lines);
    tcase_add_test(t, report_table_plain);
    tcase_add_test(t, report_table_split);
    tcase_add_test(t, report_many_rows);
    suite_add_tcase(s, t);
    TCase *c = tcase_create("compare");
    tcase_add_checked_fixture(c, setup_tmp, teardown_tmp);
    tcase_add_test(c, compare_three_runs);
    tcase_add_test(c, compare_bad_input);
    tcase_add_test(c, compare_duplicates);
    tcase_add_test(c, compare_png);
    tcase_add_test(c, compare_png_gnuplot_fails);
    suite_add_tcase(s, c);
    return s;
}
