/* Conv2D grad-weight by Winograd F(4x4, 3x3) (cl_kernels/conv/conv2d_winograd_dw.cl, whose banner
 * derives it): 3x3 kernels, stride 1, dilation 1, one group, any padding and size. Per chunk of
 * images:
 *   1. conv2d_winograd_dw_transform: V = B^T D B of x's blocks (the forward's input transform) and
 *      U = A Dy A^T of dy's blocks, one launch;
 *   2. our strided-batched NT GEMM (clt__gemm_tiled), batch 36: M[xi] (+)= U[xi] * V[xi]^T, beta 0
 *      for the first chunk, 1 after (it splits K itself when the 36 tiles leave units idle);
 * then once: 3. conv2d_winograd_dw_output: dw = G^T M G.
 * n8c64h56o64: T = 1568 blocks, U and V 14.4 MB each, 0.46 GFLOP of GEMM instead of 1.85 direct.
 * The workspace is slot 1 (conv columns: the column GEMM path, the only other user within a
 * grad-weight call, never runs in the same call; the GEMM's split-K partials are in slot 4). U + V
 * for as many images as fit clt__convb_winograd_cap_bytes, M for the whole call.
 * CLT_ERR_UNSUPPORTED (dw untouched; the caller runs the tiled kernel) when the geometry does not
 * apply, the workspace does not fit the memory, the planes leave int range or our GEMM refuses. */
#include <limits.h>
#include <string.h>

#include "memory/memory.h"
#include "ops/conv/conv2d.h"
#include "ops/conv/conv2d_backward.h"
#include "ops/common/launch.h"
#include "program/program.h"
#include "ops/conv/conv_params.h"

#define PROGRAM "conv2d_winograd_dw"
#define WORKSPACE_SLOT 1
#define XI 36 /* transform positions of a 6x6 tile */

uint64_t clt__convb_winograd_cap_bytes = (uint64_t)256 << 20;

static int64_t round4(int64_t v)
{
    return (v + 3) / 4 * 4;
}

typedef struct dw_plan {
    int64_t tiles_w, tpi; /* blocks per row, per image */
    int64_t chunk, ldp;   /* images per chunk, U/V row length (chunk * tpi rounded up to 4) */
    int64_t ldm;          /* M row length (Ci rounded up to 4): float4-aligned GEMM operands */
    uint64_t v_base, m_base, total; /* element offsets in the workspace; U at 0 */
} dw_plan;

int clt__convb_weight_winograd_suits(const clt_context *ctx, const clt__conv_geom *g)
{
    return clt__conv_winograd_auto(ctx, g); /* the forward's thresholds (conv_params.c) */
}

static clt_status plan_make(clt_context *ctx, const clt__conv_geom *g, dw_plan *w, const char *who)
{
    w->tiles_w = (g->wo + 3) / 4;
    w->tpi = (g->ho + 3) / 4 * w->tiles_w;
    w->ldm = round4(g->ci);
    uint64_t m = (uint64_t)XI * (uint64_t)(g->co * w->ldm);
    uint64_t per_image = (uint64_t)XI * (uint64_t)(g->ci + g->co) * (uint64_t)w->tpi;
    w->chunk = clt__conv_winograd_chunk(clt__convb_winograd_cap_bytes, m, per_image, g->n);
    w->ldp = round4(w->chunk * w->tpi);
    /* In-kernel per-plane indices and the grid are int. */
    if (w->ldp * (g->ci > g->co ? g->ci : g->co) > INT_MAX / 2 || g->co * w->ldm > INT_MAX / 2)
        return clt__fail(ctx, CLT_ERR_UNSUPPORTED,
                         "%s: Winograd planes of one chunk exceed 2^30 elements", who);
    w->v_base = (uint64_t)XI * (uint64_t)(g->co * w->ldp);
    w->m_base = w->v_base + (uint64_t)XI * (uint64_t)(g->ci * w->ldp);
    w->total = w->m_base + m;
    return CLT_SUCCESS;
}

static clt_status run_transform(clt_context *ctx, const clt__conv_geom *g, const dw_plan *w,
                                const clt_tensor *dy, const clt_tensor *x, cl_mem ws, cl_kernel k,
                                int64_t img0, int64_t np, const char *who)
{
    size_t l = clt__fit_local_halving(ctx, k, (size_t)clt__conv_table_for(ctx)->direct_local);
    cl_ulong4 offs = {{x->offset / sizeof(float), dy->offset / sizeof(float), w->v_base, 0}};
    cl_int8 ga = {{(cl_int)g->ci, (cl_int)g->h, (cl_int)g->w, (cl_int)g->co, (cl_int)w->tiles_w,
                   (cl_int)w->tpi, (cl_int)g->pt, (cl_int)g->pl}};
    cl_int8 gb = {
        {(cl_int)img0, (cl_int)np, (cl_int)w->ldp, 0, 0, (cl_int)g->ho, (cl_int)g->wo, 0}};
    clt_status st;
    if ((st = clt__set_arg(ctx, k, 0, sizeof(cl_mem), &x->storage->mem, who)) ||
        (st = clt__set_arg(ctx, k, 1, sizeof(cl_mem), &dy->storage->mem, who)) ||
        (st = clt__set_arg(ctx, k, 2, sizeof(cl_mem), &ws, who)) ||
        (st = clt__set_arg(ctx, k, 3, sizeof offs, &offs, who)) ||
        (st = clt__set_arg(ctx, k, 4, sizeof ga, &ga, who)) ||
        (st = clt__set_arg(ctx, k, 5, sizeof gb, &gb, who)))
        return st;
    size_t global[2] = {((size_t)np + l - 1) / l * l, (size_t)(g->ci + g->co)}, local[2] = {l, 1};
    return clt__enqueue_kernel(ctx, k, 2, global, local, who);
}

