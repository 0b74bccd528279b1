/* End-to-end proof: a small GPT-style model (2 layers, d 128, 4 heads, vocab 512, context 128)
 * built only from public cltensor calls (embedding, broadcast add, layer_norm, GEMM with bias /
 * ReLU / residual / ReLU-backward epilogues, permute, attention, cross_entropy, embedding backward,
 * SGD), trained for 50 steps on generated next-token data; every step's loss is compared with the
 * float64 model of ref/gpt_ref.c started from the same weights, and the loss must fall.
 *
 * Data: sequences that follow a fixed random permutation of the vocabulary (the next token is
 * perm[token]) from random starts, so the model can learn them. CI uses batch 2 (the shapes of the
 * model are the issue's; only the batch is small, to keep the run short under POCL). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ref/gpt_ref.h"
#include "util/test_util.h"

#define GPT_STEPS 50
#define GPT_LR 0.05
/* Two comparisons of the loss, relative to the reference's:
 *   free-running (the reference trained from the same initial weights, in double): the first
 *   EXACT_STEPS steps within LOSS_TOL_EXACT (measured: ~1e-7); later steps within LOSS_TOL_FREE.
 *   SGD on this model runs at the edge of stability (the loss oscillates from step to step even at
 *   lr 0.05), which amplifies float32 rounding from step ~7 on: measured worst 3e-2 over 50 steps.
 *   resynced: every SYNC_EVERY steps the reference restarts from the device's current weights and
 *   that step's loss must match within LOSS_TOL_EXACT, so a fault that only shows late in training
 *   (not hidden by the loose free-running bound) still fails. */
#define EXACT_STEPS 5
#define LOSS_TOL_EXACT 1e-5
#define LOSS_TOL_FREE 1e-1
#define SYNC_EVERY 10
/* The loss must fall: the last step's below this fraction of the first. */
#define LOSS_FALL 0.9

/* The device model: the flat parameter and gradient tensors with views where an op needs a tensor,
 * and every activation the backward pass reads. */
typedef struct gpt_dev {
    gpt_config c;
    gpt_layout l;
    clt_context *ctx;
    clt_tensor *p, *g, *ones, *ids, *targets;
    clt_tensor *wte, *wpe, *dwte, *lnf_g, *lnf_b, *dlnf_g, *dlnf_b;
    struct {
        clt_tensor *ln1_g, *ln1_b, *bqkv, *bo, *ln2_g, *ln2_b, *b1, *b2;
        clt_tensor *dln1_g, *dln1_b, *dln2_g, *dln2_b;
        clt_tensor *x, *h1, *mean1, *rstd1, *qkv, *qkvp, *q, *k, *v, *att, *lse, *y, *xm, *h2;
        clt_tensor *mean2, *rstd2, *u;
    } L[GPT_MAX_LAYERS];
    clt_tensor *xl, *tok, *hf, *meanf, *rstdf, *logits, *dlogits, *loss;
    clt_tensor *dx, *dtmp, *dh, *du, *dyatt, *datt, *dqkvp, *dq, *dk, *dv, *dqkv;
    clt_tensor *all[160];
    int n_all;
} gpt_dev;

static clt_tensor *keep(gpt_dev *m, clt_tensor *t)
{
    ck_assert_int_lt(m->n_all, 160);
    m->all[m->n_all++] = t;
    return t;
}

static clt_tensor *tensor(gpt_dev *m, clt_dtype dt, int ndim, const int64_t *shape)
{
    clt_tensor *t = NULL;
    TU_OK(clt_tensor_create(m->ctx, dt, ndim, shape, &t));
    return keep(m, t);
}

static clt_tensor *view(gpt_dev *m, clt_tensor *base, size_t off, int ndim, const int64_t *shape)
{
    clt_tensor *t = NULL;
    TU_OK(clt_tensor_view(base, (int64_t)off, ndim, shape, &t));
    return keep(m, t);
}

#define SH(...) ((const int64_t[]){__VA_ARGS__})

