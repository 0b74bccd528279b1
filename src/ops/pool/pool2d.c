/* Max and average 2-D pooling, forward and backward: validate, then one launch of a pool2d.cl
 * kernel (one work item per output element forward, per dx element backward), or on CPU devices
 * of its pool2d_cpu.cl twin (one item per output row forward, per plane backward). */
#include <stdio.h>

#include "ops/pool/pool2d.h"

/* What every entry checks: `in` (x of a forward call, dx of a backward one; NULL-checked with
 * `side`) gives the geometry, `side` (out, or dy) must have the output shape, and the output
 * (`side` forward, `in` backward) may not overlap the other. os receives the output shape. */
static clt_status entry_checks(const char *who, const char *in_name, const clt_tensor *in,
                               const char *side_name, const clt_tensor *side, int backward,
                               const clt_pool2d_params *p, clt__pool_geom *g, int64_t os[4])
{
    if (!in || !side)
        return clt__fail(in ? in->ctx : side ? side->ctx : NULL, CLT_ERR_INVALID_ARGUMENT,
                         "%s: %s is NULL", who, in ? side_name : in_name);
    clt_context *ctx = in->ctx;
    int64_t s[4];
    clt_status st;
    if ((st = clt__conv_shape4(ctx, who, in_name, in, s)) ||
        (st = clt__conv_check_tensor(ctx, who, in_name, in, s)) ||
        (st = clt__pool_geom_make(ctx, who, s, p, g)))
        return st;
    os[0] = g->n, os[1] = g->c, os[2] = g->ho, os[3] = g->wo;
    if ((st = clt__conv_check_tensor(ctx, who, side_name, side, os)))
        return st;
    return backward ? clt__pool_check_overlap(ctx, who, in, in_name, side, side_name)
                    : clt__pool_check_overlap(ctx, who, side, side_name, in, in_name);
}

/* kernel (GPU: `items` items) or kernel_cpu (CPU devices: `cpu_items` items). */
static clt_status run(clt_context *ctx, const char *who, const char *kernel,
                      const clt_tensor *const *ts, int nbuf, const cl_int16 *kg, uint64_t items,
                      uint64_t cpu_items)
{
    if (!clt__cpu_style(ctx))
        return clt__pool_launch(ctx, who, kernel, ts, nbuf, kg, items, 0);
    char name[64];
    snprintf(name, sizeof name, "%s_cpu", kernel);
    return clt__pool_launch(ctx, who, name, ts, nbuf, kg, cpu_items, 0);
}

clt_status clt_max_pool2d(const clt_tensor *x, const clt_pool2d_params *p, clt_tensor *out,
                          clt_tensor *indices)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_max_pool2d";
    clt__pool_geom g = {0};
    int64_t os[4];
    clt_status st = entry_checks(who, "x", x, "out", out, 0, p, &g, os);
    if (st)
        return st;
    clt_context *ctx = x->ctx;
    if (indices && ((st = clt__pool_check_indices(ctx, who, indices, os)) ||
                    (st = clt__pool_check_overlap(ctx, who, indices, "indices", x, "x")) ||
                    (st = clt__pool_check_overlap(ctx, who, out, "out", indices, "indices"))))
        return st;
    cl_int16 kg = clt__pool_kernel_geometry(&g, indices != NULL, 0);
    const clt_tensor *ts[3] = {x, out, indices};
    return run(ctx, who, "pool2d_max", ts, 3, &kg, (uint64_t)(g.n * g.c * g.ho * g.wo),
               (uint64_t)(g.n * g.c * g.ho));
}

clt_status clt_max_pool2d_backward(const clt_tensor *dy, const clt_tensor *x,
                                   const clt_tensor *indices, const clt_pool2d_params *p,
                                   clt_tensor *dx)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_max_pool2d_backward";
    clt__pool_geom g = {0};
    int64_t os[4];
    if (dy && dx && !x && !indices)
        return clt__fail(dx->ctx, CLT_ERR_INVALID_ARGUMENT, "%s: x and indices are both NULL", who);
    clt_status st = entry_checks(who, "dx", dx, "dy", dy, 1, p, &g, os);
    if (st)
        return st;
    clt_context *ctx = dx->ctx;
    const int64_t xs[4] = {g.n, g.c, g.h, g.w};
    if ((x && (st = clt__conv_check_tensor(ctx, who, "x", x, xs))) ||
        (indices && (st = clt__pool_check_indices(ctx, who, indices, os))) ||
        (st = clt__pool_check_overlap(ctx, who, dx, "dx", x, "x")) ||
        (st = clt__pool_check_overlap(ctx, who, dx, "dx", indices, "indices")))
        return st;
    cl_int16 kg = clt__pool_kernel_geometry(&g, 0, 1);
    const clt_tensor *ts[3] = {indices ? indices : x, dy, dx};
    return run(ctx, who, indices ? "pool2d_max_backward_indices" : "pool2d_max_backward_x", ts, 3,
               &kg, (uint64_t)(g.n * g.c * g.h * g.w), (uint64_t)(g.n * g.c));
}

clt_status clt_avg_pool2d(const clt_tensor *x, const clt_pool2d_params *p, int count_include_pad,
                          clt_tensor *out)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_avg_pool2d";
    clt__pool_geom g = {0};
    int64_t os[4];
    clt_status st = entry_checks(who, "x", x, "out", out, 0, p, &g, os);
    if (st)
        return st;
    cl_int16 kg = clt__pool_kernel_geometry(&g, count_include_pad != 0, 0);
    const clt_tensor *ts[2] = {x, out};
    return run(x->ctx, who, "pool2d_avg", ts, 2, &kg, (uint64_t)(g.n * g.c * g.ho * g.wo),
               (uint64_t)(g.n * g.c * g.ho));
}

clt_status clt_avg_pool2d_backward(const clt_tensor *dy, const clt_pool2d_params *p,
                                   int count_include_pad, clt_tensor *dx)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_avg_pool2d_backward";
    clt__pool_geom g = {0};
    int64_t os[4];
    clt_status st = entry_checks(who, "dx", dx, "dy", dy, 1, p, &g, os);
    if (st)
        return st;
    cl_int16 kg = clt__pool_kernel_geometry(&g, count_include_pad != 0, 1);
    const clt_tensor *ts[2] = {dy, dx};
    return run(dx->ctx, who, "pool2d_avg_backward", ts, 2, &kg, (uint64_t)(g.n * g.c * g.h * g.w),
               (uint64_t)(g.n * g.c));
}
