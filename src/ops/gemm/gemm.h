/* GEMM internals: the validated problem every implementation receives, and the implementations.
 * Validation (shapes, bounds, aliasing, contexts) is done once, in gemm_api.c, before any of these run. */
#ifndef CLT_GEMM_H
#define CLT_GEMM_H

#include "cltensor_gemm.h"
#include "runtime/runtime.h"

/* One validated, possibly strided-batched GEMM. Offsets, leading dimensions and strides are in
 * elements; a buffer of NULL means "not used" (bias, residual). */
typedef struct clt__gemm_problem {
    clt_transpose ta, tb;
    int64_t m, n, k;
    float alpha, beta;
    cl_mem a, b, c;
    uint64_t a_off, b_off, c_off;
    int64_t lda, ldb, ldc;
    int64_t a_stride, b_stride, c_stride, batch; /* batch >= 1; strides 0 when batch == 1 */
    /* A's k in segments (0: one run): k in [s * a_kseg, (s + 1) * a_kseg) lives a_kseg_stride
     * elements after segment s - 1, as if contiguous there (a batch's images along k: grad-weight
     * with A = dy, no copy). Only our tiled kernel takes it (split per segment); else UNSUPPORTED. */
    int64_t a_kseg, a_kseg_stride;
    cl_mem bias;
    uint64_t bias_off;
    clt_bias_mode bias_mode;
    clt_unary_op act; /* CLT_IDENTITY: none */
    float act_alpha;
    cl_mem residual;
    uint64_t residual_off;
    int64_t ldr;
    /* Activation backward: 0 none, else CLT__GEMM_DACT_*; the residual slot (buffer, offset,
     * ldr) then holds y and the result is multiplied by dact'(y) instead of adding it. */
    int dact;
    /* Operand storage types: a_dtype == b_dtype, one of CLT_F32, CLT_F16, CLT_BF16; c_dtype is
     * CLT_F32 or a_dtype. Offsets, strides and leading dimensions above count elements of each
     * operand's own dtype. bias and residual / dact_y are always f32. */
    clt_dtype a_dtype, b_dtype, c_dtype;
    /* The resolved math mode (the call's, else the context's): CLT_MATH_FP32, CLT_MATH_TF32 or
     * CLT_MATH_FP32_3XTF32, never CLT_MATH_DEFAULT. With 16-bit inputs every mode gives the same
     * products (f16 and bf16 values are exact in TF32). */
    clt_math_mode math;
} clt__gemm_problem;

/* Whether a matrix's start (off), rows (ld) and batches (stride), all in elements, fall on multiples of
 * n elements: what vector loads (tiled) and 16-byte copies (tensor cores) need. */
static inline int clt__gemm_aligned(uint64_t off, int64_t ld, int64_t stride, int n)
{
    return off % (uint64_t)n == 0 && ld % n == 0 && stride % n == 0;
}

/* The kernels' IN16 / OUT16 code of a storage dtype (cl_kernels/common/gemm_common.h): 0 f32, 1 f16,
 * 2 bf16. */
static inline int clt__gemm_dtype_code(clt_dtype d)
{
    return d == CLT_F16 ? 1 : d == CLT_BF16 ? 2 : 0;
}

/* Whether p needs the portable kernels' 16-bit load/store variants (f16/bf16 A, B or C). */
static inline int clt__gemm_is_16bit(const clt__gemm_problem *p)
{
    /* internal callers (conv) zero-initialise: dtype 0 means f32 */
    return p->a_dtype == CLT_F16 || p->a_dtype == CLT_BF16 || p->c_dtype == CLT_F16 ||
           p->c_dtype == CLT_BF16;
}

/* dact codes, shared with the kernels (gemm_common.h: flag bits 7-8; gemm_epilogue.cl: mode
 * bits 4-5). */
#define CLT__GEMM_DACT_TANH 1
#define CLT__GEMM_DACT_SIGMOID 2
#define CLT__GEMM_DACT_RELU 3

/* The dact code of an op, 0 when the epilogue has no y-based derivative for it (gemm_check.c). */
int clt__gemm_dact_code(clt_unary_op op);

/* The device function of an activation in the fused-epilogue set (cl_kernels/common/activations.h:
 * "" for identity, "clt_act_relu", ...), NULL for ops outside the set (gemm_epilogue.c). GEMM and
 * Conv2D fuse exactly this set. */
