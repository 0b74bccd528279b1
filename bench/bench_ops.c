/* Setups of the ops suite: layout, indexing and random ops at the shapes a transformer or a CNN
 * uses (suite_ops.c lists them). Work is bytes, counted as the peer counts them: each input read
 * once, each output written once (embedding: the rows read, ids, out; topk: x read once). */
#include <stdlib.h>

#include "bench_cases.h"

typedef enum ops_kind {
    OPS_PERMUTE_0213, OPS_TRANSPOSE_LAST2, OPS_SLICE_STEP2, OPS_CONCAT3_LAST, OPS_PAD_REFLECT_HW,
    OPS_BROADCAST_BACKWARD_ROWS, OPS_EMBEDDING, OPS_EMBEDDING_BWD_ATOMIC, OPS_EMBEDDING_BWD_DET,
    OPS_MASKED_FILL_CAUSAL, OPS_TOPK, OPS_DROPOUT, OPS_UNIFORM, OPS_NORMAL
} ops_kind;

#define OPS_TENSORS 6

typedef struct ops_state {
    ops_kind kind;
    clt_tensor *t[OPS_TENSORS]; /* inputs first, then outputs */
    int64_t k;
    uint64_t step;
} ops_state;

static void ops_teardown(void *p)
{
    ops_state *s = p;
    if (!s)
        return;
    bench_free_tensors(s->t, OPS_TENSORS);
    free(s);
}

static clt_status ops_run(void *p)
{
    ops_state *s = p;
    static const int perm0213[4] = {0, 2, 1, 3}, perm021[3] = {0, 2, 1};
    static const int64_t start0[2] = {0, 0}, step2[2] = {2, 2};
    static const int64_t pad_hw[4] = {0, 0, 1, 1};
    switch (s->kind) {
    case OPS_PERMUTE_0213: return clt_permute(s->t[0], perm0213, s->t[1]);
    case OPS_TRANSPOSE_LAST2: return clt_permute(s->t[0], perm021, s->t[1]);
    case OPS_SLICE_STEP2: return clt_slice(s->t[0], start0, step2, s->t[1]);
    case OPS_CONCAT3_LAST:
        return clt_concat(3, (const clt_tensor *const *)s->t, -1, s->t[3]);
    case OPS_PAD_REFLECT_HW: return clt_pad(s->t[0], pad_hw, pad_hw, CLT_PAD_REFLECT, 0, s->t[1]);
    case OPS_BROADCAST_BACKWARD_ROWS: return clt_broadcast_backward(s->t[0], s->t[1]);
    case OPS_EMBEDDING: return clt_embedding(s->t[0], s->t[1], s->t[2]);
    case OPS_EMBEDDING_BWD_ATOMIC:
        return clt_embedding_backward(s->t[0], s->t[1], CLT_EMBEDDING_GRAD_ATOMIC, 0, s->t[2]);
    case OPS_EMBEDDING_BWD_DET:
        return clt_embedding_backward(s->t[0], s->t[1], CLT_EMBEDDING_GRAD_DETERMINISTIC, 0, s->t[2]);
    case OPS_MASKED_FILL_CAUSAL: return clt_masked_fill(s->t[0], s->t[1], -1e30f, s->t[2]);
    case OPS_TOPK: return clt_topk(s->t[0], (int)s->k, s->t[1], s->t[2]);
    case OPS_DROPOUT: return clt_dropout(s->t[0], 0.1f, 1234, s->step++, s->t[1], s->t[2]);
    case OPS_UNIFORM: return clt_random_uniform(s->t[0], 1234, s->step++, 0.0f, 1.0f);
    case OPS_NORMAL: return clt_random_normal(s->t[0], 1234, s->step++, 0.0f, 1.0f);
    }
    return CLT_ERR_INVALID_ARGUMENT;
}

static clt_status make(bench_env *env, clt_dtype dt, int nd, const int64_t *shape, clt_tensor **t)
{
    return clt_tensor_create(env->ctx, dt, nd, shape, t);
}

