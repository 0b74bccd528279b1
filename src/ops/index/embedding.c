/* clt_embedding, clt_embedding_backward and clt_one_hot: rows addressed by token ids. */
#include "ops/index/index_internal.h"
#include "ops/common/launch.h"
#include "program/program.h"

/* ids S, rows [V, D], per-token tensor S + [D]. */
static clt_status check_rows(const char *who, const clt_tensor *ids, const clt_tensor *table,
                             const char *tn, const clt_tensor *tok, const char *kn)
{
    clt_status st;
    if ((st = clt__check_dtype(who, ids, "ids", CLT_I32)) ||
        (st = clt__check_dtype(who, table, tn, CLT_F32)) ||
        (st = clt__check_dtype(who, tok, kn, CLT_F32)))
        return st;
    if (table->ndim != 2)
        return clt__fail(ids->ctx, CLT_ERR_INVALID_SHAPE, "%s: %s has %d axes, expected 2 ([V, D])",
                         who, tn, table->ndim);
    if (ids->ndim >= CLT_MAX_DIMS)
        return clt__fail(ids->ctx, CLT_ERR_INVALID_SHAPE, "%s: ids has %d axes, at most %d", who,
                         ids->ndim, CLT_MAX_DIMS - 1);
    int64_t want[CLT_MAX_DIMS];
    for (int d = 0; d < ids->ndim; d++)
        want[d] = ids->shape[d];
    want[ids->ndim] = table->shape[1];
    return clt__check_shape(who, tok, kn, ids->ndim + 1, want);
}

clt_status clt_embedding(const clt_tensor *ids, const clt_tensor *weight, clt_tensor *out)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_embedding";
    static const char *const names[3] = {"ids", "weight", "out"};
    const clt_tensor *t[3] = {ids, weight, out};
    clt_status st;
    if ((st = clt__check_handles(who, 3, t, names)) ||
        (st = check_rows(who, ids, weight, "weight", out, "out")) ||
        (st = clt__check_no_overlap(who, weight, "weight", out, "out")) ||
        (st = clt__check_no_overlap(who, ids, "ids", out, "out")))
        return st;
    clt__sd s = {0};
    s.ndim = 1;
    int rows = clt__cpu_style(ids->ctx) && weight->shape[1] > 0; /* CPUs: one item per token */
    s.count = rows ? ids->numel : out->numel;
    s.e0 = weight->shape[1];
    s.e1 = weight->shape[0];
    s.a_off = clt__elem_off(weight);
    s.b_off = clt__elem_off(out);
    s.c[0] = clt__elem_off(ids);
    return clt__index_run(ids->ctx, rows ? "index_embedding_rows" : "index_embedding", out->storage->mem,
                          weight->storage->mem, &s, ids->storage->mem, who);
}

/* The GPUs' deterministic backward (index.cl, index_embedding_bwd_owner): one group of
 * OWNER_GROUP items per dweight row and block of OWNER_GROUP columns. */
#define OWNER_GROUP 64 /* index.cl's EB_WG */

static clt_status owner_groups(clt_context *ctx, clt__sd *s, clt_tensor *dweight,
                               const clt_tensor *dy, const clt_tensor *ids, const char *who)
{
    const uint64_t blocks = ((uint64_t)dweight->shape[1] + OWNER_GROUP - 1) / OWNER_GROUP;
    const uint64_t items = (uint64_t)dweight->shape[0] * blocks * OWNER_GROUP;
    if (items > (uint64_t)SIZE_MAX / 2)
        return clt__fail(ctx, CLT_ERR_SIZE_OVERFLOW, "%s: dweight of %lld rows too large", who,
                         (long long)dweight->shape[0]);
    cl_kernel k;
    clt_status st = clt__kernel_get(ctx, CLT__INDEX_FAMILY, "", "index_embedding_bwd_owner", &k);
    if (st)
        return st;
    if (clt__group_limit(ctx, k) < OWNER_GROUP)
        return clt__fail(ctx, CLT_ERR_UNSUPPORTED,
                         "%s: the deterministic mode needs work-groups of %d items, the device "
                         "allows %zu",
                         who, OWNER_GROUP, clt__group_limit(ctx, k));
    s->count = (int64_t)items;
    cl_mem im = ids->storage->mem;
    if ((st = clt__sd_set_args(ctx, k, dweight->storage->mem, dy->storage->mem, s, who)) ||
        (st = clt__set_arg(ctx, k, 3, sizeof(cl_mem), &im, who)))
        return st;
    size_t global = (size_t)items, local = OWNER_GROUP;
    return clt__enqueue_kernel(ctx, k, 1, &global, &local, who);
}

