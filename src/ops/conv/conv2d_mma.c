/* Conv2D forward on NVIDIA tensor cores (cl_kernels/conv/conv2d_mma.cl: the implicit GEMM on mma.sync,
 * TF32 or 3xTF32, with gemm_mma.cl's staging and arithmetic), tried first by clt__conv2d_ours.
 *
 * When: math TF32 or 3xTF32 on a device with mma.sync (compute capability >= 8.0, native profile), one
 * group, more than one input channel (depthwise keeps its direct kernel); 1x1 stride-1 unpadded
 * convolutions never get here (they are a GEMM, which has its own tensor-core paths). Any kernel size,
 * stride, padding and dilation; any Co, P = N Ho Wo and K = Ci Kh Kw (edges zero-filled and masked).
 *
 * Two forms of the same kernel:
 *   channels-last (conv2d_mma_nhwc) when Ci is a multiple of 16: x is first transposed to
 *     [N][H][W][Ci] and the weights to [Co][Kh][Kw][Ci] in the workspace (slot 1, the conv columns'
 *     slot: one forward call uses one path), both by the layout family's tiled copy, so the kernel
 *     stages its input by 16-byte copies; the transposes cost one read and one write of x.
 *   gather (conv2d_mma) otherwise: x read in place, element by element (4-byte copies).
 * Opt-in: CLT_CONV_MMA=1 runs one of the forms wherever one applies (channels-last where Ci is a multiple
 * of 16, else gather), =gather the gather form only, =0 no tensor-core forward at all (conv2d_wgmma.c
 * declines too; under 1 and gather as well, so these kernels are measured and tested on Hopper); unset
 * or anything else: declined, the fp32 kernels (or wgmma on Hopper) run. Why (bench conv2d_tf32, H100, one
 * call, 2026-12-07; fp32 kernels: n8c64h56 3x3 47.9 us, n32c128h28 128.3, n1c64h56 21.7, 7x7 stem 145.6):
 * the gather form 72.8 / 185.6 / 73.9 / 135.3 (its 4-byte gathers, 4x a GEMM's copy instructions), the
 * channels-last form over 5 tile shapes 62.1-88.6 / 147.0-171.2 / 39.5-66.8 (the transposes 12.5 + 5 us
 * of it at n32c128h28; the kernel 154 us at 64 x 128 tiles of 2 warps: groups of 2-8 warps with 48 KiB
 * of ring each leave too few warps an SM for mma.sync's latencies). wgmma (conv2d_wgmma.c) took
 * 33.5 / 69.8 there. Declined problems return CLT_ERR_UNSUPPORTED with nothing enqueued (the caller
 * goes on to the fp32 variants). CLT_CONV_MMA_CFG=mi,wm,wn,stages picks the tile shape (A/B runs).
 *
 * Tiles: 128 x 128 (Co > 64: 4 warps of 64 x 64, 3 cp.async stages in 48 KiB) when that gives two groups
 * per compute unit, else 64 x 128 (2 warps, 4 stages). Weights by 16-byte copies when K and their offset
 * are multiples of 4, else element by element (a 7x7 stem over 3 channels: K = 147). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/common/launch.h"
#include "ops/common/strided.h"
#include "ops/conv/conv2d.h"
#include "ops/gemm/gemm.h"
#include "program/program.h"

#define WORKSPACE_SLOT 1

clt__conv_mma_setting clt__conv_mma_env(void)
{
    const char *e = getenv("CLT_CONV_MMA");
    if (!e)
        return CLT__CONV_MMA_AUTO;
    if (!strcmp(e, "0"))
        return CLT__CONV_MMA_OFF;
    if (!strcmp(e, "1"))
        return CLT__CONV_MMA_ON;
    return strcmp(e, "gather") ? CLT__CONV_MMA_AUTO : CLT__CONV_MMA_GATHER;
}

static size_t groups_of(int64_t cols, int64_t bn, int64_t rows, int64_t bm)
{
    return (size_t)((cols + bn - 1) / bn) * (size_t)((rows + bm - 1) / bm);
}

/* The kernel's shape: m16 tiles a warp (warp tiles of 16 mi x 64), warps along Co and along P, ring stages. */
typedef struct mma_cfg {
    int mi, wm, wn, stages;
} mma_cfg;

