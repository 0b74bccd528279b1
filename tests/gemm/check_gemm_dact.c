/* The activation-backward epilogue of include/cltensor_gemm.h (dact_y: C = (alpha op(A) op(B) +
 * beta C + bias) * dact'(y)) against the double reference (ref/gemm_ref.c via util/gemm_test.c) on
 * every kernel variant of ours (CLT_GEMM_VARIANT tiled:0, cpu, small, gemv, tiled:0:3 = split K), on
 * CLBlast + the separate epilogue pass, and on auto; with padding, offsets, transposes, beta = 0 over
 * NaN, bias, strided batches and k = 0. Then its error paths: unsupported ops and combinations, the
 * tensor checks (context, dtype, lddy, bounds), aliasing, and the pointer-batched call. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/gemm_test.h"
#include "util/test_util.h"

static const int64_t shapes[][4] = {/* m, n, k, batch */
                                    {1, 1, 1, 1},   {7, 17, 31, 1}, {65, 33, 17, 2},
                                    {1, 129, 64, 1}, {127, 1, 65, 3}, {64, 64, 200, 1},
                                    {31, 12, 0, 2}};
#define N_SHAPES (int)(sizeof shapes / sizeof shapes[0])
static const clt_unary_op dacts[] = {CLT_TANH, CLT_SIGMOID, CLT_RELU};

/* impl: the context's gemm_impl; variant: CLT_GEMM_VARIANT (NULL: automatic). Tiled config 0 with
 * and without split K: one program (GPU tiles compile slowly on POCL). */
static const struct {
    const char *impl, *variant;
} paths[] = {{"tiled", "tiled:0"}, {"tiled", "cpu"},   {"tiled", "small"},   {"tiled", "gemv"},
             {"tiled", "tiled:0:3"}, {"clblast", NULL}, {"auto", NULL}};
#define N_PATHS (int)(sizeof paths / sizeof paths[0])

START_TEST(dact_values)
{
    char *saved = tu_env_save("CLT_GEMM_VARIANT");
    if (paths[_i].variant)
        setenv("CLT_GEMM_VARIANT", paths[_i].variant, 1);
    else
        unsetenv("CLT_GEMM_VARIANT");
    clt_context *ctx = gt_context(paths[_i].impl);
    for (int s = 0; s < N_SHAPES; s++) {
        gt_case c = {0};
        c.ta = s & 1;
        c.tb = (s >> 1) & 1;
        c.m = shapes[s][0], c.n = shapes[s][1], c.k = shapes[s][2], c.batch = shapes[s][3];
        c.alpha = s % 2 ? -0.75f : 1.0f;
        c.beta = s % 3 == 1 ? 0.5f : 0.0f;
        c.a_pad = s % 3, c.c_pad = s % 2 ? 0 : 4, c.a_off = s % 5, c.c_off = (s % 2) * 4;
        c.gap = s;
        c.bias_mode = (clt_bias_mode)(s % 3);
        c.act = CLT_IDENTITY;
        c.use_dact = 1;
        c.dact = dacts[(s + _i) % 3];
        char label[128];
        snprintf(label, sizeof label, "%s/%s dact %d shape %d", paths[_i].impl,
                 paths[_i].variant ? paths[_i].variant : "auto", (int)c.dact, s);
        gt_check(ctx, &c, label);
    }
    tu_context_free(ctx);
    tu_env_restore("CLT_GEMM_VARIANT", saved);
}
END_TEST

/* 4x4 matrices in 64-element tensors; fails with `want` naming clt_gemm and `needle`, C unchanged. */
static void expect_fail(clt_context *ctx, clt_tensor *c, const float *hc, clt_status got,
                        clt_status want, const char *who, const char *needle, int line)
{
    ck_assert_msg(got == want, "line %d: %s, expected %s (%s)", line, clt_status_string(got),
                  clt_status_string(want), clt_last_error(ctx));
    const char *msg = clt_last_error(ctx);
    ck_assert_msg(strstr(msg, who) && strstr(msg, needle), "line %d: message \"%s\" lacks %s / %s",
                  line, msg, who, needle);
    float *now = gt_read(c);
    ck_assert_msg(memcmp(now, hc, 64 * sizeof(float)) == 0, "line %d: C changed", line);
    free(now);
}
#define NN CLT_NO_TRANS, CLT_NO_TRANS
#define GEMM(ep) clt_gemm(NN, 4, 4, 4, 1.0f, a, 0, 4, b, 0, 4, 0.0f, c, 0, 4, (ep))
#define FAIL(call, want, needle) expect_fail(ctx, c, hc, (call), (want), "clt_gemm", (needle), __LINE__)

