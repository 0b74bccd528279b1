/* cltensor_cl.h: the OpenCL objects behind a context, and events in and out of its queue. */
#include "cltensor_cl.h"
#include "runtime/runtime.h"

cl_context clt_context_cl_context(const clt_context *ctx) { return ctx ? ctx->dev->cl_ctx : NULL; }

cl_device_id clt_context_cl_device(const clt_context *ctx)
{
    return ctx ? ctx->dev->entry->device : NULL;
}

cl_command_queue clt_context_cl_queue(const clt_context *ctx) { return ctx ? ctx->queue : NULL; }

clt_status clt_context_export_event(clt_context *ctx, cl_event *event)
{
    CLT_PUBLIC_CALL();
    if (!ctx || !event)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "clt_context_export_event: %s is NULL",
                         ctx ? "event" : "ctx");
    cl_int err = clEnqueueMarkerWithWaitList(ctx->queue, 0, NULL, event);
    return err == CL_SUCCESS ? CLT_SUCCESS
                             : clt__cl_fail(ctx, err, "clt_context_export_event: clEnqueueMarkerWithWaitList");
}

clt_status clt_context_wait_event(clt_context *ctx, cl_event event)
{
    CLT_PUBLIC_CALL();
    if (!ctx || !event)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "clt_context_wait_event: %s is NULL",
                         ctx ? "event" : "ctx");
    /* An event of another OpenCL context cannot be waited on here: say so before enqueueing. */
    cl_context owner = NULL;
    cl_int err = clGetEventInfo(event, CL_EVENT_CONTEXT, sizeof owner, &owner, NULL);
    if (err != CL_SUCCESS)
        return clt__cl_fail(ctx, err, "clt_context_wait_event: clGetEventInfo");
    if (owner != ctx->dev->cl_ctx)
        return clt__fail(ctx, CLT_ERR_CONTEXT_MISMATCH,
                         "clt_context_wait_event: the event belongs to another OpenCL context");
    err = clEnqueueBarrierWithWaitList(ctx->queue, 1, &event, NULL);
    return err == CL_SUCCESS ? CLT_SUCCESS
                             : clt__cl_fail(ctx, err, "clt_context_wait_event: clEnqueueBarrierWithWaitList");
}
