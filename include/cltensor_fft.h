/**
 * @file
 * cltensor FFT: plans for batched 1-D, 2-D and 3-D discrete Fourier transforms (complex-to-complex,
 * real-to-complex, complex-to-real) and the Fourier-neural-operator channel mix. Enqueue-only like
 * every op; includes only cltensor.h.
 *
 * Layout and conventions (those of torch.fft / numpy.fft)
 *   - Complex data is CLT_C64 (interleaved float real, imaginary); real data is CLT_F32.
 *   - Forward uses exp(-2 pi i jk/n), inverse exp(+2 pi i jk/n).
 *   - R2C keeps the Hermitian half of the last transformed axis: n/2 + 1 outputs. C2R reads that half
 *     and produces n real values; it never changes its input. Input that is not a true Hermitian half
 *     (non-zero imaginary DC/Nyquist terms, asymmetric DC/Nyquist columns in 2-D/3-D) gives torch's
 *     result on our kernels only: clFFT and VkFFT treat those parts differently.
 *   - Normalisation: BACKWARD (default) scales the inverse by 1/N, FORWARD the forward by 1/N, ORTHO
 *     both by 1/sqrt(N), N the product of the transformed (real) lengths.
 *   - Strides and distances count elements of each side's dtype (complex elements on a C64 side, floats
 *     on an F32 side); they apply from the tensor's own first element. 0 means "contiguous": the
 *     innermost transformed axis has stride 1, each outer one the product of the inner lengths, and a
 *     batch follows the previous one.
 *   - In place: `in` and `out` may be the same memory (same tensor or a view of the same elements) for
 *     C2C; any other overlap is CLT_ERR_ALIASING. R2C/C2R are out-of-place only.
 *
 * Backends (CLT_FFT_IMPL or clt_fft_desc.impl: "ours", "clfft", "vkfft", "auto"): each plan is served by
 * one of them, chosen by a built-in table per device class (src/ops/fft/fft_table.c) when "auto"
 * (GPUs: VkFFT, else ours; CPUs: ours, but VkFFT for real 2-D/3-D transforms whose axes are at most
 * 8192 with prime factors up to 13; VkFFT only where it can serve). Ours on GPUs runs a pass of lengths
 * up to 2048 with prime factors up to 17 in one launch through local memory, others one launch per
 * radix stage;
 * clt_fft_plan_backend names the one in force. A forced backend that cannot serve a plan (clFFT: lengths
 * with a prime factor above 13; VkFFT: not built in) gives CLT_ERR_UNSUPPORTED.
 *
 * Plans are cached by the context: asking again for the same descriptor returns the same plan at the cost
 * of a table lookup. A plan belongs to the context and lives until the context is freed.
 */
#ifndef CLTENSOR_FFT_H
#define CLTENSOR_FFT_H

#include "cltensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What a plan transforms. */
typedef enum clt_fft_kind {
    CLT_FFT_C2C = 0, /**< complex to complex, either direction */
    CLT_FFT_R2C = 1, /**< real to the Hermitian half; always forward */
    CLT_FFT_C2R = 2  /**< Hermitian half to real; always inverse */
} clt_fft_kind;

/** The sign of the exponent. */
typedef enum clt_fft_direction {
    CLT_FFT_FORWARD = -1, /**< exp(-2 pi i jk/n) */
    CLT_FFT_INVERSE = 1   /**< exp(+2 pi i jk/n) */
} clt_fft_direction;

/** Which direction is scaled, as torch.fft's norm argument. */
typedef enum clt_fft_norm {
    CLT_FFT_NORM_BACKWARD = 0, /**< the inverse by 1/N (the default) */
    CLT_FFT_NORM_ORTHO = 1,    /**< both by 1/sqrt(N) */
    CLT_FFT_NORM_FORWARD = 2   /**< the forward by 1/N */
} clt_fft_norm;

/** The most axes one plan transforms. */
#define CLT_FFT_MAX_RANK 3

/** What a plan computes. Axis 0 of n/strides is the outermost transformed axis, rank-1 the innermost
 *  (for R2C/C2R the halved one). Fill with clt_fft_desc_init, then set what differs. */
typedef struct clt_fft_desc {
    clt_fft_kind kind;             /**< C2C, R2C or C2R */
    clt_fft_direction direction;   /**< C2C only; R2C is forward and C2R inverse whatever this says */
    clt_fft_norm norm;             /**< which direction is scaled */
    int rank;                      /**< transformed axes, 1..3 */
    int64_t n[CLT_FFT_MAX_RANK];   /**< logical lengths (the real length on the halved axis) */
    int64_t batch;                 /**< transforms, >= 1 */
    int64_t in_stride[CLT_FFT_MAX_RANK];  /**< input element strides; all 0 = contiguous */
    int64_t out_stride[CLT_FFT_MAX_RANK]; /**< output element strides; all 0 = contiguous */
    int64_t in_dist;               /**< elements between input batches; 0 = contiguous */
    int64_t out_dist;              /**< elements between output batches; 0 = contiguous */
    const char *impl;              /**< "ours", "clfft", "vkfft", "auto"; NULL = $CLT_FFT_IMPL, else auto */
} clt_fft_desc;

/** A plan: made and owned by a context (clt_fft_plan_get). */
typedef struct clt_fft_plan clt_fft_plan;

/** Defaults: C2C, forward, backward normalisation, rank 1, n 0, batch 1, contiguous, impl NULL. */
CLT_API void clt_fft_desc_init(clt_fft_desc *desc);

