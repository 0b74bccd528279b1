/* Asynchronous reads: a non-blocking read into library-owned host memory, completed when the queue
 * reaches it. Small reads (a loss every step) land in a ring of pinned slots so they stay cheap;
 * bigger reads, or a full ring, use malloc'ed memory. */
#include <stdlib.h>
#include <string.h>

#include "memory/transfer_state.h"
#include "profile/profile.h"

struct clt_future {
    clt_context *ctx;
    cl_event event;      /* NULL once settled (or for an empty read) */
    unsigned char *host; /* ring slot or malloc'ed */
    size_t bytes;
    int slot;            /* ring slot index, -1 when host is malloc'ed */
    int done;
    cl_int exec_status;  /* negative: the read (or earlier work) failed */
    const clt__future_hooks *hooks; /* a future driven by another layer (dist), or NULL */
    void *hook_state;
    struct clt_future *prev, *next; /* the ring's list of live futures */
};

struct clt_future_ring {
    cl_mem mem;          /* pinned slots, NULL when unavailable */
    unsigned char *ptr;  /* persistent mapping */
    int unavailable;
    int free_slots[RING_SLOTS];
    int free_count;
    clt_future *live;
};

static clt_status ring_get(clt_context *ctx, struct clt_future_ring **out)
{
    struct clt_transfer *tr = ctx->transfer;
    if (!tr->ring) {
        tr->ring = calloc(1, sizeof *tr->ring);
        if (!tr->ring)
            return clt__fail(ctx, CLT_ERR_OUT_OF_HOST_MEMORY, "clt_tensor_read_async: out of host memory");
    }
    struct clt_future_ring *ring = tr->ring;
    if (!ring->mem && !ring->unavailable) {
        cl_int err = clt__pinned_create(ctx, (size_t)RING_SLOTS * RING_SLOT_BYTES, &ring->mem,
                                        &ring->ptr);
        if (err != CL_SUCCESS) {
            /* Not fatal: every read then uses malloc'ed memory. */
            clt__log("future: no pinned ring (%s), using host memory", clt__cl_error_name(err));
            ring->unavailable = 1;
        } else {
            for (int i = 0; i < RING_SLOTS; i++)
                ring->free_slots[i] = RING_SLOTS - 1 - i;
            ring->free_count = RING_SLOTS;
        }
    }
    *out = ring;
    return CLT_SUCCESS;
}

clt_status clt__future_read(clt_context *ctx, cl_mem buf, size_t offset, size_t bytes,
                            clt_future **out)
{
    *out = NULL;
    struct clt_future_ring *ring = NULL;
    clt_status st = ring_get(ctx, &ring);
    if (st != CLT_SUCCESS)
        return st;
    clt_future *f = calloc(1, sizeof *f);
    if (!f)
        return clt__fail(ctx, CLT_ERR_OUT_OF_HOST_MEMORY, "clt_tensor_read_async: out of host memory");
    f->ctx = ctx;
    f->bytes = bytes;
    f->slot = -1;
    if (bytes <= RING_SLOT_BYTES && ring->free_count > 0) {
        f->slot = ring->free_slots[--ring->free_count];
        f->host = ring->ptr + (size_t)f->slot * RING_SLOT_BYTES;
    } else if (bytes > 0) {
        f->host = malloc(bytes);
        if (!f->host) {
            free(f);
            return clt__fail(ctx, CLT_ERR_OUT_OF_HOST_MEMORY,
                             "clt_tensor_read_async: cannot allocate %zu bytes of host memory", bytes);
        }
    }
    if (bytes > 0) {
        cl_int err = clEnqueueReadBuffer(ctx->queue, buf, CL_FALSE, offset, bytes, f->host, 0, NULL,
                                         &f->event);
        if (err == CL_SUCCESS)
            err = clFlush(ctx->queue);
        if (err != CL_SUCCESS) {
            if (f->event) {
                clWaitForEvents(1, &f->event);
                clReleaseEvent(f->event);
            }
            if (f->slot >= 0)
                ring->free_slots[ring->free_count++] = f->slot;
            else
                free(f->host);
            free(f);
            return clt__cl_fail(ctx, err, "clt_tensor_read_async: clEnqueueReadBuffer");
        }
        clt__prof_record(ctx, f->event, "clt_tensor_read_async", "read", CLT_PROFILE_TRANSFER, bytes);
    } else {
        f->done = 1;
    }
    f->next = ring->live;
    if (ring->live)
        ring->live->prev = f;
    ring->live = f;
    *out = f;
    return CLT_SUCCESS;
}

