/* clt_gemm, clt_gemm_strided_batched, clt_gemm_batched and clt_matmul against the double
 * reference (ref/gemm_ref.c), for each implementation forced (tiled, clblast) and for auto: a fixed
 * list of ~40 shapes drawn from {1, 2, 3, 7, 17, 31, 64, 65, 127, 129} with a few at 1000 and K up to
 * 4096, cycling through the four transpose combinations, alpha/beta values (beta = 0 with C full
 * of NaN), padded leading dimensions and offsets; strided batches (gaps, B stride 0), pointer
 * batches (separate tensors, and views of one tensor that group into strided launches), every
 * epilogue combination, k = 0, and empty problems. The error bound is in util/gemm_test.h. The
 * error paths are in check_gemm_errors.c. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref/gemm_ref.h"
#include "ops/gemm/gemm_dispatch.h"
#include "util/gemm_test.h"
#include "util/test_util.h"

static const int64_t shapes[][3] = {
    {1, 1, 1},      {2, 3, 1},     {3, 2, 7},      {7, 17, 3},     {17, 7, 31},   {31, 64, 17},
    {64, 65, 64},   {65, 64, 127}, {127, 129, 65}, {129, 127, 129}, {1, 129, 64}, {129, 1, 31},
    {64, 64, 1},    {2, 129, 127}, {127, 2, 3},    {65, 65, 65},   {3, 127, 129}, {129, 3, 64},
    {17, 31, 7},    {31, 17, 2},   {64, 127, 31},  {7, 7, 129},    {1, 64, 65},   {65, 1, 17},
    {129, 129, 7},  {31, 65, 1},   {31, 17, 4096}, {3, 129, 4096}, {1, 31, 4096}, {17, 1, 1000},
    {1000, 31, 17}, {17, 1000, 64}, {1000, 7, 1000}, {64, 1000, 129}, {1000, 1000, 3},
    {2, 2, 2},      {7, 3, 65},    {129, 65, 17},  {65, 129, 2},   {3, 3, 31},
};
#define N_SHAPES (int)(sizeof shapes / sizeof shapes[0])

static const float alphas[] = {1.0f, -0.5f, 2.25f, 0.75f};
static const float betas[] = {0.0f, 1.0f, -0.75f, 0.0f, 0.5f};

static gt_case shape_case(int i)
{
    gt_case c = {0};
    c.ta = i & 1;
    c.tb = (i >> 1) & 1;
    c.m = shapes[i][0];
    c.n = shapes[i][1];
    c.k = shapes[i][2];
    c.alpha = i == 5 ? 0.0f : alphas[i % 4];
    c.beta = betas[(i / 2) % 5];
    c.a_pad = i % 3;
    c.b_pad = i % 4 == 1 ? 5 : 0;
    c.c_pad = i % 5;
    c.a_off = i % 7;
    c.b_off = (i % 2) * 11;
    c.c_off = (i % 3) * 4;
    c.batch = 1;
    c.act = CLT_IDENTITY;
    return c;
}

static void run_shapes(const char *impl)
{
    clt_context *ctx = gt_context(impl);
    for (int i = 0; i < N_SHAPES; i++) {
        gt_case c = shape_case(i);
        char label[128];
        snprintf(label, sizeof label, "%s %lldx%lldx%lld %c%c alpha %g beta %g", impl,
                 (long long)c.m, (long long)c.n, (long long)c.k, c.ta ? 'T' : 'N', c.tb ? 'T' : 'N',
                 (double)c.alpha, (double)c.beta);
        gt_check(ctx, &c, label);
    }
    tu_context_free(ctx);
}

START_TEST(shapes_tiled) { run_shapes("tiled"); }
END_TEST

START_TEST(shapes_clblast) { run_shapes("clblast"); }
END_TEST

START_TEST(shapes_auto) { run_shapes("auto"); }
END_TEST

static const char *const impls[] = {"tiled", "clblast", "auto"};

/* Strided batches: gaps between matrices, B shared (stride 0), transposes, with and without an
 * epilogue (the residual follows C's batch stride). */
