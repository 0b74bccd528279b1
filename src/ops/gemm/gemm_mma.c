/* Tensor-core GEMM on NVIDIA (mma.sync through inline PTX, cl_kernels/gemm/gemm_mma.cl): the entry
 * the dispatcher tries for TF32 / 3xTF32 math and 16-bit operands (after gemm_wgmma.c, which takes
 * large TF32 products on sm_90), and the capability probe.
 *
 * Taken: f32 A and B with math TF32 or 3xTF32 (gemm_mma.cl), or f16/bf16 A and B whose rows and
 * batches start at multiples of 8 elements (gemm_mma16.cl: exact products, f32 accumulation, any math
 * mode) with C f32 or of their own type (rounded once); any transposes, batches and epilogues; m, n, k
 * below 2^31 - 4096; no k segments (grad-weight products keep the fp32 split kernel). Declined
 * (CLT_ERR_UNSUPPORTED, nothing enqueued; the dispatcher then runs the portable kernels, which convert
 * 16-bit operands on load and are at least as accurate as asked): unaligned 16-bit operands, problems
 * too small to fill the GPU's tensor cores (below), devices without them. CLT_GEMM_MMA16=0 declines
 * every 16-bit problem (A/B experiments); CLT_GEMM_MMA_ALL=1 takes every size (the tests' odd shapes).
 *
 * Tiles: 128 x 128 (4 warps of 64 x 64, 3 cp.async stages in 48 KiB) when that gives at least two
 * groups per compute unit, else 64 x 128 (2 warps, 4 stages) for twice the groups.
 * Rounding: TF32 rounds every operand to nearest, ties away (ROUND=4: integer ops, 1.15x faster than
 * cvt.rna on the H200, same bits); 3xTF32 splits each operand into hi + lo (ROUND=5). See the kernel.
 * CLT_GEMM_MMA="wm,wn,stages[,round[,mi]]" forces a configuration (A/B experiments, tests); mi 2 (f32 operands
 * only: gemm_mma16.cl keeps 64 x 64 warp tiles) gives 32 x 64 warp tiles, twice the warps for a thin A such as a
 * TF32 1x1 convolution of 64 filters (n8c256h56o64: 392 warps of 64 x 64 for 132 SMs, H100 28.8 us vs cuDNN
 * 21.8-23.7). Not run on a GPU yet (no device time since it was written): a switch only until
 * bench/ab/tensor_cores.spec has measured it. */
#include "ops/gemm/gemm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/common/launch.h"
#include "program/program.h"

/* cl_nv_device_attribute_query (cl_ext.h names them; spelled out so older headers build too). */
#define NV_COMPUTE_CAPABILITY_MAJOR 0x4000
#define NV_COMPUTE_CAPABILITY_MINOR 0x4001

/* Below this many multiply-adds a 128 x 128-tile grid leaves most tensor cores idle and the launch
 * dominates: the fp32 kernels are as fast there (and exact). */
#define MMA_MIN_VOLUME (256.0 * 256.0 * 256.0)
#define MMA_MAX_DIM (2147483647LL - 4096)

/* NVIDIA's compute capability as 10 * major + minor (90 on the H200); 0 for other devices. */
static int probe_nv_sm(const clt_context *ctx)
{
    const clt_device_info *d = &ctx->dev->entry->info;
    /* The gfx902 profile stands for a device without tensor cores, whatever runs underneath. */
    if (d->vendor != CLT_VENDOR_NVIDIA || d->type != CLT_DEVICE_GPU ||
        strcmp(ctx->limits.profile, "native") != 0)
        return 0;
    cl_device_id dev = ctx->dev->entry->device;
    size_t len = 0;
    if (clGetDeviceInfo(dev, CL_DEVICE_EXTENSIONS, 0, NULL, &len) != CL_SUCCESS || len == 0)
        return 0;
    char *ext = calloc(len + 1, 1);
    int has_query = ext && clGetDeviceInfo(dev, CL_DEVICE_EXTENSIONS, len, ext, NULL) == CL_SUCCESS &&
                    strstr(ext, "cl_nv_device_attribute_query");
    free(ext);
    if (!has_query)
        return 0;
    cl_uint major = 0, minor = 0;
    if (clGetDeviceInfo(dev, NV_COMPUTE_CAPABILITY_MAJOR, sizeof major, &major, NULL) != CL_SUCCESS ||
        clGetDeviceInfo(dev, NV_COMPUTE_CAPABILITY_MINOR, sizeof minor, &minor, NULL) != CL_SUCCESS ||
        major > 100 || minor > 9)
        return 0;
    return (int)(10 * major + minor);
}

