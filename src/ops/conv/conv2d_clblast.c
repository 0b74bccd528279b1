/* Conv2D forward as im2col + GEMM: the CLBlast path and, on CPU devices, ours (our CPU GEMM,
 * gemm_cpu.cl, runs this shape at GEMM speed where no direct loop nest gets close on POCL). Our
 * im2col kernel (conv2d_direct.cl; CLBlastSim2col takes symmetric padding and one image per call)
 * writes a chunk of images into workspace slot 1, then per group one strided-batched GEMM over the
 * chunk's images, W_g shared (stride 0):
 *   out[n][g*Co_g ..] (Co_g x Ho*Wo) = W_g (Co_g x Ci_g*Kh*Kw) * col[n][group g rows] + bias
 * with the bias/activation epilogue (fused in ours; one extra launch in CLBlast's). The chunk is
 * as many images as fit the chunk bytes (at least one): large for CLBlast (few calls), about the
 * last-level cache for ours on a CPU, so the GEMM reads the columns im2col just wrote from cache. */
#include <string.h>

#include "memory/memory.h"
#include "ops/conv/conv2d.h"
#include "ops/gemm/gemm.h"
#include "ops/common/launch.h"
#include "program/program.h"
#include "ops/conv/conv_params.h"

#define WORKSPACE_SLOT 1
#define CHUNK_BYTES ((uint64_t)256 << 20)

/* Column bytes per chunk on CPU devices: about the share of the last-level cache a chunk may
 * take (tests set it tiny to run several chunks on small shapes). */
uint64_t clt__conv_cpu_chunk_bytes = (uint64_t)8 << 20;

clt_status clt__conv2d_im2col(clt_context *ctx, const clt__conv_problem *p, cl_mem col,
                              int64_t img0, int64_t nimg, const char *who)
{
    const clt__conv_geom *g = &p->g;
    const int cpu = clt__conv_table_for(ctx)->prefer_cpu; /* not under the gfx902 profile */
    cl_kernel k;
    clt_status st = clt__kernel_get(ctx, "conv2d_direct", "",
                                    cpu ? "conv2d_im2col_cpu" : "conv2d_im2col", &k);
    if (st)
        return st;
    cl_ulong4 offs = {{p->x_off, 0, (cl_ulong)img0, 0}};
    cl_int8 ga = {{(cl_int)g->ci, (cl_int)g->h, (cl_int)g->w, (cl_int)g->co, (cl_int)g->ho,
                   (cl_int)g->wo, (cl_int)g->kh, (cl_int)g->kw}};
    cl_int8 gb = {{(cl_int)g->sh, (cl_int)g->sw, (cl_int)g->pt, (cl_int)g->pl, (cl_int)g->dh,
                   (cl_int)g->dw, (cl_int)g->ci_g, (cl_int)g->co_g}};
    if ((st = clt__set_arg(ctx, k, 0, sizeof(cl_mem), &p->x, who)) ||
        (st = clt__set_arg(ctx, k, 1, sizeof(cl_mem), &col, who)) ||
        (st = clt__set_arg(ctx, k, 2, sizeof offs, &offs, who)) ||
        (st = clt__set_arg(ctx, k, 3, sizeof ga, &ga, who)) ||
        (st = clt__set_arg(ctx, k, 4, sizeof gb, &gb, who)))
        return st;
    size_t l = clt__fit_local_halving(ctx, k, (size_t)clt__conv_table_for(ctx)->direct_local);
    size_t hw = (size_t)(g->ho * g->wo), rows = (size_t)(g->ci * g->kh * g->kw);
    if (cpu) { /* one item per (column row, image) */
        if (l > 16)
            l = 16;
        size_t gl[2] = {(rows + l - 1) / l * l, (size_t)nimg}, lo[2] = {l, 1};
        return clt__enqueue_kernel(ctx, k, 2, gl, lo, who);
    }
    size_t global[3] = {(hw + l - 1) / l * l, (size_t)(g->ci * g->kh * g->kw), (size_t)nimg};
    size_t local[3] = {l, 1, 1};
    return clt__enqueue_kernel(ctx, k, 3, global, local, who);
}

typedef struct colgemm_run {
    const clt__conv_problem *p;
    int clblast;
    cl_mem col;
    int64_t chunk, per_image;
} colgemm_run;

