/* clt_concat, clt_split, clt_stack, clt_unstack: a piece is a window of the joined tensor along one
 * axis (stack: a window of extent 1 on the new axis), so all four share `pieces`, which checks
 * every piece first (nothing is enqueued unless all pass) and then copies groups of up to 4 pieces
 * into or out of their windows, one launch per group (layout_join4, or layout_join4_x4 in 16-byte
 * units when the rows and offsets are multiples of 4 elements). */
#include <stdio.h>
#include <stdlib.h>

#include "ops/common/launch.h"
#include "ops/layout/layout_internal.h"
#include "program/program.h"

static int64_t elem_off(const clt_tensor *t) { return (int64_t)(t->offset / 4); }

int clt__join_ilp(void)
{
    const char *e = getenv("CLT_JOIN_ILP");
    int v = e ? atoi(e) : LT_JOIN_ILP;
    return v == 1 || v == 2 || v == 4 || v == 8 ? v : LT_JOIN_ILP;
}

uint64_t clt__join_groups_per_cu(void)
{
    const char *e = getenv("CLT_JOIN_GROUPS_PER_CU");
    long long v = e ? atoll(e) : -1;
    return v >= 0 ? (uint64_t)v : LT_JOIN_GROUPS_PER_CU;
}

const char *clt__join_options(int ilp)
{
    switch (ilp) {
    case 2: return "-DLT_JOIN_ILP=2";
    case 4: return "-DLT_JOIN_ILP=4";
    case 8: return "-DLT_JOIN_ILP=8";
    default: return "";
    }
}

/* CPUs: one strided copy per piece (the per-row copy kernel, which POCL vectorises; layout_join4's
 * per-element divisions measured 5x slower there: concat3_last/8x1024x256 20.6 -> 112 ms). */
static clt_status per_piece(clt_context *ctx, const char *who, const clt_tensor *joined, int n,
                            const clt_tensor *const *parts, int axis, int new_axis, int to_joined)
{
    int64_t js[CLT_MAX_DIMS];
    clt__contiguous_strides(joined->ndim, joined->shape, js);
    int64_t at = 0;
    for (int i = 0; i < n; i++) {
        const clt_tensor *p = parts[i];
        int64_t extent = new_axis ? 1 : p->shape[axis];
        clt__sd s = {0};
        s.ndim = joined->ndim;
        s.count = p->numel;
        int64_t *jstr = to_joined ? s.b : s.a, *pstr = to_joined ? s.a : s.b;
        int64_t ps[CLT_MAX_DIMS];
        clt__contiguous_strides(p->ndim, p->shape, ps);
        for (int d = 0, m = 0; d < joined->ndim; d++) {
            s.shape[d] = d == axis ? extent : joined->shape[d];
            jstr[d] = js[d];
            pstr[d] = d == axis && new_axis ? 0 : ps[m++];
        }
        int64_t joff = elem_off(joined) + at * js[axis];
        s.a_off = to_joined ? elem_off(p) : joff;
        s.b_off = to_joined ? joff : elem_off(p);
        at += extent;
        if (s.count == 0)
            continue;
        cl_mem dst = to_joined ? joined->storage->mem : p->storage->mem;
        cl_mem src = to_joined ? p->storage->mem : joined->storage->mem;
        clt_status st = clt__layout_copy(ctx, dst, src, &s, who);
        if (st)
            return st;
    }
    return CLT_SUCCESS;
}

/* Whether layout_join4_x4 can copy group s (its `used` pieces filled in): every piece row, piece
 * offset, the joined row, the window start and the joined offset a multiple of 4 elements (16-byte
 * units that never straddle two pieces), and every offset reached below 2^31. */
static int join_x4_fits(const clt__sd *s, int used, const clt_tensor *joined)
{
    const int64_t inner = s->e1, lim = INT32_MAX;
    int64_t outer = s->count / (s->e0 * inner);
    if ((s->e[4] * inner) % 4 || (s->e[5] * inner) % 4 || s->b_off % 4 ||
        s->b_off + joined->numel >= lim)
        return 0;
    for (int u = 0; u < used; u++) {
        int64_t row = s->d[u] * inner;
        if (row % 4 || s->c[u] % 4 || s->c[u] + outer * row >= lim)
            return 0;
    }
    return 1;
}

/* joined: the whole tensor; parts[i]: the pieces; to_joined: concat/stack (1) or split/unstack (0);
 * new_axis: stack/unstack (pieces lack `axis`). */
