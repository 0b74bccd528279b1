/**
 * @file
 * cltensor layout ops: permute, slice (with steps), concat, stack, split, pad, broadcast_to, and
 * copies of strided views, each with its backward where it has one.
 *
 * Common rules
 *   - Element types: any 4-byte dtype (CLT_F32, CLT_I32); the data is moved, never computed, except
 *     by the backward passes that sum (clt_broadcast_backward, clt_pad_backward with
 *     CLT_PAD_REFLECT), which take f32. Inputs and outputs have the same dtype, else
 *     CLT_ERR_INVALID_DTYPE.
 *   - Outputs are caller-provided contiguous tensors of exactly the documented shape (else
 *     CLT_ERR_INVALID_SHAPE, the message gives both shapes). An output may not share memory with an
 *     input (CLT_ERR_ALIASING).
 *   - Axes are 0 .. ndim-1 (negative axes count from the end, as in NumPy); any other value is
 *     CLT_ERR_INVALID_AXIS.
 *   - Every op is one kernel launch, except clt_concat / clt_stack / clt_split / clt_unstack: on
 *     GPUs one launch per 4 non-empty pieces, on CPU devices one per piece. Empty tensors are valid
 *     and enqueue nothing.
 *   - Only enqueues; on any error nothing is enqueued, nothing changes and clt_last_error(ctx) names
 *     the call.
 */
#ifndef CLTENSOR_LAYOUT_H
#define CLTENSOR_LAYOUT_H

#include "cltensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A strided view over a tensor's memory (not a tensor: nothing is allocated, nothing is kept).
 *  Element (i_0, ..., i_{ndim-1}) is at `offset + sum(i_d * strides[d])` elements past the first
 *  element of `base`. Strides are in elements and >= 0 (0 repeats an element: a broadcast).
 *  Every element the view reaches must lie inside `base` (else CLT_ERR_INVALID_SHAPE). */
typedef struct clt_strided_view {
    const clt_tensor *base;          /**< the tensor whose memory is viewed (4-byte dtype) */
    int64_t offset;                  /**< elements from base's first element, >= 0 */
    int ndim;                        /**< 0 .. CLT_MAX_DIMS */
    int64_t shape[CLT_MAX_DIMS];     /**< dims >= 0 */
    int64_t strides[CLT_MAX_DIMS];   /**< elements, >= 0 */
} clt_strided_view;

/** out = the elements of a strided view, contiguous (row-major). out has the view's shape and
 *  base's dtype. CLT_ERR_INVALID_ARGUMENT (NULL view or base, negative offset or stride),
 *  CLT_ERR_INVALID_SHAPE (view reaches past base, out's shape). */
CLT_API clt_status clt_copy_strided(const clt_strided_view *view, clt_tensor *out);

/** out = x with its axes reordered: out.shape[i] = x.shape[perm[i]]. perm is a permutation of
 *  0 .. ndim-1 (else CLT_ERR_INVALID_AXIS). Moving the last axis uses a tiled local-memory
 *  transpose on GPUs. The backward of permute is the permute by the inverse permutation. */
CLT_API clt_status clt_permute(const clt_tensor *x, const int *perm, clt_tensor *out);

/** out = x[start_0 :: step_0, start_1 :: step_1, ...] with out.shape[d] elements along each axis:
 *  out[i] = x[start + i * step] per axis. start[d] >= 0, step[d] >= 1, and the last element taken,
 *  start[d] + (out.shape[d] - 1) * step[d], must be < x.shape[d] (an axis where out.shape[d] is 0
 *  takes nothing and needs only start <= x.shape[d]); else CLT_ERR_INVALID_ARGUMENT. out has x's
 *  ndim. step may be NULL (all 1). */
CLT_API clt_status clt_slice(const clt_tensor *x, const int64_t *start, const int64_t *step,
                             clt_tensor *out);
/** Backward of clt_slice: dx = zeros of x's shape with dy scattered to the sliced positions
 *  (every element of dx is written, in one launch). dy, dx: f32 or i32; same rules on start/step. */
CLT_API clt_status clt_slice_backward(const clt_tensor *dy, const int64_t *start,
                                      const int64_t *step, clt_tensor *dx);

/** out = xs[0], ..., xs[n-1] joined along `axis`: all have out's ndim, equal dims except along
 *  axis, where out's dim is their sum. n >= 1 (else CLT_ERR_INVALID_ARGUMENT). Its backward is
 *  clt_split. */
CLT_API clt_status clt_concat(int n, const clt_tensor *const *xs, int axis, clt_tensor *out);
/** The inverse of clt_concat: outs[i] = the consecutive pieces of x along axis (their dims along
 *  axis sum to x's). */
CLT_API clt_status clt_split(const clt_tensor *x, int axis, int n, clt_tensor *const *outs);
/** out = xs stacked along a new axis `axis` (0 .. ndim of the inputs): all inputs have one shape,
 *  out has it with n inserted at axis. Its backward is clt_unstack. */
CLT_API clt_status clt_stack(int n, const clt_tensor *const *xs, int axis, clt_tensor *out);
/** The inverse of clt_stack: outs[i] = x[..., i, ...] along axis (x.shape[axis] == n). */
CLT_API clt_status clt_unstack(const clt_tensor *x, int axis, int n, clt_tensor *const *outs);

/** How clt_pad fills the border. */
typedef enum clt_pad_mode {
    CLT_PAD_CONSTANT = 0, /**< the value given */
    CLT_PAD_REFLECT = 1   /**< mirrored about the edge element, which is not repeated (NumPy
                               "reflect"): needs pad < dim on each padded side */
} clt_pad_mode;

/** out = x padded by before[d] elements in front of and after[d] behind each axis d (both arrays of
 *  x's ndim, values >= 0; NULL means all 0). out.shape[d] = before[d] + x.shape[d] + after[d].
 *  CONSTANT fills with value (i32 tensors get (int32_t)value); REFLECT ignores value and needs
 *  before[d], after[d] < x.shape[d] on every axis that is padded (else CLT_ERR_INVALID_ARGUMENT).
 *  A padded empty axis is CLT_ERR_INVALID_SHAPE for REFLECT. */
CLT_API clt_status clt_pad(const clt_tensor *x, const int64_t *before, const int64_t *after,
                           clt_pad_mode mode, float value, clt_tensor *out);
/** Backward of clt_pad: dx[i] = the sum of dy over every out position that read x[i]
 *  (CONSTANT: the interior window; REFLECT: up to 3 positions per axis). f32 for REFLECT. */
CLT_API clt_status clt_pad_backward(const clt_tensor *dy, const int64_t *before,
                                    const int64_t *after, clt_pad_mode mode, clt_tensor *dx);

/** out = x broadcast to out's shape (NumPy rules: shapes aligned at the last axis, each x dim 1 or
 *  equal; out.ndim >= x.ndim), materialised. */
CLT_API clt_status clt_broadcast_to(const clt_tensor *x, clt_tensor *out);
/** Backward of clt_broadcast_to: dx = dy summed over the axes that were broadcast (dx has x's
 *  shape, dy out's). f32. One launch; each dx element sums its terms in a fixed order (so the
 *  result does not depend on the device or the grid). */
CLT_API clt_status clt_broadcast_backward(const clt_tensor *dy, clt_tensor *dx);

#ifdef __cplusplus
}
#endif

#endif /* CLTENSOR_LAYOUT_H */
