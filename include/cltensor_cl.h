/*
 * cltensor OpenCL interop: share buffers, the queue and events with code that speaks OpenCL directly.
 * Include after (or instead of) cltensor.h; needs the OpenCL headers.
 */
#ifndef CLTENSOR_CL_H
#define CLTENSOR_CL_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include "cltensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The OpenCL objects behind ctx. They stay owned by cltensor: retain them to keep them longer than
 *  the context. Work you enqueue on the queue is ordered with cltensor's ops. */
CLT_API cl_context clt_context_cl_context(const clt_context *ctx);
CLT_API cl_device_id clt_context_cl_device(const clt_context *ctx);
CLT_API cl_command_queue clt_context_cl_queue(const clt_context *ctx);

/** Wrap an existing buffer (created on ctx's cl_context) as a tensor, starting at offset_bytes.
 *  The buffer is retained, not copied; the tensor never returns it to the pool.
 *  Statuses: CLT_ERR_INVALID_ARGUMENT (NULL buffer, offset not a multiple of the element size),
 *  CLT_ERR_CONTEXT_MISMATCH (buffer of another cl_context), CLT_ERR_INVALID_SHAPE (the shape does
 *  not fit in the buffer), plus those of clt_tensor_create. */
CLT_API clt_status clt_tensor_wrap_cl_mem(clt_context *ctx, cl_mem buffer, size_t offset_bytes,
                                          clt_dtype dtype, int ndim, const int64_t *shape,
                                          clt_tensor **out);

/** The buffer holding t's data and t's offset in it, in bytes. Not retained. */
CLT_API cl_mem clt_tensor_cl_mem(const clt_tensor *t, size_t *offset_bytes);

/** An event that completes when all work enqueued on ctx so far has completed (a marker). The caller
 *  owns it and must clReleaseEvent it. */
CLT_API clt_status clt_context_export_event(clt_context *ctx, cl_event *event);
/** Make later work on ctx wait for an event from another queue (or a user event) of the same
 *  OpenCL context; an event of another OpenCL context is CLT_ERR_CONTEXT_MISMATCH. */
CLT_API clt_status clt_context_wait_event(clt_context *ctx, cl_event event);

#ifdef __cplusplus
}
#endif
#endif /* CLTENSOR_CL_H */
