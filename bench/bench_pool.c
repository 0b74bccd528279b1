/* Setups of the pooling cases (conv suite). p = {n, c, h, w, k, stride, pad}. Work is bytes: each
 * input read once, each output written once (the peers count the same way), so GB/s compares with
 * the copy bandwidth. */
#include <stdlib.h>

#include "bench_cases.h"

typedef enum pool_kind { POOL_MAX, POOL_MAX_BWD, POOL_AVG, POOL_GLOBAL_AVG } pool_kind;

typedef struct pool_state {
    pool_kind kind;
    clt_pool2d_params p;
    clt_tensor *t[4]; /* x, out, indices, dx */
} pool_state;

static void pool_teardown(void *v)
{
    pool_state *s = v;
    if (!s)
        return;
    bench_free_tensors(s->t, 4);
    free(s);
}

static clt_status pool_run(void *v)
{
    pool_state *s = v;
    switch (s->kind) {
    case POOL_MAX: return clt_max_pool2d(s->t[0], &s->p, s->t[1], NULL);
    case POOL_MAX_BWD: return clt_max_pool2d_backward(s->t[1], NULL, s->t[2], &s->p, s->t[3]);
    case POOL_AVG: return clt_avg_pool2d(s->t[0], &s->p, 1, s->t[1]);
    case POOL_GLOBAL_AVG: return clt_global_avg_pool2d(s->t[0], s->t[1]);
    }
    return CLT_ERR_INVALID_ARGUMENT;
}

static clt_status pool_setup(bench_env *env, const bench_case *c, bench_run *out, pool_kind kind)
{
    pool_state *s = calloc(1, sizeof *s);
    if (!s)
        return CLT_ERR_OUT_OF_HOST_MEMORY;
    s->kind = kind;
    const int64_t xs[4] = {c->p[0], c->p[1], c->p[2], c->p[3]};
    int64_t os[4] = {xs[0], xs[1], 1, 1};
    clt_pool2d_params_init(&s->p, (int32_t)c->p[4]);
    s->p.stride_h = s->p.stride_w = (int32_t)c->p[5];
    s->p.pad_top = s->p.pad_bottom = s->p.pad_left = s->p.pad_right = (int32_t)c->p[6];
    clt_status st = bench_random_f32(env, 4, xs, &s->t[0]);
    if (st == CLT_SUCCESS && kind != POOL_GLOBAL_AVG)
        st = clt_pool2d_output_shape(xs, &s->p, os);
    if (st == CLT_SUCCESS)
        st = clt_tensor_create(env->ctx, CLT_F32, 4, os, &s->t[1]);
    if (st == CLT_SUCCESS && kind == POOL_MAX_BWD) {
        if ((st = clt_tensor_create(env->ctx, CLT_I32, 4, os, &s->t[2])) == CLT_SUCCESS &&
            (st = clt_tensor_create(env->ctx, CLT_F32, 4, xs, &s->t[3])) == CLT_SUCCESS)
            st = clt_max_pool2d(s->t[0], &s->p, s->t[1], s->t[2]); /* dy = out, real indices */
    }
    if (st != CLT_SUCCESS) {
        pool_teardown(s);
        return st;
    }
    double in = 4.0 * (double)(xs[0] * xs[1] * xs[2] * xs[3]), o = 4.0 * (double)(os[0] * os[1] * os[2] * os[3]);
    out->state = s;
    out->run = pool_run;
    out->teardown = pool_teardown;
    out->work = kind == POOL_MAX_BWD ? 2 * o + in : in + o; /* backward: dy + indices, dx */
    out->unit = BENCH_UNIT_BYTES;
    return CLT_SUCCESS;
}

clt_status bench_setup_maxpool2d(bench_env *env, const bench_case *c, bench_run *out)
{
    return pool_setup(env, c, out, POOL_MAX);
}

clt_status bench_setup_maxpool2d_backward(bench_env *env, const bench_case *c, bench_run *out)
{
    return pool_setup(env, c, out, POOL_MAX_BWD);
}

clt_status bench_setup_avgpool2d(bench_env *env, const bench_case *c, bench_run *out)
{
    return pool_setup(env, c, out, POOL_AVG);
}

clt_status bench_setup_global_avgpool(bench_env *env, const bench_case *c, bench_run *out)
{
    return pool_setup(env, c, out, POOL_GLOBAL_AVG);
}
