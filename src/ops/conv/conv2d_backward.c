/* Conv2D backward: clt_conv2d_backward_input, _weight and _bias. Validate everything (nothing is
 * enqueued on error), then (16-bit dy and inputs: on f32 stand-ins, conv_f32.c) run ours
 * (conv2d_backward_ours.c) or the CLBlast path (conv2d_backward_clblast.c) as conv_impl says ("tiled"
 * and "auto": ours), falling back to the other when the first refuses the device. The bias gradient is one launch of the reduction
 * machinery (clt_reduce SUM over axes 0, 2, 3). */
#include <limits.h>
#include <string.h>

#include "cltensor_ops.h"
#include "ops/conv/conv2d_backward.h"
#include "ops/conv/conv_f32.h"

typedef clt_status (*impl_fn)(clt_context *, const clt__conv_geom *, const clt_tensor *,
                              const clt_tensor *, clt_tensor *, const char *);

static const clt_context *ctx_of(const clt_tensor *a, const clt_tensor *b, const clt_tensor *c)
{
    return a ? a->ctx : b ? b->ctx : c ? c->ctx : NULL;
}

/* The kernels index with 32-bit ints per dimension and per weight row. */
static clt_status check_sizes(const clt_context *ctx, const char *who, const clt__conv_geom *g)
{
    int64_t dims[] = {g->n, g->ci, g->h, g->w, g->co, g->ho * g->wo, g->ci_g * g->kh * g->kw,
                      g->co_g * g->kh * g->kw, g->h + g->pt, g->w + g->pl};
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++)
        if (dims[i] > INT_MAX)
            return clt__fail(ctx, CLT_ERR_SIZE_OVERFLOW,
                             "%s: a dimension (%lld) exceeds the kernels' 32-bit index range", who,
                             (long long)dims[i]);
    return CLT_SUCCESS;
}

/* Shapes of the two "big" tensors (x-like: xt, weight-like: wt), the geometry, then every tensor
 * against it: dy [N, Co, Ho, Wo], and the output overlapping neither input. */
static clt_status validate(const char *who, const clt_tensor *dy, const clt_tensor *xt,
                           const char *xname, const clt_tensor *wt, const char *wname,
                           const clt_tensor *out, const clt_conv2d_params *p, clt__conv_geom *g)
{
    const clt_context *ctx = ctx_of(out, dy, out == xt ? wt : xt); /* the output's context */
    if (!dy)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: dy is NULL", who);
    int64_t xs[4], ws[4];
    clt_status st;
    if ((st = clt__conv_shape4(ctx, who, xname, xt, xs)) ||
        (st = clt__conv_shape4(ctx, who, wname, wt, ws)) ||
        (st = clt__conv_geom_make(ctx, who, xs, ws, p, g)))
        return st;
    int64_t ys[4] = {g->n, g->co, g->ho, g->wo};
    const clt_tensor *in = out == xt ? wt : xt;
    const char *oname = out == xt ? xname : wname, *iname = out == xt ? wname : xname;
    /* dy f32, f16 or bf16; the other input the same; the output f32 or the inputs' type */
    const clt_dtype d = dy->dtype;
    if ((st = clt__conv_check_dtypes(ctx, who, "dy", d, oname, out->dtype)) ||
        (st = clt__check_tensor4(ctx, who, "dy", dy, d, ys)) ||
        (st = clt__check_tensor4(ctx, who, xname, xt, xt == out ? out->dtype : d, xs)) ||
        (st = clt__check_tensor4(ctx, who, wname, wt, wt == out ? out->dtype : d, ws)) ||
        (st = check_sizes(ctx, who, g)))
        return st;
    if (clt__tensors_overlap(out, dy))
        return clt__fail(ctx, CLT_ERR_ALIASING, "%s: %s overlaps dy", who, oname);
    if (clt__tensors_overlap(out, in))
        return clt__fail(ctx, CLT_ERR_ALIASING, "%s: %s overlaps %s", who, oname, iname);
    return CLT_SUCCESS;
}