static void gpt_dev_init(gpt_dev *m, clt_context *ctx, const gpt_config *c, const float *params,
                         const int32_t *ids, const int32_t *targets)
{
    m->c = *c;
    m->ctx = ctx;
    m->n_all = 0;
    gpt_layout_of(c, &m->l);
    const gpt_layout *l = &m->l;
    int64_t B = c->batch, T = c->seq, C = c->d, H = c->heads, Dh = C / H, V = c->vocab;
    int64_t N = B * T, total = (int64_t)l->total;
    m->p = tensor(m, CLT_F32, 1, &total);
    TU_OK(clt_tensor_write(m->p, params, l->total * sizeof(float)));
    m->g = tensor(m, CLT_F32, 1, &total);
    m->ones = tensor(m, CLT_F32, 1, &N);
    TU_OK(clt_tensor_fill(m->ones, 1.0));
    m->ids = tensor(m, CLT_I32, 2, SH(B, T));
    TU_OK(clt_tensor_write(m->ids, ids, (size_t)N * 4));
    m->targets = tensor(m, CLT_I32, 1, &N);
    TU_OK(clt_tensor_write(m->targets, targets, (size_t)N * 4));
    m->wte = view(m, m->p, l->wte, 2, SH(V, C));
    m->dwte = view(m, m->g, l->wte, 2, SH(V, C));
    m->wpe = view(m, m->p, l->wpe, 2, SH(T, C));
    m->lnf_g = view(m, m->p, l->lnf_g, 1, &C);
    m->lnf_b = view(m, m->p, l->lnf_b, 1, &C);
    m->dlnf_g = view(m, m->g, l->lnf_g, 1, &C);
    m->dlnf_b = view(m, m->g, l->lnf_b, 1, &C);
    int64_t C3 = 3 * C, C4 = 4 * C;
    for (int i = 0; i < c->layers; i++) {
        const gpt_layer_layout *y = &l->layer[i];
        m->L[i].ln1_g = view(m, m->p, y->ln1_g, 1, &C);
        m->L[i].ln1_b = view(m, m->p, y->ln1_b, 1, &C);
        m->L[i].dln1_g = view(m, m->g, y->ln1_g, 1, &C);
        m->L[i].dln1_b = view(m, m->g, y->ln1_b, 1, &C);
        m->L[i].ln2_g = view(m, m->p, y->ln2_g, 1, &C);
        m->L[i].ln2_b = view(m, m->p, y->ln2_b, 1, &C);
        m->L[i].dln2_g = view(m, m->g, y->ln2_g, 1, &C);
        m->L[i].dln2_b = view(m, m->g, y->ln2_b, 1, &C);
        m->L[i].bqkv = view(m, m->p, y->bqkv, 1, &C3);
        m->L[i].bo = view(m, m->p, y->bo, 1, &C);
        m->L[i].b1 = view(m, m->p, y->b1, 1, &C4);
        m->L[i].b2 = view(m, m->p, y->b2, 1, &C);
        m->L[i].x = tensor(m, CLT_F32, 3, SH(B, T, C));
        m->L[i].h1 = tensor(m, CLT_F32, 3, SH(B, T, C));
        m->L[i].mean1 = tensor(m, CLT_F32, 1, &N);
        m->L[i].rstd1 = tensor(m, CLT_F32, 1, &N);
        m->L[i].qkv = tensor(m, CLT_F32, 5, SH(B, T, 3, H, Dh));
        m->L[i].qkvp = tensor(m, CLT_F32, 5, SH(3, B, H, T, Dh));
        size_t part = (size_t)(B * H * T * Dh);
        m->L[i].q = view(m, m->L[i].qkvp, 0, 4, SH(B, H, T, Dh));
        m->L[i].k = view(m, m->L[i].qkvp, part, 4, SH(B, H, T, Dh));
        m->L[i].v = view(m, m->L[i].qkvp, 2 * part, 4, SH(B, H, T, Dh));
        m->L[i].att = tensor(m, CLT_F32, 4, SH(B, H, T, Dh));
        m->L[i].lse = tensor(m, CLT_F32, 3, SH(B, H, T));
        m->L[i].y = tensor(m, CLT_F32, 4, SH(B, T, H, Dh));
        m->L[i].xm = tensor(m, CLT_F32, 3, SH(B, T, C));
        m->L[i].h2 = tensor(m, CLT_F32, 3, SH(B, T, C));
        m->L[i].mean2 = tensor(m, CLT_F32, 1, &N);
        m->L[i].rstd2 = tensor(m, CLT_F32, 1, &N);
        m->L[i].u = tensor(m, CLT_F32, 2, SH(N, C4));
    }
    m->xl = tensor(m, CLT_F32, 3, SH(B, T, C));
    m->tok = tensor(m, CLT_F32, 3, SH(B, T, C));
    m->hf = tensor(m, CLT_F32, 3, SH(B, T, C));
    m->meanf = tensor(m, CLT_F32, 1, &N);
    m->rstdf = tensor(m, CLT_F32, 1, &N);
    m->logits = tensor(m, CLT_F32, 2, SH(N, V));
    m->dlogits = tensor(m, CLT_F32, 2, SH(N, V));
    m->loss = tensor(m, CLT_F32, 1, SH(1));
    m->dx = tensor(m, CLT_F32, 3, SH(B, T, C));
    m->dtmp = tensor(m, CLT_F32, 3, SH(B, T, C));
    m->dh = tensor(m, CLT_F32, 3, SH(B, T, C));
    m->du = tensor(m, CLT_F32, 2, SH(N, C4));
    m->dyatt = tensor(m, CLT_F32, 4, SH(B, T, H, Dh));
    m->datt = tensor(m, CLT_F32, 4, SH(B, H, T, Dh));
    m->dqkvp = tensor(m, CLT_F32, 5, SH(3, B, H, T, Dh));
    size_t part = (size_t)(B * H * T * Dh);
    m->dq = view(m, m->dqkvp, 0, 4, SH(B, H, T, Dh));
    m->dk = view(m, m->dqkvp, part, 4, SH(B, H, T, Dh));
    m->dv = view(m, m->dqkvp, 2 * part, 4, SH(B, H, T, Dh));
    m->dqkv = tensor(m, CLT_F32, 5, SH(B, T, 3, H, Dh));
}

