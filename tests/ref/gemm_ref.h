/* Double-precision reference of the GEMM API: C = act(alpha * op(A) op(B) + beta * C + bias) +
 * residual, or (alpha * op(A) op(B) + beta * C + bias) * dact'(y), over a strided batch, with the same storage semantics as include/cltensor_gemm.h. */
#ifndef CLT_REF_GEMM_REF_H
#define CLT_REF_GEMM_REF_H

#include <stddef.h>
#include <stdint.h>

#include "cltensor_all.h"

typedef struct ref_gemm {
    int ta, tb; /* 1: transposed */
    int64_t m, n, k, batch;
    double alpha, beta;
    const float *a; /* whole tensors, host copies */
    int64_t a_off, lda, a_stride;
    const float *b;
    int64_t b_off, ldb, b_stride;
    const float *c; /* C before the call */
    int64_t c_off, ldc, c_stride;
    const float *bias; /* NULL: none */
    clt_bias_mode bias_mode;
    clt_unary_op act;
    double act_alpha;
    const float *res; /* NULL: none; batch stride c_stride */
    int64_t res_off, ldr;
    const float *dact_y; /* NULL: none; batch stride c_stride */
    clt_unary_op dact;   /* its derivative from the forward output y */
    int64_t dact_off, lddy;
} ref_gemm;

/* out[0 .. c_numel) = the expected C tensor (elements the call does not address keep their value
 * from g->c). scale[i] (may be NULL) = |alpha| * sum |a||b| + |beta * C| + |bias| of element i, the
 * size that rounding errors scale with (0 for unaddressed elements). beta == 0 does not read C. */
void ref_gemm_run(const ref_gemm *g, size_t c_numel, double *out, double *scale);

#endif
