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
#include "tune/conv_dispatch.h"

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
    const clt_device_info *info = &ctx->dev->entry->info;
    for (size_t i = 0; i + 1 < RULE_COUNT; i++) {
        const clt__conv_rule *r = &rules[i];
        if (r->profile && strcmp(r->profile, ctx->limits.profile) != 0)
            continue;
        if (!r->profile && strcmp(ctx->limits.profile, "native") != 0)
            continue;
        if (r->vendor != CLT_VENDOR_OTHER && r->vendor != info->vendor)
            continue;
        if (r->type != CLT_DEVICE_OTHER && r->type != info->type)
            continue;
        if (r->name_contains && !clt__contains_nocase(info->device_name, r->name_contains))
            continue;
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

static clt_status run(clt__conv_impl impl, clt_context *ctx, const clt__conv_problem *p,
                      const char *who)
{
    return impl == CLT_CONV_IMPL_CLBLAST ? clt__conv2d_clblast(ctx, p, who)
                                         : clt__conv2d_ours(ctx, p, who);
}

clt_status clt__conv_dispatch(clt_context *ctx, const clt__conv_problem *p, const char *who)
{
    clt__conv_impl first = clt__conv_choose(ctx, p);
    clt_status st = run(first, ctx, p, who);
    if (st != CLT_ERR_UNSUPPORTED)
        return st;
    /* A refusal leaves at most workspace writes behind; the other path rewrites all of out. */
    char *why = strdup(clt_last_error(ctx));
    clt__conv_impl second = first == CLT_CONV_IMPL_TILED ? CLT_CONV_IMPL_CLBLAST : CLT_CONV_IMPL_TILED;
    if (clt__log_enabled())
        clt__log("%s: %s refused (%s), trying %s\n", who, clt__conv_impl_name(first),
                 why ? why : "?", clt__conv_impl_name(second));
    st = run(second, ctx, p, who);
    if (st == CLT_ERR_UNSUPPORTED) {
        char *why2 = strdup(clt_last_error(ctx));
        st = clt__fail(ctx, CLT_ERR_UNSUPPORTED,
                       "%s: no Conv2D implementation takes this problem: %s: %s; %s: %s", who,
                       clt__conv_impl_name(first), why ? why : "?", clt__conv_impl_name(second),
                       why2 ? why2 : "?");
        free(why2);
    }
    free(why);
    return st;
}
