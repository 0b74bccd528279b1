#include <math.h>

#include "ref/activation_ref.h"
#include "ref/gemm_tiled_ref.h"

void gemm_ref_run(const gemm_ref_args *g, double *want, double *scale)
{
    for (int64_t bt = 0; bt < g->batch; bt++) {
        const float *a = g->a + g->a_off + bt * g->a_stride;
        const float *b = g->b + g->b_off + bt * g->b_stride;
        for (int64_t i = 0; i < g->m; i++)
            for (int64_t j = 0; j < g->n; j++) {
                double s = 0.0, s_abs = 0.0;
                for (int64_t p = 0; p < g->k; p++) {
                    double x = g->ta ? a[p * g->lda + i] : a[i * g->lda + p];
                    double y = g->tb ? b[j * g->ldb + p] : b[p * g->ldb + j];
                    s += x * y;
                    s_abs += fabs(x * y);
                }
                double v = g->alpha * s, e = fabs(g->alpha) * s_abs;
                if (g->beta != 0.0) {
                    double cold = g->c[g->c_off + bt * g->c_stride + i * g->ldc + j];
                    v += g->beta * cold;
                    e += fabs(g->beta * cold);
                }
                if (g->bias && g->bias_mode != CLT_BIAS_NONE) {
                    double bv = g->bias[g->bias_off + (g->bias_mode == CLT_BIAS_PER_ROW ? i : j)];
                    v += bv;
                    e += fabs(bv);
                }
                v = ref_unary(g->act, v, g->act_alpha);
                e *= 1.2;
                if (g->r) {
                    double rv = g->r[g->r_off + bt * g->c_stride + i * g->ldr + j];
                    v += rv;
                    e += fabs(rv);
                }
                int64_t o = (bt * g->m + i) * g->n + j;
                want[o] = v;
                scale[o] = e;
            }
    }
}
