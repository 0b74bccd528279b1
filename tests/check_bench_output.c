/* clt-bench's output code, with no device: json_out_string's escaping, and bench_report's JSON
 * lines (parsed back strictly here) and markdown table, captured with open_memstream.
 * bench_compare has its own suite (check_bench_compare.c). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    return s;
}
