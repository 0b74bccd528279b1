/**
 * @file
 * cltensor indexing ops: embedding lookup and its backward, gather / scatter(-add) along an axis,
 * index_select and index_add, masked_fill, one_hot, topk over the last axis.
 * (clt_where with broadcasting and clt_argmax along any axis are in cltensor_ops.h.)
 *
 * Common rules
 *   - Indices are CLT_I32 tensors; data is f32 (gather/scatter/index_select also move i32).
 *   - Outputs are caller-provided with exactly the documented shape (else CLT_ERR_INVALID_SHAPE) and
 *     may not overlap an input (CLT_ERR_ALIASING), except where an op accumulates into its output.
 *   - Indices live on the device, so they cannot be checked when the call is made. Out-of-range
 *     indices (< 0 or >= the indexed dim) never read or write outside a buffer: a lookup (embedding,
 *     gather, index_select) writes 0 for them, a scatter or backward skips them, one_hot writes an
 *     all-zero row. Negative indices are out of range (no wrap-around).
 *   - One kernel launch per call, except where a doc says two. Empty tensors enqueue nothing.
 *   - Only enqueues; on any error nothing is enqueued, nothing changes and clt_last_error(ctx)
 *     names the call.
 */
#ifndef CLTENSOR_INDEX_H
#define CLTENSOR_INDEX_H

#include "cltensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out[..., :] = weight[ids[...], :]: ids any shape S (i32), weight [V, D] f32, out S + [D]. */
CLT_API clt_status clt_embedding(const clt_tensor *ids, const clt_tensor *weight, clt_tensor *out);

/** How clt_embedding_backward sums rows that several tokens share. */
typedef enum clt_embedding_grad_mode {
    /** Float atomics: fast, but the summation order (and so the last bits) may vary run to run. */
    CLT_EMBEDDING_GRAD_ATOMIC = 0,
    /** Each dw element is summed by one work item over its tokens in ascending token order:
     *  bit-identical on every run, grid and device. Reads every id once per dw element on GPUs
     *  (once per dw row on CPUs): meant for vocabularies up to a few tens of thousands. */
    CLT_EMBEDDING_GRAD_DETERMINISTIC = 1
} clt_embedding_grad_mode;

/** dweight = (accumulate ? dweight : 0) + scatter-add of dy rows onto their ids' rows.
 *  ids S (i32), dy S + [D], dweight [V, D] f32. ATOMIC without accumulate is two launches (zero
 *  fill, then the scatter). */
CLT_API clt_status clt_embedding_backward(const clt_tensor *ids, const clt_tensor *dy,
                                          clt_embedding_grad_mode mode, int accumulate,
                                          clt_tensor *dweight);

/** out[i] = x[i with coordinate `axis` replaced by index[i]] (torch.gather). index and out have one
 *  shape, x the same ndim with index.shape[d] <= x.shape[d] for d != axis. x, out f32 or i32. */
CLT_API clt_status clt_gather(const clt_tensor *x, int axis, const clt_tensor *index, clt_tensor *out);
/** out[i with coordinate axis replaced by index[i]] += src[i] (torch.scatter_add_; the backward of
 *  clt_gather into zeros). f32; float atomics, so the order of the additions may vary. index and
 *  src have one shape, out the same ndim with index.shape[d] <= out.shape[d] for d != axis. */
CLT_API clt_status clt_scatter_add(clt_tensor *out, int axis, const clt_tensor *index,
                                   const clt_tensor *src);
/** out[i with coordinate axis replaced by index[i]] = src[i] (torch.scatter_); where two indices
 *  name one element, which write wins is unspecified. f32 or i32. Same shapes as clt_scatter_add. */
CLT_API clt_status clt_scatter(clt_tensor *out, int axis, const clt_tensor *index,
                               const clt_tensor *src);

/** out = x with axis `axis` indexed by the 1-D index: out.shape = x.shape with shape[axis] =
 *  len(index); out[..., j, ...] = x[..., index[j], ...]. f32 or i32. */
CLT_API clt_status clt_index_select(const clt_tensor *x, int axis, const clt_tensor *index,
                                    clt_tensor *out);
/** out[..., index[j], ...] += src[..., j, ...] (the backward of clt_index_select). f32, atomics. */
CLT_API clt_status clt_index_add(clt_tensor *out, int axis, const clt_tensor *index,
                                 const clt_tensor *src);

/** out = mask != 0 ? value : x, mask (f32 or i32) broadcasting to x's shape (NumPy rules), out of
 *  x's shape. out may be x itself (in place). x f32. Backward: dx = clt_masked_fill(dy, mask, 0). */
CLT_API clt_status clt_masked_fill(const clt_tensor *x, const clt_tensor *mask, float value,
                                   clt_tensor *out);

/** out[..., c] = (ids[...] == c) ? 1 : 0: ids shape S (i32), out S + [num_classes] f32. */
CLT_API clt_status clt_one_hot(const clt_tensor *ids, clt_tensor *out);

/** The k largest elements of each row of x (last axis), in descending order: values [..., k] f32
 *  and indices [..., k] i32 (either may be NULL, not both). 1 <= k <= n (k up to n; the
 *  selection makes k passes over the row in local memory, so it is meant for k <= a few hundred).
 *  Order: by value descending, equal values by ascending index; NaN above every number; -0.0 equals
 *  +0.0. */
CLT_API clt_status clt_topk(const clt_tensor *x, int k, clt_tensor *values, clt_tensor *indices);

#ifdef __cplusplus
}
#endif

#endif /* CLTENSOR_INDEX_H */
