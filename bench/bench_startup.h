/* Start-up costs a framework pays once per process: OpenCL driver initialisation, and creating a
 * context plus running its first kernel (the program compiled from source when the disk cache is
 * cold, loaded from it when warm). */
#ifndef BENCH_STARTUP_H
#define BENCH_STARTUP_H

#include "bench_report.h"

#define BENCH_STARTUP_ROWS 3

/* Creates env->ctx (and fills env->device / env->limits) while timing it: "startup/driver_init"
 * (the first OpenCL call), "startup/context_create", "startup/first_kernel" (program build or load,
 * launch, finish; the note says where the program came from). On failure the status is returned
 * and the caller frees env->ctx. */
clt_status bench_startup(const clt_context_options *opts, bench_env *env,
                         bench_result rows[BENCH_STARTUP_ROWS]);

/* r = one measurement of `seconds` named `name` (time only). */
void bench_single_sample(bench_result *r, const char *name, double seconds);

/* "startup/fft_plan" (fft suite, bench_fft.c): the process's first FFT plan (rfft2 64 x 256 x 256) made,
 * run once and finished, what a framework waits for before its first transform; the note says where its
 * programs came from (issue 16: a warm plan, programs from the disk cache, in at most 100 ms on POCL). */
clt_status bench_fft_first_plan(bench_env *env, bench_result *row);

#endif
