/* Conv2D backward in double: the forward's seven loops, accumulating into dx / dw / dbias. */
#include "ref/conv_backward_ref.h"

#include <math.h>
#include <string.h>

/* Calls f(acc index into the "x side", dy index, w index) for every tap that lands inside x. */
typedef void (*tap_fn)(void *ctx, int64_t xi, int64_t yi, int64_t wi);

static void each_tap(const ref_conv *c, tap_fn f, void *ctx)
{
    int64_t ho = ref_conv_ho(c), wo = ref_conv_wo(c);
    int64_t cig = c->ci / c->groups, cog = c->co / c->groups;
    for (int64_t n = 0; n < c->n; n++)
        for (int64_t co = 0; co < c->co; co++) {
            int64_t g = co / cog;
            for (int64_t oy = 0; oy < ho; oy++)
                for (int64_t ox = 0; ox < wo; ox++) {
                    int64_t yi = ((n * c->co + co) * ho + oy) * wo + ox;
                    for (int64_t ci = 0; ci < cig; ci++)
                        for (int64_t ky = 0; ky < c->kh; ky++) {
                            int64_t iy = oy * c->sh - c->pt + ky * c->dh;
                            if (iy < 0 || iy >= c->h)
                                continue;
                            for (int64_t kx = 0; kx < c->kw; kx++) {
                                int64_t ix = ox * c->sw - c->pl + kx * c->dw;
                                if (ix < 0 || ix >= c->w)
                                    continue;
                                f(ctx, ((n * c->ci + g * cig + ci) * c->h + iy) * c->w + ix, yi,
                                  ((co * cig + ci) * c->kh + ky) * c->kw + kx);
                            }
                        }
                }
        }
}

typedef struct acc {
    const float *dy, *other;
    double *out, *scale;
    int to_x; /* 1: accumulate into the x index (dx), 0: into the w index (dw) */
} acc;

static void add(void *p, int64_t xi, int64_t yi, int64_t wi)
{
    acc *a = p;
    double v = (double)a->dy[yi] * (double)a->other[a->to_x ? wi : xi];
    int64_t o = a->to_x ? xi : wi;
    a->out[o] += v;
    if (a->scale)
        a->scale[o] += fabs(v);
}

void ref_conv2d_backward_input(const ref_conv *c, const float *dy, const float *w, double *dx,
                               double *scale)
{
    size_t n = (size_t)(c->n * c->ci * c->h * c->w);
    memset(dx, 0, n * sizeof *dx);
    if (scale)
        memset(scale, 0, n * sizeof *scale);
    acc a = {dy, w, dx, scale, 1};
    each_tap(c, add, &a);
}

void ref_conv2d_backward_weight(const ref_conv *c, const float *dy, const float *x, double *dw,
                                double *scale)
{
    size_t n = (size_t)(c->co * (c->ci / c->groups) * c->kh * c->kw);
    memset(dw, 0, n * sizeof *dw);
    if (scale)
        memset(scale, 0, n * sizeof *scale);
    acc a = {dy, x, dw, scale, 0};
    each_tap(c, add, &a);
}

void ref_conv2d_backward_bias(const ref_conv *c, const float *dy, double *db, double *scale)
{
    int64_t hw = ref_conv_ho(c) * ref_conv_wo(c);
    for (int64_t co = 0; co < c->co; co++) {
        double s = 0.0, m = 0.0;
        for (int64_t n = 0; n < c->n; n++)
            for (int64_t i = 0; i < hw; i++) {
                double v = dy[(n * c->co + co) * hw + i];
                s += v;
                m += fabs(v);
            }
        db[co] = s;
        if (scale)
            scale[co] = m;
    }
}
