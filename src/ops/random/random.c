/* Philox-based random numbers and dropout (cl_kernels/random/random.cl): checks and one launch. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cltensor_random.h"
#include "ops/common/launch.h"
#include "ops/common/strided.h"
#include "ops/random/random_options.h"
#include "program/program.h"
#include "tune/dispatch_common.h"

#define RANDOM_FAMILY "random"

/* CPU devices: random_normal_cpu with RANDOM_CPU_BLOCKS Philox blocks per work item (random.cl's
 * RND_CPU_W, set by clt__random_options). */
#define RANDOM_CPU_BLOCKS 8

const char *clt__random_options(int cpu_device, int ilp)
{
#define RANDOM_SQRT " -cl-fp32-correctly-rounded-divide-sqrt"
    static const char *const gpu[4] = {"-DRND_ILP=1" RANDOM_SQRT, "-DRND_ILP=2" RANDOM_SQRT,
                                       "-DRND_ILP=4" RANDOM_SQRT, "-DRND_ILP=8" RANDOM_SQRT};
    static const char *const cpu[4] = {"-DRND_CPU_W=8 -DRND_ILP=1" RANDOM_SQRT,
                                       "-DRND_CPU_W=8 -DRND_ILP=2" RANDOM_SQRT,
                                       "-DRND_CPU_W=8 -DRND_ILP=4" RANDOM_SQRT,
                                       "-DRND_CPU_W=8 -DRND_ILP=8" RANDOM_SQRT};
#undef RANDOM_SQRT
    int i = ilp == 8 ? 3 : ilp == 4 ? 2 : ilp == 2 ? 1 : 0;
    return cpu_device ? cpu[i] : gpu[i];
}

int clt__random_ilp(void)
{
    const char *e = getenv("CLT_RANDOM_ILP");
    int v = e ? atoi(e) : RANDOM_GPU_ILP;
    return v == 1 || v == 2 || v == 4 || v == 8 ? v : RANDOM_GPU_ILP;
}

/* RND_ILP of ctx's build: GPU-class devices (the gfx902 profile on POCL too) take
 * clt__random_ilp(), CPU-class ones 1 (random_normal_cpu has lanes of its own). */
static int ilp_of(const clt_context *ctx)
{
    return clt__device_class_of(ctx) == CLT__CLASS_CPU ? 1 : clt__random_ilp();
}

static clt_status get_kernel(clt_context *ctx, const char *name, cl_kernel *k)
{
    const char *options =
        clt__random_options(ctx->dev->entry->info.type == CLT_DEVICE_CPU, ilp_of(ctx));
    return clt__kernel_get(ctx, RANDOM_FAMILY, options, name, k);
}

/* Arguments after the kernel's own: sizes listed with their values. */
typedef struct karg {
    size_t size;
    const void *value;
} karg;

/* items: work items wanted (elements / elements per item); count: elements (0 = nothing). */
static clt_status run(clt_context *ctx, const char *name, uint64_t count, uint64_t items, int n,
                      const karg *args, const char *who)
{
    if (count == 0)
        return CLT_SUCCESS;
    cl_kernel k;
    clt_status st = get_kernel(ctx, name, &k);
    for (int i = 0; !st && i < n; i++)
        st = clt__set_arg(ctx, k, (cl_uint)i, args[i].size, args[i].value, who);
    return st ? st : clt__launch_1d(ctx, k, items, who);
}

static clt_status fill(const char *who, const char *name, clt_tensor *out, uint64_t seed,
                       uint64_t offset, float a, float b)
{
    if (!out)
        return clt__fail(NULL, CLT_ERR_INVALID_ARGUMENT, "%s: out is NULL", who);
    clt_status st = clt__check_dtype(who, out, "out", CLT_F32);
    if (st)
        return st;
    cl_ulong off = out->offset / 4, count = (cl_ulong)out->numel, s = seed, o = offset;
    karg args[] = {{sizeof(cl_mem), &out->storage->mem}, {8, &off}, {8, &count}, {8, &s}, {8, &o},
                   {4, &a},
                   {4, &b}};
    uint64_t per_item = 4 * (uint64_t)ilp_of(out->ctx); /* RND_ILP Philox blocks of 4 each */
    if (strcmp(name, "random_normal") == 0 && clt__device_class_of(out->ctx) == CLT__CLASS_CPU) {
        name = "random_normal_cpu"; /* the same numbers, 8 blocks per item in SIMD lanes */
        per_item = 4 * RANDOM_CPU_BLOCKS;
    }
    return run(out->ctx, name, count, (count + per_item - 1) / per_item, 7, args, who);
}

