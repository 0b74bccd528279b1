/* clt_slice and its backward, clt_pad and its backward: one launch each. */
#include <string.h>

#include "ops/common/launch.h"
#include "ops/layout/layout_internal.h"
#include "program/program.h"

static int64_t elem_off(const clt_tensor *t) { return (int64_t)(t->offset / 4); }

/* big: the full tensor (x / dx), small: the slice (out / dy). Checks start/step against both. */
static clt_status check_slice(const char *who, const clt_tensor *big, const char *bn,
                              const clt_tensor *small, const char *sn, const int64_t *start,
                              const int64_t *step)
{
    clt_context *ctx = big->ctx;
    if (small->ndim != big->ndim)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: %s has %d axes, %s has %d", who, sn,
                         small->ndim, bn, big->ndim);
    if (!start && big->ndim > 0)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: start is NULL", who);
    for (int d = 0; d < big->ndim; d++) {
        int64_t st = step ? step[d] : 1, n = small->shape[d];
        if (st < 1)
            return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: step[%d] = %lld, expected >= 1",
                             who, d, (long long)st);
        if (start[d] < 0 || start[d] > big->shape[d])
            return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT,
                             "%s: start[%d] = %lld outside 0..%lld", who, d, (long long)start[d],
                             (long long)big->shape[d]);
        if (n > 0 && (n - 1 > (big->shape[d] - 1 - start[d]) / st || start[d] >= big->shape[d]))
            return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT,
                             "%s: axis %d: %lld elements from %lld by step %lld pass the end (%lld)",
                             who, d, (long long)n, (long long)start[d], (long long)st,
                             (long long)big->shape[d]);
    }
    return CLT_SUCCESS;
}

clt_status clt_slice(const clt_tensor *x, const int64_t *start, const int64_t *step, clt_tensor *out)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_slice";
    static const char *const names[2] = {"x", "out"};
    const clt_tensor *t[2] = {x, out};
    clt_status st;
    if ((st = clt__check_handles(who, 2, t, names)) ||
        (st = clt__layout_check_pair(who, x, "x", out, "out")) ||
        (st = check_slice(who, x, "x", out, "out", start, step)))
        return st;
    if (out->numel == 0)
        return CLT_SUCCESS;
    int n = x->ndim;
    int64_t xs[CLT_MAX_DIMS];
    clt__contiguous_strides(n, x->shape, xs);
    clt__sd s = {0};
    s.ndim = n ? n : 1;
    s.count = out->numel;
    s.a_off = elem_off(x);
    s.b_off = elem_off(out);
    s.shape[0] = 1;
    for (int d = 0; d < n; d++) {
        s.shape[d] = out->shape[d];
        s.a[d] = xs[d] * (step ? step[d] : 1);
        s.a_off += start[d] * xs[d];
    }
    clt__contiguous_strides(n, out->shape, s.b);
    return clt__layout_copy(x->ctx, out->storage->mem, x->storage->mem, &s, who);
}

clt_status clt_slice_backward(const clt_tensor *dy, const int64_t *start, const int64_t *step,
                              clt_tensor *dx)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_slice_backward";
    static const char *const names[2] = {"dy", "dx"};
    const clt_tensor *t[2] = {dy, dx};
    clt_status st;
    if ((st = clt__check_handles(who, 2, t, names)) ||
        (st = clt__layout_check_pair(who, dy, "dy", dx, "dx")) ||
        (st = check_slice(who, dx, "dx", dy, "dy", start, step)))
        return st;
    if (dx->numel == 0)
        return CLT_SUCCESS;
    int n = dx->ndim;
    clt__sd s = {0};
    s.ndim = n ? n : 1;
    s.count = dx->numel;
    s.a_off = elem_off(dy);
    s.b_off = elem_off(dx);
    s.shape[0] = 1;
    s.d[0] = 1;
    s.e[0] = 1;
    clt__contiguous_strides(n, dy->shape, s.a);
    clt__contiguous_strides(n, dx->shape, s.b);
    for (int d = 0; d < n; d++) {
        s.shape[d] = dx->shape[d];
        s.c[d] = start[d];
        s.d[d] = step ? step[d] : 1;
        s.e[d] = dy->shape[d];
    }
    return clt__layout_run(dx->ctx, "layout_slice_backward", dx->storage->mem, dy->storage->mem, &s,
                           who);
}

