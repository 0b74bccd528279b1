/* GEMM dispatch table and fallback (see gemm_dispatch.h).
 *
 * Why these thresholds (to be replaced by measurements, see the bench `gemm` suite with --impl):
 * - Our kernels do the whole call, epilogue included, in ONE launch. CLBlast needs one launch for
 *   small problems (its direct kernel) but up to five for larger ones whose sizes are not multiples
 *   of its tiles (pad/transpose A and B, the GEMM, un-pad C), plus one more for our epilogue. On
 *   NVIDIA each launch costs ~5.5 us of host time, so below a few GFLOP ours wins on launches alone.
 * - For large problems the kernel itself decides. On the H200 CLBlast's SGEMM reaches ~29.7
 *   TFLOP/s at 4096 and a GPU-style tiled prototype ~28: CLBlast keeps the big square ones
 *   (all dims >= 2048, >= 17 GFLOP, where its extra launches are < 1% of the time) until our
 *   kernels measure faster there. AMD and other GPUs: CLBlast ships tuned parameters for many of
 *   them, so the same rule at 1024.
 * - CPU devices (POCL): CLBlast's kernels are GPU-style (local-memory tiles), the style that
 *   measured ~6x slower than a CPU-style kernel on POCL; and it compiles for seconds per routine.
 *   Never chosen there by auto.
 * The gfx902 profile matches by profile name, so tests and benches on any device see the choices
 * gfx902 would make. */
#include "tune/gemm_dispatch.h"
#include "tune/tuning_file.h"

#include <stdlib.h>
#include <string.h>

#define GFLOP 1e9

static const clt__gemm_rule rules[] = {
    {"gfx902", "gfx902", CLT_VENDOR_OTHER, CLT_DEVICE_OTHER, NULL, 1024, 2.0 * GFLOP},
    {"cpu", NULL, CLT_VENDOR_OTHER, CLT_DEVICE_CPU, NULL, 0, 0.0},
    {"nvidia", NULL, CLT_VENDOR_NVIDIA, CLT_DEVICE_GPU, NULL, 2048, 17.0 * GFLOP},
    {"amd", NULL, CLT_VENDOR_AMD, CLT_DEVICE_GPU, NULL, 1024, 2.0 * GFLOP},
    {"default", NULL, CLT_VENDOR_OTHER, CLT_DEVICE_OTHER, NULL, 1024, 2.0 * GFLOP},
};
#define RULE_COUNT (sizeof rules / sizeof rules[0])

const clt__gemm_rule *clt__gemm_rule_for(const clt_context *ctx)
{
    if (ctx->tuning && ctx->tuning->has_gemm_rule)
        return &ctx->tuning->gemm_rule;
    return clt__gemm_rule_builtin(ctx);
}

const clt__gemm_rule *clt__gemm_rule_builtin(const clt_context *ctx)
{
    const clt_device_info *info = &ctx->dev->entry->info;
    for (size_t i = 0; i + 1 < RULE_COUNT; i++) {
        const clt__gemm_rule *r = &rules[i];
        if (r->profile && strcmp(r->profile, ctx->limits.profile) != 0)
            continue;
        if (!r->profile && strcmp(ctx->limits.profile, "native") != 0)
            continue; /* another profile: only its own row or the default */
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

const char *clt__gemm_impl_name(clt__gemm_impl impl)
{
    return impl == CLT_GEMM_IMPL_CLBLAST ? "clblast" : "tiled";
}

clt__gemm_impl clt__gemm_choose(const clt_context *ctx, const clt__gemm_problem *p)
{
    if (strcmp(ctx->limits.gemm_impl, "tiled") == 0)
        return CLT_GEMM_IMPL_TILED;
    if (strcmp(ctx->limits.gemm_impl, "clblast") == 0)
        return CLT_GEMM_IMPL_CLBLAST;
    const clt__gemm_rule *r = clt__gemm_rule_for(ctx);
    if (r->clblast_min_dim <= 0 || p->m < r->clblast_min_dim || p->n < r->clblast_min_dim ||
        p->k < r->clblast_min_dim)
        return CLT_GEMM_IMPL_TILED;
    double flop = 2.0 * (double)p->m * (double)p->n * (double)p->k * (double)p->batch;
    return flop >= r->clblast_min_flop ? CLT_GEMM_IMPL_CLBLAST : CLT_GEMM_IMPL_TILED;
}

static clt_status run(clt__gemm_impl impl, clt_context *ctx, const clt__gemm_problem *p,
                      const char *who)
{
    return impl == CLT_GEMM_IMPL_CLBLAST ? clt__gemm_clblast(ctx, p, who)
                                         : clt__gemm_tiled(ctx, p, who);
}

clt_status clt__gemm_dispatch(clt_context *ctx, const clt__gemm_problem *p, const char *who)
{
    clt__gemm_impl first = clt__gemm_choose(ctx, p);
    clt_status st = run(first, ctx, p, who);
    if (st != CLT_ERR_UNSUPPORTED)
        return st;
    /* Neither implementation enqueues anything before it can say "unsupported". */
    char *why = strdup(clt_last_error(ctx));
    clt__gemm_impl second = first == CLT_GEMM_IMPL_TILED ? CLT_GEMM_IMPL_CLBLAST : CLT_GEMM_IMPL_TILED;
    if (clt__log_enabled())
        clt__log("%s: %s refused (%s), trying %s\n", who, clt__gemm_impl_name(first),
                 why ? why : "?", clt__gemm_impl_name(second));
    st = run(second, ctx, p, who);
    if (st == CLT_ERR_UNSUPPORTED) {
        char *why2 = strdup(clt_last_error(ctx));
        st = clt__fail(ctx, CLT_ERR_UNSUPPORTED, "%s: no GEMM implementation takes this problem: %s: %s; %s: %s",
                       who, clt__gemm_impl_name(first), why ? why : "?",
                       clt__gemm_impl_name(second), why2 ? why2 : "?");
        free(why2);
    }
    free(why);
    return st;
}