START_TEST(strided_batches)
{
    clt_context *ctx = gt_context(impls[_i]);
    static const int64_t bs[][4] = {{3, 17, 31, 7}, {5, 1, 64, 65}, {2, 129, 3, 31}, {4, 65, 2, 129},
                                    {7, 1, 1, 1}};
    for (int i = 0; i < 5; i++) {
        gt_case c = shape_case(i + 3);
        c.batch = bs[i][0];
        c.m = bs[i][1];
        c.n = bs[i][2];
        c.k = bs[i][3];
        c.gap = i * 3;
        c.b_shared = i % 2;
        if (i >= 3) {
            c.bias_mode = CLT_BIAS_PER_COLUMN;
            c.act = CLT_GELU_TANH;
            c.residual = 1;
        }
        char label[128];
        snprintf(label, sizeof label, "%s strided batch %d (B %s)", impls[_i], i,
                 c.b_shared ? "shared" : "strided");
        gt_check(ctx, &c, label);
    }
    /* batch 1 through the strided entry point */
    gt_case c = shape_case(8);
    c.strided = 1;
    gt_check(ctx, &c, "strided, batch 1");
    tu_context_free(ctx);
}
END_TEST

static const clt_unary_op acts[] = {CLT_IDENTITY, CLT_RELU,    CLT_GELU_ERF, CLT_GELU_TANH,
                                    CLT_TANH,     CLT_SIGMOID, CLT_SILU};

/* Every bias mode x activation x residual, on two shapes (one tiny, one past a tile edge), for
 * CLBlast + the epilogue pass and for auto (our fused kernels on these sizes on every device). */
START_TEST(epilogues)
{
    clt_context *ctx = gt_context(impls[_i]);
    static const int64_t es[][3] = {{3, 5, 2}, {65, 33, 17}};
    int count = 0;
    for (int bm = 0; bm < 3; bm++)
        for (int a = 0; a < 7; a++)
            for (int r = 0; r < 2; r++) {
                gt_case c = shape_case(count % N_SHAPES);
                const int64_t *s = es[count % 2];
                c.m = s[0];
                c.n = s[1];
                c.k = s[2];
                c.bias_mode = (clt_bias_mode)bm;
                c.act = acts[a];
                c.residual = r;
                char label[128];
                snprintf(label, sizeof label, "%s epilogue bias %d act %d residual %d beta %g",
                         impls[_i], bm, (int)acts[a], r, (double)c.beta);
                gt_check(ctx, &c, label);
                count++;
            }
    tu_context_free(ctx);
}
END_TEST

/* k = 0: C = act(beta * C + bias) + residual; beta 0 with NaN C gives act(bias) + residual. */
START_TEST(k_zero)
{
    clt_context *ctx = gt_context(impls[_i]);
    for (int i = 0; i < 6; i++) {
        gt_case c = shape_case(i + 10);
        c.k = 0;
        c.beta = i % 2 ? 0.5f : 0.0f;
        c.batch = i >= 4 ? 3 : 1;
        if (i >= 2) {
            c.bias_mode = i % 2 ? CLT_BIAS_PER_ROW : CLT_BIAS_PER_COLUMN;
            c.act = CLT_SIGMOID;
            c.residual = 1;
        }
        char label[96];
        snprintf(label, sizeof label, "%s k = 0, case %d", impls[_i], i);
        gt_check(ctx, &c, label);
    }
    tu_context_free(ctx);
}
END_TEST

/* m, n or batch = 0: success, nothing written. */
START_TEST(empty_problems)
{
    clt_context *ctx = gt_context(impls[_i]);
    float h[16];
    tu_random_f32(h, 16, -1, 1);
    clt_tensor *a = gt_tensor(ctx, 16, h), *b = gt_tensor(ctx, 16, h), *c = gt_tensor(ctx, 16, h);
    TU_OK(clt_gemm(CLT_NO_TRANS, CLT_NO_TRANS, 0, 4, 4, 1, a, 0, 4, b, 0, 4, 0, c, 0, 4, NULL));
    TU_OK(clt_gemm(CLT_NO_TRANS, CLT_NO_TRANS, 4, 0, 4, 1, a, 0, 4, b, 0, 1, 0, c, 0, 1, NULL));
    TU_OK(clt_gemm_strided_batched(CLT_NO_TRANS, CLT_NO_TRANS, 4, 4, 4, 1, a, 0, 4, 16, b, 0, 4, 16,
                                   0, c, 0, 4, 16, 0, NULL));
    TU_OK(clt_gemm_batched(CLT_NO_TRANS, CLT_NO_TRANS, 4, 4, 4, 1, NULL, NULL, 4, NULL, NULL, 4, 0,
                           NULL, NULL, 4, 0, NULL));
    float *got = gt_read(c);
    ck_assert_mem_eq(got, h, sizeof h);
    free(got);
    clt_tensor_free(a);
    clt_tensor_free(b);
    clt_tensor_free(c);
    tu_context_free(ctx);
}
END_TEST