static clt_status run(clt_context *ctx, impl_fn ours, impl_fn blas, const clt__conv_geom *g,
                      const clt_tensor *a, const clt_tensor *b, clt_tensor *out, const char *who)
{
    int clblast = !strcmp(ctx->limits.conv_impl, "clblast");
    clt_status st = (clblast ? blas : ours)(ctx, g, a, b, out, who);
    if (st == CLT_ERR_UNSUPPORTED)
        st = (clblast ? ours : blas)(ctx, g, a, b, out, who);
    return st;
}

/* 16-bit dy and w / x (clt__conv_via_f32): the same call on f32 stand-ins. */
static clt_status input_f32(const clt_tensor *dy, const clt_tensor *w, clt_tensor *dx, const void *p)
{
    return clt_conv2d_backward_input(dy, w, p, dx);
}

static clt_status weight_f32(const clt_tensor *dy, const clt_tensor *x, clt_tensor *dw, const void *p)
{
    return clt_conv2d_backward_weight(dy, x, p, dw);
}

clt_status clt_conv2d_backward_input(const clt_tensor *dy, const clt_tensor *w,
                                     const clt_conv2d_params *p, clt_tensor *dx)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_conv2d_backward_input";
    clt__conv_geom g;
    clt_status st = validate(who, dy, dx, "dx", w, "w", dx, p, &g);
    if (st != CLT_SUCCESS)
        return st;
    if (dx->numel == 0)
        return CLT_SUCCESS; /* empty batch: nothing to write */
    if (clt__conv_is16(dy->dtype))
        return clt__conv_via_f32(dx->ctx, dy, w, dx, input_f32, p);
    return run(dx->ctx, clt__convb_input_ours, clt__convb_input_clblast, &g, dy, w, dx, who);
}

clt_status clt_conv2d_backward_weight(const clt_tensor *dy, const clt_tensor *x,
                                      const clt_conv2d_params *p, clt_tensor *dw)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_conv2d_backward_weight";
    clt__conv_geom g;
    clt_status st = validate(who, dy, x, "x", dw, "dw", dw, p, &g);
    if (st != CLT_SUCCESS)
        return st;
    if (g.n == 0) { /* a sum over an empty batch */
        st = clt_tensor_fill(dw, 0.0);
        return st;
    }
    if (clt__conv_is16(dy->dtype))
        return clt__conv_via_f32(dw->ctx, dy, x, dw, weight_f32, p);
    return run(dw->ctx, clt__convb_weight_ours, clt__convb_weight_clblast, &g, dy, x, dw, who);
}

clt_status clt_conv2d_backward_bias(const clt_tensor *dy, clt_tensor *dbias)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_conv2d_backward_bias";
    const clt_context *ctx = ctx_of(dbias, dy, NULL);
    int64_t ys[4];
    clt_status st;
    if (!dbias)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: dbias is NULL", who);
    if ((st = clt__conv_shape4(ctx, who, "dy", dy, ys)) ||
        (st = clt__conv_check_tensor(ctx, who, "dy", dy, ys)))
        return st;
    if (dbias->dtype != CLT_F32)
        return clt__fail(ctx, CLT_ERR_INVALID_DTYPE, "%s: dbias is %s, expected f32", who,
                         clt_dtype_name(dbias->dtype));
    if (dbias->ndim != 1 || dbias->shape[0] != ys[1])
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE,
                         "%s: dbias must be [%lld] for dy [%lld, %lld, %lld, %lld] (it has %d "
                         "dimensions, first %lld)",
                         who, (long long)ys[1], (long long)ys[0], (long long)ys[1], (long long)ys[2],
                         (long long)ys[3], dbias->ndim, (long long)(dbias->ndim ? dbias->shape[0] : 0));
    if (clt__tensors_overlap(dbias, dy))
        return clt__fail(ctx, CLT_ERR_ALIASING, "%s: dbias overlaps dy", who);
    /* one launch; an empty batch sums to zeros */
    static const int axes[3] = {0, 2, 3};
    st = clt_reduce(CLT_REDUCE_SUM, dy, 3, axes, 0, dbias);
    return st;
}
