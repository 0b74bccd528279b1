/* Conv2D forward for few input channels (cl_kernels/conv/conv2d_stem.cl): Ci = 1 .. 4, one group,
 * any kernel size up to 11 x 11, stride, dilation and padding; exact fp32, so it serves every math mode
 * (TF32 may round, need not). clt__conv2d_ours tries it first on GPU-class devices, before Winograd and
 * the implicit GEMM, whose k slices would gather a Kh x Kw window scattered over Ci planes.
 *
 * Tile shape: 16 columns x 8 rows of one image for up to 64 output channels (256 items, each 2 pixels
 * x 16 channels: 6 local loads feed 32 multiply-adds per tap), fewer channels a group when Co is small;
 * H100, n8c3h224 7x7 stride 2 (one A/B call): 86.6 us; 16 rows (4 pixels an item, 144 registers: one
 * group an SM) 111.7-112.1; 32 x 8 tiles 130.6; 8 channels an item 145.7; the implicit GEMM 145.6;
 * when the patch and the weights outgrow the device's local memory (large windows or strides) the
 * group takes fewer channels, then fewer rows. CLT_CONV_STEM=0 declines (A/B runs against the other
 * kernels); CLT_CONV_STEM_CFG=tw,tr,pxt,cot,cb sets the tile shape (malformed or not fitting: the built-in
 * one). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/common/launch.h"
#include "ops/conv/conv2d.h"
#include "program/program.h"

#define MAX_CI 4
#define MAX_TAPS 121 /* every tap is unrolled: 11 x 11 at most */

typedef struct stem_cfg {
    int tw, tr, pxt, cot, cb; /* tile columns, item rows, pixels (rows) an item, channels an item, channel blocks */
    int pcs, pitch;           /* patch layout: words a phase, words a row */
} stem_cfg;

static int64_t patch_rows(const clt__conv_geom *g, const stem_cfg *c)
{
    return (int64_t)(c->tr * c->pxt - 1) * g->sh + (g->kh - 1) * (int64_t)g->dh + 1;
}

/* Phases of SW words each; rows ty and ty + 1 of a warp's items in disjoint banks where a row is
 * narrower than a warp (SH * PITCH = TW mod 32), else the unpadded row. */
static void layout(const clt__conv_geom *g, stem_cfg *c)
{
    int64_t pc = (int64_t)(c->tw - 1) * g->sw + (g->kw - 1) * (int64_t)g->dw + 1;
    int64_t base = (pc + g->sw - 1) / g->sw;
    c->pcs = (int)base;
    for (int64_t d = 0; c->tw < 32 && d < 32; d++)
        if ((g->sh * g->sw * (base + d)) % 32 == c->tw % 32) {
            c->pcs = (int)(base + d);
            break;
        }
    c->pitch = (int)(g->sw * c->pcs);
}

static int64_t local_bytes(const clt__conv_geom *g, const stem_cfg *c)
{
    return (patch_rows(g, c) * c->pitch + g->kh * g->kw * (int64_t)c->cot * c->cb) * (int64_t)sizeof(float);
}

static int fits(const clt_context *ctx, const clt__conv_geom *g, stem_cfg *c)
{
    layout(g, c);
    return (uint64_t)local_bytes(g, c) <= ctx->limits.local_mem_budget &&
           (uint64_t)(c->tw * c->tr * c->cb) <= ctx->limits.max_work_group_size;
}

static int from_env(const clt_context *ctx, const clt__conv_geom *g, stem_cfg *c)
{
    const char *e = getenv("CLT_CONV_STEM_CFG");
    stem_cfg v;
    char tail;
    if (!e || sscanf(e, "%d,%d,%d,%d,%d%c", &v.tw, &v.tr, &v.pxt, &v.cot, &v.cb, &tail) != 5)
        return 0;
    if ((v.tw != 8 && v.tw != 16 && v.tw != 32) || v.tr < 1 || v.tr > 32 || v.pxt < 1 || v.pxt > 8 ||
        (v.cot != 4 && v.cot != 8 && v.cot != 16) || v.cb < 1 || v.cb > 16 || !fits(ctx, g, &v))
        return 0;
    *c = v;
    return 1;
}