static clt_status pieces(const char *who, const clt_tensor *joined, const char *jn, int n,
                         const clt_tensor *const *parts, int axis_in, int new_axis, int to_joined)
{
    if (!joined)
        return clt__fail(n > 0 && parts && parts[0] ? parts[0]->ctx : NULL,
                         CLT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", who, jn);
    clt_context *ctx = joined->ctx;
    if (n < 1 || !parts)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: need n >= 1 pieces (got %d%s)", who, n,
                         parts ? "" : ", NULL array");
    int axis;
    clt_status st = clt__layout_axis(who, ctx, axis_in, joined->ndim, &axis);
    if (st)
        return st;
    if (new_axis && joined->shape[axis] != n)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: %s has %lld along axis %d, expected n = %d",
                         who, jn, (long long)joined->shape[axis], axis, n);
    int64_t total = 0;
    for (int i = 0; i < n; i++) {
        const clt_tensor *p = parts[i];
        char name[32];
        snprintf(name, sizeof name, "%s[%d]", to_joined ? "xs" : "outs", i);
        if (!p)
            return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", who, name);
        if (p->ctx != ctx)
            return clt__fail(ctx, CLT_ERR_CONTEXT_MISMATCH, "%s: %s and %s belong to different contexts",
                             who, name, jn);
        if (to_joined)
            st = clt__layout_check_pair(who, p, name, joined, jn);
        else
            st = clt__layout_check_pair(who, joined, jn, p, name);
        if (st)
            return st;
        int64_t want[CLT_MAX_DIMS];
        int m = 0;
        for (int d = 0; d < joined->ndim; d++) {
            if (d == axis && new_axis)
                continue;
            want[m++] = d == axis ? p->ndim == joined->ndim ? p->shape[d] : -1 : joined->shape[d];
        }
        if (p->ndim != m || (st = clt__check_shape(who, p, name, m, want)))
            return st ? st
                      : clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: %s has %d axes, expected %d", who,
                                  name, p->ndim, m);
        total += new_axis ? 1 : p->shape[axis];
        /* Outputs must not overlap one another either. */
        for (int j = 0; !to_joined && j < i; j++)
            if ((st = clt__check_no_overlap(who, parts[j], "another output", p, name)))
                return st;
    }
    if (total != joined->shape[axis])
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE,
                         "%s: the pieces sum to %lld along axis %d, %s has %lld", who,
                         (long long)total, axis, jn, (long long)joined->shape[axis]);
    if (joined->numel == 0)
        return CLT_SUCCESS;
    if (clt__cpu_style(ctx))
        return per_piece(ctx, who, joined, n, parts, axis, new_axis, to_joined);
    /* GPUs: groups of up to 4 pieces, one launch each (layout_join4 or layout_join4_x4); empty
     * pieces take no slot. */
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; d++)
        outer *= joined->shape[d];
    for (int d = axis + 1; d < joined->ndim; d++)
        inner *= joined->shape[d];
    cl_kernel k1, k4;
    const int ilp = clt__join_ilp();
    if ((st = clt__kernel_get(ctx, CLT__LAYOUT_FAMILY, "", "layout_join4", &k1)) ||
        (st = clt__kernel_get(ctx, CLT__LAYOUT_FAMILY, clt__join_options(ilp), "layout_join4_x4",
                              &k4)))
        return st;
    int64_t at = 0;
    int i = 0;
    while (i < n) {
        clt__sd s = {0};
        cl_mem mems[4];
        int used = 0;
        int64_t first = at;
        while (i < n && used < 4) {
            const clt_tensor *p = parts[i++];
            int64_t extent = new_axis ? 1 : p->shape[axis];
            if (extent == 0)
                continue;
            s.e[used] = at - first;
            s.d[used] = extent;
            s.c[used] = elem_off(p);
            mems[used] = p->storage->mem;
            at += extent;
            used++;
        }
        if (used == 0)
            continue;
        for (int u = used; u < 4; u++) { /* unused slots: at the window's end, never chosen */
            s.e[u] = at - first;
            s.d[u] = 0;
            mems[u] = mems[0];
        }
        s.e0 = at - first;
        s.e1 = inner;
        s.e[4] = joined->shape[axis];
        s.e[5] = first;
        s.ndim = 1;
        s.shape[0] = 1;
        s.a_off = to_joined;
        s.b_off = elem_off(joined);
        s.count = outer * (at - first) * inner;
        if (s.count == 0)
            continue;
        int x4 = join_x4_fits(&s, used, joined);
        cl_kernel k = x4 ? k4 : k1;
        if ((st = clt__set_arg(ctx, k, 0, sizeof(cl_mem), &joined->storage->mem, who)))
            return st;
        for (int u = 0; u < 4; u++)
            if ((st = clt__set_arg(ctx, k, (cl_uint)(1 + u), sizeof(cl_mem), &mems[u], who)))
                return st;
        if ((st = clt__set_arg(ctx, k, 5, sizeof s, &s, who)))
            return st;
        uint64_t items = x4 ? ((uint64_t)s.count / 4 + (uint64_t)ilp - 1) / (uint64_t)ilp
                            : (uint64_t)s.count;
        if ((st = x4 ? clt__launch_1d_capped(ctx, k, items, clt__join_groups_per_cu(), who)
                     : clt__launch_1d(ctx, k, items, who)))
            return st;
    }
    return CLT_SUCCESS;
}

clt_status clt_concat(int n, const clt_tensor *const *xs, int axis, clt_tensor *out)
{
    CLT_PUBLIC_CALL();
    return pieces("clt_concat", out, "out", n, xs, axis, 0, 1);
}

clt_status clt_split(const clt_tensor *x, int axis, int n, clt_tensor *const *outs)
{
    CLT_PUBLIC_CALL();
    return pieces("clt_split", x, "x", n, (const clt_tensor *const *)outs, axis, 0, 0);
}

clt_status clt_stack(int n, const clt_tensor *const *xs, int axis, clt_tensor *out)
{
    CLT_PUBLIC_CALL();
    return pieces("clt_stack", out, "out", n, xs, axis, 1, 1);
}

clt_status clt_unstack(const clt_tensor *x, int axis, int n, clt_tensor *const *outs)
{
    CLT_PUBLIC_CALL();
    return pieces("clt_unstack", x, "x", n, (const clt_tensor *const *)outs, axis, 1, 0);
}
