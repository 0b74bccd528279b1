/* The GPT model on the device (bench/model_gpt.h): parameter layout and initial weights, the
 * tensors of one model, and the ops of a training step. */
#include "model_gpt.h"

#include <math.h>
#include <stdlib.h>

#include "model_tensors.h"

#define SH(...) ((const int64_t[]){__VA_ARGS__})

void gpt_layout_of(const gpt_config *c, gpt_layout *l)
{
    size_t d = (size_t)c->d, at = 0;
#define TAKE(field, n) (l->field = at, at += (n))
    TAKE(wte, (size_t)c->vocab * d);
    TAKE(wpe, (size_t)c->seq * d);
    for (int i = 0; i < c->layers; i++) {
        TAKE(layer[i].ln1_g, d);
        TAKE(layer[i].ln1_b, d);
        TAKE(layer[i].wqkv, d * 3 * d);
        TAKE(layer[i].bqkv, 3 * d);
        TAKE(layer[i].wo, d * d);
        TAKE(layer[i].bo, d);
        TAKE(layer[i].ln2_g, d);
        TAKE(layer[i].ln2_b, d);
        TAKE(layer[i].w1, d * 4 * d);
        TAKE(layer[i].b1, 4 * d);
        TAKE(layer[i].w2, 4 * d * d);
        TAKE(layer[i].b2, d);
    }
    TAKE(lnf_g, d);
    TAKE(lnf_b, d);
    TAKE(wlm, d * (size_t)c->vocab);
#undef TAKE
    l->total = at;
}

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double normal(uint64_t *s)
{
    double u1 = ((double)(splitmix(s) >> 11) + 0.5) / 9007199254740992.0;
    double u2 = (double)(splitmix(s) >> 11) / 9007199254740992.0;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

static void fill(float *p, size_t n, double sd, uint64_t *s)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (float)(sd * normal(s));
}

static void constant(float *p, size_t n, float v)
{
    for (size_t i = 0; i < n; i++)
        p[i] = v;
}

void gpt_init_params(const gpt_config *c, uint64_t seed, float *params)
{
    gpt_layout l;
    gpt_layout_of(c, &l);
    size_t d = (size_t)c->d;
    double proj_sd = 0.02 / sqrt(2.0 * c->layers);
    uint64_t s = seed;
    fill(params + l.wte, (size_t)c->vocab * d, 0.02, &s);
    fill(params + l.wpe, (size_t)c->seq * d, 0.02, &s);
    for (int i = 0; i < c->layers; i++) {
        const gpt_layer_layout *y = &l.layer[i];
        constant(params + y->ln1_g, d, 1.0f);
        constant(params + y->ln1_b, d, 0.0f);
        fill(params + y->wqkv, d * 3 * d, 0.02, &s);
        constant(params + y->bqkv, 3 * d, 0.0f);
        fill(params + y->wo, d * d, proj_sd, &s);
        constant(params + y->bo, d, 0.0f);
        constant(params + y->ln2_g, d, 1.0f);
        constant(params + y->ln2_b, d, 0.0f);
        fill(params + y->w1, d * 4 * d, 0.02, &s);
        constant(params + y->b1, 4 * d, 0.0f);
        fill(params + y->w2, 4 * d * d, proj_sd, &s);
        constant(params + y->b2, d, 0.0f);
    }
    constant(params + l.lnf_g, d, 1.0f);
    constant(params + l.lnf_b, d, 0.0f);
    fill(params + l.wlm, d * (size_t)c->vocab, 0.02, &s);
}

/* The device model: the flat parameter and gradient tensors with views where an op needs a tensor,
 * and every activation the backward pass reads. */
struct gpt_model {
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
    model_tensors reg; /* every tensor, and the first failure while building */
};



