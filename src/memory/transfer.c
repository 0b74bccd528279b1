/* Host<->device copies. Discrete devices: through pinned staging chunks, so a write returns as soon as
 * the data sits in staging and a read overlaps the DMA of one chunk with the copy-out of the previous
 * one. Unified-memory devices (zero_copy): map the buffer and copy directly. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memory/transfer_state.h"
#include "profile/profile.h"

/* The public calls that reach these copies, for the profiler (clt_tensor_create_from_host writes
 * through clt_tensor_write). */
#define OP_WRITE "clt_tensor_write"
#define OP_READ "clt_tensor_read"

clt_status clt__transfer_create(clt_context *ctx, struct clt_transfer **out)
{
    *out = calloc(1, sizeof **out);
    if (!*out)
        return clt__fail(ctx, CLT_ERR_OUT_OF_HOST_MEMORY, "creating the transfer state: out of host memory");
    return CLT_SUCCESS;
}

clt_status clt__wait_event(clt_context *ctx, cl_event ev, const char *who)
{
    if (!ev)
        return CLT_SUCCESS;
    cl_int err = clWaitForEvents(1, &ev);
    cl_int exec = CL_COMPLETE;
    cl_int qerr = clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof exec, &exec, NULL);
    if (qerr == CL_SUCCESS && exec < 0)
        return clt__fail(ctx, CLT_ERR_OPENCL, "%s: execution failed: %s (%d), here or in earlier work",
                         who, clt__cl_error_name(exec), (int)exec);
    if (err != CL_SUCCESS) {
        char what[160];
        snprintf(what, sizeof what, "%s: clWaitForEvents", who);
        return clt__cl_fail(ctx, err, what);
    }
    return CLT_SUCCESS;
}

static clt_status cl_failed(clt_context *ctx, cl_int err, const char *who, const char *call)
{
    char what[160];
    snprintf(what, sizeof what, "%s: %s", who, call);
    return clt__cl_fail(ctx, err, what);
}

