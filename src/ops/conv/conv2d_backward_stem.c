/* Conv2D grad-weight for few input channels (cl_kernels/conv/conv2d_stem_dw.cl): Ci 1 .. 4, one group,
 * windows up to 11 x 11; exact fp32 (every math mode). clt__convb_weight_ours tries it first on GPU
 * classes: the column paths write and read back every window of the batch (ResNet's stem, 8 images:
 * 59 MB) for a GEMM only 64 x 147 wide.
 *
 * Shape: items of 8 output channels x KCI columns (KCI 4 .. 8: the most items up to 256, then the fewest
 * padding columns), up to 64 channels a group (fewer where the item count would pass the device's group
 * limit), at least 64 items a group (else declined: small windows such as 3x3 over 3 channels); tiles of 16 x 8 output pixels, fewer rows (then columns) when dy's tile and the input patch
 * outgrow local memory. The grid keeps about two groups a compute unit, each walking every SLOTS-th
 * tile of the batch into one partial block, summed by a second launch (none when one slot). Partials
 * after the conv-backward workspace's counters (slot CLT__CONVB_WS_SLOT).
 * CLT_CONVB_WEIGHT_VARIANT=stem forces it (CPU devices too; where it declines, the automatic order);
 * CLT_CONVB_STEM_CFG=tw,th,kci,slots sets the shape (malformed or not fitting: the built-in one). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/common/launch.h"
#include "ops/conv/conv2d.h"
#include "ops/conv/conv2d_backward.h"
#include "program/program.h"

#define COI 8
#define SLOTS_PER_CU 2
/* Fewer items (a 3x3 window over 3 channels: 27 columns, 4 blocks x 8 channel blocks) leave a group a
 * fraction of a GPU's SIMD width beside a tile of local memory: the column paths serve those. */
#define MIN_ITEMS 64

typedef struct dw_cfg {
    int tw, th, kci, cob, kcb, slots;
} dw_cfg;

static int64_t local_bytes(const clt__conv_geom *g, const dw_cfg *c)
{
    const int64_t pr = (int64_t)(c->th - 1) * g->sh + (g->kh - 1) * g->dh + 1;
    const int64_t pc = (int64_t)(c->tw - 1) * g->sw + (g->kw - 1) * g->dw + 1;
    return ((int64_t)c->tw * c->th * (c->cob * COI + 4) + g->ci * pr * pc) * (int64_t)sizeof(float);
}

/* Items: channel blocks x column blocks of kci, the most items up to 256 (the group size every kernel plans
 * with; the driver may cap heavier ones below its own limit), then the fewest padding columns. H100,
 * n8c3h224 7x7 stride 2: 5 columns (240 items) 117.6 us, 7 (168 items) 146.5-147.4. */
static int items_fit(const clt_context *ctx, const clt__conv_geom *g, dw_cfg *c, int kci_only)
{
    const int64_t kc = g->ci * g->kh * g->kw;
    const uint64_t cap = ctx->limits.max_work_group_size < 256 ? ctx->limits.max_work_group_size : 256;
    int best = 0;
    for (int kci = 4; kci <= 8; kci++) {
        if (kci_only && kci != kci_only)
            continue;
        const int64_t kcb = (kc + kci - 1) / kci, items = kcb * c->cob;
        if ((uint64_t)items > cap || items < MIN_ITEMS)
            continue;
        const int64_t best_items = (int64_t)c->kcb * c->cob;
        if (!best || items > best_items || (items == best_items && kcb * kci - kc < (int64_t)c->kcb * best - kc)) {
            best = kci;
            c->kcb = (int)kcb;
        }
    }
    c->kci = best;
    return best != 0;
}

/* The shape from CLT_CONVB_STEM_CFG (use_env) or the built-in one, shrunk until it fits; 0: nothing fits. */
static int choose(const clt_context *ctx, const clt__conv_geom *g, dw_cfg *c, int use_env)
{
    const char *e = use_env ? getenv("CLT_CONVB_STEM_CFG") : NULL;
    int tw = 16, th = 8, kci = 0, per_cu = SLOTS_PER_CU;
    char tail;
    const int env = e && sscanf(e, "%d,%d,%d,%d%c", &tw, &th, &kci, &per_cu, &tail) == 4 && tw >= 8 &&
                    tw <= 64 && tw % 8 == 0 && th >= 1 && th <= 64 && kci >= 4 && kci <= 8 && per_cu >= 1 && per_cu <= 64;
    if (use_env && !env)
        return choose(ctx, g, c, 0);
    const int64_t cog = (g->co + COI - 1) / COI * COI;
    c->cob = (int)((cog < 64 ? cog : 64) / COI);
    while (!items_fit(ctx, g, c, kci)) {
        if (c->cob == 1)
            return env ? choose(ctx, g, c, 0) : 0;
        c->cob /= 2;
    }
    c->tw = tw, c->th = th;
    while ((uint64_t)local_bytes(g, c) > ctx->limits.local_mem_budget) {
        if (env)
            return choose(ctx, g, c, 0);
        if (c->th > 1)
            c->th /= 2;
        else if (c->tw > 8) /* the kernel's dy fill takes runs of 8 pixels */
            c->tw /= 2;
        else
            return 0;
    }
    const int64_t tiles = g->n * ((g->wo + c->tw - 1) / c->tw) * ((g->ho + c->th - 1) / c->th);
    const int64_t cgs = (g->co + (int64_t)c->cob * COI - 1) / ((int64_t)c->cob * COI);
    int64_t want = (int64_t)ctx->dev->entry->info.compute_units * per_cu / cgs;
    want = want < 1 ? 1 : want;
    c->slots = (int)(tiles < want ? tiles : want);
    return tiles <= INT_MAX / 2 && (double)c->slots * (double)cgs * (double)(c->cob * COI * c->kcb) <= INT_MAX;
}

