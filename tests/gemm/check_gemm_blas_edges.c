/* BLAS edge semantics on every GEMM path (include/cltensor_gemm.h): alpha = 0 reads neither A nor
 * B (NaN and Inf there must not reach C: C = act(beta * C + bias)), beta = 0 never reads C (a C
 * full of NaN is overwritten). Each path is forced: our kernels through CLT_GEMM_VARIANT (automatic,
 * tiled, tiled split-K, cpu, small, gemv), CLBlast through the context's gemm_impl; each through
 * clt_gemm, clt_gemm_strided_batched and clt_gemm_batched, with and without a fused epilogue. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/gemm/gemm_params.h"
#include "util/gemm_test.h"
#include "util/test_util.h"

typedef struct path {
    const char *impl;    /* context gemm_impl */
    const char *variant; /* CLT_GEMM_VARIANT, NULL: automatic; "tiled:last:P": the table's
                          * smallest tiled config split in P (the largest compiles for minutes on
                          * POCL under the gfx902 profile) */
    int64_t m, n, k;     /* a shape the variant takes */
} path;

static const path paths[] = {
    {"tiled", NULL, 17, 19, 33},       {"tiled", "tiled", 37, 41, 29},
    {"tiled", "tiled:last:3", 33, 35, 97}, {"tiled", "cpu", 23, 29, 31},
    {"tiled", "small", 5, 7, 13},      {"tiled", "gemv", 1, 37, 64},
    {"tiled", "gemv", 43, 1, 70},      {"clblast", NULL, 31, 17, 23},
};
#define N_PATHS (sizeof paths / sizeof paths[0])

enum { API_GEMM, API_STRIDED, API_BATCHED, N_APIS };

/* Random values with NaN and +-Inf sprinkled in (when poison): a product that read them shows. */
static float *operand(int64_t n, int poison)
{
    float *x = gt_random(n);
    if (poison)
        for (int64_t i = 0; i < n; i++) {
            uint64_t r = tu_rng_next() % 5;
            x[i] = r == 0 ? NAN : r == 1 ? INFINITY : r == 2 ? -INFINITY : x[i];
        }
    return x;
}

static double relu(double v) { return v < 0.0 ? 0.0 : v; }

