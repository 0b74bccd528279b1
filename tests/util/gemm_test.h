/* Helpers of the GEMM suites: one described case is built on the device (random operands in
 * tensors with padding, offsets and batch gaps), run through the public API and compared with
 * ref/gemm_ref.c, including that nothing outside the addressed C elements changed. */
#ifndef CLT_GEMM_TEST_H
#define CLT_GEMM_TEST_H

#include "cltensor_all.h"

/* Error bound (f32), per element of C, for K = k:
 *   |C - ref| <= GT_C * (K + 4) * eps * scale * GT_ACT_GAIN + GT_REL * eps * (|act| + |residual|)
 * where scale = |alpha| sum|a||b| + |beta C| + |bias| (ref/gemm_ref.h): a dot product of K terms
 * in f32 errs by at most ~K eps of its absolute sum (+4 for the alpha, beta and bias roundings);
 * the admitted activations have slopes below GT_ACT_GAIN; the activation's own rounding and the
 * residual sum add a few ulp of the magnitudes |act| (the activation's output) and |residual|. */
#define GT_C 2.0
#define GT_ACT_GAIN 1.2
#define GT_REL 8.0
#define GT_EPS 1.1920928955078125e-7

typedef struct gt_case {
    int ta, tb;
    int64_t m, n, k;
    float alpha, beta;
    int64_t a_pad, b_pad, c_pad; /* ld = stored row length + pad */
    int64_t a_off, b_off, c_off;
    int64_t batch;      /* > 1 (or strided = 1): clt_gemm_strided_batched */
    int64_t gap;        /* extra elements between batch matrices */
    int b_shared;       /* B batch stride 0 */
    int strided;        /* use clt_gemm_strided_batched even for batch 1 */
    clt_bias_mode bias_mode;
    clt_unary_op act;
    int residual;
    clt_unary_op dact; /* with use_dact: the epilogue's activation backward (y from [-1, 1]) */
    int use_dact;
} gt_case;

/* A context with gemm_impl forced ("tiled", "clblast", "auto"); profile etc. from the environment. */
clt_context *gt_context(const char *impl);
/* Build, run and compare one case; `label` prefixes failure messages. */
void gt_check(clt_context *ctx, const gt_case *c, const char *label);

/* Host helpers shared with the error tests. */
clt_tensor *gt_tensor(clt_context *ctx, int64_t n, const float *x);
float *gt_read(const clt_tensor *t);
float *gt_random(int64_t n);

#endif
