/* Conv2D grad-weight as ONE split-K GEMM over the whole batch (GPU classes): per group g,
 *   dW_g (Cog x Cig*Kh*Kw) = dyT_g (Cog x K) * col_g^T,  K = N * Ho * Wo, k = n * Ho * Wo + p,
 * in two launches instead of one GEMM per image (each launch costs ~5.5 us of host time on NVIDIA,
 * and per-image products are too small to fill 132 SMs):
 *   1. conv_dw_columns (cl_kernels/conv/conv2d_backward_col.cl): col[(c, ky, kx)][k], rows padded to
 *      a multiple of 4 (vector loads); on CPU devices, in the same launch, dyT[co][k] = dy[n][co][p]
 *      (GPU classes read dy in place: A in k segments of Ho*Wo, one per image, which our split
 *      tiled kernel walks; the stem's copy was 25.7 MB written and read again);
 *   2. clt__gemm_tiled (ours, not CLBlast) with A = dyT, B = col (tb = CLT_TRANS: rows contiguous
 *      along k), C = dW, beta 0, batch = groups; it splits K itself when the tile grid is small.
 *      On 132 CUs: M=64 N=576 K=25088 -> 64x64 tiles, 9 tiles x 59 pieces of 432 (531 groups);
 *      M=64 N=147 K=100352 -> 64x32 (least padding for a reduction-shaped product), 5 tiles x
 *      105 pieces of 960 (525 groups).
 * A chunk of one image needs no dy copy (A = dy), and a 1x1 / stride 1 / no padding one no
 * columns either (B = x). The buffers live in workspace slot 1 (conv forward's columns: the only
 * other work of this call is the GEMM, whose split-K partials are in slot 4; the CPU grad-weight
 * keeps its columns there too, so a training step holds one column buffer, not two), capped at
 * clt__convb_col_cap_bytes: above it the batch runs in chunks of images, beta 1 after the first.
 *
 * Choice (conv2d_backward_ours.c): 3x3 / stride 1 layers at the Winograd thresholds try
 * conv2d_backward_winograd.c first; else the NVIDIA class takes this when Cog >= 8 (else the direct
 * kernel), the product has at least AUTO_MIN_MACS multiply-adds and one image's columns fit the
 * cap. Measured on the H200 (us, this path vs the tiled kernel): n8c64h56o64k3s1 146.7 vs 204.7,
 * n8c3h224o64k7s2 208.9 vs 289.3 (cuDNN: 72.0 and 117.2, so the GEMM at M = 64, ~13 TFLOP/s with
 * 64x64 split tiles, is what to improve next). n1c64h56o64k3s1 (1.2e8 MACs, tiled 47.4 us vs cuDNN
 * 53.2) stays tiled. Other classes stay tiled: on a gfx902 APU (~30 GB/s shared DDR4) writing and reading
 * 58 MB of columns costs more than the tiled kernel's arithmetic; on POCL under the gfx902
 * profile the GPU GEMM's NT form ran 5x slower than the tiled kernel (1.3 s vs 0.26 s).
 * CLT_CONVB_WEIGHT_VARIANT=tiled|colgemm|winograd|stem (read per call, any device class) forces one for
 * A/B runs (winograd: conv2d_backward_winograd.c, where it applies); unset or anything else =
 * automatic. No room for the workspace, or a GEMM refusal, falls
 * back to the tiled kernel. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "memory/memory.h"
#include "ops/conv/conv2d_backward.h"
#include "ops/gemm/gemm.h"
#include "ops/common/launch.h"
#include "program/program.h"

#define COL_SLOT 1
#define AUTO_MIN_MACS ((double)(1 << 28))
#define PREP_LOCAL 256
#define MAX_K ((int64_t)INT_MAX - 4096) /* our GEMM's k limit, and the kernel's int k */

uint64_t clt__convb_col_cap_bytes = (uint64_t)256 << 20;

int clt__convb_weight_variant(void)
{
    const char *e = getenv("CLT_CONVB_WEIGHT_VARIANT");
    if (e && !strcmp(e, "tiled"))
        return CLT__CONVB_W_TILED;
    if (e && !strcmp(e, "colgemm"))
        return CLT__CONVB_W_COLGEMM;
    if (e && !strcmp(e, "winograd"))
        return CLT__CONVB_W_WINOGRAD;
    if (e && !strcmp(e, "stem"))
        return CLT__CONVB_W_STEM;
    return CLT__CONVB_W_AUTO;
}

