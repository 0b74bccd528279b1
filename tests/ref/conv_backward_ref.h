/* Double-precision Conv2D backward references (NCHW), written as the forward loop nest with the
 * accumulation turned around (scatter), so they share no formula with the library's gathers.
 * Proven against central differences of ref_conv2d_forward in check_conv2d_backward.c. */
#ifndef CLT_REF_CONV_BACKWARD_REF_H
#define CLT_REF_CONV_BACKWARD_REF_H

#include "ref/conv_ref.h"

/* dx [n, ci, h, w] from dy [n, co, Ho, Wo] and w; scale (may be NULL) = sum |dy * w| per element. */
void ref_conv2d_backward_input(const ref_conv *c, const float *dy, const float *w, double *dx,
                               double *scale);
/* dw [co, ci / groups, kh, kw] from dy and x; scale (may be NULL) = sum |dy * x| per element. */
void ref_conv2d_backward_weight(const ref_conv *c, const float *dy, const float *x, double *dw,
                                double *scale);
/* dbias [co] = sum of dy over n, Ho, Wo; scale (may be NULL) = sum |dy|. */
void ref_conv2d_backward_bias(const ref_conv *c, const float *dy, double *db, double *scale);

#endif
