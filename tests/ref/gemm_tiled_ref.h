/* Double-precision reference of one (strided-batched) GEMM with the fused epilogue, on host arrays
 * laid out exactly as the device sees them (offsets, leading dimensions, batch strides). */
#ifndef CLT_REF_GEMM_TILED_REF_H
#define CLT_REF_GEMM_TILED_REF_H

#include <stdint.h>

#include "cltensor_all.h"

typedef struct gemm_ref_args {
    int ta, tb;
    int64_t m, n, k, batch;
    double alpha, beta;
    const float *a;
    int64_t a_off, lda, a_stride;
    const float *b;
    int64_t b_off, ldb, b_stride;
    const float *c; /* C before the call (read only when beta != 0) */
    int64_t c_off, ldc, c_stride;
    const float *bias; /* NULL: none */
    int64_t bias_off;
    clt_bias_mode bias_mode;
    clt_unary_op act;
    double act_alpha;
    const float *r; /* residual, NULL: none; batch stride c_stride */
    int64_t r_off, ldr;
} gemm_ref_args;

/* want[(b * m + i) * n + j] = act(alpha * sum_p op(A)[i][p] op(B)[p][j] + beta * C + bias) + R.
 * scale (same layout) bounds the rounding a float computation may make: |alpha| sum |a b| +
 * |beta C| + |bias|, times 1.2 (the largest slope of the fused activations), + |R|. */
void gemm_ref_run(const gemm_ref_args *g, double *want, double *scale);

#endif
