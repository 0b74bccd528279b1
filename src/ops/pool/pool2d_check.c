/* Pooling checks and launch (pool2d.h), and the public params/shape helpers. */
#include "ops/pool/pool2d.h"

#include <stdio.h>
#include <string.h>

#include "ops/common/launch.h"
#include "program/program.h"

void clt_pool2d_params_init(clt_pool2d_params *p, int32_t k)
{
    if (!p)
        return;
    memset(p, 0, sizeof *p);
    p->kernel_h = p->kernel_w = k;
    p->stride_h = p->stride_w = k;
}

clt_status clt__pool_geom_make(const clt_context *ctx, const char *who, const int64_t x[4],
                               const clt_pool2d_params *p, clt__pool_geom *g)
{
    if (!p)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: params is NULL", who);
    if (p->kernel_h < 1 || p->kernel_w < 1 || p->stride_h < 1 || p->stride_w < 1)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT,
                         "%s: kernel (%d, %d) and stride (%d, %d) must be >= 1", who, p->kernel_h,
                         p->kernel_w, p->stride_h, p->stride_w);
    if (p->pad_top < 0 || p->pad_bottom < 0 || p->pad_left < 0 || p->pad_right < 0 ||
        p->pad_top >= p->kernel_h || p->pad_bottom >= p->kernel_h || p->pad_left >= p->kernel_w ||
        p->pad_right >= p->kernel_w)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT,
                         "%s: padding (top %d, bottom %d, left %d, right %d) must be >= 0 and below "
                         "the kernel (%d, %d) on its axis",
                         who, p->pad_top, p->pad_bottom, p->pad_left, p->pad_right, p->kernel_h,
                         p->kernel_w);
    for (int i = 0; i < 4; i++)
        if (x[i] < 0)
            return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: negative dimension %lld in x", who,
                             (long long)x[i]);
    if (!clt__dims_in_range(x, 4))
        return clt__fail(ctx, CLT_ERR_SIZE_OVERFLOW,
                         "%s: a dimension of x exceeds %lld (the kernels' i32 index range)", who,
                         (long long)CLT__MAX_DIM);
    memset(g, 0, sizeof *g);
    g->n = x[0], g->c = x[1], g->h = x[2], g->w = x[3];
    g->kh = p->kernel_h, g->kw = p->kernel_w, g->sh = p->stride_h, g->sw = p->stride_w;
    g->pt = p->pad_top, g->pb = p->pad_bottom, g->pl = p->pad_left, g->pr = p->pad_right;
    g->ho = clt__window_out(g->h, g->pt + g->pb, g->kh, 1, g->sh);
    g->wo = clt__window_out(g->w, g->pl + g->pr, g->kw, 1, g->sw);
    if (g->ho < 1 || g->wo < 1)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE,
                         "%s: output size %lld x %lld < 1 (input %lld x %lld, kernel %d x %d, stride "
                         "%d x %d, padding %d+%d x %d+%d)",
                         who, (long long)g->ho, (long long)g->wo, (long long)g->h, (long long)g->w,
                         p->kernel_h, p->kernel_w, p->stride_h, p->stride_w, p->pad_top,
                         p->pad_bottom, p->pad_left, p->pad_right);
    if (g->h * g->w > INT32_MAX)
        return clt__fail(ctx, CLT_ERR_SIZE_OVERFLOW,
                         "%s: a plane of %lld x %lld elements exceeds the i32 index range", who,
                         (long long)g->h, (long long)g->w);
    return CLT_SUCCESS;
}

clt_status clt_pool2d_output_shape(const int64_t x_shape[4], const clt_pool2d_params *p,
                                   int64_t out_shape[4])
{
    CLT_PUBLIC_CALL();
    const char *who = "clt_pool2d_output_shape";
    if (!x_shape || !out_shape)
        return clt__fail(NULL, CLT_ERR_INVALID_ARGUMENT, "%s: a shape pointer is NULL", who);
    clt__pool_geom g = {0};
    clt_status st = clt__pool_geom_make(NULL, who, x_shape, p, &g);
    if (st != CLT_SUCCESS)
        return st;
    out_shape[0] = g.n, out_shape[1] = g.c, out_shape[2] = g.ho, out_shape[3] = g.wo;
    return CLT_SUCCESS;
}

