/* Conv2D parameter tables. The reasoning per class:
 * - NVIDIA (warp 32, 48 KiB local, WG <= 1024): the GEMM kernel's proven shape (gemm_params.c:
 *   128x128 tiles, 16x16 items of 8x8, K slice 16, double-buffered, 32 KiB local); 64x128 with
 *   8x16 items keeps 8x8 per item when a group has only 64 output channels (most CNN layers);
 *   64x64 and 32x32 for grids that would not fill the 132 SMs.
 * - AMD gfx902 (wave 64, 64 KiB LDS, WG <= 256): 64x128 of 16x16 items (4x8 per item), 64x64,
 *   32x32. From the kernel ISA check (tests/isa, conv2d.cl with k unrolled by 2 on AMD), gfx902
 *   VGPRs / waves per SIMD (CHMAJOR 0 / 1), no scratch: 128x128 (NVIDIA's first) 124 / 2 and
 *   156 / 1; 64x128 of 8x16 items (8x8 per item) 145 / 1; 64x128 of 16x16 items 79 / 3 and
 *   107 / 2; 64x64 61-62 / 4; 32x32 75-93 / 2-3. Not timed on AMD hardware.
 * - CPU (POCL): prefer_cpu = im2col in cache-sized chunks + our CPU GEMM (conv2d_clblast.c;
 *   2-8x the direct kernel on 2 cores); the CPU-style direct kernel (conv2d_cpu.cl), 4 channels x
 *   16 pixels per item, 8 items per group, and the tiled list stay as fallbacks.
 * - Default (unknown GPUs): moderate 64x64 tiles with 16 KiB of local memory.
 * Winograd F(4x4, 3x3) thresholds (GPU classes; reasoned): it costs 3 launches (~16.5 us of host
 * time on NVIDIA) instead of 1 and two transform passes over memory, and saves 3/4 of the
 * multiplies; so only layers where the GEMM dominates: Ci and Co >= 32 (the transforms are
 * O(Ci + Co) per block, the GEMM O(Ci * Co)) and >= 1024 output pixels in the batch. The seed case
 * n1c16h64o32 (11.3 us, one launch) stays on the implicit kernel (Ci 16). Measured on the H200 for
 * the layers that take it (us, Winograd vs the implicit kernel; cuDNN): n8c64h56o64 45.5 vs 92.3
 * (74.0), n32c128h28o128 120.8 vs 385.9 (139.1), n1c64h56o64 17.9 vs 36.4 (27.5). Layers near the
 * thresholds were not measured; neither was AMD (on a ~30 GB/s APU the transform traffic may cost
 * more than the saved multiplies).
 * CPU (POCL): the same thresholds, with the CPU-style transforms (conv2d_winograd_cpu.cl, 8 blocks
 * per item as float8 lanes). Measured on 2 shared cores, CPU time per call (user + sys of the
 * process, the least disturbed figure on a loaded VM; best of 5), default (im2col + CPU GEMM) vs
 * Winograd, ms: n1c64h56o64 5.5 / 4.0 (again 5.2 / 3.4), n8c64h56o64 40.8 / 25.9, n32c128h28o128
 * 137.0 / 82.5, n8c256h14o256 32.7 / 17.4, n32c512h7o512 165.7 / 71.6, n1c128h28o128 5.7 / 3.1,
 * n1c32h32o32 (1024 pixels) 0.61 / 0.44, n4c32h16o32 0.77 / 0.65; grad-input (flipped forward)
 * n1c64 6.0 / 3.4, n8c64 42.0 / 26.6. Below the thresholds it loses or ties: n1c32h16o32 (256
 * pixels) 0.19 / 0.74, n1c64h14o64 0.34 / 0.32, n1c512h7o512 6.3 / 18.1 (the weight transform
 * and three launches do not pay for a 4-block GEMM), n1c8h64o8 (Ci 8) 0.41 / 0.96, n1c16h64o32
 * (Ci 16) about even (1.0-1.3 / 0.9-1.2). The batched GEMM (gemm_cpu.cl) runs 64x1568x64 x36 at ~38
 * GFLOP/s there, as fast as its square sizes under the same load (matmul/1024 34, /2048 38).
 * clt-bench --suite conv wall ms on a quiet moment (min / median of 3 interleaved runs, Winograd
 * vs CLT_CONV_VARIANT=colgemm; PyTorch 2 threads): n8c64h56o64 11.3 / 13.9 vs 21.5 / 22.4 (20.9),
 * n32c128h28o128 34.4 / 36.4 vs 73.3 / 87.3 (81.7), n1c64h56o64 1.49 / 1.60 vs 2.41 / 2.60 (2.63),
 * grad-input n8c64 13.3 / 14.1 vs 23.9 / 26.5 (20.6), n1c64 1.63 / 1.66 vs 2.69 / 2.86 (1.97). */
#include <stdio.h>
#include <string.h>

#include "tune/dispatch_common.h"
#include "ops/conv/conv_params.h"

static const clt__conv_table nvidia_table = {
    "nvidia", 0, 4,
    {{128, 128, 16, 16, 16}, {64, 128, 16, 8, 16}, {64, 64, 16, 16, 16}, {32, 32, 16, 8, 8}},
    4, 8, 128, 32, 32, 1024,
};

static const clt__conv_table amd_table = {
    "amd", 0, 3,
    {{64, 128, 16, 16, 16}, {64, 64, 16, 16, 16}, {32, 32, 16, 8, 8}},
    4, 8, 64, 32, 32, 1024,
};

static const clt__conv_table cpu_table = {
    "cpu", 1, 1, {{32, 32, 16, 8, 8}}, 4, 8, 64, 32, 32, 1024,
};

static const clt__conv_table default_table = {
    "default", 0, 2, {{64, 64, 16, 16, 16}, {32, 32, 16, 8, 8}}, 4, 8, 64, 32, 32, 1024,
};

const clt__conv_table *clt__conv_table_of_class(clt__device_class c)
{
    static const clt__conv_table *const by_class[] = {[CLT__CLASS_NVIDIA] = &nvidia_table,
                                                   [CLT__CLASS_AMD] = &amd_table,
                                                   [CLT__CLASS_CPU] = &cpu_table,
                                                   [CLT__CLASS_DEFAULT] = &default_table};
    return by_class[c];
}

const clt__conv_table *clt__conv_table_for(const clt_context *ctx)
{
    return clt__conv_table_of_class(clt__device_class_of(ctx));
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