START_TEST(dact_errors)
{
    clt_context *ctx = gt_context("auto");
    float h[64], hc[64];
    tu_random_f32(h, 64, -1, 1);
    tu_random_f32(hc, 64, -1, 1);
    clt_tensor *a = gt_tensor(ctx, 64, h), *b = gt_tensor(ctx, 64, h), *c = gt_tensor(ctx, 64, hc);
    clt_tensor *y = gt_tensor(ctx, 64, h), *res = gt_tensor(ctx, 64, h);
    clt_gemm_epilogue ep;
    clt_gemm_epilogue_init(&ep);
    ep.dact_y = y, ep.dact = CLT_GELU_ERF, ep.lddy = 4;
    FAIL(GEMM(&ep), CLT_ERR_UNSUPPORTED, "dact");
    ep.dact = CLT_TANH, ep.activation = CLT_TANH;
    FAIL(GEMM(&ep), CLT_ERR_UNSUPPORTED, "an activation");
    ep.activation = CLT_IDENTITY, ep.residual = res, ep.ldr = 4;
    FAIL(GEMM(&ep), CLT_ERR_UNSUPPORTED, "a residual");
    ep.residual = NULL, ep.lddy = 3;
    FAIL(GEMM(&ep), CLT_ERR_INVALID_ARGUMENT, "lddy");
    ep.lddy = 4, ep.dact_offset = 49;
    FAIL(GEMM(&ep), CLT_ERR_INVALID_SHAPE, "dact_y");
    ep.dact_offset = -1;
    FAIL(GEMM(&ep), CLT_ERR_INVALID_SHAPE, "dact_y");
    ep.dact_offset = 0, ep.dact_y = c; /* C overlapping y */
    FAIL(GEMM(&ep), CLT_ERR_ALIASING, "C overlaps dact_y");
    int64_t n = 64;
    clt_tensor *ints;
    TU_OK(clt_tensor_create(ctx, CLT_I32, 1, &n, &ints));
    ep.dact_y = ints;
    FAIL(GEMM(&ep), CLT_ERR_INVALID_DTYPE, "dact_y");
    clt_context *other = gt_context("auto");
    clt_tensor *foreign = gt_tensor(other, 64, h);
    ep.dact_y = foreign;
    FAIL(GEMM(&ep), CLT_ERR_CONTEXT_MISMATCH, "dact_y");
    /* batched: y follows C's batch stride, so the last batch, one element on, reaches past y */
    ep.dact_y = y, ep.dact_offset = 1;
    expect_fail(ctx, c, hc,
                clt_gemm_strided_batched(NN, 4, 4, 4, 1.0f, a, 0, 4, 0, b, 0, 4, 0, 0.0f, c, 0, 4,
                                         16, 4, &ep),
                CLT_ERR_INVALID_SHAPE, "clt_gemm_strided_batched", "dact_y", __LINE__);
    const clt_tensor *as[1] = {a}, *bs[1] = {b};
    clt_tensor *cs[1] = {c};
    int64_t zero[1] = {0};
    expect_fail(ctx, c, hc,
                clt_gemm_batched(NN, 4, 4, 4, 1.0f, as, zero, 4, bs, zero, 4, 0.0f, cs, zero, 4, 1,
                                 &ep),
                CLT_ERR_UNSUPPORTED, "clt_gemm_batched", "dact_y", __LINE__);
    /* dact is ignored without dact_y */
    ep.dact_y = NULL, ep.dact = (clt_unary_op)99, ep.dact_offset = 0;
    TU_OK(GEMM(&ep));
    clt_tensor *all[7] = {a, b, c, y, res, ints, foreign};
    for (int i = 0; i < 7; i++)
        clt_tensor_free(all[i]);
    tu_context_free(other);
    tu_context_free(ctx);
}
END_TEST

Suite *gemm_dact_suite(void)
{
    Suite *s = suite_create("gemm_dact");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, dact_values, 0, N_PATHS);
    tcase_add_test(tc, dact_errors);
    suite_add_tcase(s, tc);
    return s;
}