/* Probed once per context (two clGetDeviceInfo calls and the extension string cost more than a launch's
 * host time on small GEMMs); the cache is a plain int: a racing second probe writes the same value. */
int clt__device_nv_sm(const clt_context *ctx)
{
    clt_context *c = (clt_context *)ctx; /* the cache only: the answer never changes */
    if (c->nv_sm == 0)
        c->nv_sm = probe_nv_sm(ctx) + 1;
    return c->nv_sm - 1;
}

/* Ampere and later: mma.sync tf32 / f16 / bf16 and cp.async. */
int clt__device_has_tensor_cores(const clt_context *ctx)
{
    return clt__device_nv_sm(ctx) >= 80;
}

int clt_device_has_tensor_cores(const clt_context *ctx)
{
    return ctx ? clt__device_has_tensor_cores(ctx) : 0;
}

typedef struct mma_cfg {
    int wm, wn, stages, round, mi; /* mi: m16 tiles a warp (4: 64 x 64 warp tiles, 2: 32 x 64) */
} mma_cfg;

/* The configuration for p: forced by CLT_GEMM_MMA, else by grid size. */
static mma_cfg choose(const clt_context *ctx, const clt__gemm_problem *p)
{
    mma_cfg c = {2, 2, 3, p->math == CLT_MATH_FP32_3XTF32 ? 5 : 4, 4};
    double groups = (double)((p->m + 127) / 128) * (double)((p->n + 127) / 128) * (double)p->batch;
    if (groups < 2.0 * (double)ctx->dev->entry->info.compute_units) {
        c.wm = 1;
        c.stages = 4;
    }
    const char *e = getenv("CLT_GEMM_MMA");
    mma_cfg f = c;
    const int fields = e ? sscanf(e, "%d,%d,%d,%d,%d", &f.wm, &f.wn, &f.stages, &f.round, &f.mi) : 0;
    if (p->a_dtype == CLT_F16 || p->a_dtype == CLT_BF16)
        f.mi = 4; /* gemm_mma16.cl has 64 x 64 warp tiles only: the checks below must see them */
    if (fields >= 3 && f.wm >= 1 &&
        f.wm <= 4 && f.wn >= 1 && f.wn <= 4 && f.stages >= 2 && f.stages <= 4 && (f.round == 0 || f.round == 1 ||
        f.round == 3 || f.round == 4 || f.round == 5) && (f.mi == 2 || f.mi == 4) &&
        (2 * f.mi) % f.wn == 0 && 8 % f.wm == 0 && /* whole copies an item: BM and BN 16-byte chunks over WG */
        (16 * f.mi * f.wm + 64 * f.wn) * 16 * 4 * f.stages <= 49152)
        c = f;
    return c;
}

/* A and B rows and batches start at multiples of n elements (16-byte copies: 4 f32, 8 halves). */
static int operands_aligned(const clt__gemm_problem *p, int n)
{
    return clt__gemm_aligned(p->a_off, p->lda, p->a_stride, n) &&
           clt__gemm_aligned(p->b_off, p->ldb, p->b_stride, n);
}

