/* Max and average 2-D pooling, forward and backward: validate, then one launch of a pool2d.cl
 * kernel (one work item per output element forward, per dx element backward), or on CPU devices
 * of its pool2d_cpu.cl twin (one item per output row forward, per plane backward). */
#include "ops/pool2d.h"

static void out_shape(const clt__pool_geom *g, int64_t s[4])
{
    s[0] = g->n, s[1] = g->c, s[2] = g->ho, s[3] = g->wo;
}

/* The input side (x of a forward call, dx of a backward one): 4-D, f32, then the geometry. */
static clt_status input_geometry(clt_context *ctx, const char *who, const char *name,
                                 const clt_tensor *t, const clt_pool2d_params *p, clt__pool_geom *g)
{
    int64_t s[4];
    clt_status st;
    if ((st = clt__conv_shape4(ctx, who, name, t, s)) ||
        (st = clt__conv_check_tensor(ctx, who, name, t, s)))
        return st;
    return clt__pool_geom_make(ctx, who, s, p, g);
}

clt_status clt_max_pool2d(const clt_tensor *x, const clt_pool2d_params *p, clt_tensor *out,
                          clt_tensor *indices)
{
    static const char *who = "clt_max_pool2d";
    if (!x || !out)
        return clt__fail(x ? x->ctx : out ? out->ctx : NULL, CLT_ERR_INVALID_ARGUMENT,
                         "%s: %s is NULL", who, x ? "out" : "x");
    clt_context *ctx = x->ctx;
    clt__pool_geom g = {0};
    int64_t os[4];
    clt_status st = input_geometry(ctx, who, "x", x, p, &g);
    if (st)
        return st;
    out_shape(&g, os);
    if ((st = clt__conv_check_tensor(ctx, who, "out", out, os)) ||
        (indices && (st = clt__pool_check_indices(ctx, who, indices, os))) ||
        (st = clt__pool_check_overlap(ctx, who, out, "out", x, "x")) ||
        (indices && (st = clt__pool_check_overlap(ctx, who, indices, "indices", x, "x"))) ||
        (st = clt__pool_check_overlap(ctx, who, out, "out", indices, "indices")))
        return st;
    cl_int16 kg = clt__pool_kernel_geometry(&g, indices != NULL, 0);
    const clt_tensor *ts[3] = {x, out, indices};
    if (clt__pool_cpu_style(ctx))
        return clt__pool_launch(ctx, who, "pool2d_max_cpu", ts, 3, &kg,
                                (uint64_t)(g.n * g.c * g.ho), 0);
    return clt__pool_launch(ctx, who, "pool2d_max", ts, 3, &kg, (uint64_t)(g.n * g.c * g.ho * g.wo),
                            0);
}

clt_status clt_max_pool2d_backward(const clt_tensor *dy, const clt_tensor *x,
                                   const clt_tensor *indices, const clt_pool2d_params *p,
                                   clt_tensor *dx)
{
    static const char *who = "clt_max_pool2d_backward";
    if (!dy || !dx)
        return clt__fail(dy ? dy->ctx : dx ? dx->ctx : NULL, CLT_ERR_INVALID_ARGUMENT,
                         "%s: %s is NULL", who, dy ? "dx" : "dy");
    clt_context *ctx = dx->ctx;
    if (!x && !indices)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: x and indices are both NULL", who);
    clt__pool_geom g = {0};
    int64_t os[4];
    clt_status st = input_geometry(ctx, who, "dx", dx, p, &g);
    if (st)
        return st;
    out_shape(&g, os);
    const int64_t xs[4] = {g.n, g.c, g.h, g.w};
    if ((st = clt__conv_check_tensor(ctx, who, "dy", dy, os)) ||
        (x && (st = clt__conv_check_tensor(ctx, who, "x", x, xs))) ||
        (indices && (st = clt__pool_check_indices(ctx, who, indices, os))) ||
        (st = clt__pool_check_overlap(ctx, who, dx, "dx", dy, "dy")) ||
        (st = clt__pool_check_overlap(ctx, who, dx, "dx", x, "x")) ||
        (st = clt__pool_check_overlap(ctx, who, dx, "dx", indices, "indices")))
        return st;
    cl_int16 kg = clt__pool_kernel_geometry(&g, 0, 1);
    const clt_tensor *ts[3] = {indices ? indices : x, dy, dx};
    if (clt__pool_cpu_style(ctx))
        return clt__pool_launch(ctx, who,
                                indices ? "pool2d_max_backward_indices_cpu"
                                        : "pool2d_max_backward_x_cpu",
                                ts, 3, &kg, (uint64_t)(g.n * g.c), 0);
    return clt__pool_launch(ctx, who,
                            indices ? "pool2d_max_backward_indices" : "pool2d_max_backward_x", ts,
                            3, &kg, (uint64_t)(g.n * g.c * g.h * g.w), 0);
}

