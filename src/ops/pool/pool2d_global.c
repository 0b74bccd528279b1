/* Global average pooling: forward = the single-launch reduction (MEAN over H and W, reduce.c), or
 * on CPU devices for planes up to CPU_MAX_AREA one item per plane (pool2d_cpu.cl: 2x the reduction
 * there); backward = one broadcast launch of pool2d.cl. out / dy are [N, C, 1, 1] or [N, C]. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ops/pool/pool2d.h"
#include "ops/reduce/reduce_plan.h"

#define CPU_MAX_AREA 256 /* a short float8 sum per plane errs no more than the reduction */

/* t (non-NULL, of ctx, f32) is [n, c, 1, 1] or [n, c]; *keepdim says which. */
static clt_status check_pooled(clt_context *ctx, const char *who, const char *name,
                               const clt_tensor *t, const int64_t xs[4], int *keepdim)
{
    const int64_t want[4] = {xs[0], xs[1], 1, 1};
    if (t && t->ndim == 2 && t->shape[0] == xs[0] && t->shape[1] == xs[1]) {
        int64_t as4[4] = {t->shape[0], t->shape[1], 1, 1};
        clt_tensor view = *t; /* the same checks as the 4-D form */
        view.ndim = 4;
        memcpy(view.shape, as4, sizeof as4);
        *keepdim = 0;
        return clt__conv_check_tensor(ctx, who, name, &view, want);
    }
    *keepdim = 1;
    clt_status st = clt__conv_check_tensor(ctx, who, name, t, want);
    if (st == CLT_ERR_INVALID_SHAPE) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", clt_last_error(ctx));
        clt__fail(ctx, st, "%s (or [%lld, %lld])", msg, (long long)xs[0], (long long)xs[1]);
    }
    return st;
}

/* The plane side (x or dx): 4-D f32 with H, W >= 1. */
static clt_status check_planes(clt_context *ctx, const char *who, const char *name,
                               const clt_tensor *t, int64_t s[4])
{
    clt_status st;
    if ((st = clt__conv_shape4(ctx, who, name, t, s)) ||
        (st = clt__conv_check_tensor(ctx, who, name, t, s)))
        return st;
    if (s[2] < 1 || s[3] < 1)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: %s has H = %lld, W = %lld; both must be >= 1",
                         who, name, (long long)s[2], (long long)s[3]);
    if (s[2] * s[3] > INT32_MAX)
        return clt__fail(ctx, CLT_ERR_SIZE_OVERFLOW,
                         "%s: a plane of %lld x %lld elements exceeds the i32 index range", who,
                         (long long)s[2], (long long)s[3]);
    return CLT_SUCCESS;
}

clt_status clt_global_avg_pool2d(const clt_tensor *x, clt_tensor *out)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_global_avg_pool2d";
    if (!x || !out)
        return clt__fail(x ? x->ctx : out ? out->ctx : NULL, CLT_ERR_INVALID_ARGUMENT,
                         "%s: %s is NULL", who, x ? "out" : "x");
    clt_context *ctx = x->ctx;
    int64_t xs[4];
    int keepdim;
    clt_status st;
    if ((st = check_planes(ctx, who, "x", x, xs)) ||
        (st = check_pooled(ctx, who, "out", out, xs, &keepdim)) ||
        (st = clt__pool_check_overlap(ctx, who, out, "out", x, "x")))
        return st;
    if (xs[0] * xs[1] == 0)
        return CLT_SUCCESS;
    if (clt__cpu_style(ctx) && xs[2] * xs[3] <= CPU_MAX_AREA) {
        const clt_tensor *ts[2] = {x, out};
        cl_int16 kg = {{0}};
        return clt__pool_launch(ctx, who, "pool2d_global_avg_cpu", ts, 2, &kg,
                                (uint64_t)(xs[0] * xs[1]), (uint64_t)(xs[2] * xs[3]));
    }
    static const int axes[2] = {2, 3};
    return clt__reduce_as(who, CLT_REDUCE_MEAN, x, 2, axes, keepdim, out);
}

clt_status clt_global_avg_pool2d_backward(const clt_tensor *dy, clt_tensor *dx)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_global_avg_pool2d_backward";
    if (!dy || !dx)
        return clt__fail(dy ? dy->ctx : dx ? dx->ctx : NULL, CLT_ERR_INVALID_ARGUMENT,
                         "%s: %s is NULL", who, dy ? "dx" : "dy");
    clt_context *ctx = dx->ctx;
    int64_t xs[4];
    int keepdim;
    clt_status st;
    if ((st = check_planes(ctx, who, "dx", dx, xs)) ||
        (st = check_pooled(ctx, who, "dy", dy, xs, &keepdim)) ||
        (st = clt__pool_check_overlap(ctx, who, dx, "dx", dy, "dy")))
        return st;
    /* the kernel splits items as [planes, 1, H * W] */
    clt__pool_geom g = {.h = 1, .w = xs[2] * xs[3]};
    cl_int16 kg = clt__pool_kernel_geometry(&g, 0, 1);
    kg.s[0] = (cl_int)g.w;
    const clt_tensor *ts[2] = {dy, dx};
    return clt__pool_launch(ctx, who, "pool2d_global_avg_backward", ts, 2, &kg,
                            (uint64_t)(xs[0] * xs[1] * xs[2] * xs[3]), (uint64_t)(xs[2] * xs[3]));
}