/* Allocates everything; the first failure is left in m->reg.status. */
static void build(gpt_model *m, clt_context *ctx, const gpt_config *c, const float *params,
                  const int32_t *ids, const int32_t *targets)
{
    m->c = *c;
    m->ctx = ctx;
    model_tensors_init(&m->reg, ctx);
    gpt_layout_of(c, &m->l);
    const gpt_layout *l = &m->l;
    int64_t B = c->batch, T = c->seq, C = c->d, H = c->heads, Dh = C / H, V = c->vocab;
    int64_t N = B * T, total = (int64_t)l->total;
    m->p = model_tensor(&m->reg, CLT_F32, 1, &total);
    m->g = model_tensor(&m->reg, CLT_F32, 1, &total);
    m->ones = model_tensor(&m->reg, CLT_F32, 1, &N);
    m->ids = model_tensor(&m->reg, CLT_I32, 2, SH(B, T));
    m->targets = model_tensor(&m->reg, CLT_I32, 1, &N);
    if (m->reg.status == CLT_SUCCESS &&
        ((m->reg.status = clt_tensor_write(m->p, params, l->total * sizeof(float))) ||
         (m->reg.status = clt_tensor_fill(m->ones, 1.0)) ||
         (m->reg.status = clt_tensor_write(m->ids, ids, (size_t)N * 4)) ||
         (m->reg.status = clt_tensor_write(m->targets, targets, (size_t)N * 4))))
        return;
    m->wte = model_view(&m->reg, m->p, l->wte, 2, SH(V, C));
    m->dwte = model_view(&m->reg, m->g, l->wte, 2, SH(V, C));
    m->wpe = model_view(&m->reg, m->p, l->wpe, 2, SH(T, C));
    m->lnf_g = model_view(&m->reg, m->p, l->lnf_g, 1, &C);
    m->lnf_b = model_view(&m->reg, m->p, l->lnf_b, 1, &C);
    m->dlnf_g = model_view(&m->reg, m->g, l->lnf_g, 1, &C);
    m->dlnf_b = model_view(&m->reg, m->g, l->lnf_b, 1, &C);
    int64_t C3 = 3 * C, C4 = 4 * C;
    for (int i = 0; i < c->layers; i++) {
        const gpt_layer_layout *y = &l->layer[i];
        m->L[i].ln1_g = model_view(&m->reg, m->p, y->ln1_g, 1, &C);
        m->L[i].ln1_b = model_view(&m->reg, m->p, y->ln1_b, 1, &C);
        m->L[i].dln1_g = model_view(&m->reg, m->g, y->ln1_g, 1, &C);
        m->L[i].dln1_b = model_view(&m->reg, m->g, y->ln1_b, 1, &C);
        m->L[i].ln2_g = model_view(&m->reg, m->p, y->ln2_g, 1, &C);
        m->L[i].ln2_b = model_view(&m->reg, m->p, y->ln2_b, 1, &C);
        m->L[i].dln2_g = model_view(&m->reg, m->g, y->ln2_g, 1, &C);
        m->L[i].dln2_b = model_view(&m->reg, m->g, y->ln2_b, 1, &C);
        m->L[i].bqkv = model_view(&m->reg, m->p, y->bqkv, 1, &C3);
        m->L[i].bo = model_view(&m->reg, m->p, y->bo, 1, &C);
        m->L[i].b1 = model_view(&m->reg, m->p, y->b1, 1, &C4);
        m->L[i].b2 = model_view(&m->reg, m->p, y->b2, 1, &C);
        m->L[i].x = model_tensor(&m->reg, CLT_F32, 3, SH(B, T, C));
        m->L[i].h1 = model_tensor(&m->reg, CLT_F32, 3, SH(B, T, C));
        m->L[i].mean1 = model_tensor(&m->reg, CLT_F32, 1, &N);
        m->L[i].rstd1 = model_tensor(&m->reg, CLT_F32, 1, &N);
        m->L[i].qkv = model_tensor(&m->reg, CLT_F32, 5, SH(B, T, 3, H, Dh));
        m->L[i].qkvp = model_tensor(&m->reg, CLT_F32, 5, SH(3, B, H, T, Dh));
        size_t part = (size_t)(B * H * T * Dh);
        m->L[i].q = model_view(&m->reg, m->L[i].qkvp, 0, 4, SH(B, H, T, Dh));
        m->L[i].k = model_view(&m->reg, m->L[i].qkvp, part, 4, SH(B, H, T, Dh));
        m->L[i].v = model_view(&m->reg, m->L[i].qkvp, 2 * part, 4, SH(B, H, T, Dh));
        m->L[i].att = model_tensor(&m->reg, CLT_F32, 4, SH(B, H, T, Dh));
        m->L[i].lse = model_tensor(&m->reg, CLT_F32, 3, SH(B, H, T));
        m->L[i].y = model_tensor(&m->reg, CLT_F32, 4, SH(B, T, H, Dh));
        m->L[i].xm = model_tensor(&m->reg, CLT_F32, 3, SH(B, T, C));
        m->L[i].h2 = model_tensor(&m->reg, CLT_F32, 3, SH(B, T, C));
        m->L[i].mean2 = model_tensor(&m->reg, CLT_F32, 1, &N);
        m->L[i].rstd2 = model_tensor(&m->reg, CLT_F32, 1, &N);
        m->L[i].u = model_tensor(&m->reg, CLT_F32, 2, SH(N, C4));
    }
    m->xl = model_tensor(&m->reg, CLT_F32, 3, SH(B, T, C));
    m->tok = model_tensor(&m->reg, CLT_F32, 3, SH(B, T, C));
    m->hf = model_tensor(&m->reg, CLT_F32, 3, SH(B, T, C));
    m->meanf = model_tensor(&m->reg, CLT_F32, 1, &N);
    m->rstdf = model_tensor(&m->reg, CLT_F32, 1, &N);
    m->logits = model_tensor(&m->reg, CLT_F32, 2, SH(N, V));
    m->dlogits = model_tensor(&m->reg, CLT_F32, 2, SH(N, V));
    m->loss = model_tensor(&m->reg, CLT_F32, 1, SH(1));
    m->dx = model_tensor(&m->reg, CLT_F32, 3, SH(B, T, C));
    m->dtmp = model_tensor(&m->reg, CLT_F32, 3, SH(B, T, C));
    m->dh = model_tensor(&m->reg, CLT_F32, 3, SH(B, T, C));
    m->du = model_tensor(&m->reg, CLT_F32, 2, SH(N, C4));
    m->dyatt = model_tensor(&m->reg, CLT_F32, 4, SH(B, T, H, Dh));
    m->datt = model_tensor(&m->reg, CLT_F32, 4, SH(B, H, T, Dh));
    m->dqkvp = model_tensor(&m->reg, CLT_F32, 5, SH(3, B, H, T, Dh));
    size_t part = (size_t)(B * H * T * Dh);
    m->dq = model_view(&m->reg, m->dqkvp, 0, 4, SH(B, H, T, Dh));
    m->dk = model_view(&m->reg, m->dqkvp, part, 4, SH(B, H, T, Dh));
    m->dv = model_view(&m->reg, m->dqkvp, 2 * part, 4, SH(B, H, T, Dh));
    m->dqkv = model_tensor(&m->reg, CLT_F32, 5, SH(B, T, 3, H, Dh));
}

