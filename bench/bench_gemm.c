/* Setups of the GEMM cases (gemm and seed suites): matmul/S = S x S times S x S through clt_matmul,
 * and gemm_mlp_bias_relu/MxKxN = relu(A[M,K] * W[K,N] + bias[N]) through clt_gemm with the fused
 * epilogue. Work is 2*M*N*K FLOP (the epilogue's M*N adds are not counted, as the peers do not).
 * Which implementation runs is the context's (clt-bench --impl). */
#include <stdlib.h>

#include "bench_cases.h"

typedef struct gemm_state {
    clt_tensor *a, *b, *bias, *out;
    int64_t m, n, k;
    int mlp;
    clt_gemm_epilogue ep;
} gemm_state;

static void gemm_teardown(void *p)
{
    gemm_state *s = p;
    if (!s)
        return;
    clt_tensor *ts[4] = {s->a, s->b, s->bias, s->out};
    bench_free_tensors(ts, 4);
    free(s);
}

static clt_status gemm_run(void *p)
{
    gemm_state *s = p;
    if (!s->mlp)
        return clt_matmul(s->a, s->b, s->out);
    return clt_gemm(CLT_NO_TRANS, CLT_NO_TRANS, s->m, s->n, s->k, 1.0f, s->a, 0, s->k, s->b, 0, s->n,
                    0.0f, s->out, 0, s->n, &s->ep);
}

static clt_status gemm_setup(bench_env *env, bench_run *out, int64_t m, int64_t k, int64_t n, int mlp)
{
    gemm_state *s = calloc(1, sizeof *s);
    if (!s)
        return CLT_ERR_OUT_OF_HOST_MEMORY;
    s->m = m;
    s->n = n;
    s->k = k;
    s->mlp = mlp;
    int64_t sa[2] = {m, k}, sb[2] = {k, n}, so[2] = {m, n};
    clt_status st = bench_random_f32(env, 2, sa, &s->a);
    if (st == CLT_SUCCESS)
        st = bench_random_f32(env, 2, sb, &s->b);
    if (st == CLT_SUCCESS && mlp)
        st = bench_random_f32(env, 1, &n, &s->bias);
    if (st == CLT_SUCCESS)
        st = clt_tensor_create(env->ctx, CLT_F32, 2, so, &s->out);
    if (st != CLT_SUCCESS) {
        gemm_teardown(s);
        return st;
    }
    clt_gemm_epilogue_init(&s->ep);
    s->ep.bias = s->bias;
    s->ep.bias_mode = CLT_BIAS_PER_COLUMN;
    s->ep.activation = CLT_RELU;
    out->state = s;
    out->run = gemm_run;
    out->teardown = gemm_teardown;
    out->unit = BENCH_UNIT_FLOPS;
    out->work = 2.0 * (double)m * (double)n * (double)k;
    return CLT_SUCCESS;
}

clt_status bench_setup_matmul(bench_env *env, const bench_case *c, bench_run *out)
{
    return gemm_setup(env, out, c->p[0], c->p[0], c->p[0], 0);
}

clt_status bench_setup_gemm_mlp_bias_relu(bench_env *env, const bench_case *c, bench_run *out)
{
    return gemm_setup(env, out, c->p[0], c->p[1], c->p[2], 1);
}