clt_status clt__future_custom(clt_context *ctx, const clt__future_hooks *hooks, void *state,
                              clt_future **out)
{
    *out = NULL;
    struct clt_future_ring *ring = NULL;
    clt_status st = ring_get(ctx, &ring);
    if (st != CLT_SUCCESS)
        return st;
    clt_future *f = calloc(1, sizeof *f);
    if (!f)
        return clt__fail(ctx, CLT_ERR_OUT_OF_HOST_MEMORY, "out of host memory for a future");
    f->ctx = ctx;
    f->slot = -1;
    f->hooks = hooks;
    f->hook_state = state;
    f->next = ring->live;
    if (ring->live)
        ring->live->prev = f;
    ring->live = f;
    *out = f;
    return CLT_SUCCESS;
}

/* The outcome of a settled future, recorded on its context when it failed. */
static clt_status settled_status(clt_future *f, const char *who)
{
    if (f->exec_status >= 0)
        return CLT_SUCCESS;
    return clt__fail(f->ctx, CLT_ERR_OPENCL,
                     "%s: execution failed: %s (%d), in the read or in earlier work", who,
                     clt__cl_error_name(f->exec_status), (int)f->exec_status);
}

static void settle(clt_future *f, cl_int exec)
{
    f->exec_status = exec < 0 ? exec : CL_COMPLETE;
    f->done = 1;
    clReleaseEvent(f->event);
    f->event = NULL;
}

/* Block until the read is done (block != 0) or just look. CLT_ERR_NOT_READY when still running. */
static clt_status progress(clt_future *f, int block, const char *who)
{
    if (f->hooks)
        return f->hooks->progress(f->hook_state, block, who);
    if (f->done)
        return settled_status(f, who);
    cl_int err = block ? clWaitForEvents(1, &f->event) : clFlush(f->ctx->queue);
    cl_int exec = CL_QUEUED;
    cl_int qerr = clGetEventInfo(f->event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof exec, &exec, NULL);
    if (qerr != CL_SUCCESS)
        return clt__cl_fail(f->ctx, qerr, block ? "clt_future_wait: clGetEventInfo"
                                                 : "clt_future_poll: clGetEventInfo");
    if (exec < 0 || exec == CL_COMPLETE) {
        settle(f, exec);
        return settled_status(f, who);
    }
    if (err != CL_SUCCESS)
        return clt__cl_fail(f->ctx, err, block ? "clt_future_wait: clWaitForEvents"
                                                : "clt_future_poll: clFlush");
    return CLT_ERR_NOT_READY;
}

clt_status clt_future_poll(clt_future *f)
{
    CLT_PUBLIC_CALL();
    if (!f)
        return clt__fail(NULL, CLT_ERR_INVALID_ARGUMENT, "clt_future_poll: f is NULL");
    return progress(f, 0, "clt_future_poll");
}

clt_status clt_future_wait(clt_future *f)
{
    CLT_PUBLIC_CALL();
    if (!f)
        return clt__fail(NULL, CLT_ERR_INVALID_ARGUMENT, "clt_future_wait: f is NULL");
    return progress(f, 1, "clt_future_wait");
}

clt_status clt_future_get(clt_future *f, void *dst, size_t bytes)
{
    CLT_PUBLIC_CALL();
    if (!f)
        return clt__fail(NULL, CLT_ERR_INVALID_ARGUMENT, "clt_future_get: f is NULL");
    if (bytes != f->bytes)
        return clt__fail(f->ctx, CLT_ERR_INVALID_ARGUMENT,
                         "clt_future_get: bytes is %zu, the read has %zu bytes", bytes, f->bytes);
    if (!dst && bytes > 0)
        return clt__fail(f->ctx, CLT_ERR_INVALID_ARGUMENT, "clt_future_get: dst is NULL");
    clt_status st = progress(f, 1, "clt_future_get");
    if (st != CLT_SUCCESS)
        return st;
    if (bytes > 0)
        memcpy(dst, f->host, bytes);
    return CLT_SUCCESS;
}

/* Wait for the read (the host memory must not be reused under it), then free everything. */
static void future_release(struct clt_future_ring *ring, clt_future *f)
{
    if (f->hooks)
        f->hooks->release(f->hook_state);
    if (f->event) {
        clWaitForEvents(1, &f->event);
        clReleaseEvent(f->event);
    }
    if (f->prev)
        f->prev->next = f->next;
    else
        ring->live = f->next;
    if (f->next)
        f->next->prev = f->prev;
    if (f->slot >= 0)
        ring->free_slots[ring->free_count++] = f->slot;
    else
        free(f->host);
    free(f);
}

void clt_future_free(clt_future *f)
{
    if (f)
        future_release(f->ctx->transfer->ring, f);
}

void clt__future_ring_destroy(clt_context *ctx, struct clt_future_ring *ring)
{
    if (!ring)
        return;
    while (ring->live)
        future_release(ring, ring->live);
    if (ring->mem)
        clt__pinned_release(ctx, ring->mem, ring->ptr);
    free(ring);
}
