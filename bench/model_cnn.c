/* The CNN on the device (bench/model_cnn.h): parameter layout and initial weights, the tensors of
 * one model, and the ops of a training step. */
#include "model_cnn.h"

#include <math.h>
#include <stdlib.h>

#include "model_tensors.h"

#define SH(...) ((const int64_t[]){__VA_ARGS__})

void cnn_layout_of(cnn_layout *l)
{
    size_t at = 0;
#define TAKE(f, n) (l->f = at, at += (n))
    TAKE(w1, CNN_C1 * CNN_IN_C * 9);
    TAKE(g1, CNN_C1);
    TAKE(b1, CNN_C1);
    TAKE(w2, CNN_C1 * CNN_C1 * 9);
    TAKE(g2, CNN_C1);
    TAKE(b2, CNN_C1);
    TAKE(w3, CNN_C1 * CNN_C1 * 9);
    TAKE(g3, CNN_C1);
    TAKE(b3, CNN_C1);
    TAKE(w4, CNN_C4 * CNN_C1 * 9);
    TAKE(g4, CNN_C4);
    TAKE(b4, CNN_C4);
    TAKE(wfc, CNN_C4 * CNN_CLASSES);
    TAKE(bfc, CNN_CLASSES);
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

void cnn_init_params(uint64_t seed, float *p)
{
    cnn_layout l;
    cnn_layout_of(&l);
    uint64_t s = seed;
    const size_t w[4] = {l.w1, l.w2, l.w3, l.w4}, g[4] = {l.g1, l.g2, l.g3, l.g4};
    const size_t b[4] = {l.b1, l.b2, l.b3, l.b4};
    const int cin[4] = {CNN_IN_C, CNN_C1, CNN_C1, CNN_C1}, cout[4] = {CNN_C1, CNN_C1, CNN_C1, CNN_C4};
    for (int i = 0; i < 4; i++) {
        double sd = sqrt(2.0 / (cin[i] * 9));
        for (int e = 0; e < cout[i] * cin[i] * 9; e++)
            p[w[i] + (size_t)e] = (float)(sd * normal(&s));
        for (int c = 0; c < cout[i]; c++) {
            p[g[i] + (size_t)c] = 1.0f;
            p[b[i] + (size_t)c] = 0.0f;
        }
    }
    for (int e = 0; e < CNN_C4 * CNN_CLASSES; e++)
        p[l.wfc + (size_t)e] = (float)(normal(&s) / sqrt((double)CNN_C4));
    for (int e = 0; e < CNN_CLASSES; e++)
        p[l.bfc + (size_t)e] = 0.0f;
}

struct cnn_model {
    clt_context *ctx;
    cnn_layout l;
    clt_tensor *p, *g, *x, *labels, *ones;
    clt_tensor *w[4], *gam[4], *bet[4], *dw[4], *dgam[4], *dbet[4];
    clt_tensor *c1, *y1, *a1, *p1, *idx, *c2, *y2, *a2, *c3, *s3, *a3, *c4, *y4, *a4;
    clt_tensor *pooled, *logits;
    clt_tensor *mean[4], *rstd[4], *loss, *dlogits, *bfc;
    clt_tensor *dpooled, *d4, *d3, *d2, *dp1, *da1, *dc[4];
    model_tensors reg; /* every tensor, and the first failure while building */
    int batch;
};


static void build(cnn_model *m, clt_context *ctx, const float *params, const float *x,
                  const int32_t *labels)
{
    m->ctx = ctx;
    model_tensors_init(&m->reg, ctx);
    cnn_layout_of(&m->l);
    const cnn_layout *l = &m->l;
    int64_t B = m->batch, total = (int64_t)l->total, C1 = CNN_C1, C4 = CNN_C4;
    m->p = model_tensor(&m->reg, CLT_F32, 1, &total);
    m->g = model_tensor(&m->reg, CLT_F32, 1, &total);
    m->x = model_tensor(&m->reg, CLT_F32, 4, SH(B, CNN_IN_C, CNN_HW, CNN_HW));
    m->labels = model_tensor(&m->reg, CLT_I32, 1, &B);
    m->ones = model_tensor(&m->reg, CLT_F32, 1, &B);
    if (m->reg.status == CLT_SUCCESS &&
        ((m->reg.status = clt_tensor_write(m->p, params, l->total * sizeof(float))) ||
         (m->reg.status = clt_tensor_write(m->x, x, (size_t)(B * CNN_IN_C * CNN_HW * CNN_HW) * 4)) ||
         (m->reg.status = clt_tensor_write(m->labels, labels, (size_t)B * sizeof(int32_t))) ||
         (m->reg.status = clt_tensor_fill(m->ones, 1.0))))
        return;
    const size_t wo[4] = {l->w1, l->w2, l->w3, l->w4}, go[4] = {l->g1, l->g2, l->g3, l->g4};
    const size_t bo[4] = {l->b1, l->b2, l->b3, l->b4};
    const int64_t ci[4] = {CNN_IN_C, C1, C1, C1}, co[4] = {C1, C1, C1, C4};
    for (int i = 0; i < 4; i++) {
        m->w[i] = model_view(&m->reg, m->p, wo[i], 4, SH(co[i], ci[i], 3, 3));
        m->dw[i] = model_view(&m->reg, m->g, wo[i], 4, SH(co[i], ci[i], 3, 3));
        m->gam[i] = model_view(&m->reg, m->p, go[i], 1, &co[i]);
        m->dgam[i] = model_view(&m->reg, m->g, go[i], 1, &co[i]);
        m->bet[i] = model_view(&m->reg, m->p, bo[i], 1, &co[i]);
        m->dbet[i] = model_view(&m->reg, m->g, bo[i], 1, &co[i]);
        m->mean[i] = model_tensor(&m->reg, CLT_F32, 1, &co[i]);
        m->rstd[i] = model_tensor(&m->reg, CLT_F32, 1, &co[i]);
    }
    m->bfc = model_view(&m->reg, m->p, l->bfc, 1, SH(CNN_CLASSES));
    const int64_t *big = SH(B, C1, CNN_HW, CNN_HW), *mid = SH(B, C1, CNN_HW / 2, CNN_HW / 2);
    const int64_t *small = SH(B, C4, 4, 4);
    m->c1 = model_tensor(&m->reg, CLT_F32, 4, big);
    m->y1 = model_tensor(&m->reg, CLT_F32, 4, big);
    m->a1 = model_tensor(&m->reg, CLT_F32, 4, big);
    m->p1 = model_tensor(&m->reg, CLT_F32, 4, mid);
    m->idx = model_tensor(&m->reg, CLT_I32, 4, mid);
    m->c2 = model_tensor(&m->reg, CLT_F32, 4, mid);
    m->y2 = model_tensor(&m->reg, CLT_F32, 4, mid);
    m->a2 = model_tensor(&m->reg, CLT_F32, 4, mid);
    m->c3 = model_tensor(&m->reg, CLT_F32, 4, mid);
    m->s3 = model_tensor(&m->reg, CLT_F32, 4, mid);
    m->a3 = model_tensor(&m->reg, CLT_F32, 4, mid);
    m->c4 = model_tensor(&m->reg, CLT_F32, 4, small);
    m->y4 = model_tensor(&m->reg, CLT_F32, 4, small);
    m->a4 = model_tensor(&m->reg, CLT_F32, 4, small);
    m->pooled = model_tensor(&m->reg, CLT_F32, 2, SH(B, C4));
    m->logits = model_tensor(&m->reg, CLT_F32, 2, SH(B, CNN_CLASSES));
    m->dlogits = model_tensor(&m->reg, CLT_F32, 2, SH(B, CNN_CLASSES));
    m->loss = model_tensor(&m->reg, CLT_F32, 1, SH(1));
    m->dpooled = model_tensor(&m->reg, CLT_F32, 2, SH(B, C4));
    m->d4 = model_tensor(&m->reg, CLT_F32, 4, small);
    m->dc[3] = model_tensor(&m->reg, CLT_F32, 4, small);
    m->d3 = model_tensor(&m->reg, CLT_F32, 4, mid);
    m->dc[2] = model_tensor(&m->reg, CLT_F32, 4, mid);
    m->d2 = model_tensor(&m->reg, CLT_F32, 4, mid);
    m->dc[1] = model_tensor(&m->reg, CLT_F32, 4, mid);
    m->dp1 = model_tensor(&m->reg, CLT_F32, 4, mid);
    m->da1 = model_tensor(&m->reg, CLT_F32, 4, big);
    m->dc[0] = model_tensor(&m->reg, CLT_F32, 4, big);
}

void cnn_model_free(cnn_model *m)
{
    if (!m)
        return;
    model_tensors_free(&m->reg);
    free(m);
}

clt_status cnn_model_create(clt_context *ctx, int batch, const float *params, const float *x,
                            const int32_t *labels, cnn_model **out)
{
    *out = NULL;
    if (batch < 2)
        return CLT_ERR_INVALID_ARGUMENT;
    cnn_model *m = calloc(1, sizeof *m);
    if (!m)
        return CLT_ERR_OUT_OF_HOST_MEMORY;
    m->batch = batch;
    build(m, ctx, params, x, labels);
    if (m->reg.status != CLT_SUCCESS) {
        clt_status st = m->reg.status;
        cnn_model_free(m);
        return st;
    }
    *out = m;
    return CLT_SUCCESS;
}

const clt_tensor *cnn_model_loss(const cnn_model *m) { return m->loss; }
const clt_tensor *cnn_model_params(const cnn_model *m) { return m->p; }

#define TRY(call)                                                                                  \
    do {                                                                                           \
        clt_status st_ = (call);                                                                   \
        if (st_ != CLT_SUCCESS)                                                                    \
            return st_;                                                                            \
    } while (0)

clt_status cnn_model_step(cnn_model *m, float lr, int64_t step)
{
    const cnn_layout *l = &m->l;
    int64_t B = m->batch, C4 = CNN_C4, K = CNN_CLASSES;
    clt_conv2d_params cp, cp2;
    clt_conv2d_params_init(&cp);
    cp.pad_top = cp.pad_bottom = cp.pad_left = cp.pad_right = 1;
    cp2 = cp;
    cp2.stride_h = cp2.stride_w = 2;
    clt_batch_norm_params bn;
    clt_batch_norm_params_init(&bn);
    clt_pool2d_params pool;
    clt_pool2d_params_init(&pool, 2);

    TRY(clt_conv2d(m->x, m->w[0], NULL, &cp, CLT_IDENTITY, 0.0f, m->c1));
    TRY(clt_batch_norm(m->c1, m->gam[0], m->bet[0], NULL, NULL, &bn, m->y1, m->mean[0],
                         m->rstd[0]));
    TRY(clt_unary(CLT_RELU, m->y1, 0.0f, m->a1));
    TRY(clt_max_pool2d(m->a1, &pool, m->p1, m->idx));
    TRY(clt_conv2d(m->p1, m->w[1], NULL, &cp, CLT_IDENTITY, 0.0f, m->c2));
    TRY(clt_batch_norm(m->c2, m->gam[1], m->bet[1], NULL, NULL, &bn, m->y2, m->mean[1],
                         m->rstd[1]));
    TRY(clt_unary(CLT_RELU, m->y2, 0.0f, m->a2));
    TRY(clt_conv2d(m->a2, m->w[2], NULL, &cp, CLT_IDENTITY, 0.0f, m->c3));
    TRY(clt_batch_norm(m->c3, m->gam[2], m->bet[2], NULL, NULL, &bn, m->s3, m->mean[2],
                         m->rstd[2]));
    TRY(clt_add(m->s3, m->p1, m->s3)); /* the skip connection */
    TRY(clt_unary(CLT_RELU, m->s3, 0.0f, m->a3));
    TRY(clt_conv2d(m->a3, m->w[3], NULL, &cp2, CLT_IDENTITY, 0.0f, m->c4));
    TRY(clt_batch_norm(m->c4, m->gam[3], m->bet[3], NULL, NULL, &bn, m->y4, m->mean[3],
                         m->rstd[3]));
    TRY(clt_unary(CLT_RELU, m->y4, 0.0f, m->a4));
    TRY(clt_global_avg_pool2d(m->a4, m->pooled));
    clt_gemm_epilogue ep;
    clt_gemm_epilogue_init(&ep);
    ep.bias = m->bfc;
    ep.bias_mode = CLT_BIAS_PER_COLUMN;
    TRY(clt_gemm(CLT_NO_TRANS, CLT_NO_TRANS, B, K, C4, 1.0f, m->pooled, 0, C4, m->p,
                   (int64_t)l->wfc, K, 0.0f, m->logits, 0, K, &ep));
    clt_cross_entropy_params ce;
    clt_cross_entropy_params_init(&ce);
    TRY(clt_cross_entropy(m->logits, m->labels, &ce, m->loss, m->dlogits));

    /* backward */
    TRY(clt_gemm(CLT_TRANS, CLT_NO_TRANS, C4, K, B, 1.0f, m->pooled, 0, C4, m->dlogits, 0, K,
                   0.0f, m->g, (int64_t)l->wfc, K, NULL));
    TRY(clt_gemm(CLT_NO_TRANS, CLT_NO_TRANS, 1, K, B, 1.0f, m->ones, 0, B, m->dlogits, 0, K,
                   0.0f, m->g, (int64_t)l->bfc, K, NULL));
    TRY(clt_gemm(CLT_NO_TRANS, CLT_TRANS, B, C4, K, 1.0f, m->dlogits, 0, K, m->p,
                   (int64_t)l->wfc, K, 0.0f, m->dpooled, 0, C4, NULL));
    TRY(clt_global_avg_pool2d_backward(m->dpooled, m->d4));
    TRY(clt_unary_backward(CLT_RELU, 0.0f, NULL, m->a4, m->d4, m->d4));
    TRY(clt_batch_norm_backward(m->d4, m->c4, m->gam[3], m->mean[3], m->rstd[3], 1, m->dc[3],
                                  m->dgam[3], m->dbet[3]));
    TRY(clt_conv2d_backward_weight(m->dc[3], m->a3, &cp2, m->dw[3]));
    TRY(clt_conv2d_backward_input(m->dc[3], m->w[3], &cp2, m->d3));
    TRY(clt_unary_backward(CLT_RELU, 0.0f, NULL, m->a3, m->d3, m->d3));
    TRY(clt_batch_norm_backward(m->d3, m->c3, m->gam[2], m->mean[2], m->rstd[2], 1, m->dc[2],
                                  m->dgam[2], m->dbet[2]));
    TRY(clt_conv2d_backward_weight(m->dc[2], m->a2, &cp, m->dw[2]));
    TRY(clt_conv2d_backward_input(m->dc[2], m->w[2], &cp, m->d2));
    TRY(clt_unary_backward(CLT_RELU, 0.0f, NULL, m->a2, m->d2, m->d2));
    TRY(clt_batch_norm_backward(m->d2, m->c2, m->gam[1], m->mean[1], m->rstd[1], 1, m->dc[1],
                                  m->dgam[1], m->dbet[1]));
    TRY(clt_conv2d_backward_weight(m->dc[1], m->p1, &cp, m->dw[1]));
    TRY(clt_conv2d_backward_input(m->dc[1], m->w[1], &cp, m->dp1));
    TRY(clt_add(m->dp1, m->d3, m->dp1)); /* plus the skip connection's gradient */
    TRY(clt_max_pool2d_backward(m->dp1, NULL, m->idx, &pool, m->da1));
    TRY(clt_unary_backward(CLT_RELU, 0.0f, NULL, m->a1, m->da1, m->da1));
    TRY(clt_batch_norm_backward(m->da1, m->c1, m->gam[0], m->mean[0], m->rstd[0], 1, m->dc[0],
                                  m->dgam[0], m->dbet[0]));
    TRY(clt_conv2d_backward_weight(m->dc[0], m->x, &cp, m->dw[0]));
    clt_sgd_params sgd;
    clt_sgd_params_init(&sgd);
    sgd.lr = lr;
    TRY(clt_sgd_step(m->p, m->g, NULL, &sgd, step));
    return CLT_SUCCESS;
}

