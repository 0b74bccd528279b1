/* clt-tune, GEMM ours vs CLBlast: both timed on square S x S x S and MLP-like 256 x S x S (rows x
 * K x N) problems, S = 64 .. 4096 on GPUs, .. 1024 on CPU devices. The rule written is the
 * (min dim, FLOP) pair, or "never", that minimises the sum over shapes of the chosen
 * implementation's time relative to the faster one: the auto rule's form (gemm_dispatch.h) fitted to
 * the measurements. "never" (and then fewer CLBlast shapes) wins ties within 0.5%. */
#include <stdlib.h>
#include <string.h>

#include "tune_sweeps.h"

#define MAX_SHAPES 32

typedef struct xshape {
    int64_t m, n, k;
    double us_ours, us_clblast; /* <= 0: failed */
} xshape;

static int64_t min3(int64_t a, int64_t b, int64_t c) { return a < b ? (a < c ? a : c) : (b < c ? b : c); }
static double flop_of(const xshape *s) { return 2.0 * (double)s->m * (double)s->n * (double)s->k; }

/* Sum of relative costs under the rule (d, f); d = 0: never CLBlast. */
static double cost(const xshape *sh, int n, int64_t d, double f)
{
    double total = 0;
    for (int i = 0; i < n; i++) {
        int cl = d > 0 && min3(sh[i].m, sh[i].n, sh[i].k) >= d && flop_of(&sh[i]) >= f;
        total += tune_rel_cost(sh[i].us_ours, sh[i].us_clblast, cl);
    }
    return total;
}

static int build_shapes(const tune_env *env, xshape *sh)
{
    static const int64_t gpu_full[] = {64, 128, 256, 512, 1024, 2048, 4096};
    static const int64_t gpu_quick[] = {64, 256, 1024, 2048, 4096};
    static const int64_t cpu_full[] = {64, 128, 256, 512, 1024};
    static const int64_t cpu_quick[] = {64, 128, 256, 512};
    const int64_t *sizes = env->gpu ? (env->quick ? gpu_quick : gpu_full)
                                    : (env->quick ? cpu_quick : cpu_full);
    int ns = env->gpu ? (env->quick ? 5 : 7) : (env->quick ? 4 : 5), n = 0;
    for (int i = 0; i < ns; i++) {
        xshape sq = {sizes[i], sizes[i], sizes[i], 0, 0};
        xshape mlp = {256, sizes[i], sizes[i], 0, 0};
        sh[n++] = sq;
        if (sizes[i] != 256)
            sh[n++] = mlp;
    }
    return n;
}

int tune_gemm_crossover(tune_env *env)
{
    xshape sh[MAX_SHAPES];
    int n = build_shapes(env, sh);
    char saved[16];
    snprintf(saved, sizeof saved, "%s", env->ctx->limits.gemm_impl);
    for (int i = 0; i < n; i++) {
        snprintf(env->ctx->limits.gemm_impl, sizeof env->ctx->limits.gemm_impl, "tiled");
        sh[i].us_ours = tune_time_gemm(env, sh[i].m, sh[i].n, sh[i].k);
        snprintf(env->ctx->limits.gemm_impl, sizeof env->ctx->limits.gemm_impl, "clblast");
        sh[i].us_clblast = tune_time_gemm(env, sh[i].m, sh[i].n, sh[i].k);
        double gf = flop_of(&sh[i]) / 1e3;
        printf("  %5lldx%5lldx%5lld  ours %10.1f us (%7.1f GFLOP/s)  clblast %10.1f us (%7.1f GFLOP/s)"
               "  %s\n",
               (long long)sh[i].m, (long long)sh[i].n, (long long)sh[i].k, sh[i].us_ours,
               sh[i].us_ours > 0 ? gf / sh[i].us_ours : 0.0, sh[i].us_clblast,
               sh[i].us_clblast > 0 ? gf / sh[i].us_clblast : 0.0,
               sh[i].us_ours <= 0 && sh[i].us_clblast <= 0 ? "both failed"
               : sh[i].us_clblast <= 0 || (sh[i].us_ours > 0 && sh[i].us_ours <= sh[i].us_clblast)
                   ? "ours" : "CLBlast");
        fflush(stdout);
    }
    snprintf(env->ctx->limits.gemm_impl, sizeof env->ctx->limits.gemm_impl, "%s", saved);

    int64_t best_d = 0;
    double best_f = 0.0, best_cost = cost(sh, n, 0, 0.0);
    for (int i = 0; i < n; i++) {     /* every measured min dim */
        for (int j = 0; j < n; j++) { /* every measured FLOP count */
            int64_t d = min3(sh[i].m, sh[i].n, sh[i].k);
            double f = flop_of(&sh[j]), c = cost(sh, n, d, f);
            if (c < best_cost * 0.995 || (best_d > 0 && c <= best_cost && (d > best_d || f > best_f))) {
                best_cost = c;
                best_d = d;
                best_f = f;
            }
        }
    }
    clt__gemm_rule r = *clt__gemm_rule_for(env->ctx);
    r.label = "tuning file";
    r.clblast_min_dim = best_d;
    r.clblast_min_flop = best_d > 0 ? best_f : 0.0;
    env->trial->gemm_rule = r;
    env->trial->has_gemm_rule = 1;
    if (best_d > 0)
        printf("  rule: CLBlast when m, n, k >= %lld and 2mnk >= %.3g FLOP (cost %.3f of %d)\n",
               (long long)best_d, best_f, best_cost, n);
    else
        printf("  rule: always ours (cost %.3f of %d)\n", best_cost, n);
    return tune_gemm_entries(env);
}