/* Ids uniform in [0, vocab): random floats scaled on the host would cost a read; draw on the host. */
static clt_status ids_tensor(bench_env *env, int64_t n, int64_t vocab, clt_tensor **t)
{
    int32_t *h = malloc((size_t)n * sizeof *h);
    if (!h)
        return CLT_ERR_OUT_OF_HOST_MEMORY;
    uint64_t x = env->next_seed++ * 0x9E3779B97F4A7C15ull + 1;
    for (int64_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        h[i] = (int32_t)(x % (uint64_t)vocab);
    }
    clt_status st = clt_tensor_create_from_host(env->ctx, CLT_I32, 1, &n, h, (size_t)n * 4, t);
    free(h);
    return st;
}

static clt_status ops_setup(bench_env *env, const bench_case *c, bench_run *out, ops_kind kind)
{
    ops_state *s = calloc(1, sizeof *s);
    if (!s)
        return CLT_ERR_OUT_OF_HOST_MEMORY;
    s->kind = kind;
    const int64_t *p = c->p;
    clt_status st = CLT_SUCCESS;
    double bytes = 0;
    switch (kind) {
    case OPS_PERMUTE_0213: {
        int64_t o[4] = {p[0], p[2], p[1], p[3]};
        if (!(st = bench_random_f32(env, 4, p, &s->t[0])))
            st = make(env, CLT_F32, 4, o, &s->t[1]);
        bytes = 8.0 * p[0] * p[1] * p[2] * p[3];
        break;
    }
    case OPS_TRANSPOSE_LAST2: {
        int64_t o[3] = {p[0], p[2], p[1]};
        if (!(st = bench_random_f32(env, 3, p, &s->t[0])))
            st = make(env, CLT_F32, 3, o, &s->t[1]);
        bytes = 8.0 * p[0] * p[1] * p[2];
        break;
    }
    case OPS_SLICE_STEP2: {
        int64_t o[2] = {(p[0] + 1) / 2, (p[1] + 1) / 2};
        if (!(st = bench_random_f32(env, 2, p, &s->t[0])))
            st = make(env, CLT_F32, 2, o, &s->t[1]);
        bytes = 8.0 * o[0] * o[1];
        break;
    }
    case OPS_CONCAT3_LAST: {
        int64_t o[3] = {p[0], p[1], 3 * p[2]};
        for (int i = 0; i < 3 && !st; i++)
            st = bench_random_f32(env, 3, p, &s->t[i]);
        if (!st)
            st = make(env, CLT_F32, 3, o, &s->t[3]);
        bytes = 8.0 * o[0] * o[1] * o[2];
        break;
    }
    case OPS_PAD_REFLECT_HW: {
        int64_t o[4] = {p[0], p[1], p[2] + 2, p[3] + 2};
        if (!(st = bench_random_f32(env, 4, p, &s->t[0])))
            st = make(env, CLT_F32, 4, o, &s->t[1]);
        bytes = 4.0 * p[0] * p[1] * (p[2] * p[3] + o[2] * o[3]);
        break;
    }
    case OPS_BROADCAST_BACKWARD_ROWS: {
        if (!(st = bench_random_f32(env, 2, p, &s->t[0])))
            st = make(env, CLT_F32, 1, &p[1], &s->t[1]);
        bytes = 4.0 * p[0] * p[1] + 4.0 * p[1];
        break;
    }
    case OPS_EMBEDDING:
    case OPS_EMBEDDING_BWD_ATOMIC:
    case OPS_EMBEDDING_BWD_DET: { /* p = {vocab, dim, tokens} */
        int64_t w[2] = {p[0], p[1]}, o[2] = {p[2], p[1]};
        st = ids_tensor(env, p[2], p[0], &s->t[0]);
        if (!st && kind == OPS_EMBEDDING) {
            if (!(st = bench_random_f32(env, 2, w, &s->t[1])))
                st = make(env, CLT_F32, 2, o, &s->t[2]);
        } else if (!st) {
            if (!(st = bench_random_f32(env, 2, o, &s->t[1])))
                st = make(env, CLT_F32, 2, w, &s->t[2]);
        }
        bytes = 8.0 * p[2] * p[1] + 4.0 * p[2] + (kind == OPS_EMBEDDING ? 0 : 4.0 * p[0] * p[1]);
        break;
    }
    case OPS_MASKED_FILL_CAUSAL: { /* p = {batch*heads, seq}: x [bh, s, s], mask [s, s] */
        int64_t x[3] = {p[0], p[1], p[1]}, m[2] = {p[1], p[1]};
        if (!(st = bench_random_f32(env, 3, x, &s->t[0])) && !(st = bench_random_f32(env, 2, m, &s->t[1])))
            st = make(env, CLT_F32, 3, x, &s->t[2]);
        bytes = 8.0 * p[0] * p[1] * p[1] + 4.0 * p[1] * p[1];
        break;
    }
    case OPS_TOPK: { /* p = {rows, n, k} */
        int64_t o[2] = {p[0], p[2]};
        s->k = p[2];
        if (!(st = bench_random_f32(env, 2, p, &s->t[0])) && !(st = make(env, CLT_F32, 2, o, &s->t[1])))
            st = make(env, CLT_I32, 2, o, &s->t[2]);
        bytes = 4.0 * p[0] * p[1] + 8.0 * p[0] * p[2];
        break;
    }
    case OPS_DROPOUT:
        if (!(st = bench_random_f32(env, 1, p, &s->t[0])) && !(st = make(env, CLT_F32, 1, p, &s->t[1])))
            st = make(env, CLT_U8, 1, p, &s->t[2]);
        bytes = 9.0 * p[0];
        break;
    case OPS_UNIFORM:
    case OPS_NORMAL:
        st = make(env, CLT_F32, 1, p, &s->t[0]);
        bytes = 4.0 * p[0];
        break;
    }
    if (st) {
        ops_teardown(s);
        return st;
    }
    out->state = s;
    out->run = ops_run;
    out->teardown = ops_teardown;
    out->unit = BENCH_UNIT_BYTES;
    out->work = bytes;
    return CLT_SUCCESS;
}

