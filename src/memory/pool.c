/* The per-context buffer pool: freed device buffers are kept in size classes and handed out again.
 * Classes: 256 bytes, then 8 per power of two (waste <= 12.5%), so a request maps to its class index
 * by arithmetic and each class has its own free list. */
#include <limits.h>
#include <stdlib.h>

#include "memory/memory.h"

#define POOL_MIN_SHIFT 8 /* smallest class: 256 bytes */
#define POOL_STEPS_SHIFT 3 /* 8 classes per power of two */
#define POOL_CLASSES (1 + (64 - POOL_MIN_SHIFT) * (1 << POOL_STEPS_SHIFT))

struct clt_pool {
    uint64_t limit;
    clt_block *free_lists[POOL_CLASSES];
    clt_block *in_use;
    clt_pool_stats stats;
    cl_mem empty; /* the placeholder of every empty tensor (clt__pool_empty_mem), or NULL */
};

static int floor_log2(size_t x) { return (int)(sizeof(size_t) * CHAR_BIT - 1) - __builtin_clzl(x); }

/* Class index and class size of a request; index -1 when the class size would overflow size_t. */
static int class_of(size_t bytes, size_t *class_bytes)
{
    if (bytes <= ((size_t)1 << POOL_MIN_SHIFT)) {
        *class_bytes = (size_t)1 << POOL_MIN_SHIFT;
        return 0;
    }
    int e = floor_log2(bytes - 1); /* 2^e < bytes <= 2^(e+1) */
    size_t base = (size_t)1 << e;
    size_t step = base >> POOL_STEPS_SHIFT;
    size_t k = (bytes - base + step - 1) / step; /* 1..8 */
    if (e == (int)(sizeof(size_t) * CHAR_BIT - 1) && k == ((size_t)1 << POOL_STEPS_SHIFT)) {
        *class_bytes = SIZE_MAX;
        return -1;
    }
    *class_bytes = base + k * step;
    return 1 + (e - POOL_MIN_SHIFT) * (1 << POOL_STEPS_SHIFT) + (int)(k - 1);
}

size_t clt__pool_class_bytes(size_t bytes)
{
    size_t c;
    class_of(bytes, &c);
    return c;
}

static void list_push(clt_block **head, clt_block *b)
{
    b->prev = NULL;
    b->next = *head;
    if (*head)
        (*head)->prev = b;
    *head = b;
}

static void list_unlink(clt_block **head, clt_block *b)
{
    if (b->prev)
        b->prev->next = b->next;
    else
        *head = b->next;
    if (b->next)
        b->next->prev = b->prev;
    b->prev = b->next = NULL;
}

static void block_destroy(clt_block *b)
{
    clReleaseMemObject(b->mem);
    free(b);
}

clt_status clt__pool_create(clt_context *ctx, uint64_t limit, struct clt_pool **out)
{
    *out = NULL;
    struct clt_pool *pool = calloc(1, sizeof *pool);
    if (!pool)
        return clt__fail(ctx, CLT_ERR_OUT_OF_HOST_MEMORY, "creating the buffer pool: out of host memory");
    pool->limit = limit;
    pool->stats.limit = limit;
    *out = pool;
    return CLT_SUCCESS;
}

/* Release cached blocks, largest classes first, until in_use + cached + need <= limit (need = 0 and
 * limit = 0 release everything). */
static void trim_until(struct clt_pool *pool, uint64_t need, uint64_t limit)
{
    for (int c = POOL_CLASSES - 1; c >= 0; c--) {
        while (pool->free_lists[c]) {
            if (limit && pool->stats.bytes_in_use + pool->stats.bytes_cached + need <= limit)
                return;
            clt_block *b = pool->free_lists[c];
            list_unlink(&pool->free_lists[c], b);
            pool->stats.bytes_cached -= b->bytes;
            block_destroy(b);
        }
    }
}

void clt__pool_trim(struct clt_pool *pool)
{
    if (pool)
        trim_until(pool, 0, 0);
}

void clt__pool_destroy(struct clt_pool *pool)
{
    if (!pool)
        return;
    trim_until(pool, 0, 0);
    if (pool->empty)
        clReleaseMemObject(pool->empty);
    while (pool->in_use) {
        clt_block *b = pool->in_use;
        list_unlink(&pool->in_use, b);
        block_destroy(b);
    }
    free(pool);
}

static int is_alloc_failure(cl_int err)
{
    return err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES ||
           err == CL_INVALID_BUFFER_SIZE;
}

static void take_block(struct clt_pool *pool, clt_block *b)
{
    list_push(&pool->in_use, b);
    pool->stats.bytes_in_use += b->bytes;
    if (pool->stats.bytes_in_use > pool->stats.peak_bytes_in_use)
        pool->stats.peak_bytes_in_use = pool->stats.bytes_in_use;
}

