/* attention suite: clt_attention_forward / clt_attention_backward (no mask, default scale) on the
 * shapes of issue 20 (GPU only: tens of GFLOP per op) and a small one that POCL runs.
 * p = {batch, heads, seq, head_dim, backward, causal}. Work is FLOP as the flash-attention papers
 * count it (the PyTorch peer counts the same): forward 4 B H S^2 D (two matmuls), backward
 * 10 B H S^2 D (five; ours recomputes Q K^T and dO V^T in the dQ kernel, i.e. does seven); causal
 * halves both. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_cases.h"

typedef struct att_state {
    int backward;
    clt_attention_options opts;
    clt_tensor *t[9]; /* q, k, v, out, lse, dout, dq, dk, dv */
} att_state;

static void att_teardown(void *v)
{
    att_state *s = v;
    if (!s)
        return;
    bench_free_tensors(s->t, 9);
    free(s);
}

static clt_status att_run(void *v)
{
    att_state *s = v;
    clt_tensor **t = s->t;
    if (!s->backward)
        return clt_attention_forward(t[0], t[1], t[2], &s->opts, t[3], t[4]);
    return clt_attention_backward(t[0], t[1], t[2], t[3], t[4], t[5], &s->opts, t[6], t[7], t[8]);
}

static clt_status att_setup(bench_env *env, const bench_case *c, bench_run *out)
{
    att_state *s = calloc(1, sizeof *s);
    if (!s)
        return CLT_ERR_OUT_OF_HOST_MEMORY;
    s->backward = (int)c->p[4];
    s->opts = clt_attention_options_default();
    s->opts.causal = (int)c->p[5];
    const int64_t shape[4] = {c->p[0], c->p[1], c->p[2], c->p[3]};
    clt_status st = CLT_SUCCESS;
    for (int i = 0; i < 3 && st == CLT_SUCCESS; i++)
        st = bench_random_f32(env, 4, shape, &s->t[i]);
    if (st == CLT_SUCCESS)
        st = clt_tensor_create(env->ctx, CLT_F32, 4, shape, &s->t[3]);
    if (st == CLT_SUCCESS)
        st = clt_tensor_create(env->ctx, CLT_F32, 3, shape, &s->t[4]);
    if (st == CLT_SUCCESS && s->backward) {
        st = bench_random_f32(env, 4, shape, &s->t[5]);
        for (int i = 6; i < 9 && st == CLT_SUCCESS; i++)
            st = clt_tensor_create(env->ctx, CLT_F32, 4, shape, &s->t[i]);
        if (st == CLT_SUCCESS) /* the backward reads a real forward's out and lse */
            st = clt_attention_forward(s->t[0], s->t[1], s->t[2], &s->opts, s->t[3], s->t[4]);
    }
    if (st != CLT_SUCCESS) {
        att_teardown(s);
        return st;
    }
    double flop = 4.0 * (double)(c->p[0] * c->p[1]) * (double)c->p[2] * (double)c->p[2] *
                  (double)c->p[3];
    out->state = s;
    out->run = att_run;
    out->teardown = att_teardown;
    out->work = (s->backward ? 2.5 * flop : flop) * (s->opts.causal ? 0.5 : 1.0);
    /* Which kernels and tiles ran (CLT_ATTENTION_IMPL, CLT_ATTENTION_TILED_TILES: a sweep's tiles
     * that do not fit fall back to the table, and this shows it), without "attention dNN ". */
    char desc[192];
    if (clt_attention_describe(env->ctx, c->p[3], desc, sizeof desc) == CLT_SUCCESS) {
        const char *sp = strchr(desc, ' ');
        sp = sp ? strchr(sp + 1, ' ') : NULL;
        snprintf(out->note, sizeof out->note, "%.95s", sp ? sp + 1 : desc);
    }
    out->unit = BENCH_UNIT_FLOPS;
    return CLT_SUCCESS;
}

static const bench_case attention_cases[] = {
    {"attention_forward/b8h8s1024d64", att_setup, {8, 8, 1024, 64, 0, 0}, BENCH_GPU_ONLY},
    {"attention_backward/b8h8s1024d64", att_setup, {8, 8, 1024, 64, 1, 0}, BENCH_GPU_ONLY},
    {"attention_forward/b32h12s512d64", att_setup, {32, 12, 512, 64, 0, 0}, BENCH_GPU_ONLY},
    {"attention_backward/b32h12s512d64", att_setup, {32, 12, 512, 64, 1, 0}, BENCH_GPU_ONLY},
    {"attention_forward_causal/b8h8s1024d64", att_setup, {8, 8, 1024, 64, 0, 1}, BENCH_GPU_ONLY},
    {"attention_backward_causal/b8h8s1024d64", att_setup, {8, 8, 1024, 64, 1, 1},
     BENCH_GPU_ONLY},
    {"attention_forward/b2h4s256d64", att_setup, {2, 4, 256, 64, 0, 0}, 0},
    {"attention_backward/b2h4s256d64", att_setup, {2, 4, 256, 64, 1, 0}, 0},
};

const bench_suite bench_suite_attention = {
    "attention", attention_cases, (int)(sizeof attention_cases / sizeof attention_cases[0])};