/* small: x / dx, big: out / dy. */
static clt_status check_pad(const char *who, const clt_tensor *small, const char *sn,
                            const clt_tensor *big, const char *bn, const int64_t *before,
                            const int64_t *after, clt_pad_mode mode)
{
    clt_context *ctx = small->ctx;
    if (mode != CLT_PAD_CONSTANT && mode != CLT_PAD_REFLECT)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: unknown pad mode %d", who, (int)mode);
    int n = small->ndim;
    int64_t want[CLT_MAX_DIMS];
    for (int d = 0; d < n; d++) {
        int64_t b = before ? before[d] : 0, a = after ? after[d] : 0;
        if (b < 0 || a < 0)
            return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT,
                             "%s: axis %d: pads %lld, %lld must be >= 0", who, d, (long long)b,
                             (long long)a);
        if (mode == CLT_PAD_REFLECT && (b > 0 || a > 0)) {
            if (small->shape[d] == 0)
                return clt__fail(ctx, CLT_ERR_INVALID_SHAPE,
                                 "%s: %s axis %d is empty: nothing to reflect", who, sn, d);
            if (b >= small->shape[d] || a >= small->shape[d])
                return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT,
                                 "%s: axis %d: reflect pads %lld, %lld must be < the dim %lld", who,
                                 d, (long long)b, (long long)a, (long long)small->shape[d]);
        }
        if (b > INT64_MAX / 4 || a > INT64_MAX / 4)
            return clt__fail(ctx, CLT_ERR_SIZE_OVERFLOW, "%s: axis %d: pad too large", who, d);
        want[d] = small->shape[d] + b + a;
    }
    return clt__check_shape(who, big, bn, n, want);
}

static void pad_desc(clt__sd *s, const clt_tensor *small, const clt_tensor *big,
                     const int64_t *before)
{
    int n = small->ndim;
    s->ndim = n ? n : 1;
    s->shape[0] = 1;
    s->e[0] = 1;
    clt__contiguous_strides(n, small->shape, s->a);
    clt__contiguous_strides(n, big->shape, s->b);
    for (int d = 0; d < n; d++) {
        s->c[d] = before ? before[d] : 0;
        s->e[d] = small->shape[d];
    }
}

/* GPUs, when only the last two axes are padded (after merging the unpadded leading ones: an NCHW
 * image's H and W): layout_pad_planes over [planes, H, W] with exact 3-D grid coordinates instead
 * of layout_pad's 64-bit division per axis and element (pad_reflect/8x64x56x56 ran at 2.4x
 * PyTorch's time). d: clt_pad's description (offsets, mode, fill). *done = 0 when it does not
 * apply (a padded axis before the last two, nothing padded, a small work-group limit). */
static clt_status pad_planes(const clt__sd *d, const clt_tensor *x, clt_tensor *out,
                             const int64_t *before, const int64_t *after, int *done,
                             const char *who)
{
    enum { LX = 32, LY = 8, GRID_CAP = 65535, /* NVIDIA's limit on a grid's y and z groups */
           PAD_PLANES = 4 };                  /* layout.cl's planes per item */
    *done = 0;
    int n = x->ndim, f = 0;
    while (f < n && !(before && before[f]) && !(after && after[f]))
        f++;
    if (f == n || n - f > 2)
        return CLT_SUCCESS;
    cl_kernel k;
    clt_status st = clt__kernel_get(x->ctx, CLT__LAYOUT_FAMILY, "", "layout_pad_planes", &k);
    if (st || clt__group_limit(x->ctx, k) < LX * LY)
        return st;
    const int h = n - f == 2 ? f : -1, w = n - 1;
    clt__sd p = {0};
    p.ndim = 3;
    p.count = out->numel;
    p.a_off = d->a_off;
    p.b_off = d->b_off;
    p.e0 = d->e0;
    p.e1 = d->e1;
    p.shape[0] = 1;
    for (int i = 0; i < f; i++)
        p.shape[0] *= x->shape[i];
    p.shape[1] = h >= 0 ? out->shape[h] : 1;
    p.shape[2] = out->shape[w];
    p.e[1] = h >= 0 ? x->shape[h] : 1;
    p.e[2] = x->shape[w];
    p.c[1] = h >= 0 && before ? before[h] : 0;
    p.c[2] = before ? before[w] : 0;
    p.a[2] = p.b[2] = 1;
    p.a[1] = p.e[2];
    p.a[0] = p.e[1] * p.e[2];
    p.b[1] = p.shape[2];
    p.b[0] = p.shape[1] * p.shape[2];
    if ((st = clt__sd_set_args(x->ctx, k, out->storage->mem, x->storage->mem, &p, who)))
        return st;
    /* layout.cl's PAD_PLANES planes per item along z */
    int64_t gy = (p.shape[1] + LY - 1) / LY, gz = (p.shape[0] + PAD_PLANES - 1) / PAD_PLANES;
    size_t local[3] = {LX, LY, 1};
    size_t global[3] = {(size_t)((p.shape[2] + LX - 1) / LX * LX),
                        (size_t)((gy < GRID_CAP ? gy : GRID_CAP) * LY),
                        (size_t)(gz < GRID_CAP ? gz : GRID_CAP)};
    *done = 1;
    return clt__enqueue_kernel(x->ctx, k, 3, global, local, who);
}

