/* The NVIDIA build-log parser (src/tools/nv_resources.c) on canned log text: the forms of the H200
 * report (bench/results/h200/nv_report.txt), spills, missing and reordered items, helper functions'
 * property blocks, garbage, over-long lines, out-of-range numbers; and the library's spill guard
 * (src/program/fixed_group_build.c): which builds it watches, which logs count as spilling. No device. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "program/program.h"
#include "tools/nv_resources.h"

static void parse(clt__nv_table *t, const char *text)
{
    clt__nv_table_init(t);
    clt__nv_parse_text(t, text, strlen(text));
}

static const char normal[] =
    "== 6 gemm_tiled -DMWG=64 -DNWG=32 -DIDX64=0\n"
    "   ptxas info    : 0 bytes gmem\n"
    "   ptxas info    : Compiling entry function 'gemm_tiled_tt' for 'sm_90a'\n"
    "   ptxas info    : Function properties for gemm_tiled_tt\n"
    "   ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "   ptxas info    : Used 64 registers, used 1 barriers, 12308 bytes smem\n"
    "   ptxas info    : Compile time = 303.076 ms\n"
    "   ptxas info    : Compiling entry function 'gemm_tiled_tn' for 'sm_90a'\n"
    "   ptxas info    : Function properties for gemm_tiled_tn\n"
    "   ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "   ptxas info    : Used 60 registers, used 0 barriers\n"
    "== 7 softmax -DSM_K=8\n"
    "ptxas info    : Compiling entry function 'softmax_rows' for 'sm_90a'\r\n"
    "ptxas info    : Function properties for softmax_rows\r\n"
    "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\r\n"
    "ptxas info    : Used 32 registers, used 1 barriers, 8192 bytes smem, 400 bytes cmem[0]"; /* no \n */

START_TEST(test_normal)
{
    clt__nv_table t;
    parse(&t, normal);
    ck_assert_int_eq(t.n, 3);
    ck_assert_int_eq(t.variants, 2);
    ck_assert_int_eq(t.malformed + t.over_long + t.build_failures, 0);
    const clt__nv_row *r = &t.rows[0];
    ck_assert_int_eq(r->variant, 6);
    ck_assert_str_eq(r->program, "gemm_tiled");
    ck_assert_str_eq(r->kernel, "gemm_tiled_tt");
    ck_assert_str_eq(r->arch, "sm_90a");
    ck_assert_int_eq(r->registers, 64);
    ck_assert_int_eq(r->barriers, 1);
    ck_assert_int_eq(r->smem, 12308);
    ck_assert_int_eq(r->stack, 0);
    ck_assert_int_eq(r->spill_stores, 0);
    ck_assert_int_eq(r->spill_loads, 0);
    ck_assert_int_eq(t.rows[1].registers, 60);
    ck_assert_int_eq(t.rows[1].smem, -1); /* no shared memory item */
    r = &t.rows[2];
    ck_assert_int_eq(r->variant, 7);
    ck_assert_str_eq(r->kernel, "softmax_rows");
    ck_assert_int_eq(r->registers, 32);
    ck_assert_int_eq(r->smem, 8192); /* cmem after it ignored, \r stripped, last line unterminated */
    ck_assert_int_eq(clt__nv_kernels_with_spills(&t), 0);
    clt__nv_table_free(&t);
}
END_TEST

START_TEST(test_spills)
{
    static const char log[] =
        "== 246 mlp_fused -DWG=256 -DCOLS=128 -DPPI=16\n"
        "   ptxas info    : Compiling entry function 'mlp_forward' for 'sm_90a'\n"
        "   ptxas info    : Function properties for mlp_forward\n"
        "   ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
        "   ptxas info    : Used 40 registers, used 1 barriers, 33808 bytes smem\n"
        "   ptxas info    : Compiling entry function 'mlp_train' for 'sm_90a'\n"
        "   ptxas info    : Function properties for mlp_train\n"
        "   ptxas         .     48 bytes stack frame, 48 bytes spill stores, 64 bytes spill loads\n"
        "   ptxas info    : Used 48 registers, used 1 barriers, 33808 bytes smem\n";
    clt__nv_table t;
    parse(&t, log);
    ck_assert_int_eq(t.n, 2);
    ck_assert_int_eq(clt__nv_kernels_with_spills(&t), 1);
    const clt__nv_row *r = &t.rows[1];
    ck_assert_str_eq(r->kernel, "mlp_train");
    ck_assert_int_eq(r->stack, 48);
    ck_assert_int_eq(r->spill_stores, 48);
    ck_assert_int_eq(r->spill_loads, 64);
    ck_assert_int_eq(t.rows[0].spill_loads, 0);
    /* the summary names them */
    char buf[512];
    FILE *f = fmemopen(buf, sizeof buf, "w");
    ck_assert_ptr_nonnull(f);
    clt__nv_print_summary(f, &t);
    fclose(f);
    ck_assert_str_eq(buf, "nv-resources: 1 variants, 2 kernels, 1 with spills, 0 build failures\n");
    clt__nv_table_free(&t);
}
END_TEST