cl_int clt__pinned_create(clt_context *ctx, size_t bytes, cl_mem *mem, unsigned char **ptr)
{
    cl_int err;
    *mem = clCreateBuffer(ctx->dev->cl_ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, NULL,
                          &err);
    if (err != CL_SUCCESS)
        return err;
    /* Map on a queue of its own: on ctx->queue the blocking map would wait for all earlier work
     * (or forever, behind a user event). Any queue of the context may unmap it later. */
    cl_command_queue q = clCreateCommandQueue(ctx->dev->cl_ctx, ctx->dev->entry->device, 0, &err);
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

void clt__pinned_release(clt_context *ctx, cl_mem mem, void *ptr)
{
    cl_event ev = NULL;
    if (clEnqueueUnmapMemObject(ctx->queue, mem, ptr, 0, NULL, &ev) == CL_SUCCESS) {
        clWaitForEvents(1, &ev);
        clReleaseEvent(ev);
    }
    clReleaseMemObject(mem);
}

/* Create and map the staging buffer on first use. When the device refuses, transfers fall back to
 * plain blocking copies: slower, still correct. */
static void staging_ensure(clt_context *ctx, struct clt_transfer *tr)
{
    if (tr->staging || tr->staging_unavailable)
        return;
    size_t chunk = STAGING_CHUNK_BYTES;
    uint64_t max_alloc = ctx->dev->entry->info.max_alloc_bytes;
    while (chunk > 4096 && max_alloc && (uint64_t)chunk * STAGING_CHUNKS > max_alloc)
        chunk /= 2;
    cl_int err = clt__pinned_create(ctx, chunk * STAGING_CHUNKS, &tr->staging, &tr->staging_ptr);
    if (err != CL_SUCCESS) {
        clt__log("transfer: no pinned staging (%s), copying directly", clt__cl_error_name(err));
        tr->staging_unavailable = 1;
        return;
    }
    tr->chunk_bytes = chunk;
}

/* The next chunk in rotation, once the host may touch it again. */
static clt_status take_chunk(clt_context *ctx, struct clt_transfer *tr, const char *who, int *chunk)
{
    int c = tr->next_chunk;
    tr->next_chunk = (c + 1) % STAGING_CHUNKS;
    cl_event prev = tr->chunk_events[c];
    tr->chunk_events[c] = NULL;
    clt_status st = clt__wait_event(ctx, prev, who);
    if (prev)
        clReleaseEvent(prev);
    *chunk = c;
    return st;
}

static clt_status write_staged(clt_context *ctx, struct clt_transfer *tr, cl_mem buf, size_t offset,
                               const unsigned char *src, size_t bytes)
{
    static const char who[] = "copy to device";
    for (size_t done = 0; done < bytes;) {
        size_t piece = bytes - done < tr->chunk_bytes ? bytes - done : tr->chunk_bytes;
        int c;
        clt_status st = take_chunk(ctx, tr, who, &c);
        if (st != CLT_SUCCESS)
            return st;
        unsigned char *stage = tr->staging_ptr + (size_t)c * tr->chunk_bytes;
        clt__parallel_copy(stage, src + done, piece);
        cl_int err = clEnqueueWriteBuffer(ctx->queue, buf, CL_FALSE, offset + done, piece, stage, 0,
                                          NULL, &tr->chunk_events[c]);
        if (err != CL_SUCCESS) {
            tr->chunk_events[c] = NULL;
            return cl_failed(ctx, err, who, "clEnqueueWriteBuffer");
        }
        clt__prof_record(ctx, tr->chunk_events[c], OP_WRITE, "write", CLT_PROFILE_TRANSFER, piece);
        done += piece;
    }
    /* Submit now: the write should progress while the caller prepares the next op. */
    cl_int err = clFlush(ctx->queue);
    return err == CL_SUCCESS ? CLT_SUCCESS : cl_failed(ctx, err, who, "clFlush");
}

/* Enqueue the device->staging copy of one piece; its event is kept as the chunk's last use. */
static clt_status enqueue_read_piece(clt_context *ctx, struct clt_transfer *tr, cl_mem buf,
                                     size_t offset, size_t piece, int *chunk)
{
    static const char who[] = "copy from device";
    /* The in-order queue runs this after any earlier write out of the same chunk, so the host
     * need not wait for that write here. */
    int c = tr->next_chunk;
    tr->next_chunk = (c + 1) % STAGING_CHUNKS;
    if (tr->chunk_events[c]) {
        clReleaseEvent(tr->chunk_events[c]);
        tr->chunk_events[c] = NULL;
    }
    cl_int err = clEnqueueReadBuffer(ctx->queue, buf, CL_FALSE, offset, piece,
                                     tr->staging_ptr + (size_t)c * tr->chunk_bytes, 0, NULL,
                                     &tr->chunk_events[c]);
    if (err != CL_SUCCESS) {
        tr->chunk_events[c] = NULL;
        return cl_failed(ctx, err, who, "clEnqueueReadBuffer");
    }
    clt__prof_record(ctx, tr->chunk_events[c], OP_READ, "read", CLT_PROFILE_TRANSFER, piece);
    err = clFlush(ctx->queue);
    if (err != CL_SUCCESS)
        return cl_failed(ctx, err, who, "clFlush");
    *chunk = c;
    return CLT_SUCCESS;
}

static clt_status read_staged(clt_context *ctx, struct clt_transfer *tr, cl_mem buf, size_t offset,
                              unsigned char *dst, size_t bytes)
{
    size_t chunk_bytes = tr->chunk_bytes;
    size_t pieces = (bytes + chunk_bytes - 1) / chunk_bytes;
    int chunk_of[2]; /* chunks of pieces k and k+1 (at most two in flight) */
    clt_status st = enqueue_read_piece(ctx, tr, buf, offset,
                                       bytes < chunk_bytes ? bytes : chunk_bytes, &chunk_of[0]);
    for (size_t k = 0; st == CLT_SUCCESS && k < pieces; k++) {
        size_t start = k * chunk_bytes;
        size_t piece = bytes - start < chunk_bytes ? bytes - start : chunk_bytes;
        if (k + 1 < pieces) {
            size_t next_start = start + chunk_bytes;
            size_t next = bytes - next_start < chunk_bytes ? bytes - next_start : chunk_bytes;
            st = enqueue_read_piece(ctx, tr, buf, offset + next_start, next, &chunk_of[(k + 1) % 2]);
            if (st != CLT_SUCCESS)
                break;
        }
        int c = chunk_of[k % 2];
        st = clt__wait_event(ctx, tr->chunk_events[c], "copy from device");
        if (st == CLT_SUCCESS)
            clt__parallel_copy(dst + start, tr->staging_ptr + (size_t)c * chunk_bytes, piece);
    }
    return st;
}

static clt_status write_mapped(clt_context *ctx, cl_mem buf, size_t offset, const void *src,
                               size_t bytes)
{
    static const char who[] = "copy to device";
    cl_int err;
    void *p = clEnqueueMapBuffer(ctx->queue, buf, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, offset,
                                 bytes, 0, NULL, clt__prof_event(ctx), &err);
    if (err != CL_SUCCESS)
        return cl_failed(ctx, err, who, "clEnqueueMapBuffer(CL_MAP_WRITE_INVALIDATE_REGION)");
    clt__prof_commit(ctx, OP_WRITE, "map", CLT_PROFILE_TRANSFER, 0); /* bytes count once */
    clt__parallel_copy(p, src, bytes);
    err = clEnqueueUnmapMemObject(ctx->queue, buf, p, 0, NULL, clt__prof_event(ctx));
    if (err != CL_SUCCESS)
        return cl_failed(ctx, err, who, "clEnqueueUnmapMemObject");
    clt__prof_commit(ctx, OP_WRITE, "unmap", CLT_PROFILE_TRANSFER, bytes);
    return CLT_SUCCESS;
}

static clt_status read_mapped(clt_context *ctx, cl_mem buf, size_t offset, void *dst, size_t bytes)
{
    static const char who[] = "copy from device";
    cl_int err;
    cl_event ev = NULL;
    void *p = clEnqueueMapBuffer(ctx->queue, buf, CL_TRUE, CL_MAP_READ, offset, bytes, 0, NULL, &ev,
                                 &err);
    if (err != CL_SUCCESS)
        return cl_failed(ctx, err, who, "clEnqueueMapBuffer(CL_MAP_READ)");
    clt__prof_record(ctx, ev, OP_READ, "map", CLT_PROFILE_TRANSFER, bytes);
    /* The map waited for earlier work; its event tells whether that work failed. */
    clt_status st = clt__wait_event(ctx, ev, who);
    clReleaseEvent(ev);
    if (st == CLT_SUCCESS)
        clt__parallel_copy(dst, p, bytes);
    err = clEnqueueUnmapMemObject(ctx->queue, buf, p, 0, NULL, clt__prof_event(ctx));
    if (err != CL_SUCCESS && st == CLT_SUCCESS)
        st = cl_failed(ctx, err, who, "clEnqueueUnmapMemObject");
    clt__prof_commit(ctx, OP_READ, "unmap", CLT_PROFILE_TRANSFER, 0); /* bytes count once */
    return st;
}

clt_status clt__transfer_write(clt_context *ctx, cl_mem buf, size_t offset, const void *src,
                               size_t bytes)
{
    if (bytes == 0)
        return CLT_SUCCESS;
    if (ctx->limits.zero_copy)
        return write_mapped(ctx, buf, offset, src, bytes);
    struct clt_transfer *tr = ctx->transfer;
    staging_ensure(ctx, tr);
    if (tr->staging)
        return write_staged(ctx, tr, buf, offset, src, bytes);
    cl_int err = clEnqueueWriteBuffer(ctx->queue, buf, CL_TRUE, offset, bytes, src, 0, NULL,
                                      clt__prof_event(ctx));
    if (err != CL_SUCCESS)
        return cl_failed(ctx, err, "copy to device", "clEnqueueWriteBuffer");
    clt__prof_commit(ctx, OP_WRITE, "write", CLT_PROFILE_TRANSFER, bytes);
    return CLT_SUCCESS;
}

clt_status clt__transfer_read(clt_context *ctx, cl_mem buf, size_t offset, void *dst, size_t bytes)
{
    if (bytes == 0)
        return CLT_SUCCESS;
    if (ctx->limits.zero_copy)
        return read_mapped(ctx, buf, offset, dst, bytes);
    struct clt_transfer *tr = ctx->transfer;
    staging_ensure(ctx, tr);
    if (tr->staging)
        return read_staged(ctx, tr, buf, offset, dst, bytes);
    cl_event ev = NULL;
    cl_int err = clEnqueueReadBuffer(ctx->queue, buf, CL_FALSE, offset, bytes, dst, 0, NULL, &ev);
    if (err != CL_SUCCESS)
        return cl_failed(ctx, err, "copy from device", "clEnqueueReadBuffer");
    clt__prof_record(ctx, ev, OP_READ, "read", CLT_PROFILE_TRANSFER, bytes);
    clt_status st = clt__wait_event(ctx, ev, "copy from device");
    clReleaseEvent(ev);
    return st;
}

void clt__transfer_destroy(clt_context *ctx, struct clt_transfer *tr)
{
    if (!tr)
        return;
    clt__future_ring_destroy(ctx, tr->ring);
    for (int c = 0; c < STAGING_CHUNKS; c++) {
        if (tr->chunk_events[c]) {
            clWaitForEvents(1, &tr->chunk_events[c]);
            clReleaseEvent(tr->chunk_events[c]);
        }
    }
    if (tr->staging)
        clt__pinned_release(ctx, tr->staging, tr->staging_ptr);
    free(tr);
}
