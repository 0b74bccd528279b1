/* The dispatch decisions in force on a context, as text for clt-info and logs (src/README.md,
 * "Dispatch and tuning": the choice is visible). */
#include <stdarg.h>
#include <stdio.h>

#include "ops/conv/conv_dispatch.h"
#include "ops/conv/conv_params.h"
#include "ops/fft/fft_plan.h"
#include "ops/gemm/gemm_dispatch.h"
#include "ops/gemm/gemm_params.h"
#include "ops/mlp/mlp_describe.h"
#include "tune/tuning_file.h"

typedef struct text_out {
    char *buf;
    size_t cap, used;
} text_out;

static void put(text_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text_out *o, const char *fmt, ...)
{
    if (o->used + 1 >= o->cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o->buf + o->used, o->cap - o->used, fmt, ap);
    va_end(ap);
    if (n > 0)
        o->used += (size_t)n < o->cap - o->used ? (size_t)n : o->cap - o->used - 1;
}

/* Conv2D: the setting, the auto rule and our kernels' table (conv_dispatch.c, conv_params.c). */
static void describe_conv(const clt_context *ctx, text_out *o)
{
    const clt__conv_rule *r = clt__conv_rule_for(ctx);
    put(o, "conv implementation: %s\n", ctx->limits.conv_impl);
    if (r->clblast_min_flop > 0)
        put(o, "conv auto rule: %s: im2col + CLBlast when >= %.3g FLOP and Ci_g*Kh*Kw >= %lld (not "
            "1x1 or depthwise), else ours\n", r->label, r->clblast_min_flop,
            (long long)r->clblast_min_k);
    else
        put(o, "conv auto rule: %s: always ours\n", r->label);
    const clt__conv_table *t = clt__conv_table_for(ctx);
    put(o, "conv kernel table: %s (%s; 1x1 through GEMM, one input channel per group direct)\n",
        t->name, t->prefer_cpu ? "im2col in cache-sized chunks + our CPU GEMM" : "implicit GEMM");
    for (int i = 0; i < t->n_tiled; i++) {
        const clt__conv_tiled_cfg *c = &t->tiled[i];
        put(o, "  implicit %dx%d tile, K step %d, %dx%d items (%dx%d per work item), %zu B local\n",
            c->mwg, c->nwg, c->kwg, c->mdimc, c->ndimc, c->mwg / c->mdimc, c->nwg / c->ndimc,
            clt__conv_tiled_local_bytes(c));
    }
    put(o, "  cpu-style direct (fallback): %d channels x 8 or 16 pixels per item, %d items per "
           "group; depthwise: %d\n",
        t->cpu_rpi, t->cpu_local, t->direct_local);
    if (t->wino_min_ci > 0)
        put(o, "  winograd F(4x4,3x3) for 3x3 stride 1: Ci >= %d, Co >= %d, N*Ho*Wo >= %lld\n",
            t->wino_min_ci, t->wino_min_co, (long long)t->wino_min_pixels);
    else
        put(o, "  winograd F(4x4,3x3): only when forced (CLT_CONV_VARIANT=winograd)\n");
}

clt_status clt_context_describe_dispatch(const clt_context *ctx, char *buf, size_t size)
{
    CLT_PUBLIC_CALL();
    if (!ctx || !buf || size == 0)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT,
                         "clt_context_describe_dispatch: %s", !ctx ? "ctx is NULL"
                                                              : !buf ? "buf is NULL" : "size is 0");
    text_out o = {buf, size, 0};
    buf[0] = '\0';
    const clt__gemm_rule *r = clt__gemm_rule_for(ctx);
    const clt__tuning *tu = ctx->tuning;
    const char *row = clt__gemm_rule_builtin(ctx)->label;
    if (tu && tu->source == CLT_TUNING_FILE)
        put(&o, "tuning: tuning file %s (written %s)\n", tu->path, tu->date);
    else if (tu && tu->source == CLT_TUNING_IGNORED)
        put(&o, "tuning: tuning file %s ignored: %s; built-in table (%s row)\n", tu->path, tu->why,
            row);
    else
        put(&o, "tuning: built-in table (%s row); %s\n", row, tu ? tu->why : "no tuning file");
    put(&o, "gemm implementation: %s\n", ctx->limits.gemm_impl);
    int cores = clt__device_has_tensor_cores(ctx);
    put(&o, "tensor cores: %s\n", clt__device_nv_sm(ctx) == 90
                                       ? "yes (NVIDIA compute capability 9.0: TF32 products of 2048^3 and more "
                                         "on wgmma (sm_90a), the rest on mma.sync; TF32 Conv2D forward on wgmma "
                                         "where Ci is near a multiple of 32, 1x1 as GEMMs)"
                                   : cores ? "yes (NVIDIA compute capability >= 8.0: mma.sync GEMMs; Conv2D "
                                             "forward only as 1x1 GEMMs, or with CLT_CONV_MMA=1)"
                                           : "no (TF32 / 3xTF32 modes and f16 / bf16 inputs run the "
                                             "exact fp32 kernels)");
    put(&o, "math mode: %s%s\n", clt_math_mode_name(ctx->math),
        ctx->math == CLT_MATH_FP32 ? "" : cores ? " (tensor cores where the kernels take the shape)"
                                                : " (no tensor cores: runs as fp32)");
    if (r->clblast_min_dim > 0)
        put(&o, "gemm auto rule: %s: CLBlast when m, n, k >= %lld and 2mnk >= %.3g FLOP, else ours\n",
            r->label, (long long)r->clblast_min_dim, r->clblast_min_flop);
    else
        put(&o, "gemm auto rule: %s: always ours\n", r->label);
    const clt__gemm_table *t = clt__gemm_table_for(ctx);
    put(&o, "gemm kernel table: %s (%s kernel for large shapes)\n", t->name,
        t->prefer_cpu ? "CPU-style" : "tiled");
    for (int i = 0; i < t->n_tiled; i++) {
        const clt__gemm_tiled_cfg *c = &t->tiled[i];
        int txw = clt__gemm_tiled_warp_cols(t, c);
        put(&o, "  tiled %dx%d tile, K step %d, %dx%d items (%d per work item), float%d, %s, %zu B local, "
                "%d items along n per warp row\n",
            c->mwg, c->nwg, c->kwg, c->mdimc, c->ndimc, (c->mwg / c->mdimc) * (c->nwg / c->ndimc),
            c->vw, c->db ? "double-buffered" : "single-buffered", clt__gemm_tiled_local_bytes(c),
            txw ? txw : c->ndimc);
    }
    put(&o, "  cpu-style: %d rows x %d columns per item, %d items per group\n", t->cpu.rpi, t->cpu.nv,
        t->cpu.local);
    if (t->skinny > 0)
        put(&o, "  small kernel when m*n*k <= %.3g or min(m, n) <= %d; GEMV when m or n is 1\n",
            t->small_volume, t->skinny);
    else
        put(&o, "  small kernel when m*n*k <= %.3g; GEMV when m or n is 1\n", t->small_volume);
    describe_conv(ctx, &o);
    char mlp_line[768];
    clt__mlp_describe(ctx, mlp_line, sizeof mlp_line);
    put(&o, "%s", mlp_line);
    char fft_line[768];
    clt__fft_describe(ctx, fft_line, sizeof fft_line);
    put(&o, "%s", fft_line);
    return CLT_SUCCESS;
}