/* Pointer batches: entries in separate tensors (one launch each) and entries that are views of
 * one tensor at constant steps (grouped into strided launches), with a bias + activation. */
START_TEST(pointer_batches)
{
    clt_context *ctx = gt_context(impls[_i]);
    enum { B = 6, M = 17, N = 31, K = 9 };
    int64_t na = B * M * K + 5, nb = B * K * N + 7, nc = B * M * N + 11;
    float *ha = gt_random(na), *hb = gt_random(nb), *hc = gt_random(nc), *hbias = gt_random(N);
    clt_tensor *big_a = gt_tensor(ctx, na, ha), *big_b = gt_tensor(ctx, nb, hb);
    clt_tensor *big_c = gt_tensor(ctx, nc, hc), *bias = gt_tensor(ctx, N, hbias);
    clt_tensor *sep_b = gt_tensor(ctx, nb, hb); /* entry 4 reads B from another tensor */
    const clt_tensor *as[B], *bs_[B];
    clt_tensor *cs[B];
    int64_t ao[B], bo[B], co[B];
    for (int i = 0; i < B; i++) {
        as[i] = big_a;
        bs_[i] = i == 4 ? sep_b : big_b;
        cs[i] = big_c;
        ao[i] = 5 + i * M * K - (i == 5 ? 5 : 0); /* entry 5 breaks the step */
        bo[i] = i * K * N;
        co[i] = 11 + i * M * N;
    }
    ao[0] = 0;
    clt_gemm_epilogue ep;
    clt_gemm_epilogue_init(&ep);
    ep.bias = bias;
    ep.bias_mode = CLT_BIAS_PER_COLUMN;
    ep.activation = CLT_RELU;
    TU_OK(clt_gemm_batched(CLT_NO_TRANS, CLT_NO_TRANS, M, N, K, 1.5f, as, ao, K, bs_, bo, N, 0.25f,
                           cs, co, N, B, &ep));
    float *got = gt_read(big_c);
    double *want = malloc((size_t)nc * sizeof(double)), *scale = malloc((size_t)nc * sizeof(double));
    float *cur = malloc((size_t)nc * sizeof(float));
    ck_assert(want && scale && cur);
    memcpy(cur, hc, (size_t)nc * sizeof(float));
    for (int i = 0; i < B; i++) { /* apply entries one by one on the host */
        ref_gemm g = {0, 0, M, N, K, 1, 1.5, 0.25, ha, ao[i], K, 0, hb, bo[i], N, 0, cur, co[i],
                      N, 0, hbias, CLT_BIAS_PER_COLUMN, CLT_RELU, 0.0, NULL, 0, 0, NULL, CLT_IDENTITY, 0, 0};
        ref_gemm_run(&g, (size_t)nc, want, scale);
        for (int64_t e = co[i]; e < co[i] + M * N; e++) {
            double tol = GT_C * (K + 4) * GT_EPS * scale[e] * GT_ACT_GAIN + GT_REL * GT_EPS * fabs(want[e]);
            ck_assert_msg(fabs(got[e] - want[e]) <= tol, "%s entry %d element %lld = %.9g, expected %.9g",
                          impls[_i], i, (long long)e, got[e], want[e]);
            cur[e] = (float)want[e];
        }
    }
    for (int64_t e = 0; e < 11; e++)
        ck_assert_msg(got[e] == hc[e], "element %lld before the first C changed", (long long)e);
    free(got);
    free(want);
    free(scale);
    free(cur);
    free(ha);
    free(hb);
    free(hc);
    free(hbias);
    clt_tensor *all[5] = {big_a, big_b, big_c, bias, sep_b};
    for (int i = 0; i < 5; i++)
        clt_tensor_free(all[i]);
    tu_context_free(ctx);
}
END_TEST

