/* clt_copy_strided, clt_permute, clt_broadcast_to and clt_broadcast_backward: each a single
 * strided-box launch (layout_common.c picks the kernel), except a GPU bias gradient (a sum over
 * leading axes), which is one launch of the reduction's column layout (reduce_plan.h). */
#include "ops/common/launch.h"
#include "ops/layout/layout_internal.h"
#include "ops/reduce/reduce_plan.h"
#include "program/program.h"

static int64_t elem_off(const clt_tensor *t) { return (int64_t)(t->offset / 4); }

clt_status clt_copy_strided(const clt_strided_view *view, clt_tensor *out)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_copy_strided";
    if (!view || !view->base || !out)
        return clt__fail(out ? out->ctx : view && view->base ? view->base->ctx : NULL,
                         CLT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", who,
                         !view ? "view" : !view->base ? "view->base" : "out");
    const clt_tensor *base = view->base;
    clt_context *ctx = base->ctx;
    if (out->ctx != ctx)
        return clt__fail(ctx, CLT_ERR_CONTEXT_MISMATCH, "%s: view->base and out belong to different contexts", who);
    if (view->ndim < 0 || view->ndim > CLT_MAX_DIMS)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: view->ndim %d not in 0..%d", who,
                         view->ndim, CLT_MAX_DIMS);
    clt_status st;
    if ((st = clt__layout_check_pair(who, base, "view->base", out, "out")) ||
        (st = clt__check_shape(who, out, "out", view->ndim, view->shape)))
        return st;
    if (view->offset < 0)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: view->offset %lld is negative", who,
                         (long long)view->offset);
    int64_t last = view->offset, count = 1;
    for (int d = 0; d < view->ndim; d++) {
        if (view->strides[d] < 0)
            return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: view->strides[%d] = %lld is negative",
                             who, d, (long long)view->strides[d]);
        if (view->shape[d] < 0)
            return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: view->shape[%d] = %lld is negative",
                             who, d, (long long)view->shape[d]);
        count *= view->shape[d];
    }
    if (count == 0)
        return CLT_SUCCESS;
    for (int d = 0; d < view->ndim; d++) {
        /* Stays below 2^63: shape * stride of a view inside a real buffer; reject the rest. */
        if (view->strides[d] > 0 && view->shape[d] - 1 > (INT64_MAX / 2 - last) / view->strides[d])
            return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: view reaches past view->base", who);
        last += (view->shape[d] - 1) * view->strides[d];
    }
    if (last >= base->numel)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE,
                         "%s: view reaches element %lld, base has %lld elements", who,
                         (long long)last, (long long)base->numel);
    clt__sd s = {0};
    s.ndim = view->ndim ? view->ndim : 1;
    s.count = count;
    s.a_off = elem_off(base) + view->offset;
    s.b_off = elem_off(out);
    s.shape[0] = 1;
    for (int d = 0; d < view->ndim; d++) {
        s.shape[d] = view->shape[d];
        s.a[d] = view->strides[d];
    }
    clt__contiguous_strides(view->ndim, view->shape, s.b);
    return clt__layout_copy(ctx, out->storage->mem, base->storage->mem, &s, who);
}

clt_status clt_permute(const clt_tensor *x, const int *perm, clt_tensor *out)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_permute";
    static const char *const names[2] = {"x", "out"};
    const clt_tensor *t[2] = {x, out};
    clt_status st = clt__check_handles(who, 2, t, names);
    if (st)
        return st;
    clt_context *ctx = x->ctx;
    if (!perm && x->ndim > 0)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: perm is NULL", who);
    int n = x->ndim, seen[CLT_MAX_DIMS] = {0};
    int64_t shape[CLT_MAX_DIMS], xs[CLT_MAX_DIMS];
    for (int i = 0; i < n; i++) {
        if (perm[i] < 0 || perm[i] >= n || seen[perm[i]])
            return clt__fail(ctx, CLT_ERR_INVALID_AXIS,
                             "%s: perm[%d] = %d: not a permutation of 0..%d", who, i, perm[i], n - 1);
        seen[perm[i]] = 1;
        shape[i] = x->shape[perm[i]];
    }
    if ((st = clt__check_shape(who, out, "out", n, shape)) ||
        (st = clt__layout_check_pair(who, x, "x", out, "out")))
        return st;
    if (x->numel == 0)
        return CLT_SUCCESS;
    clt__contiguous_strides(n, x->shape, xs);
    clt__sd s = {0};
    s.ndim = n ? n : 1;
    s.count = x->numel;
    s.a_off = elem_off(x);
    s.b_off = elem_off(out);
    s.shape[0] = 1;
    for (int i = 0; i < n; i++) {
        s.shape[i] = shape[i];
        s.a[i] = xs[perm[i]];
    }
    clt__contiguous_strides(n, shape, s.b);
    return clt__layout_copy(ctx, out->storage->mem, x->storage->mem, &s, who);
}

/* x's dims aligned with out's (leading 1s); CLT_ERR_INVALID_SHAPE unless each is 1 or equal. */
static clt_status broadcast_shapes(const char *who, const clt_tensor *x, const char *xn,
                                   const clt_tensor *out, const char *on, int64_t *aligned)
{
    int n = out->ndim, ok = x->ndim <= n;
    for (int d = 0; ok && d < n; d++) {
        int xd = d - (n - x->ndim);
        aligned[d] = xd >= 0 ? x->shape[xd] : 1;
        ok = aligned[d] == out->shape[d] || aligned[d] == 1;
    }
    if (ok)
        return CLT_SUCCESS;
    char a[160], b[160];
    clt__shape_text(x->ndim, x->shape, a, sizeof a);
    clt__shape_text(out->ndim, out->shape, b, sizeof b);
    return clt__fail(x->ctx, CLT_ERR_INVALID_SHAPE, "%s: %s of shape %s does not broadcast to %s %s",
                     who, xn, a, on, b);
}

