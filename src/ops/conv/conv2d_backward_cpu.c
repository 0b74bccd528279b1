/* Conv2D backward built from the forward's fast pieces:
 *   grad-input, stride 1 and padding <= the dilated kernel extent (every device class): dx is the
 *     forward convolution of dy with the weights flipped (channels swapped per group, taps
 *     reversed) and padding dil * (k - 1) - pad per side. Where our forward takes Winograd, its
 *     weight transform reads w that way in place (-DWINO_FLIP); otherwise one small kernel writes
 *     the flipped weights into workspace slot 2 and our forward dispatch (clt__conv2d_ours) runs:
 *     in TF32 math on Hopper the wgmma forward where it takes the flipped shape (before Winograd, as
 *     in the forward), else the implicit kernel on GPUs, im2col + NN GEMM in cache-sized chunks on CPU devices. H200,
 *     n8c64h56o64k3s1: the phase-split grad-input kernel 252 us, flip + Winograd 50.0 us;
 *     n1c64h56o64k3s1: 195.7 us, flip + Winograd 21.8 us (the forward alone 17.9 us: the flip
 *     launch is what the in-place read saves, not yet measured).
 * On CPU devices (POCL), so no GEMM takes a transposed operand it runs slowly:
 *   grad-weight: im2col of a cache-sized chunk of images (workspace slot 1), then per image one
 *     NT GEMM batched over groups, dw_g (+)= dy[n, g] (Co_g x Ho*Wo) * col[n, g]^T.
 * CLT_ERR_UNSUPPORTED where a shape does not fit (the caller uses the general column path). */
#include <stdint.h>

#include "memory/memory.h"
#include "ops/conv/conv2d.h"
#include "ops/conv/conv2d_backward.h"
#include "ops/gemm/gemm.h"
#include "ops/common/launch.h"
#include "program/program.h"

#define HEAD_ELEMS CLT__CONVB_COUNTERS /* slot 2 data starts after the counters (in floats) */
#define COL_SLOT 1

clt_status clt__convb_input_flipped(clt_context *ctx, const clt__conv_geom *g, const clt_tensor *dy,
                                const clt_tensor *w, clt_tensor *dx, const char *who)
{
    int64_t ey = g->dh * (g->kh - 1), ex = g->dw * (g->kw - 1);
    if (g->sh != 1 || g->sw != 1 || g->pt > ey || g->pb > ey || g->pl > ex || g->pr > ex ||
        w->numel > INT32_MAX)
        return CLT_ERR_UNSUPPORTED;
    clt__conv_problem q = {0};
    clt__conv_geom *t = &q.g;
    *t = *g;
    t->ci = g->co, t->h = g->ho, t->w = g->wo, t->co = g->ci, t->ho = g->h, t->wo = g->w;
    t->ci_g = g->co_g, t->co_g = g->ci_g;
    t->pt = ey - g->pt, t->pb = ey - g->pb, t->pl = ex - g->pl, t->pr = ex - g->pr;
    q.x = dy->storage->mem, q.x_off = dy->offset / sizeof(float);
    q.out = dx->storage->mem, q.out_off = dx->offset / sizeof(float);
    q.act = CLT_IDENTITY;
    /* Winograd reads w in place (no flip launch), unless TF32 math puts the flipped forward on wgmma, as the
     * forward itself goes (H100, n8c64h56o64k3s1 forward: wgmma 33.0 us, fp32 Winograd 47.7) */
    if (!clt__conv2d_wgmma_takes(ctx, t) && clt__conv_winograd_chosen(ctx, t)) {
        q.w = w->storage->mem, q.w_off = w->offset / sizeof(float), q.w_flipped = 1;
        clt_status st = clt__conv2d_winograd(ctx, &q, who);
        if (st != CLT_ERR_UNSUPPORTED)
            return st;
        q.w_flipped = 0;
    }
    cl_mem wf;
    clt_status st = clt__convb_workspace(ctx, (size_t)w->numel * sizeof(float), who, &wf);
    if (st != CLT_SUCCESS)
        return st;
    cl_kernel k;
    if ((st = clt__kernel_get(ctx, "conv2d_backward_col", "", "conv_flip_weights", &k)))
        return st;
    cl_int16 G = clt__convb_geom_arg(g);
    cl_ulong2 off = {{w->offset / sizeof(float), HEAD_ELEMS}};
    if ((st = clt__set_arg(ctx, k, 0, sizeof(cl_mem), &w->storage->mem, who)) ||
        (st = clt__set_arg(ctx, k, 1, sizeof(cl_mem), &wf, who)) ||
        (st = clt__set_arg(ctx, k, 2, sizeof G, &G, who)) ||
        (st = clt__set_arg(ctx, k, 3, sizeof off, &off, who)) ||
        (st = clt__convb_launch_items(ctx, k, (uint64_t)(g->co * g->ci_g), who)))
        return st;
    q.w = wf, q.w_off = HEAD_ELEMS;
    return clt__conv2d_ours(ctx, &q, who);
}

clt_status clt__convb_weight_cpu(clt_context *ctx, const clt__conv_geom *g, const clt_tensor *dy,
                                 const clt_tensor *x, clt_tensor *dw, const char *who)
{
    const int64_t per_image = g->ci * g->kh * g->kw * g->ho * g->wo;
    if (per_image < 1 || per_image > (int64_t)1 << 31 || g->ci * g->h * g->w > (int64_t)1 << 31)
        return CLT_ERR_UNSUPPORTED; /* per_image < 1: never divide by it (Ci = 0 is rejected) */
    int64_t chunk = (int64_t)(clt__conv_cpu_chunk_bytes / ((uint64_t)per_image * sizeof(float)));
    chunk = chunk < 1 ? 1 : chunk > g->n ? g->n : chunk;
    cl_mem col;
    int fresh;
    clt_status st = clt__workspace_get(ctx, COL_SLOT, (size_t)(chunk * per_image) * sizeof(float),
                                       &col, &fresh);
    if (st)
        return st;
    clt__conv_problem q = {0};
    q.g = *g, q.x = x->storage->mem, q.x_off = x->offset / sizeof(float);
    for (int64_t img0 = 0; img0 < g->n; img0 += chunk) {
        int64_t cnt = g->n - img0 < chunk ? g->n - img0 : chunk;
        if ((st = clt__conv2d_im2col(ctx, &q, col, img0, cnt, who)))
            return st;
        for (int64_t i = 0; i < cnt; i++)
            if ((st = clt__convb_dw_image(ctx, g, dy, img0 + i, col, (uint64_t)(i * per_image), dw,
                                          0, who)) != CLT_SUCCESS)
                return st;
    }
    return CLT_SUCCESS;
}
