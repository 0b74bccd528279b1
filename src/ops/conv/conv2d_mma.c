/* Conv2D forward on NVIDIA tensor cores (cl_kernels/conv/conv2d_mma.cl: the implicit GEMM on mma.sync,
 * TF32 or 3xTF32, with gemm_mma.cl's staging and arithmetic), tried first by clt__conv2d_ours.
 *
 * When: math TF32 or 3xTF32 on a device with mma.sync (compute capability >= 8.0, native profile), one
 * group, more than one input channel (depthwise keeps its direct kernel); 1x1 stride-1 unpadded
 * convolutions never get here (they are a GEMM, which has its own tensor-core paths). Any kernel size,
 * stride, padding and dilation; any Co, P = N Ho Wo and K = Ci Kh Kw (edges zero-filled and masked).
 * Opt-in (CLT_CONV_MMA=1; otherwise every problem is declined): on the H100 (bench conv2d_tf32, one
 * call, 2026-12-07) it was slower than the fp32 kernels on 4 of 5 cases (n8c64h56 3x3 72.9 vs 47.5 us,
 * n32c128h28 184.9 vs 128.7, n1c64h56 73.7 vs 18.6; 1x1 even) and faster only on the 7x7 stem (134.6 vs
 * 146.3): its groups of 2-4 warps with 64 x 64 per warp leave too few warps an SM to hide the gather
 * (n1c64h56: 25 groups on 132 SMs). Declined problems return CLT_ERR_UNSUPPORTED with nothing enqueued
 * (the caller goes on to the fp32 variants).
 *
 * Tiles: 128 x 128 (Co > 64: 4 warps of 64 x 64, 3 cp.async stages in 48 KiB) when that gives two groups
 * per compute unit, else 64 x 128 (2 warps, 4 stages). Weights by 16-byte copies when K and their offset
 * are multiples of 4, else element by element (a 7x7 stem over 3 channels: K = 147). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/common/launch.h"
#include "ops/conv/conv2d.h"
#include "ops/gemm/gemm.h"
#include "program/program.h"

static size_t groups_of(int64_t cols, int64_t bn, int64_t rows, int64_t bm)
{
    return (size_t)((cols + bn - 1) / bn) * (size_t)((rows + bm - 1) / bm);
}

clt_status clt__conv2d_mma(clt_context *ctx, const clt__conv_problem *p, const char *who)
{
    const clt__conv_geom *g = &p->g;
    const char *on = getenv("CLT_CONV_MMA");
    if (!on || strcmp(on, "1") != 0 || (g->math != CLT_MATH_TF32 && g->math != CLT_MATH_FP32_3XTF32) ||
        g->groups != 1 || g->ci < 2 || clt__conv_is_pointwise(g) || p->w_flipped ||
        !clt__device_has_tensor_cores(ctx))
        return CLT_ERR_UNSUPPORTED;
    const int64_t k = g->ci * g->kh * g->kw, cols = g->n * g->ho * g->wo;
    /* int inside one image, the weights and the column range (clt__conv2d_ours checked), and every
     * offset the kernel forms from them: the window's origin may sit a padding outside the image */
    if (g->pt + (int64_t)g->kh * g->dh > INT_MAX / 4 || g->pl + (int64_t)g->kw * g->dw > INT_MAX / 4 ||
        cols > INT_MAX - 256 || g->co > INT_MAX - 256)
        return CLT_ERR_UNSUPPORTED;
    const uint64_t cus = ctx->dev->entry->info.compute_units;
    int wm = g->co > 64 && groups_of(cols, 128, g->co, 128) >= 2 * cus ? 2 : 1;
    int stages = wm == 2 ? 3 : 4, cpw = k % 4 == 0 && p->w_off % 4 == 0 ? 4 : 1;
    int round = g->math == CLT_MATH_FP32_3XTF32 ? 5 : 4;
    const double big = 2147483647.0 - 4096.0;
    int idx64 = (double)p->x_off + (double)g->n * (double)g->ci * (double)g->h * (double)g->w > big ||
                (double)p->out_off + (double)g->n * (double)g->co * (double)g->ho * (double)g->wo > big;
    char opts[128];
    snprintf(opts, sizeof opts, "-DWARPS_M=%d -DWARPS_N=2 -DSTAGES=%d -DROUND=%d -DCPW=%d -DIDX64=%d", wm, stages,
             round, cpw, idx64);
    cl_kernel kern;
    clt_status st = clt__kernel_get(ctx, "conv2d_mma", opts, "conv2d_mma", &kern);
    if (st != CLT_SUCCESS)
        return st;
    const size_t wg = (size_t)(64 * wm);
    if (clt__group_limit(ctx, kern) < wg)
        return CLT_ERR_UNSUPPORTED;
    if ((st = clt__conv_set_args(ctx, p, kern, 0, who)) != CLT_SUCCESS)
        return st;
    size_t global[3] = {(size_t)((cols + 127) / 128) * wg, (size_t)((g->co + 64 * wm - 1) / (64 * wm)), 1};
    size_t local[3] = {wg, 1, 1};
    return clt__enqueue_kernel(ctx, kern, 3, global, local, who);
}