static int cfg_valid(const mma_cfg *c)
{
    const int nw = c->wm * c->wn, bm = 16 * c->mi * c->wm, bn = 64 * c->wn;
    return (c->mi == 2 || c->mi == 4) && c->wm >= 1 && c->wm <= 4 && c->wn >= 1 && c->wn <= 2 && nw <= 8 &&
           16 % nw == 0 && c->stages >= 2 && c->stages <= 4 && (bm * 4) % (32 * nw) == 0 &&
           (bn * 4) % (32 * nw) == 0 && c->stages * (bm + bn) * 64 <= 48 * 1024;
}

/* CLT_CONV_MMA_CFG=mi,wm,wn,stages (A/B runs); anything malformed or invalid leaves the built-in choice. */
static int cfg_from_env(mma_cfg *c)
{
    const char *e = getenv("CLT_CONV_MMA_CFG");
    mma_cfg v;
    char tail;
    if (!e || sscanf(e, "%d,%d,%d,%d%c", &v.mi, &v.wm, &v.wn, &v.stages, &tail) != 4 || !cfg_valid(&v))
        return 0;
    *c = v;
    return 1;
}

/* One launch of the kernel: its build options' choices and the problem it reads (for the
 * channels-last form, x and w point into the workspace). */
typedef struct mma_run {
    clt__conv_problem q;
    const char *opts, *name;
    int nhwc;
    mma_cfg cfg;
    const clt__conv_problem *orig; /* the caller's problem: the transposes' sources */
} mma_run;

/* x (N, Ci, H*W) -> (N, H*W, Ci) at ws offset 0 and w (Co, Ci, Kh*Kw) -> (Co, Kh*Kw, Ci) at the
 * offset q.w_off: one batched transpose each. */
static clt_status transpose_cl(clt_context *ctx, cl_mem dst, uint64_t dst_off, cl_mem src, uint64_t src_off,
                               int64_t batch, int64_t c, int64_t hw, const char *who)
{
    clt__sd s;
    memset(&s, 0, sizeof s);
    s.ndim = 3;
    s.count = batch * c * hw;
    s.a_off = (int64_t)src_off, s.b_off = (int64_t)dst_off;
    s.shape[0] = batch, s.shape[1] = hw, s.shape[2] = c;
    s.a[0] = c * hw, s.a[1] = 1, s.a[2] = hw;
    s.b[0] = hw * c, s.b[1] = c, s.b[2] = 1;
    return clt__layout_copy(ctx, dst, src, &s, who);
}

static clt_status run_stages(clt_context *ctx, const void *arg, const char *who)
{
    const mma_run *r = arg;
    const clt__conv_geom *g = &r->q.g;
    clt_status st;
    if (r->nhwc &&
        ((st = transpose_cl(ctx, r->q.x, 0, r->orig->x, r->orig->x_off, g->n, g->ci, g->h * g->w, who)) ||
         (st = transpose_cl(ctx, r->q.w, r->q.w_off, r->orig->w, r->orig->w_off, g->co, g->ci, g->kh * g->kw,
                            who))))
        return st;
    cl_kernel kern;
    if ((st = clt__kernel_get(ctx, "conv2d_mma", r->opts, r->name, &kern)) != CLT_SUCCESS)
        return st;
    const size_t wg = (size_t)(32 * r->cfg.wm * r->cfg.wn);
    if (clt__group_limit(ctx, kern) < wg)
        return CLT_ERR_UNSUPPORTED;
    if ((st = clt__conv_set_args(ctx, &r->q, kern, 0, who)) != CLT_SUCCESS)
        return st;
    const int64_t cols = g->n * g->ho * g->wo, bm = 16 * r->cfg.mi * r->cfg.wm, bn = 64 * r->cfg.wn;
    size_t global[3] = {(size_t)((cols + bn - 1) / bn) * wg, (size_t)((g->co + bm - 1) / bm), 1};
    size_t local[3] = {wg, 1, 1};
    return clt__enqueue_kernel(ctx, kern, 3, global, local, who);
}