static clt_status colgemm_chunks(clt_context *ctx, const void *arg, const char *who);

clt_status clt__conv2d_colgemm(clt_context *ctx, const clt__conv_problem *p, int clblast,
                               const char *who)
{
    const clt__conv_geom *g = &p->g;
    if (!clt__epilogue_act_name(p->act))
        return clt__fail(ctx, CLT_ERR_UNSUPPORTED, "%s: activation %d cannot be fused", who,
                         (int)p->act);
    const int64_t hw = g->ho * g->wo;
    const int64_t per_image = g->ci * g->kh * g->kw * hw; /* col elements of one image */
    if (per_image < 1) /* geometry checks reject Ci = 0; never divide by it below */
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: an image has no im2col elements", who);
    if (per_image > (int64_t)1 << 31 || g->ci * g->h * g->w > (int64_t)1 << 31)
        return clt__fail(ctx, CLT_ERR_UNSUPPORTED, "%s: im2col of one image exceeds 2^31 elements",
                         who);
    /* ours on a CPU: cache-sized chunks; CLBlast, or ours on a GPU (small grids, one chunk): few calls */
    uint64_t bytes = clblast || ctx->dev->entry->info.type != CLT_DEVICE_CPU ? CHUNK_BYTES
                                                                                : clt__conv_cpu_chunk_bytes;
    int64_t chunk = (int64_t)(bytes / ((uint64_t)per_image * sizeof(float)));
    if (chunk < 1)
        chunk = 1;
    if (chunk > g->n)
        chunk = g->n;
    cl_mem col;
    int fresh;
    clt_status st = clt__workspace_get(ctx, WORKSPACE_SLOT,
                                       (size_t)(chunk * per_image) * sizeof(float), &col, &fresh);
    if (st)
        return st;
    colgemm_run r = {p, clblast, col, chunk, per_image};
    return clt__rehearse_then_run(ctx, colgemm_chunks, &r, who);
}

/* Every chunk's im2col and GEMMs (rehearsed first: no im2col may run before every GEMM builds). */
static clt_status colgemm_chunks(clt_context *ctx, const void *arg, const char *who)
{
    const colgemm_run *r = arg;
    const clt__conv_problem *p = r->p;
    const clt__conv_geom *g = &p->g;
    const int64_t hw = g->ho * g->wo, kg = g->ci_g * g->kh * g->kw;
    const int64_t chunk = r->chunk, per_image = r->per_image;
    const int clblast = r->clblast;
    cl_mem col = r->col;
    clt_status st;
    for (int64_t img0 = 0; img0 < g->n; img0 += chunk) {
        int64_t cnt = g->n - img0 < chunk ? g->n - img0 : chunk;
        if ((st = clt__conv2d_im2col(ctx, p, col, img0, cnt, who)))
            return st;
        for (int64_t gi = 0; gi < g->groups; gi++) {
            clt__gemm_problem q;
            memset(&q, 0, sizeof q);
            q.ta = q.tb = CLT_NO_TRANS;
            q.m = g->co_g, q.n = hw, q.k = kg;
            q.alpha = 1.0f, q.beta = 0.0f;
            q.a = p->w, q.a_off = p->w_off + (uint64_t)(gi * g->co_g * kg), q.lda = kg;
            q.b = col, q.b_off = (uint64_t)(gi * kg * hw), q.ldb = hw;
            q.c = p->out, q.ldc = hw;
            q.c_off = p->out_off + (uint64_t)((img0 * g->co + gi * g->co_g) * hw);
            q.batch = cnt;
            q.b_stride = cnt > 1 ? per_image : 0;
            q.c_stride = cnt > 1 ? g->co * hw : 0;
            q.bias = p->bias, q.bias_off = p->bias_off + (uint64_t)(gi * g->co_g);
            q.bias_mode = p->bias ? CLT_BIAS_PER_ROW : CLT_BIAS_NONE;
            q.act = p->act, q.act_alpha = p->act_alpha;
            if ((st = (clblast ? clt__gemm_clblast : clt__gemm_tiled)(ctx, &q, who)))
                return st;
        }
    }
    return CLT_SUCCESS;
}

clt_status clt__conv2d_clblast(clt_context *ctx, const clt__conv_problem *p, const char *who)
{
    return clt__conv2d_colgemm(ctx, p, 1, who);
}
