/* The GPT reference: plain loops in double, every activation kept for the backward pass. */
#include "ref/gpt_ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* out[n, m] (+)= a[n, k] b[k, m], with a and/or b read transposed (a^T stored [k, n], b^T [m, k]).
 * Transposed operands are copied to row-major first so the inner loop runs along rows. */
static void matmul(const double *a, int ta, const double *b, int tb, double *out, size_t n,
                   size_t k, size_t m, int accumulate)
{
    double *at = NULL, *bt = NULL;
    if (ta) {
        at = malloc(n * k * sizeof(double) + 1);
        if (!at)
            abort();
        for (size_t p = 0; p < k; p++)
            for (size_t i = 0; i < n; i++)
                at[i * k + p] = a[p * n + i];
        a = at;
    }
    if (tb) {
        bt = malloc(k * m * sizeof(double) + 1);
        if (!bt)
            abort();
        for (size_t j = 0; j < m; j++)
            for (size_t p = 0; p < k; p++)
                bt[p * m + j] = b[j * k + p];
        b = bt;
    }
    for (size_t i = 0; i < n; i++) {
        double *o = out + i * m;
        if (!accumulate)
            for (size_t j = 0; j < m; j++)
                o[j] = 0.0;
        for (size_t p = 0; p < k; p++) {
            double s = a[i * k + p];
            const double *br = b + p * m;
            for (size_t j = 0; j < m; j++)
                o[j] += s * br[j];
        }
    }
    free(at);
    free(bt);
}

static void add_bias(double *x, const double *bias, size_t n, size_t m)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < m; j++)
            x[i * m + j] += bias[j];
}

static void col_sum(const double *x, double *out, size_t n, size_t m)
{
    for (size_t j = 0; j < m; j++) {
        double s = 0.0;
        for (size_t i = 0; i < n; i++)
            s += x[i * m + j];
        out[j] = s;
    }
}

/* Layer norm of n rows of d; xhat and rstd kept for the backward. */
static void layer_norm(const double *x, const double *g, const double *b, double *y, double *xhat,
                       double *rstd, size_t n, size_t d)
{
    for (size_t i = 0; i < n; i++) {
        double mean = 0.0, var = 0.0;
        for (size_t j = 0; j < d; j++)
            mean += x[i * d + j];
        mean /= (double)d;
        for (size_t j = 0; j < d; j++)
            var += (x[i * d + j] - mean) * (x[i * d + j] - mean);
        var /= (double)d;
        rstd[i] = 1.0 / sqrt(var + GPT_LN_EPS);
        for (size_t j = 0; j < d; j++) {
            xhat[i * d + j] = (x[i * d + j] - mean) * rstd[i];
            y[i * d + j] = xhat[i * d + j] * g[j] + b[j];
        }
    }
}

/* dx (+)= layer-norm backward; dg, db accumulate. */
static void layer_norm_backward(const double *dy, const double *xhat, const double *rstd,
                                const double *g, double *dx, double *dg, double *db, size_t n,
                                size_t d)
{
    for (size_t i = 0; i < n; i++) {
        double m1 = 0.0, m2 = 0.0;
        for (size_t j = 0; j < d; j++) {
            double dxh = dy[i * d + j] * g[j];
            m1 += dxh;
            m2 += dxh * xhat[i * d + j];
            dg[j] += dy[i * d + j] * xhat[i * d + j];
            db[j] += dy[i * d + j];
        }
        m1 /= (double)d;
        m2 /= (double)d;
        for (size_t j = 0; j < d; j++)
            dx[i * d + j] += rstd[i] * (dy[i * d + j] * g[j] - m1 - xhat[i * d + j] * m2);
    }
}

typedef struct layer_acts {
    double *x, *h1, *xhat1, *rstd1, *qkv, *p, *y, *xm, *h2, *xhat2, *rstd2, *u;
} layer_acts;

static double *zalloc(size_t n)
{
    double *p = calloc(n ? n : 1, sizeof(double));
    if (!p)
        abort();
    return p;
}

/* Causal attention over qkv [B, T, 3d]: P [B, H, T, T] and y [B, T, d]. */
static void attention(const gpt_config *c, const double *qkv, double *p, double *y)
{
    size_t T = (size_t)c->seq, d = (size_t)c->d, H = (size_t)c->heads, dh = d / H;
    double scale = 1.0 / sqrt((double)dh);
    for (size_t b = 0; b < (size_t)c->batch; b++)
        for (size_t h = 0; h < H; h++) {
            double *P = p + (b * H + h) * T * T;
            for (size_t i = 0; i < T; i++) {
                const double *q = qkv + (b * T + i) * 3 * d + h * dh;
                double m = -INFINITY, sum = 0.0;
                for (size_t j = 0; j <= i; j++) {
                    const double *k = qkv + (b * T + j) * 3 * d + d + h * dh;
                    double s = 0.0;
                    for (size_t e = 0; e < dh; e++)
                        s += q[e] * k[e];
                    P[i * T + j] = s * scale;
                    if (P[i * T + j] > m)
                        m = P[i * T + j];
                }
                for (size_t j = 0; j < T; j++) {
                    P[i * T + j] = j <= i ? exp(P[i * T + j] - m) : 0.0;
                    sum += P[i * T + j];
                }
                for (size_t j = 0; j <= i; j++)
                    P[i * T + j] /= sum;
                for (size_t e = 0; e < dh; e++) {
                    double acc = 0.0;
                    for (size_t j = 0; j <= i; j++)
                        acc += P[i * T + j] * qkv[(b * T + j) * 3 * d + 2 * d + h * dh + e];
                    y[(b * T + i) * d + h * dh + e] = acc;
                }
            }
        }
}

