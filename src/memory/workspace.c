/* Per-context persistent scratch buffers (the workspace): ops that need device scratch space on
 * every launch (the single-launch reductions keep their partials and counters here) get the same
 * buffer each time instead of allocating per op. Buffers come from the pool, so they count against
 * the context's memory cap. */
#include <stdlib.h>

#include "memory/memory.h"
#include "profile/profile.h"

/* Smallest buffer handed out, so that small requests do not grow the slot step by step. */
#define WORKSPACE_MIN_BYTES ((size_t)64 << 10)

struct clt_workspace {
    clt_block *blocks[CLT_WORKSPACE_SLOTS];
};

clt_status clt__workspace_get(clt_context *ctx, int slot, size_t bytes, cl_mem *out, int *fresh)
{
    *out = NULL;
    *fresh = 0;
    if (slot < 0 || slot >= CLT_WORKSPACE_SLOTS)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "workspace: no slot %d", slot);
    if (!ctx->workspace) {
        ctx->workspace = calloc(1, sizeof *ctx->workspace);
        if (!ctx->workspace)
            return clt__fail(ctx, CLT_ERR_OUT_OF_HOST_MEMORY, "workspace: out of host memory");
    }
    clt_block **held = &ctx->workspace->blocks[slot];
    if (*held && (*held)->bytes >= bytes) {
        *out = (*held)->mem;
        return CLT_SUCCESS;
    }
    /* Grow geometrically: a sequence of slightly larger requests reallocates only a few times. */
    size_t want = bytes < WORKSPACE_MIN_BYTES ? WORKSPACE_MIN_BYTES : bytes;
    if (*held && want < (*held)->bytes * 2 && (*held)->bytes <= SIZE_MAX / 2)
        want = (*held)->bytes * 2;
    clt_block *block = NULL;
    clt_status st = clt__pool_alloc(ctx, want, &block);
    if (st != CLT_SUCCESS && want > bytes) /* the headroom may be what does not fit */
        st = clt__pool_alloc(ctx, bytes, &block);
    if (st != CLT_SUCCESS)
        return st;
    /* Work already enqueued on the old buffer runs before anything that reuses it (in-order queue). */
    if (*held)
        clt__pool_release(ctx, *held);
    *held = block;
    *out = block->mem;
    *fresh = 1;
    return CLT_SUCCESS;
}

clt_status clt__workspace_get_counted(clt_context *ctx, int slot, size_t head, size_t bytes,
                                      const char *who, cl_mem *out)
{
    int fresh = 0;
    clt_status st = clt__workspace_get(ctx, slot, head + bytes, out, &fresh);
    if (st != CLT_SUCCESS)
        return st;
    if (fresh) {
        cl_uint zero = 0;
        cl_int err = clEnqueueFillBuffer(ctx->queue, *out, &zero, sizeof zero, 0, head, 0, NULL,
                                         clt__prof_event(ctx));
        if (err != CL_SUCCESS)
            return clt__cl_fail(ctx, err, "clEnqueueFillBuffer (workspace counters)");
        clt__prof_commit(ctx, who, "fill", CLT_PROFILE_TRANSFER, head);
    }
    return CLT_SUCCESS;
}

void clt__workspace_release_all(clt_context *ctx)
{
    if (!ctx->workspace)
        return;
    for (int i = 0; i < CLT_WORKSPACE_SLOTS; i++)
        if (ctx->workspace->blocks[i])
            clt__pool_release(ctx, ctx->workspace->blocks[i]);
    free(ctx->workspace);
    ctx->workspace = NULL;
}