clt_status clt_broadcast_to(const clt_tensor *x, clt_tensor *out)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_broadcast_to";
    static const char *const names[2] = {"x", "out"};
    const clt_tensor *t[2] = {x, out};
    int64_t aligned[CLT_MAX_DIMS], xs[CLT_MAX_DIMS];
    clt_status st;
    if ((st = clt__check_handles(who, 2, t, names)) ||
        (st = clt__layout_check_pair(who, x, "x", out, "out")) ||
        (st = broadcast_shapes(who, x, "x", out, "out", aligned)))
        return st;
    if (out->numel == 0)
        return CLT_SUCCESS;
    int n = out->ndim;
    clt__contiguous_strides(n, aligned, xs);
    clt__sd s = {0};
    s.ndim = n ? n : 1;
    s.count = out->numel;
    s.a_off = elem_off(x);
    s.b_off = elem_off(out);
    s.shape[0] = 1;
    for (int d = 0; d < n; d++) {
        s.shape[d] = out->shape[d];
        s.a[d] = aligned[d] == 1 ? 0 : xs[d];
    }
    clt__contiguous_strides(n, out->shape, s.b);
    return clt__layout_copy(x->ctx, out->storage->mem, x->storage->mem, &s, who);
}

clt_status clt_broadcast_backward(const clt_tensor *dy, clt_tensor *dx)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_broadcast_backward";
    static const char *const names[2] = {"dy", "dx"};
    const clt_tensor *t[2] = {dy, dx};
    int64_t aligned[CLT_MAX_DIMS], ys[CLT_MAX_DIMS], xs[CLT_MAX_DIMS];
    clt_status st;
    if ((st = clt__check_handles(who, 2, t, names)) ||
        (st = clt__check_dtype(who, dy, "dy", CLT_F32)) ||
        (st = clt__check_dtype(who, dx, "dx", CLT_F32)) ||
        (st = clt__check_no_overlap(who, dy, "dy", dx, "dx")) ||
        (st = broadcast_shapes(who, dx, "dx", dy, "dy", aligned)))
        return st;
    if (dx->numel == 0)
        return CLT_SUCCESS;
    int n = dy->ndim;
    clt__contiguous_strides(n, dy->shape, ys);
    clt__contiguous_strides(n, aligned, xs);
    clt__sd s = {0};
    s.a_off = elem_off(dy);
    s.b_off = elem_off(dx);
    s.count = dx->numel;
    int kept = 0, red = 0;
    int64_t rcount = 1;
    for (int d = 0; d < n; d++) {
        if (aligned[d] == 1 && dy->shape[d] != 1) {
            s.c[red] = dy->shape[d];
            s.d[red] = ys[d];
            rcount *= dy->shape[d];
            red++;
        } else {
            s.shape[kept] = dy->shape[d];
            s.a[kept] = ys[d];
            s.b[kept] = xs[d];
            kept++;
        }
    }
    if (kept == 0) {
        s.shape[0] = 1;
        kept = 1;
    }
    s.ndim = kept;
    s.e0 = red;
    s.e1 = rcount; /* 0 when dy is empty: dx is all zeros */
    /* Only leading axes reduced, dx contiguous at the end of dy's layout: a bias gradient. */
    int leading = red > 0;
    for (int d = 0, seen_kept = 0; d < n; d++) {
        int reduced = aligned[d] == 1 && dy->shape[d] != 1;
        if (!reduced && dy->shape[d] != 1)
            seen_kept = 1;
        if (reduced && seen_kept)
            leading = 0;
    }
    if (leading && clt__cpu_style(dy->ctx)) {
        /* 64 columns per item (layout_cpu.cl) while that leaves 4 items per compute unit, else 16:
         * more bytes per row for the hardware prefetcher */
        uint64_t cb = (uint64_t)s.count >= 256 * (uint64_t)dy->ctx->dev->entry->info.compute_units ? 64 : 16;
        cl_kernel k;
        if ((st = cb == 64 ? clt__kernel_get(dy->ctx, "layout_cpu", "", "layout_sum_leading_cpu64", &k)
                           : clt__kernel_get(dy->ctx, CLT__LAYOUT_FAMILY, "", "layout_sum_leading_cpu", &k)))
            return st;
        if ((st = clt__sd_set_args(dy->ctx, k, dx->storage->mem, dy->storage->mem, &s, who)))
            return st;
        return clt__launch_1d_group(dy->ctx, k, (uint64_t)((s.count + cb - 1) / cb), 1, who);
    }
    /* GPUs: the column layout of the single-launch reduction, whose chunk groups split the rows
     * over the whole device (layout_sum_broadcast runs one item per column down all the rows:
     * 512 items for 8192 x 512, 363 us on an H200 against a 4 us read of dy) */
    if (leading)
        return clt__reduce_sum_leading(who, dy, (uint64_t)rcount, dx);
    return clt__layout_run(dy->ctx, "layout_sum_broadcast", dx->storage->mem, dy->storage->mem, &s,
                           who);
}
