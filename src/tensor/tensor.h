/* Tensor layer: device-resident tensors and their storage. Internal. Ops read these fields directly. */
#ifndef CLT_TENSOR_H
#define CLT_TENSOR_H

#include "memory/memory.h"
#include "runtime/runtime.h"

/* Device memory shared by a tensor and its views. Freed (back to the pool, or released when it wraps
 * a user cl_mem) when the last tensor referring to it is freed. */
typedef struct clt_storage {
    clt_context *ctx;
    clt_block *block; /* from the pool; NULL when wrapping a user buffer */
    cl_mem mem;       /* block->mem, or the wrapped buffer (retained) */
    size_t bytes;     /* usable bytes from offset 0 */
    int refs;
} clt_storage;

struct clt_tensor {
    clt_context *ctx;
    clt_storage *storage;
    size_t offset;   /* bytes from the start of storage->mem */
    clt_dtype dtype;
    int ndim;
    int64_t shape[CLT_MAX_DIMS];
    int64_t numel;
    size_t nbytes;
    struct clt_tensor *prev, *next; /* in ctx->tensors */
};

/* Validate dtype/ndim/shape and compute numel and bytes. `who` names the public call for messages. */
clt_status clt__shape_check(const clt_context *ctx, const char *who, clt_dtype dtype, int ndim,
                            const int64_t *shape, int64_t *numel, size_t *nbytes);

/* Do a and b share bytes (same buffer, intersecting byte ranges; empty tensors share none)? The one
 * test behind every op's aliasing rule. */
int clt__tensors_overlap(const clt_tensor *a, const clt_tensor *b);

/* Free every tensor handle still alive on ctx (clt_context_free: nothing may outlive it, and a
 * wrapped user buffer must get its reference back). */
void clt__tensor_release_all(clt_context *ctx);

#endif /* CLT_TENSOR_H */