clt_status clt_avg_pool2d(const clt_tensor *x, const clt_pool2d_params *p, int count_include_pad,
                          clt_tensor *out)
{
    static const char *who = "clt_avg_pool2d";
    if (!x || !out)
        return clt__fail(x ? x->ctx : out ? out->ctx : NULL, CLT_ERR_INVALID_ARGUMENT,
                         "%s: %s is NULL", who, x ? "out" : "x");
    clt_context *ctx = x->ctx;
    clt__pool_geom g = {0};
    int64_t os[4];
    clt_status st = input_geometry(ctx, who, "x", x, p, &g);
    if (st)
        return st;
    out_shape(&g, os);
    if ((st = clt__conv_check_tensor(ctx, who, "out", out, os)) ||
        (st = clt__pool_check_overlap(ctx, who, out, "out", x, "x")))
        return st;
    cl_int16 kg = clt__pool_kernel_geometry(&g, count_include_pad != 0, 0);
    const clt_tensor *ts[2] = {x, out};
    if (clt__pool_cpu_style(ctx))
        return clt__pool_launch(ctx, who, "pool2d_avg_cpu", ts, 2, &kg,
                                (uint64_t)(g.n * g.c * g.ho), 0);
    return clt__pool_launch(ctx, who, "pool2d_avg", ts, 2, &kg, (uint64_t)(g.n * g.c * g.ho * g.wo),
                            0);
}

clt_status clt_avg_pool2d_backward(const clt_tensor *dy, const clt_pool2d_params *p,
                                   int count_include_pad, clt_tensor *dx)
{
    static const char *who = "clt_avg_pool2d_backward";
    if (!dy || !dx)
        return clt__fail(dy ? dy->ctx : dx ? dx->ctx : NULL, CLT_ERR_INVALID_ARGUMENT,
                         "%s: %s is NULL", who, dy ? "dx" : "dy");
    clt_context *ctx = dx->ctx;
    clt__pool_geom g = {0};
    int64_t os[4];
    clt_status st = input_geometry(ctx, who, "dx", dx, p, &g);
    if (st)
        return st;
    out_shape(&g, os);
    if ((st = clt__conv_check_tensor(ctx, who, "dy", dy, os)) ||
        (st = clt__pool_check_overlap(ctx, who, dx, "dx", dy, "dy")))
        return st;
    cl_int16 kg = clt__pool_kernel_geometry(&g, count_include_pad != 0, 1);
    const clt_tensor *ts[2] = {dy, dx};
    if (clt__pool_cpu_style(ctx))
        return clt__pool_launch(ctx, who, "pool2d_avg_backward_cpu", ts, 2, &kg,
                                (uint64_t)(g.n * g.c), 0);
    return clt__pool_launch(ctx, who, "pool2d_avg_backward", ts, 2, &kg,
                            (uint64_t)(g.n * g.c * g.h * g.w), 0);
}
