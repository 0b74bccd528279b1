/**
 * @file
 * cltensor OpenCL interop: share buffers, the queue and events with code that speaks OpenCL directly.
 * Include after (or instead of) cltensor.h; needs the OpenCL headers.
 */
#ifndef CLTENSOR_CL_H
#define CLTENSOR_CL_H

#ifndef CL_TARGET_OPENCL_VERSION
/** The OpenCL API version cltensor is written against (1.2), unless the application chose one. */
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include "cltensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Create a cltensor context on an application's own OpenCL objects, so that buffers
 *  (clt_tensor_wrap_cl_mem, clt_tensor_cl_mem) and events (clt_context_export_event,
 *  clt_context_wait_event) pass between the application and cltensor without a copy.
 *
 *  `device` must be one of `context`'s devices and `queue` an in-order queue of that context and
 *  device. cltensor retains the three (clRetain*) and releases them in clt_context_free: it never owns
 *  them, and the application may release its own references at any time after this call. Every op
 *  of the context is enqueued on `queue`, in order with the application's own commands on it; the
 *  application may keep using `queue`. clt_context_free first waits for the queue (clFinish), which
 *  includes the application's commands enqueued on it until then. Programs are compiled for
 *  `context` (the on-disk program cache still applies); cltensor contexts adopting the same
 *  cl_context and device share them.
 *
 *  opts may be NULL; opts->device is ignored (the device is given). The profiler needs a queue
 *  created with CL_QUEUE_PROFILING_ENABLE: opts->profiler = 1 on a queue without it fails with
 *  CLT_ERR_UNSUPPORTED; CLT_PROFILE=1 alone leaves the profiler off on such a queue.
 *
 *  Statuses: CLT_ERR_INVALID_ARGUMENT (NULL argument or out, an invalid context or queue, a bad
 *  option as for clt_context_create), CLT_ERR_DEVICE_NOT_FOUND (device is not a device of any
 *  platform, e.g. a sub-device), CLT_ERR_CONTEXT_MISMATCH (device not in context, queue of another
 *  context or device), CLT_ERR_UNSUPPORTED (out-of-order queue, profiler as above),
 *  CLT_ERR_OPENCL, CLT_ERR_OUT_OF_HOST_MEMORY. On failure *out is NULL, nothing was retained and
 *  clt_last_error(NULL) says why. Does not block. */
CLT_API clt_status clt_context_create_from_cl(cl_context context, cl_device_id device,
                                              cl_command_queue queue, const clt_context_options *opts,
                                              clt_context **out);

/** The cl_context behind ctx (the application's, for a context from clt_context_create_from_cl),
 *  or NULL for NULL. Not a new reference: it stays valid while ctx lives; clRetainContext it to
 *  keep it longer. Never blocks. */
CLT_API cl_context clt_context_cl_context(const clt_context *ctx);
/** The device of ctx, or NULL for NULL. Never blocks. */
CLT_API cl_device_id clt_context_cl_device(const clt_context *ctx);
/** The in-order queue every op of ctx is enqueued on, or NULL for NULL. Not a new reference (valid
 *  while ctx lives). Work the caller enqueues on it is ordered with cltensor's ops. Never blocks. */
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
