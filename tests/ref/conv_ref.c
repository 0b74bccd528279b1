/* Direct double-precision Conv2D forward: seven nested loops, nothing clever. */
#include "ref/conv_ref.h"

#include <math.h>

#include "ref/activation_ref.h"

static int64_t sweep(int64_t in, int64_t pads, int64_t k, int64_t dil, int64_t stride)
{
    int64_t span = in + pads - dil * (k - 1) - 1;
    return span < 0 ? 0 : span / stride + 1;
}

int64_t ref_conv_ho(const ref_conv *c) { return sweep(c->h, c->pt + c->pb, c->kh, c->dh, c->sh); }
int64_t ref_conv_wo(const ref_conv *c) { return sweep(c->w, c->pl + c->pr, c->kw, c->dw, c->sw); }

ref_conv ref_conv_make(const int64_t x[4], const int64_t w[4], const clt_conv2d_params *p)
{
    ref_conv c = {
        .n = x[0], .ci = x[1], .h = x[2], .w = x[3], .co = w[0], .kh = w[2], .kw = w[3],
        .sh = p->stride_h, .sw = p->stride_w, .pt = p->pad_top, .pb = p->pad_bottom,
        .pl = p->pad_left, .pr = p->pad_right, .dh = p->dilation_h, .dw = p->dilation_w,
        .groups = p->groups,
    };
    return c;
}

void ref_conv2d_forward(const ref_conv *c, const float *x, const float *w, const float *bias,
                        clt_unary_op act, double act_alpha, double *out, double *scale)
{
    int64_t ho = ref_conv_ho(c), wo = ref_conv_wo(c);
    int64_t cig = c->ci / c->groups, cog = c->co / c->groups;
    for (int64_t n = 0; n < c->n; n++)
        for (int64_t co = 0; co < c->co; co++) {
            int64_t g = co / cog;
            for (int64_t oy = 0; oy < ho; oy++)
                for (int64_t ox = 0; ox < wo; ox++) {
                    double s = bias ? bias[co] : 0.0, mag = bias ? fabs(bias[co]) : 0.0;
                    for (int64_t ci = 0; ci < cig; ci++)
                        for (int64_t ky = 0; ky < c->kh; ky++) {
                            int64_t iy = oy * c->sh - c->pt + ky * c->dh;
                            if (iy < 0 || iy >= c->h)
                                continue;
                            for (int64_t kx = 0; kx < c->kw; kx++) {
                                int64_t ix = ox * c->sw - c->pl + kx * c->dw;
                                if (ix < 0 || ix >= c->w)
                                    continue;
                                double xv = x[((n * c->ci + g * cig + ci) * c->h + iy) * c->w + ix];
                                double wv = w[((co * cig + ci) * c->kh + ky) * c->kw + kx];
                                s += xv * wv;
                                mag += fabs(xv * wv);
                            }
                        }
                    int64_t o = ((n * c->co + co) * ho + oy) * wo + ox;
                    out[o] = ref_unary(act, s, act_alpha);
                    if (scale)
                        scale[o] = mag;
                }
        }
}
