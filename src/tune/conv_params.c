/* Conv2D parameter tables. The reasoning per class:
 * - NVIDIA (warp 32, 48 KiB local, WG <= 1024): the GEMM kernel's proven shape (gemm_params.c:
 *   128x128 tiles, 16x16 items of 8x8, K slice 16, double-buffered, 32 KiB local); 64x128 with
 *   8x16 items keeps 8x8 per item when a group has only 64 output channels (most CNN layers);
 *   64x64 and 32x32 for grids that would not fill the 132 SMs.
 * - AMD gfx902 (wave 64, 64 KiB LDS, WG <= 256): the same list, every group <= 256 items.
 * - CPU (POCL): prefer_cpu = im2col in cache-sized chunks + our CPU GEMM (conv2d_clblast.c;
 *   2-8x the direct kernel on 2 cores); the CPU-style direct kernel (conv2d_cpu.cl), 4 channels x
 *   16 pixels per item, 8 items per group, and the tiled list stay as fallbacks.
 * - Default (unknown GPUs): moderate 64x64 tiles with 16 KiB of local memory.
 * Winograd F(4x4, 3x3) thresholds (GPU classes; reasoned, until an H200 A/B measures them): it
 * costs 3 launches (~16.5 us of host time on NVIDIA) instead of 1 and two transform passes over
 * memory, and saves 3/4 of the multiplies; so only layers where the GEMM dominates: Ci and Co
 * >= 32 (the transforms are O(Ci + Co) per block, the GEMM O(Ci * Co)) and >= 1024 output pixels
 * in the batch. The seed case n1c16h64o32 (13.6 us, one launch) stays on the implicit kernel
 * (Ci 16); n1c64h56o64, n8c64h56o64 and n32c128h28o128 (3x3, stride 1) take Winograd.
 * CPU (POCL): off. Measured on 2 cores (clt-bench --suite conv, CLT_CONV_VARIANT=winograd vs
 * unset, two runs each, ms): n8c64h56o64 58.9 / 58.2 vs 47.7 / 44.0, n1c64h56o64 6.8 / 4.5 vs
 * 6.1 / 4.4, n32c128h28o128 122.7 / 117.6 vs 184.3 / 138.8: the transforms (GPU-style, one item
 * per block and 36 strided planes) take 2/3 of the time there. */
#include <stdio.h>
#include <string.h>

#include "tune/dispatch_common.h"
#include "tune/conv_params.h"

static const clt__conv_table nvidia_table = {
    "nvidia", 0, 4,
    {{128, 128, 16, 16, 16}, {64, 128, 16, 8, 16}, {64, 64, 16, 16, 16}, {32, 32, 16, 8, 8}},
    4, 8, 128, 32, 32, 1024,
};

static const clt__conv_table amd_table = {
    "amd", 0, 4,
    {{128, 128, 16, 16, 16}, {64, 128, 16, 8, 16}, {64, 64, 16, 16, 16}, {32, 32, 16, 8, 8}},
    4, 8, 64, 32, 32, 1024,
};

static const clt__conv_table cpu_table = {
    "cpu", 1, 1, {{32, 32, 16, 8, 8}}, 4, 8, 64, 0, 0, 0,
};

static const clt__conv_table default_table = {
    "default", 0, 2, {{64, 64, 16, 16, 16}, {32, 32, 16, 8, 8}}, 4, 8, 64, 32, 32, 1024,
};

const clt__conv_table *clt__conv_table_for(const clt_context *ctx)
{
    static const clt__conv_table *const by_class[] = {[CLT__CLASS_NVIDIA] = &nvidia_table,
                                                   [CLT__CLASS_AMD] = &amd_table,
                                                   [CLT__CLASS_CPU] = &cpu_table,
                                                   [CLT__CLASS_DEFAULT] = &default_table};
    return by_class[clt__device_class_of(ctx)];
}

void clt__conv_tiled_options(const clt__conv_tiled_cfg *c, int chmajor, char *buf, size_t cap)
{
    snprintf(buf, cap, "-DMWG=%d -DNWG=%d -DKWG=%d -DMDIMC=%d -DNDIMC=%d -DCHMAJOR=%d", c->mwg,
             c->nwg, c->kwg, c->mdimc, c->ndimc, chmajor);
}

size_t clt__conv_tiled_local_bytes(const clt__conv_tiled_cfg *c)
{
    /* A rows padded by 4 floats (conv2d.cl, AST) */
    return 2 * (size_t)c->kwg * (size_t)(c->mwg + 4 + c->nwg) * sizeof(float);
}

int clt__conv_tiled_wg(const clt__conv_tiled_cfg *c) { return c->mdimc * c->ndimc; }