/* One case: batch matrices (batch 1 for API_GEMM); alpha = 0 poisons A and B, beta = 0 poisons C. */
static void run_case(clt_context *ctx, const path *pa, int api, float alpha, float beta, int epi)
{
    const int64_t m = pa->m, n = pa->n, k = pa->k, batch = api == API_GEMM ? 1 : 3;
    const int64_t sa = m * k, sb = k * n, sc = m * n;
    float *ha = operand(sa * batch, alpha == 0.0f), *hb = operand(sb * batch, alpha == 0.0f);
    float *hc = gt_random(sc * batch), *hbias = gt_random(n);
    if (beta == 0.0f)
        for (int64_t i = 0; i < sc * batch; i++)
            hc[i] = NAN;
    clt_tensor *a = gt_tensor(ctx, sa * batch, ha), *b = gt_tensor(ctx, sb * batch, hb);
    clt_tensor *c = gt_tensor(ctx, sc * batch, hc), *bias = gt_tensor(ctx, n, hbias);
    clt_gemm_epilogue ep;
    clt_gemm_epilogue_init(&ep);
    if (epi) {
        ep.bias = bias;
        ep.bias_mode = CLT_BIAS_PER_COLUMN;
        ep.activation = CLT_RELU;
    }
    const clt_gemm_epilogue *e = epi ? &ep : NULL;
    clt_status st;
    if (api == API_GEMM) {
        st = clt_gemm(CLT_NO_TRANS, CLT_NO_TRANS, m, n, k, alpha, a, 0, k, b, 0, n, beta, c, 0, n, e);
    } else if (api == API_STRIDED) {
        st = clt_gemm_strided_batched(CLT_NO_TRANS, CLT_NO_TRANS, m, n, k, alpha, a, 0, k, sa, b, 0,
                                      n, sb, beta, c, 0, n, sc, batch, e);
    } else {
        const clt_tensor *as[3] = {a, a, a}, *bs[3] = {b, b, b};
        clt_tensor *cs[3] = {c, c, c};
        int64_t ao[3], bo[3], co[3];
        for (int i = 0; i < 3; i++)
            ao[i] = i * sa, bo[i] = i * sb, co[i] = i * sc;
        st = clt_gemm_batched(CLT_NO_TRANS, CLT_NO_TRANS, m, n, k, alpha, as, ao, k, bs, bo, n, beta,
                              cs, co, n, batch, e);
    }
    ck_assert_msg(st == CLT_SUCCESS, "%s/%s api %d alpha %g beta %g epi %d: %s", pa->impl,
                  pa->variant ? pa->variant : "auto", api, alpha, beta, epi, clt_last_error(ctx));
    float *got = gt_read(c);
    for (int64_t bi = 0; bi < batch; bi++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double acc = 0.0, mag = 0.0;
                if (alpha != 0.0f)
                    for (int64_t q = 0; q < k; q++) {
                        double t = (double)ha[bi * sa + i * k + q] * hb[bi * sb + q * n + j];
                        acc += t;
                        mag += fabs(t);
                    }
                double cold = hc[bi * sc + i * n + j];
                double want = (double)alpha * acc + (beta != 0.0f ? (double)beta * cold : 0.0);
                mag = fabs((double)alpha) * mag + (beta != 0.0f ? fabs(beta * cold) : 0.0);
                if (epi) {
                    want = relu(want + hbias[j]);
                    mag += fabs(hbias[j]);
                }
                double g = got[bi * sc + i * n + j];
                double tol = 4.0 * (double)(k + 4) * 1.2e-7 * mag + 1e-30;
                ck_assert_msg(isfinite(g) && fabs(g - want) <= tol,
                              "%s/%s api %d alpha %g beta %g epi %d: C[%lld][%lld][%lld] = %g, "
                              "expected %g",
                              pa->impl, pa->variant ? pa->variant : "auto", api, alpha, beta, epi,
                              (long long)bi, (long long)i, (long long)j, g, want);
            }
    free(got), free(ha), free(hb), free(hc), free(hbias);
    clt_tensor_free(a), clt_tensor_free(b), clt_tensor_free(c), clt_tensor_free(bias);
}

/* Every API, epilogue or not, alpha = 0 (poisoned A, B) and beta = 0 (poisoned C), through path _i. */
START_TEST(nan_never_leaks_through_alpha_or_beta_zero)
{
    const path *pa = &paths[_i];
    char *saved = tu_env_save("CLT_GEMM_VARIANT");
    if (pa->variant)
        setenv("CLT_GEMM_VARIANT", pa->variant, 1);
    else
        unsetenv("CLT_GEMM_VARIANT");
    clt_context *ctx = gt_context(pa->impl);
    char forced[64];
    if (pa->variant && !strncmp(pa->variant, "tiled:last:", 11)) {
        snprintf(forced, sizeof forced, "tiled:%d:%s", clt__gemm_table_for(ctx)->n_tiled - 1,
                 pa->variant + 11);
        setenv("CLT_GEMM_VARIANT", forced, 1);
    }
    for (int api = 0; api < N_APIS; api++)
        for (int epi = 0; epi < 2; epi++) {
            run_case(ctx, pa, api, 0.0f, 0.75f, epi);  /* C = beta C (+ epilogue) */
            run_case(ctx, pa, api, 0.0f, 0.0f, epi);   /* C = 0 (+ epilogue), nothing read */
            run_case(ctx, pa, api, 1.25f, 0.0f, epi);  /* C overwritten, its NaN ignored */
        }
    tu_context_free(ctx);
    tu_env_restore("CLT_GEMM_VARIANT", saved);
}
END_TEST

Suite *gemm_blas_edges_suite(void)
{
    Suite *s = suite_create("gemm_blas_edges");
    TCase *tc = tcase_create("paths");
    tcase_add_loop_test(tc, nan_never_leaks_through_alpha_or_beta_zero, 0, (int)N_PATHS);
    suite_add_tcase(s, tc);
    return s;
}