/* The built-in shape, shrunk until it fits; 0 when nothing does. */
static int choose(const clt_context *ctx, const clt__conv_geom *g, stem_cfg *c)
{
    if (from_env(ctx, g, c))
        return 1;
    c->tw = 16, c->tr = 4, c->pxt = 2;
    c->cot = g->co <= 4 ? 4 : g->co <= 8 ? 8 : 16;
    int64_t blocks = (g->co + c->cot - 1) / c->cot;
    c->cb = blocks < 4 ? (int)blocks : 4;
    while (!fits(ctx, g, c)) {
        if (c->cb > 1)
            c->cb /= 2;
        else if (c->tr > 1)
            c->tr /= 2;
        else if (c->pxt > 1)
            c->pxt /= 2;
        else
            return 0;
    }
    return 1;
}

int clt__conv_stem_shape(const clt__conv_geom *g)
{
    return g->groups == 1 && g->ci <= MAX_CI && g->kh * g->kw <= MAX_TAPS;
}

int clt__conv_stem_unroll(const clt_context *ctx)
{
    return ctx->dev->entry->info.type != CLT_DEVICE_CPU;
}

int clt__conv_stem_options(const clt_context *ctx, const clt__conv_geom *g, int unroll, char *opts, size_t n,
                           size_t *wg, size_t *groups)
{
    const char *off = getenv("CLT_CONV_STEM");
    stem_cfg c;
    if ((off && !strcmp(off, "0")) || !clt__conv_stem_shape(g) || !choose(ctx, g, &c))
        return 0;
    const int64_t th = (int64_t)c.tr * c.pxt, cog = (int64_t)c.cot * c.cb;
    const double count = (double)((g->wo + c.tw - 1) / c.tw) * (double)((g->ho + th - 1) / th) *
                         (double)g->n * (double)((g->co + cog - 1) / cog);
    *wg = (size_t)(c.tw * c.tr * c.cb);
    /* the kernel's int group index and tile arithmetic */
    if (count * (double)*wg > (double)INT_MAX || g->ho * g->sh > INT_MAX / 2 || g->wo * g->sw > INT_MAX / 2)
        return 0;
    *groups = (size_t)count;
    snprintf(opts, n,
             "-DKH=%d -DKW=%d -DSH=%d -DSW=%d -DDH=%d -DDW=%d -DTW=%d -DTR=%d -DPXT=%d -DCOT=%d -DCB=%d "
             "-DPCS=%d -DPITCH=%d -DSTEM_UNROLL=%d",
             (int)g->kh, (int)g->kw, (int)g->sh, (int)g->sw, (int)g->dh, (int)g->dw, c.tw, c.tr, c.pxt, c.cot,
             c.cb, c.pcs, c.pitch, unroll);
    return 1;
}

typedef struct stem_run {
    const clt__conv_problem *p;
    size_t wg, groups;
    char opts[200];
} stem_run;

static clt_status run_stage(clt_context *ctx, const void *arg, const char *who)
{
    const stem_run *r = arg;
    cl_kernel k;
    clt_status st = clt__kernel_get(ctx, "conv2d_stem", r->opts, "conv2d_stem", &k);
    if (st)
        return st;
    if (clt__group_limit(ctx, k) < r->wg)
        return CLT_ERR_UNSUPPORTED;
    if ((st = clt__conv_set_args(ctx, r->p, k, 0, who)))
        return st;
    size_t global[1] = {r->groups * r->wg}, local[1] = {r->wg};
    return clt__enqueue_kernel(ctx, k, 1, global, local, who);
}

clt_status clt__conv2d_stem(clt_context *ctx, const clt__conv_problem *p, const char *who)
{
    stem_run r;
    memset(&r, 0, sizeof r);
    r.p = p;
    if (p->w_flipped ||
        !clt__conv_stem_options(ctx, &p->g, clt__conv_stem_unroll(ctx), r.opts, sizeof r.opts, &r.wg, &r.groups))
        return CLT_ERR_UNSUPPORTED;
    return clt__rehearse_then_run(ctx, run_stage, &r, who);
}