static void attention_backward(const gpt_config *c, const double *qkv, const double *p,
                               const double *dy, double *dqkv)
{
    size_t T = (size_t)c->seq, d = (size_t)c->d, H = (size_t)c->heads, dh = d / H;
    double scale = 1.0 / sqrt((double)dh);
    double *ds = zalloc(T * T);
    for (size_t b = 0; b < (size_t)c->batch; b++)
        for (size_t h = 0; h < H; h++) {
            const double *P = p + (b * H + h) * T * T;
#define Q(t) (qkv + (b * T + (t)) * 3 * d + h * dh)
#define K(t) (qkv + (b * T + (t)) * 3 * d + d + h * dh)
#define V(t) (qkv + (b * T + (t)) * 3 * d + 2 * d + h * dh)
#define DQ(t) (dqkv + (b * T + (t)) * 3 * d + h * dh)
#define DK(t) (dqkv + (b * T + (t)) * 3 * d + d + h * dh)
#define DV(t) (dqkv + (b * T + (t)) * 3 * d + 2 * d + h * dh)
#define DY(t) (dy + (b * T + (t)) * d + h * dh)
            for (size_t i = 0; i < T; i++) {
                double row = 0.0;
                for (size_t j = 0; j <= i; j++) {
                    double dp = 0.0;
                    for (size_t e = 0; e < dh; e++)
                        dp += DY(i)[e] * V(j)[e];
                    ds[i * T + j] = dp;
                    row += dp * P[i * T + j];
                }
                for (size_t j = 0; j <= i; j++)
                    ds[i * T + j] = P[i * T + j] * (ds[i * T + j] - row);
            }
            for (size_t i = 0; i < T; i++)
                for (size_t j = 0; j <= i; j++)
                    for (size_t e = 0; e < dh; e++) {
                        DQ(i)[e] += scale * ds[i * T + j] * K(j)[e];
                        DK(j)[e] += scale * ds[i * T + j] * Q(i)[e];
                        DV(j)[e] += P[i * T + j] * DY(i)[e];
                    }
#undef Q
#undef K
#undef V
#undef DQ
#undef DK
#undef DV
#undef DY
        }
    free(ds);
}

