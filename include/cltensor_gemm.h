/**
 * @file
 * cltensor GEMM: C = act(alpha * op(A) * op(B) + beta * C + bias) + residual, row-major.
 *
 * Dtypes: A and B both f32, both f16 or both bf16; C f32, or the inputs' 16-bit dtype (then
 * rounded to nearest even once, after the epilogue); bias, residual and dact_y f32. Products
 * accumulate in fp32 always. Anything else: CLT_ERR_INVALID_DTYPE, nothing enqueued. 16-bit
 * operands never go to CLBlast.
 * Math mode (clt_math_mode, cltensor.h): the epilogue's `math` field, else (zero) the context's
 * mode (clt_context_set_math_mode, $CLT_MATH). TF32 / 3xTF32 and 16-bit inputs run on tensor cores
 * where the device has them (clt_device_has_tensor_cores) and the kernels take the shape; else on
 * the exact fp32 kernels (16-bit inputs converted on load), and the profiler's implementation
 * name says so ("tiled (tf32 asked, fp32 math: no tensor cores)"). With 16-bit inputs every mode
 * gives the same products: f16 and bf16 values are exact in TF32.
 * Included by cltensor.h. Our hand-tiled kernels or CLBlast, chosen per shape and device
 * (CLT_GEMM_IMPL=tiled|clblast|auto or clt_context_options.gemm_impl forces one). One launch per
 * call for our kernels, epilogue included. Only enqueues.
 *
 * Matrices live in tensors as raw row-major storage: element (i, j) of a matrix X with leading
 * dimension ldx starting `off` elements into tensor T is T[off + i * ldx + j]. op(X) = X or X^T.
 * Bounds: every element addressed must lie inside its tensor (CLT_ERR_INVALID_SHAPE otherwise);
 * ld must be >= the stored row length (CLT_ERR_INVALID_ARGUMENT). m, n, k >= 0; m or n = 0 is a
 * no-op; k = 0 gives C = act(beta * C + bias) + residual.
 * BLAS semantics on every path (our kernels of every variant, split-K, batched, CLBlast, epilogues):
 * alpha == 0: A and B are not read (NaN or Inf there cannot reach C): C = act(beta * C + bias) +
 * residual, as for k = 0. beta == 0: C is not read (NaN in C is overwritten).
 * Aliasing: C may not overlap A, B, bias or residual (CLT_ERR_ALIASING).
 */
#ifndef CLTENSOR_GEMM_H
#define CLTENSOR_GEMM_H

#include "cltensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/** op(X) of a GEMM operand. */
typedef enum clt_transpose {
    CLT_NO_TRANS = 0, /**< op(X) = X */
    CLT_TRANS = 1     /**< op(X) = X^T */
} clt_transpose;

/** Where the epilogue's bias goes. */
typedef enum clt_bias_mode {
    CLT_BIAS_NONE = 0,       /**< no bias */
    CLT_BIAS_PER_COLUMN = 1, /**< bias[j] added to column j (the usual layer bias, length n) */
    CLT_BIAS_PER_ROW = 2     /**< bias[i] added to row i (length m) */
} clt_bias_mode;

/** Work fused into the GEMM kernel after the product. Zero-initialise (or use
 *  clt_gemm_epilogue_init) for none. The activation is one of CLT_IDENTITY, CLT_RELU, CLT_GELU_ERF,
 *  CLT_GELU_TANH, CLT_TANH, CLT_SIGMOID, CLT_SILU (others: CLT_ERR_UNSUPPORTED). residual is an
 *  m x n matrix at offset residual_offset with leading dimension ldr (same batch stride as C in
 *  batched calls).
 *  Activation backward (dact_y non-NULL): C = (alpha * op(A) op(B) + beta * C + bias) * dact'(y),
 *  where y is the m x n matrix of dact_y at dact_offset with leading dimension lddy (C's batch
 *  stride in batched calls) holding the FORWARD OUTPUT of `dact`, and dact'(y) its derivative
 *  written from that output: CLT_TANH 1 - y^2, CLT_SIGMOID y (1 - y), CLT_RELU (y > 0). E.g. the
 *  backward dX = (dY W^T) * tanh'(X_out) in one GEMM. Other dact ops: CLT_ERR_UNSUPPORTED; with an
 *  activation other than CLT_IDENTITY or with a residual: CLT_ERR_UNSUPPORTED; dact_y is checked
 *  like the residual (context, f32, bounds, C may not overlap it); dact is ignored when dact_y is
 *  NULL. Not supported by clt_gemm_batched (CLT_ERR_UNSUPPORTED). */
