/* Moving a tensor between contexts (cltensor_multi.h): one device copy when both contexts share a
 * cl_context, otherwise a chunked pipeline through pinned host memory whose steps are chained by
 * events. OpenCL events cannot cross cl_contexts, so each hand-over is a user event of the next
 * context, completed from the completion callback of the previous command: nothing here waits. */
#include <stdlib.h>
#include <string.h>

#include "cltensor_multi.h"
#include "tensor/tensor.h"

#define PIPELINE_SLOTS 4

static const char *const who = "clt_tensor_transfer";

int clt_transfer_route(const clt_context *dst_ctx, const clt_context *src_ctx)
{
    if (!dst_ctx || !src_ctx)
        return -1;
    if (dst_ctx == src_ctx)
        return 0;
    return dst_ctx->dev->cl_ctx == src_ctx->dev->cl_ctx ? 1 : 2;
}

/* Completion callback: pass the finished command's status on to a user event of another context
 * (a failure stays a failure: commands waiting on it then fail instead of running). */
static void CL_CALLBACK hand_over(cl_event ev, cl_int status, void *user)
{
    (void)ev;
    cl_event next = user;
    clSetUserEventStatus(next, status < 0 ? status : CL_COMPLETE);
    clReleaseEvent(next);
}

/* A user event in `cl_ctx` that completes when `after` does. The caller gets its own reference. */
static cl_int chain(cl_context cl_ctx, cl_event after, cl_event *out)
{
    cl_int err;
    *out = clCreateUserEvent(cl_ctx, &err);
    if (err != CL_SUCCESS)
        return err;
    clRetainEvent(*out); /* the callback's reference */
    err = clSetEventCallback(after, CL_COMPLETE, hand_over, *out);
    if (err != CL_SUCCESS) {
        clSetUserEventStatus(*out, err); /* nothing may wait on it forever */
        clReleaseEvent(*out);
    }
    return err;
}

static clt_status direct_copy(clt_tensor *dst, const clt_tensor *src)
{
    clt_context *d = dst->ctx, *s = src->ctx;
    cl_event ready = NULL, copied = NULL;
    cl_int err = clEnqueueMarkerWithWaitList(s->queue, 0, NULL, &ready);
    const char *what = "clEnqueueMarkerWithWaitList";
    if (err == CL_SUCCESS) {
        err = clEnqueueCopyBuffer(d->queue, src->storage->mem, dst->storage->mem, src->offset,
                                  dst->offset, dst->nbytes, 1, &ready, &copied);
        what = "clEnqueueCopyBuffer";
    }
    if (err == CL_SUCCESS) {
        /* Later work on src's queue (a write into src, its buffer reused) must wait for the copy. */
        err = clEnqueueBarrierWithWaitList(s->queue, 1, &copied, NULL);
        what = "clEnqueueBarrierWithWaitList";
        if (err != CL_SUCCESS)
            clWaitForEvents(1, &copied); /* cannot order it: keep src intact the slow way */
    }
    if (err == CL_SUCCESS) {
        err = clFlush(s->queue);
        if (err == CL_SUCCESS)
            err = clFlush(d->queue);
        what = "clFlush";
    }
    if (ready)
        clReleaseEvent(ready);
    if (copied)
        clReleaseEvent(copied);
    if (err != CL_SUCCESS) {
        char msg[96];
        snprintf(msg, sizeof msg, "%s: %s", who, what);
        return clt__cl_fail(d, err, msg);
    }
    return CLT_SUCCESS;
}

/* Pinned host memory of the source's cl_context, mapped once on a queue of its own (a map on the
 * context's queue would wait for its earlier work). */
static cl_int pinned_map(clt_context *s, size_t bytes, cl_mem *mem, unsigned char **ptr)
{
    cl_int err;
    *mem = clCreateBuffer(s->dev->cl_ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, NULL, &err);
    if (err != CL_SUCCESS)
        return err;
    cl_command_queue q = clCreateCommandQueue(s->dev->cl_ctx, s->dev->entry->device, 0, &err);
    if (err == CL_SUCCESS) {
        *ptr = clEnqueueMapBuffer(q, *mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, NULL,
                                  NULL, &err);
        clReleaseCommandQueue(q);
    }
    if (err != CL_SUCCESS) {
        clReleaseMemObject(*mem);
        *mem = NULL;
    }
    return err;
}

/* Chunk c: read into slot c % slots on src's queue (after the write that last used the slot),
 * write from it on dst's queue (after the read). The slot's release to the next read and the
 * final unmap are user events of src's context completed by dst's writes. */