double ref_gpt_step(const gpt_config *c, double *w, const int32_t *ids, const int32_t *targets,
                    double lr)
{
    gpt_layout l;
    gpt_layout_of(c, &l);
    size_t B = (size_t)c->batch, T = (size_t)c->seq, d = (size_t)c->d, V = (size_t)c->vocab;
    size_t N = B * T, H = (size_t)c->heads, L = (size_t)c->layers;
    double *g = zalloc(l.total);
    layer_acts a[GPT_MAX_LAYERS];
    double *x = zalloc(N * d);
    for (size_t n = 0; n < N; n++)
        for (size_t j = 0; j < d; j++)
            x[n * d + j] = w[l.wte + (size_t)ids[n] * d + j] + w[l.wpe + (n % T) * d + j];
    for (size_t i = 0; i < L; i++) {
        const gpt_layer_layout *y = &l.layer[i];
        layer_acts *A = &a[i];
        A->x = x;
        A->h1 = zalloc(N * d), A->xhat1 = zalloc(N * d), A->rstd1 = zalloc(N);
        A->qkv = zalloc(N * 3 * d), A->p = zalloc(B * H * T * T), A->y = zalloc(N * d);
        A->xm = zalloc(N * d), A->h2 = zalloc(N * d), A->xhat2 = zalloc(N * d);
        A->rstd2 = zalloc(N), A->u = zalloc(N * 4 * d);
        layer_norm(x, w + y->ln1_g, w + y->ln1_b, A->h1, A->xhat1, A->rstd1, N, d);
        matmul(A->h1, 0, w + y->wqkv, 0, A->qkv, N, d, 3 * d, 0);
        add_bias(A->qkv, w + y->bqkv, N, 3 * d);
        attention(c, A->qkv, A->p, A->y);
        memcpy(A->xm, x, N * d * sizeof(double));
        matmul(A->y, 0, w + y->wo, 0, A->xm, N, d, d, 1);
        add_bias(A->xm, w + y->bo, N, d);
        layer_norm(A->xm, w + y->ln2_g, w + y->ln2_b, A->h2, A->xhat2, A->rstd2, N, d);
        matmul(A->h2, 0, w + y->w1, 0, A->u, N, d, 4 * d, 0);
        add_bias(A->u, w + y->b1, N, 4 * d);
        for (size_t e = 0; e < N * 4 * d; e++)
            A->u[e] = A->u[e] > 0 ? A->u[e] : 0.0;
        x = zalloc(N * d);
        memcpy(x, A->xm, N * d * sizeof(double));
        matmul(A->u, 0, w + y->w2, 0, x, N, 4 * d, d, 1);
        add_bias(x, w + y->b2, N, d);
    }
    double *hf = zalloc(N * d), *xhatf = zalloc(N * d), *rstdf = zalloc(N);
    layer_norm(x, w + l.lnf_g, w + l.lnf_b, hf, xhatf, rstdf, N, d);
    double *logits = zalloc(N * V);
    matmul(hf, 0, w + l.wlm, 0, logits, N, d, V, 0);
    double loss = 0.0;
    for (size_t n = 0; n < N; n++) {
        double *z = logits + n * V, m = -INFINITY, s = 0.0;
        for (size_t k = 0; k < V; k++)
            m = z[k] > m ? z[k] : m;
        for (size_t k = 0; k < V; k++)
            s += exp(z[k] - m);
        double lse = m + log(s);
        loss += lse - z[targets[n]];
        for (size_t k = 0; k < V; k++) /* dlogits in place */
            z[k] = (exp(z[k] - lse) - (k == (size_t)targets[n])) / (double)N;
    }
    loss /= (double)N;

    /* backward */
    double *dhf = zalloc(N * d), *dx = zalloc(N * d);
    matmul(hf, 1, logits, 0, g + l.wlm, d, N, V, 0);
    matmul(logits, 0, w + l.wlm, 1, dhf, N, V, d, 0);
    layer_norm_backward(dhf, xhatf, rstdf, w + l.lnf_g, dx, g + l.lnf_g, g + l.lnf_b, N, d);
    for (size_t ii = L; ii-- > 0;) {
        const gpt_layer_layout *y = &l.layer[ii];
        layer_acts *A = &a[ii];
        /* MLP: dx is the gradient of the block output */
        matmul(A->u, 1, dx, 0, g + y->w2, 4 * d, N, d, 0);
        col_sum(dx, g + y->b2, N, d);
        double *du = zalloc(N * 4 * d);
        matmul(dx, 0, w + y->w2, 1, du, N, d, 4 * d, 0);
        for (size_t e = 0; e < N * 4 * d; e++)
            du[e] = A->u[e] > 0 ? du[e] : 0.0;
        matmul(A->h2, 1, du, 0, g + y->w1, d, N, 4 * d, 0);
        col_sum(du, g + y->b1, N, 4 * d);
        double *dh = zalloc(N * d);
        matmul(du, 0, w + y->w1, 1, dh, N, 4 * d, d, 0);
        layer_norm_backward(dh, A->xhat2, A->rstd2, w + y->ln2_g, dx, g + y->ln2_g, g + y->ln2_b,
                            N, d); /* dx is now d(xm) */
        /* attention projection */
        matmul(A->y, 1, dx, 0, g + y->wo, d, N, d, 0);
        col_sum(dx, g + y->bo, N, d);
        double *dyatt = zalloc(N * d), *dqkv = zalloc(N * 3 * d);
        matmul(dx, 0, w + y->wo, 1, dyatt, N, d, d, 0);
        attention_backward(c, A->qkv, A->p, dyatt, dqkv);
        matmul(A->h1, 1, dqkv, 0, g + y->wqkv, d, N, 3 * d, 0);
        col_sum(dqkv, g + y->bqkv, N, 3 * d);
        memset(dh, 0, N * d * sizeof(double));
        matmul(dqkv, 0, w + y->wqkv, 1, dh, N, 3 * d, d, 0);
        layer_norm_backward(dh, A->xhat1, A->rstd1, w + y->ln1_g, dx, g + y->ln1_g, g + y->ln1_b,
                            N, d); /* dx is now d(block input) */
        free(du), free(dh), free(dyatt), free(dqkv);
    }
    for (size_t n = 0; n < N; n++)
        for (size_t j = 0; j < d; j++) {
            g[l.wte + (size_t)ids[n] * d + j] += dx[n * d + j];
            g[l.wpe + (n % T) * d + j] += dx[n * d + j];
        }
    for (size_t e = 0; e < l.total; e++)
        w[e] -= lr * g[e];

    for (size_t i = 0; i < L; i++) {
        layer_acts *A = &a[i];
        free(A->x), free(A->h1), free(A->xhat1), free(A->rstd1), free(A->qkv), free(A->p);
        free(A->y), free(A->xm), free(A->h2), free(A->xhat2), free(A->rstd2), free(A->u);
    }
    free(x), free(hf), free(xhatf), free(rstdf), free(logits), free(dhf), free(dx), free(g);
    return loss;
}