/* A new device buffer of `size` bytes, within the cap; trims the cache once when that helps. */
static clt_status create_block(clt_context *ctx, struct clt_pool *pool, size_t size, size_t request,
                               clt_block **out)
{
    uint64_t limit = pool->limit;
    if (limit && pool->stats.bytes_in_use + pool->stats.bytes_cached + size > limit) {
        /* Trim only when dropping the cache makes room: a refused request changes nothing. */
        if (pool->stats.bytes_in_use + size > limit)
            return clt__fail(ctx, CLT_ERR_OUT_OF_DEVICE_MEMORY,
                             "pool limit of %llu bytes: in use %llu, requested %zu (the size class "
                             "of a %zu-byte request)",
                             (unsigned long long)limit,
                             (unsigned long long)pool->stats.bytes_in_use, size, request);
        trim_until(pool, size, limit);
    }
    clt_block *b = malloc(sizeof *b);
    if (!b)
        return clt__fail(ctx, CLT_ERR_OUT_OF_HOST_MEMORY, "device allocation: out of host memory");
    cl_int err = CL_SUCCESS;
    b->mem = clCreateBuffer(ctx->dev->cl_ctx, CL_MEM_READ_WRITE, size, NULL, &err);
    if (err != CL_SUCCESS && is_alloc_failure(err) && pool->stats.bytes_cached > 0) {
        clt__log("pool: clCreateBuffer(%zu) failed with %s, releasing %llu cached bytes and retrying",
                 size, clt__cl_error_name(err), (unsigned long long)pool->stats.bytes_cached);
        trim_until(pool, 0, 0);
        b->mem = clCreateBuffer(ctx->dev->cl_ctx, CL_MEM_READ_WRITE, size, NULL, &err);
    }
    if (err != CL_SUCCESS) {
        free(b);
        if (is_alloc_failure(err))
            return clt__fail(ctx, CLT_ERR_OUT_OF_DEVICE_MEMORY,
                             "clCreateBuffer(%zu bytes) failed: %s (%d), with %llu bytes in use "
                             "and the cache released",
                             size, clt__cl_error_name(err), (int)err,
                             (unsigned long long)pool->stats.bytes_in_use);
        return clt__cl_fail(ctx, err, "clCreateBuffer");
    }
    b->bytes = size;
    b->prev = b->next = NULL;
    *out = b;
    return CLT_SUCCESS;
}

clt_status clt__pool_alloc(clt_context *ctx, size_t bytes, clt_block **out)
{
    *out = NULL;
    struct clt_pool *pool = ctx->pool;
    uint64_t max_alloc = ctx->dev->entry->info.max_alloc_bytes;
    if (max_alloc && bytes > max_alloc)
        return clt__fail(ctx, CLT_ERR_OUT_OF_DEVICE_MEMORY,
                         "%zu bytes requested, more than the device allows in one buffer (%llu "
                         "bytes)",
                         bytes, (unsigned long long)max_alloc);
    size_t size;
    int cls = class_of(bytes, &size);
    if (cls < 0 || (max_alloc && size > max_alloc)) {
        /* The class would pass the device limit: an exact-size block, never cached (release
         * recognises it because its size is not a class size). */
        size = bytes;
        cls = -1;
    }
    if (cls >= 0 && pool->free_lists[cls]) {
        clt_block *b = pool->free_lists[cls];
        list_unlink(&pool->free_lists[cls], b);
        pool->stats.bytes_cached -= b->bytes;
        take_block(pool, b);
        pool->stats.hits++;
        *out = b;
        return CLT_SUCCESS;
    }
    clt_block *b = NULL;
    clt_status st = create_block(ctx, pool, size, bytes, &b);
    if (st != CLT_SUCCESS)
        return st;
    take_block(pool, b);
    pool->stats.misses++;
    *out = b;
    return CLT_SUCCESS;
}

clt_status clt__pool_empty_mem(clt_context *ctx, cl_mem *out)
{
    struct clt_pool *pool = ctx->pool;
    if (!pool->empty) {
        /* Made once per context, outside the limit and the statistics: a few bytes, not a block. */
        cl_int err;
        cl_mem mem = clCreateBuffer(ctx->dev->cl_ctx, CL_MEM_READ_WRITE, 16, NULL, &err);
        if (err != CL_SUCCESS)
            return clt__cl_fail(ctx, err, "clCreateBuffer (the empty-tensor placeholder)");
        pool->empty = mem;
    }
    *out = pool->empty;
    return CLT_SUCCESS;
}

void clt__pool_release(clt_context *ctx, clt_block *block)
{
    if (!block)
        return;
    struct clt_pool *pool = ctx->pool;
    list_unlink(&pool->in_use, block);
    pool->stats.bytes_in_use -= block->bytes;
    size_t size;
    int cls = class_of(block->bytes, &size);
    if (cls < 0 || size != block->bytes) {
        block_destroy(block);
        return;
    }
    list_push(&pool->free_lists[cls], block);
    pool->stats.bytes_cached += block->bytes;
}

void clt__pool_get_stats(const struct clt_pool *pool, clt_pool_stats *stats) { *stats = pool->stats; }

clt_status clt_pool_get_stats(const clt_context *ctx, clt_pool_stats *stats)
{
    CLT_PUBLIC_CALL();
    if (!ctx)
        return clt__fail(NULL, CLT_ERR_INVALID_ARGUMENT, "clt_pool_get_stats: ctx is NULL");
    if (!stats)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "clt_pool_get_stats: stats is NULL");
    clt__pool_get_stats(ctx->pool, stats);
    return CLT_SUCCESS;
}

clt_status clt_pool_trim(clt_context *ctx)
{
    CLT_PUBLIC_CALL();
    if (!ctx)
        return clt__fail(NULL, CLT_ERR_INVALID_ARGUMENT, "clt_pool_trim: ctx is NULL");
    clt__pool_trim(ctx->pool);
    return CLT_SUCCESS;
}