static int64_t round4(int64_t v)
{
    return (v + 3) / 4 * 4;
}

/* Whether the GEMM reads dy in place for several images (A in k segments of Ho*Wo, one per image:
 * our split tiled kernel on GPU classes) instead of a dy copy laid out along k. */
static int dy_in_place(const clt_context *ctx, const clt__conv_geom *g)
{
    int64_t hw = g->ho * g->wo;
    return !clt__cpu_style(ctx) && (int64_t)g->co * hw < INT_MAX;
}

/* Workspace bytes for a chunk of cnt images: col rows, plus a dy copy when cnt > 1 and copy_dy. */
static uint64_t chunk_bytes(const clt__conv_geom *g, int64_t cnt, int copy_dy)
{
    uint64_t rows = (uint64_t)(g->ci * g->kh * g->kw) + (cnt > 1 && copy_dy ? (uint64_t)g->co : 0);
    return rows * (uint64_t)round4(cnt * g->ho * g->wo) * sizeof(float);
}

/* Images per chunk: as many as the cap allows, at least one. */
static int64_t chunk_images(const clt__conv_geom *g, int copy_dy)
{
    int64_t hw = g->ho * g->wo, per = (int64_t)chunk_bytes(g, 2, copy_dy) / 2, cnt = g->n;
    if (per > 0 && (uint64_t)cnt > clt__convb_col_cap_bytes / (uint64_t)per)
        cnt = (int64_t)(clt__convb_col_cap_bytes / (uint64_t)per);
    if (cnt > MAX_K / hw)
        cnt = MAX_K / hw;
    while (cnt > 1 && chunk_bytes(g, cnt, copy_dy) > clt__convb_col_cap_bytes)
        cnt--; /* the row padding */
    return cnt < 1 ? 1 : cnt;
}

int clt__convb_weight_gemm_suits(const clt__conv_geom *g)
{
    double macs =
        (double)g->co * (double)(g->ci_g * g->kh * g->kw) * (double)g->n * (double)(g->ho * g->wo);
    return g->co_g >= 8 && macs >= AUTO_MIN_MACS && chunk_bytes(g, 1, 0) <= clt__convb_col_cap_bytes;
}

/* 1x1, stride 1, no padding: one image's columns are x itself. */
static int identity_columns(const clt__conv_geom *g)
{
    return g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 && g->pt == 0 && g->pb == 0 &&
           g->pl == 0 && g->pr == 0;
}

/* Launch 1 for images [img0, img0 + cnt): col rows always, dyT rows when cnt > 1 and copy_dy. */
static clt_status prepare(clt_context *ctx, const clt__conv_geom *g, const clt_tensor *dy,
                          const clt_tensor *x, cl_mem ws, int64_t img0, int64_t cnt, int64_t ldk,
                          int copy_dy, const char *who)
{
    cl_kernel k;
    clt_status st = clt__kernel_get(ctx, "conv2d_backward_col", "", "conv_dw_columns", &k);
    if (st != CLT_SUCCESS)
        return st;
    int64_t hw = g->ho * g->wo, rows = g->ci * g->kh * g->kw;
    cl_int16 G = clt__convb_geom_arg(g);
    G.s[0] = (cl_int)cnt;
    cl_ulong4 off = {{x->offset / sizeof(float) + (uint64_t)(img0 * g->ci * g->h * g->w),
                      dy->offset / sizeof(float) + (uint64_t)(img0 * g->co * hw),
                      (cl_ulong)(rows * ldk), (cl_ulong)ldk}};
    if ((st = clt__set_arg(ctx, k, 0, sizeof(cl_mem), &x->storage->mem, who)) ||
        (st = clt__set_arg(ctx, k, 1, sizeof(cl_mem), &dy->storage->mem, who)) ||
        (st = clt__set_arg(ctx, k, 2, sizeof(cl_mem), &ws, who)) ||
        (st = clt__set_arg(ctx, k, 3, sizeof G, &G, who)) ||
        (st = clt__set_arg(ctx, k, 4, sizeof off, &off, who)))
        return st;
    size_t local = clt__fit_local(ctx, k, PREP_LOCAL);
    size_t global[3] = {((size_t)hw + local - 1) / local * local,
                        (size_t)(g->ci + (cnt > 1 && copy_dy ? g->co : 0)), (size_t)cnt},
           locals[3] = {local, 1, 1};
    return clt__enqueue_kernel(ctx, k, 3, global, locals, who);
}

