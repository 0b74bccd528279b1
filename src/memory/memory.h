/* Memory layer: the per-context buffer pool and host<->device transfers (pinned staging on discrete
 * devices, map/unmap on unified-memory ones), including asynchronous reads into pinned slots.
 * Internal. All functions take the owning context for error reporting. */
#ifndef CLT_MEMORY_H
#define CLT_MEMORY_H

#include "runtime/runtime.h"

/* ------------------------------------------------------------- pool.c */

/* One device buffer handed out by the pool. `bytes` is the size-class size (>= the request). */
typedef struct clt_block {
    cl_mem mem;
    size_t bytes;
    struct clt_block *prev, *next; /* in the pool's in-use list or a size class's free list */
} clt_block;

/* limit: cap on bytes in use + cached, 0 = none. */
clt_status clt__pool_create(clt_context *ctx, uint64_t limit, struct clt_pool **out);
/* Releases every buffer, cached or still in use. */
void clt__pool_destroy(struct clt_pool *pool);
/* A buffer of at least `bytes` (bytes may be 0: gives the smallest class). Reuses a cached buffer of
 * the same size class at once: the in-order queue orders its old and new uses. Over the cap or when
 * the device refuses: trims the cache and retries once, then CLT_ERR_OUT_OF_DEVICE_MEMORY, with the
 * pool unchanged. */
clt_status clt__pool_alloc(clt_context *ctx, size_t bytes, clt_block **out);
/* Return a block to the cache. */
void clt__pool_release(clt_context *ctx, clt_block *block);
/* The context's placeholder buffer for empty tensors (not retained for the caller; created on first
 * use, never counted against the limit). */
clt_status clt__pool_empty_mem(clt_context *ctx, cl_mem *out);
void clt__pool_get_stats(const struct clt_pool *pool, clt_pool_stats *stats);
void clt__pool_trim(struct clt_pool *pool);
/* The size class a request of `bytes` is rounded up to. */
size_t clt__pool_class_bytes(size_t bytes);

/* --------------------------------------------------------- transfer.c */

/* Staging state of a context. Pinned buffers are created lazily on the first transfer that needs them. */
clt_status clt__transfer_create(clt_context *ctx, struct clt_transfer **out);
/* Waits for transfers in flight, then releases everything. */
void clt__transfer_destroy(clt_context *ctx, struct clt_transfer *tr);

/* Copy host memory into buf at offset. Ordered after earlier work on the queue; returns once `src`
 * may be reused (the data sits in staging or is already on the device). */
clt_status clt__transfer_write(clt_context *ctx, cl_mem buf, size_t offset, const void *src,
                               size_t bytes);
/* Blocking read of buf[offset, offset+bytes) into dst, ordered after earlier work. Reports execution
 * errors of earlier work. */
clt_status clt__transfer_read(clt_context *ctx, cl_mem buf, size_t offset, void *dst, size_t bytes);

/* ---------------------------------------------------- parallel_copy.c */

/* memcpy split over up to 4 short-lived threads for large copies (staging <-> user memory). */
void clt__parallel_copy(void *dst, const void *src, size_t bytes);

/* ----------------------------------------------------------- future.c */

/* Enqueue a non-blocking read of buf[offset, offset+bytes) into library-owned host memory (a pinned
 * ring slot for small reads) and return a future for it (public clt_future API). */
clt_status clt__future_read(clt_context *ctx, cl_mem buf, size_t offset, size_t bytes,
                            clt_future **out);

/* A future completed by another layer (the dist collectives): clt_future_poll / wait / get call
 * hooks->progress(state, block, who), which returns CLT_SUCCESS once complete, CLT_ERR_NOT_READY
 * while not (block == 0 only), or the failure (recorded on the context). clt_future_free (and the
 * context's teardown) calls hooks->release(state) once. Such a future carries no data (get with
 * bytes == 0). */
typedef struct clt__future_hooks {
    clt_status (*progress)(void *state, int block, const char *who);
    void (*release)(void *state);
} clt__future_hooks;
clt_status clt__future_custom(clt_context *ctx, const clt__future_hooks *hooks, void *state,
                              clt_future **out);

/* transfer.c: a CL_MEM_ALLOC_HOST_PTR buffer of `bytes`, mapped for good without waiting for work on
 * ctx->queue (OpenCL error returned, mem NULL, on failure), and its unmap (waited for) + release. */
cl_int clt__pinned_create(clt_context *ctx, size_t bytes, cl_mem *mem, unsigned char **ptr);
void clt__pinned_release(clt_context *ctx, cl_mem mem, void *ptr);

/* -------------------------------------------------------- workspace.c */

#define CLT_WORKSPACE_SLOTS 11

/* Persistent per-context scratch buffers, one per slot (0 .. CLT_WORKSPACE_SLOTS-1). Owners:
 * 0 reductions, 1 conv columns (forward im2col, grad-weight columns), 2 conv backward, 3 pooling,
 * 4 GEMM split-K, 5 loss reductions and clip_grad_norm, 6 FFT intermediates, 7 norm split
 * statistics (layer norm dgamma / dbeta, batch norm channel statistics), 8 attention backward row
 * deltas, 9 attention backward dQ tickets, 10 the wgmma GEMM's packed operands. Returns a buffer
 * of at least `bytes` that lives until the context is destroyed or the slot grows. *fresh is 1
 * when the buffer was just created (its contents are undefined: the caller initialises what it
 * needs once), 0 when it is the one handed out before, contents as the last user left them.
 * Growing returns the old buffer to the pool, which is safe because the in-order queue runs work
 * already enqueued on it first. */
clt_status clt__workspace_get(clt_context *ctx, int slot, size_t bytes, cl_mem *out, int *fresh);
/* A workspace buffer that starts with `head` bytes of counters for "last group finishes" kernels:
 * zero-filled (one enqueued fill, recorded by the profiler under `who`) when the buffer is new;
 * afterwards the kernels leave them at zero. `bytes` more follow the counters. */
clt_status clt__workspace_get_counted(clt_context *ctx, int slot, size_t head, size_t bytes,
                                      const char *who, cl_mem *out);
/* Give every workspace buffer back (context teardown, before the pool goes). */
void clt__workspace_release_all(clt_context *ctx);

#endif /* CLT_MEMORY_H */
