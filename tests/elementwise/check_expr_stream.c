/* Streaming (non-temporal) stores of the cpu expression layout (-DCLT_EW_NT=1): the library picks
 * them only above the device's cache size, so these tests lower the threshold to 0 bytes
 * (clt__expr_set_stream_bytes) and check every edge of the store path against the double
 * references: sizes around the floatW chunk and the group span (8 x 512 elements), a tail, a
 * broadcast input, aligned and unaligned offsets (the unaligned ones keep vstore), in place.
 * Under the gfx902 profile the GPU layouts run (nothing streams) and the same checks hold. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cltensor_cl.h"
#include "ops/elementwise/expr.h"
#include "ops/common/launch.h"
#include "ref/expr_ref.h"
#include "util/ew_util.h"
#include "util/test_util.h"

/* |got - ref| <= RTOL * |ref| + ATOL: a multiply-add and a relu, or a sigmoid (a few ulp). */
#define RTOL 1e-5
#define ATOL 1e-5

static clt_tensor *upload(clt_context *ctx, const host_tensor *h)
{
    clt_tensor *t = NULL;
    TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, h->ndim, h->shape, h->data,
                                      (size_t)h->numel * sizeof(float), &t));
    return t;
}

/* out (poisoned) = e(h...) with out of shape (ndim, shape), every element against ref_eval. */
static void check_on(clt_context *ctx, const clt_expr *e, int root, int nin, const host_tensor *h,
                     int ndim, const int64_t *shape)
{
    clt_tensor *t[3] = {0}, *out = NULL;
    for (int k = 0; k < nin; k++)
        t[k] = upload(ctx, &h[k]);
    TU_OK(clt_tensor_create(ctx, CLT_F32, ndim, shape, &out));
    tu_poison(out);
    TU_OK(clt_expr_eval(e, root, nin, (const clt_tensor *const *)t, 0, NULL, out));
    int64_t n = clt_tensor_numel(out);
    float *got = malloc((size_t)n * sizeof(float));
    ck_assert_ptr_nonnull(got);
    TU_OK(clt_tensor_read(out, got, (size_t)n * sizeof(float)));
    for (int64_t i = 0; i < n; i++) {
        double x[3] = {0};
        for (int k = 0; k < nin; k++)
            x[k] = bcast_at(&h[k], ndim, shape, i);
        double want = ref_eval(e, root, x, NULL);
        ck_assert_msg(close_enough(got[i], want, RTOL, ATOL), "n %lld, element %lld: %g vs %g",
                      (long long)n, (long long)i, got[i], want);
    }
    free(got);
    clt_tensor_free(out);
    for (int k = 0; k < nin; k++)
        clt_tensor_free(t[k]);
}

/* 1-D sizes: one element, around one chunk (8), around one group span (4096), several groups and
 * a ragged last group, a prime. */
START_TEST(test_stream_sizes)
{
    clt_context *ctx = tu_context();
    clt__expr_set_stream_bytes(0);
    int root;
    clt_expr *e = ew_fma_relu(&root);
    const int64_t sizes[] = {1, 7, 8, 9, 4095, 4096, 4097, 3 * 4096 + 13, 65537};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        host_tensor h[3];
        for (int k = 0; k < 3; k++)
            h[k] = host_random(1, &sizes[s], -2, 2);
        check_on(ctx, e, root, 3, h, 1, &sizes[s]);
        host_free(h, 3);
    }
    clt_expr_free(e);
    tu_context_free(ctx);
}
END_TEST

/* A broadcast row (cols 77: chunks straddle rows) and a unary transcendental op. */
START_TEST(test_stream_broadcast_unary)
{
    clt_context *ctx = tu_context();
    clt__expr_set_stream_bytes(0);
    int root;
    clt_expr *e = ew_fma_relu(&root);
    int64_t shape[2] = {61, 77}, row[1] = {77};
    host_tensor h[3] = {host_random(2, shape, -2, 2), host_random(1, row, -2, 2),
                        host_random(2, shape, -2, 2)};
    check_on(ctx, e, root, 3, h, 2, shape);
    host_free(h, 3);
    clt_expr_free(e);
    clt_expr *s = NULL;
    TU_OK(clt_expr_create(&s));
    int sr = clt_expr_unary(s, CLT_SIGMOID, clt_expr_input(s, 0), -1);
    int64_t n = 4096 + 5;
    host_tensor x = host_random(1, &n, -6, 6);
    check_on(ctx, s, sr, 1, &x, 1, &n);
    host_free(&x, 1);
    clt_expr_free(s);
    tu_context_free(ctx);
}
END_TEST

/* out and the inputs inside one buffer at element offset first (8: the streamed floatW stores;
 * 3: vstore), a - b; out's neighbours stay poisoned. Then in place: a = a - b. */
