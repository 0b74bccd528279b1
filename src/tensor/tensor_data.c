/* Moving and setting tensor data: host transfers, fills, random fills, device copies. */
#include <math.h>
#include <string.h>

#include "ops/common/launch.h"
#include "profile/profile.h"
#include "program/program.h"
#include "tensor/tensor.h"

#define TENSOR_FAMILY "tensor"

clt_status clt_tensor_write(clt_tensor *t, const void *data, size_t bytes)
{
    CLT_PUBLIC_CALL();
    if (!t || (!data && bytes > 0))
        return clt__fail(t ? t->ctx : NULL, CLT_ERR_INVALID_ARGUMENT, "clt_tensor_write: %s is NULL",
                         t ? "data" : "t");
    if (bytes != t->nbytes)
        return clt__fail(t->ctx, CLT_ERR_INVALID_ARGUMENT,
                         "clt_tensor_write: %zu bytes given, the tensor holds %zu", bytes, t->nbytes);
    clt_status st = clt__transfer_write(t->ctx, t->storage->mem, t->offset, data, bytes);
    return st;
}

clt_status clt_tensor_read(const clt_tensor *t, void *data, size_t bytes)
{
    CLT_PUBLIC_CALL();
    if (!t || (!data && bytes > 0))
        return clt__fail(t ? t->ctx : NULL, CLT_ERR_INVALID_ARGUMENT, "clt_tensor_read: %s is NULL",
                         t ? "data" : "t");
    if (bytes != t->nbytes)
        return clt__fail(t->ctx, CLT_ERR_INVALID_ARGUMENT,
                         "clt_tensor_read: %zu bytes asked, the tensor holds %zu", bytes, t->nbytes);
    clt_status st = clt__transfer_read(t->ctx, t->storage->mem, t->offset, data, bytes);
    return st;
}

clt_status clt_tensor_read_async(const clt_tensor *t, int64_t first, int64_t count, clt_future **out)
{
    CLT_PUBLIC_CALL();
    if (out)
        *out = NULL;
    if (!t || !out)
        return clt__fail(t ? t->ctx : NULL, CLT_ERR_INVALID_ARGUMENT,
                         "clt_tensor_read_async: %s is NULL", t ? "out" : "t");
    if (first < 0 || count < 0 || first > t->numel || count > t->numel - first)
        return clt__fail(t->ctx, CLT_ERR_INVALID_ARGUMENT,
                         "clt_tensor_read_async: elements [%lld, %lld + %lld) outside the tensor's %lld",
                         (long long)first, (long long)first, (long long)count, (long long)t->numel);
    size_t esize = clt_dtype_size(t->dtype);
    return clt__future_read(t->ctx, t->storage->mem, t->offset + (size_t)first * esize,
                            (size_t)count * esize, out);
}

/* IEEE binary16 nearest to v, ties to even (the rounding mode of nearbyint by default). */
static uint16_t half_from_double(double v)
{
    uint16_t sign = signbit(v) ? 0x8000 : 0;
    if (isnan(v))
        return sign | 0x7E00;
    double a = fabs(v);
    if (a >= 65520.0) /* halfway between 65504 and 2^16 rounds to even: infinity */
        return sign | 0x7C00;
    if (a < ldexp(1.0, -14)) /* subnormal: a multiple of 2^-24; 1024 becomes the smallest normal */
        return sign | (uint16_t)nearbyint(ldexp(a, 24));
    int e;
    double m = frexp(a, &e); /* a = m * 2^e, m in [0.5, 1) */
    int exponent = e - 1 + 15;
    double q = nearbyint((m * 2.0 - 1.0) * 1024.0);
    if (q == 1024.0) {
        q = 0;
        exponent++;
    }
    if (exponent >= 31)
        return sign | 0x7C00;
    return sign | (uint16_t)(exponent << 10) | (uint16_t)q;
}

/* bfloat16 nearest to v, ties to even, straight from the double (no double rounding through f32);
 * NaN stays a quiet NaN with its sign. */
static uint16_t bf16_from_double(double v)
{
    uint16_t sign = signbit(v) ? 0x8000 : 0;
    if (isnan(v))
        return sign | 0x7FC0;
    double a = fabs(v);
    if (a >= ldexp(2.0 - ldexp(1.0, -8), 127)) /* halfway to 2^128 rounds to even: infinity */
        return sign | 0x7F80;
    if (a < ldexp(1.0, -126)) /* subnormal: a multiple of 2^-133; 128 becomes the smallest normal */
        return sign | (uint16_t)nearbyint(ldexp(a, 133));
    int e;
    double m = frexp(a, &e);
    int exponent = e - 1 + 127;
    double q = nearbyint((m * 2.0 - 1.0) * 128.0);
    if (q == 128.0) {
        q = 0;
        exponent++;
    }
    if (exponent >= 255)
        return sign | 0x7F80;
    return sign | (uint16_t)(exponent << 7) | (uint16_t)q;
}

static uint32_t saturate(double v, double lo, double hi)
{
    if (isnan(v))
        return 0;
    v = trunc(v);
    if (v < lo)
        v = lo;
    if (v > hi)
        v = hi;
    return (uint32_t)(int64_t)v;
}

/* The bit pattern of value in dtype, in the low bits of a uint. */
static uint32_t fill_pattern(clt_dtype dtype, double value)
{
    switch (dtype) {
    case CLT_F32: {
        float f = (float)value;
        uint32_t bits;
        memcpy(&bits, &f, sizeof bits);
        return bits;
    }
    case CLT_F16: return half_from_double(value);
    case CLT_BF16: return bf16_from_double(value);
    case CLT_I32: return saturate(value, -2147483648.0, 2147483647.0);
    case CLT_U8: return saturate(value, 0.0, 255.0);
    case CLT_C64: break; /* rejected by clt_tensor_fill */
    }
    return 0;
}

