/* Plain double loops: slow and obviously right. */
#include "ref/gemm_ref.h"

#include <math.h>

#include "ref/activation_ref.h"

void ref_gemm_run(const ref_gemm *g, size_t c_numel, double *out, double *scale)
{
    for (size_t i = 0; i < c_numel; i++) {
        out[i] = g->c[i];
        if (scale)
            scale[i] = 0.0;
    }
    for (int64_t bt = 0; bt < g->batch; bt++) {
        const float *a = g->a + g->a_off + bt * g->a_stride;
        const float *b = g->b + g->b_off + bt * g->b_stride;
        for (int64_t i = 0; i < g->m; i++) {
            for (int64_t j = 0; j < g->n; j++) {
                double sum = 0.0, abs_sum = 0.0;
                for (int64_t p = 0; p < g->k; p++) {
                    double x = g->ta ? a[p * g->lda + i] : a[i * g->lda + p];
                    double y = g->tb ? b[j * g->ldb + p] : b[p * g->ldb + j];
                    sum += x * y;
                    abs_sum += fabs(x * y);
                }
                size_t ci = (size_t)(g->c_off + bt * g->c_stride + i * g->ldc + j);
                double v = g->alpha * sum, s = fabs(g->alpha) * abs_sum;
                if (g->beta != 0.0) {
                    v += g->beta * g->c[ci];
                    s += fabs(g->beta * g->c[ci]);
                }
                if (g->bias) {
                    double bv = g->bias[g->bias_mode == CLT_BIAS_PER_ROW ? i : j];
                    v += bv;
                    s += fabs(bv);
                }
                v = ref_unary(g->act, v, g->act_alpha);
                if (g->res)
                    v += g->res[g->res_off + bt * g->c_stride + i * g->ldr + j];
                if (g->dact_y) {
                    double d = ref_unary_deriv_from_y(
                        g->dact, g->dact_y[g->dact_off + bt * g->c_stride + i * g->lddy + j], 0.0);
                    v *= d;
                    if (scale)
                        s *= fabs(d);
                }
                out[ci] = v;
                if (scale)
                    scale[ci] = s;
            }
        }
    }
}
