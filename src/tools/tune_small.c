/* clt-tune, where GEMM's small/skinny path (gemm_small: one item per output) stops paying: both it and
 * the large path (gemm_tiled on GPUs, gemm_cpu on CPU devices) are timed on cubes S^3 and on skinny
 * m x S x S products, and the rule "small when m*n*k <= small_volume or min(m, n) <= skinny" is fitted
 * to the measurements: the (small_volume, skinny) pair among the measured values (or 0) that
 * minimises the sum over shapes of the chosen path's time relative to the faster one. Ties keep the
 * smaller thresholds. */
#include <math.h>
#include <stdlib.h>

#include "tune_sweeps.h"

#define MAX_SHAPES 16

typedef struct sshape {
    int64_t m, n, k;
    double us_small, us_big;
} sshape;

static double cost(const sshape *sh, int n, double volume, int64_t skinny)
{
    double total = 0;
    for (int i = 0; i < n; i++) {
        double v = (double)sh[i].m * (double)sh[i].n * (double)sh[i].k;
        int64_t mn = sh[i].m < sh[i].n ? sh[i].m : sh[i].n;
        total += tune_rel_cost(sh[i].us_big, sh[i].us_small, v <= volume || mn <= skinny);
    }
    return total;
}

int tune_gemm_small_crossover(tune_env *env)
{
    static const int64_t cubes[] = {8, 16, 24, 32, 48, 64, 96, 128};
    static const int64_t thin[] = {2, 4, 8, 16, 32};
    const int64_t wide = env->gpu ? 1024 : 256;
    sshape sh[MAX_SHAPES];
    int n = 0;
    for (size_t i = 0; i < sizeof cubes / sizeof cubes[0]; i++)
        if (!env->quick || i % 2 == 0 || cubes[i] == 128)
            sh[n++] = (sshape){cubes[i], cubes[i], cubes[i], 0, 0};
    for (size_t i = 0; i < sizeof thin / sizeof thin[0]; i++)
        sh[n++] = (sshape){thin[i], wide, wide, 0, 0};
    const char *big = env->trial->has_gemm_table && env->trial->gemm_table.prefer_cpu ? "cpu"
                      : clt__gemm_table_for(env->ctx)->prefer_cpu               ? "cpu"
                                                                                 : "tiled";
    for (int i = 0; i < n; i++) {
        setenv("CLT_GEMM_VARIANT", "small", 1);
        sh[i].us_small = tune_time_gemm(env, sh[i].m, sh[i].n, sh[i].k);
        setenv("CLT_GEMM_VARIANT", big, 1);
        sh[i].us_big = tune_time_gemm(env, sh[i].m, sh[i].n, sh[i].k);
        printf("  %5lldx%5lldx%5lld  small %9.1f us  %s %9.1f us  %s\n", (long long)sh[i].m,
               (long long)sh[i].n, (long long)sh[i].k, sh[i].us_small, big, sh[i].us_big,
               tune_rel_cost(sh[i].us_big, sh[i].us_small, 1) <= 1.0 ? "small" : big);
        fflush(stdout);
    }
    unsetenv("CLT_GEMM_VARIANT");

    double best_v = 0, best_cost = INFINITY;
    int64_t best_d = 0;
    for (int i = -1; i < n; i++) {     /* small_volume: 0 or a measured volume */
        double v = i < 0 ? 0.0 : (double)sh[i].m * (double)sh[i].n * (double)sh[i].k;
        for (int j = -1; j < n; j++) { /* skinny: 0 or a measured min(m, n) */
            int64_t d = j < 0 ? 0 : (sh[j].m < sh[j].n ? sh[j].m : sh[j].n);
            double c = cost(sh, n, v, d);
            if (c < best_cost * 0.995 ||
                (c <= best_cost * 1.005 && (v < best_v || (v == best_v && d < best_d)))) {
                if (c < best_cost)
                    best_cost = c;
                best_v = v;
                best_d = d;
            }
        }
    }
    clt__gemm_table t = *clt__gemm_table_for(env->ctx);
    t.small_volume = best_v;
    t.skinny = (int)best_d;
    env->trial->gemm_table = t;
    env->trial->has_gemm_table = 1;
    printf("  rule: small path when m*n*k <= %.0f or min(m, n) <= %lld (cost %.3f of %d)\n", best_v,
           (long long)best_d, best_cost, n);
    return tune_gemm_entries(env);
}