clt_status clt__conv2d_mma(clt_context *ctx, const clt__conv_problem *p, const char *who)
{
    const clt__conv_geom *g = &p->g;
    /* opt-in: automatically, measured slower than the fp32 kernels (the top) */
    const clt__conv_mma_setting want = clt__conv_mma_env();
    if ((want != CLT__CONV_MMA_ON && want != CLT__CONV_MMA_GATHER) ||
        (g->math != CLT_MATH_TF32 && g->math != CLT_MATH_FP32_3XTF32) || g->groups != 1 || g->ci < 2 ||
        clt__conv_is_pointwise(g) || p->w_flipped || !clt__device_has_tensor_cores(ctx))
        return CLT_ERR_UNSUPPORTED;
    const int nhwc = g->ci % 16 == 0 && want != CLT__CONV_MMA_GATHER;
    const int64_t k = g->ci * g->kh * g->kw, cols = g->n * g->ho * g->wo;
    /* int inside one image, the weights and the column range (clt__conv2d_ours checked), and every
     * offset the kernel forms from them: the window's origin may sit a padding outside the image */
    if (g->pt + (int64_t)g->kh * g->dh > INT_MAX / 4 || g->pl + (int64_t)g->kw * g->dw > INT_MAX / 4 ||
        cols > INT_MAX - 256 || g->co > INT_MAX - 256)
        return CLT_ERR_UNSUPPORTED;
    mma_run r;
    memset(&r, 0, sizeof r);
    r.q = *p;
    r.orig = p;
    r.nhwc = nhwc;
    if (nhwc) {
        /* the transposed input, then the weights (16-element aligned: Ci is a multiple of 16) */
        const uint64_t xe = (uint64_t)(g->n * g->h * g->w * g->ci), we = (uint64_t)(g->co * k);
        cl_mem ws;
        int fresh;
        clt_status st = clt__workspace_get(ctx, WORKSPACE_SLOT, (size_t)(xe + we) * sizeof(float), &ws, &fresh);
        if (st == CLT_ERR_OUT_OF_DEVICE_MEMORY) /* the fp32 kernels need no workspace */
            return CLT_ERR_UNSUPPORTED;
        if (st)
            return st;
        r.q.x = ws, r.q.x_off = 0;
        r.q.w = ws, r.q.w_off = xe;
    }
    if (!cfg_from_env(&r.cfg)) {
        const uint64_t cus = ctx->dev->entry->info.compute_units;
        const int wm = g->co > 64 && groups_of(cols, 128, g->co, 128) >= 2 * cus ? 2 : 1;
        r.cfg = (mma_cfg){4, wm, 2, wm == 2 ? 3 : 4};
    }
    int cpw = k % 4 == 0 && r.q.w_off % 4 == 0 ? 4 : 1;
    int round = g->math == CLT_MATH_FP32_3XTF32 ? 5 : 4;
    const double big = 2147483647.0 - 4096.0;
    int idx64 = (double)p->x_off + (double)g->n * (double)g->ci * (double)g->h * (double)g->w > big ||
                (double)p->out_off + (double)g->n * (double)g->co * (double)g->ho * (double)g->wo > big;
    char opts[160];
    snprintf(opts, sizeof opts, "-DMI=%d -DWARPS_M=%d -DWARPS_N=%d -DSTAGES=%d -DROUND=%d -DCPW=%d -DNHWC=%d -DIDX64=%d",
             r.cfg.mi, r.cfg.wm, r.cfg.wn, r.cfg.stages, round, cpw, nhwc, idx64);
    r.opts = opts;
    r.name = nhwc ? "conv2d_mma_nhwc" : "conv2d_mma";
    return clt__rehearse_then_run(ctx, run_stages, &r, who);
}