clt_status clt_random_uniform(clt_tensor *out, uint64_t seed, uint64_t offset, float lo, float hi)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_random_uniform";
    if (out && !(isfinite(lo) && isfinite(hi) && lo < hi && isfinite(hi - lo)))
        return clt__fail(out->ctx, CLT_ERR_INVALID_ARGUMENT,
                         "%s: need finite lo < hi, got lo = %g, hi = %g", who, (double)lo,
                         (double)hi);
    return fill(who, "random_uniform", out, seed, offset, lo, hi);
}

clt_status clt_random_normal(clt_tensor *out, uint64_t seed, uint64_t offset, float mean,
                             float stddev)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_random_normal";
    if (out && !(isfinite(mean) && isfinite(stddev) && stddev >= 0))
        return clt__fail(out->ctx, CLT_ERR_INVALID_ARGUMENT,
                         "%s: need finite mean and stddev >= 0, got %g, %g", who, (double)mean,
                         (double)stddev);
    return fill(who, "random_normal", out, seed, offset, mean, stddev);
}

static clt_status check_p(const char *who, const clt_context *ctx, float p)
{
    if (p >= 0.0f && p <= 1.0f)
        return CLT_SUCCESS;
    return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: p = %g, expected 0 <= p <= 1", who,
                     (double)p);
}

/* x / dy, out / dx (same shape; may be the same memory), mask u8 of that shape. */
static clt_status check_triple(const char *who, const clt_tensor *x, const char *xn,
                               const clt_tensor *out, const char *on, const clt_tensor *mask)
{
    const char *names[3] = {xn, on, "mask"};
    const clt_tensor *t[3] = {x, out, mask};
    clt_status st;
    if ((st = clt__check_handles(who, 3, t, names)) || (st = clt__check_dtype(who, x, xn, CLT_F32)) ||
        (st = clt__check_dtype(who, out, on, CLT_F32)) ||
        (st = clt__check_dtype(who, mask, "mask", CLT_U8)) ||
        (st = clt__check_shape(who, out, on, x->ndim, x->shape)) ||
        (st = clt__check_shape(who, mask, "mask", x->ndim, x->shape)) ||
        (st = clt__check_no_overlap(who, mask, "mask", out, on)) ||
        (st = clt__check_no_overlap(who, mask, "mask", x, xn)))
        return st;
    if (out->storage == x->storage && out->offset == x->offset)
        return CLT_SUCCESS;
    return clt__check_no_overlap(who, x, xn, out, on);
}

clt_status clt_dropout(const clt_tensor *x, float p, uint64_t seed, uint64_t offset, clt_tensor *out,
                       clt_tensor *mask)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_dropout";
    clt_status st = check_triple(who, x, "x", out, "out", mask);
    if (st || (st = check_p(who, x->ctx, p)))
        return st;
    float scale = p < 1.0f ? 1.0f / (1.0f - p) : 0.0f;
    cl_ulong oo = out->offset / 4, xo = x->offset / 4, mo = mask->offset, n = (cl_ulong)x->numel;
    cl_ulong s = seed, o = offset;
    karg args[] = {{sizeof(cl_mem), &out->storage->mem}, {8, &oo}, {sizeof(cl_mem), &x->storage->mem},
                   {8, &xo}, {sizeof(cl_mem), &mask->storage->mem}, {8, &mo}, {8, &n}, {8, &s},
                   {8, &o}, {4, &p}, {4, &scale}};
    return run(x->ctx, "random_dropout", n, (n + 3) / 4, 11, args, who);
}

clt_status clt_dropout_backward(const clt_tensor *dy, const clt_tensor *mask, float p, clt_tensor *dx)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_dropout_backward";
    clt_status st = check_triple(who, dy, "dy", dx, "dx", mask);
    if (st || (st = check_p(who, dy->ctx, p)))
        return st;
    float scale = p < 1.0f ? 1.0f / (1.0f - p) : 0.0f;
    cl_ulong xo = dx->offset / 4, yo = dy->offset / 4, mo = mask->offset, n = (cl_ulong)dy->numel;
    karg args[] = {{sizeof(cl_mem), &dx->storage->mem}, {8, &xo}, {sizeof(cl_mem), &dy->storage->mem},
                   {8, &yo}, {sizeof(cl_mem), &mask->storage->mem}, {8, &mo}, {8, &n}, {4, &scale}};
    return run(dy->ctx, "random_dropout_backward", n, n, 8, args, who);
}
