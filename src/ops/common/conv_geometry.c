/* Shared Conv2D/pooling checks (conv_geometry.h) and the public params/shape helpers. */
#include "ops/common/conv_geometry.h"

#include <stdio.h>
#include <string.h>

void clt_conv2d_params_init(clt_conv2d_params *p)
{
    if (!p)
        return;
    memset(p, 0, sizeof *p);
    p->stride_h = p->stride_w = 1;
    p->dilation_h = p->dilation_w = 1;
    p->groups = 1;
}

int64_t clt__window_out(int64_t in, int64_t pads, int64_t k, int64_t dil, int64_t stride)
{
    /* Callers bound their inputs (clt__dims_in_range), but an overflow here would accept an
     * impossible shape, so it is checked anyway: -1 means "no valid output". */
    int64_t reach, span;
    if (k < 1 || stride < 1 || __builtin_mul_overflow(dil, k - 1, &reach) ||
        __builtin_add_overflow(in, pads, &span) || __builtin_sub_overflow(span, reach, &span) ||
        __builtin_sub_overflow(span, 1, &span))
        return -1;
    return span < 0 ? 0 : span / stride + 1;
}

int clt__dims_in_range(const int64_t *dims, int n)
{
    for (int i = 0; i < n; i++)
        if (dims[i] > CLT__MAX_DIM)
            return 0;
    return 1;
}

static void shape_text(const int64_t s[4], char *buf, size_t size)
{
    snprintf(buf, size, "[%lld, %lld, %lld, %lld]", (long long)s[0], (long long)s[1], (long long)s[2],
             (long long)s[3]);
}

clt_status clt__conv_geom_make(const clt_context *ctx, const char *who, const int64_t x[4],
                               const int64_t w[4], const clt_conv2d_params *p, clt__conv_geom *g)
{
    if (!p)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: params is NULL", who);
    if (p->stride_h < 1 || p->stride_w < 1 || p->dilation_h < 1 || p->dilation_w < 1)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT,
                         "%s: stride (%d, %d) and dilation (%d, %d) must be >= 1", who, p->stride_h,
                         p->stride_w, p->dilation_h, p->dilation_w);
    if (p->pad_top < 0 || p->pad_bottom < 0 || p->pad_left < 0 || p->pad_right < 0)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT,
                         "%s: padding (top %d, bottom %d, left %d, right %d) must be >= 0", who,
                         p->pad_top, p->pad_bottom, p->pad_left, p->pad_right);
    if (p->math != CLT_MATH_DEFAULT && p->math != CLT_MATH_FP32 && p->math != CLT_MATH_TF32 &&
        p->math != CLT_MATH_FP32_3XTF32)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: math mode %d is not a clt_math_mode", who,
                         (int)p->math);
    for (int i = 0; i < 4; i++)
        if (x[i] < 0 || w[i] < 0)
            return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: negative dimension in x or w", who);
    if (!clt__dims_in_range(x, 4) || !clt__dims_in_range(w, 4))
        return clt__fail(ctx, CLT_ERR_SIZE_OVERFLOW,
                         "%s: a dimension of x or w exceeds %lld (the kernels' i32 index range)",
                         who, (long long)CLT__MAX_DIM);
    if (x[1] < 1)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE,
                         "%s: x has Ci = %lld input channels; Ci must be >= 1", who,
                         (long long)x[1]);
    if (p->groups < 1 || x[1] % p->groups || w[0] % p->groups)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT,
                         "%s: groups = %d must be >= 1 and divide both Ci = %lld and Co = %lld", who,
                         p->groups, (long long)x[1], (long long)w[0]);
    char xs[96], ws[96];
    shape_text(x, xs, sizeof xs);
    shape_text(w, ws, sizeof ws);
    if (w[1] != x[1] / p->groups)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE,
                         "%s: w %s must have Ci / groups = %lld input channels (x is %s, groups %d)",
                         who, ws, (long long)(x[1] / p->groups), xs, p->groups);
    if (w[2] < 1 || w[3] < 1 || x[2] < 1 || x[3] < 1 || w[0] < 1)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE,
                         "%s: x %s and w %s need H, W, Co, Kh, Kw >= 1", who, xs, ws);
    memset(g, 0, sizeof *g);
    g->n = x[0], g->ci = x[1], g->h = x[2], g->w = x[3];
    g->co = w[0], g->kh = w[2], g->kw = w[3];
    g->groups = p->groups, g->ci_g = x[1] / p->groups, g->co_g = w[0] / p->groups;
    g->sh = p->stride_h, g->sw = p->stride_w, g->dh = p->dilation_h, g->dw = p->dilation_w;
    g->pt = p->pad_top, g->pb = p->pad_bottom, g->pl = p->pad_left, g->pr = p->pad_right;
    g->math = p->math != CLT_MATH_DEFAULT ? p->math : ctx ? ctx->math : CLT_MATH_FP32;
    g->ho = clt__window_out(g->h, g->pt + g->pb, g->kh, g->dh, g->sh);
    g->wo = clt__window_out(g->w, g->pl + g->pr, g->kw, g->dw, g->sw);
    if (g->ho < 1 || g->wo < 1)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE,
                         "%s: output size %lld x %lld < 1 (x %s, w %s, stride %d x %d, padding "
                         "%d+%d x %d+%d, dilation %d x %d)",
                         who, (long long)g->ho, (long long)g->wo, xs, ws, p->stride_h, p->stride_w,
                         p->pad_top, p->pad_bottom, p->pad_left, p->pad_right, p->dilation_h,
                         p->dilation_w);
    return CLT_SUCCESS;
}