static void gpt_dev_free(gpt_dev *m)
{
    for (int i = m->n_all; i-- > 0;)
        clt_tensor_free(m->all[i]);
}

/* C[m, n] = op(A) op(B) (+ epilogue) with A, B, C at element offsets, leading dims from the
 * stored (untransposed) shapes. */
static void mm(clt_transpose ta, clt_transpose tb, int64_t m, int64_t n, int64_t k,
               const clt_tensor *a, size_t ao, const clt_tensor *b, size_t bo, clt_tensor *c,
               size_t co, const clt_gemm_epilogue *ep)
{
    int64_t lda = ta == CLT_TRANS ? m : k, ldb = tb == CLT_TRANS ? k : n;
    TU_OK(clt_gemm(ta, tb, m, n, k, 1.0f, a, (int64_t)ao, lda, b, (int64_t)bo, ldb, 0.0f, c,
                   (int64_t)co, n, ep));
}

/* G[off .. off + n) = column sums of x [rows, n] (ones^T x). */
static void col_sum(gpt_dev *m, const clt_tensor *x, int64_t rows, int64_t n, size_t off)
{
    mm(CLT_NO_TRANS, CLT_NO_TRANS, 1, n, rows, m->ones, 0, x, 0, m->g, off, NULL);
}

/* One step: forward, loss, backward, SGD. Returns the loss read back (blocking). */
static float gpt_dev_step(gpt_dev *m, float lr, int64_t step)
{
    const gpt_config *c = &m->c;
    const gpt_layout *l = &m->l;
    int64_t B = c->batch, T = c->seq, C = c->d, V = c->vocab, N = B * T;
    clt_attention_options att = clt_attention_options_default();
    att.causal = 1;
    const int to_heads[5] = {2, 0, 3, 1, 4}, from_heads[5] = {1, 3, 0, 2, 4};
    const int swap12[4] = {0, 2, 1, 3};
    clt_gemm_epilogue ep;

    TU_OK(clt_embedding(m->ids, m->wte, m->tok));
    TU_OK(clt_add(m->tok, m->wpe, m->L[0].x));
    for (int i = 0; i < c->layers; i++) {
        const gpt_layer_layout *y = &l->layer[i];
        clt_tensor *x_next = i + 1 < c->layers ? m->L[i + 1].x : m->xl;
        TU_OK(clt_layer_norm(m->L[i].x, m->L[i].ln1_g, m->L[i].ln1_b, (float)GPT_LN_EPS,
                             m->L[i].h1, m->L[i].mean1, m->L[i].rstd1));
        clt_gemm_epilogue_init(&ep);
        ep.bias = m->L[i].bqkv;
        ep.bias_mode = CLT_BIAS_PER_COLUMN;
        mm(CLT_NO_TRANS, CLT_NO_TRANS, N, 3 * C, C, m->L[i].h1, 0, m->p, y->wqkv, m->L[i].qkv, 0,
           &ep);
        TU_OK(clt_permute(m->L[i].qkv, to_heads, m->L[i].qkvp));
        TU_OK(clt_attention_forward(m->L[i].q, m->L[i].k, m->L[i].v, &att, m->L[i].att,
                                    m->L[i].lse));
        TU_OK(clt_permute(m->L[i].att, swap12, m->L[i].y));
        clt_gemm_epilogue_init(&ep);
        ep.bias = m->L[i].bo;
        ep.bias_mode = CLT_BIAS_PER_COLUMN;
        ep.residual = m->L[i].x;
        ep.ldr = C;
        mm(CLT_NO_TRANS, CLT_NO_TRANS, N, C, C, m->L[i].y, 0, m->p, y->wo, m->L[i].xm, 0, &ep);
        TU_OK(clt_layer_norm(m->L[i].xm, m->L[i].ln2_g, m->L[i].ln2_b, (float)GPT_LN_EPS,
                             m->L[i].h2, m->L[i].mean2, m->L[i].rstd2));
        clt_gemm_epilogue_init(&ep);
        ep.bias = m->L[i].b1;
        ep.bias_mode = CLT_BIAS_PER_COLUMN;
        ep.activation = CLT_RELU;
        mm(CLT_NO_TRANS, CLT_NO_TRANS, N, 4 * C, C, m->L[i].h2, 0, m->p, y->w1, m->L[i].u, 0, &ep);
        clt_gemm_epilogue_init(&ep);
        ep.bias = m->L[i].b2;
        ep.bias_mode = CLT_BIAS_PER_COLUMN;
        ep.residual = m->L[i].xm;
        ep.ldr = C;
        mm(CLT_NO_TRANS, CLT_NO_TRANS, N, C, 4 * C, m->L[i].u, 0, m->p, y->w2, x_next, 0, &ep);
    }
    TU_OK(clt_layer_norm(m->xl, m->lnf_g, m->lnf_b, (float)GPT_LN_EPS, m->hf, m->meanf,
                         m->rstdf));
    mm(CLT_NO_TRANS, CLT_NO_TRANS, N, V, C, m->hf, 0, m->p, l->wlm, m->logits, 0, NULL);
    clt_cross_entropy_params ce;
    clt_cross_entropy_params_init(&ce);
    TU_OK(clt_cross_entropy(m->logits, m->targets, &ce, m->loss, m->dlogits));

    /* backward */
    mm(CLT_TRANS, CLT_NO_TRANS, C, V, N, m->hf, 0, m->dlogits, 0, m->g, l->wlm, NULL);
    mm(CLT_NO_TRANS, CLT_TRANS, N, C, V, m->dlogits, 0, m->p, l->wlm, m->dh, 0, NULL);
    TU_OK(clt_layer_norm_backward(m->dh, m->xl, m->lnf_g, m->meanf, m->rstdf, m->dx, m->dlnf_g,
                                  m->dlnf_b));
    for (int i = c->layers; i-- > 0;) {
        const gpt_layer_layout *y = &l->layer[i];
        mm(CLT_TRANS, CLT_NO_TRANS, 4 * C, C, N, m->L[i].u, 0, m->dx, 0, m->g, y->w2, NULL);
        col_sum(m, m->dx, N, C, y->b2);
        clt_gemm_epilogue_init(&ep);
        ep.dact_y = m->L[i].u;
        ep.dact = CLT_RELU;
        ep.lddy = 4 * C;
        mm(CLT_NO_TRANS, CLT_TRANS, N, 4 * C, C, m->dx, 0, m->p, y->w2, m->du, 0, &ep);
        mm(CLT_TRANS, CLT_NO_TRANS, C, 4 * C, N, m->L[i].h2, 0, m->du, 0, m->g, y->w1, NULL);
        col_sum(m, m->du, N, 4 * C, y->b1);
        mm(CLT_NO_TRANS, CLT_TRANS, N, C, 4 * C, m->du, 0, m->p, y->w1, m->dh, 0, NULL);
        TU_OK(clt_layer_norm_backward(m->dh, m->L[i].xm, m->L[i].ln2_g, m->L[i].mean2,
                                      m->L[i].rstd2, m->dtmp, m->L[i].dln2_g, m->L[i].dln2_b));
        TU_OK(clt_add(m->dx, m->dtmp, m->dx)); /* d(xm) */
        mm(CLT_TRANS, CLT_NO_TRANS, C, C, N, m->L[i].y, 0, m->dx, 0, m->g, y->wo, NULL);
        col_sum(m, m->dx, N, C, y->bo);
        mm(CLT_NO_TRANS, CLT_TRANS, N, C, C, m->dx, 0, m->p, y->wo, m->dyatt, 0, NULL);
        TU_OK(clt_permute(m->dyatt, swap12, m->datt));
        TU_OK(clt_attention_backward(m->L[i].q, m->L[i].k, m->L[i].v, m->L[i].att, m->L[i].lse,
                                     m->datt, &att, m->dq, m->dk, m->dv));
        TU_OK(clt_permute(m->dqkvp, from_heads, m->dqkv));
        mm(CLT_TRANS, CLT_NO_TRANS, C, 3 * C, N, m->L[i].h1, 0, m->dqkv, 0, m->g, y->wqkv, NULL);
        col_sum(m, m->dqkv, N, 3 * C, y->bqkv);
        mm(CLT_NO_TRANS, CLT_TRANS, N, C, 3 * C, m->dqkv, 0, m->p, y->wqkv, m->dh, 0, NULL);
        TU_OK(clt_layer_norm_backward(m->dh, m->L[i].x, m->L[i].ln1_g, m->L[i].mean1,
                                      m->L[i].rstd1, m->dtmp, m->L[i].dln1_g, m->L[i].dln1_b));
        TU_OK(clt_add(m->dx, m->dtmp, m->dx)); /* d(block input) */
    }
    TU_OK(clt_embedding_backward(m->ids, m->dx, CLT_EMBEDDING_GRAD_DETERMINISTIC, 0, m->dwte));
    /* the position table's gradient: dx summed over the batch */
    mm(CLT_NO_TRANS, CLT_NO_TRANS, 1, T * C, B, m->ones, 0, m->dx, 0, m->g, l->wpe, NULL);
    clt_sgd_params sgd;
    clt_sgd_params_init(&sgd);
    sgd.lr = lr;
    TU_OK(clt_sgd_step(m->p, m->g, NULL, &sgd, step));
    float loss = 0.0f;
    TU_OK(clt_tensor_read(m->loss, &loss, sizeof loss));
    return loss;
}