/* Launch 2: dW (+)= A * B^T over the chunk, batched over groups. */
static clt_status product(clt_context *ctx, const clt__conv_geom *g, const clt_tensor *dy,
                          const clt_tensor *x, clt_tensor *dw, cl_mem ws, int64_t img0, int64_t cnt,
                          int64_t ldk, int copy_dy, const char *who)
{
    int64_t hw = g->ho * g->wo, cols = g->ci_g * g->kh * g->kw, rows = g->ci * g->kh * g->kw;
    clt__gemm_problem p = {0};
    p.ta = CLT_NO_TRANS, p.tb = CLT_TRANS;
    p.m = g->co_g, p.n = cols, p.k = cnt * hw;
    p.alpha = 1.0f, p.beta = img0 ? 1.0f : 0.0f;
    if (cnt == 1 || !copy_dy) { /* dy[n] is already Co x Ho*Wo: image n is k segment n - img0 */
        p.a = dy->storage->mem,
        p.a_off = dy->offset / sizeof(float) + (uint64_t)(img0 * g->co * hw);
        p.lda = hw;
        if (cnt > 1)
            p.a_kseg = hw, p.a_kseg_stride = g->co * hw;
    } else {
        p.a = ws, p.a_off = (uint64_t)(rows * ldk), p.lda = ldk;
    }
    p.a_stride = g->co_g * p.lda;
    if (cnt == 1 && identity_columns(g)) { /* x[img0] is already Ci x H*W */
        p.b = x->storage->mem, p.b_off = x->offset / sizeof(float) + (uint64_t)(img0 * g->ci * hw);
        p.ldb = hw;
    } else {
        p.b = ws, p.b_off = 0, p.ldb = ldk;
    }
    p.b_stride = cols * p.ldb;
    clt__convb_dw_target(&p, g, dw);
    return clt__gemm_tiled(ctx, &p, who);
}

/* Every chunk's two launches (rehearsed first: a GEMM refusal, which sends the op to another path,
 * or a failing build is found before the first column copy ran). */
typedef struct wgemm_run {
    const clt__conv_geom *g;
    const clt_tensor *dy, *x;
    clt_tensor *dw;
    cl_mem ws;
    int64_t chunk;
    int copy_dy;
} wgemm_run;

static clt_status run_chunks(clt_context *ctx, const void *arg, const char *who)
{
    const wgemm_run *r = arg;
    const clt__conv_geom *g = r->g;
    const int64_t hw = g->ho * g->wo;
    for (int64_t img0 = 0; img0 < g->n; img0 += r->chunk) {
        int64_t cnt = g->n - img0 < r->chunk ? g->n - img0 : r->chunk, ldk = round4(cnt * hw);
        clt_status st;
        if (!(cnt == 1 && identity_columns(g)) &&
            (st = prepare(ctx, g, r->dy, r->x, r->ws, img0, cnt, ldk, r->copy_dy, who)) != CLT_SUCCESS)
            return st;
        if ((st = product(ctx, g, r->dy, r->x, r->dw, r->ws, img0, cnt, ldk, r->copy_dy, who)) !=
            CLT_SUCCESS)
            return st;
    }
    return CLT_SUCCESS;
}

clt_status clt__convb_weight_gemm(clt_context *ctx, const clt__conv_geom *g, const clt_tensor *dy,
                                  const clt_tensor *x, clt_tensor *dw, const char *who)
{
    int64_t hw = g->ho * g->wo;
    if (hw > MAX_K)
        return CLT_ERR_UNSUPPORTED;
    int copy_dy = !dy_in_place(ctx, g);
    int64_t chunk = chunk_images(g, copy_dy);
    cl_mem ws = NULL;
    if (!(chunk == 1 && identity_columns(g))) { /* else no launch 1 at all */
        int fresh;
        clt_status st = clt__workspace_get(ctx, COL_SLOT, (size_t)chunk_bytes(g, chunk, copy_dy),
                                           &ws, &fresh);
        if (st == CLT_ERR_OUT_OF_DEVICE_MEMORY)
            return CLT_ERR_UNSUPPORTED; /* the tiled kernel needs far less */
        if (st != CLT_SUCCESS)
            return st;
    }
    wgemm_run r = {g, dy, x, dw, ws, chunk, copy_dy};
    return clt__rehearse_then_run(ctx, run_chunks, &r, who);
}
