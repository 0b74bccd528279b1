/* Plain-C references for the layout and index ops: coordinates walked one element at a time. */
#ifndef CLT_LAYOUT_REF_H
#define CLT_LAYOUT_REF_H

#include <stdint.h>

/* Row-major strides of shape; returns the element count. */
int64_t ref_strides(int ndim, const int64_t *shape, int64_t *strides);
/* dst (contiguous, shape) [i] = src[off + sum(coord_d * strides_d)]. 4-byte elements. */
void ref_strided_copy(const uint32_t *src, int64_t off, int ndim, const int64_t *shape,
                      const int64_t *strides, uint32_t *dst);
/* Pad x (shape xs) into out: mode 0 constant (fill bits), 1 reflect. */
void ref_pad(const uint32_t *x, int ndim, const int64_t *xs, const int64_t *before,
             const int64_t *after, int mode, uint32_t fill, uint32_t *out);
/* dx (shape xs, zeroed here, double) += dy over every out position of the pad reading it. */
void ref_pad_backward(const float *dy, int ndim, const int64_t *xs, const int64_t *before,
                      const int64_t *after, int mode, double *dx);
/* dx (shape xs aligned to dy's ndim with leading 1s) = sum of dy (shape ys) over broadcast axes. */
void ref_broadcast_backward(const float *dy, int ndim, const int64_t *ys, int xndim,
                            const int64_t *xs, double *dx);
/* Philox 4x32-10 of (counter, key): the four words into out. */
void ref_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);

#endif
