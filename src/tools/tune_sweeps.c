/* The sweep registry of clt-tune. Kernel parameters first, so the crossover sweeps measure our
 * kernels with the parameters they will run with.
 * Adding an op: write int tune_<op>_<what>(tune_env *) that times its implementations (e.g. conv
 * tiled vs CLBlast over a size sweep, as tune_gemm_crossover does), sets "<op>.<key>" entries in
 * env->out, and register a checker for that section in src/tune/tuning_load.c; then add a row here. */
#include "tune_sweeps.h"

#include <math.h>
#include <stdio.h>

const tune_sweep tune_sweeps[] = {
    {"gemm-params", "GEMM kernel parameters (large, small, GEMV paths)", tune_gemm_params},
    {"gemm-small", "GEMM small/skinny path vs the large path (small_volume, skinny)",
     tune_gemm_small_crossover},
    {"gemm-crossover", "GEMM ours vs CLBlast crossover (FLOPs, min dim)", tune_gemm_crossover},
    {"conv-crossover", "Conv2D ours vs CLBlast (im2col + GEMM) crossover (FLOPs, K)",
     tune_conv_crossover},
    {"fft-crossover", "FFT backends per 1-D length (ours, VkFFT, clFFT), batched transforms",
     tune_fft_crossover},
};
const int tune_sweep_count = (int)(sizeof tune_sweeps / sizeof tune_sweeps[0]);

double tune_rel_cost(double us_first, double us_second, int second)
{
    double a = us_first > 0 ? us_first : INFINITY, b = us_second > 0 ? us_second : INFINITY;
    double best = a < b ? a : b;
    if (!isfinite(best))
        return 0.0;
    return (second ? b : a) / best;
}

double tune_time_case(tune_env *env, const bench_case *c, const char *label)
{
    bench_env be = {env->ctx, env->dev, env->ctx->limits, env->seed, 0};
    bench_run r = {0};
    bench_timing t = {0};
    clt_status st = c->setup(&be, c, &r);
    env->seed = be.next_seed;
    if (st == CLT_SUCCESS) {
        st = bench_measure(env->ctx, &r, &env->timing, &t);
        if (r.teardown)
            r.teardown(r.state);
    }
    env->measurements++;
    if (st != CLT_SUCCESS) {
        fprintf(stderr, "clt-tune: %s: %s: %s\n", label, clt_status_string(st),
                clt_last_error(env->ctx));
        return -1.0;
    }
    return t.us_median;
}
