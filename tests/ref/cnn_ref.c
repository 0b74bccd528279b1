/* The CNN reference: direct loops in double. */
#include "ref/cnn_ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct shape4 {
    int n, c, h, w;
} shape4;

static size_t numel(shape4 s) { return (size_t)s.n * s.c * s.h * s.w; }

static double *zalloc(size_t n)
{
    double *p = calloc(n ? n : 1, sizeof(double));
    if (!p)
        abort();
    return p;
}

/* 3x3 convolution, padding 1, stride st: y [n, co, ho, wo]. */
static void conv(const double *x, shape4 xs, const double *w, int co, int st, double *y,
                 shape4 *ys)
{
    int ho = (xs.h + 2 - 3) / st + 1, wo = (xs.w + 2 - 3) / st + 1;
    *ys = (shape4){xs.n, co, ho, wo};
    for (int n = 0; n < xs.n; n++)
        for (int o = 0; o < co; o++)
            for (int i = 0; i < ho; i++)
                for (int j = 0; j < wo; j++) {
                    double s = 0.0;
                    for (int c = 0; c < xs.c; c++)
                        for (int a = 0; a < 3; a++)
                            for (int b = 0; b < 3; b++) {
                                int hi = i * st - 1 + a, wi = j * st - 1 + b;
                                if (hi >= 0 && hi < xs.h && wi >= 0 && wi < xs.w)
                                    s += w[((o * xs.c + c) * 3 + a) * 3 + b] *
                                         x[((n * xs.c + c) * xs.h + hi) * xs.w + wi];
                            }
                    y[((n * co + o) * ho + i) * wo + j] = s;
                }
}

/* dx (+= when dx non-NULL) and dw (=) of conv. */
static void conv_backward(const double *x, shape4 xs, const double *w, const double *dy,
                          shape4 ys, int st, double *dx, double *dw)
{
    memset(dw, 0, (size_t)ys.c * xs.c * 9 * sizeof(double));
    for (int n = 0; n < xs.n; n++)
        for (int o = 0; o < ys.c; o++)
            for (int i = 0; i < ys.h; i++)
                for (int j = 0; j < ys.w; j++) {
                    double g = dy[((n * ys.c + o) * ys.h + i) * ys.w + j];
                    for (int c = 0; c < xs.c; c++)
                        for (int a = 0; a < 3; a++)
                            for (int b = 0; b < 3; b++) {
                                int hi = i * st - 1 + a, wi = j * st - 1 + b;
                                if (hi < 0 || hi >= xs.h || wi < 0 || wi >= xs.w)
                                    continue;
                                size_t xi = (size_t)((n * xs.c + c) * xs.h + hi) * xs.w + wi;
                                size_t wi_ = (size_t)((o * xs.c + c) * 3 + a) * 3 + b;
                                dw[wi_] += g * x[xi];
                                if (dx)
                                    dx[xi] += g * w[wi_];
                            }
                }
}

/* Batch norm (training) in place on y: xhat and rstd kept. */
static void bn(double *y, shape4 s, const double *g, const double *b, double *xhat, double *rstd)
{
    size_t hw = (size_t)s.h * s.w, m = (size_t)s.n * hw;
    for (int c = 0; c < s.c; c++) {
        double mean = 0.0, var = 0.0;
        for (int n = 0; n < s.n; n++)
            for (size_t e = 0; e < hw; e++)
                mean += y[((size_t)n * s.c + c) * hw + e];
        mean /= (double)m;
        for (int n = 0; n < s.n; n++)
            for (size_t e = 0; e < hw; e++) {
                double d = y[((size_t)n * s.c + c) * hw + e] - mean;
                var += d * d;
            }
        var /= (double)m;
        rstd[c] = 1.0 / sqrt(var + CNN_BN_EPS);
        for (int n = 0; n < s.n; n++)
            for (size_t e = 0; e < hw; e++) {
                size_t i = ((size_t)n * s.c + c) * hw + e;
                xhat[i] = (y[i] - mean) * rstd[c];
                y[i] = xhat[i] * g[c] + b[c];
            }
    }
}

