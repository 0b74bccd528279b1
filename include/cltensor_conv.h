/**
 * @file
 * cltensor Conv2D and 2-D pooling, NCHW f32. Included by cltensor.h. Every call only enqueues and
 * writes into caller-provided tensors.
 *
 * Geometry (conv and pooling alike), for an input of height H and a (dilated) window of Kh:
 *     Ho = (H + pad_top + pad_bottom - dilation_h * (Kh - 1) - 1) / stride_h + 1     (floor)
 * and the same for the width. Ho or Wo < 1 is CLT_ERR_INVALID_SHAPE.
 *
 * Common rules
 *   - Tensors are contiguous f32 (else CLT_ERR_INVALID_DTYPE), 4-D as stated per call (else
 *     CLT_ERR_INVALID_SHAPE; the message gives expected and actual shape) and of one context
 *     (CLT_ERR_CONTEXT_MISMATCH). NULL tensors or params: CLT_ERR_INVALID_ARGUMENT.
 *   - Strides and dilations >= 1, paddings >= 0, groups >= 1 dividing both channel counts
 *     (CLT_ERR_INVALID_ARGUMENT otherwise).
 *   - Outputs may not overlap any input (CLT_ERR_ALIASING).
 *   - Ci = 0 (no input channels) is CLT_ERR_INVALID_SHAPE; any dimension of x, w (or a pooling
 *     input) above INT32_MAX is CLT_ERR_SIZE_OVERFLOW (the kernels index in i32).
 *   - N = 0 (an empty batch) is valid: nothing is enqueued (except for the backward sums over the
 *     batch, dw and dbias, which are then set to zeros).
 *   - On any error nothing is enqueued and no tensor changes; clt_last_error(ctx) says why.
 */
#ifndef CLTENSOR_CONV_H
#define CLTENSOR_CONV_H

#include "cltensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ Conv2D */

/** The geometry of a 2-D convolution (see the formula above). Initialise with
 *  clt_conv2d_params_init. */
typedef struct clt_conv2d_params {
    int32_t stride_h;   /**< vertical stride, >= 1 */
    int32_t stride_w;   /**< horizontal stride, >= 1 */
    int32_t pad_top;    /**< zero rows above the input, >= 0 */
    int32_t pad_bottom; /**< zero rows below, >= 0 */
    int32_t pad_left;   /**< zero columns left, >= 0 */
    int32_t pad_right;  /**< zero columns right, >= 0 */
    int32_t dilation_h; /**< vertical spacing of the kernel taps, >= 1 */
    int32_t dilation_w; /**< horizontal spacing of the kernel taps, >= 1 */
    int32_t groups; /**< 1 = dense; Ci = Co = groups = depthwise */
    /** Math mode of this call (forward and both backward passes); CLT_MATH_DEFAULT (zero, what
     *  clt_conv2d_params_init sets) = the context's (clt_context_set_math_mode, $CLT_MATH). In the
     *  params because every Conv2D call already takes them. A value outside clt_math_mode:
     *  CLT_ERR_INVALID_ARGUMENT. On NVIDIA GPUs with tensor cores (compute capability >= 8.0) 1x1
     *  convolutions that run as a GEMM pass the mode on (TF32 / 3xTF32 there); on Hopper (sm_90) TF32
     *  forward passes with Ci near a multiple of 32 (at most a quarter of padding channels) and a grid
     *  of at least half a tile per SM run on wgmma; other forward passes, the backward passes and every
     *  other device run the exact fp32 kernels under every mode (an mma.sync forward exists behind
     *  CLT_CONV_MMA=1: slower than the fp32 kernels on most shapes so far, README). */
    clt_math_mode math;
} clt_conv2d_params;

/** Stride 1, no padding, dilation 1, groups 1. NULL is ignored. */
CLT_API void clt_conv2d_params_init(clt_conv2d_params *p);

/** The output shape [N, Co, Ho, Wo] of x [N, Ci, H, W] and w [Co, Ci / groups, Kh, Kw], with the
 *  checks of clt_conv2d (other than the tensors themselves). Needs no context; a failure is
 *  reported by clt_last_error(NULL). */
CLT_API clt_status clt_conv2d_output_shape(const int64_t x_shape[4], const int64_t w_shape[4],
                                           const clt_conv2d_params *p, int64_t out_shape[4]);

/** out = act(conv(x, w) + bias): x [N, Ci, H, W], w [Co, Ci / groups, Kh, Kw], bias [Co] or NULL,
 *  out [N, Co, Ho, Wo]. activation is one of the GEMM epilogue set (CLT_IDENTITY, CLT_RELU,
 *  CLT_GELU_ERF, CLT_GELU_TANH, CLT_TANH, CLT_SIGMOID, CLT_SILU; others CLT_ERR_UNSUPPORTED).
 *  Dtypes: x and w f32, or both f16 or both bf16 (then converted to f32 copies, exactly, first; their
 *  products are exact in TF32, so such calls run in TF32 math whatever the mode, with fp32 sums); out
 *  f32 or the inputs' 16-bit type (the f32 result rounded once, nearest even, as clt_cast); bias f32.
 *  Others: CLT_ERR_INVALID_DTYPE, nothing enqueued. The backward passes take the same types (dy and
 *  their other input of one type, the gradient f32 or that type), on the fp32 kernels.
 *  Implementation: ours (implicit GEMM, a GEMM for 1x1, a direct kernel for depthwise) or im2col +
 *  CLBlast, by CLT_CONV_IMPL / clt_context_options.conv_impl or, under "auto", by shape and device. */
