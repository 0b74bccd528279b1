#include "util/gemm_test.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref/gemm_ref.h"
#include "util/test_util.h"

clt_context *gt_context(const char *impl)
{
    clt_context_options o;
    clt_context_options_init(&o);
    o.gemm_impl = impl;
    return tu_context_with(&o);
}

clt_tensor *gt_tensor(clt_context *ctx, int64_t n, const float *x)
{
    clt_tensor *t = NULL;
    TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, 1, &n, x, (size_t)n * sizeof(float), &t));
    return t;
}

float *gt_read(const clt_tensor *t)
{
    size_t nb = clt_tensor_nbytes(t);
    float *h = malloc(nb ? nb : sizeof(float));
    ck_assert_ptr_nonnull(h);
    TU_OK(clt_tensor_read(t, h, nb));
    return h;
}

float *gt_random(int64_t n)
{
    float *x = malloc((size_t)(n ? n : 1) * sizeof(float));
    ck_assert_ptr_nonnull(x);
    tu_random_f32(x, (size_t)n, -1.0f, 1.0f);
    return x;
}

/* Elements a batch of rows x cols matrices (ld, stride) spans from offset 0, plus a tail of 3 so
 * writes past the end are caught. */
static int64_t span(int64_t off, int64_t rows, int64_t cols, int64_t ld, int64_t stride,
                    int64_t batch)
{
    if (rows == 0 || cols == 0)
        return off + 3;
    return off + (batch - 1) * stride + (rows - 1) * ld + cols + 3;
}

