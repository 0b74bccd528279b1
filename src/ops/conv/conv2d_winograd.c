/* Conv2D forward by Winograd F(4x4, 3x3) (cl_kernels/conv/conv2d_winograd.cl): 3x3 kernels, stride 1,
 * dilation 1, one group, any padding and size; the CPU class (clt__cpu_style) runs the same two
 * transforms CPU-style (conv2d_winograd_cpu.cl: 8 blocks per item as float8 lanes, 1-D grids).
 * Three launches per chunk of images:
 *   1. conv2d_winograd_transform: V = B^T d B of every input block and (first chunk) U = G g G^T
 *      of every weight, into the workspace;
 *   2. our strided-batched GEMM (clt__gemm_tiled), batch 36: M[xi] = U[xi] * V[xi];
 *   3. conv2d_winograd_output: out = act(A^T M A + bias), partial edge blocks clipped.
 * The workspace (slot 1, shared with im2col: both are conv forward paths and one call uses only
 * one of them) holds U, then V and M for as many images as fit the cap; bigger batches run in
 * chunks of images, U computed once. CLT_ERR_UNSUPPORTED (the caller falls back) when our GEMM
 * refuses, the workspace does not fit the device or the memory cap, or the sizes leave int range. */
#include <limits.h>
#include <string.h>

#include "memory/memory.h"
#include "ops/conv/conv2d.h"
#include "ops/gemm/gemm.h"
#include "ops/common/launch.h"
#include "program/program.h"
#include "ops/conv/conv_params.h"

#define WORKSPACE_SLOT 1
#define XI 36 /* transform positions of a 6x6 tile */

/* Bytes of U + V + M per call before the batch is split into chunks of images. */
uint64_t clt__conv_winograd_cap_bytes = (uint64_t)256 << 20;

int clt__conv_winograd_applies(const clt__conv_geom *g)
{
    return g->kh == 3 && g->kw == 3 && g->sh == 1 && g->sw == 1 && g->dh == 1 && g->dw == 1 &&
           g->groups == 1;
}

clt_status clt__conv_winograd_require(clt_context *ctx, const clt__conv_geom *g, const char *who)
{
    if (clt__conv_winograd_applies(g))
        return CLT_SUCCESS;
    return clt__fail(ctx, CLT_ERR_UNSUPPORTED, "%s: Winograd takes 3x3, stride 1, dilation 1, one group",
                     who);
}

int clt__conv_winograd_auto(const clt_context *ctx, const clt__conv_geom *g)
{
    const clt__conv_table *t = clt__conv_table_for(ctx);
    return t->wino_min_ci > 0 && clt__conv_winograd_applies(g) && g->ci >= t->wino_min_ci &&
           g->co >= t->wino_min_co && g->n * g->ho * g->wo >= t->wino_min_pixels;
}

static int64_t round4(int64_t v) { return (v + 3) / 4 * 4; }

int64_t clt__conv_winograd_chunk(uint64_t cap_bytes, uint64_t fixed, uint64_t per_image, int64_t n)
{
    uint64_t cap = cap_bytes / sizeof(float);
    int64_t chunk = cap > fixed && per_image ? (int64_t)((cap - fixed) / per_image) : 0;
    return chunk < 1 ? 1 : chunk > n ? n : chunk;
}

typedef struct wino_plan {
    int64_t tiles_w, tpi;  /* blocks per row, per image */
    int64_t chunk, ldp;    /* images per chunk, V/M row length (chunk * tpi rounded up to 4) */
    int64_t ldu;           /* U row length (Ci rounded up to 4): float4-aligned GEMM operands */
    int64_t tiles_h, bpr;  /* block rows per image; CPU kernels: strips of 8 blocks per row */
    int cpu;               /* conv2d_winograd_cpu.cl (CPU class) instead of conv2d_winograd.cl */
    int pad;               /* floats between planes (CPU; see plan_make) */
    int64_t u_plane, v_plane, m_plane; /* plane strides of U, V, M */
    uint64_t v_base, m_base, total; /* element offsets in the workspace; U at 0 */
    size_t local;
} wino_plan;

