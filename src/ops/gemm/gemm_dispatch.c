/* GEMM dispatch table and fallback (see gemm_dispatch.h).
 *
 * Why these thresholds (to be replaced by measurements, see the bench `gemm` suite with --impl):
 * - Our kernels do the whole call, epilogue included, in ONE launch. CLBlast needs one launch for
 *   small problems (its direct kernel) but up to five for larger ones whose sizes are not multiples
 *   of its tiles (pad/transpose A and B, the GEMM, un-pad C), plus one more for our epilogue. On
 *   NVIDIA each launch costs ~5.5 us of host time, so below a few GFLOP ours wins on launches alone.
 * - For large problems the kernel itself decides. On the H200 ours wins at every size measured
 *   (clt-bench --impl tiled vs clblast, 2026-11-29: 2048^3 433 vs 703 us, 4096^3 3409 vs 4610,
 *   8192^3 26987 vs 32992; clt-tune --quick: "always ours"), so NVIDIA never picks CLBlast.
 *   AMD and other GPUs: CLBlast ships tuned parameters for many of them and our tables there are
 *   unmeasured, so CLBlast takes large products (all dims >= 1024, >= 2 GFLOP).
 * - CPU devices (POCL): CLBlast's kernels are GPU-style (local-memory tiles), the style that
 *   measured ~6x slower than a CPU-style kernel on POCL; and it compiles for seconds per routine.
 *   Never chosen there by auto.
 * The gfx902 profile matches by profile name, so tests and benches on any device see the choices
 * gfx902 would make. */
#include "ops/gemm/gemm_dispatch.h"
#include "tune/dispatch_common.h"
#include "tune/tuning_file.h"

#include <stdlib.h>
#include <string.h>

#define GFLOP 1e9

static const clt__gemm_rule rules[] = {
    {"gfx902", "gfx902", CLT_VENDOR_OTHER, CLT_DEVICE_OTHER, NULL, 1024, 2.0 * GFLOP},
    {"cpu", NULL, CLT_VENDOR_OTHER, CLT_DEVICE_CPU, NULL, 0, 0.0},
    {"nvidia", NULL, CLT_VENDOR_NVIDIA, CLT_DEVICE_GPU, NULL, 0, 0.0},
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
    for (size_t i = 0; i + 1 < RULE_COUNT; i++) {
        const clt__gemm_rule *r = &rules[i];
        if (clt__rule_matches(ctx, r->profile, r->vendor, r->type, r->name_contains))
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

static clt_status run_tiled(clt_context *ctx, const void *p, const char *who)
{
    return clt__gemm_tiled(ctx, p, who);
}

static clt_status run_clblast(clt_context *ctx, const void *p, const char *who)
{
    return clt__gemm_clblast(ctx, p, who);
}

/* The profiler's name for the fp32 kernels running a problem that asked for tensor cores. */
static const char *fallback_note(const clt_context *ctx, const clt__gemm_problem *p)
{
    int cores = clt__device_has_tensor_cores(ctx);
    switch (p->a_dtype) {
    case CLT_F16:
        return cores ? "tiled (f16 in, fp32 math: tensor cores declined)"
                     : "tiled (f16 in, fp32 math: no tensor cores)";
    case CLT_BF16:
        return cores ? "tiled (bf16 in, fp32 math: tensor cores declined)"
                     : "tiled (bf16 in, fp32 math: no tensor cores)";
    default:
        break;
    }
    if (p->math == CLT_MATH_TF32)
        return cores ? "tiled (tf32 asked, fp32 math: tensor cores declined)"
                     : "tiled (tf32 asked, fp32 math: no tensor cores)";
    return cores ? "tiled (3xtf32 asked, fp32 math: tensor cores declined)"
                 : "tiled (3xtf32 asked, fp32 math: no tensor cores)";
}

static clt_status dispatch_fp32(clt_context *ctx, const clt__gemm_problem *p, const char *who);

/* 16-bit operands, or TF32 / 3xTF32 math: the tensor-core kernels first; when they decline, the
 * fp32 path: for 16-bit operands our tiled kernel converting on load (CLBlast takes no 16-bit
 * operands), for f32 ones the usual fp32 choice (exact fp32: more accurate than asked). */
static clt_status dispatch_fast(clt_context *ctx, const clt__gemm_problem *p, const char *who)
{
    clt_status st = clt__gemm_wgmma(ctx, p, who);
    if (st != CLT_ERR_UNSUPPORTED)
        return st;
    st = clt__gemm_mma(ctx, p, who);
    if (st != CLT_ERR_UNSUPPORTED)
        return st;
    if (clt__log_enabled())
        clt__log("%s: tensor cores declined (%s), running the fp32 kernels\n", who,
                 clt_last_error(ctx));
    const char *saved = ctx->impl_note;
    ctx->impl_note = ctx->prof ? fallback_note(ctx, p) : NULL;
    st = clt__gemm_is_16bit(p) ? clt__gemm_tiled(ctx, p, who) : dispatch_fp32(ctx, p, who);
    ctx->impl_note = saved;
    return st;
}

clt_status clt__gemm_dispatch(clt_context *ctx, const clt__gemm_problem *p, const char *who)
{
    if (clt__gemm_is_16bit(p) || p->math == CLT_MATH_TF32 || p->math == CLT_MATH_FP32_3XTF32)
        return dispatch_fast(ctx, p, who);
    return dispatch_fp32(ctx, p, who);
}

/* Neither implementation enqueues anything before it can say "unsupported". */
static clt_status dispatch_fp32(clt_context *ctx, const clt__gemm_problem *p, const char *who)
{
    const clt__impl tiled = {"tiled", run_tiled}, clblast = {"clblast", run_clblast};
    int first_tiled = clt__gemm_choose(ctx, p) == CLT_GEMM_IMPL_TILED;
    return clt__run_with_fallback(ctx, "GEMM", p, who, first_tiled ? tiled : clblast,
                                  first_tiled ? clblast : tiled);
}