clt_status clt__pool_check_indices(const clt_context *ctx, const char *who, const clt_tensor *t,
                                   const int64_t shape[4])
{
    return clt__check_tensor4(ctx, who, "indices", t, CLT_I32, shape);
}

clt_status clt__pool_check_overlap(const clt_context *ctx, const char *who, const clt_tensor *a,
                                   const char *a_name, const clt_tensor *b, const char *b_name)
{
    if (b && clt__tensors_overlap(a, b))
        return clt__fail(ctx, CLT_ERR_ALIASING, "%s: %s overlaps %s", who, a_name, b_name);
    return CLT_SUCCESS;
}

/* Magic numbers of n / d for every 32-bit n (Granlund and Montgomery, "Division by invariant integers
 * using multiplication", 1994): with l = ceil(log2 d), m = 2^32 (2^l - d) / d + 1, and then
 * n / d = (t + ((n - t) >> min(l, 1))) >> max(l - 1, 0) where t = mul_hi(n, m). */
static void division_magic(uint32_t d, cl_int *m, cl_int *shifts)
{
    int l = 0;
    while (l < 32 && ((uint64_t)1 << l) < d)
        l++;
    uint64_t magic = ((((uint64_t)1 << 32) * (((uint64_t)1 << l) - d)) / d + 1) & 0xFFFFFFFFu;
    *m = (cl_int)(uint32_t)magic;
    *shifts = (l < 1 ? l : 1) | (l > 1 ? l - 1 : 0) << 8;
}

cl_int16 clt__pool_kernel_geometry(const clt__pool_geom *g, int flag, int backward)
{
    cl_int16 k = {{0}};
    const int64_t v[11] = {g->h, g->w, g->ho, g->wo, g->kh, g->kw, g->sh, g->sw, g->pt, g->pl, flag};
    for (int i = 0; i < 11; i++)
        k.s[i] = (cl_int)v[i];
    division_magic((uint32_t)(backward ? g->w : g->wo), &k.s[11], &k.s[12]);
    division_magic((uint32_t)(backward ? g->h : g->ho), &k.s[13], &k.s[14]);
    return k;
}


clt_status clt__pool_launch(clt_context *ctx, const char *who, const char *name,
                            const clt_tensor *const *ts, int nbuf, const cl_int16 *g, uint64_t items,
                            uint64_t extra)
{
    if (items == 0)
        return CLT_SUCCESS;
    size_t len = strlen(name);
    int cpu = len > 4 && !strcmp(name + len - 4, "_cpu");
    cl_kernel k;
    clt_status st = clt__kernel_get(ctx, cpu ? "pool2d_cpu" : "pool2d", "", name, &k);
    if (st != CLT_SUCCESS)
        return st;
    cl_ulong4 o = {{items, 0, 0, extra}};
    cl_uint arg = 0;
    for (int i = 0; i < nbuf; i++, arg++) {
        const clt_tensor *t = ts[i] ? ts[i] : ts[0];
        o.s[1 + i] = t->offset / 4; /* f32 and i32 alike */
        if ((st = clt__set_arg(ctx, k, arg, sizeof(cl_mem), &t->storage->mem, who)))
            return st;
    }
    if (g && (st = clt__set_arg(ctx, k, arg++, sizeof *g, g, who)))
        return st;
    if ((st = clt__set_arg(ctx, k, arg, sizeof o, &o, who)))
        return st;
    if (!cpu)
        return clt__launch_1d(ctx, k, items, who);
    /* CPU kernels: an item is a row or a plane; about 64 groups or more spread them over the
     * cores (a power of two: POCL builds one work-group function per local size) */
    size_t local = 1;
    while (local < 64 && local * 2 * 64 <= items)
        local *= 2;
    return clt__launch_1d_group(ctx, k, items, local, who);
}