void gt_check(clt_context *ctx, const gt_case *c, const char *label)
{
    int64_t ar = c->ta ? c->k : c->m, ac = c->ta ? c->m : c->k;
    int64_t br = c->tb ? c->n : c->k, bc = c->tb ? c->k : c->n;
    int64_t lda = (ac > 1 ? ac : 1) + c->a_pad, ldb = (bc > 1 ? bc : 1) + c->b_pad;
    int64_t ldc = (c->n > 1 ? c->n : 1) + c->c_pad, ldr = ldc + 2;
    int64_t batch = c->batch > 0 ? c->batch : 1;
    int64_t as = batch > 1 ? ar * lda + c->gap : 0, bs = batch > 1 && !c->b_shared ? br * ldb + c->gap : 0;
    int64_t cs = batch > 1 ? c->m * (ldc > ldr ? ldc : ldr) + c->gap : 0, roff = 5;
    int64_t na = span(c->a_off, ar, ac, lda, as, batch), nb = span(c->b_off, br, bc, ldb, bs, batch);
    int64_t nc = span(c->c_off, c->m, c->n, ldc, cs, batch);
    int64_t nr = span(roff, c->m, c->n, ldr, cs, batch);
    int64_t nbias = c->bias_mode == CLT_BIAS_PER_ROW ? c->m : c->n;
    float *ha = gt_random(na), *hb = gt_random(nb), *hc = gt_random(nc), *hr = gt_random(nr);
    float *hbias = gt_random(nbias);
    if (c->beta == 0.0f) /* C must not be read: NaN in the addressed part must disappear */
        for (int64_t bt = 0; bt < batch; bt++)
            for (int64_t i = 0; i < c->m; i++)
                for (int64_t j = 0; j < c->n; j++)
                    hc[c->c_off + bt * cs + i * ldc + j] = NAN;
    clt_tensor *ta = gt_tensor(ctx, na, ha), *tb = gt_tensor(ctx, nb, hb), *tc = gt_tensor(ctx, nc, hc);
    clt_tensor *tr = c->residual || c->use_dact ? gt_tensor(ctx, nr, hr) : NULL;
    clt_tensor *tbias = c->bias_mode != CLT_BIAS_NONE ? gt_tensor(ctx, nbias, hbias) : NULL;
    clt_gemm_epilogue ep;
    clt_gemm_epilogue_init(&ep);
    ep.bias = tbias;
    ep.bias_mode = c->bias_mode;
    ep.activation = c->act;
    ep.activation_alpha = 0.0f;
    ep.residual = c->use_dact ? NULL : tr;
    ep.residual_offset = roff;
    ep.ldr = ldr;
    if (c->use_dact) { /* y shares the residual's storage layout */
        ep.dact_y = tr;
        ep.dact = c->dact;
        ep.dact_offset = roff;
        ep.lddy = ldr;
    }
    const clt_gemm_epilogue *epp = tbias || tr || c->act != CLT_IDENTITY ? &ep : NULL;
    clt_transpose ta_ = c->ta ? CLT_TRANS : CLT_NO_TRANS, tb_ = c->tb ? CLT_TRANS : CLT_NO_TRANS;
    clt_status st;
    if (batch > 1 || c->strided)
        st = clt_gemm_strided_batched(ta_, tb_, c->m, c->n, c->k, c->alpha, ta, c->a_off, lda, as,
                                      tb, c->b_off, ldb, bs, c->beta, tc, c->c_off, ldc, cs, batch,
                                      epp);
    else
        st = clt_gemm(ta_, tb_, c->m, c->n, c->k, c->alpha, ta, c->a_off, lda, tb, c->b_off, ldb,
                      c->beta, tc, c->c_off, ldc, epp);
    ck_assert_msg(st == CLT_SUCCESS, "%s: %s: %s", label, clt_status_string(st), clt_last_error(ctx));
    float *got = gt_read(tc);

    ref_gemm g = {c->ta, c->tb, c->m, c->n, c->k, batch, c->alpha, c->beta, ha, c->a_off, lda, as,
                  hb, c->b_off, ldb, bs, hc, c->c_off, ldc, cs, tbias ? hbias : NULL, c->bias_mode,
                  c->act, 0.0, tr && !c->use_dact ? hr : NULL, roff, ldr,
                  c->use_dact ? hr : NULL, c->dact, roff, ldr};
    double *want = malloc((size_t)nc * sizeof(double)), *scale = malloc((size_t)nc * sizeof(double));
    ck_assert(want && scale);
    ref_gemm_run(&g, (size_t)nc, want, scale);
    char *addressed = calloc((size_t)nc, 1);
    ck_assert_ptr_nonnull(addressed);
    for (int64_t bt = 0; bt < batch; bt++)
        for (int64_t i = 0; i < c->m; i++)
            for (int64_t j = 0; j < c->n; j++)
                addressed[c->c_off + bt * cs + i * ldc + j] = 1;
    for (int64_t i = 0; i < nc; i++) {
        if (!addressed[i]) {
            ck_assert_msg(memcmp(&got[i], &hc[i], sizeof(float)) == 0,
                          "%s: element %lld outside C changed: %.9g, was %.9g", label, (long long)i,
                          got[i], hc[i]);
            continue;
        }
        /* the rounding of the activation's output and of the residual sum scale with their
         * magnitudes, not with the (possibly cancelled) result */
        double resv = 0.0;
        if (tr && !c->use_dact) {
            int64_t q = i - c->c_off, bt = cs ? q / cs : 0, rem = q - bt * cs;
            resv = hr[roff + bt * cs + (rem / ldc) * ldr + rem % ldc];
        }
        double post = fabs(want[i] - resv) + fabs(resv);
        double tol = GT_C * (double)(c->k + 4) * GT_EPS * scale[i] * GT_ACT_GAIN +
                     GT_REL * GT_EPS * post + 1e-30;
        ck_assert_msg(isfinite(got[i]) && fabs(got[i] - want[i]) <= tol,
                      "%s: element %lld = %.9g, expected %.9g (error %.3g, allowed %.3g)", label,
                      (long long)i, got[i], want[i], fabs(got[i] - want[i]), tol);
    }
    free(addressed);
    free(want);
    free(scale);
    free(got);
    free(ha);
    free(hb);
    free(hc);
    free(hr);
    free(hbias);
    clt_tensor_free(ta);
    clt_tensor_free(tb);
    clt_tensor_free(tc);
    clt_tensor_free(tr);
    clt_tensor_free(tbias);
}
