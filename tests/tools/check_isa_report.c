/* The reader of the AMD ISA check's resources.tsv (src/tools/isa_report.c), which clt-info
 * --resources --profile <target> prints: a good report, stale rows against a variant list, and the
 * inputs it must refuse with a message naming the path and the problem (malformed fields, wrong
 * target, over-long lines, NUL bytes, a FIFO that must not block, a directory). No device. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/isa_report.h"

static char dir[64];
static char path[128];

static void setup(void)
{
    strcpy(dir, "/tmp/clt-isa-report.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/resources.tsv", dir);
}

static void teardown(void)
{
    unlink(path);
    rmdir(dir);
}

static void write_text(const char *text, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(text, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
}

#define HEAD "#cltensor-isa-resources v1 gfx902\n" \
             "#index\tuse\tprogram\tkernel\tvgpr\tsgpr\tscratch\tvgpr_spill\tsgpr_spill\tlds_bytes\toccupancy\toptions\n"
#define BASE "-cl-std=CL1.2 -DCLT_WAVE=64"
static const char good[] =
    HEAD
    "0\tselected\tgemm_tiled\tgemm_tiled_nn\t128\t40\t0\t0\t0\t16384\t2\t" BASE " -DMWG=64 -DNWG=64\n"
    "0\tselected\tgemm_tiled\tgemm_tiled_tn\t120\t40\t0\t0\t0\t16384\t2\t" BASE " -DMWG=64 -DNWG=64\n"
    "7\tcompile-only\texpr:relu\tclt_expr\t12\t16\t0\t0\t0\t0\t10\t" BASE "\r\n"
    "9\tselected\tsoftmax\tsoftmax_rows\t24\t20\t0\t0\t0\t1024\t8\t" BASE " -DSM_K=8"; /* no \n */

static int read_report(clt__isa_report *r, char *err)
{
    return clt__isa_report_read(path, "gfx902", r, err, 512);
}

START_TEST(test_good)
{
    write_text(good, strlen(good));
    clt__isa_report r;
    char err[512] = "";
    ck_assert_int_eq(read_report(&r, err), CLT__ISA_OK);
    ck_assert_int_eq(r.n, 4);
    ck_assert_int_eq(r.rows[0].index, 0);
    ck_assert_int_eq(r.rows[0].selected, 1);
    ck_assert_str_eq(r.rows[1].kernel, "gemm_tiled_tn");
    ck_assert_int_eq(r.rows[1].vgpr, 120);
    ck_assert_int_eq(r.rows[1].lds_bytes, 16384);
    ck_assert_int_eq(r.rows[2].selected, 0);
    ck_assert_str_eq(r.rows[2].program, "expr:relu");
    ck_assert_str_eq(r.rows[2].options, BASE); /* \r stripped */
    ck_assert_int_eq(r.rows[3].occupancy, 8);
    ck_assert_str_eq(r.rows[3].options, BASE " -DSM_K=8");
    clt__isa_report_free(&r);
}
END_TEST

/* Rows whose (program, options) the list no longer has are stale; listed variants without rows
 * are counted. */
START_TEST(test_stale)
{
    write_text(good, strlen(good));
    clt__isa_report r;
    char err[512];
    ck_assert_int_eq(read_report(&r, err), CLT__ISA_OK);
    clt__variant v[3];
    memset(v, 0, sizeof v);
    strcpy(v[0].program, "gemm_tiled");
    strcpy(v[0].options, "-DMWG=64 -DNWG=64");
    strcpy(v[1].program, "expr:relu"); /* no family options */
    strcpy(v[2].program, "softmax");
    strcpy(v[2].options, "-DSM_K=0"); /* the table moved from 8 to 0 */
    clt__variant_list l = {v, 3, 3};
    ck_assert_int_eq(clt__isa_report_mark_stale(&r, &l, BASE), 1);
    ck_assert_int_eq(r.rows[0].stale + r.rows[1].stale + r.rows[2].stale, 0);
    ck_assert_int_eq(r.rows[3].stale, 1);
    ck_assert_int_eq(r.missing, 1); /* softmax -DSM_K=0 */
    /* a prefix of the options is not the same variant; nor another base */
    strcpy(v[0].options, "-DMWG=64");
    ck_assert_int_eq(clt__isa_report_mark_stale(&r, &l, BASE), 3);
    ck_assert_int_eq(clt__isa_report_mark_stale(&r, &l, "-cl-std=CL1.2 -DCLT_WAVE=32"), 4);
    char buf[4096];
    FILE *f = fmemopen(buf, sizeof buf, "w");
    clt__isa_report_print(f, &r, path);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(buf, "STALE"));
    ck_assert_ptr_nonnull(strstr(buf, "4 kernels of 3 variants, 4 stale rows"));
    clt__isa_report_free(&r);
}
END_TEST

