/* Attention reference: the textbook formulas, one (batch, head) at a time, P materialised. */
#include "ref/attention_ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static size_t visible_keys(const ref_attention_shape *s, size_t b)
{
    if (!s->key_lengths)
        return s->sk;
    int32_t n = s->key_lengths[b];
    return n < 0 ? 0 : (size_t)n > s->sk ? s->sk : (size_t)n;
}

static int visible(const ref_attention_shape *s, size_t kv, size_t i, size_t j)
{
    return j < kv && (!s->causal || j <= i);
}

/* P [sq, sk] of one (b, h) into p (0 where hidden; a row that sees nothing is all 0), and lse. */
static void probabilities(const ref_attention_shape *s, size_t b, const float *q, const float *k,
                          double *p, double *lse)
{
    size_t kv = visible_keys(s, b), d = s->d;
    for (size_t i = 0; i < s->sq; i++) {
        double m = -INFINITY;
        for (size_t j = 0; j < s->sk; j++) {
            double dot = 0.0;
            if (visible(s, kv, i, j))
                for (size_t c = 0; c < d; c++)
                    dot += (double)q[i * d + c] * (double)k[j * d + c];
            p[i * s->sk + j] = visible(s, kv, i, j) ? s->scale * dot : -INFINITY;
            if (p[i * s->sk + j] > m)
                m = p[i * s->sk + j];
        }
        double sum = 0.0;
        for (size_t j = 0; j < s->sk; j++) {
            double e = m == -INFINITY ? 0.0 : exp(p[i * s->sk + j] - m);
            p[i * s->sk + j] = e;
            sum += e;
        }
        for (size_t j = 0; j < s->sk; j++)
            p[i * s->sk + j] = sum > 0 ? p[i * s->sk + j] / sum : 0.0;
        if (lse)
            lse[i] = sum > 0 ? m + log(sum) : -INFINITY;
    }
}

void ref_attention_forward(const ref_attention_shape *s, const float *q, const float *k,
                           const float *v, double *out, double *lse, double *out_scale)
{
    size_t d = s->d, qn = s->sq * d, kn = s->sk * d;
    double *p = malloc((s->sq * s->sk + 1) * sizeof(double));
    if (!p)
        abort();
    for (size_t bh = 0; bh < s->b * s->h; bh++) {
        const float *qb = q + bh * qn, *kb = k + bh * kn, *vb = v + bh * kn;
        probabilities(s, bh / s->h, qb, kb, p, lse ? lse + bh * s->sq : NULL);
        for (size_t i = 0; i < s->sq; i++)
            for (size_t c = 0; c < d; c++) {
                double acc = 0.0, mag = 0.0;
                for (size_t j = 0; j < s->sk; j++) {
                    acc += p[i * s->sk + j] * vb[j * d + c];
                    mag += p[i * s->sk + j] * fabs((double)vb[j * d + c]);
                }
                out[bh * qn + i * d + c] = acc;
                if (out_scale)
                    out_scale[bh * qn + i * d + c] = mag + fabs(acc);
            }
    }
    free(p);
}

void ref_attention_backward(const ref_attention_shape *s, const float *q, const float *k,
                            const float *v, const float *dout, double *dq, double *dk, double *dv,
                            double *dq_scale, double *dk_scale, double *dv_scale)
{
    size_t d = s->d, qn = s->sq * d, kn = s->sk * d, pn = s->sq * s->sk + 1;
    double *p = malloc(pn * sizeof(double)), *ds = malloc(pn * sizeof(double));
    double *ds_mag = malloc(pn * sizeof(double));
    if (!p || !ds || !ds_mag)
        abort();
    for (size_t bh = 0; bh < s->b * s->h; bh++) {
        const float *qb = q + bh * qn, *kb = k + bh * kn, *vb = v + bh * kn, *gb = dout + bh * qn;
        probabilities(s, bh / s->h, qb, kb, p, NULL);
        for (size_t i = 0; i < s->sq; i++) {
            /* D_i = sum_j P_ij dP_ij = dout_i . out_i, and its magnitude */
            double row = 0.0, row_mag = 0.0;
            for (size_t c = 0; c < d; c++) {
                double o = 0.0, om = 0.0;
                for (size_t j = 0; j < s->sk; j++) {
                    o += p[i * s->sk + j] * vb[j * d + c];
                    om += p[i * s->sk + j] * fabs((double)vb[j * d + c]);
                }
                row += gb[i * d + c] * o;
                row_mag += fabs((double)gb[i * d + c]) * om;
            }
            for (size_t j = 0; j < s->sk; j++) {
                double dp = 0.0, dp_mag = 0.0;
                for (size_t c = 0; c < d; c++) {
                    dp += (double)gb[i * d + c] * vb[j * d + c];
                    dp_mag += fabs((double)gb[i * d + c] * vb[j * d + c]);
                }
                double pij = p[i * s->sk + j];
                ds[i * s->sk + j] = pij * (dp - row);
                ds_mag[i * s->sk + j] = pij * (dp_mag + row_mag);
            }
        }
        for (size_t i = 0; i < s->sq; i++)
            for (size_t c = 0; c < d; c++) {
                double acc = 0.0, mag = 0.0;
                for (size_t j = 0; j < s->sk; j++) {
                    acc += ds[i * s->sk + j] * kb[j * d + c];
                    mag += ds_mag[i * s->sk + j] * fabs((double)kb[j * d + c]);
                }
                dq[bh * qn + i * d + c] = s->scale * acc;
                if (dq_scale)
                    dq_scale[bh * qn + i * d + c] = fabs(s->scale) * mag;
            }
        for (size_t j = 0; j < s->sk; j++)
            for (size_t c = 0; c < d; c++) {
                double gk = 0.0, gk_mag = 0.0, gv = 0.0, gv_mag = 0.0;
                for (size_t i = 0; i < s->sq; i++) {
                    gk += ds[i * s->sk + j] * qb[i * d + c];
                    gk_mag += ds_mag[i * s->sk + j] * fabs((double)qb[i * d + c]);
                    gv += p[i * s->sk + j] * gb[i * d + c];
                    gv_mag += p[i * s->sk + j] * fabs((double)gb[i * d + c]);
                }
                dk[bh * kn + j * d + c] = s->scale * gk;
                dv[bh * kn + j * d + c] = gv;
                if (dk_scale)
                    dk_scale[bh * kn + j * d + c] = fabs(s->scale) * gk_mag;
                if (dv_scale)
                    dv_scale[bh * kn + j * d + c] = gv_mag;
            }
    }
    free(p);
    free(ds);
    free(ds_mag);
}
