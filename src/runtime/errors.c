/* Status names, failure messages (per context, or per thread without one) and the debug log. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"

const char *clt_status_string(clt_status status)
{
    switch (status) {
    case CLT_SUCCESS: return "CLT_SUCCESS";
    case CLT_ERR_INVALID_ARGUMENT: return "CLT_ERR_INVALID_ARGUMENT";
    case CLT_ERR_INVALID_DTYPE: return "CLT_ERR_INVALID_DTYPE";
    case CLT_ERR_INVALID_SHAPE: return "CLT_ERR_INVALID_SHAPE";
    case CLT_ERR_SIZE_OVERFLOW: return "CLT_ERR_SIZE_OVERFLOW";
    case CLT_ERR_DEVICE_NOT_FOUND: return "CLT_ERR_DEVICE_NOT_FOUND";
    case CLT_ERR_OUT_OF_DEVICE_MEMORY: return "CLT_ERR_OUT_OF_DEVICE_MEMORY";
    case CLT_ERR_OUT_OF_HOST_MEMORY: return "CLT_ERR_OUT_OF_HOST_MEMORY";
    case CLT_ERR_BUILD_FAILED: return "CLT_ERR_BUILD_FAILED";
    case CLT_ERR_OPENCL: return "CLT_ERR_OPENCL";
    case CLT_ERR_NOT_READY: return "CLT_ERR_NOT_READY";
    case CLT_ERR_UNSUPPORTED: return "CLT_ERR_UNSUPPORTED";
    case CLT_ERR_CONTEXT_MISMATCH: return "CLT_ERR_CONTEXT_MISMATCH";
    case CLT_ERR_IO: return "CLT_ERR_IO";
    case CLT_ERR_INVALID_AXIS: return "CLT_ERR_INVALID_AXIS";
    case CLT_ERR_ALIASING: return "CLT_ERR_ALIASING";
    case CLT_ERR_COMM: return "CLT_ERR_COMM";
    }
    return "CLT_ERR_UNKNOWN";
}

const char *clt__cl_error_name(cl_int err)
{
#define CASE(x) case x: return #x
    switch (err) {
    CASE(CL_SUCCESS);
    CASE(CL_DEVICE_NOT_FOUND);
    CASE(CL_DEVICE_NOT_AVAILABLE);
    CASE(CL_COMPILER_NOT_AVAILABLE);
    CASE(CL_MEM_OBJECT_ALLOCATION_FAILURE);
    CASE(CL_OUT_OF_RESOURCES);
    CASE(CL_OUT_OF_HOST_MEMORY);
    CASE(CL_PROFILING_INFO_NOT_AVAILABLE);
    CASE(CL_MEM_COPY_OVERLAP);
    CASE(CL_IMAGE_FORMAT_MISMATCH);
    CASE(CL_IMAGE_FORMAT_NOT_SUPPORTED);
    CASE(CL_BUILD_PROGRAM_FAILURE);
    CASE(CL_MAP_FAILURE);
    CASE(CL_MISALIGNED_SUB_BUFFER_OFFSET);
    CASE(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    CASE(CL_COMPILE_PROGRAM_FAILURE);
    CASE(CL_LINKER_NOT_AVAILABLE);
    CASE(CL_LINK_PROGRAM_FAILURE);
    CASE(CL_DEVICE_PARTITION_FAILED);
    CASE(CL_KERNEL_ARG_INFO_NOT_AVAILABLE);
    CASE(CL_INVALID_VALUE);
    CASE(CL_INVALID_DEVICE_TYPE);
    CASE(CL_INVALID_PLATFORM);
    CASE(CL_INVALID_DEVICE);
    CASE(CL_INVALID_CONTEXT);
    CASE(CL_INVALID_QUEUE_PROPERTIES);
    CASE(CL_INVALID_COMMAND_QUEUE);
    CASE(CL_INVALID_HOST_PTR);
    CASE(CL_INVALID_MEM_OBJECT);
    CASE(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
    CASE(CL_INVALID_IMAGE_SIZE);
    CASE(CL_INVALID_SAMPLER);
    CASE(CL_INVALID_BINARY);
    CASE(CL_INVALID_BUILD_OPTIONS);
    CASE(CL_INVALID_PROGRAM);
    CASE(CL_INVALID_PROGRAM_EXECUTABLE);
    CASE(CL_INVALID_KERNEL_NAME);
    CASE(CL_INVALID_KERNEL_DEFINITION);
    CASE(CL_INVALID_KERNEL);
    CASE(CL_INVALID_ARG_INDEX);
    CASE(CL_INVALID_ARG_VALUE);
    CASE(CL_INVALID_ARG_SIZE);
    CASE(CL_INVALID_KERNEL_ARGS);
    CASE(CL_INVALID_WORK_DIMENSION);
    CASE(CL_INVALID_WORK_GROUP_SIZE);
    CASE(CL_INVALID_WORK_ITEM_SIZE);
    CASE(CL_INVALID_GLOBAL_OFFSET);
    CASE(CL_INVALID_EVENT_WAIT_LIST);
    CASE(CL_INVALID_EVENT);
    CASE(CL_INVALID_OPERATION);
    CASE(CL_INVALID_GL_OBJECT);
    CASE(CL_INVALID_BUFFER_SIZE);
    CASE(CL_INVALID_MIP_LEVEL);
    CASE(CL_INVALID_GLOBAL_WORK_SIZE);
    CASE(CL_INVALID_PROPERTY);
    CASE(CL_INVALID_IMAGE_DESCRIPTOR);
    CASE(CL_INVALID_COMPILER_OPTIONS);
    CASE(CL_INVALID_LINKER_OPTIONS);
    CASE(CL_INVALID_DEVICE_PARTITION_COUNT);
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    }
#undef CASE
    return "CL_UNKNOWN_ERROR";
}

/* Failures of calls without a context (device queries, context creation) land here. */
static _Thread_local char thread_error[2048];

