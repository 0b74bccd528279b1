/* clt-tune, Conv2D ours vs CLBlast (im2col + CLBlast GEMM): both timed on a set of layers (ResNet-like
 * 3x3, 7x7 stride 2 and wide-K shapes; smaller ones on CPU devices). The rule written is the
 * (FLOP, K) pair, or "never", that minimises the sum over layers of the chosen implementation's time
 * relative to the faster one: the auto rule's form (conv_dispatch.h) fitted to the measurements.
 * "never" wins ties within 0.5%. 1x1 and depthwise layers are always ours (a GEMM / a direct
 * kernel), so they are not swept. */
#include <string.h>

#include "tune_sweeps.h"

typedef struct cshape {
    int64_t n, c, h, o, k, s, pad;
    double us_ours, us_clblast; /* <= 0: failed */
} cshape;

static int64_t k_of(const cshape *s) { return s->c * s->k * s->k; }

static double flop_of(const cshape *s)
{
    int64_t ho = (s->h + 2 * s->pad - s->k) / s->s + 1;
    return 2.0 * (double)s->n * (double)s->o * (double)(ho * ho) * (double)k_of(s);
}

/* Median microseconds of one conv with bias on env's context as configured now (the bench's own
 * conv case, bench_conv.c); -1 on failure. */
static double time_conv(tune_env *env, const cshape *c)
{
    const bench_case bc = {"conv2d", bench_setup_conv2d, {c->n, c->c, c->h, c->h, c->o, c->k, c->s, c->pad},
                           0};
    char label[96];
    snprintf(label, sizeof label, "conv n%lldc%lldh%lldo%lldk%llds%lld", (long long)c->n,
             (long long)c->c, (long long)c->h, (long long)c->o, (long long)c->k, (long long)c->s);
    return tune_time_case(env, &bc, label);
}

/* Sum of relative costs under the rule (f, k); f = 0: never CLBlast. */
static double cost(const cshape *sh, int n, double f, int64_t k)
{
    double total = 0;
    for (int i = 0; i < n; i++)
        total += tune_rel_cost(sh[i].us_ours, sh[i].us_clblast,
                               f > 0 && flop_of(&sh[i]) >= f && k_of(&sh[i]) >= k);
    return total;
}

int tune_conv_crossover(tune_env *env)
{
    static const cshape gpu[] = {
        {1, 16, 64, 32, 3, 1, 1, 0, 0},  {1, 64, 56, 64, 3, 1, 1, 0, 0},  {8, 64, 56, 64, 3, 1, 1, 0, 0},
        {8, 3, 224, 64, 7, 2, 3, 0, 0},  {32, 128, 28, 128, 3, 1, 1, 0, 0}, {8, 256, 14, 256, 3, 1, 1, 0, 0},
    };
    static const cshape cpu[] = {
        {1, 16, 32, 32, 3, 1, 1, 0, 0}, {1, 64, 28, 64, 3, 1, 1, 0, 0}, {1, 3, 112, 32, 7, 2, 3, 0, 0},
        {2, 128, 14, 128, 3, 1, 1, 0, 0},
    };
    cshape sh[8];
    int n = env->gpu ? (int)(sizeof gpu / sizeof gpu[0]) : (int)(sizeof cpu / sizeof cpu[0]);
    if (env->quick && n > 4)
        n = 4;
    memcpy(sh, env->gpu ? gpu : cpu, (size_t)n * sizeof sh[0]);
    char saved[16];
    snprintf(saved, sizeof saved, "%s", env->ctx->limits.conv_impl);
    for (int i = 0; i < n; i++) {
        snprintf(env->ctx->limits.conv_impl, sizeof env->ctx->limits.conv_impl, "tiled");
        sh[i].us_ours = time_conv(env, &sh[i]);
        snprintf(env->ctx->limits.conv_impl, sizeof env->ctx->limits.conv_impl, "clblast");
        sh[i].us_clblast = time_conv(env, &sh[i]);
        double gf = flop_of(&sh[i]) / 1e3;
        printf("  n%lldc%lldh%lldo%lldk%llds%lld  ours %10.1f us (%7.1f GFLOP/s)  clblast %10.1f us "
               "(%7.1f GFLOP/s)\n",
               (long long)sh[i].n, (long long)sh[i].c, (long long)sh[i].h, (long long)sh[i].o,
               (long long)sh[i].k, (long long)sh[i].s, sh[i].us_ours,
               sh[i].us_ours > 0 ? gf / sh[i].us_ours : 0.0, sh[i].us_clblast,
               sh[i].us_clblast > 0 ? gf / sh[i].us_clblast : 0.0);
        fflush(stdout);
    }
    snprintf(env->ctx->limits.conv_impl, sizeof env->ctx->limits.conv_impl, "%s", saved);

    double best_f = 0.0, best_cost = cost(sh, n, 0.0, 0);
    int64_t best_k = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double f = flop_of(&sh[i]), c = cost(sh, n, f, k_of(&sh[j]));
            if (c < best_cost * 0.995) {
                best_cost = c;
                best_f = f;
                best_k = k_of(&sh[j]);
            }
        }
    clt__conv_rule r = *clt__conv_rule_for(env->ctx);
    r.label = "tuning file";
    r.clblast_min_flop = best_f;
    r.clblast_min_k = best_k;
    env->trial->conv_rule = r;
    env->trial->has_conv_rule = 1;
    if (best_f > 0)
        printf("  rule: CLBlast when FLOPs >= %.3g and K >= %lld (cost %.3f of %d)\n", best_f,
               (long long)best_k, best_cost, n);
    else
        printf("  rule: always ours (cost %.3f of %d)\n", best_cost, n);
    return clt__conv_tuning_entries(&r, env->out) == 0 ? 0 : -1;
}
