/* clt-tune's sweeps: each measures one decision on the current device and writes its section of the
 * tuning file (src/tune/tuning_file.h). Timing is bench/bench_timing.c's method (device-resident,
 * warm-up, median of samples). clt-tune links the static library, so sweeps may use internal
 * clt__ helpers and install trial parameters on the context (ctx->tuning). */
#ifndef CLT_TUNE_SWEEPS_H
#define CLT_TUNE_SWEEPS_H

#include <stdio.h>

#include "bench_cases.h"
#include "bench_timing.h"
#include "runtime/runtime.h"
#include "ops/conv/conv_dispatch.h"
#include "ops/gemm/gemm_dispatch.h"
#include "ops/gemm/gemm_params.h"
#include "tune/tuning_file.h"

typedef struct tune_env {
    clt_context *ctx;
    clt_device_info dev;
    int quick;                   /* --quick: fewer sizes and candidates */
    int gpu;                     /* sizes up to 4096 (else up to 1024: CPU devices) */
    bench_timing_config timing;
    clt__tuning *trial;          /* == ctx->tuning: sweeps install what they found here, so later
                                    sweeps measure with it */
    clt__tuning_entries *out;    /* the file's entries: each sweep sets its section's keys */
    uint64_t seed;
    int measurements;
} tune_env;

typedef struct tune_sweep {
    const char *name; /* "gemm-params" */
    const char *what; /* one line for --help and the progress output */
    /* Returns 0, or -1 after printing why to stderr. */
    int (*run)(tune_env *env);
} tune_sweep;

/* All sweeps, in the order they run (tune_sweeps.c). */
extern const tune_sweep tune_sweeps[];
extern const int tune_sweep_count;

/* tune_gemm.c */
int tune_gemm_params(tune_env *env);
int tune_gemm_crossover(tune_env *env);
/* Set env->out's gemm.* keys from the rule and table now in force on env->ctx (what this device can
 * run only). */
int tune_gemm_entries(tune_env *env);

/* tune_small.c */
int tune_gemm_small_crossover(tune_env *env);

/* tune_conv.c */
int tune_conv_crossover(tune_env *env);

/* tune_fft.c */
int tune_fft_crossover(tune_env *env);

/* The time of the chosen one of two measured implementations relative to the faster one (>= 1);
 * a time <= 0 means it failed (never chosen at no cost); 0 when neither ran (says nothing). The
 * crossover sweeps fit their rules by minimising the sum of this over shapes (tune_sweeps.c). */
double tune_rel_cost(double us_first, double us_second, int second);

/* Median microseconds of bench case c (its setup, the bench's timing, its teardown) on env's
 * context as configured now; -1 on failure (message printed, naming `label`). tune_sweeps.c */
double tune_time_case(tune_env *env, const bench_case *c, const char *label);

/* Helpers (tune_gemm.c). Median microseconds of one C = A * B (m x k times k x n, row-major, fresh
 * random inputs) on env's context as configured now; -1 on failure (message printed). */
double tune_time_gemm(tune_env *env, int64_t m, int64_t n, int64_t k);

#endif
