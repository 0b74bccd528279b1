/* Conv2D dispatch table and fallback (see conv_dispatch.h).
 *
 * Why these rules (to be replaced by measurements: clt-bench --suite conv --impl tiled / clblast):
 * - The CLBlast path costs an im2col pass that writes Kh*Kw times the input (a 3x3 layer of
 *   n8c64h56: 58 MB written and read back), plus per group one GEMM launch (up to five inside
 *   CLBlast for sizes off its tiles) and one epilogue launch. Ours is ONE launch that gathers the
 *   input from cache. So ours wherever it is tuned: NVIDIA, AMD / gfx902 and CPUs (where CLBlast's
 *   GPU-style kernels measured ~6x slower than CPU-style ones, gemm_dispatch.c).
 * - Unknown GPUs: CLBlast ships tuned GEMM parameters for many of them while our default table is
 *   a guess, so large convolutions with a long K (>= 4 GFLOP, K >= 512) go to CLBlast there. */
#include "ops/conv/conv_dispatch.h"

#include "tune/dispatch_common.h"
#include "tune/tuning_file.h"

#include <stdlib.h>
#include <string.h>

#define GFLOP 1e9

static const clt__conv_rule rules[] = {
    {"gfx902", "gfx902", CLT_VENDOR_OTHER, CLT_DEVICE_OTHER, NULL, 0.0, 0},
    {"cpu", NULL, CLT_VENDOR_OTHER, CLT_DEVICE_CPU, NULL, 0.0, 0},
    {"nvidia", NULL, CLT_VENDOR_NVIDIA, CLT_DEVICE_GPU, NULL, 0.0, 0},
    {"amd", NULL, CLT_VENDOR_AMD, CLT_DEVICE_GPU, NULL, 0.0, 0},
    {"default", NULL, CLT_VENDOR_OTHER, CLT_DEVICE_OTHER, NULL, 4.0 * GFLOP, 512},
};
#define RULE_COUNT (sizeof rules / sizeof rules[0])

const clt__conv_rule *clt__conv_rule_for(const clt_context *ctx)
{
    if (ctx->tuning && ctx->tuning->has_conv_rule)
        return &ctx->tuning->conv_rule;
    return clt__conv_rule_builtin(ctx);
}

const clt__conv_rule *clt__conv_rule_builtin(const clt_context *ctx)
{
    for (size_t i = 0; i + 1 < RULE_COUNT; i++) {
        const clt__conv_rule *r = &rules[i];
        if (clt__rule_matches(ctx, r->profile, r->vendor, r->type, r->name_contains))
            return r;
    }
    return &rules[RULE_COUNT - 1];
}

const char *clt__conv_impl_name(clt__conv_impl impl)
{
    return impl == CLT_CONV_IMPL_CLBLAST ? "clblast" : "tiled";
}

clt__conv_impl clt__conv_choose(const clt_context *ctx, const clt__conv_problem *p)
{
    if (strcmp(ctx->limits.conv_impl, "tiled") == 0)
        return CLT_CONV_IMPL_TILED;
    if (strcmp(ctx->limits.conv_impl, "clblast") == 0)
        return CLT_CONV_IMPL_CLBLAST;
    const clt__conv_rule *r = clt__conv_rule_for(ctx);
    const clt__conv_geom *g = &p->g;
    if (r->clblast_min_flop <= 0.0 || clt__conv_is_pointwise(g) || g->ci_g == 1 ||
        g->ci_g * g->kh * g->kw < r->clblast_min_k)
        return CLT_CONV_IMPL_TILED;
    return clt__conv_flop(g) >= r->clblast_min_flop ? CLT_CONV_IMPL_CLBLAST : CLT_CONV_IMPL_TILED;
}

static clt_status run_ours(clt_context *ctx, const void *p, const char *who)
{
    return clt__conv2d_ours(ctx, p, who);
}

static clt_status run_clblast(clt_context *ctx, const void *p, const char *who)
{
    return clt__conv2d_clblast(ctx, p, who);
}

/* A refusal leaves at most workspace writes behind; the other path rewrites all of out. */
clt_status clt__conv_dispatch(clt_context *ctx, const clt__conv_problem *p, const char *who)
{
    const clt__impl ours = {"tiled", run_ours}, clblast = {"clblast", run_clblast};
    int first_ours = clt__conv_choose(ctx, p) == CLT_CONV_IMPL_TILED;
    return clt__run_with_fallback(ctx, "Conv2D", p, who, first_ours ? ours : clblast,
                                  first_ours ? clblast : ours);
}