/* Items missing or in another order, a helper function's block (not the kernel's), an older
 * ptxas' lines without barriers, a failed build's header. */
START_TEST(test_missing_fields)
{
    static const char log[] =
        "== 3 conv2d -DX=1  BUILD FAILED\n"
        "ptxas info    : Compiling entry function 'k1' for 'sm_80'\n"
        "ptxas info    : Used 12 registers, 4 bytes cmem[2], 64 bytes smem\n"
        "ptxas info    : Function properties for helper_fn\n"
        "ptxas         .     16 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads\n"
        "ptxas info    : Compiling entry function 'k2' for 'sm_80'\n"
        "ptxas info    : Function properties for k2\n"
        "ptxas         .     24 bytes stack frame\n";
    clt__nv_table t;
    parse(&t, log);
    ck_assert_int_eq(t.n, 2);
    ck_assert_int_eq(t.build_failures, 1);
    ck_assert_int_eq(t.malformed, 0);
    ck_assert_int_eq(t.rows[0].registers, 12);
    ck_assert_int_eq(t.rows[0].smem, 64);
    ck_assert_int_eq(t.rows[0].barriers, -1);
    ck_assert_int_eq(t.rows[0].stack, -1); /* the helper's block is not k1's */
    ck_assert_int_eq(t.rows[0].spill_stores, -1);
    ck_assert_int_eq(t.rows[1].stack, 24);
    ck_assert_int_eq(t.rows[1].spill_stores, -1);
    ck_assert_int_eq(t.rows[1].registers, -1);
    ck_assert_int_eq(clt__nv_kernels_with_spills(&t), 0);
    clt__nv_table_free(&t);
}
END_TEST

START_TEST(test_garbage)
{
    static const char log[] =
        "\n\n   \x01\x02\xff garbage\n"
        "ptxas info    : Used 10 registers\n"                            /* no kernel open */
        "ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
        "ptxas info    : Used abc registers, used 1 barriers\n"          /* no count */
        "ptxas info    : Used 7 registers\n"                             /* taken */
        "ptxas info    : Used 9 registers\n"                             /* a second Used line */
        "ptxas info    : Function properties for k\n"
        "ptxas         .     99999999999999999999 bytes stack frame\n"   /* out of range */
        "ptxas info    : Compiling entry function 'bad\x1b[31m' for 'sm_90'\n" /* escape codes */
        "ptxas info    : Compiling entry function 'unterminated for 'sm_90\n"
        "ptxas info    : Compiling entry function\n"
        "ptxas info    no colon\n"
        "ptxas fatal   : Unresolved extern function 'x'\n"               /* status says it */
        "== x notanumber\n"
        "== 5 \x1b[2J\n";
    clt__nv_table t;
    parse(&t, log);
    ck_assert_int_eq(t.n, 1);
    ck_assert_str_eq(t.rows[0].kernel, "k");
    ck_assert_int_eq(t.rows[0].registers, 7); /* "Used abc" set no count, the next line did */
    ck_assert_int_eq(t.rows[0].barriers, 1);
    ck_assert_int_eq(t.malformed, 10);
    ck_assert_int_eq(t.rows[0].stack, -1);
    clt__nv_table_free(&t);
}
END_TEST

