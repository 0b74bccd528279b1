/* transfer suite: host<->device bandwidth from ordinary (pageable, malloc'ed) host memory, and the
 * latency of getting one float back, blocking and through a future. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_cases.h"

typedef struct transfer_state {
    clt_tensor *t;
    unsigned char *host;
    size_t bytes;
    float value;
} transfer_state;

static void transfer_teardown(void *p) {
    transfer_state *s = p;
    if (!s)
        return;
    clt_tensor_free(s->t);
    free(s->host);
    free(s);
}

/* The largest power-of-two halving of `wanted` that the device (and the context's memory cap) can
 * hold in one buffer, leaving room for the pool's rounding. *why names the limit that applied. */
static size_t fit_bytes(const bench_env *env, size_t wanted, const char **why) {
    uint64_t cap = env->device.max_alloc_bytes;
    *why = "device max alloc";
    if (env->device.global_mem_bytes / 2 < cap) {
        cap = env->device.global_mem_bytes / 2;
        *why = "half the device memory";
    }
    if (env->limits.memory_limit && env->limits.memory_limit / 2 < cap) {
        cap = env->limits.memory_limit / 2;
        *why = "half the context memory limit";
    }
    size_t bytes = wanted;
    while (bytes > 4096 && bytes > cap)
        bytes /= 2;
    return bytes;
}

static clt_status bulk_setup(bench_env *env, const bench_case *c, bench_run *out, const char *prefix,
                             clt_status (*run)(void *)) {
    transfer_state *s = calloc(1, sizeof *s);
    if (!s)
        return CLT_ERR_OUT_OF_HOST_MEMORY;
    const char *why = "";
    s->bytes = fit_bytes(env, (size_t)c->p[0], &why);
    s->host = malloc(s->bytes);
    if (!s->host) {
        free(s);
        return CLT_ERR_OUT_OF_HOST_MEMORY;
    }
    /* Touch every page now so first-touch faults stay out of the timing; not zeros, so no layer can
     * take a shortcut. */
    for (size_t i = 0; i < s->bytes; i++)
        s->host[i] = (unsigned char)(i * 131u + 7u);
    int64_t shape[1] = {(int64_t)s->bytes};
    clt_status st = clt_tensor_create(env->ctx, CLT_U8, 1, shape, &s->t);
    if (st == CLT_SUCCESS)
        st = clt_tensor_write(s->t, s->host, s->bytes); /* d2h reads real data; h2d warms the path */
    if (st != CLT_SUCCESS) {
        transfer_teardown(s);
        return st;
    }
    out->state = s;
    out->run = run;
    out->teardown = transfer_teardown;
    out->work = (double)s->bytes;
    out->unit = BENCH_UNIT_BYTES;
    if (s->bytes != (size_t)c->p[0]) {
        snprintf(out->name, sizeof out->name, "%s/%zu", prefix, s->bytes);
        snprintf(out->note, sizeof out->note, "reduced from %s to fit %s", c->name, why);
    }
    return CLT_SUCCESS;
}

/* Returns once the host memory may be reused; on discrete devices the copy itself may still be in
 * flight, which is why the timing ends with clt_finish. */
static clt_status run_h2d(void *p) {
    transfer_state *s = p;
    return clt_tensor_write(s->t, s->host, s->bytes);
}

static clt_status run_d2h(void *p) {
    transfer_state *s = p;
    return clt_tensor_read(s->t, s->host, s->bytes);
}

static clt_status setup_h2d(bench_env *env, const bench_case *c, bench_run *out) {
    return bulk_setup(env, c, out, "h2d", run_h2d);
}

static clt_status setup_d2h(bench_env *env, const bench_case *c, bench_run *out) {
    return bulk_setup(env, c, out, "d2h", run_d2h);
}

static clt_status run_scalar_read(void *p) {
    transfer_state *s = p;
    return clt_tensor_read(s->t, &s->value, sizeof s->value);
}

/* The way a training loop gets its loss without stalling: here waited for at once, so the figure is
 * the round trip through the async path. */
static clt_status run_scalar_read_async(void *p) {
    transfer_state *s = p;
    clt_future *f = NULL;
    clt_status st = clt_tensor_read_async(s->t, 0, 1, &f);
    if (st != CLT_SUCCESS)
        return st;
    st = clt_future_wait(f);
    if (st == CLT_SUCCESS)
        st = clt_future_get(f, &s->value, sizeof s->value);
    clt_future_free(f);
    return st;
}

static clt_status scalar_setup(bench_env *env, bench_run *out, clt_status (*run)(void *),
                               const char *note) {
    transfer_state *s = calloc(1, sizeof *s);
    if (!s)
        return CLT_ERR_OUT_OF_HOST_MEMORY;
    int64_t shape[1] = {1};
    clt_status st = bench_random_f32(env, 1, shape, &s->t);
    if (st != CLT_SUCCESS) {
        free(s);
        return st;
    }
    out->state = s;
    out->run = run;
    out->teardown = transfer_teardown;
    out->unit = BENCH_UNIT_NONE;
    snprintf(out->note, sizeof out->note, "%s", note);
    return CLT_SUCCESS;
}

static clt_status setup_scalar_read(bench_env *env, const bench_case *c, bench_run *out) {
    (void)c;
    return scalar_setup(env, out, run_scalar_read, "blocking clt_tensor_read of 1 float");
}

static clt_status setup_scalar_read_async(bench_env *env, const bench_case *c, bench_run *out) {
    (void)c;
    return scalar_setup(env, out, run_scalar_read_async, "read_async + wait + get + free");
}

/* p[0]: bytes. */
static const bench_case transfer_cases[] = {
    {"h2d/268435456", setup_h2d, {268435456}, 0},
    {"d2h/268435456", setup_d2h, {268435456}, 0},
    {"scalar_read", setup_scalar_read, {0}, 0},
    {"scalar_read_async", setup_scalar_read_async, {0}, 0},
};

const bench_suite bench_suite_transfer = {"transfer", transfer_cases,
                                          (int)(sizeof transfer_cases / sizeof transfer_cases[0])};
