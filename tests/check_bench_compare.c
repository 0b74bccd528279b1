/* clt-bench --compare (bench/bench_compare.c), with no device: the joined table over JSON-lines
 * files written into a temp directory (runs seen in some files only, fastest run and ratio,
 * startup rows, Python's spacing), bad input, duplicates, and the chart. gnuplot is never run: PATH
 * points at a fake one that records the script it was sent. Output captured with open_memstream. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_compare.h"
#include "util/test_util.h"

/* Lines of text starting with prefix. */
static int count_lines(const char *text, const char *prefix)
{
    int n = 0;
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        n += strncmp(p, prefix, strlen(prefix)) == 0;
    return n;
}

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

    /* a value that spells a key ("device":"us") is not that key */
    files[0] = write_in_tmp("keys.jsonl",
                            "{\"peer\":\"case\",\"device\":\"us\",\"case\":\"add/1M\",\"us\":2}\n");
    ck_assert_int_eq(compare(1, files, NULL, &text), 0);
    expect_row(text, "\n| add/1M | 2.00 | case @ us | |\n");
    free(text);

    /* escapes are decoded, not cut: \" and \\u00e9 in names, "us" as text inside a string */
    files[0] = write_in_tmp("escapes.jsonl",
                            "{\"peer\":\"my \\\"fast\\\" lib\",\"device\":\"D\\u00e9v\","
                            "\"note\":\"\\\"us\\\": 99,\",\"case\":\"add/1M\",\"us\":2}\n");
    ck_assert_int_eq(compare(1, files, NULL, &text), 0);
    expect_row(text, "\n| add/1M | 2.00 | my \"fast\" lib @ D\xc3\xa9v | |\n");
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
Suite *bench_compare_suite(void)
{
    Suite *s = suite_create("bench_compare");
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
