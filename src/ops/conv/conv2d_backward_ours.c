/* Our Conv2D backward kernels (cl_kernels/conv/conv2d_backward.cl): the tiled implicit GEMMs on GPUs
 * (and the gfx902 profile), one launch per call; direct one-item-per-output kernels on GPUs for
 * few channels per group (depthwise), where a 64-row tile would be mostly empty. CPU devices
 * (POCL) use the forward's CPU im2col + our CPU GEMM (conv2d_backward_cpu.c), else column
 * buffers + our CPU GEMM (conv2d_backward_clblast.c): measured ~0.2 GFLOP/s for the direct loops
 * there, local-memory tiles are slow on POCL too. Large grad-weights on NVIDIA run as one GEMM over
 * the batch instead (conv2d_backward_wgemm.c, which also documents CLT_CONVB_WEIGHT_VARIANT), or
 * by Winograd for 3x3 / stride 1 layers (conv2d_backward_winograd.c); grad-weights of 1 .. 4 input channels
 * on GPU classes by conv2d_backward_stem.c. */

#include "memory/memory.h"
#include "ops/conv/conv2d_backward.h"
#include "ops/conv/conv_params.h"
#include "ops/common/launch.h"
#include "program/program.h"
#include "tune/dispatch_common.h"

#define FAMILY "conv2d_backward"
#define TILE_WG 256u
/* grad-input tile: 64 input channels x 128 (n, h, w) columns, 4 x 8 per item */
#define DX_OPTS CLT__CONVB_DX_OPTS
#define DX_LOCAL_BYTES ((16 * 64 + 16 * 128) * 4)
/* grad-weight tile: 64 output channels x 64 (ci, ky, kx) columns, 4 x 4 per item, split K */
#define DW_OPTS CLT__CONVB_DW_OPTS
#define DW_TM 64
#define DW_TN 64
#define DW_TK 16
#define DW_LOCAL_BYTES ((16 * 64 + 16 * 64) * 4 + 4)
#define MIN_TILED_CHANNELS 8 /* rows per group below which the direct kernel wins on GPUs */
#define DW_GROUPS_PER_CU 4   /* split K until the grid has about this many groups per CU */
#define DW_MIN_SPLIT_K 256   /* ... while each split keeps at least this much of K */

cl_int16 clt__convb_geom_arg(const clt__conv_geom *g)
{
    cl_int16 G;
    int64_t v[16] = {g->n,  g->ci, g->h,  g->w,  g->co, g->kh, g->kw, g->ho,
                     g->wo, g->sh, g->sw, g->pt, g->pl, g->dh, g->dw, g->groups};
    for (int i = 0; i < 16; i++)
        G.s[i] = (cl_int)v[i];
    return G;
}

void clt__convb_dw_target(clt__gemm_problem *p, const clt__conv_geom *g, const clt_tensor *dw)
{
    const int64_t cols = g->ci_g * g->kh * g->kw;
    p->c = dw->storage->mem, p->c_off = dw->offset / sizeof(float), p->ldc = cols;
    p->c_stride = g->co_g * cols;
    p->batch = g->groups;
    if (p->batch == 1)
        p->a_stride = p->b_stride = p->c_stride = 0;
    p->bias_mode = CLT_BIAS_NONE, p->act = CLT_IDENTITY;
}

clt_status clt__convb_dw_image(clt_context *ctx, const clt__conv_geom *g, const clt_tensor *dy,
                               int64_t n, cl_mem col, uint64_t col_off, clt_tensor *dw, int clblast,
                               const char *who)
{
    const int64_t hw = g->ho * g->wo, cols = g->ci_g * g->kh * g->kw;
    clt__gemm_problem p = {0};
    p.ta = CLT_NO_TRANS, p.tb = CLT_TRANS;
    p.m = g->co_g, p.n = cols, p.k = hw;
    p.alpha = 1.0f, p.beta = n ? 1.0f : 0.0f;
    p.a = dy->storage->mem, p.a_off = dy->offset / sizeof(float) + (uint64_t)(n * g->co * hw);
    p.lda = hw, p.a_stride = g->co_g * hw;
    p.b = col, p.b_off = col_off, p.ldb = hw, p.b_stride = cols * hw;
    clt__convb_dw_target(&p, g, dw);
    return (clblast ? clt__gemm_clblast : clt__gemm_tiled)(ctx, &p, who);
}

clt_status clt__convb_workspace(clt_context *ctx, size_t data_bytes, const char *who, cl_mem *out)
{
    return clt__workspace_get_counted(ctx, CLT__CONVB_WS_SLOT, CLT__CONVB_COUNTERS * sizeof(cl_uint),
                                      data_bytes, who, out);
}