#define OPS_SETUP(fn, kind)                                                                       \
    clt_status fn(bench_env *env, const bench_case *c, bench_run *out)                            \
    {                                                                                             \
        return ops_setup(env, c, out, kind);                                                      \
    }
OPS_SETUP(bench_setup_permute_0213, OPS_PERMUTE_0213)
OPS_SETUP(bench_setup_transpose_last2, OPS_TRANSPOSE_LAST2)
OPS_SETUP(bench_setup_slice_step2, OPS_SLICE_STEP2)
OPS_SETUP(bench_setup_concat3_last, OPS_CONCAT3_LAST)
OPS_SETUP(bench_setup_pad_reflect_hw, OPS_PAD_REFLECT_HW)
OPS_SETUP(bench_setup_broadcast_backward_rows, OPS_BROADCAST_BACKWARD_ROWS)
OPS_SETUP(bench_setup_embedding, OPS_EMBEDDING)
OPS_SETUP(bench_setup_embedding_bwd_atomic, OPS_EMBEDDING_BWD_ATOMIC)
OPS_SETUP(bench_setup_embedding_bwd_det, OPS_EMBEDDING_BWD_DET)
OPS_SETUP(bench_setup_masked_fill_causal, OPS_MASKED_FILL_CAUSAL)
OPS_SETUP(bench_setup_topk, OPS_TOPK)
OPS_SETUP(bench_setup_dropout, OPS_DROPOUT)
OPS_SETUP(bench_setup_random_uniform, OPS_UNIFORM)
OPS_SETUP(bench_setup_random_normal, OPS_NORMAL)
