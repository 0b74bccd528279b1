/* Our Conv2D forward kernels: picks a variant by shape and device class (tune/conv_params.c),
 * builds it with its -D parameters and enqueues it once, bias and activation fused (the activation
 * is a kernel argument: common/conv_act.h). Variants:
 *   gemm      1x1 / stride 1 / no padding / one group: a strided-batched GEMM per image through
 *             the GEMM dispatcher (W shared, bias per row), so it gets our tuned GEMM kernels
 *   depthwise conv2d_direct.cl, one input channel per group (Ci_g == 1)
 *   implicit  conv2d.cl, GPU style implicit GEMM (local-memory tiles, register blocking)
 *   colgemm   im2col into the workspace + our CPU GEMM (conv2d_clblast.c with our
 *             GEMM), cache-sized chunks of images; 2-10x the direct kernel on POCL
 *             and on GPUs for grids the implicit kernel cannot fill with 64x64 tiles while K is
 *             long enough for our GEMM to split (then one chunk, our tiled GEMM with split K)
 *   cpu       conv2d_cpu.cl, CPU style direct kernel (explicit SIMD vectors), kept as a fallback
 *   winograd  F(4x4, 3x3) for 3x3 / stride 1 / dilation 1 / one group (conv2d_winograd.c):
 *             transforms + our batched GEMM, 3 launches; chosen first when the class's
 *             thresholds pass (tune/conv_params.c), falling back to the choice below
 *   stem      Ci 1 .. 4, one group (conv2d_stem.c: the input patch and the weights staged in local
 *             memory, every tap on registers): tried first on GPU classes, after the tensor-core forms
 *   wgmma     TF32 math on Hopper's wgmma (conv2d_wgmma.c), then
 *   mma       TF32 / 3xTF32 math on mma.sync (conv2d_mma.c): tried before all of the above except the
 *             1x1 GEMM, which has its own tensor-core path; each declines the shapes and devices it
 *             does not serve (CLT_CONV_WGMMA, CLT_CONV_MMA: those files)
 * CLT_CONV_VARIANT=implicit|implicit:<config index>|cpu|colgemm|winograd|stem forces one where it applies
 * (stem on CPU devices too; where it declines, the automatic order)
 * (tests use it; "mma" is the automatic order, mma first); anything else, or unset, means automatic. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/conv/conv2d.h"
#include "ops/gemm/gemm.h"
#include "ops/common/launch.h"
#include "program/program.h"
#include "ops/conv/conv_params.h"
#include "ops/gemm/gemm_dispatch.h"

#define INT_LIMIT ((int64_t)INT_MAX - 4096)

typedef struct conv_launch {
    clt_context *ctx;
    const clt__conv_problem *p;
    const char *who;
} conv_launch;

double clt__conv_flop(const clt__conv_geom *g)
{
    return 2.0 * (double)g->n * (double)g->co * (double)g->ho * (double)g->wo * (double)g->ci_g *
           (double)g->kh * (double)g->kw;
}

int clt__conv_is_pointwise(const clt__conv_geom *g)
{
    return g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 && g->pt == 0 && g->pb == 0 &&
           g->pl == 0 && g->pr == 0 && g->groups == 1;
}

static clt_status run_pointwise(clt_context *ctx, const clt__conv_problem *p, const char *who)
{
    const clt__conv_geom *g = &p->g;
    int64_t hw = g->h * g->w;
    clt__gemm_problem q;
    memset(&q, 0, sizeof q);
    q.ta = q.tb = CLT_NO_TRANS;
    q.m = g->co, q.n = hw, q.k = g->ci;
    q.alpha = 1.0f, q.beta = 0.0f;
    q.a = p->w, q.b = p->x, q.c = p->out;
    q.a_off = p->w_off, q.b_off = p->x_off, q.c_off = p->out_off;
    q.lda = g->ci, q.ldb = hw, q.ldc = hw;
    q.batch = g->n;
    q.b_stride = g->n > 1 ? g->ci * hw : 0;
    q.c_stride = g->n > 1 ? g->co * hw : 0;
    q.bias = p->bias, q.bias_off = p->bias_off;
    q.bias_mode = p->bias ? CLT_BIAS_PER_ROW : CLT_BIAS_NONE;
    q.act = p->act, q.act_alpha = p->act_alpha;
    q.a_dtype = q.b_dtype = q.c_dtype = CLT_F32;
    q.math = g->math; /* TF32 / 3xTF32: the tensor-core GEMM where there is one */
    return clt__gemm_dispatch(ctx, &q, who);
}

