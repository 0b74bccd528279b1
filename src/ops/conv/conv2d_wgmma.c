/* Conv2D forward through Hopper's wgmma in TF32 math (cl_kernels/conv/conv2d_wgmma.cl), tried by
 * clt__conv2d_ours before the mma.sync forms (conv2d_mma.c), which stay its fallback.
 *
 * When: TF32 math on an sm_90 device, one group, not a 1x1 GEMM, and at most a quarter of the k extent
 * wasted on padding channels (Ci rounded up to KP, a multiple of 32: Ci = 64, 128, 96, 48 ... yes; 16,
 * 3, 20 no). 3xTF32 runs the fp32 kernels (or mma.sync under CLT_CONV_MMA=1, which splits in its fragments).
 * Declined too where the grid is under half a group a compute unit (clt__conv2d_wgmma). CLT_CONV_WGMMA=1 takes
 * every size (tests), =0 none (A/B runs), as CLT_CONV_MMA=0 / 1 / gather do (conv2d_mma.c);
 * CLT_CONV_WGMMA_CFG=wgs,bn,stages,waitn picks the kernel's shape (malformed: the built-in one).
 *
 * Each call first makes TF32-rounded channels-last copies of x and w in workspace slot 1 (the conv
 * columns' slot: one forward call uses one path) with gemm_wgmma_pack.cl's transposing kernel (one
 * batched transpose each: x as N matrices HW x Ci, w as Co matrices KhKw x Ci, rows padded to 64 and
 * channels to KP with zeros), so the conv kernel stages 64-byte channel runs by 16-byte copies with no
 * rounding of its own. The copies cost one read and one write of x (and of w, padded). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/common/launch.h"
#include "ops/conv/conv2d.h"
#include "ops/gemm/gemm.h"
#include "program/program.h"

#define WORKSPACE_SLOT 1
#define PACK_ROWS 64 /* gemm_wgmma_pack.cl's row padding (untiled) */
#define PACK_K 32    /* and its k padding */

typedef struct wg_cfg {
    int wgs, bn, stages, waitn;
} wg_cfg;

static int64_t round_up(int64_t x, int64_t m)
{
    return (x + m - 1) / m * m;
}

/* CLT_CONV_WGMMA=0, or CLT_CONV_MMA set to anything but automatic (conv2d.h). */
static int declined_by_env(void)
{
    const char *a = getenv("CLT_CONV_WGMMA");
    return (a && !strcmp(a, "0")) || clt__conv_mma_env() != CLT__CONV_MMA_AUTO;
}

static int64_t groups_of(const clt__conv_geom *g, const wg_cfg *c)
{
    return (g->n * g->ho * g->wo + c->bn - 1) / c->bn * ((g->co + 64 * c->wgs - 1) / (64 * c->wgs));
}

/* Two warpgroups (128 output channels a group) when Co > 64, else one; tiles of 128 pixels; as many ring
 * stages as fit 48 KiB (3 or 4). H100, conv2d_tf32 (2026-12-07): n32c128h28 69.6-69.9 us (2 warpgroups, 3
 * stages) vs 74.5-76.4 for the other shapes; n8c64h56 33.2-33.8 (1 warpgroup, 3-4 stages) vs 39.9-40.4 for
 * 2. Tiles of 64 pixels (m64n64 steps, twice the groups: 392 instead of 196 for n32c128h28 on 132 SMs,
 * where 64 SMs take two tiles and 68 one) build (ptxas sm_90a) and are in conv2d_math's cases, but have not
 * run on a GPU yet: only CLT_CONV_WGMMA_CFG=wgs,bn,stages,waitn selects them (it overrides every field). */
static wg_cfg choose(const clt__conv_geom *g)
{
    wg_cfg c = {g->co > 64 ? 2 : 1, 128, 0, 0};
    c.stages = 49152 / ((64 * c.wgs + c.bn) * 64);
    c.stages = c.stages > 5 ? 5 : c.stages;
    const char *e = getenv("CLT_CONV_WGMMA_CFG");
    wg_cfg v;
    char tail;
    if (e && sscanf(e, "%d,%d,%d,%d%c", &v.wgs, &v.bn, &v.stages, &v.waitn, &tail) == 4 &&
        (v.wgs == 1 || v.wgs == 2) && (v.bn == 64 || v.bn == 128) && v.waitn >= 0 &&
        v.stages - 1 - v.waitn >= 1 && v.stages - 1 - v.waitn <= 4 &&
        v.stages * (64 * v.wgs + v.bn) * 64 <= 48 * 1024)
        c = v;
    return c;
}

typedef struct wg_run {
    clt__conv_problem q; /* x and w: the packed copies */
    clt__wgmma_pack px, pw;
    wg_cfg c;
    cl_int4 ls;
    char opts[96];
} wg_run;

static clt_status run_stages(clt_context *ctx, const void *arg, const char *who)
{
    const wg_run *r = arg;
    const clt__conv_geom *g = &r->q.g;
    clt_status st;
    if ((st = clt__gemm_wgmma_pack(ctx, &r->px, who)) || (st = clt__gemm_wgmma_pack(ctx, &r->pw, who)))
        return st;
    cl_kernel k;
    if ((st = clt__kernel_get(ctx, "conv2d_wgmma", r->opts, "conv2d_wgmma", &k)))
        return st;
    const size_t wg = (size_t)(128 * r->c.wgs);
    if (clt__group_limit(ctx, k) < wg)
        return CLT_ERR_UNSUPPORTED;
    if ((st = clt__conv_set_args(ctx, &r->q, k, 0, who)) ||
        (st = clt__set_arg(ctx, k, 9, sizeof r->ls, &r->ls, who)))
        return st;
    const int64_t cols = g->n * g->ho * g->wo, bm = 64 * r->c.wgs, bn = r->c.bn;
    size_t global[3] = {(size_t)((cols + bn - 1) / bn) * wg, (size_t)((g->co + bm - 1) / bm), 1};
    size_t local[3] = {wg, 1, 1};
    return clt__enqueue_kernel(ctx, k, 3, global, local, who);
}

