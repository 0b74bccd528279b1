/* Double-precision direct reference of 2-D pooling (NCHW): max (with first-max / NaN-wins indices),
 * average (both divisors), their backward by SCATTERING each dy element into its window (the
 * library gathers, so the two are independent), and global average pooling. Computes its own
 * output size, so a geometry bug in the library cannot hide in a shared formula. */
#ifndef CLT_REF_POOL_REF_H
#define CLT_REF_POOL_REF_H

#include <stdint.h>

#include "cltensor_all.h"

typedef struct ref_pool {
    int64_t n, c, h, w;
    int64_t kh, kw, sh, sw, pt, pb, pl, pr;
} ref_pool;

ref_pool ref_pool_make(const int64_t x[4], const clt_pool2d_params *p);
int64_t ref_pool_ho(const ref_pool *g);
int64_t ref_pool_wo(const ref_pool *g);

/* out [n, c, Ho, Wo] and idx (may be NULL): the first maximum in row-major window order, a NaN
 * beating everything (the first NaN). */
void ref_max_pool2d(const ref_pool *g, const float *x, double *out, int32_t *idx);

/* dx [n, c, h, w] = sum of dy over the windows whose maximum (by ref_max_pool2d's rule) is that
 * element; scale (may be NULL) receives the sum of |contributions| per element. */
void ref_max_pool2d_backward(const ref_pool *g, const float *x, const float *dy, double *dx,
                             double *scale);

/* out = window sum / (include_pad ? kh * kw : elements inside the input); scale: the window's
 * sum of |x| divided the same way. */
void ref_avg_pool2d(const ref_pool *g, const float *x, int include_pad, double *out, double *scale);
void ref_avg_pool2d_backward(const ref_pool *g, const float *dy, int include_pad, double *dx,
                             double *scale);

/* Plane means [n * c] of x [n, c, h, w]; scale: mean of |x|. Backward: dx = dy[plane] / (h * w). */
void ref_global_avg_pool2d(int64_t n, int64_t c, int64_t h, int64_t w, const float *x, double *out,
                           double *scale);
void ref_global_avg_pool2d_backward(int64_t n, int64_t c, int64_t h, int64_t w, const float *dy,
                                    double *dx);

#endif
