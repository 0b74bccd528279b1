/* Timing: device-resident, R ops enqueued back to back, one clt_finish, figure = wall / R. */
#include "bench_timing.h"
#include "bench_split.h"

#include <math.h>
#include <stdlib.h>
#include <time.h>

#define BENCH_MAX_REPS 10000000L

double bench_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One sample: R ops, then wait once. Wall seconds in *secs. */
static clt_status one_sample(clt_context *ctx, const bench_run *r, long reps, double *secs) {
    double t0 = bench_now_s();
    for (long i = 0; i < reps; i++) {
        clt_status st = r->run(r->state);
        if (st != CLT_SUCCESS)
            return st;
    }
    clt_status st = clt_finish(ctx);
    *secs = bench_now_s() - t0;
    return st;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* R for the next calibration round: aim 25% past the target from the per-op estimate, but grow at
 * least 2x and at most 100x per round so one noisy round cannot overshoot by much. */
static long next_reps(long reps, double secs, double target) {
    double want = secs > 0 ? ceil(target * 1.25 / (secs / (double)reps)) : (double)reps * 100.0;
    if (want < (double)reps * 2.0)
        want = (double)reps * 2.0;
    if (want > (double)reps * 100.0)
        want = (double)reps * 100.0;
    return want > (double)BENCH_MAX_REPS ? BENCH_MAX_REPS : (long)want;
}

clt_status bench_measure(clt_context *ctx, const bench_run *r, const bench_timing_config *cfg,
                         bench_timing *out) {
    double secs = 0.0;
    /* Warm-up: program builds, pool first-touch and lazy staging buffers happen here. */
    clt_status st = one_sample(ctx, r, 1, &secs);
    if (st != CLT_SUCCESS)
        return st;

    long reps = 1;
    for (;;) {
        if ((st = one_sample(ctx, r, reps, &secs)) != CLT_SUCCESS)
            return st;
        if (secs >= cfg->min_sample_s || reps >= BENCH_MAX_REPS)
            break;
        reps = next_reps(reps, secs, cfg->min_sample_s);
    }

    int n = cfg->samples < 5 ? 5 : cfg->samples;
    bench_split_snap before = {0}, after = {0};
    int split = bench_split_enabled(ctx);
    if (split && (st = bench_split_snapshot(ctx, &before)) != CLT_SUCCESS)
        return st;
    double *us = malloc((size_t)n * sizeof *us);
    if (!us)
        return CLT_ERR_OUT_OF_HOST_MEMORY;
    for (int i = 0; i < n; i++) {
        if ((st = one_sample(ctx, r, reps, &secs)) != CLT_SUCCESS) {
            free(us);
            return st;
        }
        us[i] = secs * 1e6 / (double)reps;
    }
    if (split) {
        if ((st = bench_split_snapshot(ctx, &after)) != CLT_SUCCESS) {
            free(us);
            return st;
        }
        double ops = (double)n * (double)reps * 1e3; /* ns -> us per op */
        out->has_split = 1;
        out->kernel_us = (after.kernel_ns - before.kernel_ns) / ops;
        out->transfer_us = (after.transfer_ns - before.transfer_ns) / ops;
        out->host_us = (after.host_ns - before.host_ns) / ops;
        out->idle_us = (after.idle_ns - before.idle_ns) / ops;
    }
    qsort(us, (size_t)n, sizeof *us, cmp_double);
    out->us_min = us[0];
    out->us_max = us[n - 1];
    out->us_median = (n % 2) ? us[n / 2] : 0.5 * (us[n / 2 - 1] + us[n / 2]);
    out->samples = n;
    out->reps = reps;
    free(us);
    return CLT_SUCCESS;
}
