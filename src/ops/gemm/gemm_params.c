/* GEMM parameter tables. The reasoning per class:
 * - NVIDIA (warp 32, 48 KiB local, WG <= 1024): 256x128 tiles, 16x16 items of 16x8 each (128 FMAs
 *   per six float4 local reads), KWG 8, double-buffered (24 KiB of local memory). Measured on the
 *   H200 against the earlier first config (128x128, 8x8 per item, KWG 16), us: 4096^3 3165 vs 3330,
 *   8192^3 25057 vs 26453; 128x256 with 8x16 per item 3418 / 27135 (KWG 8), 3250 / 25307 (KWG 16);
 *   KWG 32 single-buffered, 8x16 or 16x8 items on 128x128 all slower. Its grid needs big shapes
 *   (2048^3: 128 groups < 132 SMs, 605 us), so 128x128 follows for those, then smaller tiles
 *   for shapes whose 128x128 grid would not fill the SMs. 64x32 (16x8 items of 4x4) serves
 *   split products whose n is no multiple of 64: the 7x7 stem's grad-weight (64 x 147, k = 100352)
 *   ran 171.8-172.2 us on it with 128 pieces, 182.2 on 64x64 tiles. Warps hold 8 x 4 blocks of
 *   items (warp_cols 8, gemm_tiled.cl's TXW) rather than 16 x 2 rows: fewer distinct local
 *   addresses per read. H200, one call each against the default layout, us: 1024^3 79.9 vs
 *   85.7-86.0, 4096^3 3142 vs 3160, 8192^3 24870 vs 25017-25054, 512^3 15.83 vs 16.00-16.10; mlp
 *   1000x128x128 9.01 vs 10.46, 256x1024x1024 25.58 vs 26.17; the stem's grad-weight 164.4 vs 164.6.
 * - AMD gfx902 (wave 64, 64 KiB LDS, WG <= 256): the same 8x8-per-item shape (4 waves per group,
 *   <= 128 VGPRs for two groups per CU), then 64x64 and 32x32 for small grids.
 * - CPU (POCL): the CPU-style kernel (src/README.md, Dispatch and tuning), 6 rows x float16 per item (12 of the 16
 *   AVX2 registers hold accumulators), 16 items per group sharing a 256 x 16 panel of B: measured
 *   37-41 GFLOP/s at 1024^3 on 2 cores vs 8.8 for CLBlast.
 * - Default (unknown GPUs): moderate 64x64 tiles with 16 KiB of local memory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune/dispatch_common.h"
#include "ops/gemm/gemm_params.h"
#include "tune/tuning_file.h"

static const clt__gemm_table nvidia_table = {
    "nvidia", 0, 5,
    {{256, 128, 8, 16, 16, 4, 1},
     {128, 128, 16, 16, 16, 4, 1},
     {64, 64, 16, 16, 16, 4, 1},
     {64, 32, 16, 16, 8, 4, 1},
     {32, 32, 16, 8, 8, 4, 1}},
    {4, 16, 8}, 32, 8, 32, 8, 262144.0, 8, 8,
};

static const clt__gemm_table amd_table = {
    "amd", 0, 3,
    {{128, 128, 16, 16, 16, 4, 1}, {64, 64, 16, 16, 16, 4, 1}, {32, 32, 16, 8, 8, 4, 1}},
    {4, 16, 8}, 64, 4, 64, 4, 262144.0, 8, 0,
};

static const clt__gemm_table cpu_table = {
    "cpu", 1, 1,
    {{32, 32, 16, 8, 8, 4, 0}},
    {6, 16, 16}, 16, 1, 8, 8, 32768.0, 0, 0,
};

static const clt__gemm_table default_table = {
    "default", 0, 2,
    {{64, 64, 16, 16, 16, 4, 1}, {32, 32, 16, 8, 8, 4, 1}},
    {4, 16, 8}, 16, 8, 32, 4, 262144.0, 8, 0,
};

/* Experiment switch for A/B runs on a GPU (read per call; not for production use):
 * CLT_GEMM_EXPERIMENT_CFG="mwg,nwg,kwg,mdimc,ndimc,vw,db" replaces the first tiled config. */
static const clt__gemm_table *experiment_table(const clt__gemm_table *base)
{
    static _Thread_local clt__gemm_table t;
    const char *e = getenv("CLT_GEMM_EXPERIMENT_CFG");
    clt__gemm_tiled_cfg c;
    if (!e || base->n_tiled < 1 ||
        sscanf(e, "%d,%d,%d,%d,%d,%d,%d", &c.mwg, &c.nwg, &c.kwg, &c.mdimc, &c.ndimc, &c.vw, &c.db) != 7)
        return base;
    t = *base;
    t.tiled[0] = c;
    return &t;
}

const clt__gemm_table *clt__gemm_table_for(const clt_context *ctx)
{
    if (ctx->tuning && ctx->tuning->has_gemm_table)
        return experiment_table(&ctx->tuning->gemm_table);
    return experiment_table(clt__gemm_table_builtin(ctx));
}

const clt__gemm_table *clt__gemm_table_of_class(clt__device_class c)
{
    static const clt__gemm_table *const by_class[] = {[CLT__CLASS_NVIDIA] = &nvidia_table,
                                                   [CLT__CLASS_AMD] = &amd_table,
                                                   [CLT__CLASS_CPU] = &cpu_table,
                                                   [CLT__CLASS_DEFAULT] = &default_table};
    return by_class[c];
}

const clt__gemm_table *clt__gemm_table_builtin(const clt_context *ctx)
{
    return clt__gemm_table_of_class(clt__device_class_of(ctx));
}

void clt__gemm_tiled_options(const clt__gemm_tiled_cfg *c, char *buf, size_t cap)
{
    snprintf(buf, cap, "-DMWG=%d -DNWG=%d -DKWG=%d -DMDIMC=%d -DNDIMC=%d -DVW=%d -DDB=%d", c->mwg,
             c->nwg, c->kwg, c->mdimc, c->ndimc, c->vw, c->db);
}

void clt__gemm_cpu_options(const clt__gemm_cpu_cfg *c, char *buf, size_t cap)
{
    snprintf(buf, cap, "-DRPI=%d -DNV=%d", c->rpi, c->nv);
}

int clt__gemm_tiled_warp_cols(const clt__gemm_table *t, const clt__gemm_tiled_cfg *c)
{
    int x = t->warp_cols;
    if (x <= 0 || x >= c->ndimc || c->ndimc % x || 32 % x || c->mdimc % (32 / x) ||
        (c->mdimc * c->ndimc) % 32)
        return 0;
    return x;
}

size_t clt__gemm_tiled_local_bytes(const clt__gemm_tiled_cfg *c)
{
    return (size_t)(c->db ? 2 : 1) * (size_t)c->kwg * (size_t)(c->mwg + c->nwg) * sizeof(float);
}

int clt__gemm_tiled_wg(const clt__gemm_tiled_cfg *c) { return c->mdimc * c->ndimc; }