clt_status clt_conv2d_output_shape(const int64_t x_shape[4], const int64_t w_shape[4],
                                   const clt_conv2d_params *p, int64_t out_shape[4])
{
    CLT_PUBLIC_CALL();
    const char *who = "clt_conv2d_output_shape";
    if (!x_shape || !w_shape || !out_shape)
        return clt__fail(NULL, CLT_ERR_INVALID_ARGUMENT, "%s: a shape pointer is NULL", who);
    clt__conv_geom g;
    clt_status st = clt__conv_geom_make(NULL, who, x_shape, w_shape, p, &g);
    if (st != CLT_SUCCESS)
        return st;
    out_shape[0] = g.n, out_shape[1] = g.co, out_shape[2] = g.ho, out_shape[3] = g.wo;
    return CLT_SUCCESS;
}

clt_status clt__conv_shape4(const clt_context *ctx, const char *who, const char *name,
                            const clt_tensor *t, int64_t s[4])
{
    if (!t)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", who, name);
    if (t->ndim != 4)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: %s has %d dimensions, expected 4 (NCHW)",
                         who, name, t->ndim);
    memcpy(s, t->shape, 4 * sizeof s[0]);
    return CLT_SUCCESS;
}

clt_status clt__conv_check_tensor(const clt_context *ctx, const char *who, const char *name,
                                  const clt_tensor *t, const int64_t shape[4])
{
    return clt__check_tensor4(ctx, who, name, t, CLT_F32, shape);
}

clt_status clt__check_tensor4(const clt_context *ctx, const char *who, const char *name,
                              const clt_tensor *t, clt_dtype dtype, const int64_t shape[4])
{
    if (!t)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", who, name);
    if (t->ctx != ctx)
        return clt__fail(ctx, CLT_ERR_CONTEXT_MISMATCH, "%s: %s belongs to another context", who,
                         name);
    if (t->dtype != dtype)
        return clt__fail(ctx, CLT_ERR_INVALID_DTYPE, "%s: %s is %s, expected %s", who, name,
                         clt_dtype_name(t->dtype), clt_dtype_name(dtype));
    char want[96];
    shape_text(shape, want, sizeof want);
    if (t->ndim != 4 || memcmp(t->shape, shape, 4 * sizeof shape[0]) != 0) {
        char got[160] = "[";
        for (int i = 0; i < t->ndim; i++) {
            size_t l = strlen(got);
            snprintf(got + l, sizeof got - l, "%s%lld", i ? ", " : "", (long long)t->shape[i]);
        }
        strncat(got, "]", sizeof got - strlen(got) - 1);
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: %s is %s, expected %s", who, name, got, want);
    }
    return CLT_SUCCESS;
}