clt_status clt__conv_set_args(clt_context *ctx, const clt__conv_problem *p, cl_kernel k, int64_t extra,
                              const char *who)
{
    const clt__conv_geom *g = &p->g;
    cl_mem bias = p->bias ? p->bias : p->w;
    int vec = (g->ho * g->wo) % 4 == 0 && p->out_off % 4 == 0;
    cl_ulong4 offs = {{p->x_off, p->w_off, p->bias_off, p->out_off}};
    cl_int8 ga = {{(cl_int)g->ci, (cl_int)g->h, (cl_int)g->w, (cl_int)g->co, (cl_int)g->ho,
                   (cl_int)g->wo, (cl_int)g->kh, (cl_int)g->kw}};
    cl_int8 gb = {{(cl_int)g->sh, (cl_int)g->sw, (cl_int)g->pt, (cl_int)g->pl, (cl_int)g->dh,
                   (cl_int)g->dw, (cl_int)g->ci_g, (cl_int)g->co_g}};
    cl_int flags = (p->bias ? 1 : 0) | (vec ? 2 : 0) | ((cl_int)p->act << 8);
    cl_int4 gc = {{(cl_int)(g->n * g->ho * g->wo), flags,
                   (cl_int)(g->ci_g * g->kh * g->kw), (cl_int)extra}};
    clt_status st;
    if ((st = clt__set_arg(ctx, k, 0, sizeof(cl_mem), &p->x, who)) ||
        (st = clt__set_arg(ctx, k, 1, sizeof(cl_mem), &p->w, who)) ||
        (st = clt__set_arg(ctx, k, 2, sizeof(cl_mem), &bias, who)) ||
        (st = clt__set_arg(ctx, k, 3, sizeof(cl_mem), &p->out, who)) ||
        (st = clt__set_arg(ctx, k, 4, sizeof offs, &offs, who)) ||
        (st = clt__set_arg(ctx, k, 5, sizeof ga, &ga, who)) ||
        (st = clt__set_arg(ctx, k, 6, sizeof gb, &gb, who)) ||
        (st = clt__set_arg(ctx, k, 7, sizeof gc, &gc, who)) ||
        (st = clt__set_arg(ctx, k, 8, sizeof(float), &p->act_alpha, who)))
        return st;
    return CLT_SUCCESS;
}

static clt_status set_args(conv_launch *L, cl_kernel k, int64_t extra)
{
    return clt__conv_set_args(L->ctx, L->p, k, extra, L->who);
}

static clt_status get_kernel(conv_launch *L, const char *family, const char *opts, const char *name,
                             cl_kernel *k)
{
    clt_status st = clt__kernel_get(L->ctx, family, opts, name, k);
    return st;
}

static size_t round_up(size_t x, size_t to) { return (x + to - 1) / to * to; }

static clt_status try_depthwise(conv_launch *L, const clt__conv_table *t)
{
    const clt__conv_geom *g = &L->p->g;
    cl_kernel k;
    clt_status st = get_kernel(L, "conv2d_direct", "", "conv2d_depthwise", &k);
    if (st || (st = set_args(L, k, 0)))
        return st;
    size_t l = clt__fit_local_halving(L->ctx, k, (size_t)t->direct_local);
    size_t global[2] = {round_up((size_t)(g->ho * g->wo), l), (size_t)(g->n * g->co)};
    size_t local[2] = {l, 1};
    return clt__enqueue_kernel(L->ctx, k, 2, global, local, L->who);
}

static clt_status try_cpu(conv_launch *L, const clt__conv_table *t)
{
    const clt__conv_geom *g = &L->p->g;
    /* 16 pixels per item unless the row splits exactly into 8s and not 16s (Wo = 56: 7 x 8). */
    int nv = (g->wo % 16 == 0 || g->wo % 8 != 0) ? 16 : 8;
    char opts[48];
    snprintf(opts, sizeof opts, "-DRPI=%d -DNV=%d", t->cpu_rpi, nv);
    cl_kernel k;
    int64_t xb = (g->wo + nv - 1) / nv;
    clt_status st = get_kernel(L, "conv2d_cpu", opts, "conv2d_cpu", &k);
    if (st || (st = set_args(L, k, xb)))
        return st;
    size_t blocks = (size_t)((g->co_g + t->cpu_rpi - 1) / t->cpu_rpi);
    size_t l = clt__fit_local_halving(L->ctx, k, (size_t)t->cpu_local);
    while (l > 1 && l / 2 >= blocks)
        l /= 2; /* no group wider than the channel blocks */
    size_t global[3] = {round_up(blocks, l), (size_t)(g->ho * xb), (size_t)(g->n * g->groups)};
    size_t local[3] = {l, 1, 1};
    return clt__enqueue_kernel(L->ctx, k, 3, global, local, L->who);
}

