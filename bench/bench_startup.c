#include <stdio.h>
#include <string.h>

#include "bench_startup.h"

void bench_single_sample(bench_result *r, const char *name, double seconds)
{
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", name);
    r->outcome = BENCH_OK;
    r->unit = BENCH_UNIT_NONE;
    r->timing.us_median = r->timing.us_min = r->timing.us_max = seconds * 1e6;
    r->timing.samples = 1;
    r->timing.reps = 1;
}

clt_status bench_startup(const clt_context_options *opts, bench_env *env, bench_result rows[BENCH_STARTUP_ROWS])
{
    env->ctx = NULL;
    double t0 = bench_now_s();
    int count = 0;
    clt_status st = clt_device_count(&count); /* the first OpenCL call loads and starts the drivers */
    double t1 = bench_now_s();
    if (st != CLT_SUCCESS)
        return st;
    bench_single_sample(&rows[0], "startup/driver_init", t1 - t0);

    clt_tensor *first = NULL;
    int64_t one = 1;
    double t2 = bench_now_s();
    st = clt_context_create(opts, &env->ctx);
    double t3 = bench_now_s();
    if (st == CLT_SUCCESS)
        st = clt_tensor_create(env->ctx, CLT_F32, 1, &one, &first);
    if (st == CLT_SUCCESS)
        st = clt_tensor_fill_uniform(first, 1, 0.0f, 1.0f);
    if (st == CLT_SUCCESS)
        st = clt_finish(env->ctx);
    double t4 = bench_now_s();
    clt_tensor_free(first);
    if (st == CLT_SUCCESS)
        st = clt_context_device_info(env->ctx, &env->device);
    if (st == CLT_SUCCESS)
        st = clt_context_get_limits(env->ctx, &env->limits);
    clt_program_cache_stats cache;
    if (st == CLT_SUCCESS)
        st = clt_program_cache_get_stats(env->ctx, &cache);
    if (st != CLT_SUCCESS)
        return st; /* the caller reports clt_last_error(env->ctx) and frees it */
    bench_single_sample(&rows[1], "startup/context_create", t3 - t2);
    bench_single_sample(&rows[2], "startup/first_kernel", t4 - t3);
    snprintf(rows[2].note, sizeof rows[2].note, "program %s",
             cache.source_builds ? "compiled from source (cold cache)"
             : cache.disk_loads  ? "loaded from the disk cache"
                                 : "already in memory");
    return CLT_SUCCESS;
}