clt_status clt__convb_launch_items(clt_context *ctx, cl_kernel k, uint64_t items, const char *who)
{
    if (items == 0)
        return CLT_SUCCESS;
    /* fixed per kernel (POCL compiles one work-group function per local size) */
    size_t local = clt__fit_local(ctx, k, 64);
    size_t global = (size_t)((items + local - 1) / local * local);
    return clt__enqueue_kernel(ctx, k, 1, &global, &local, who);
}


/* The tiled kernel `name` built with opts when the device can run it, else NULL in *k. */
static clt_status tiled_kernel(clt_context *ctx, const char *opts, const char *name,
                               size_t local_bytes, cl_kernel *k)
{
    *k = NULL;
    if (ctx->limits.max_work_group_size < TILE_WG || ctx->limits.local_mem_budget < local_bytes)
        return CLT_SUCCESS;
    cl_kernel t;
    clt_status st = clt__kernel_get(ctx, FAMILY, opts, name, &t);
    if (st != CLT_SUCCESS)
        return st;
    if (clt__kernel_work_group_limit(ctx, t) >= TILE_WG)
        *k = t;
    return CLT_SUCCESS;
}

static clt_status set_args(clt_context *ctx, cl_kernel k, const clt_tensor *a, const clt_tensor *b,
                           clt_tensor *out, const cl_mem *ws, const clt__conv_geom *g, cl_ulong s,
                           const char *who)
{
    cl_int16 G = clt__convb_geom_arg(g);
    cl_ulong4 off = {{a->offset / sizeof(float), b->offset / sizeof(float),
                      out->offset / sizeof(float), s}};
    cl_uint i = 0;
    clt_status st;
    if ((st = clt__set_arg(ctx, k, i++, sizeof(cl_mem), &a->storage->mem, who)) ||
        (st = clt__set_arg(ctx, k, i++, sizeof(cl_mem), &b->storage->mem, who)) ||
        (st = clt__set_arg(ctx, k, i++, sizeof(cl_mem), &out->storage->mem, who)) ||
        (ws && (st = clt__set_arg(ctx, k, i++, sizeof(cl_mem), ws, who))) ||
        (st = clt__set_arg(ctx, k, i++, sizeof G, &G, who)) ||
        (st = clt__set_arg(ctx, k, i++, sizeof off, &off, who)))
        return st;
    return CLT_SUCCESS;
}

static clt_status direct(clt_context *ctx, const char *name, const clt__conv_geom *g,
                         const clt_tensor *a, const clt_tensor *b, clt_tensor *out,
                         const char *who)
{
    cl_kernel k;
    /* the grad-input options, so no extra program */
    clt_status st = clt__kernel_get(ctx, FAMILY, DX_OPTS, name, &k);
    if (st != CLT_SUCCESS)
        return st;
    if ((st = set_args(ctx, k, a, b, out, NULL, g, 0, who)))
        return st;
    return clt__convb_launch_items(ctx, k, (uint64_t)out->numel, who);
}

clt_status clt__convb_input_ours(clt_context *ctx, const clt__conv_geom *g, const clt_tensor *dy,
                                 const clt_tensor *w, clt_tensor *dx, const char *who)
{
    clt_status st = clt__convb_input_flipped(ctx, g, dy, w, dx, who);
    if (st != CLT_ERR_UNSUPPORTED)
        return st;
    if (clt__cpu_style(ctx))
        return clt__convb_input_colgemm(ctx, g, dy, w, dx, 0, who);
    cl_kernel k = NULL;
    if (g->ci_g >= MIN_TILED_CHANNELS &&
        (st = tiled_kernel(ctx, DX_OPTS, "conv_bwd_input_tiled", DX_LOCAL_BYTES, &k)))
        return st;
    if (!k)
        return direct(ctx, "conv_bwd_input_direct", g, dy, w, dx, who);
    if ((st = set_args(ctx, k, dy, w, dx, NULL, g, 0, who)))
        return st;
    /* columns of the largest phase (phase 0) */
    uint64_t hp = (uint64_t)((g->h + g->sh - 1) / g->sh), wp = (uint64_t)((g->w + g->sw - 1) / g->sw);
    uint64_t ctiles = ((uint64_t)g->n * hp * wp + 127) / 128;
    uint64_t rtiles = (uint64_t)(g->ci_g + 63) / 64;
    size_t global[3] = {(size_t)(ctiles * TILE_WG), (size_t)(rtiles * (uint64_t)g->groups),
                        (size_t)(g->sh * g->sw)};
    size_t local[3] = {TILE_WG, 1, 1};
    return clt__enqueue_kernel(ctx, k, 3, global, local, who);
}