static clt_status plan_make(clt_context *ctx, const clt__conv_geom *g, wino_plan *w, const char *who)
{
    w->tiles_w = (g->wo + 3) / 4;
    w->tiles_h = (g->ho + 3) / 4;
    w->tpi = w->tiles_h * w->tiles_w;
    w->bpr = (w->tiles_w + 7) / 8;
    w->ldu = round4(g->ci);
    /* CPU: 36 planes a multiple of 4 KiB apart map to the same L1 set, and the transforms touch
     * all 36 at once; one cache line between planes spreads them (GPU layout unchanged). POCL,
     * n8c64h56o64, 3 A/B runs: output kernel 116 -> 90 ms per 30 calls, input 124 -> 117. */
    w->cpu = clt__cpu_style(ctx);
    w->pad = w->cpu ? 16 : 0;
    w->u_plane = g->co * w->ldu + w->pad;
    uint64_t u = (uint64_t)XI * (uint64_t)w->u_plane;
    uint64_t per_image = (uint64_t)XI * (uint64_t)(g->ci + g->co) * (uint64_t)w->tpi;
    w->chunk = clt__conv_winograd_chunk(clt__conv_winograd_cap_bytes, u, per_image, g->n);
    w->ldp = round4(w->chunk * w->tpi);
    /* Per-plane and in-kernel indices are int: items (p, c), weights j = k*Ci + c, the grid. */
    if (w->ldp * (g->ci > g->co ? g->ci : g->co) > INT_MAX / 2 || g->co * g->ci * 9 > INT_MAX / 2)
        return clt__fail(ctx, CLT_ERR_UNSUPPORTED,
                         "%s: Winograd planes of one chunk exceed 2^30 elements", who);
    w->v_plane = g->ci * w->ldp + w->pad;
    w->m_plane = g->co * w->ldp + w->pad;
    w->v_base = u;
    w->m_base = u + (uint64_t)XI * (uint64_t)w->v_plane;
    /* + 8: the CPU output kernel loads whole float8 strips of M, up to 7 floats past the end */
    w->total = w->m_base + (uint64_t)XI * (uint64_t)w->m_plane + 8;
    return CLT_SUCCESS;
}

static clt_status run_transform(clt_context *ctx, const clt__conv_problem *p, const wino_plan *w,
                                cl_mem ws, cl_kernel k, int64_t img0, int64_t np, int weights,
                                const char *who)
{
    const clt__conv_geom *g = &p->g;
    size_t l = clt__fit_local_halving(ctx, k, w->local);
    size_t g0 = ((size_t)np + l - 1) / l * l;
    /* weights: one item per (k, c) on GPUs, per (k, 8 channels) on the CPU */
    int64_t nw = weights ? g->co * (w->cpu ? (g->ci + 7) / 8 : g->ci) : 0;
    size_t wrows = (size_t)((nw + (int64_t)g0 - 1) / (int64_t)g0);
    /* CPU: one item per strip of 8 blocks (np / tpi images), then one per weight */
    int64_t nin = np / w->tpi * g->ci * w->tiles_h * w->bpr;
    cl_ulong4 offs = {{p->x_off, p->w_off, w->v_base, 0}};
    cl_int8 ga = {{(cl_int)g->ci, (cl_int)g->h, (cl_int)g->w, (cl_int)g->co, (cl_int)w->tiles_w,
                   (cl_int)w->tpi, (cl_int)g->pt, (cl_int)g->pl}};
    cl_int8 gb = {{(cl_int)img0, (cl_int)(w->cpu ? nin : np), (cl_int)w->ldp, (cl_int)w->ldu,
                   (cl_int)nw, (cl_int)w->bpr, (cl_int)w->tiles_h, (cl_int)g->n}};
    clt_status st;
    if ((st = clt__set_arg(ctx, k, 0, sizeof(cl_mem), &p->x, who)) ||
        (st = clt__set_arg(ctx, k, 1, sizeof(cl_mem), &p->w, who)) ||
        (st = clt__set_arg(ctx, k, 2, sizeof(cl_mem), &ws, who)) ||
        (st = clt__set_arg(ctx, k, 3, sizeof offs, &offs, who)) ||
        (st = clt__set_arg(ctx, k, 4, sizeof ga, &ga, who)) ||
        (st = clt__set_arg(ctx, k, 5, sizeof gb, &gb, who)) ||
        (w->cpu && (st = clt__set_arg(ctx, k, 6, sizeof(cl_int), &w->pad, who))))
        return st;
    if (w->cpu) {
        size_t items = (size_t)(nin + nw), global1 = (items + l - 1) / l * l;
        return clt__enqueue_kernel(ctx, k, 1, &global1, &l, who);
    }
    size_t global[2] = {g0, (size_t)g->ci + wrows}, local[2] = {l, 1};
    return clt__enqueue_kernel(ctx, k, 2, global, local, who);
}

static clt_status run_gemm(clt_context *ctx, const clt__conv_geom *g, const wino_plan *w,
                           cl_mem ws, int64_t np, const char *who)
{
    clt__gemm_problem q;
    memset(&q, 0, sizeof q);
    q.ta = q.tb = CLT_NO_TRANS;
    q.m = g->co, q.n = np, q.k = g->ci;
    q.alpha = 1.0f, q.beta = 0.0f;
    q.a = q.b = q.c = ws;
    q.a_off = 0, q.lda = w->ldu, q.a_stride = w->u_plane;
    q.b_off = w->v_base, q.ldb = w->ldp, q.b_stride = w->v_plane;
    q.c_off = w->m_base, q.ldc = w->ldp, q.c_stride = w->m_plane;
    q.batch = XI;
    q.bias_mode = CLT_BIAS_NONE;
    q.act = CLT_IDENTITY;
    return clt__gemm_tiled(ctx, &q, who);
}

