/* clt_cast: dtype conversion among f32, f16, bf16 and i32 (rules in include/cltensor_cast.h, done
 * in cl_kernels/cast/cast.cl). One program per (source, destination) pair, built on first use. */
#include <stdio.h>

#include "cltensor_cast.h"
#include "ops/common/launch.h"
#include "program/program.h"
#include "tensor/tensor.h"

static int castable(clt_dtype d)
{
    return d == CLT_F32 || d == CLT_F16 || d == CLT_BF16 || d == CLT_I32;
}

clt_status clt_cast(const clt_tensor *src, clt_tensor *dst)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_cast";
    if (!src || !dst)
        return clt__fail(dst ? dst->ctx : src ? src->ctx : NULL, CLT_ERR_INVALID_ARGUMENT,
                         "%s: %s is NULL", who, src ? "dst" : "src");
    clt_context *ctx = dst->ctx;
    if (src->ctx != ctx)
        return clt__fail(ctx, CLT_ERR_CONTEXT_MISMATCH, "%s: dst and src belong to different contexts",
                         who);
    if (!castable(src->dtype) || !castable(dst->dtype))
        return clt__fail(ctx, CLT_ERR_INVALID_DTYPE, "%s: %s is %s (f32, f16, bf16 and i32 convert)",
                         who, castable(src->dtype) ? "dst" : "src",
                         clt_dtype_name(castable(src->dtype) ? dst->dtype : src->dtype));
    if (dst->numel != src->numel)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: dst has %lld elements, src %lld", who,
                         (long long)dst->numel, (long long)src->numel);
    if (dst->numel == 0)
        return CLT_SUCCESS;
    if (clt__tensors_overlap(dst, src)) {
        if (dst->dtype == src->dtype && dst->offset == src->offset)
            return CLT_SUCCESS; /* the same bits in the same place */
        return clt__fail(ctx, CLT_ERR_ALIASING,
                         "%s: dst and src overlap in the same buffer (offsets %zu and %zu)", who,
                         dst->offset, src->offset);
    }
    char opts[32];
    snprintf(opts, sizeof opts, "-DSRC=%d -DDST=%d", (int)src->dtype, (int)dst->dtype);
    cl_kernel k;
    clt_status st = clt__kernel_get(ctx, "cast", opts, "cast", &k);
    if (st != CLT_SUCCESS)
        return st;
    cl_ulong src_off = src->offset / clt_dtype_size(src->dtype);
    cl_ulong dst_off = dst->offset / clt_dtype_size(dst->dtype), count = (cl_ulong)dst->numel;
    if ((st = clt__set_arg(ctx, k, 0, sizeof(cl_mem), &src->storage->mem, who)) ||
        (st = clt__set_arg(ctx, k, 1, sizeof src_off, &src_off, who)) ||
        (st = clt__set_arg(ctx, k, 2, sizeof(cl_mem), &dst->storage->mem, who)) ||
        (st = clt__set_arg(ctx, k, 3, sizeof dst_off, &dst_off, who)) ||
        (st = clt__set_arg(ctx, k, 4, sizeof count, &count, who)))
        return st;
    return clt__launch_1d(ctx, k, (uint64_t)dst->numel, who);
}