static int tiled_fits(const clt_context *ctx, const clt__conv_tiled_cfg *c)
{
    return clt__conv_tiled_local_bytes(c) <= ctx->limits.local_mem_budget &&
           (uint64_t)clt__conv_tiled_wg(c) <= ctx->limits.max_work_group_size;
}

/* Config `first` (or, when -1, the first whose row tile is not mostly empty and whose grid still
 * gives every compute unit a group), then smaller ones until the built kernel accepts it. */
static clt_status try_implicit(conv_launch *L, const clt__conv_table *t, int first)
{
    const clt__conv_geom *g = &L->p->g;
    int64_t cols = g->n * g->ho * g->wo;
    int start = first;
    if (start < 0) {
        uint64_t cus = L->ctx->dev->entry->info.compute_units;
        start = t->n_tiled - 1;
        for (int i = 0; i < t->n_tiled; i++) {
            const clt__conv_tiled_cfg *c = &t->tiled[i];
            uint64_t groups = (uint64_t)((cols + c->nwg - 1) / c->nwg) *
                              (uint64_t)((g->co_g + c->mwg - 1) / c->mwg) * (uint64_t)g->groups;
            if (tiled_fits(L->ctx, c) && 2 * g->co_g > c->mwg && groups >= cus) {
                start = i;
                break;
            }
        }
    }
    for (int i = start; i >= 0 && i < t->n_tiled; i++) {
        const clt__conv_tiled_cfg *c = &t->tiled[i];
        if (!tiled_fits(L->ctx, c))
            continue;
        char opts[160];
        clt__conv_tiled_options(c, g->ci_g % c->kwg == 0, opts, sizeof opts);
        cl_kernel k;
        clt_status st = get_kernel(L, "conv2d", opts, "conv2d_implicit", &k);
        if (st)
            return st;
        size_t wg = (size_t)clt__conv_tiled_wg(c);
        if (clt__group_limit(L->ctx, k) < wg)
            continue;
        if ((st = set_args(L, k, 0)))
            return st;
        size_t global[3] = {(size_t)((cols + c->nwg - 1) / c->nwg) * wg,
                            (size_t)((g->co_g + c->mwg - 1) / c->mwg), (size_t)g->groups};
        size_t local[3] = {wg, 1, 1};
        return clt__enqueue_kernel(L->ctx, k, 3, global, local, L->who);
    }
    return CLT_ERR_UNSUPPORTED;
}

/* Would the implicit kernel leave compute units idle even with 64x64 tiles, while K is long enough
 * for our GEMM to split it and the column buffer is small? Then im2col + GEMM. Measured on the H200
 * (n1c64h56o64k3s1: M 64, N 3136, K 576): the implicit kernel (32x32 tiles, 196 groups of 64
 * items) 49 us, CLBlast's path 47.5 us, cuDNN 34 us. */
#define IM2COL_MIN_K 256
#define IM2COL_MAX_BYTES ((uint64_t)64 << 20)
static int small_grid(const conv_launch *L, const clt__conv_table *t)
{
    const clt__conv_geom *g = &L->p->g;
    int64_t kk = g->ci_g * g->kh * g->kw, cols = g->n * g->ho * g->wo;
    uint64_t cus = L->ctx->dev->entry->info.compute_units;
    if (t->n_tiled < 3 || kk < IM2COL_MIN_K ||
        (uint64_t)(g->ci * g->kh * g->kw) * (uint64_t)cols * sizeof(float) > IM2COL_MAX_BYTES)
        return 0;
    const clt__conv_tiled_cfg *c = &t->tiled[2];
    uint64_t groups = (uint64_t)((cols + c->nwg - 1) / c->nwg) *
                      (uint64_t)((g->co_g + c->mwg - 1) / c->mwg) * (uint64_t)g->groups;
    return groups < cus;
}

/* The automatic choice other than Winograd (after_wino: Winograd was tried and refused, so on
 * GPUs the implicit kernel, as for any other refusal). */