int clt__convb_stem_options(const clt_context *ctx, const clt__conv_geom *g, int unroll, char *opts, size_t n,
                            size_t *wg, size_t *groups, size_t *partial_floats)
{
    dw_cfg c;
    if (!clt__conv_stem_shape(g) || g->n < 1 || !choose(ctx, g, &c, 1))
        return 0;
    const int64_t cog = (int64_t)c.cob * COI, cgs = (g->co + cog - 1) / cog;
    *wg = (size_t)(c.cob * c.kcb);
    *groups = (size_t)(c.slots * cgs);
    *partial_floats = c.slots > 1 ? *groups * (size_t)(cog * c.kcb * c.kci) : 0;
    snprintf(opts, n,
             "-DKH=%d -DKW=%d -DSH=%d -DSW=%d -DDH=%d -DDW=%d -DCI=%d -DTW=%d -DTH=%d -DCOI=%d -DKCI=%d -DCOB=%d "
             "-DKCB=%d -DSLOTS=%d -DSTEM_UNROLL=%d",
             (int)g->kh, (int)g->kw, (int)g->sh, (int)g->sw, (int)g->dh, (int)g->dw, (int)g->ci, c.tw, c.th, COI,
             c.kci, c.cob, c.kcb, c.slots, unroll);
    return 1;
}

clt_status clt__convb_weight_stem(clt_context *ctx, const clt__conv_geom *g, const clt_tensor *dy,
                                  const clt_tensor *x, clt_tensor *dw, const char *who)
{
    char opts[256];
    size_t wg, groups, pf;
    if (!clt__convb_stem_options(ctx, g, clt__conv_stem_unroll(ctx), opts, sizeof opts, &wg, &groups, &pf))
        return CLT_ERR_UNSUPPORTED;
    cl_kernel k, ks = NULL;
    clt_status st = clt__kernel_get(ctx, "conv2d_stem_dw", opts, "conv2d_stem_dw", &k);
    if (!st && pf)
        st = clt__kernel_get(ctx, "conv2d_stem_dw", opts, "conv2d_stem_dw_sum", &ks);
    if (st)
        return st;
    if (clt__group_limit(ctx, k) < wg)
        return CLT_ERR_UNSUPPORTED;
    cl_mem ws = dw->storage->mem; /* the first kernel's target: dw itself, or the partials */
    if (pf && (st = clt__convb_workspace(ctx, pf * sizeof(float), who, &ws)))
        return st == CLT_ERR_OUT_OF_DEVICE_MEMORY ? CLT_ERR_UNSUPPORTED : st;
    cl_int16 G = clt__convb_geom_arg(g);
    const cl_ulong dw_off = dw->offset / sizeof(float), part_off = CLT__CONVB_COUNTERS; /* after the counters */
    cl_ulong4 off = {{dy->offset / sizeof(float), x->offset / sizeof(float), dw_off, part_off}};
    if ((st = clt__set_arg(ctx, k, 0, sizeof(cl_mem), &dy->storage->mem, who)) ||
        (st = clt__set_arg(ctx, k, 1, sizeof(cl_mem), &x->storage->mem, who)) ||
        (st = clt__set_arg(ctx, k, 2, sizeof(cl_mem), &ws, who)) ||
        (st = clt__set_arg(ctx, k, 3, sizeof G, &G, who)) || (st = clt__set_arg(ctx, k, 4, sizeof off, &off, who)))
        return st;
    size_t global = groups * wg;
    if ((st = clt__enqueue_kernel(ctx, k, 1, &global, &wg, who)) || !pf)
        return st;
    const cl_int co = (cl_int)g->co;
    cl_ulong2 soff = {{part_off, dw_off}};
    if ((st = clt__set_arg(ctx, ks, 0, sizeof(cl_mem), &ws, who)) ||
        (st = clt__set_arg(ctx, ks, 1, sizeof(cl_mem), &dw->storage->mem, who)) ||
        (st = clt__set_arg(ctx, ks, 2, sizeof co, &co, who)) || (st = clt__set_arg(ctx, ks, 3, sizeof soff, &soff, who)))
        return st;
    return clt__convb_launch_items(ctx, ks, (uint64_t)(g->co * g->ci * g->kh * g->kw), who);
}
