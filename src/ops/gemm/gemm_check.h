/* GEMM argument checks shared by the public entry points of gemm_api.c: one strided-batched request is
 * validated here (NULLs, contexts, dtypes, leading dimensions, bounds with overflow care, the
 * epilogue, aliasing) and turned into the clt__gemm_problem every implementation receives. */
#ifndef CLT_GEMM_CHECK_H
#define CLT_GEMM_CHECK_H

#include "ops/gemm/gemm.h"

/* One strided-batched GEMM as the caller described it (offsets relative to each tensor). */
typedef struct clt__gemm_request {
    clt_transpose ta, tb;
    int64_t m, n, k;
    float alpha, beta;
    const clt_tensor *a, *b;
    clt_tensor *c;
    int64_t a_off, lda, a_stride;
    int64_t b_off, ldb, b_stride;
    int64_t c_off, ldc, c_stride;
    int64_t batch;
    const clt_gemm_epilogue *ep; /* may be NULL */
    clt_math_mode math;          /* the call's mode (CLT_MATH_DEFAULT: the context's); clt_matmul_math
                                    sets it, the epilogue's math field wins when that is not default */
} clt__gemm_request;

/* The context of the call (first non-NULL tensor's), for messages before anything is checked. */
clt_context *clt__gemm_request_ctx(const clt__gemm_request *r);

/* Everything except aliasing. Statuses: CLT_ERR_INVALID_ARGUMENT (NULL, bad enum, ld too small,
 * negative stride or batch), CLT_ERR_CONTEXT_MISMATCH, CLT_ERR_INVALID_DTYPE, CLT_ERR_INVALID_SHAPE
 * (negative m/n/k, an element outside its tensor, bias length), CLT_ERR_UNSUPPORTED (activation,
 * dact and its combinations). */
clt_status clt__gemm_check_request(const char *who, const clt__gemm_request *r);

/* C against A, B, bias, residual / dact_y, and C's batches against each other: CLT_ERR_ALIASING. */
clt_status clt__gemm_check_aliasing(const char *who, const clt__gemm_request *r);

/* First and last BYTE (in the tensor's cl_mem: operands of different dtypes may share a buffer) that the request addresses in each
 * of its matrices; used by the pointer-batched call to check aliasing across entries. `used` is 0
 * for a matrix the call never reads (A and B when k == 0). */
typedef struct clt__gemm_extent {
    cl_mem mem;
    uint64_t first, last;
    int used;
} clt__gemm_extent;
void clt__gemm_extents(const clt__gemm_request *r, clt__gemm_extent *a, clt__gemm_extent *b,
                       clt__gemm_extent *c);
/* Bias / residual (or dact_y) extents of the epilogue (used = 0 when absent). */
void clt__gemm_epilogue_extents(const clt__gemm_request *r, clt__gemm_extent *bias,
                                clt__gemm_extent *residual);

/* The implementation-facing problem of a validated request. */
void clt__gemm_problem_from(const clt__gemm_request *r, clt__gemm_problem *p);

#endif
