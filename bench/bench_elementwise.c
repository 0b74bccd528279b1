/* Setups of the elementwise, reduction and softmax cases (seed and micro suites). Work is counted
 * as the peers count it: each input read once and each output written once (add: 12 n bytes, relu:
 * 8 n, sum: 4 n, softmax: 8 n). */
#include <stdlib.h>

#include "bench_cases.h"

typedef enum ew_kind { EW_ADD, EW_MUL, EW_RELU, EW_SIGMOID, EW_TANH, EW_CHAIN, EW_SUM, EW_MEAN,
                       EW_MAX, EW_SOFTMAX, EW_SOFTMAX_BWD, EW_ROWSUM, EW_COPY } ew_kind;

typedef struct ew_state {
    ew_kind kind;
    clt_tensor *in[3];
    clt_tensor *out;
    clt_expr *expr; /* relu(a*b + c) */
    int root;
} ew_state;

static void ew_teardown(void *p)
{
    ew_state *s = p;
    if (!s)
        return;
    bench_free_tensors(s->in, 3);
    clt_tensor_free(s->out);
    clt_expr_free(s->expr);
    free(s);
}

static clt_status ew_run(void *p)
{
    ew_state *s = p;
    switch (s->kind) {
    case EW_ADD: return clt_add(s->in[0], s->in[1], s->out);
    case EW_MUL: return clt_mul(s->in[0], s->in[1], s->out);
    case EW_RELU: return clt_unary(CLT_RELU, s->in[0], 0.0f, s->out);
    case EW_SIGMOID: return clt_unary(CLT_SIGMOID, s->in[0], 0.0f, s->out);
    case EW_TANH: return clt_unary(CLT_TANH, s->in[0], 0.0f, s->out);
    case EW_CHAIN:
        return clt_expr_eval(s->expr, s->root, 3, (const clt_tensor *const *)s->in, 0, NULL, s->out);
    case EW_SUM: return clt_reduce(CLT_REDUCE_SUM, s->in[0], 0, NULL, 0, s->out);
    case EW_MEAN: return clt_reduce(CLT_REDUCE_MEAN, s->in[0], 0, NULL, 0, s->out);
    case EW_MAX: return clt_reduce(CLT_REDUCE_MAX, s->in[0], 0, NULL, 0, s->out);
    case EW_SOFTMAX: return clt_softmax(s->in[0], s->out);
    case EW_SOFTMAX_BWD: return clt_softmax_backward(s->in[0], s->in[1], s->out);
    case EW_ROWSUM: return clt_rowsum(s->in[0], s->out);
    case EW_COPY: return clt_tensor_copy(s->out, s->in[0]);
    }
    return CLT_ERR_INVALID_ARGUMENT;
}

static int inputs_of(ew_kind k)
{
    return k == EW_ADD || k == EW_MUL || k == EW_SOFTMAX_BWD ? 2 : k == EW_CHAIN ? 3 : 1;
}

static clt_status ew_setup(bench_env *env, const bench_case *c, bench_run *out, ew_kind kind)
{
    ew_state *s = calloc(1, sizeof *s);
    if (!s)
        return CLT_ERR_OUT_OF_HOST_MEMORY;
    s->kind = kind;
    int rowwise = kind == EW_SOFTMAX || kind == EW_SOFTMAX_BWD || kind == EW_ROWSUM;
    int64_t shape[2] = {c->p[0], c->p[1]};
    int ndim = rowwise ? 2 : 1;
    double n = rowwise ? (double)shape[0] * (double)shape[1] : (double)shape[0];
    int nin = inputs_of(kind);
    clt_status st = CLT_SUCCESS;
    for (int i = 0; i < nin && st == CLT_SUCCESS; i++)
        st = bench_random_f32(env, ndim, shape, &s->in[i]);
    if (st == CLT_SUCCESS) {
        if (kind == EW_SUM || kind == EW_MEAN || kind == EW_MAX)
            st = clt_tensor_create(env->ctx, CLT_F32, 0, NULL, &s->out);
        else if (kind == EW_ROWSUM)
            st = clt_tensor_create(env->ctx, CLT_F32, 1, shape, &s->out);
        else
            st = clt_tensor_create(env->ctx, CLT_F32, ndim, shape, &s->out);
    }
    if (st == CLT_SUCCESS && kind == EW_CHAIN) {
        st = clt_expr_create(&s->expr);
        if (st == CLT_SUCCESS) {
            int a = clt_expr_input(s->expr, 0), b = clt_expr_input(s->expr, 1);
            int cc = clt_expr_input(s->expr, 2);
            int ab = clt_expr_binary(s->expr, CLT_MUL, a, b);
            s->root = clt_expr_unary(s->expr, CLT_RELU, clt_expr_binary(s->expr, CLT_ADD, ab, cc), -1);
        }
    }
    if (st != CLT_SUCCESS) {
        ew_teardown(s);
        return st;
    }
    int reduces = kind == EW_SUM || kind == EW_MEAN || kind == EW_MAX || kind == EW_ROWSUM;
    out->state = s;
    out->run = ew_run;
    out->teardown = ew_teardown;
    out->unit = BENCH_UNIT_BYTES;
    out->work = 4.0 * n * (nin + (reduces ? 0 : 1));
    return CLT_SUCCESS;
}

#define EW_SETUP(fn, kind)                                                                       \
    clt_status fn(bench_env *env, const bench_case *c, bench_run *out)                           \
    {                                                                                            \
        return ew_setup(env, c, out, kind);                                                      \
    }
EW_SETUP(bench_setup_add, EW_ADD)
EW_SETUP(bench_setup_mul, EW_MUL)
EW_SETUP(bench_setup_relu, EW_RELU)
EW_SETUP(bench_setup_sigmoid, EW_SIGMOID)
EW_SETUP(bench_setup_tanh, EW_TANH)
EW_SETUP(bench_setup_chain_relu_mul_add, EW_CHAIN)
EW_SETUP(bench_setup_sum, EW_SUM)
EW_SETUP(bench_setup_mean, EW_MEAN)
EW_SETUP(bench_setup_max, EW_MAX)
EW_SETUP(bench_setup_softmax, EW_SOFTMAX)
EW_SETUP(bench_setup_softmax_backward, EW_SOFTMAX_BWD)
EW_SETUP(bench_setup_rowsum, EW_ROWSUM)
EW_SETUP(bench_setup_copy, EW_COPY)
