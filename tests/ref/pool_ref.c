/* Direct double-precision pooling: loops over windows, nothing clever. */
#include "ref/pool_ref.h"

#include <math.h>
#include <string.h>

ref_pool ref_pool_make(const int64_t x[4], const clt_pool2d_params *p)
{
    ref_pool g = {
        .n = x[0], .c = x[1], .h = x[2], .w = x[3], .kh = p->kernel_h, .kw = p->kernel_w,
        .sh = p->stride_h, .sw = p->stride_w, .pt = p->pad_top, .pb = p->pad_bottom,
        .pl = p->pad_left, .pr = p->pad_right,
    };
    return g;
}

static int64_t sweep(int64_t in, int64_t pads, int64_t k, int64_t stride)
{
    int64_t span = in + pads - k;
    return span < 0 ? 0 : span / stride + 1;
}

int64_t ref_pool_ho(const ref_pool *g) { return sweep(g->h, g->pt + g->pb, g->kh, g->sh); }
int64_t ref_pool_wo(const ref_pool *g) { return sweep(g->w, g->pl + g->pr, g->kw, g->sw); }

/* Visit the in-input elements of window (oy, ox), row-major: position (y * w + x). */
#define FOR_WINDOW(g, oy, ox, y, x)                                                                \
    for (int64_t y = (oy) * (g)->sh - (g)->pt; y < (oy) * (g)->sh - (g)->pt + (g)->kh; y++)        \
        for (int64_t x = (ox) * (g)->sw - (g)->pl; x < (ox) * (g)->sw - (g)->pl + (g)->kw; x++)   \
            if (y >= 0 && y < (g)->h && x >= 0 && x < (g)->w)

static int64_t window_argmax(const ref_pool *g, const float *plane, int64_t oy, int64_t ox)
{
    int64_t best = -1;
    FOR_WINDOW(g, oy, ox, y, x)
    {
        int64_t at = y * g->w + x;
        if (best < 0) {
            best = at;
            continue;
        }
        double v = plane[at], b = plane[best];
        if (isnan(b))
            continue;
        if (isnan(v) || v > b)
            best = at;
    }
    return best;
}

void ref_max_pool2d(const ref_pool *g, const float *x, double *out, int32_t *idx)
{
    int64_t ho = ref_pool_ho(g), wo = ref_pool_wo(g);
    for (int64_t pl = 0; pl < g->n * g->c; pl++) {
        const float *plane = x + pl * g->h * g->w;
        for (int64_t oy = 0; oy < ho; oy++)
            for (int64_t ox = 0; ox < wo; ox++) {
                int64_t at = window_argmax(g, plane, oy, ox), o = (pl * ho + oy) * wo + ox;
                out[o] = plane[at];
                if (idx)
                    idx[o] = (int32_t)at;
            }
    }
}

void ref_max_pool2d_backward(const ref_pool *g, const float *x, const float *dy, double *dx,
                             double *scale)
{
    int64_t ho = ref_pool_ho(g), wo = ref_pool_wo(g), area = g->h * g->w;
    memset(dx, 0, (size_t)(g->n * g->c * area) * sizeof *dx);
    if (scale)
        memset(scale, 0, (size_t)(g->n * g->c * area) * sizeof *scale);
    for (int64_t pl = 0; pl < g->n * g->c; pl++)
        for (int64_t oy = 0; oy < ho; oy++)
            for (int64_t ox = 0; ox < wo; ox++) {
                int64_t at = pl * area + window_argmax(g, x + pl * area, oy, ox);
                double d = dy[(pl * ho + oy) * wo + ox];
                dx[at] += d;
                if (scale)
                    scale[at] += fabs(d);
            }
}

static double divisor(const ref_pool *g, int64_t oy, int64_t ox, int include_pad)
{
    if (include_pad)
        return (double)(g->kh * g->kw);
    double count = 0;
    FOR_WINDOW(g, oy, ox, y, x)
    count += 1;
    return count;
}

void ref_avg_pool2d(const ref_pool *g, const float *x, int include_pad, double *out, double *scale)
{
    int64_t ho = ref_pool_ho(g), wo = ref_pool_wo(g), area = g->h * g->w;
    for (int64_t pl = 0; pl < g->n * g->c; pl++)
        for (int64_t oy = 0; oy < ho; oy++)
            for (int64_t ox = 0; ox < wo; ox++) {
                double s = 0, mag = 0, d = divisor(g, oy, ox, include_pad);
                FOR_WINDOW(g, oy, ox, y, xx)
                {
                    s += x[pl * area + y * g->w + xx];
                    mag += fabs(x[pl * area + y * g->w + xx]);
                }
                int64_t o = (pl * ho + oy) * wo + ox;
                out[o] = s / d;
                if (scale)
                    scale[o] = mag / d;
            }
}

void ref_avg_pool2d_backward(const ref_pool *g, const float *dy, int include_pad, double *dx,
                             double *scale)
{
    int64_t ho = ref_pool_ho(g), wo = ref_pool_wo(g), area = g->h * g->w;
    memset(dx, 0, (size_t)(g->n * g->c * area) * sizeof *dx);
    if (scale)
        memset(scale, 0, (size_t)(g->n * g->c * area) * sizeof *scale);
    for (int64_t pl = 0; pl < g->n * g->c; pl++)
        for (int64_t oy = 0; oy < ho; oy++)
            for (int64_t ox = 0; ox < wo; ox++) {
                double d = dy[(pl * ho + oy) * wo + ox] / divisor(g, oy, ox, include_pad);
                FOR_WINDOW(g, oy, ox, y, x)
                {
                    dx[pl * area + y * g->w + x] += d;
                    if (scale)
                        scale[pl * area + y * g->w + x] += fabs(d);
                }
            }
}

void ref_global_avg_pool2d(int64_t n, int64_t c, int64_t h, int64_t w, const float *x, double *out,
                           double *scale)
{
    for (int64_t pl = 0; pl < n * c; pl++) {
        double s = 0, mag = 0;
        for (int64_t i = 0; i < h * w; i++) {
            s += x[pl * h * w + i];
            mag += fabs(x[pl * h * w + i]);
        }
        out[pl] = s / (double)(h * w);
        if (scale)
            scale[pl] = mag / (double)(h * w);
    }
}

void ref_global_avg_pool2d_backward(int64_t n, int64_t c, int64_t h, int64_t w, const float *dy,
                                    double *dx)
{
    for (int64_t pl = 0; pl < n * c; pl++)
        for (int64_t i = 0; i < h * w; i++)
            dx[pl * h * w + i] = dy[pl] / (double)(h * w);
}
