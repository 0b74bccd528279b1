/* 16-bit Conv2D operands (f16 / bf16) on the f32 kernels: every call that takes them (forward and both
 * backward passes) runs on f32 stand-ins. Why copies rather than converting on load: there are a dozen
 * forward and backward kernels (implicit GEMM, Winograd, im2col + GEMM, CPU, depthwise, tensor-core
 * forms), and the widening is exact, so one conversion pass in front of them gives every kernel the
 * inputs at no loss. */
#include "ops/conv/conv_f32.h"

#include "cltensor_cast.h"

int clt__conv_is16(clt_dtype d)
{
    return d == CLT_F16 || d == CLT_BF16;
}

clt_status clt__conv_check_dtypes(const clt_context *ctx, const char *who, const char *lead_name, clt_dtype lead,
                                  const char *out_name, clt_dtype out)
{
    if (lead != CLT_F32 && !clt__conv_is16(lead))
        return clt__fail(ctx, CLT_ERR_INVALID_DTYPE, "%s: %s is %s, expected f32, f16 or bf16", who, lead_name,
                         clt_dtype_name(lead));
    if (out != CLT_F32 && out != lead)
        return clt__fail(ctx, CLT_ERR_INVALID_DTYPE, "%s: %s is %s, expected f32%s%s", who, out_name,
                         clt_dtype_name(out), lead == CLT_F32 ? "" : " or ", lead == CLT_F32 ? "" : clt_dtype_name(lead));
    return CLT_SUCCESS;
}

clt_status clt__conv_via_f32(clt_context *ctx, const clt_tensor *a, const clt_tensor *b, clt_tensor *out,
                             clt__conv_f32_fn fn, const void *arg)
{
    clt_tensor *af = NULL, *bf = NULL, *of = NULL;
    clt_status st;
    if ((st = clt_tensor_create(ctx, CLT_F32, a->ndim, a->shape, &af)) ||
        (st = clt_tensor_create(ctx, CLT_F32, b->ndim, b->shape, &bf)) ||
        (out->dtype != CLT_F32 && (st = clt_tensor_create(ctx, CLT_F32, out->ndim, out->shape, &of))))
        goto done;
    if (!(st = clt_cast(a, af)) && !(st = clt_cast(b, bf)) && !(st = fn(af, bf, of ? of : out, arg)) && of)
        st = clt_cast(of, out);
done:
    clt_tensor_free(af), clt_tensor_free(bf), clt_tensor_free(of);
    return st;
}
