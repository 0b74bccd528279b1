/**
 * @file
 * cltensor on several devices in one process: a context per device (clt_context_create with
 * opts.device = "0", "1", ...; clt_device_count lists them) and moving tensors between contexts.
 *
 * Two contexts share one OpenCL context when they are on the same device and created by
 * clt_context_create (cltensor keeps one cl_context per device), or when they adopt the same
 * application cl_context (clt_context_create_from_cl). Between those, a tensor moves with one
 * device copy. Between contexts of different OpenCL contexts (two devices, or an application's own
 * cl_context) it moves through pinned host memory in chunks: device -> host on the source's queue,
 * host -> device on the destination's, the chunks overlapping, each step started by an event of
 * the previous one (user events set from completion callbacks). Neither way blocks the caller.
 */
#ifndef CLTENSOR_MULTI_H
#define CLTENSOR_MULTI_H

#include "cltensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Bytes of one pinned chunk of a staged clt_tensor_transfer (at most 4 chunks are in flight). */
#define CLT_TRANSFER_CHUNK_BYTES ((size_t)8 << 20)

/** dst = src where dst and src may belong to different contexts (any devices). Same dtype and
 *  element count (shapes may differ). Within one context this is clt_tensor_copy.
 *
 *  Ordering: the copy starts after the work enqueued so far on src's context, and work enqueued
 *  later on dst's context sees the copied data (the in-order queue of dst runs it after the copy).
 *  Work enqueued later on src's context waits until the copy has landed (so src may be
 *  overwritten or freed at once). Only enqueues: it never waits for either device. Execution
 *  errors surface at the next blocking call on dst's context (and, for a failed read, on src's).
 *
 *  Statuses: CLT_ERR_INVALID_ARGUMENT (NULL), CLT_ERR_INVALID_DTYPE (dtypes differ),
 *  CLT_ERR_INVALID_SHAPE (element counts differ), CLT_ERR_ALIASING (dst and src partly overlap in
 *  one buffer), CLT_ERR_OUT_OF_HOST_MEMORY, CLT_ERR_OPENCL (messages recorded on dst's context).
 *  On failure nothing is enqueued. Empty tensors: nothing to do. Each context must be used by one
 *  thread at a time (the calling thread holds both during the call). */
CLT_API clt_status clt_tensor_transfer(clt_tensor *dst, const clt_tensor *src);

/** How clt_tensor_transfer would move data from src_ctx to dst_ctx: 0 the same context,
 *  1 a device copy (one OpenCL context), 2 staged through pinned host memory; -1 for NULL. Never
 *  blocks. */
CLT_API int clt_transfer_route(const clt_context *dst_ctx, const clt_context *src_ctx);

#ifdef __cplusplus
}
#endif
#endif /* CLTENSOR_MULTI_H */