CLT_API clt_status clt_conv2d(const clt_tensor *x, const clt_tensor *w, const clt_tensor *bias,
                              const clt_conv2d_params *p, clt_unary_op activation,
                              float activation_alpha, clt_tensor *out);

/** dx = the gradient of the loss with respect to x, from dy [N, Co, Ho, Wo] (the gradient at the
 *  convolution's output, i.e. after the caller has applied the activation's backward) and w.
 *  dx [N, Ci, H, W] is overwritten. */
CLT_API clt_status clt_conv2d_backward_input(const clt_tensor *dy, const clt_tensor *w,
                                             const clt_conv2d_params *p, clt_tensor *dx);

/** dw [Co, Ci / groups, Kh, Kw] = the gradient with respect to w, from dy and x; overwritten
 *  (zeros when N = 0). */
CLT_API clt_status clt_conv2d_backward_weight(const clt_tensor *dy, const clt_tensor *x,
                                              const clt_conv2d_params *p, clt_tensor *dw);

/** dbias [Co] = the sum of dy [N, Co, Ho, Wo] over N, Ho, Wo; overwritten (zeros when N = 0).
 *  dy must be 4-D f32 and dbias 1-D f32 of length Co. */
CLT_API clt_status clt_conv2d_backward_bias(const clt_tensor *dy, clt_tensor *dbias);

/* ------------------------------------------------------------ pooling */

/** The window of a 2-D pooling (no dilation). Initialise with clt_pool2d_params_init. */
typedef struct clt_pool2d_params {
    int32_t kernel_h;   /**< window height, >= 1 */
    int32_t kernel_w;   /**< window width, >= 1 */
    int32_t stride_h;   /**< >= 1 */
    int32_t stride_w;   /**< >= 1 */
    int32_t pad_top;    /**< >= 0 and < kernel_h */
    int32_t pad_bottom; /**< >= 0 and < kernel_h */
    int32_t pad_left;   /**< >= 0 and < kernel_w */
    int32_t pad_right;  /**< >= 0 and < kernel_w */
} clt_pool2d_params;

/** kernel k x k, stride k, no padding. NULL is ignored. */
CLT_API void clt_pool2d_params_init(clt_pool2d_params *p, int32_t k);

/** The output shape [N, C, Ho, Wo] of x [N, C, H, W], with the checks of the pooling calls (other
 *  than the tensors themselves). Needs no context; a failure is reported by clt_last_error(NULL). */
CLT_API clt_status clt_pool2d_output_shape(const int64_t x_shape[4], const clt_pool2d_params *p,
                                           int64_t out_shape[4]);

/** Max pooling: out [N, C, Ho, Wo] = max over each window (padding never wins; a NaN in the window
 *  gives NaN). indices, if not NULL, is an i32 tensor of out's shape that receives the flat
 *  position h * W + w of the maximum inside its (n, c) plane (the first one on ties). */
CLT_API clt_status clt_max_pool2d(const clt_tensor *x, const clt_pool2d_params *p, clt_tensor *out,
                                  clt_tensor *indices);

/** dx [N, C, H, W] = the gradient of max pooling: each dy element goes to its window's maximum.
 *  With indices (from clt_max_pool2d) the maxima are not recomputed and x may be NULL; without,
 *  they are recomputed from x. dx is overwritten. */
CLT_API clt_status clt_max_pool2d_backward(const clt_tensor *dy, const clt_tensor *x,
                                           const clt_tensor *indices, const clt_pool2d_params *p,
                                           clt_tensor *dx);

/** Average pooling. count_include_pad != 0 divides by kernel_h * kernel_w; 0 divides by the
 *  number of window elements inside the input. */
CLT_API clt_status clt_avg_pool2d(const clt_tensor *x, const clt_pool2d_params *p,
                                  int count_include_pad, clt_tensor *out);

/** dx [N, C, H, W] of average pooling (same p and count_include_pad); overwritten. */
CLT_API clt_status clt_avg_pool2d_backward(const clt_tensor *dy, const clt_pool2d_params *p,
                                           int count_include_pad, clt_tensor *dx);

/** Global average pooling: x [N, C, H, W] -> out [N, C, 1, 1] (or [N, C]). */
CLT_API clt_status clt_global_avg_pool2d(const clt_tensor *x, clt_tensor *out);

/** dx [N, C, H, W] = dy [N, C, 1, 1] (or [N, C]) / (H * W), broadcast over each plane. */
CLT_API clt_status clt_global_avg_pool2d_backward(const clt_tensor *dy, clt_tensor *dx);

#ifdef __cplusplus
}
#endif
#endif /* CLTENSOR_CONV_H */
