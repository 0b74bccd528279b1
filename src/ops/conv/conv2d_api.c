/* clt_conv2d: validate once (shapes through conv_geometry.c, bias, activation, aliasing), build the
 * clt__conv_problem and hand it to the dispatcher (tune/conv_dispatch.c). */
#include <string.h>

#include "ops/conv/conv2d.h"
#include "ops/gemm/gemm.h"
#include "tensor/tensor.h"
#include "ops/conv/conv_dispatch.h"

static clt_status check_bias(const clt_context *ctx, const char *who, const clt_tensor *b,
                             int64_t co)
{
    if (b->ctx != ctx)
        return clt__fail(ctx, CLT_ERR_CONTEXT_MISMATCH, "%s: bias belongs to another context", who);
    if (b->dtype != CLT_F32)
        return clt__fail(ctx, CLT_ERR_INVALID_DTYPE, "%s: bias is %s, expected f32", who,
                         clt_dtype_name(b->dtype));
    if (b->ndim != 1 || b->shape[0] != co)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: bias has %d dimension(s) (first %lld), expected [%lld]",
                         who, b->ndim, (long long)(b->ndim > 0 ? b->shape[0] : 0), (long long)co);
    return CLT_SUCCESS;
}

clt_status clt_conv2d(const clt_tensor *x, const clt_tensor *w, const clt_tensor *bias,
                      const clt_conv2d_params *p, clt_unary_op activation, float activation_alpha,
                      clt_tensor *out)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_conv2d";
    clt_context *ctx = x ? x->ctx : w ? w->ctx : out ? out->ctx : NULL;
    if (!x || !w || !out)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", who,
                         !x ? "x" : !w ? "w" : "out");
    int64_t xs[4], ws[4];
    clt_status st;
    if ((st = clt__conv_shape4(ctx, who, "x", x, xs)) || (st = clt__conv_shape4(ctx, who, "w", w, ws)) ||
        (st = clt__conv_check_tensor(ctx, who, "x", x, xs)) ||
        (st = clt__conv_check_tensor(ctx, who, "w", w, ws)))
        return st;
    clt__conv_problem pr;
    memset(&pr, 0, sizeof pr);
    if ((st = clt__conv_geom_make(ctx, who, xs, ws, p, &pr.g)))
        return st;
    const int64_t os[4] = {pr.g.n, pr.g.co, pr.g.ho, pr.g.wo};
    if ((st = clt__conv_check_tensor(ctx, who, "out", out, os)))
        return st;
    if (bias && (st = check_bias(ctx, who, bias, pr.g.co)))
        return st;
    if (!clt__epilogue_act_name(activation))
        return clt__fail(ctx, CLT_ERR_UNSUPPORTED,
                         "%s: activation %d is not in the epilogue set (identity, relu, gelu_erf, "
                         "gelu_tanh, tanh, sigmoid, silu)", who, (int)activation);
    if (clt__tensors_overlap(out, x) || clt__tensors_overlap(out, w) ||
        (bias && clt__tensors_overlap(out, bias)))
        return clt__fail(ctx, CLT_ERR_ALIASING, "%s: out overlaps %s", who,
                         clt__tensors_overlap(out, x) ? "x" : clt__tensors_overlap(out, w) ? "w" : "bias");
    if (pr.g.n == 0)
        return CLT_SUCCESS;
    pr.x = x->storage->mem, pr.x_off = x->offset / sizeof(float);
    pr.w = w->storage->mem, pr.w_off = w->offset / sizeof(float);
    pr.out = out->storage->mem, pr.out_off = out->offset / sizeof(float);
    if (bias)
        pr.bias = bias->storage->mem, pr.bias_off = bias->offset / sizeof(float);
    pr.act = activation;
    pr.act_alpha = activation_alpha;
    return clt__conv_dispatch(ctx, &pr, who);
}