void gpt_model_free(gpt_model *m)
{
    if (!m)
        return;
    model_tensors_free(&m->reg);
    free(m);
}

clt_status gpt_model_create(clt_context *ctx, const gpt_config *c, const float *params,
                            const int32_t *ids, const int32_t *targets, gpt_model **out)
{
    *out = NULL;
    if (c->layers < 1 || c->layers > GPT_MAX_LAYERS || c->d % c->heads != 0)
        return CLT_ERR_INVALID_ARGUMENT;
    gpt_model *m = calloc(1, sizeof *m);
    if (!m)
        return CLT_ERR_OUT_OF_HOST_MEMORY;
    build(m, ctx, c, params, ids, targets);
    if (m->reg.status != CLT_SUCCESS) {
        clt_status st = m->reg.status;
        gpt_model_free(m);
        return st;
    }
    *out = m;
    return CLT_SUCCESS;
}

const clt_tensor *gpt_model_loss(const gpt_model *m) { return m->loss; }
const clt_tensor *gpt_model_params(const gpt_model *m) { return m->p; }

/* C[m, n] = op(A) op(B) (+ epilogue) with A, B, C at element offsets, leading dims from the
 * stored (untransposed) shapes. */
static clt_status mm(clt_transpose ta, clt_transpose tb, int64_t m, int64_t n, int64_t k,
                     const clt_tensor *a, size_t ao, const clt_tensor *b, size_t bo, clt_tensor *c,
                     size_t co, const clt_gemm_epilogue *ep)
{
    int64_t lda = ta == CLT_TRANS ? m : k, ldb = tb == CLT_TRANS ? k : n;
    return clt_gemm(ta, tb, m, n, k, 1.0f, a, (int64_t)ao, lda, b, (int64_t)bo, ldb, 0.0f, c,
                    (int64_t)co, n, ep);
}

