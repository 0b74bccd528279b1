/* Setups of the math-mode cases (gemm and conv suites): matmul_tf32/S and matmul_3xtf32/S = the f32
 * S x S product through clt_matmul_math in that mode; matmul_bf16/S = bf16 A and B (cast from fresh
 * f32 values during setup) with a bf16 result, fp32 accumulation; conv2d_tf32/... = the conv case
 * of the same shape with the context's math mode set to TF32 around each call. Parameters:
 * matmul p = {S, clt_math_mode, clt_dtype of A, B and C}; conv p as bench_setup_conv2d. On a device
 * without tensor cores every mode runs the fp32 kernels (the profiler's implementation name says
 * so), which these rows then measure. */
#include <stdlib.h>

#include "bench_cases.h"
#include "cltensor_cast.h"

typedef struct math_state {
    clt_tensor *a, *b, *out;
    clt_math_mode math;
} math_state;

static void math_teardown(void *p)
{
    math_state *s = p;
    if (!s)
        return;
    clt_tensor *ts[3] = {s->a, s->b, s->out};
    bench_free_tensors(ts, 3);
    free(s);
}

static clt_status math_run(void *p)
{
    math_state *s = p;
    return clt_matmul_math(s->a, s->b, s->out, s->math);
}

/* A fresh random [S, S] tensor of dtype d (f32 values cast once for 16-bit dtypes). */
static clt_status random_of(bench_env *env, int64_t s, clt_dtype d, clt_tensor **out)
{
    int64_t shape[2] = {s, s};
    clt_tensor *f = NULL;
    clt_status st = bench_random_f32(env, 2, shape, &f);
    if (st != CLT_SUCCESS || d == CLT_F32) {
        *out = f;
        return st;
    }
    st = clt_tensor_create(env->ctx, d, 2, shape, out);
    if (st == CLT_SUCCESS)
        st = clt_cast(f, *out);
    clt_tensor_free(f);
    return st;
}

clt_status bench_setup_matmul_math(bench_env *env, const bench_case *c, bench_run *out)
{
    math_state *s = calloc(1, sizeof *s);
    if (!s)
        return CLT_ERR_OUT_OF_HOST_MEMORY;
    int64_t n = c->p[0], shape[2] = {n, n};
    s->math = (clt_math_mode)c->p[1];
    clt_dtype d = (clt_dtype)c->p[2];
    clt_status st = random_of(env, n, d, &s->a);
    if (st == CLT_SUCCESS)
        st = random_of(env, n, d, &s->b);
    if (st == CLT_SUCCESS)
        st = clt_tensor_create(env->ctx, d, 2, shape, &s->out);
    if (st != CLT_SUCCESS) {
        math_teardown(s);
        return st;
    }
    out->state = s;
    out->run = math_run;
    out->teardown = math_teardown;
    out->unit = BENCH_UNIT_FLOPS;
    out->work = 2.0 * (double)n * (double)n * (double)n;
    return CLT_SUCCESS;
}

typedef struct tf32_conv_state {
    bench_run inner;
    clt_context *ctx;
} tf32_conv_state;

static clt_status tf32_conv_run(void *p)
{
    tf32_conv_state *s = p;
    clt_status st = clt_context_set_math_mode(s->ctx, CLT_MATH_TF32);
    if (st == CLT_SUCCESS)
        st = s->inner.run(s->inner.state);
    clt_context_set_math_mode(s->ctx, CLT_MATH_DEFAULT);
    return st;
}

static void tf32_conv_teardown(void *p)
{
    tf32_conv_state *s = p;
    if (!s)
        return;
    if (s->inner.teardown)
        s->inner.teardown(s->inner.state);
    free(s);
}

/* The case `setup` makes, run with the context in TF32 math. */
static clt_status tf32_wrap(bench_env *env, const bench_case *c, bench_run *out,
                            clt_status (*setup)(bench_env *, const bench_case *, bench_run *))
{
    tf32_conv_state *s = calloc(1, sizeof *s);
    if (!s)
        return CLT_ERR_OUT_OF_HOST_MEMORY;
    clt_status st = setup(env, c, &s->inner);
    if (st != CLT_SUCCESS) {
        free(s);
        return st;
    }
    s->ctx = env->ctx;
    *out = s->inner;
    out->state = s;
    out->run = tf32_conv_run;
    out->teardown = tf32_conv_teardown;
    return CLT_SUCCESS;
}

clt_status bench_setup_conv2d_tf32(bench_env *env, const bench_case *c, bench_run *out)
{
    return tf32_wrap(env, c, out, bench_setup_conv2d);
}

clt_status bench_setup_conv2d_tf32_backward_input(bench_env *env, const bench_case *c, bench_run *out)
{
    return tf32_wrap(env, c, out, bench_setup_conv2d_backward_input);
}

clt_status bench_setup_conv2d_tf32_backward_weight(bench_env *env, const bench_case *c, bench_run *out)
{
    return tf32_wrap(env, c, out, bench_setup_conv2d_backward_weight);
}