clt_status clt_pad(const clt_tensor *x, const int64_t *before, const int64_t *after,
                   clt_pad_mode mode, float value, clt_tensor *out)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_pad";
    static const char *const names[2] = {"x", "out"};
    const clt_tensor *t[2] = {x, out};
    clt_status st;
    if ((st = clt__check_handles(who, 2, t, names)) ||
        (st = clt__layout_check_pair(who, x, "x", out, "out")) ||
        (st = check_pad(who, x, "x", out, "out", before, after, mode)))
        return st;
    if (out->numel == 0)
        return CLT_SUCCESS;
    clt__sd s = {0};
    pad_desc(&s, x, out, before);
    for (int d = 0; d < out->ndim; d++)
        s.shape[d] = out->shape[d];
    s.count = out->numel;
    s.a_off = elem_off(x);
    s.b_off = elem_off(out);
    s.e0 = mode == CLT_PAD_REFLECT;
    uint32_t bits;
    if (x->dtype == CLT_I32) {
        int32_t iv = (int32_t)value;
        memcpy(&bits, &iv, 4);
    } else {
        memcpy(&bits, &value, 4);
    }
    s.e1 = bits;
    if (clt__cpu_style(x->ctx)) { /* one item per row: launched over rows, not elements */
        cl_kernel k;
        if ((st = clt__kernel_get(x->ctx, "layout_cpu", "", "layout_pad_rows", &k)))
            return st;
        if ((st = clt__sd_set_args(x->ctx, k, out->storage->mem, x->storage->mem, &s, who)))
            return st;
        uint64_t rows = (uint64_t)(s.count / s.shape[s.ndim - 1]);
        return clt__launch_1d(x->ctx, k, (rows + LT_ROWS_PER_ITEM - 1) / LT_ROWS_PER_ITEM, who);
    }
    int done = 0;
    if ((st = pad_planes(&s, x, out, before, after, &done, who)) || done)
        return st;
    return clt__layout_run(x->ctx, "layout_pad", out->storage->mem, x->storage->mem, &s, who);
}

clt_status clt_pad_backward(const clt_tensor *dy, const int64_t *before, const int64_t *after,
                            clt_pad_mode mode, clt_tensor *dx)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_pad_backward";
    static const char *const names[2] = {"dy", "dx"};
    const clt_tensor *t[2] = {dy, dx};
    clt_status st;
    if ((st = clt__check_handles(who, 2, t, names)) ||
        (st = clt__layout_check_pair(who, dy, "dy", dx, "dx")) ||
        (mode == CLT_PAD_REFLECT && (st = clt__check_dtype(who, dy, "dy", CLT_F32))) ||
        (st = check_pad(who, dx, "dx", dy, "dy", before, after, mode)))
        return st;
    if (dx->numel == 0)
        return CLT_SUCCESS;
    clt__sd s = {0};
    int n = dx->ndim;
    if (mode == CLT_PAD_CONSTANT) { /* the interior window of dy */
        s.ndim = n ? n : 1;
        s.count = dx->numel;
        s.a_off = elem_off(dy);
        s.b_off = elem_off(dx);
        s.shape[0] = 1;
        clt__contiguous_strides(n, dy->shape, s.a);
        clt__contiguous_strides(n, dx->shape, s.b);
        for (int d = 0; d < n; d++) {
            s.shape[d] = dx->shape[d];
            s.a_off += (before ? before[d] : 0) * s.a[d];
        }
        return clt__layout_copy(dx->ctx, dx->storage->mem, dy->storage->mem, &s, who);
    }
    /* Reflect: box over dx, a = dy strides, b = dx strides, c = before, e = dy's shape. The
     * kernel keeps coordinates in 32 bits (registers: cl_kernels/layout/layout.cl). */
    for (int d = 0; d < n; d++)
        if (dx->shape[d] > INT32_MAX)
            return clt__fail(dx->ctx, CLT_ERR_UNSUPPORTED,
                             "%s: reflect backward supports dims below 2^31 (axis %d has %lld)", who,
                             d, (long long)dx->shape[d]);
    /* Reflect: box over dx, a = dy strides, b = dx strides, c = before, e = dy's shape. */
    s.ndim = n ? n : 1;
    s.count = dx->numel;
    s.a_off = elem_off(dy);
    s.b_off = elem_off(dx);
    s.shape[0] = 1;
    s.e[0] = 1;
    clt__contiguous_strides(n, dy->shape, s.a);
    clt__contiguous_strides(n, dx->shape, s.b);
    for (int d = 0; d < n; d++) {
        s.shape[d] = dx->shape[d];
        s.c[d] = before ? before[d] : 0;
        s.e[d] = dy->shape[d];
    }
    return clt__layout_run(dx->ctx, "layout_pad_reflect_backward", dx->storage->mem,
                           dy->storage->mem, &s, who);
}
