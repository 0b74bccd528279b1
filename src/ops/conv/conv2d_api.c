/* clt_conv2d: validate once (shapes through conv_geometry.c, dtypes, bias, activation, aliasing), build
 * the clt__conv_problem and hand it to the dispatcher (tune/conv_dispatch.c). 16-bit inputs go through
 * f32 stand-ins (conv_f32.c). */
#include <string.h>

#include "ops/conv/conv_f32.h"

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

/* The forward's other arguments, for clt__conv_via_f32. */
typedef struct fwd_args {
    const clt_tensor *bias;
    clt_conv2d_params p;
    clt_unary_op act;
    float alpha;
} fwd_args;

static clt_status forward_f32(const clt_tensor *x, const clt_tensor *w, clt_tensor *out, const void *arg)
{
    const fwd_args *f = arg;
    return clt_conv2d(x, w, f->bias, &f->p, f->act, f->alpha, out);
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
    /* x f32, f16 or bf16; w the same; out f32 or the inputs' type */
    const clt_dtype in = x->dtype;
    if ((st = clt__conv_check_dtypes(ctx, who, "x", in, "out", out->dtype)) ||
        (st = clt__conv_shape4(ctx, who, "x", x, xs)) || (st = clt__conv_shape4(ctx, who, "w", w, ws)) ||
        (st = clt__check_tensor4(ctx, who, "x", x, in, xs)) || (st = clt__check_tensor4(ctx, who, "w", w, in, ws)))
        return st;
    clt__conv_problem pr;
    memset(&pr, 0, sizeof pr);
    if ((st = clt__conv_geom_make(ctx, who, xs, ws, p, &pr.g)))
        return st;
    const int64_t os[4] = {pr.g.n, pr.g.co, pr.g.ho, pr.g.wo};
    if ((st = clt__check_tensor4(ctx, who, "out", out, out->dtype, os)))
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
    if (clt__conv_is16(in)) {
        /* the products of 16-bit values are exact in TF32: tensor cores where the kernels take the
         * shape, the same products on the fp32 kernels elsewhere; sums in fp32 as for f32 */
        fwd_args f = {bias, {0}, activation, activation_alpha};
        if (p)
            f.p = *p;
        else
            clt_conv2d_params_init(&f.p);
        f.p.math = CLT_MATH_TF32;
        return clt__conv_via_f32(ctx, x, w, out, forward_f32, &f);
    }
    pr.x = x->storage->mem, pr.x_off = x->offset / sizeof(float);
    pr.w = w->storage->mem, pr.w_off = w->offset / sizeof(float);
    pr.out = out->storage->mem, pr.out_off = out->offset / sizeof(float);
    if (bias)
        pr.bias = bias->storage->mem, pr.bias_off = bias->offset / sizeof(float);
    pr.act = activation;
    pr.act_alpha = activation_alpha;
    return clt__conv_dispatch(ctx, &pr, who);
}
