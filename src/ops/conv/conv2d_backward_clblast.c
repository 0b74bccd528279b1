/* Conv2D backward as column buffer + GEMM: the CLBlast path (clt__gemm_clblast) and, on CPU devices,
 * ours (clt__gemm_tiled picks the CPU GEMM kernel there, far faster on POCL than any direct conv
 * loop), around our column kernels (cl_kernels/conv/conv2d_backward_col.cl); the column buffer lives in
 * workspace slot 2.
 *   grad-input:  per image, batched over groups: col[n, g] = W_g^T (Cig*Kh*Kw x Cog) * dy[n, g]
 *                (Cog x Ho*Wo); then one col2im over the batch. N GEMM launches + 1.
 *   grad-weight: one im2col over the batch; per image, batched over groups:
 *                dw_g (+)= dy[n, g] (Cog x Ho*Wo) * col[n, g]^T. 1 + N GEMM launches. */
#include "ops/conv/conv2d_backward.h"
#include "ops/gemm/gemm.h"
#include "ops/common/launch.h"
#include "program/program.h"
#include "ops/conv/conv_params.h"

#define COL_FAMILY "conv2d_backward_col"
#define HEAD_ELEMS CLT__CONVB_COUNTERS /* col data starts after the counters (in floats) */

static clt_status col_kernel(clt_context *ctx, const char *name, const clt__conv_geom *g, cl_mem src,
                             uint64_t src_off, cl_mem dst, uint64_t dst_off, uint64_t items,
                             const char *who)
{
    cl_kernel k;
    clt_status st = clt__kernel_get(ctx, COL_FAMILY, "", name, &k);
    if (st != CLT_SUCCESS)
        return st;
    cl_int16 G = clt__convb_geom_arg(g);
    cl_ulong2 off = {{src_off, dst_off}};
    if ((st = clt__set_arg(ctx, k, 0, sizeof(cl_mem), &src, who)) ||
        (st = clt__set_arg(ctx, k, 1, sizeof(cl_mem), &dst, who)) ||
        (st = clt__set_arg(ctx, k, 2, sizeof G, &G, who)) ||
        (st = clt__set_arg(ctx, k, 3, sizeof off, &off, who)))
        return st;
    return clt__convb_launch_items(ctx, k, items, who);
}

/* Column elements of the whole batch, and the per-(image, group) matrix size. */
static uint64_t col_elems(const clt__conv_geom *g)
{
    return (uint64_t)(g->n * g->ci * g->kh * g->kw) * (uint64_t)(g->ho * g->wo);
}

/* The arguments of both column paths' stages (rehearsed first: no im2col, col2im or GEMM runs before
 * every stage has been built and has accepted its problem). */
typedef struct colgemm_back {
    const clt__conv_geom *g;
    const clt_tensor *dy, *in; /* in: w (input gradient) or x (weight gradient) */
    clt_tensor *out;           /* dx or dw */
    cl_mem col;
    int clblast;
} colgemm_back;

