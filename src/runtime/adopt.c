/* clt_context_create_from_cl: a cltensor context on an application's cl_context, device and queue.
 * The three are validated against each other (a mismatch found later would be a crash or a wrong
 * result in the application's own code), retained, and released when the context is freed. */
#include <stdlib.h>

#include "cltensor_cl.h"
#include "runtime/runtime.h"

static const char who[] = "clt_context_create_from_cl";

/* Position of device in cltensor's device list, or -1. */
static int device_index_of(cl_device_id device)
{
    const clt_device_entry *list;
    int n;
    if (clt__device_list(&list, &n) != CLT_SUCCESS)
        return -1;
    for (int i = 0; i < n; i++)
        if (list[i].device == device)
            return i;
    return -1;
}

static int context_has_device(cl_context context, cl_device_id device, cl_int *err)
{
    cl_uint n = 0;
    *err = clGetContextInfo(context, CL_CONTEXT_NUM_DEVICES, sizeof n, &n, NULL);
    if (*err != CL_SUCCESS || n == 0)
        return 0;
    cl_device_id *devices = malloc(n * sizeof *devices);
    if (!devices) {
        *err = CL_OUT_OF_HOST_MEMORY;
        return 0;
    }
    int found = 0;
    *err = clGetContextInfo(context, CL_CONTEXT_DEVICES, n * sizeof *devices, devices, NULL);
    for (cl_uint i = 0; *err == CL_SUCCESS && i < n; i++)
        found |= devices[i] == device;
    free(devices);
    return found;
}

/* The queue belongs to context and device and is in order (every op relies on the queue's order). */
static clt_status check_queue(cl_context context, cl_device_id device, cl_command_queue queue,
                              cl_command_queue_properties *props)
{
    cl_context qctx = NULL;
    cl_device_id qdev = NULL;
    if (clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof qctx, &qctx, NULL) != CL_SUCCESS ||
        clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof qdev, &qdev, NULL) != CL_SUCCESS ||
        clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof *props, props, NULL) != CL_SUCCESS)
        return clt__fail(NULL, CLT_ERR_INVALID_ARGUMENT, "%s: queue is not a valid cl_command_queue", who);
    if (qctx != context)
        return clt__fail(NULL, CLT_ERR_CONTEXT_MISMATCH,
                         "%s: queue belongs to another cl_context than context", who);
    if (qdev != device)
        return clt__fail(NULL, CLT_ERR_CONTEXT_MISMATCH, "%s: queue is on another device than device",
                         who);
    if (*props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
        return clt__fail(NULL, CLT_ERR_UNSUPPORTED,
                         "%s: queue is out of order (cltensor orders its work by an in-order queue)", who);
    return CLT_SUCCESS;
}

clt_status clt_context_create_from_cl(cl_context context, cl_device_id device, cl_command_queue queue,
                                      const clt_context_options *opts, clt_context **out)
{
    CLT_PUBLIC_CALL();
    if (!out)
        return clt__fail(NULL, CLT_ERR_INVALID_ARGUMENT, "%s: out is NULL", who);
    *out = NULL;
    if (!context || !device || !queue)
        return clt__fail(NULL, CLT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", who,
                         !context ? "context" : !device ? "device" : "queue");
    int index = device_index_of(device);
    if (index < 0)
        return clt__fail(NULL, CLT_ERR_DEVICE_NOT_FOUND,
                         "%s: device is not one of the platforms' devices (a sub-device, or invalid)", who);
    cl_int err;
    if (!context_has_device(context, device, &err)) {
        if (err != CL_SUCCESS)
            return clt__fail(NULL, CLT_ERR_INVALID_ARGUMENT,
                             "%s: context is not a valid cl_context (clGetContextInfo: %s)", who,
                             clt__cl_error_name(err));
        return clt__fail(NULL, CLT_ERR_CONTEXT_MISMATCH, "%s: device is not a device of context", who);
    }
    cl_command_queue_properties props = 0;
    clt_status st = check_queue(context, device, queue, &props);
    if (st != CLT_SUCCESS)
        return st;
    clt_context_limits limits;
    if ((st = clt__context_resolve_options(opts, index, who, &limits)) != CLT_SUCCESS)
        return st;
    /* The profiler needs the queue's timestamps: asked for explicitly, a queue without them is an
     * error; asked for by CLT_PROFILE alone, the profiler stays off on this context. */
    if (limits.profiler && !(props & CL_QUEUE_PROFILING_ENABLE)) {
        if (opts && opts->profiler > 0)
            return clt__fail(NULL, CLT_ERR_UNSUPPORTED,
                             "%s: profiler requested but queue was created without "
                             "CL_QUEUE_PROFILING_ENABLE", who);
        limits.profiler = 0;
    }

    clt_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return clt__fail(NULL, CLT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", who);
    ctx->limits = limits;
    if ((st = clt__device_state_adopt(index, context, &ctx->dev)) != CLT_SUCCESS) {
        free(ctx);
        return st;
    }
    if ((err = clRetainCommandQueue(queue)) != CL_SUCCESS) {
        clt__context_destroy(ctx);
        return clt__cl_fail(NULL, err, "clt_context_create_from_cl: clRetainCommandQueue");
    }
    ctx->queue = queue;
    if ((st = clt__context_start(ctx, who)) != CLT_SUCCESS)
        return st;
    *out = ctx;
    return CLT_SUCCESS;
}