/* dx (=) of batch norm from dy; dg, db (=). */
static void bn_backward(const double *dy, shape4 s, const double *g, const double *xhat,
                        const double *rstd, double *dx, double *dg, double *db)
{
    size_t hw = (size_t)s.h * s.w, m = (size_t)s.n * hw;
    for (int c = 0; c < s.c; c++) {
        double sg = 0.0, sgx = 0.0;
        for (int n = 0; n < s.n; n++)
            for (size_t e = 0; e < hw; e++) {
                size_t i = ((size_t)n * s.c + c) * hw + e;
                sg += dy[i];
                sgx += dy[i] * xhat[i];
            }
        dg[c] = sgx;
        db[c] = sg;
        for (int n = 0; n < s.n; n++)
            for (size_t e = 0; e < hw; e++) {
                size_t i = ((size_t)n * s.c + c) * hw + e;
                dx[i] = g[c] * rstd[c] * (dy[i] - sg / (double)m - xhat[i] * sgx / (double)m);
            }
    }
}

static void relu(double *y, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] = y[i] > 0 ? y[i] : 0.0;
}

/* dy *= (y > 0), y the ReLU's output. */
static void relu_backward(double *dy, const double *y, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dy[i] = y[i] > 0 ? dy[i] : 0.0;
}