/* Each malformed text is refused with the path and the problem named. */
START_TEST(test_malformed)
{
    static const struct {
        const char *text, *message;
    } cases[] = {
        {"", "empty"},
        {"index\tuse\n", "line 1: not"},
        {"#cltensor-isa-resources v1 gfx1030\n", "a report for gfx1030, not gfx902"},
        {"#cltensor-isa-resources v2 gfx902\n", "line 1: not"},
        {HEAD "0\tselected\tgemm_tiled\tk\t1\t2\t3\t4\t5\t6\t7\n", "line 3: field options"},
        {HEAD "0\tselected\tgemm_tiled\tk\t1\t2\t3\t4\t5\t6\t7\to\textra\n", "line 3: field (a 13th field)"},
        {HEAD "x\tselected\tgemm_tiled\tk\t1\t2\t3\t4\t5\t6\t7\to\n", "field index"},
        {HEAD "-1\tselected\tgemm_tiled\tk\t1\t2\t3\t4\t5\t6\t7\to\n", "field index"},
        {HEAD "0\tmaybe\tgemm_tiled\tk\t1\t2\t3\t4\t5\t6\t7\to\n", "field use"},
        {HEAD "0\tselected\tgemm tiled\tk\t1\t2\t3\t4\t5\t6\t7\to\n", "field program"},
        {HEAD "0\tselected\tgemm_tiled\tk\x1b[2J\t1\t2\t3\t4\t5\t6\t7\to\n", "field kernel"},
        {HEAD "0\tselected\tgemm_tiled\tk\t1.5\t2\t3\t4\t5\t6\t7\to\n", "field vgpr"},
        {HEAD "0\tselected\tgemm_tiled\tk\t1\t2\t3\t4\t5\t99999999999\t7\to\n", "field lds_bytes"},
        {HEAD "0\tselected\tgemm_tiled\tk\t1\t2\t3\t4\t5\t6\t\to\n", "field occupancy"},
        {HEAD "0\tselected\tgemm_tiled\tk\t1\t2\t3\t4\t5\t6\t7\t\n", "field options"},
        {HEAD "0\tselected\tgemm_tiled\tk\t1\t2\t3\t4\t5\t6\t7\t-DX=\x7f\n", "field options"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        write_text(cases[i].text, strlen(cases[i].text));
        clt__isa_report r;
        char err[512] = "";
        ck_assert_int_eq(read_report(&r, err), CLT__ISA_BAD);
        ck_assert_msg(strstr(err, path) && strstr(err, cases[i].message), "case %zu: \"%s\"", i, err);
        ck_assert_ptr_null(r.rows);
    }
    /* a NUL byte, an over-long line */
    static const char nul[] = HEAD "0\tselected\tgemm_tiled\tk\t1\t2\t3\t4\t5\t6\t7\to\0x\n";
    write_text(nul, sizeof nul - 1);
    clt__isa_report r;
    char err[512] = "";
    ck_assert_int_eq(read_report(&r, err), CLT__ISA_BAD);
    ck_assert_ptr_nonnull(strstr(err, "NUL byte"));
    size_t n = strlen(HEAD) + CLT__ISA_LINE_MAX + 10;
    char *big = malloc(n + 1);
    ck_assert_ptr_nonnull(big);
    strcpy(big, HEAD);
    memset(big + strlen(HEAD), 'a', n - strlen(HEAD));
    big[n] = '\0';
    write_text(big, n);
    ck_assert_int_eq(read_report(&r, err), CLT__ISA_BAD);
    ck_assert_msg(strstr(err, "line 3") && strstr(err, "more than 2048"), "%s", err);
    free(big);
}
END_TEST

/* A FIFO (no writer: a blocking open would hang), a directory and a missing file. */
START_TEST(test_not_regular)
{
    clt__isa_report r;
    char err[512] = "";
    ck_assert_int_eq(read_report(&r, err), CLT__ISA_ABSENT);
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    ck_assert_int_eq(read_report(&r, err), CLT__ISA_BAD);
    ck_assert_msg(strstr(err, path) && strstr(err, "not a regular file"), "%s", err);
    unlink(path);
    ck_assert_int_eq(clt__isa_report_read(dir, "gfx902", &r, err, sizeof err), CLT__ISA_BAD);
    ck_assert_msg(strstr(err, dir) && strstr(err, "not a regular file"), "%s", err);
}
END_TEST

Suite *isa_report_suite(void)
{
    Suite *s = suite_create("isa_report");
    TCase *tc = tcase_create("read");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_good);
    tcase_add_test(tc, test_stale);
    tcase_add_test(tc, test_malformed);
    tcase_add_test(tc, test_not_regular);
    suite_add_tcase(s, tc);
    return s;
}