clt_status clt__gemm_mma(clt_context *ctx, const clt__gemm_problem *p, const char *who)
{
    if (!clt__device_has_tensor_cores(ctx))
        return clt__fail(ctx, CLT_ERR_UNSUPPORTED, "%s: the device has no tensor cores", who);
    int half = p->a_dtype == CLT_F16 || p->a_dtype == CLT_BF16;
    if (half) {
        const char *off = getenv("CLT_GEMM_MMA16");
        if (off && !strcmp(off, "0"))
            return clt__fail(ctx, CLT_ERR_UNSUPPORTED, "%s: CLT_GEMM_MMA16=0", who);
        if (!operands_aligned(p, 8))
            return clt__fail(ctx, CLT_ERR_UNSUPPORTED,
                             "%s: 16-bit operands for tensor cores start rows at multiples of 8", who);
    } else if (clt__gemm_is_16bit(p)) { /* gemm_check.c rejects these; kept for internal callers */
        return clt__fail(ctx, CLT_ERR_UNSUPPORTED, "%s: no tensor-core kernel for f32 operands with 16-bit C",
                         who);
    } else if (p->math != CLT_MATH_TF32 && p->math != CLT_MATH_FP32_3XTF32) {
        return clt__fail(ctx, CLT_ERR_UNSUPPORTED, "%s: fp32 math runs on the fp32 kernels", who);
    }
    if (p->m == 0 || p->n == 0 || p->batch == 0)
        return CLT_SUCCESS;
    clt__gemm_problem no_product;
    if (clt__gemm_alpha_zero(p, &no_product)) /* BLAS: alpha = 0 reads neither A nor B */
        return clt__gemm_tiled(ctx, &no_product, who);
    if (p->a_kseg > 0 && p->a_kseg < p->k)
        return clt__fail(ctx, CLT_ERR_UNSUPPORTED, "%s: k segments run on the fp32 split kernel", who);
    if (p->m > MMA_MAX_DIM || p->n > MMA_MAX_DIM || p->k > MMA_MAX_DIM)
        return clt__fail(ctx, CLT_ERR_UNSUPPORTED, "%s: tensor-core GEMM takes m, n, k < 2^31 - 4096",
                         who);
    const char *all = getenv("CLT_GEMM_MMA_ALL"); /* tests: every size on tensor cores */
    if (!(all && !strcmp(all, "1")) &&
        ((double)p->m * (double)p->n * (double)p->k * (double)p->batch < MMA_MIN_VOLUME ||
         p->m < 16 || p->n < 16))
        return clt__fail(ctx, CLT_ERR_UNSUPPORTED, "%s: too small for the tensor-core kernel", who);
    const char *act = clt__epilogue_act_name(p->act);
    if (!act)
        return clt__fail(ctx, CLT_ERR_UNSUPPORTED, "%s: activation %d cannot be fused", who,
                         (int)p->act);
    mma_cfg c = choose(ctx, p);
    char opts[160];
    if (half) {
        /* C: f32 or the operands' type (gemm_check.c admits no other) */
        snprintf(opts, sizeof opts, "-DBF16=%d -DOUT16=%d -DWARPS_M=%d -DWARPS_N=%d -DSTAGES=%d -DIDX64=%d%s%s",
                 p->a_dtype == CLT_BF16, clt__gemm_dtype_code(p->c_dtype), c.wm, c.wn, c.stages,
                 clt__gemm_needs_idx64(p), *act ? " -DACT=" : "", act);
    } else {
        /* 16-byte copies need A and B rows (and batches) 16-byte aligned; else element copies */
        int cpw = operands_aligned(p, 4) ? 4 : 1;
        snprintf(opts, sizeof opts, "-DWARPS_M=%d -DWARPS_N=%d -DSTAGES=%d -DROUND=%d -DCPW=%d -DMI=%d -DIDX64=%d%s%s",
                 c.wm, c.wn, c.stages, c.round, cpw, c.mi, clt__gemm_needs_idx64(p), *act ? " -DACT=" : "", act);
    }
    const char *family = half ? "gemm_mma16" : "gemm_mma";
    char name[32];
    snprintf(name, sizeof name, "%s_%c%c", family, p->ta ? 't' : 'n', p->tb ? 't' : 'n');
    cl_kernel k;
    clt_status st = clt__kernel_get(ctx, family, opts, name, &k);
    if (st != CLT_SUCCESS)
        return st;
    size_t wg = (size_t)(32 * c.wm * c.wn);
    if (clt__group_limit(ctx, k) < wg)
        return clt__fail(ctx, CLT_ERR_UNSUPPORTED, "%s: the tensor-core kernel does not fit", who);
    if ((st = clt__gemm_set_args(ctx, k, p, clt__gemm_kernel_flags(p), who)) != CLT_SUCCESS)
        return st;
    size_t bm = (size_t)(16 * c.mi * c.wm), bn = (size_t)(64 * c.wn);
    size_t global[3] = {((size_t)p->n + bn - 1) / bn * wg, ((size_t)p->m + bm - 1) / bm, (size_t)p->batch};
    size_t local[3] = {wg, 1, 1};
    return clt__enqueue_kernel(ctx, k, 3, global, local, who);
}