/* clt_matmul: 2-D, batched with a batched B and with one shared B. */
START_TEST(matmul)
{
    clt_context *ctx = gt_context("auto");
    static const int64_t ms[][4] = {{1, 7, 3, 5}, {3, 17, 31, 65}, {2, 1, 129, 1}, {1, 64, 64, 64}};
    for (int t = 0; t < 4; t++) {
        int64_t bt = ms[t][0], m = ms[t][1], k = ms[t][2], n = ms[t][3];
        int shared = t == 2;
        int batched = t != 0 && t != 3;
        float *ha = gt_random(bt * m * k), *hb = gt_random((shared ? 1 : bt) * k * n);
        int64_t sa[3] = {bt, m, k}, sb[3] = {bt, k, n}, so[3] = {bt, m, n};
        clt_tensor *a, *b, *out;
        TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, batched ? 3 : 2, batched ? sa : sa + 1, ha,
                                          (size_t)(bt * m * k) * sizeof(float), &a));
        TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, batched && !shared ? 3 : 2,
                                          batched && !shared ? sb : sb + 1, hb,
                                          (size_t)((shared ? 1 : bt) * k * n) * sizeof(float), &b));
        TU_OK(clt_tensor_create(ctx, CLT_F32, batched ? 3 : 2, batched ? so : so + 1, &out));
        tu_poison(out);
        TU_OK(clt_matmul(a, b, out));
        float *got = gt_read(out);
        for (int64_t q = 0; q < bt; q++)
            for (int64_t i = 0; i < m; i++)
                for (int64_t j = 0; j < n; j++) {
                    double s = 0, as = 0;
                    for (int64_t p = 0; p < k; p++) {
                        double x = ha[q * m * k + i * k + p], y = hb[(shared ? 0 : q) * k * n + p * n + j];
                        s += x * y;
                        as += fabs(x * y);
                    }
                    double g = got[q * m * n + i * n + j];
                    ck_assert_msg(fabs(g - s) <= GT_C * (k + 4) * GT_EPS * as + 1e-30,
                                  "matmul case %d (%lld,%lld,%lld) = %.9g, expected %.9g", t,
                                  (long long)q, (long long)i, (long long)j, g, s);
                }
        free(got);
        free(ha);
        free(hb);
        clt_tensor_free(a);
        clt_tensor_free(b);
        clt_tensor_free(out);
    }
    tu_context_free(ctx);
}
END_TEST

/* The dispatcher: a forced setting wins; auto follows the device's (or profile's) rule row. */
START_TEST(dispatch_choice)
{
    clt__gemm_problem p;
    memset(&p, 0, sizeof p);
    p.m = p.n = p.k = 8192;
    p.batch = 1;
    for (int i = 0; i < 3; i++) {
        clt_context *ctx = gt_context(impls[i]);
        clt__gemm_impl got = clt__gemm_choose(ctx, &p);
        const clt__gemm_rule *r = clt__gemm_rule_for(ctx);
        ck_assert_ptr_nonnull(r);
        if (i < 2)
            ck_assert_int_eq(got, i == 0 ? CLT_GEMM_IMPL_TILED : CLT_GEMM_IMPL_CLBLAST);
        else if (r->clblast_min_dim == 0)
            ck_assert_int_eq(got, CLT_GEMM_IMPL_TILED);
        else
            ck_assert_int_eq(got, CLT_GEMM_IMPL_CLBLAST); /* 8192^3 is past every threshold */
        clt_context_limits lim;
        TU_OK(clt_context_get_limits(ctx, &lim));
        if (strcmp(lim.profile, "gfx902") == 0)
            ck_assert_str_eq(r->label, "gfx902");
        clt__gemm_problem small = p;
        small.m = 64;
        if (i == 2)
            ck_assert_int_eq(clt__gemm_choose(ctx, &small), CLT_GEMM_IMPL_TILED);
        tu_context_free(ctx);
    }
}
END_TEST

Suite *gemm_suite(void)
{
    Suite *s = suite_create("gemm");
    TCase *tc = tcase_create("shapes");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, shapes_tiled);
    tcase_add_test(tc, shapes_clblast);
    tcase_add_test(tc, shapes_auto);
    tcase_add_loop_test(tc, strided_batches, 0, 3);
    tcase_add_loop_test(tc, epilogues, 1, 3); /* clblast, auto (auto = tiled here) */
    tcase_add_loop_test(tc, k_zero, 0, 3);
    tcase_add_loop_test(tc, empty_problems, 0, 3);
    tcase_add_loop_test(tc, pointer_batches, 0, 3);
    tcase_add_test(tc, matmul);
    tcase_add_test(tc, dispatch_choice);
    suite_add_tcase(s, tc);
    return s;
}