typedef struct clt_gemm_epilogue {
    const clt_tensor *bias;     /**< f32 vector (length n or m, by bias_mode), or NULL */
    clt_bias_mode bias_mode;    /**< per column or per row */
    clt_unary_op activation;    /**< applied after the bias (CLT_IDENTITY: none) */
    float activation_alpha;     /**< the activation's alpha, where it has one */
    const clt_tensor *residual; /**< m x n matrix added after the activation, or NULL */
    int64_t residual_offset;    /**< its first element in residual */
    int64_t ldr;                /**< its leading dimension */
    const clt_tensor *dact_y; /**< NULL: no activation backward */
    clt_unary_op dact;          /**< the forward activation whose derivative multiplies C */
    int64_t dact_offset;        /**< dact_y's first element */
    int64_t lddy;               /**< dact_y's leading dimension */
    /** Math mode of this call; CLT_MATH_DEFAULT (zero) = the context's. It lives here, in the
     *  struct every GEMM call already takes and callers already zero-initialise, so the three
     *  GEMM calls gain it without a signature change; a value outside clt_math_mode:
     *  CLT_ERR_INVALID_ARGUMENT. */
    clt_math_mode math;
} clt_gemm_epilogue;

/** No bias, no activation, no residual, no activation backward. NULL is ignored. */
CLT_API void clt_gemm_epilogue_init(clt_gemm_epilogue *e);

/** One GEMM. epilogue may be NULL. */
CLT_API clt_status clt_gemm(clt_transpose ta, clt_transpose tb, int64_t m, int64_t n, int64_t k,
                            float alpha, const clt_tensor *a, int64_t a_offset, int64_t lda,
                            const clt_tensor *b, int64_t b_offset, int64_t ldb, float beta,
                            clt_tensor *c, int64_t c_offset, int64_t ldc,
                            const clt_gemm_epilogue *epilogue);

/** `batch` GEMMs with matrix i at offset + i * stride in each tensor (stride 0 shares a matrix,
 *  e.g. one weight for every batch; C's stride must not make C matrices overlap). */
CLT_API clt_status clt_gemm_strided_batched(clt_transpose ta, clt_transpose tb, int64_t m, int64_t n,
                                            int64_t k, float alpha, const clt_tensor *a,
                                            int64_t a_offset, int64_t lda, int64_t a_stride,
                                            const clt_tensor *b, int64_t b_offset, int64_t ldb,
                                            int64_t b_stride, float beta, clt_tensor *c,
                                            int64_t c_offset, int64_t ldc, int64_t c_stride,
                                            int64_t batch, const clt_gemm_epilogue *epilogue);

/** `batch` independent GEMMs of the same shape, each with its own tensors and offsets (arrays of
 *  length batch). The residual and dact_y of the epilogue, if any, are not supported here
 *  (CLT_ERR_UNSUPPORTED). */
CLT_API clt_status clt_gemm_batched(clt_transpose ta, clt_transpose tb, int64_t m, int64_t n,
                                    int64_t k, float alpha, const clt_tensor *const *a,
                                    const int64_t *a_offsets, int64_t lda,
                                    const clt_tensor *const *b, const int64_t *b_offsets,
                                    int64_t ldb, float beta, clt_tensor *const *c,
                                    const int64_t *c_offsets, int64_t ldc, int64_t batch,
                                    const clt_gemm_epilogue *epilogue);

/** out = a @ b for contiguous tensors: a [M, K] and b [K, N] give out [M, N]; a [B, M, K] with b
 *  [B, K, N] or [K, N] gives out [B, M, N]. */
CLT_API clt_status clt_matmul(const clt_tensor *a, const clt_tensor *b, clt_tensor *out);

/** clt_matmul with a math mode for this call (CLT_MATH_DEFAULT: the context's). a and b f32, f16
 *  or bf16 (the same), out f32 or their dtype. Statuses: those of clt_matmul, and
 *  CLT_ERR_INVALID_ARGUMENT for a math value outside clt_math_mode. */
CLT_API clt_status clt_matmul_math(const clt_tensor *a, const clt_tensor *b, clt_tensor *out,
                                   clt_math_mode math);

/** 1 when ctx's device has tensor cores that the TF32 / 3xTF32 modes and 16-bit inputs use
 *  (NVIDIA compute capability >= 8.0, read through cl_nv_device_attribute_query, on the native
 *  profile), else 0 (also for NULL). Never blocks. */
CLT_API int clt_device_has_tensor_cores(const clt_context *ctx);

#ifdef __cplusplus
}
#endif
#endif /* CLTENSOR_GEMM_H */
