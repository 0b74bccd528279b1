/* The measuring method of bench/README.md, in one place: warm-up, R chosen so one sample lasts at least
 * the target time, at least 5 samples, median / min / max of wall time per op. */
#ifndef BENCH_TIMING_H
#define BENCH_TIMING_H

#include "bench_cases.h"

typedef struct bench_timing_config {
    double min_sample_s; /* a sample (R ops + one clt_finish) lasts at least this long: 0.020 */
    int samples;         /* at least 5 */
} bench_timing_config;

typedef struct bench_timing {
    double us_median, us_min, us_max; /* wall time per op */
    int samples;
    long reps; /* R */
    int has_split; /* the profiler was on: the split below is set */
    double kernel_us, transfer_us, host_us, idle_us; /* per op, all samples (bench_split.h) */
} bench_timing;

/* Seconds on the monotonic clock. */
double bench_now_s(void);

/* Measure r->run on ctx (with the profiler's split when it is on). Returns the first failing status of a run or of clt_finish (the message is
 * in clt_last_error(ctx)). */
clt_status bench_measure(clt_context *ctx, const bench_run *r, const bench_timing_config *cfg,
                         bench_timing *out);

#endif