static clt_status run_gemm(clt_context *ctx, const clt__conv_geom *g, const dw_plan *w, cl_mem ws,
                           int64_t img0, int64_t np, const char *who)
{
    clt__gemm_problem q;
    memset(&q, 0, sizeof q);
    q.ta = CLT_NO_TRANS, q.tb = CLT_TRANS;
    q.m = g->co, q.n = g->ci, q.k = np;
    q.alpha = 1.0f, q.beta = img0 ? 1.0f : 0.0f;
    q.a = q.b = q.c = ws;
    q.a_off = 0, q.lda = w->ldp, q.a_stride = g->co * w->ldp;
    q.b_off = w->v_base, q.ldb = w->ldp, q.b_stride = g->ci * w->ldp;
    q.c_off = w->m_base, q.ldc = w->ldm, q.c_stride = g->co * w->ldm;
    q.batch = XI;
    q.bias_mode = CLT_BIAS_NONE;
    q.act = CLT_IDENTITY;
    return clt__gemm_tiled(ctx, &q, who);
}

static clt_status run_output(clt_context *ctx, const clt__conv_geom *g, const dw_plan *w,
                             clt_tensor *dw, cl_mem ws, cl_kernel k, const char *who)
{
    size_t l = clt__fit_local_halving(ctx, k, (size_t)clt__conv_table_for(ctx)->direct_local);
    while (l > 1 && l / 2 >= (size_t)g->ci) /* no group wider than a row of M */
        l /= 2;
    cl_ulong4 offs = {{w->m_base, dw->offset / sizeof(float), 0, 0}};
    cl_int4 gc = {{(cl_int)g->ci, (cl_int)g->co, (cl_int)w->ldm, 0}};
    clt_status st;
    if ((st = clt__set_arg(ctx, k, 0, sizeof(cl_mem), &ws, who)) ||
        (st = clt__set_arg(ctx, k, 1, sizeof(cl_mem), &dw->storage->mem, who)) ||
        (st = clt__set_arg(ctx, k, 2, sizeof offs, &offs, who)) ||
        (st = clt__set_arg(ctx, k, 3, sizeof gc, &gc, who)))
        return st;
    size_t global[2] = {((size_t)g->ci + l - 1) / l * l, (size_t)g->co}, local[2] = {l, 1};
    return clt__enqueue_kernel(ctx, k, 2, global, local, who);
}

/* The three stages of every chunk, then the output (rehearsed first: a GEMM that cannot be built or
 * refuses fails the op before the first transform ran). */
typedef struct dw_run {
    const clt__conv_geom *g;
    const dw_plan *w;
    const clt_tensor *dy, *x;
    clt_tensor *dw;
    cl_mem ws;
    cl_kernel kt, ko;
} dw_run;

static clt_status run_stages(clt_context *ctx, const void *arg, const char *who)
{
    const dw_run *r = arg;
    const clt__conv_geom *g = r->g;
    const dw_plan *w = r->w;
    clt_status st;
    for (int64_t img0 = 0; img0 < g->n; img0 += w->chunk) {
        int64_t cnt = g->n - img0 < w->chunk ? g->n - img0 : w->chunk, np = cnt * w->tpi;
        if ((st = run_transform(ctx, g, w, r->dy, r->x, r->ws, r->kt, img0, np, who)) ||
            (st = run_gemm(ctx, g, w, r->ws, img0, np, who)))
            return st;
    }
    return run_output(ctx, g, w, r->dw, r->ws, r->ko, who);
}

clt_status clt__convb_weight_winograd(clt_context *ctx, const clt__conv_geom *g,
                                      const clt_tensor *dy, const clt_tensor *x, clt_tensor *dw,
                                      const char *who)
{
    clt_status st = clt__conv_winograd_require(ctx, g, who);
    if (st)
        return st;
    dw_plan w;
    memset(&w, 0, sizeof w);
    if ((st = plan_make(ctx, g, &w, who)) != CLT_SUCCESS)
        return st;
    cl_kernel kt, ko;
    if ((st = clt__kernel_get(ctx, PROGRAM, "", "conv2d_winograd_dw_transform", &kt)) ||
        (st = clt__kernel_get(ctx, PROGRAM, "", "conv2d_winograd_dw_output", &ko)))
        return st;
    cl_mem ws;
    int fresh;
    st = clt__workspace_get(ctx, WORKSPACE_SLOT, (size_t)w.total * sizeof(float), &ws, &fresh);
    if (st == CLT_ERR_OUT_OF_DEVICE_MEMORY) /* the tiled kernel needs far less */
        return clt__fail(ctx, CLT_ERR_UNSUPPORTED,
                         "%s: no room for the Winograd workspace (%llu B)", who,
                         (unsigned long long)(w.total * sizeof(float)));
    if (st)
        return st;
    dw_run r = {g, &w, dy, x, dw, ws, kt, ko};
    return clt__rehearse_then_run(ctx, run_stages, &r, who);
}