static clt_status run_auto(conv_launch *L, const clt__conv_table *t, int after_wino)
{
    const clt__conv_geom *g = &L->p->g;
    clt_status st;
    if (g->ci_g == 1)
        return try_depthwise(L, t);
    if (t->prefer_cpu) {
        st = clt__conv2d_colgemm(L->ctx, L->p, 0, L->who);
        return st == CLT_ERR_UNSUPPORTED ? try_cpu(L, t) : st;
    }
    if (!after_wino && small_grid(L, t))
        return clt__conv2d_colgemm(L->ctx, L->p, 0, L->who);
    st = try_implicit(L, t, -1);
    return st == CLT_ERR_UNSUPPORTED ? try_cpu(L, t) : st; /* no local memory, any group size */
}

/* Whether CLT_CONV_VARIANT (value e) forces one of the single-path variants. */
static int forces_single_path(const char *e)
{
    return e && (!strncmp(e, "implicit", 8) || !strcmp(e, "cpu") || !strcmp(e, "colgemm"));
}

int clt__conv_winograd_chosen(const clt_context *ctx, const clt__conv_geom *g)
{
    const char *e = getenv("CLT_CONV_VARIANT");
    if (e && !strcmp(e, "winograd"))
        return clt__conv_winograd_applies(g);
    return forces_single_path(e) ? 0 : clt__conv_winograd_auto(ctx, g);
}

clt_status clt__conv2d_ours(clt_context *ctx, const clt__conv_problem *p, const char *who)
{
    const clt__conv_geom *g = &p->g;
    const char *act = clt__epilogue_act_name(p->act);
    if (!act)
        return clt__fail(ctx, CLT_ERR_UNSUPPORTED, "%s: activation %d cannot be fused", who,
                         (int)p->act);
    const char *e = getenv("CLT_CONV_VARIANT");
    if (clt__conv_is_pointwise(g) && !forces_single_path(e))
        return run_pointwise(ctx, p, who);
    /* int indices inside one image, one weight tensor and the column range. */
    int64_t kk = g->ci_g * g->kh * g->kw;
    if (g->ci * g->h * g->w > INT_LIMIT || g->co * g->ho * g->wo > INT_LIMIT ||
        g->co * kk > INT_LIMIT || g->n * g->ho * g->wo > INT_LIMIT || g->n * g->co > INT_LIMIT)
        return clt__fail(ctx, CLT_ERR_UNSUPPORTED,
                         "%s: our Conv2D kernels take images, weights and N*Ho*Wo below 2^31 elements",
                         who);
    conv_launch L = {ctx, p, who};
    const clt__conv_table *t = clt__conv_table_for(ctx);
    clt_status st = CLT_ERR_UNSUPPORTED;
    /* TF32 / 3xTF32 on tensor cores first where enabled, unless another variant is forced */
    if (!forces_single_path(e) && !(e && !strcmp(e, "winograd"))) {
        st = clt__conv2d_wgmma(ctx, p, who);
        if (st == CLT_ERR_UNSUPPORTED)
            st = clt__conv2d_mma(ctx, p, who);
    }
    if (st != CLT_ERR_UNSUPPORTED)
        return st;
    if (e && !strncmp(e, "implicit", 8))
        st = try_implicit(&L, t, e[8] == ':' ? atoi(e + 9) : -1);
    else if (e && !strcmp(e, "cpu"))
        st = try_cpu(&L, t);
    else if (e && !strcmp(e, "colgemm"))
        st = clt__conv2d_colgemm(ctx, p, 0, who);
    else {
        /* few input channels (GPU classes; forced anywhere; never under a forced Winograd): where it
         * declines, the order below */
        const int forced_wino = e && !strcmp(e, "winograd");
        if (!forced_wino && (!t->prefer_cpu || (e && !strcmp(e, "stem"))))
            st = clt__conv2d_stem(ctx, p, who);
        if (st != CLT_ERR_UNSUPPORTED)
            return st;
        int wino = clt__conv_winograd_chosen(ctx, g);
        if (wino)
            st = clt__conv2d_winograd(ctx, p, who);
        if (st == CLT_ERR_UNSUPPORTED) /* not chosen, or our GEMM refused it */
            st = run_auto(&L, t, wino);
    }
    if (st == CLT_ERR_UNSUPPORTED)
        return clt__fail(ctx, st, "%s: no Conv2D kernel variant fits this device (work-group "
                         "limit %llu, local memory %llu B)", who,
                         (unsigned long long)ctx->limits.max_work_group_size,
                         (unsigned long long)ctx->limits.local_mem_budget);
    return st;
}