double ref_cnn_step(double *p, const float *xf, const int32_t *labels, int batch, double lr)
{
    cnn_layout l;
    cnn_layout_of(&l);
    shape4 xs = {batch, CNN_IN_C, CNN_HW, CNN_HW}, s1, s2, s3, s4;
    double *x = zalloc(numel(xs));
    for (size_t i = 0; i < numel(xs); i++)
        x[i] = xf[i];
    size_t big = (size_t)batch * CNN_C1 * CNN_HW * CNN_HW;
    double *a1 = zalloc(big), *xh1 = zalloc(big), *r1 = zalloc(CNN_C1);
    conv(x, xs, p + l.w1, CNN_C1, 1, a1, &s1);
    bn(a1, s1, p + l.g1, p + l.b1, xh1, r1);
    relu(a1, numel(s1));
    shape4 ps = {batch, CNN_C1, CNN_HW / 2, CNN_HW / 2};
    double *p1 = zalloc(numel(ps));
    int *arg = malloc(numel(ps) * sizeof(int));
    if (!arg)
        abort();
    for (int n = 0; n < batch; n++)
        for (int c = 0; c < CNN_C1; c++)
            for (int i = 0; i < ps.h; i++)
                for (int j = 0; j < ps.w; j++) {
                    int best = -1;
                    double m = -INFINITY;
                    for (int a = 0; a < 2; a++)
                        for (int b = 0; b < 2; b++) {
                            int at = (((n * CNN_C1 + c) * CNN_HW) + 2 * i + a) * CNN_HW + 2 * j + b;
                            if (a1[at] > m) { /* the first maximum wins ties */
                                m = a1[at];
                                best = at;
                            }
                        }
                    size_t o = ((size_t)(n * CNN_C1 + c) * ps.h + i) * ps.w + j;
                    p1[o] = m;
                    arg[o] = best;
                }
    size_t mid = numel(ps);
    double *a2 = zalloc(mid), *xh2 = zalloc(mid), *r2 = zalloc(CNN_C1);
    conv(p1, ps, p + l.w2, CNN_C1, 1, a2, &s2);
    bn(a2, s2, p + l.g2, p + l.b2, xh2, r2);
    relu(a2, mid);
    double *a3 = zalloc(mid), *xh3 = zalloc(mid), *r3 = zalloc(CNN_C1);
    conv(a2, s2, p + l.w3, CNN_C1, 1, a3, &s3);
    bn(a3, s3, p + l.g3, p + l.b3, xh3, r3);
    for (size_t i = 0; i < mid; i++)
        a3[i] += p1[i];
    relu(a3, mid);
    size_t small = (size_t)batch * CNN_C4 * 16;
    double *a4 = zalloc(small), *xh4 = zalloc(small), *r4 = zalloc(CNN_C4);
    conv(a3, s3, p + l.w4, CNN_C4, 2, a4, &s4);
    bn(a4, s4, p + l.g4, p + l.b4, xh4, r4);
    relu(a4, small);
    double pooled[64 * CNN_C4], logits[64 * CNN_CLASSES];
    if (batch > 64)
        abort();
    for (int n = 0; n < batch; n++)
        for (int c = 0; c < CNN_C4; c++) {
            double s = 0.0;
            for (int e = 0; e < 16; e++)
                s += a4[(size_t)(n * CNN_C4 + c) * 16 + e];
            pooled[n * CNN_C4 + c] = s / 16.0;
        }
    double loss = 0.0;
    for (int n = 0; n < batch; n++) {
        double m = -INFINITY, s = 0.0;
        for (int k = 0; k < CNN_CLASSES; k++) {
            double z = p[l.bfc + (size_t)k];
            for (int c = 0; c < CNN_C4; c++)
                z += pooled[n * CNN_C4 + c] * p[l.wfc + (size_t)(c * CNN_CLASSES + k)];
            logits[n * CNN_CLASSES + k] = z;
            m = z > m ? z : m;
        }
        for (int k = 0; k < CNN_CLASSES; k++)
            s += exp(logits[n * CNN_CLASSES + k] - m);
        double lse = m + log(s);
        loss += lse - logits[n * CNN_CLASSES + labels[n]];
        for (int k = 0; k < CNN_CLASSES; k++)
            logits[n * CNN_CLASSES + k] =
                (exp(logits[n * CNN_CLASSES + k] - lse) - (k == labels[n])) / batch;
    }
    loss /= batch;

    double *g = zalloc(l.total);
    double dpooled[64 * CNN_C4];
    for (int n = 0; n < batch; n++)
        for (int c = 0; c < CNN_C4; c++) {
            double s = 0.0;
            for (int k = 0; k < CNN_CLASSES; k++) {
                g[l.wfc + (size_t)(c * CNN_CLASSES + k)] +=
                    pooled[n * CNN_C4 + c] * logits[n * CNN_CLASSES + k];
                s += logits[n * CNN_CLASSES + k] * p[l.wfc + (size_t)(c * CNN_CLASSES + k)];
            }
            dpooled[n * CNN_C4 + c] = s;
        }
    for (int n = 0; n < batch; n++)
        for (int k = 0; k < CNN_CLASSES; k++)
            g[l.bfc + (size_t)k] += logits[n * CNN_CLASSES + k];
    double *d4 = zalloc(small), *dc4 = zalloc(small);
    for (size_t i = 0; i < small; i++)
        d4[i] = dpooled[i / 16] / 16.0;
    relu_backward(d4, a4, small);
    bn_backward(d4, s4, p + l.g4, xh4, r4, dc4, g + l.g4, g + l.b4);
    double *d3 = zalloc(mid), *dc3 = zalloc(mid), *d2 = zalloc(mid), *dc2 = zalloc(mid);
    double *dp1 = zalloc(mid);
    conv_backward(a3, s3, p + l.w4, dc4, s4, 2, d3, g + l.w4);
    relu_backward(d3, a3, mid);
    bn_backward(d3, s3, p + l.g3, xh3, r3, dc3, g + l.g3, g + l.b3);
    conv_backward(a2, s2, p + l.w3, dc3, s3, 1, d2, g + l.w3);
    relu_backward(d2, a2, mid);
    bn_backward(d2, s2, p + l.g2, xh2, r2, dc2, g + l.g2, g + l.b2);
    memcpy(dp1, d3, mid * sizeof(double)); /* the skip connection */
    conv_backward(p1, ps, p + l.w2, dc2, s2, 1, dp1, g + l.w2);
    double *da1 = zalloc(big), *dc1 = zalloc(big);
    for (size_t i = 0; i < mid; i++)
        da1[arg[i]] += dp1[i];
    relu_backward(da1, a1, big);
    bn_backward(da1, s1, p + l.g1, xh1, r1, dc1, g + l.g1, g + l.b1);
    conv_backward(x, xs, p + l.w1, dc1, s1, 1, NULL, g + l.w1);
    for (size_t i = 0; i < l.total; i++)
        p[i] -= lr * g[i];
    double *all[] = {x, a1, xh1, r1, p1, a2, xh2, r2, a3, xh3, r3, a4, xh4, r4, g, d4, dc4,
                     d3, dc3, d2, dc2, dp1, da1, dc1};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        free(all[i]);
    free(arg);
    return loss;
}