static clt_status staged_copy(clt_tensor *dst, const clt_tensor *src)
{
    clt_context *d = dst->ctx, *s = src->ctx;
    size_t bytes = dst->nbytes, chunk = CLT_TRANSFER_CHUNK_BYTES;
    size_t chunks = (bytes + chunk - 1) / chunk;
    size_t slots = chunks < PIPELINE_SLOTS ? chunks : PIPELINE_SLOTS;
    cl_mem pinned = NULL;
    unsigned char *host = NULL;
    cl_int err = pinned_map(s, slots * chunk < bytes ? slots * chunk : bytes, &pinned, &host);
    if (err != CL_SUCCESS)
        return clt__cl_fail(d, err, "clt_tensor_transfer: pinned staging buffer");
    cl_event slot_free[PIPELINE_SLOTS] = {NULL}; /* src-context events: the slot's last write done */
    const char *what = NULL;
    for (size_t c = 0; c < chunks && err == CL_SUCCESS; c++) {
        size_t slot = c % slots, off = c * chunk;
        size_t len = bytes - off < chunk ? bytes - off : chunk;
        unsigned char *p = host + slot * chunk;
        cl_event read = NULL, readable = NULL, written = NULL;
        err = clEnqueueReadBuffer(s->queue, src->storage->mem, CL_FALSE, src->offset + off, len, p,
                                  slot_free[slot] ? 1 : 0, slot_free[slot] ? &slot_free[slot] : NULL,
                                  &read);
        what = "clEnqueueReadBuffer";
        if (slot_free[slot]) {
            clReleaseEvent(slot_free[slot]);
            slot_free[slot] = NULL;
        }
        if (err == CL_SUCCESS) {
            err = chain(d->dev->cl_ctx, read, &readable);
            what = "clCreateUserEvent / clSetEventCallback";
        }
        if (err == CL_SUCCESS) {
            err = clEnqueueWriteBuffer(d->queue, dst->storage->mem, CL_FALSE, dst->offset + off, len, p,
                                       1, &readable, &written);
            what = "clEnqueueWriteBuffer";
        }
        if (err == CL_SUCCESS && (c + slots < chunks || c + 1 == chunks)) {
            /* The next read into this slot, or (last chunk) the unmap, waits for this write. dst's
             * queue is in order: the last write done means every write is done. */
            err = chain(s->dev->cl_ctx, written, &slot_free[slot]);
            what = "clCreateUserEvent / clSetEventCallback";
        }
        if (err != CL_SUCCESS && readable)
            clSetUserEventStatus(readable, err); /* never leave dst's queue waiting */
        if (read)
            clReleaseEvent(read);
        if (readable)
            clReleaseEvent(readable);
        if (written)
            clReleaseEvent(written);
    }
    cl_event *last = &slot_free[(chunks - 1) % slots];
    cl_int unmap_err = clEnqueueUnmapMemObject(s->queue, pinned, host, *last ? 1 : 0,
                                               *last ? last : NULL, NULL);
    if (unmap_err != CL_SUCCESS && *last) {
        clWaitForEvents(1, last); /* the mapping must outlive the writes from it */
        clEnqueueUnmapMemObject(s->queue, pinned, host, 0, NULL, NULL);
    }
    for (size_t i = 0; i < PIPELINE_SLOTS; i++)
        if (slot_free[i])
            clReleaseEvent(slot_free[i]);
    clReleaseMemObject(pinned); /* freed once the commands using it are done */
    cl_int ferr = clFlush(s->queue);
    if (ferr == CL_SUCCESS)
        ferr = clFlush(d->queue);
    if (err == CL_SUCCESS && ferr != CL_SUCCESS) {
        err = ferr;
        what = "clFlush";
    }
    if (err != CL_SUCCESS) {
        char msg[96];
        snprintf(msg, sizeof msg, "%s: %s", who, what);
        return clt__cl_fail(d, err, msg);
    }
    return CLT_SUCCESS;
}

clt_status clt_tensor_transfer(clt_tensor *dst, const clt_tensor *src)
{
    CLT_PUBLIC_CALL();
    if (!dst || !src)
        return clt__fail(dst ? dst->ctx : src ? src->ctx : NULL, CLT_ERR_INVALID_ARGUMENT,
                         "%s: %s is NULL", who, dst ? "src" : "dst");
    if (dst->ctx == src->ctx)
        return clt_tensor_copy(dst, src);
    clt_context *d = dst->ctx;
    if (dst->dtype != src->dtype)
        return clt__fail(d, CLT_ERR_INVALID_DTYPE, "%s: dst is %s, src is %s", who,
                         clt_dtype_name(dst->dtype), clt_dtype_name(src->dtype));
    if (dst->numel != src->numel)
        return clt__fail(d, CLT_ERR_INVALID_SHAPE, "%s: dst has %lld elements, src %lld", who,
                         (long long)dst->numel, (long long)src->numel);
    if (dst->nbytes == 0)
        return CLT_SUCCESS;
    int route = clt_transfer_route(d, src->ctx);
    if (route == 1 && dst->storage->mem == src->storage->mem) {
        /* Two contexts adopting one cl_context may wrap one buffer. */
        size_t a = dst->offset, b = src->offset, n = dst->nbytes;
        if (a == b)
            return CLT_SUCCESS;
        if (a < b + n && b < a + n)
            return clt__fail(d, CLT_ERR_ALIASING,
                             "%s: dst and src overlap in the same buffer (offsets %zu and %zu, %zu bytes)",
                             who, a, b, n);
    }
    return route == 1 ? direct_copy(dst, src) : staged_copy(dst, src);
}