static void store_message(const clt_context *ctx, const char *msg)
{
    if (!ctx) {
        snprintf(thread_error, sizeof thread_error, "%s", msg);
        return;
    }
    /* The message buffer is mutable state of a logically-const context: failures are recorded even
     * from accessors that take const. */
    clt_context *c = (clt_context *)ctx;
    size_t need = strlen(msg) + 1;
    if (need > c->error_cap) {
        char *grown = realloc(c->error, need);
        if (!grown) {
            if (c->error && c->error_cap)
                snprintf(c->error, c->error_cap, "%s", msg); /* truncated, better than nothing */
            return;
        }
        c->error = grown;
        c->error_cap = need;
    }
    memcpy(c->error, msg, need);
}

static _Thread_local const char *public_call;

const char *clt__public_call_enter(const char *name)
{
    const char *previous = public_call;
    if (!previous)
        public_call = name;
    return previous;
}

void clt__public_call_leave(const char *const *previous)
{
    public_call = *previous;
}

const char *clt__public_call(void)
{
    return public_call;
}

/* Whether msg already starts with "<name>:". */
static int starts_with_call(const char *msg, const char *name)
{
    size_t n = strlen(name);
    return strncmp(msg, name, n) == 0 && msg[n] == ':';
}

clt_status clt__vfail(const clt_context *ctx, clt_status st, const char *fmt, va_list ap)
{
    va_list copy;
    va_copy(copy, ap);
    int len = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    if (len < 0)
        len = 0;
    char *msg = malloc((size_t)len + 1);
    if (!msg) {
        store_message(ctx, clt_status_string(st));
        return st;
    }
    vsnprintf(msg, (size_t)len + 1, fmt, ap);
    const char *call = public_call;
    if (call && !starts_with_call(msg, call)) {
        size_t n = strlen(call);
        char *prefixed = malloc(n + 2 + (size_t)len + 1);
        if (prefixed) {
            memcpy(prefixed, call, n);
            memcpy(prefixed + n, ": ", 2);
            memcpy(prefixed + n + 2, msg, (size_t)len + 1);
            free(msg);
            msg = prefixed;
        }
    }
    store_message(ctx, msg);
    clt__log("%s: %s", clt_status_string(st), msg);
    free(msg);
    return st;
}

clt_status clt__fail(const clt_context *ctx, clt_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    clt__vfail(ctx, st, fmt, ap);
    va_end(ap);
    return st;
}

clt_status clt__cl_fail(const clt_context *ctx, cl_int err, const char *what)
{
    clt_status st = CLT_ERR_OPENCL;
    if (err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES)
        st = CLT_ERR_OUT_OF_DEVICE_MEMORY;
    else if (err == CL_OUT_OF_HOST_MEMORY)
        st = CLT_ERR_OUT_OF_HOST_MEMORY;
    return clt__fail(ctx, st, "%s: %s (%d)", what, clt__cl_error_name(err), (int)err);
}

const char *clt_last_error(const clt_context *ctx)
{
    if (!ctx)
        return thread_error;
    return ctx->error ? ctx->error : "";
}

int clt__log_enabled(void)
{
    /* Atomic: failures on several threads at once may be the first to ask (a plain int raced,
     * found by ThreadSanitizer); every thread computes the same value, so relaxed order suffices. */
    static atomic_int enabled = -1;
    int e = atomic_load_explicit(&enabled, memory_order_relaxed);
    if (e < 0) {
        const char *v = getenv("CLT_LOG");
        e = v && (!strcmp(v, "debug") || !strcmp(v, "1"));
        atomic_store_explicit(&enabled, e, memory_order_relaxed);
    }
    return e;
}

void clt__log(const char *fmt, ...)
{
    if (!clt__log_enabled())
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("[cltensor] ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}
