/* nnops suite: the normalisation, loss and optimiser ops a transformer / CNN training step needs, on
 * the shapes of those models (issue 20). Each case enqueues ONE public call.
 * Parameters: layer_norm* / rms_norm p = {rows, D}; batch_norm* p = {N, C, H (= W)};
 * cross_entropy p = {rows, classes} (forward and gradient in the same launch, class targets, mean);
 * adamw_multi p = {total parameters, tensors} (separately allocated tensors: 50 -> 7 launches).
 * Bytes: every tensor read once and written once (layer_norm 8 n, its backward 12 n, batch_norm
 * 8 n, its backward 12 n, cross_entropy 8 R K, AdamW 28 per parameter). */
#include <stdlib.h>

#include "bench_cases.h"

typedef enum nn_kind { NN_LN, NN_LN_BWD, NN_RMS, NN_BN, NN_BN_BWD, NN_CE, NN_ADAMW } nn_kind;

#define NN_MAX_T 64

typedef struct nn_state {
    nn_kind kind;
    clt_tensor *t[10];
    int count; /* adamw: tensors per role */
    clt_tensor *p[NN_MAX_T], *g[NN_MAX_T], *m[NN_MAX_T], *v[NN_MAX_T];
    clt_batch_norm_params bn;
    clt_cross_entropy_params ce;
    clt_adam_params adam;
    int64_t step;
} nn_state;

static void nn_teardown(void *ptr)
{
    nn_state *s = ptr;
    if (!s)
        return;
    bench_free_tensors(s->t, 10);
    bench_free_tensors(s->p, s->count);
    bench_free_tensors(s->g, s->count);
    bench_free_tensors(s->m, s->count);
    bench_free_tensors(s->v, s->count);
    free(s);
}

static clt_status nn_run(void *ptr)
{
    nn_state *s = ptr;
    clt_tensor **t = s->t;
    switch (s->kind) {
    case NN_LN: return clt_layer_norm(t[0], t[1], t[2], 1e-5f, t[3], t[4], t[5]);
    case NN_LN_BWD: return clt_layer_norm_backward(t[6], t[0], t[1], t[4], t[5], t[7], t[8], t[9]);
    case NN_RMS: return clt_rms_norm(t[0], t[1], 1e-6f, t[3], t[5]);
    case NN_BN: return clt_batch_norm(t[0], t[1], t[2], t[4], t[5], &s->bn, t[3], t[6], t[7]);
    case NN_BN_BWD: return clt_batch_norm_backward(t[8], t[0], t[1], t[6], t[7], 1, t[9], t[2], t[3]);
    case NN_CE: return clt_cross_entropy(t[0], t[1], &s->ce, t[2], t[3]);
    case NN_ADAMW:
        /* a fixed step: the bias corrections only change scalars */
        return clt_adamw_step_multi(s->count, s->p, (const clt_tensor *const *)s->g, s->m, s->v, &s->adam, 10);
    }
    return CLT_ERR_INVALID_ARGUMENT;
}

static clt_status make(bench_env *env, clt_tensor **t, int ndim, const int64_t *shape)
{
    return bench_random_f32(env, ndim, shape, t);
}