static clt_status run_output(clt_context *ctx, const clt__conv_problem *p, const wino_plan *w,
                             cl_mem ws, cl_kernel k, int64_t img0, int64_t np, const char *who)
{
    const clt__conv_geom *g = &p->g;
    size_t l = clt__fit_local_halving(ctx, k, w->local);
    cl_mem bias = p->bias ? p->bias : ws;
    int64_t nout = np / w->tpi * g->co * w->tiles_h * w->bpr; /* CPU: strips of 8 blocks */
    cl_ulong4 offs = {{w->m_base, p->bias_off, p->out_off, 0}};
    cl_int8 ga = {{(cl_int)g->co, (cl_int)g->ho, (cl_int)g->wo, (cl_int)w->tiles_w,
                   (cl_int)w->tpi, (cl_int)img0, (cl_int)(w->cpu ? nout : np), (cl_int)w->ldp}};
    cl_int flags = (p->bias ? 1 : 0) | ((cl_int)p->act << 8);
    cl_int4 gb = {{(cl_int)w->bpr, (cl_int)w->tiles_h, flags, 0}};
    clt_status st;
    if ((st = clt__set_arg(ctx, k, 0, sizeof(cl_mem), &ws, who)) ||
        (st = clt__set_arg(ctx, k, 1, sizeof(cl_mem), &bias, who)) ||
        (st = clt__set_arg(ctx, k, 2, sizeof(cl_mem), &p->out, who)) ||
        (st = clt__set_arg(ctx, k, 3, sizeof offs, &offs, who)) ||
        (st = clt__set_arg(ctx, k, 4, sizeof ga, &ga, who)) ||
        (st = w->cpu ? clt__set_arg(ctx, k, 5, sizeof gb, &gb, who)
                     : clt__set_arg(ctx, k, 5, sizeof flags, &flags, who)) ||
        (st = clt__set_arg(ctx, k, 6, sizeof(float), &p->act_alpha, who)) ||
        (w->cpu && (st = clt__set_arg(ctx, k, 7, sizeof(cl_int), &w->pad, who))))
        return st;
    if (w->cpu) {
        size_t global1 = ((size_t)nout + l - 1) / l * l;
        return clt__enqueue_kernel(ctx, k, 1, &global1, &l, who);
    }
    size_t global[2] = {((size_t)np + l - 1) / l * l, (size_t)g->co}, local[2] = {l, 1};
    return clt__enqueue_kernel(ctx, k, 2, global, local, who);
}

typedef struct wino_run {
    const clt__conv_problem *p;
    const wino_plan *w;
    cl_mem ws;
    cl_kernel kt, ko;
} wino_run;

/* Every chunk's three stages (rehearsed first: the GEMM of the last, smaller chunk may pick another
 * variant, and no transform may run before every GEMM is known to build). */
static clt_status run_chunks(clt_context *ctx, const void *arg, const char *who)
{
    const wino_run *r = arg;
    const clt__conv_geom *g = &r->p->g;
    clt_status st;
    for (int64_t img0 = 0; img0 < g->n; img0 += r->w->chunk) {
        int64_t cnt = g->n - img0 < r->w->chunk ? g->n - img0 : r->w->chunk, np = cnt * r->w->tpi;
        if ((st = run_transform(ctx, r->p, r->w, r->ws, r->kt, img0, np, img0 == 0, who)) ||
            (st = run_gemm(ctx, g, r->w, r->ws, np, who)) ||
            (st = run_output(ctx, r->p, r->w, r->ws, r->ko, img0, np, who)))
            return st;
    }
    return CLT_SUCCESS;
}

clt_status clt__conv2d_winograd(clt_context *ctx, const clt__conv_problem *p, const char *who)
{
    const clt__conv_geom *g = &p->g;
    clt_status st = clt__conv_winograd_require(ctx, g, who);
    if (st)
        return st;
    wino_plan w;
    memset(&w, 0, sizeof w);
    if ((st = plan_make(ctx, g, &w, who)) != CLT_SUCCESS)
        return st;
    w.local = (size_t)clt__conv_table_for(ctx)->direct_local;
    const char *prog = w.cpu ? "conv2d_winograd_cpu" : "conv2d_winograd";
    cl_kernel kt, ko;
    const char *tname = w.cpu ? "conv2d_winograd_cpu_transform" : "conv2d_winograd_transform";
    const char *oname = w.cpu ? "conv2d_winograd_cpu_output" : "conv2d_winograd_output";
    const char *opts = p->w_flipped ? "-DWINO_FLIP=1" : ""; /* U from the transposed weights */
    if ((st = clt__kernel_get(ctx, prog, opts, tname, &kt)) ||
        (st = clt__kernel_get(ctx, prog, opts, oname, &ko)))
        return st;
    cl_mem ws;
    int fresh;
    st = clt__workspace_get(ctx, WORKSPACE_SLOT, (size_t)w.total * sizeof(float), &ws, &fresh);
    if (st == CLT_ERR_OUT_OF_DEVICE_MEMORY) /* the one-launch kernels need no workspace */
        return clt__fail(ctx, CLT_ERR_UNSUPPORTED, "%s: no room for the Winograd workspace (%llu B)",
                         who, (unsigned long long)(w.total * sizeof(float)));
    if (st)
        return st;
    wino_run r = {p, &w, ws, kt, ko};
    return clt__rehearse_then_run(ctx, run_chunks, &r, who);
}