clt_status clt_embedding_backward(const clt_tensor *ids, const clt_tensor *dy,
                                  clt_embedding_grad_mode mode, int accumulate, clt_tensor *dweight)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_embedding_backward";
    static const char *const names[3] = {"ids", "dy", "dweight"};
    const clt_tensor *t[3] = {ids, dy, dweight};
    clt_status st;
    if ((st = clt__check_handles(who, 3, t, names)) ||
        (st = check_rows(who, ids, dweight, "dweight", dy, "dy")) ||
        (st = clt__check_no_overlap(who, dy, "dy", dweight, "dweight")) ||
        (st = clt__check_no_overlap(who, ids, "ids", dweight, "dweight")))
        return st;
    if (mode != CLT_EMBEDDING_GRAD_ATOMIC && mode != CLT_EMBEDDING_GRAD_DETERMINISTIC)
        return clt__fail(ids->ctx, CLT_ERR_INVALID_ARGUMENT, "%s: unknown mode %d", who, (int)mode);
    clt_context *ctx = ids->ctx;
    clt__sd s = {0};
    s.ndim = 1;
    s.e0 = dweight->shape[1];
    s.e1 = dweight->shape[0];
    s.a_off = clt__elem_off(dy);
    s.b_off = clt__elem_off(dweight);
    s.c[0] = clt__elem_off(ids);
    /* CPUs run the atomic mode as the deterministic one: one launch per row owner, no fill and no
     * atomics (any order of the sums is allowed there) */
    if (mode == CLT_EMBEDDING_GRAD_DETERMINISTIC || clt__cpu_style(ctx)) {
        s.c[1] = ids->numel;
        s.c[2] = accumulate != 0;
        if (dweight->numel == 0)
            return CLT_SUCCESS;
        if (clt__cpu_style(ctx)) {
            s.count = dweight->shape[0];
            return clt__index_run(ctx, "index_embedding_bwd_owner_rows", dweight->storage->mem,
                                  dy->storage->mem, &s, ids->storage->mem, who);
        }
        return owner_groups(ctx, &s, dweight, dy, ids, who);
    }
    if (!accumulate && dweight->numel > 0) {
        /* Build the scatter first: a kernel that fails to build must leave dweight untouched. */
        cl_kernel k;
        if ((st = clt__kernel_get(ctx, CLT__INDEX_FAMILY, "", "index_embedding_bwd_atomic", &k)))
            return st;
        if ((st = clt_tensor_fill(dweight, 0.0)))
            return st;
    }
    s.count = dy->numel;
    return clt__index_run(ctx, "index_embedding_bwd_atomic", dweight->storage->mem,
                          dy->storage->mem, &s, ids->storage->mem, who);
}

clt_status clt_one_hot(const clt_tensor *ids, clt_tensor *out)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_one_hot";
    static const char *const names[2] = {"ids", "out"};
    const clt_tensor *t[2] = {ids, out};
    clt_status st;
    if ((st = clt__check_handles(who, 2, t, names)) ||
        (st = clt__check_dtype(who, ids, "ids", CLT_I32)) ||
        (st = clt__check_dtype(who, out, "out", CLT_F32)) ||
        (st = clt__check_no_overlap(who, ids, "ids", out, "out")))
        return st;
    if (out->ndim != ids->ndim + 1)
        return clt__fail(ids->ctx, CLT_ERR_INVALID_SHAPE,
                         "%s: out has %d axes, expected ids' %d plus the class axis", who, out->ndim,
                         ids->ndim);
    int64_t want[CLT_MAX_DIMS];
    for (int d = 0; d < ids->ndim; d++)
        want[d] = ids->shape[d];
    want[ids->ndim] = out->shape[ids->ndim];
    if ((st = clt__check_shape(who, out, "out", ids->ndim + 1, want)))
        return st;
    clt__sd s = {0};
    s.ndim = 1;
    s.count = out->numel;
    s.e0 = out->shape[ids->ndim];
    s.b_off = clt__elem_off(out);
    s.c[0] = clt__elem_off(ids);
    return clt__index_run(ids->ctx, "index_one_hot", out->storage->mem, out->storage->mem, &s,
                          ids->storage->mem, who);
}