const char *clt__epilogue_act_name(clt_unary_op op);

/* Our kernels (gemm_tiled.c, cl_kernels/gemm*.cl): tiled, small/direct and GEMV paths, epilogue
 * fused. One launch. CLT_ERR_UNSUPPORTED if no variant fits the device (the caller falls back). */
clt_status clt__gemm_tiled(clt_context *ctx, const clt__gemm_problem *p, const char *who);
/* alpha = 0 with k > 0: *q = p with k = 0 (C = act(beta * C + bias) + residual, A and B never
 * read, so NaN or Inf there cannot reach C, as BLAS defines it); returns 1 then, else 0. */
static inline int clt__gemm_alpha_zero(const clt__gemm_problem *p, clt__gemm_problem *q)
{
    if (p->alpha != 0.0f || p->k == 0)
        return 0;
    *q = *p;
    q->k = 0;
    q->a_kseg = 0;
    return 1;
}

/* Shared by the hosts of our kernels (gemm_tiled.c, gemm_mma.c), whose kernels take GEMM_ARGS of
 * cl_kernels/common/gemm_common.h: whether a matrix spans 2^31 elements (-DIDX64), the run-time
 * flags (vector alignment, bias, residual, dact), and arguments 0-9. */
int clt__gemm_needs_idx64(const clt__gemm_problem *p);
cl_uint clt__gemm_kernel_flags(const clt__gemm_problem *p);
clt_status clt__gemm_set_args(clt_context *ctx, cl_kernel k, const clt__gemm_problem *p, cl_uint flags,
                              const char *who);

/* Tensor-core GEMM (gemm_mma.c): NVIDIA mma.sync kernels for p->math TF32 / 3xTF32 and f16 / bf16
 * inputs. CLT_ERR_UNSUPPORTED (with a message, nothing enqueued) when the device has none or p does
 * not fit; the caller then runs the fp32 kernels. */
clt_status clt__gemm_mma(clt_context *ctx, const clt__gemm_problem *p, const char *who);
/* TF32 GEMM through wgmma (gemm_wgmma.c) on sm_90 devices: CLT_ERR_UNSUPPORTED (nothing enqueued)
 * unless f32 operands in TF32 math of at least 2048^3 (CLT_GEMM_WGMMA=1: any size, =0: never). */
clt_status clt__gemm_wgmma(clt_context *ctx, const clt__gemm_problem *p, const char *who);
/* One operand of the wgmma kernels packed (gemm_wgmma_pack.cl): rows x k of op(X) (X at element off, batch
 * stride, leading dimension ld, trans: X holds op(X)^T) -> dst from element dst_off as [batch][rows_p][segs kp],
 * zero-padded, f32 rounded to TF32 (bit s of lo_mask: segment s the residual), 16-bit values (in16, the IN16
 * code) copied; tiled_bk > 0: in gemm_wgmma_bulk.cl's swizzled slices of tiled_bk elements. rows_p a multiple
 * of 128 (64 untiled), kp of 32 and of tiled_bk, dst_off of 16 bytes. Enqueues one kernel; the caller checks
 * the sizes. */
typedef struct clt__wgmma_pack {
    int in16, tiled_bk;
    cl_mem x;
    uint64_t off;
    int64_t stride, ld;
    int trans;
    int64_t rows, k;
    cl_mem dst;
    uint64_t dst_off;
    int64_t rows_p, kp;
    int segs, lo_mask;
    int64_t batch;
} clt__wgmma_pack;
clt_status clt__gemm_wgmma_pack(clt_context *ctx, const clt__wgmma_pack *a, const char *who);
/* NVIDIA compute capability >= 8.0 (cl_nv_device_attribute_query) on the native profile, else 0. */
int clt__device_has_tensor_cores(const clt_context *ctx);
/* NVIDIA compute capability as 10 * major + minor (90: Hopper, sm_90a code runs), 0 elsewhere. */
int clt__device_nv_sm(const clt_context *ctx);

/* CLBlast (gemm_clblast.c): CLBlastSgemm / CLBlastSgemmStridedBatched, then the epilogue as one
 * extra launch when there is one. CLT_ERR_UNSUPPORTED when CLBlast refuses the problem or the
 * device (the caller falls back to ours). */
clt_status clt__gemm_clblast(clt_context *ctx, const clt__gemm_problem *p, const char *who);

#endif