clt_status clt__convb_weight_ours(clt_context *ctx, const clt__conv_geom *g, const clt_tensor *dy,
                                  const clt_tensor *x, clt_tensor *dw, const char *who)
{
    int v = clt__convb_weight_variant(), cpu = clt__cpu_style(ctx);
    clt_status st;
    /* few input channels: GPU classes, or forced (conv2d_backward_stem.c) */
    if (v == CLT__CONVB_W_STEM || (v == CLT__CONVB_W_AUTO && !cpu)) {
        st = clt__convb_weight_stem(ctx, g, dy, x, dw, who);
        if (st != CLT_ERR_UNSUPPORTED)
            return st;
    }
    /* automatic: NVIDIA only, Winograd first where it applies (conv2d_backward_winograd.c), then
     * the column GEMM (conv2d_backward_wgemm.c: an APU's bandwidth favours tiled) */
    if (v == CLT__CONVB_W_WINOGRAD ||
        (v == CLT__CONVB_W_AUTO && clt__device_class_of(ctx) == CLT__CLASS_NVIDIA &&
         clt__convb_weight_winograd_suits(ctx, g))) {
        st = clt__convb_weight_winograd(ctx, g, dy, x, dw, who);
        if (st != CLT_ERR_UNSUPPORTED)
            return st;
    }
    if (v == CLT__CONVB_W_COLGEMM ||
        (v == CLT__CONVB_W_AUTO && clt__device_class_of(ctx) == CLT__CLASS_NVIDIA &&
         clt__convb_weight_gemm_suits(g))) {
        st = clt__convb_weight_gemm(ctx, g, dy, x, dw, who);
        if (st != CLT_ERR_UNSUPPORTED)
            return st;
    }
    if (cpu && v != CLT__CONVB_W_TILED) {
        st = clt__convb_weight_cpu(ctx, g, dy, x, dw, who);
        return st != CLT_ERR_UNSUPPORTED ? st : clt__convb_weight_colgemm(ctx, g, dy, x, dw, 0, who);
    }
    cl_kernel k = NULL;
    if (g->co_g >= MIN_TILED_CHANNELS &&
        (st = tiled_kernel(ctx, DW_OPTS, "conv_bwd_weight_tiled", DW_LOCAL_BYTES, &k)))
        return st;
    if (!k)
        return direct(ctx, "conv_bwd_weight_direct", g, dy, x, dw, who);
    uint64_t ctiles = (uint64_t)(g->ci_g * g->kh * g->kw + DW_TN - 1) / DW_TN;
    uint64_t rtiles = (uint64_t)(g->co_g + DW_TM - 1) / DW_TM;
    uint64_t tiles = ctiles * rtiles * (uint64_t)g->groups;
    uint64_t kk = (uint64_t)g->n * (uint64_t)(g->ho * g->wo);
    /* split K while the grid is short of groups, each split keeping real work */
    uint64_t want = (uint64_t)ctx->dev->entry->info.compute_units * DW_GROUPS_PER_CU;
    uint64_t splits = tiles < want ? want / tiles : 1, max_splits = kk / DW_MIN_SPLIT_K;
    if (splits > max_splits)
        splits = max_splits;
    if (splits < 1 || tiles > CLT__CONVB_COUNTERS)
        splits = 1;
    cl_mem ws = x->storage->mem; /* not touched by the kernel when splits == 1 */
    /* under a memory cap, fewer splits (smaller partials) rather than failing: this kernel is the
     * fallback of the workspace-hungry paths */
    while (splits > 1 && (st = clt__convb_workspace(ctx, (size_t)(tiles * splits) * DW_TM * DW_TN *
                                                             sizeof(float), who, &ws))) {
        if (st != CLT_ERR_OUT_OF_DEVICE_MEMORY)
            return st;
        splits /= 2;
    }
    if (splits <= 1)
        splits = 1, ws = x->storage->mem;
    if ((st = set_args(ctx, k, dy, x, dw, &ws, g, splits, who)))
        return st;
    size_t global[3] = {(size_t)(ctiles * TILE_WG), (size_t)rtiles,
                        (size_t)((uint64_t)g->groups * splits)};
    size_t local[3] = {TILE_WG, 1, 1};
    return clt__enqueue_kernel(ctx, k, 3, global, local, who);
}