START_TEST(test_over_long)
{
    size_t n = 3 * CLT__NV_LINE_MAX;
    char *text = malloc(n + 200);
    ck_assert_ptr_nonnull(text);
    strcpy(text, "ptxas info    : Compiling entry function 'k' for 'sm_90'\nptxas info    : Used 1");
    size_t at = strlen(text);
    memset(text + at, '0', n); /* "Used 1000...0" over the bound */
    strcpy(text + at + n, " registers\nptxas info    : Compiling entry function '");
    at = strlen(text);
    clt__nv_table t;
    parse(&t, text);
    ck_assert_int_eq(t.n, 1);
    ck_assert_int_eq(t.over_long, 1);
    ck_assert_int_eq(t.malformed, 1); /* the truncated last line */
    ck_assert_int_eq(t.rows[0].registers, -1);
    clt__nv_table_free(&t);
    /* a name at the bound: refused, not truncated */
    char line[512];
    memset(line, 'a', sizeof line);
    memcpy(line, "ptxas info : Compiling entry function '", 39);
    memcpy(line + 39 + CLT__NV_NAME_MAX, "' for 'sm_90'", 13);
    clt__nv_table_init(&t);
    ck_assert_int_eq(clt__nv_parse_line(&t, line, 39 + CLT__NV_NAME_MAX + 13), 1);
    ck_assert_int_eq(t.n, 0);
    /* the length is honoured: an unterminated buffer with a good line inside */
    ck_assert_int_eq(clt__nv_parse_line(&t, "ptxas info : Compiling entry function 'k' for 'sm_90'XXXX", 53), 0);
    ck_assert_int_eq(t.n, 1);
    ck_assert_str_eq(t.rows[0].arch, "sm_90");
    clt__nv_table_free(&t);
    free(text);
}
END_TEST

/* The guard's two decisions on text alone: a log with any non-zero spill count spills; only an
 * NVIDIA build of a source that uses CLT_FIXED_GROUP, not already without it, is guarded. */
START_TEST(test_spill_guard)
{
    ck_assert_int_eq(clt__log_has_spills(normal), 0);
    ck_assert_int_eq(clt__log_has_spills(NULL), 0);
    ck_assert_int_eq(clt__log_has_spills(""), 0);
    ck_assert_int_eq(clt__log_has_spills(" bytes spill stores at the start"), 0);
    ck_assert_int_eq(clt__log_has_spills("ptxas . 0 bytes stack frame, 00 bytes spill stores, 0 "
                                         "bytes spill loads"), 0);
    ck_assert_int_eq(clt__log_has_spills("ptxas . 8 bytes stack frame, 0 bytes spill stores, 8 "
                                         "bytes spill loads"), 1);
    ck_assert_int_eq(clt__log_has_spills("x 0 bytes spill stores\ny 10 bytes spill stores"), 1);
    clt_device_info nv = {0}, amd = {0};
    nv.vendor = CLT_VENDOR_NVIDIA;
    amd.vendor = CLT_VENDOR_AMD;
    static const char uses[] = "#include \"common/fixed_group.h\"\n__kernel CLT_FIXED_GROUP(WG) void k(void) {}";
    static const char plain[] = "#include \"common/fixed_group.h\"\n__kernel void k(void) {}";
    ck_assert_int_eq(clt__fixed_group_guarded(&nv, uses, strlen(uses), "-DWG=64"), 1);
    ck_assert_int_eq(clt__fixed_group_guarded(&amd, uses, strlen(uses), "-DWG=64"), 0);
    ck_assert_int_eq(clt__fixed_group_guarded(&nv, plain, strlen(plain), "-DWG=64"), 0);
    ck_assert_int_eq(clt__fixed_group_guarded(&nv, uses, strlen(uses), "-DWG=64 -DCLT_REQD=0"), 0);
    /* the length bounds the search: the use past it is not seen */
    ck_assert_int_eq(clt__fixed_group_guarded(&nv, uses, 30, "-DWG=64"), 0);
}
END_TEST

Suite *nv_resources_suite(void)
{
    Suite *s = suite_create("nv_resources");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, test_normal);
    tcase_add_test(tc, test_spills);
    tcase_add_test(tc, test_missing_fields);
    tcase_add_test(tc, test_garbage);
    tcase_add_test(tc, test_over_long);
    tcase_add_test(tc, test_spill_guard);
    suite_add_tcase(s, tc);
    return s;
}