/* dx: per image, col = W^T dy (GEMM per group), then col2im adds the columns into dx. */
static clt_status input_stages(clt_context *ctx, const void *arg, const char *who)
{
    const colgemm_back *r = arg;
    const clt__conv_geom *g = r->g;
    const clt_tensor *dy = r->dy, *w = r->in;
    clt_tensor *dx = r->out;
    cl_mem col = r->col;
    int64_t kk = g->kh * g->kw, hw = g->ho * g->wo, rows = g->ci_g * kk;
    clt_status st;
    for (int64_t n = 0; n < g->n; n++) {
        clt__gemm_problem p = {0};
        p.ta = CLT_TRANS, p.tb = CLT_NO_TRANS;
        p.m = rows, p.n = hw, p.k = g->co_g;
        p.alpha = 1.0f, p.beta = 0.0f;
        p.a = w->storage->mem, p.a_off = w->offset / sizeof(float), p.lda = rows;
        p.a_stride = g->co_g * rows;
        p.b = dy->storage->mem, p.b_off = dy->offset / sizeof(float) + (uint64_t)(n * g->co * hw);
        p.ldb = hw, p.b_stride = g->co_g * hw;
        p.c = col, p.c_off = HEAD_ELEMS + (uint64_t)(n * g->ci * kk * hw), p.ldc = hw;
        p.c_stride = rows * hw;
        p.batch = g->groups;
        if (p.batch == 1)
            p.a_stride = p.b_stride = p.c_stride = 0;
        p.bias_mode = CLT_BIAS_NONE, p.act = CLT_IDENTITY;
        if ((st = (r->clblast ? clt__gemm_clblast : clt__gemm_tiled)(ctx, &p, who)) != CLT_SUCCESS)
            return st;
    }
    if (!r->clblast && clt__conv_table_for(ctx)->prefer_cpu) /* ours on a CPU device */
        return col_kernel(ctx, "conv_col2im_cpu", g, col, HEAD_ELEMS, dx->storage->mem,
                          dx->offset / sizeof(float), (uint64_t)(g->n * g->ci), who);
    return col_kernel(ctx, "conv_col2im", g, col, HEAD_ELEMS, dx->storage->mem,
                      dx->offset / sizeof(float), (uint64_t)dx->numel, who);
}

/* dw: im2col of x, then per image dw (+)= dy col^T. */
static clt_status weight_stages(clt_context *ctx, const void *arg, const char *who)
{
    const colgemm_back *r = arg;
    const clt__conv_geom *g = r->g;
    const clt_tensor *x = r->in;
    clt_status st;
    if ((st = col_kernel(ctx, "conv_im2col", g, x->storage->mem, x->offset / sizeof(float), r->col,
                         HEAD_ELEMS, col_elems(g), who)))
        return st;
    const uint64_t per_image = (uint64_t)(g->ci * g->kh * g->kw * g->ho * g->wo);
    for (int64_t n = 0; n < g->n; n++)
        if ((st = clt__convb_dw_image(ctx, g, r->dy, n, r->col, HEAD_ELEMS + (uint64_t)n * per_image,
                                      r->out, r->clblast, who)) != CLT_SUCCESS)
            return st;
    return CLT_SUCCESS;
}

/* Either gradient's column path: the column workspace, then its stages rehearsed and run. */
static clt_status run_colgemm(clt_context *ctx, clt__stages_fn stages, const clt__conv_geom *g,
                              const clt_tensor *dy, const clt_tensor *in, clt_tensor *out, int clblast,
                              const char *who)
{
    cl_mem col;
    clt_status st = clt__convb_workspace(ctx, (size_t)col_elems(g) * sizeof(float), who, &col);
    if (st != CLT_SUCCESS)
        return st;
    colgemm_back r = {g, dy, in, out, col, clblast};
    return clt__rehearse_then_run(ctx, stages, &r, who);
}

clt_status clt__convb_input_colgemm(clt_context *ctx, const clt__conv_geom *g, const clt_tensor *dy,
                                    const clt_tensor *w, clt_tensor *dx, int clblast, const char *who)
{
    return run_colgemm(ctx, input_stages, g, dy, w, dx, clblast, who);
}

clt_status clt__convb_weight_colgemm(clt_context *ctx, const clt__conv_geom *g, const clt_tensor *dy,
                                     const clt_tensor *x, clt_tensor *dw, int clblast, const char *who)
{
    return run_colgemm(ctx, weight_stages, g, dy, x, dw, clblast, who);
}

clt_status clt__convb_input_clblast(clt_context *ctx, const clt__conv_geom *g, const clt_tensor *dy,
                                    const clt_tensor *w, clt_tensor *dx, const char *who)
{
    return clt__convb_input_colgemm(ctx, g, dy, w, dx, 1, who);
}

clt_status clt__convb_weight_clblast(clt_context *ctx, const clt__conv_geom *g, const clt_tensor *dy,
                                     const clt_tensor *x, clt_tensor *dw, const char *who)
{
    return clt__convb_weight_colgemm(ctx, g, dy, x, dw, 1, who);
}