static void check_offsets_in_place(int64_t first)
{
    clt_context *ctx = tu_context();
    clt__expr_set_stream_bytes(0);
    const int64_t n = 4096 + 37, gap = first % 8 ? 1 : 8 - n % 8;
    const int64_t ob = first + n + gap, oo = ob + n + gap + 8, total = oo + n + 8;
    clt_tensor *big = NULL, *ta = NULL, *tb = NULL, *out = NULL, *edge[2] = {0};
    TU_OK(clt_tensor_create(ctx, CLT_F32, 1, &total, &big));
    tu_poison(big);
    cl_mem mem = clt_tensor_cl_mem(big, NULL);
    TU_OK(clt_tensor_wrap_cl_mem(ctx, mem, (size_t)first * 4, CLT_F32, 1, &n, &ta));
    TU_OK(clt_tensor_wrap_cl_mem(ctx, mem, (size_t)ob * 4, CLT_F32, 1, &n, &tb));
    TU_OK(clt_tensor_wrap_cl_mem(ctx, mem, (size_t)oo * 4, CLT_F32, 1, &n, &out));
    const int64_t one = 1;
    TU_OK(clt_tensor_wrap_cl_mem(ctx, mem, (size_t)(oo - 1) * 4, CLT_F32, 1, &one, &edge[0]));
    TU_OK(clt_tensor_wrap_cl_mem(ctx, mem, (size_t)(oo + n) * 4, CLT_F32, 1, &one, &edge[1]));
    host_tensor ha = host_random(1, &n, -2, 2), hb = host_random(1, &n, -2, 2);
    TU_OK(clt_tensor_write(ta, ha.data, (size_t)n * 4));
    TU_OK(clt_tensor_write(tb, hb.data, (size_t)n * 4));
    clt_expr *e = NULL;
    TU_OK(clt_expr_create(&e));
    int root = clt_expr_binary(e, CLT_SUB, clt_expr_input(e, 0), clt_expr_input(e, 1));
    const clt_tensor *in[2] = {ta, tb};
    TU_OK(clt_expr_eval(e, root, 2, in, 0, NULL, out));
    TU_OK(clt_expr_eval(e, root, 2, in, 0, NULL, ta)); /* in place */
    float *got = malloc((size_t)n * sizeof(float)), *got2 = malloc((size_t)n * sizeof(float));
    ck_assert(got && got2);
    TU_OK(clt_tensor_read(out, got, (size_t)n * 4));
    TU_OK(clt_tensor_read(ta, got2, (size_t)n * 4));
    for (int64_t i = 0; i < n; i++) {
        float want = ha.data[i] - hb.data[i];
        ck_assert_msg(got[i] == want && got2[i] == want, "offset %lld, element %lld: %g, %g != %g",
                      (long long)first, (long long)i, got[i], got2[i], want);
    }
    float v[2];
    TU_OK(clt_tensor_read(edge[0], &v[0], 4));
    TU_OK(clt_tensor_read(edge[1], &v[1], 4));
    ck_assert(isnan(v[0]) && isnan(v[1]));
    free(got);
    free(got2);
    free(ha.data);
    free(hb.data);
    clt_expr_free(e);
    clt_tensor *all[] = {ta, tb, out, edge[0], edge[1], big};
    for (int i = 0; i < 6; i++)
        clt_tensor_free(all[i]);
    tu_context_free(ctx);
}

START_TEST(test_stream_offsets_in_place) { check_offsets_in_place(8); check_offsets_in_place(3); }
END_TEST

/* The threshold switches the kernel variant on CPU-style devices (one more program for the same
 * structure) and nothing elsewhere. */
START_TEST(test_stream_selects_variant)
{
    clt_context *ctx = tu_context();
    clt_expr *e = NULL;
    TU_OK(clt_expr_create(&e));
    int root = clt_expr_binary(e, CLT_ADD, clt_expr_input(e, 0), clt_expr_input(e, 1));
    int64_t n = 1000;
    host_tensor h[2] = {host_random(1, &n, -1, 1), host_random(1, &n, -1, 1)};
    clt__expr_set_stream_bytes(-1); /* the default: 12 kB is below any cache */
    check_on(ctx, e, root, 2, h, 1, &n);
    clt_program_cache_stats before, after;
    TU_OK(clt_program_cache_get_stats(ctx, &before));
    clt__expr_set_stream_bytes(3 * 4000); /* exactly this op's bytes: streams */
    check_on(ctx, e, root, 2, h, 1, &n);
    TU_OK(clt_program_cache_get_stats(ctx, &after));
    uint64_t got = (after.source_builds + after.disk_loads) -
                   (before.source_builds + before.disk_loads);
    ck_assert_uint_eq(got, clt__cpu_style(ctx) ? 1u : 0u);
    clt__expr_set_stream_bytes(-1);
    host_free(h, 2);
    clt_expr_free(e);
    tu_context_free(ctx);
}
END_TEST

Suite *expr_stream_suite(void)
{
    Suite *s = suite_create("expr_stream");
    TCase *tc = tcase_create("stream");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_stream_sizes);
    tcase_add_test(tc, test_stream_broadcast_unary);
    tcase_add_test(tc, test_stream_offsets_in_place);
    tcase_add_test(tc, test_stream_selects_variant);
    suite_add_tcase(s, tc);
    return s;
}
