/* Double-precision direct reference of Conv2D forward (NCHW), computing its own output size, so a
 * geometry bug in the library cannot hide in a shared formula. Shared by the forward and backward
 * conv tests (finite differences run this forward). */
#ifndef CLT_REF_CONV_REF_H
#define CLT_REF_CONV_REF_H

#include <stdint.h>

#include "cltensor_all.h"

typedef struct ref_conv {
    int64_t n, ci, h, w;    /* x [n, ci, h, w] */
    int64_t co, kh, kw;     /* w [co, ci / groups, kh, kw] */
    int64_t sh, sw, pt, pb, pl, pr, dh, dw, groups;
} ref_conv;

/* The reference's own arithmetic: Ho, Wo (may be <= 0 for impossible geometry). */
int64_t ref_conv_ho(const ref_conv *c);
int64_t ref_conv_wo(const ref_conv *c);

/* A ref_conv from tensor dims and the public params. */
ref_conv ref_conv_make(const int64_t x[4], const int64_t w[4], const clt_conv2d_params *p);

/* out [n, co, Ho, Wo] = act(conv(x, w) + bias) in double; bias may be NULL. scale (may be NULL)
 * receives sum |x||w| + |bias| per output, the size rounding errors scale with. */
void ref_conv2d_forward(const ref_conv *c, const float *x, const float *w, const float *bias,
                        clt_unary_op act, double act_alpha, double *out, double *scale);

#endif