/* What clt__conv2d_wgmma runs for g: the kernel's shape and the padded channels-last copies (rows of x per
 * image and of w per output channel, k, and the elements of each copy). */
typedef struct wg_plan {
    wg_cfg c;
    int64_t hwp, tapsp, kp;
    double xe, we;
} wg_plan;

/* Whether wgmma takes g (weights not flipped in place; the workspace still to be had), and its plan. */
static int plan(const clt_context *ctx, const clt__conv_geom *g, wg_plan *pl)
{
    if (declined_by_env() || g->math != CLT_MATH_TF32 || g->groups != 1 || clt__conv_is_pointwise(g) ||
        clt__device_nv_sm(ctx) != 90)
        return 0;
    pl->hwp = round_up(g->h * g->w, PACK_ROWS), pl->tapsp = round_up(g->kh * g->kw, PACK_ROWS);
    pl->kp = round_up(g->ci, PACK_K);
    if ((pl->kp - g->ci) * 4 > pl->kp) /* more than a quarter of every slice would be zero channels */
        return 0;
    const int64_t cols = g->n * g->ho * g->wo;
    pl->xe = (double)g->n * (double)pl->hwp * (double)pl->kp;
    pl->we = (double)g->co * (double)pl->tapsp * (double)pl->kp;
    /* the kernel's int offsets: one image's copy, a weight row, the window origins (clt__conv2d_ours
     * checked the rest) */
    if ((double)pl->hwp * (double)pl->kp > INT_MAX / 2 || (double)pl->tapsp * (double)pl->kp > INT_MAX / 2 ||
        g->pt + (int64_t)g->kh * g->dh > INT_MAX / 4 || g->pl + (int64_t)g->kw * g->dw > INT_MAX / 4 ||
        cols > INT_MAX - 256 || g->co > INT_MAX - 256 ||
        (pl->xe + pl->we) * 4.0 > (double)ctx->dev->entry->info.max_alloc_bytes)
        return 0;
    /* grids of under half a group a compute unit: the fp32 kernels won (n1c64h56, H100: 21.7 us vs 28.8) */
    pl->c = choose(g);
    const char *every = getenv("CLT_CONV_WGMMA");
    return (every && !strcmp(every, "1")) ||
           groups_of(g, &pl->c) * 2 >= (int64_t)ctx->dev->entry->info.compute_units;
}

int clt__conv2d_wgmma_takes(const clt_context *ctx, const clt__conv_geom *g)
{
    wg_plan pl;
    return plan(ctx, g, &pl);
}

clt_status clt__conv2d_wgmma(clt_context *ctx, const clt__conv_problem *p, const char *who)
{
    const clt__conv_geom *g = &p->g;
    wg_plan pl;
    if (p->w_flipped || !plan(ctx, g, &pl))
        return CLT_ERR_UNSUPPORTED;
    const int64_t hw = g->h * g->w, taps = g->kh * g->kw, hwp = pl.hwp, tapsp = pl.tapsp, kp = pl.kp;
    const double xe = pl.xe, we = pl.we;
    wg_run r;
    memset(&r, 0, sizeof r);
    r.c = pl.c;
    cl_mem ws;
    int fresh;
    clt_status st = clt__workspace_get(ctx, WORKSPACE_SLOT, (size_t)(xe + we) * sizeof(float), &ws, &fresh);
    if (st == CLT_ERR_OUT_OF_DEVICE_MEMORY) /* the other forms need less or none */
        return CLT_ERR_UNSUPPORTED;
    if (st)
        return st;
    /* x [n][ci][pix] as N matrices pix x ci (op(X)^T stored): -> [n][hwp][kp] */
    r.px = (clt__wgmma_pack){0, 0, p->x, p->x_off, g->ci * hw, hw, 1, hw, g->ci, ws, 0, hwp, kp, 1, 0, g->n};
    /* w [co][ci][tap] as Co matrices tap x ci: -> [co][tapsp][kp] after the copy of x */
    r.pw = (clt__wgmma_pack){0, 0, p->w, p->w_off, g->ci * taps, taps, 1, taps, g->ci, ws, (uint64_t)xe, tapsp, kp, 1, 0,
                             g->co};
    r.q = *p;
    r.q.x = ws, r.q.x_off = 0;
    r.q.w = ws, r.q.w_off = (uint64_t)xe;
    r.ls = (cl_int4){{(cl_int)(hwp * kp), (cl_int)(tapsp * kp), (cl_int)kp, 0}};
    const double big = 2147483647.0 - 4096.0;
    int idx64 = xe > big || (double)p->out_off + (double)g->n * (double)g->co * (double)g->ho * (double)g->wo > big;
    snprintf(r.opts, sizeof r.opts, "-DWGS=%d -DBN=%d -DSTAGES=%d -DWAITN=%d -DIDX64=%d", r.c.wgs, r.c.bn, r.c.stages,
             r.c.waitn, idx64);
    return clt__rehearse_then_run(ctx, run_stages, &r, who);
}