/** The plan for desc on ctx, from the context's plan cache or made now (kernels built or baked).
 *  Statuses: CLT_ERR_INVALID_ARGUMENT (NULL, bad kind/direction/norm/impl), CLT_ERR_INVALID_SHAPE (rank
 *  outside 1..3, a length or batch < 1, a negative stride or distance, some strides 0 and others not),
 *  CLT_ERR_SIZE_OVERFLOW, CLT_ERR_UNSUPPORTED (the forced backend cannot serve it), CLT_ERR_BUILD_FAILED.
 *  The plan is owned by the context (never free it). */
CLT_API clt_status clt_fft_plan_get(clt_context *ctx, const clt_fft_desc *desc, clt_fft_plan **out);

/** Enqueue the transform from `in` to `out`. C2C: both C64. R2C: in F32, out C64. C2R: in C64, out F32.
 *  Each tensor must hold every element the strides reach (else CLT_ERR_INVALID_SHAPE); wrong dtypes are
 *  CLT_ERR_INVALID_DTYPE; forbidden overlap CLT_ERR_ALIASING; different contexts
 *  CLT_ERR_CONTEXT_MISMATCH. Nothing is enqueued on error. */
CLT_API clt_status clt_fft_execute(const clt_fft_plan *plan, const clt_tensor *in, clt_tensor *out);

/** The backend serving plan: "ours", "clfft" or "vkfft". A library backend hands a call it cannot take
 *  to our kernels: clFFT tensors at an offset or in place, VkFFT in-place forward C2C. */
CLT_API const char *clt_fft_plan_backend(const clt_fft_plan *plan);

/** Convenience transforms over the trailing axes of contiguous tensors (every leading axis is a batch),
 *  through cached plans. Shapes as torch.fft with s = the transformed sizes of `out` (fft, ifft, fft2,
 *  fftn: out has in's shape; rfft: last axis n -> n/2+1; irfft: `out`'s last axis gives n, in's must be
 *  n/2+1). This one: torch.fft.fft over the last axis (C64 -> C64). */
CLT_API clt_status clt_fft(const clt_tensor *in, clt_tensor *out, clt_fft_norm norm);
/** torch.fft.ifft over the last axis (C64 -> C64). */
CLT_API clt_status clt_ifft(const clt_tensor *in, clt_tensor *out, clt_fft_norm norm);
/** torch.fft.rfft over the last axis (F32 n -> C64 n/2+1). */
CLT_API clt_status clt_rfft(const clt_tensor *in, clt_tensor *out, clt_fft_norm norm);
/** torch.fft.irfft over the last axis (C64 n/2+1 -> F32 n, n from out). */
CLT_API clt_status clt_irfft(const clt_tensor *in, clt_tensor *out, clt_fft_norm norm);
/** torch.fft.fft2 over the last two axes (C64 -> C64). */
CLT_API clt_status clt_fft2(const clt_tensor *in, clt_tensor *out, clt_fft_norm norm);
/** torch.fft.rfft2 over the last two axes (F32 -> C64, last axis halved). */
CLT_API clt_status clt_rfft2(const clt_tensor *in, clt_tensor *out, clt_fft_norm norm);
/** torch.fft.irfft2 over the last two axes (C64 -> F32, sizes from out). */
CLT_API clt_status clt_irfft2(const clt_tensor *in, clt_tensor *out, clt_fft_norm norm);
/** torch.fft.fftn / ifftn (by dir) over the last `rank` axes (1..3), C64 -> C64. */
CLT_API clt_status clt_fftn(const clt_tensor *in, clt_tensor *out, int rank, clt_fft_direction dir,
                            clt_fft_norm norm);

/* ------------------------------------------------------------------ FNO */

/** The spectral channel mix of a Fourier neural operator layer, on the rfft2 spectrum:
 *    out[b,o,h,k] = sum_i x[b,i,h,k] * w[c,i,o,hm,k]   for k < m2 and h in a retained corner,
 *  corner c = 0 for rows h < m1 (hm = h), c = 1 for rows h >= H - m1 (hm = h - (H - m1)); every other
 *  out element is 0 (the reference FNO's out_ft). x: C64 [B, I, H, Wf], w: C64 [2, I, O, m1, m2],
 *  out: C64 [B, O, H, Wf], with 2*m1 <= H and m2 <= Wf (else CLT_ERR_INVALID_SHAPE). out may not overlap
 *  x or w (CLT_ERR_ALIASING). */
CLT_API clt_status clt_spectral_mix(const clt_tensor *x, const clt_tensor *w, clt_tensor *out);

/** Gradients of clt_spectral_mix (PyTorch's complex convention: conjugate Wirtinger), given dout of
 *  out's shape: dx[b,i,h,k] = sum_o dout[b,o,h,k] * conj(w[c,i,o,hm,k]) in the corners, 0 elsewhere;
 *  dw[c,i,o,hm,k] = sum_b conj(x[b,i,h,k]) * dout[b,o,h,k]. Either of dx, dw may be NULL (not wanted).
 *  Both are overwritten, not accumulated. */
CLT_API clt_status clt_spectral_mix_backward(const clt_tensor *x, const clt_tensor *w,
                                             const clt_tensor *dout, clt_tensor *dx, clt_tensor *dw);

#ifdef __cplusplus
}
#endif

#endif /* CLTENSOR_FFT_H */