/* Next-token data: each sequence follows perm from a random start. */
static void make_data(const gpt_config *c, int32_t *ids, int32_t *targets)
{
    int32_t *perm = malloc((size_t)c->vocab * sizeof(int32_t));
    ck_assert_ptr_nonnull(perm);
    for (int i = 0; i < c->vocab; i++)
        perm[i] = i;
    for (int i = c->vocab - 1; i > 0; i--) {
        int j = (int)(tu_rng_next() % (uint64_t)(i + 1));
        int32_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (int b = 0; b < c->batch; b++) {
        int32_t tok = (int32_t)(tu_rng_next() % (uint64_t)c->vocab);
        for (int t = 0; t < c->seq; t++) {
            ids[b * c->seq + t] = tok;
            tok = perm[tok];
            targets[b * c->seq + t] = tok;
        }
    }
    free(perm);
}

START_TEST(test_gpt_trains_like_reference)
{
    const gpt_config c = {512, 128, 4, 2, 2, 128};
    gpt_layout l;
    gpt_layout_of(&c, &l);
    float *params = malloc(l.total * sizeof(float));
    double *ref = malloc(l.total * sizeof(double));
    int32_t *ids = malloc((size_t)(c.batch * c.seq) * 4), *targets = malloc((size_t)(c.batch * c.seq) * 4);
    ck_assert(params && ref && ids && targets);
    gpt_init_params(&c, tu_rng_next(), params);
    for (size_t i = 0; i < l.total; i++)
        ref[i] = params[i];
    make_data(&c, ids, targets);
    clt_context *ctx = tu_context();
    gpt_dev m;
    gpt_dev_init(&m, ctx, &c, params, ids, targets);
    double first = 0.0, last = 0.0, worst = 0.0;
    double *synced = malloc(l.total * sizeof(double)), worst_sync = 0.0;
    ck_assert_ptr_nonnull(synced);
    for (int s = 1; s <= GPT_STEPS; s++) {
        int sync = s % SYNC_EVERY == 0;
        if (sync) {
            TU_OK(clt_tensor_read(m.p, params, l.total * sizeof(float)));
            for (size_t i = 0; i < l.total; i++)
                synced[i] = params[i];
        }
        float got = gpt_dev_step(&m, (float)GPT_LR, s);
        double want = ref_gpt_step(&c, ref, ids, targets, GPT_LR);
        double rel = fabs(got - want) / want;
        worst = rel > worst ? rel : worst;
        if (getenv("GPT_TRACE"))
            printf("step %d: %.7f %.7f %.2e\n", s, got, want, rel);
        double tol = s <= EXACT_STEPS ? LOSS_TOL_EXACT : LOSS_TOL_FREE;
        ck_assert_msg(rel <= tol, "step %d: loss %.7g, reference %.7g (relative %.3g, allowed %.3g)",
                      s, got, want, rel, tol);
        if (sync) {
            double want_sync = ref_gpt_step(&c, synced, ids, targets, GPT_LR);
            double rel_sync = fabs(got - want_sync) / want_sync;
            worst_sync = rel_sync > worst_sync ? rel_sync : worst_sync;
            ck_assert_msg(rel_sync <= LOSS_TOL_EXACT,
                          "step %d: loss %.7g, reference from the same weights %.7g (relative %.3g)",
                          s, got, want_sync, rel_sync);
        }
        if (s == 1)
            first = got;
        last = got;
    }
    printf("gpt: loss %.4f -> %.4f over %d steps; worst relative difference %.2e free-running, "
           "%.2e resynced\n", first, last, GPT_STEPS, worst, worst_sync);
    ck_assert_msg(last < LOSS_FALL * first, "loss did not fall: %.5g -> %.5g", first, last);
    gpt_dev_free(&m);
    tu_context_free(ctx);
    free(params), free(ref), free(synced), free(ids), free(targets);
}
END_TEST

Suite *gpt_suite(void)
{
    Suite *s = suite_create("gpt");
    TCase *tc = tcase_create("gpt");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_gpt_trains_like_reference);
    suite_add_tcase(s, tc);
    return s;
}