/* G[off .. off + n) = column sums of x [rows, n] (ones^T x). */
static clt_status col_sum(gpt_model *m, const clt_tensor *x, int64_t rows, int64_t n, size_t off)
{
    return mm(CLT_NO_TRANS, CLT_NO_TRANS, 1, n, rows, m->ones, 0, x, 0, m->g, off, NULL);
}

#define TRY(call)                                                                                  \
    do {                                                                                           \
        clt_status st_ = (call);                                                                   \
        if (st_ != CLT_SUCCESS)                                                                    \
            return st_;                                                                            \
    } while (0)

clt_status gpt_model_step(gpt_model *m, float lr, int64_t step)
{
    const gpt_config *c = &m->c;
    const gpt_layout *l = &m->l;
    int64_t B = c->batch, T = c->seq, C = c->d, V = c->vocab, N = B * T;
    clt_attention_options att = clt_attention_options_default();
    att.causal = 1;
    const int to_heads[5] = {2, 0, 3, 1, 4}, from_heads[5] = {1, 3, 0, 2, 4};
    const int swap12[4] = {0, 2, 1, 3};
    clt_gemm_epilogue ep;

    TRY(clt_embedding(m->ids, m->wte, m->tok));
    TRY(clt_add(m->tok, m->wpe, m->L[0].x));
    for (int i = 0; i < c->layers; i++) {
        const gpt_layer_layout *y = &l->layer[i];
        clt_tensor *x_next = i + 1 < c->layers ? m->L[i + 1].x : m->xl;
        TRY(clt_layer_norm(m->L[i].x, m->L[i].ln1_g, m->L[i].ln1_b, (float)GPT_LN_EPS,
                             m->L[i].h1, m->L[i].mean1, m->L[i].rstd1));
        clt_gemm_epilogue_init(&ep);
        ep.bias = m->L[i].bqkv;
        ep.bias_mode = CLT_BIAS_PER_COLUMN;
        TRY(mm(CLT_NO_TRANS, CLT_NO_TRANS, N, 3 * C, C, m->L[i].h1, 0, m->p, y->wqkv, m->L[i].qkv, 0,
           &ep));
        TRY(clt_permute(m->L[i].qkv, to_heads, m->L[i].qkvp));
        TRY(clt_attention_forward(m->L[i].q, m->L[i].k, m->L[i].v, &att, m->L[i].att,
                                    m->L[i].lse));
        TRY(clt_permute(m->L[i].att, swap12, m->L[i].y));
        clt_gemm_epilogue_init(&ep);
        ep.bias = m->L[i].bo;
        ep.bias_mode = CLT_BIAS_PER_COLUMN;
        ep.residual = m->L[i].x;
        ep.ldr = C;
        TRY(mm(CLT_NO_TRANS, CLT_NO_TRANS, N, C, C, m->L[i].y, 0, m->p, y->wo, m->L[i].xm, 0, &ep));
        TRY(clt_layer_norm(m->L[i].xm, m->L[i].ln2_g, m->L[i].ln2_b, (float)GPT_LN_EPS,
                             m->L[i].h2, m->L[i].mean2, m->L[i].rstd2));
        clt_gemm_epilogue_init(&ep);
        ep.bias = m->L[i].b1;
        ep.bias_mode = CLT_BIAS_PER_COLUMN;
        ep.activation = CLT_RELU;
        TRY(mm(CLT_NO_TRANS, CLT_NO_TRANS, N, 4 * C, C, m->L[i].h2, 0, m->p, y->w1, m->L[i].u, 0, &ep));
        clt_gemm_epilogue_init(&ep);
        ep.bias = m->L[i].b2;
        ep.bias_mode = CLT_BIAS_PER_COLUMN;
        ep.residual = m->L[i].xm;
        ep.ldr = C;
        TRY(mm(CLT_NO_TRANS, CLT_NO_TRANS, N, C, 4 * C, m->L[i].u, 0, m->p, y->w2, x_next, 0, &ep));
    }
    TRY(clt_layer_norm(m->xl, m->lnf_g, m->lnf_b, (float)GPT_LN_EPS, m->hf, m->meanf,
                         m->rstdf));
    TRY(mm(CLT_NO_TRANS, CLT_NO_TRANS, N, V, C, m->hf, 0, m->p, l->wlm, m->logits, 0, NULL));
    clt_cross_entropy_params ce;
    clt_cross_entropy_params_init(&ce);
    TRY(clt_cross_entropy(m->logits, m->targets, &ce, m->loss, m->dlogits));

    /* backward */
    TRY(mm(CLT_TRANS, CLT_NO_TRANS, C, V, N, m->hf, 0, m->dlogits, 0, m->g, l->wlm, NULL));
    TRY(mm(CLT_NO_TRANS, CLT_TRANS, N, C, V, m->dlogits, 0, m->p, l->wlm, m->dh, 0, NULL));
    TRY(clt_layer_norm_backward(m->dh, m->xl, m->lnf_g, m->meanf, m->rstdf, m->dx, m->dlnf_g,
                                  m->dlnf_b));
    for (int i = c->layers; i-- > 0;) {
        const gpt_layer_layout *y = &l->layer[i];
        TRY(mm(CLT_TRANS, CLT_NO_TRANS, 4 * C, C, N, m->L[i].u, 0, m->dx, 0, m->g, y->w2, NULL));
        TRY(col_sum(m, m->dx, N, C, y->b2));
        clt_gemm_epilogue_init(&ep);
        ep.dact_y = m->L[i].u;
        ep.dact = CLT_RELU;
        ep.lddy = 4 * C;
        TRY(mm(CLT_NO_TRANS, CLT_TRANS, N, 4 * C, C, m->dx, 0, m->p, y->w2, m->du, 0, &ep));
        TRY(mm(CLT_TRANS, CLT_NO_TRANS, C, 4 * C, N, m->L[i].h2, 0, m->du, 0, m->g, y->w1, NULL));
        TRY(col_sum(m, m->du, N, 4 * C, y->b1));
        TRY(mm(CLT_NO_TRANS, CLT_TRANS, N, C, 4 * C, m->du, 0, m->p, y->w1, m->dh, 0, NULL));
        TRY(clt_layer_norm_backward(m->dh, m->L[i].xm, m->L[i].ln2_g, m->L[i].mean2,
                                      m->L[i].rstd2, m->dtmp, m->L[i].dln2_g, m->L[i].dln2_b));
        TRY(clt_add(m->dx, m->dtmp, m->dx)); /* d(xm) */
        TRY(mm(CLT_TRANS, CLT_NO_TRANS, C, C, N, m->L[i].y, 0, m->dx, 0, m->g, y->wo, NULL));
        TRY(col_sum(m, m->dx, N, C, y->bo));
        TRY(mm(CLT_NO_TRANS, CLT_TRANS, N, C, C, m->dx, 0, m->p, y->wo, m->dyatt, 0, NULL));
        TRY(clt_permute(m->dyatt, swap12, m->datt));
        TRY(clt_attention_backward(m->L[i].q, m->L[i].k, m->L[i].v, m->L[i].att, m->L[i].lse,
                                     m->datt, &att, m->dq, m->dk, m->dv));
        TRY(clt_permute(m->dqkvp, from_heads, m->dqkv));
        TRY(mm(CLT_TRANS, CLT_NO_TRANS, C, 3 * C, N, m->L[i].h1, 0, m->dqkv, 0, m->g, y->wqkv, NULL));
        TRY(col_sum(m, m->dqkv, N, 3 * C, y->bqkv));
        TRY(mm(CLT_NO_TRANS, CLT_TRANS, N, C, 3 * C, m->dqkv, 0, m->p, y->wqkv, m->dh, 0, NULL));
        TRY(clt_layer_norm_backward(m->dh, m->L[i].x, m->L[i].ln1_g, m->L[i].mean1,
                                      m->L[i].rstd1, m->dtmp, m->L[i].dln1_g, m->L[i].dln1_b));
        TRY(clt_add(m->dx, m->dtmp, m->dx)); /* d(block input) */
    }
    TRY(clt_embedding_backward(m->ids, m->dx, CLT_EMBEDDING_GRAD_DETERMINISTIC, 0, m->dwte));
    /* the position table's gradient: dx summed over the batch */
    TRY(mm(CLT_NO_TRANS, CLT_NO_TRANS, 1, T * C, B, m->ones, 0, m->dx, 0, m->g, l->wpe, NULL));
    clt_sgd_params sgd;
    clt_sgd_params_init(&sgd);
    sgd.lr = lr;
    TRY(clt_sgd_step(m->p, m->g, NULL, &sgd, step));
    return CLT_SUCCESS;
}