static clt_status nn_setup(bench_env *env, const bench_case *c, bench_run *out, nn_kind kind)
{
    nn_state *s = calloc(1, sizeof *s);
    if (!s)
        return CLT_ERR_OUT_OF_HOST_MEMORY;
    s->kind = kind;
    clt_status st = CLT_SUCCESS;
    clt_tensor **t = s->t;
    double n = 0;
    if (kind == NN_LN || kind == NN_LN_BWD || kind == NN_RMS) {
        int64_t xs[2] = {c->p[0], c->p[1]}, d = c->p[1], r = c->p[0];
        n = (double)(r * d);
        if (!(st = make(env, &t[0], 2, xs)) && !(st = make(env, &t[1], 1, &d)) && !(st = make(env, &t[2], 1, &d)) &&
            !(st = make(env, &t[3], 2, xs)) && !(st = make(env, &t[4], 1, &r)) && !(st = make(env, &t[5], 1, &r)) &&
            !(st = make(env, &t[6], 2, xs)) && !(st = make(env, &t[7], 2, xs)) && !(st = make(env, &t[8], 1, &d)) &&
            !(st = make(env, &t[9], 1, &d)))
            st = clt_layer_norm(t[0], t[1], t[2], 1e-5f, t[3], t[4], t[5]); /* real statistics */
        out->work = (kind == NN_LN_BWD ? 12.0 : 8.0) * n;
    } else if (kind == NN_BN || kind == NN_BN_BWD) {
        int64_t xs[4] = {c->p[0], c->p[1], c->p[2], c->p[2]}, ch = c->p[1];
        n = (double)(xs[0] * xs[1] * xs[2] * xs[3]);
        clt_batch_norm_params_init(&s->bn);
        if (!(st = make(env, &t[0], 4, xs)) && !(st = make(env, &t[1], 1, &ch)) && !(st = make(env, &t[2], 1, &ch)) &&
            !(st = make(env, &t[3], 1, &ch)) && !(st = make(env, &t[4], 1, &ch)) && !(st = make(env, &t[5], 1, &ch)) &&
            !(st = make(env, &t[6], 1, &ch)) && !(st = make(env, &t[7], 1, &ch)) && !(st = make(env, &t[8], 4, xs)) &&
            !(st = make(env, &t[9], 4, xs))) {
            clt_tensor *y = t[9];
            st = clt_batch_norm(t[0], t[1], NULL, t[4], t[5], &s->bn, y, t[6], t[7]);
            if (kind == NN_BN) { /* the forward writes y into t[3]'s role: a [N,C,H,W] output */
                clt_tensor_free(t[3]);
                t[3] = t[9];
                t[9] = NULL;
            }
        }
        out->work = (kind == NN_BN_BWD ? 12.0 : 8.0) * n;
    } else if (kind == NN_CE) {
        int64_t zs[2] = {c->p[0], c->p[1]}, r = c->p[0], one = 1;
        clt_cross_entropy_params_init(&s->ce);
        if (!(st = make(env, &t[0], 2, zs)) && !(st = clt_tensor_create(env->ctx, CLT_I32, 1, &r, &t[1])) &&
            !(st = make(env, &t[2], 1, &one)) && !(st = make(env, &t[3], 2, zs))) {
            int32_t *cls = malloc(sizeof(int32_t) * (size_t)r);
            if (!cls)
                st = CLT_ERR_OUT_OF_HOST_MEMORY;
            else {
                for (int64_t i = 0; i < r; i++)
                    cls[i] = (int32_t)((i * 7919) % c->p[1]);
                st = clt_tensor_write(t[1], cls, sizeof(int32_t) * (size_t)r);
                free(cls);
            }
        }
        out->work = 8.0 * (double)(c->p[0] * c->p[1]);
    } else {
        int count = (int)c->p[1];
        int64_t total = c->p[0], each = total / count;
        s->count = count;
        clt_adamw_params_init(&s->adam);
        for (int i = 0; i < count && st == CLT_SUCCESS; i++) {
            int64_t len = i == count - 1 ? total - each * (count - 1) : each;
            if (!(st = make(env, &s->p[i], 1, &len)) && !(st = make(env, &s->g[i], 1, &len)) &&
                !(st = make(env, &s->m[i], 1, &len)))
                st = make(env, &s->v[i], 1, &len);
        }
        out->work = 28.0 * (double)total;
    }
    if (st != CLT_SUCCESS) {
        nn_teardown(s);
        return st;
    }
    out->state = s;
    out->run = nn_run;
    out->teardown = nn_teardown;
    out->unit = BENCH_UNIT_BYTES;
    return CLT_SUCCESS;
}

#define NN_SETUP(fn, kind)                                                                         \
    static clt_status fn(bench_env *env, const bench_case *c, bench_run *out)                      \
    {                                                                                              \
        return nn_setup(env, c, out, kind);                                                        \
    }
NN_SETUP(setup_ln, NN_LN)
NN_SETUP(setup_ln_bwd, NN_LN_BWD)
NN_SETUP(setup_rms, NN_RMS)
NN_SETUP(setup_bn, NN_BN)
NN_SETUP(setup_bn_bwd, NN_BN_BWD)
NN_SETUP(setup_ce, NN_CE)
NN_SETUP(setup_adamw, NN_ADAMW)

static const bench_case nnops_cases[] = {
    {"layer_norm/1024x128", setup_ln, {1024, 128}, 0},
    {"layer_norm/4096x1024", setup_ln, {4096, 1024}, 0},
    {"layer_norm_backward/1024x128", setup_ln_bwd, {1024, 128}, 0},
    {"layer_norm_backward/4096x1024", setup_ln_bwd, {4096, 1024}, 0},
    {"rms_norm/4096x1024", setup_rms, {4096, 1024}, 0},
    {"batch_norm/n32c64h56", setup_bn, {32, 64, 56}, 0},
    {"batch_norm_backward/n32c64h56", setup_bn_bwd, {32, 64, 56}, 0},
    {"cross_entropy/1024x512", setup_ce, {1024, 512}, 0},
    {"cross_entropy/4096x32000", setup_ce, {4096, 32000}, 0},
    {"adamw_multi/10000000x50", setup_adamw, {10000000, 50}, 0},
};

const bench_suite bench_suite_nnops = {"nnops", nnops_cases, (int)(sizeof nnops_cases / sizeof nnops_cases[0])};