static clt_status launch_over(clt_tensor *t, cl_kernel k, const char *who)
{
    return clt__launch_1d(t->ctx, k, (uint64_t)t->numel, who);
}

clt_status clt_tensor_fill(clt_tensor *t, double value)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_tensor_fill";
    if (!t)
        return clt__fail(NULL, CLT_ERR_INVALID_ARGUMENT, "%s: t is NULL", who);
    if (t->dtype == CLT_C64) /* two floats per element: no fill pattern of one dtype word */
        return clt__fail(t->ctx, CLT_ERR_INVALID_DTYPE, "%s: c64 tensors cannot be filled", who);
    if (t->numel == 0)
        return CLT_SUCCESS;
    size_t esize = clt_dtype_size(t->dtype);
    const char *name = esize == 1 ? "tensor_fill_u8" : esize == 2 ? "tensor_fill_u16" : "tensor_fill_u32";
    cl_kernel k;
    clt_status st = clt__kernel_get(t->ctx, TENSOR_FAMILY, "", name, &k);
    if (st != CLT_SUCCESS)
        return st;
    cl_ulong offset = t->offset / esize, count = (cl_ulong)t->numel;
    cl_uint pattern = fill_pattern(t->dtype, value);
    if ((st = clt__set_arg(t->ctx, k, 0, sizeof(cl_mem), &t->storage->mem, who)) ||
        (st = clt__set_arg(t->ctx, k, 1, sizeof offset, &offset, who)) ||
        (st = clt__set_arg(t->ctx, k, 2, sizeof count, &count, who)) ||
        (st = clt__set_arg(t->ctx, k, 3, sizeof pattern, &pattern, who)))
        return st;
    return launch_over(t, k, who);
}

clt_status clt_tensor_fill_uniform(clt_tensor *t, uint64_t seed, float lo, float hi)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_tensor_fill_uniform";
    if (!t)
        return clt__fail(NULL, CLT_ERR_INVALID_ARGUMENT, "%s: t is NULL", who);
    if (t->dtype != CLT_F32)
        return clt__fail(t->ctx, CLT_ERR_INVALID_DTYPE, "%s: tensor is %s, expected f32", who,
                         clt_dtype_name(t->dtype));
    if (!(lo < hi) || !isfinite(lo) || !isfinite(hi))
        return clt__fail(t->ctx, CLT_ERR_INVALID_ARGUMENT, "%s: need finite lo < hi, got [%g, %g)",
                         who, (double)lo, (double)hi);
    if (t->numel == 0)
        return CLT_SUCCESS;
    cl_kernel k;
    clt_status st = clt__kernel_get(t->ctx, TENSOR_FAMILY, "", "tensor_fill_uniform_f32", &k);
    if (st != CLT_SUCCESS)
        return st;
    /* The stream key is the seed scrambled once, so nearby seeds give unrelated streams. */
    uint64_t z = seed + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    cl_ulong key = z ^ (z >> 31);
    cl_ulong offset = t->offset / sizeof(float), count = (cl_ulong)t->numel;
    if ((st = clt__set_arg(t->ctx, k, 0, sizeof(cl_mem), &t->storage->mem, who)) ||
        (st = clt__set_arg(t->ctx, k, 1, sizeof offset, &offset, who)) ||
        (st = clt__set_arg(t->ctx, k, 2, sizeof count, &count, who)) ||
        (st = clt__set_arg(t->ctx, k, 3, sizeof key, &key, who)) ||
        (st = clt__set_arg(t->ctx, k, 4, sizeof lo, &lo, who)) ||
        (st = clt__set_arg(t->ctx, k, 5, sizeof hi, &hi, who)))
        return st;
    return launch_over(t, k, who);
}

clt_status clt_tensor_copy(clt_tensor *dst, const clt_tensor *src)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_tensor_copy";
    if (!dst || !src)
        return clt__fail(dst ? dst->ctx : src ? src->ctx : NULL, CLT_ERR_INVALID_ARGUMENT,
                         "%s: %s is NULL", who, dst ? "src" : "dst");
    clt_context *ctx = dst->ctx;
    if (src->ctx != ctx)
        return clt__fail(ctx, CLT_ERR_CONTEXT_MISMATCH, "%s: dst and src belong to different contexts",
                         who);
    if (dst->dtype != src->dtype)
        return clt__fail(ctx, CLT_ERR_INVALID_DTYPE, "%s: dst is %s, src is %s", who,
                         clt_dtype_name(dst->dtype), clt_dtype_name(src->dtype));
    if (dst->numel != src->numel)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: dst has %lld elements, src %lld", who,
                         (long long)dst->numel, (long long)src->numel);
    if (dst->nbytes == 0)
        return CLT_SUCCESS;
    if (clt__tensors_overlap(dst, src)) {
        if (dst->offset == src->offset)
            return CLT_SUCCESS; /* the same elements: nothing to do */
        return clt__fail(ctx, CLT_ERR_ALIASING,
                         "%s: dst and src overlap in the same buffer (offsets %zu and %zu, %zu bytes)",
                         who, dst->offset, src->offset, dst->nbytes);
    }
    cl_int err = clEnqueueCopyBuffer(ctx->queue, src->storage->mem, dst->storage->mem, src->offset,
                                     dst->offset, dst->nbytes, 0, NULL, clt__prof_event(ctx));
    if (err != CL_SUCCESS)
        return clt__cl_fail(ctx, err, "clt_tensor_copy: clEnqueueCopyBuffer");
    clt__prof_commit(ctx, who, "copy", CLT_PROFILE_TRANSFER, dst->nbytes);
    return CLT_SUCCESS;
}
