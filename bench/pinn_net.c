/* The PINN of pinn_net.h. Layer l computes act[l+1] = act(act[l] W_l + b_l) with W_l [in, out]
 * row-major, so the backward of a layer with upstream gradient G [n, out] is
 *   [dW_l; db_l] = [act[l], 1]^T G  (one TN GEMM: W_l and b_l are one (in+1) x out block of the
 *                 flat parameters, and act[l] for l >= 1 is stored with a ones column after its
 *                 in columns, which the forward GEMMs skip (lda / ldc = ld[l] > in) and never
 *                 write);
 *                 layer 0's input comes from clt_fourier_features, contiguous, so there
 *                 dW_0 = act[0]^T G and db_0 = column sums of G (a clt_reduce over axis 0),
 *   G'   = (G W_l^T) * (1 - act[l]^2)  (one NT GEMM, tanh's backward fused: dact_y epilogue).
 * Launches per train step: forward 5, loss + its gradient 1, backward 2 + 2 + 2 + 2 (the first
 * layer needs no input gradient but its own bias reduction), Adam 1 = 15. */
#include "pinn_net.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PI 3.14159265358979323846

/* splitmix64: the host's deterministic random stream. */
static uint64_t next_u64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double uniform01(uint64_t *s) { return (double)(next_u64(s) >> 11) * 0x1.0p-53; }

static double normal(uint64_t *s) /* Box-Muller */
{
    double u = uniform01(s), v = uniform01(s);
    return sqrt(-2.0 * log(1.0 - u)) * cos(2.0 * PI * v);
}

void pinn_free(pinn_net *net)
{
    if (!net)
        return;
    clt_tensor **all[] = {&net->x, &net->target, &net->B, &net->params, &net->grads, &net->m,
                          &net->v, &net->dy, &net->dh[0], &net->dh[1], &net->loss};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        clt_tensor_free(*all[i]);
    for (int l = 0; l < PINN_LAYERS; l++) {
        clt_tensor_free(net->W[l]), clt_tensor_free(net->b[l]);
        clt_tensor_free(net->dW[l]), clt_tensor_free(net->db[l]);
    }
    for (int l = 0; l <= PINN_LAYERS; l++)
        clt_tensor_free(net->act[l]);
    free(net);
}

static clt_status make(clt_context *ctx, int ndim, int64_t d0, int64_t d1, clt_tensor **t)
{
    int64_t shape[2] = {d0, d1};
    return clt_tensor_create(ctx, CLT_F32, ndim, shape, t);
}

static clt_status upload(clt_context *ctx, int64_t d0, int64_t d1, const float *data, clt_tensor **t)
{
    int64_t shape[2] = {d0, d1};
    return clt_tensor_create_from_host(ctx, CLT_F32, 2, shape, data, sizeof(float) * (size_t)(d0 * d1),
                                       t);
}

/* Weight and bias views of the flat tensors, and the initial parameters / zero moments. */
static clt_status make_params(pinn_net *net, uint64_t *rng)
{
    clt_context *ctx = net->ctx;
    clt_status st;
    net->nparams = 0;
    for (int l = 0; l < PINN_LAYERS; l++)
        net->nparams += (net->in[l] + 1) * net->out[l];
    int64_t np = net->nparams;
    if ((st = make(ctx, 1, np, 0, &net->params)) || (st = make(ctx, 1, np, 0, &net->grads)) ||
        (st = make(ctx, 1, np, 0, &net->m)) || (st = make(ctx, 1, np, 0, &net->v)))
        return st;
    float *host = malloc(sizeof(float) * (size_t)np);
    if (!host)
        return CLT_ERR_OUT_OF_HOST_MEMORY;
    int64_t off = 0;
    for (int l = 0; l < PINN_LAYERS && !st; l++) {
        int64_t ws[2] = {net->in[l], net->out[l]}, nw = ws[0] * ws[1], nb = net->out[l];
        double bound = 1.0 / sqrt((double)net->in[l]);
        for (int64_t i = 0; i < nw + nb; i++)
            host[off + i] = (float)((2.0 * uniform01(rng) - 1.0) * bound);
        net->poff[l] = off;
        if ((st = clt_tensor_view(net->params, off, 2, ws, &net->W[l])) ||
            (st = clt_tensor_view(net->params, off + nw, 1, &nb, &net->b[l])) ||
            (st = clt_tensor_view(net->grads, off, 2, ws, &net->dW[l])) ||
            (st = clt_tensor_view(net->grads, off + nw, 1, &nb, &net->db[l])))
            break;
        off += nw + nb;
    }
    if (!st)
        st = clt_tensor_write(net->params, host, sizeof(float) * (size_t)np);
    free(host);
    if (!st)
        st = clt_tensor_fill(net->m, 0.0);
    if (!st)
        st = clt_tensor_fill(net->v, 0.0);
    return st;
}

/* Points in [0, 1)^2, targets [sin(3 pi x) sin(3 pi y), cos(3 pi x)], B ~ N(0, 2^2). */
static clt_status make_data(pinn_net *net, uint64_t *rng)
{
    int64_t n = net->n, f = net->f;
    float *x = malloc(sizeof(float) * (size_t)(4 * n + 2 * f + 1)), *t = x + 2 * n, *B = t + 2 * n;
    if (!x)
        return CLT_ERR_OUT_OF_HOST_MEMORY;
    for (int64_t i = 0; i < n; i++) {
        double px = uniform01(rng), py = uniform01(rng);
        x[2 * i] = (float)px, x[2 * i + 1] = (float)py;
        t[2 * i] = (float)(sin(3 * PI * px) * sin(3 * PI * py));
        t[2 * i + 1] = (float)cos(3 * PI * px);
    }
    for (int64_t i = 0; i < 2 * f; i++)
        B[i] = (float)(2.0 * normal(rng));
    clt_status st = upload(net->ctx, n, 2, x, &net->x);
    if (!st)
        st = upload(net->ctx, n, 2, t, &net->target);
    if (!st)
        st = upload(net->ctx, 2, f, B, &net->B);
    free(x);
    return st;
}

/* Zeros with column `col` of the cols columns all ones (once, at creation: no layer writes it). */
static clt_status ones_column(clt_tensor *t, int64_t rows, int64_t cols, int64_t col)
{
    float *h = calloc((size_t)(rows * cols), sizeof(float));
    if (!h)
        return CLT_ERR_OUT_OF_HOST_MEMORY;
    for (int64_t i = 0; i < rows; i++)
        h[i * cols + col] = 1.0f;
    clt_status st = clt_tensor_write(t, h, sizeof(float) * (size_t)(rows * cols));
    free(h);
    return st;
}

clt_status pinn_create(clt_context *ctx, int64_t n, int64_t f, int64_t w, uint64_t seed,
                       pinn_net **out)
{
    *out = NULL;
    pinn_net *net = calloc(1, sizeof *net);
    if (!net)
        return CLT_ERR_OUT_OF_HOST_MEMORY;
    net->ctx = ctx, net->n = n, net->f = f, net->w = w;
    for (int l = 0; l < PINN_LAYERS; l++) {
        net->in[l] = l == 0 ? 2 * f : w;
        net->out[l] = l == PINN_LAYERS - 1 ? 2 : w;
    }
    clt_adam_params_init(&net->adam); /* lr 1e-3, betas 0.9 / 0.999, eps 1e-8 */
    uint64_t rng = seed;
    clt_status st = make_data(net, &rng);
    if (!st)
        st = make_params(net, &rng);
    for (int l = 0; l <= PINN_LAYERS && !st; l++) {
        int hidden = l > 0 && l < PINN_LAYERS;
        net->ld[l] = l == 0 ? 2 * f : l == PINN_LAYERS ? 2 : (w + 4) / 4 * 4;
        st = make(ctx, 2, n, net->ld[l], &net->act[l]);
        if (!st && hidden)
            st = ones_column(net->act[l], n, net->ld[l], w);
    }
    if (!st)
        st = make(ctx, 2, n, 2, &net->dy);
    if (!st)
        st = make(ctx, 2, n, w, &net->dh[0]);
    if (!st)
        st = make(ctx, 2, n, w, &net->dh[1]);
    if (!st)
        st = make(ctx, 1, 1, 0, &net->loss);
    if (st) {
        pinn_free(net);
        return st;
    }
    *out = net;
    return CLT_SUCCESS;
}

clt_status pinn_forward(pinn_net *net)
{
    clt_status st = clt_fourier_features(net->x, net->B, (float)(2.0 * PI), net->act[0]);
    for (int l = 0; l < PINN_LAYERS && !st; l++) {
        clt_gemm_epilogue ep;
        clt_gemm_epilogue_init(&ep);
        ep.bias = net->b[l];
        ep.bias_mode = CLT_BIAS_PER_COLUMN;
        ep.activation = l == PINN_LAYERS - 1 ? CLT_IDENTITY : CLT_TANH;
        int64_t k = net->in[l], o = net->out[l];
        st = clt_gemm(CLT_NO_TRANS, CLT_NO_TRANS, net->n, o, k, 1.0f, net->act[l], 0, net->ld[l],
                      net->W[l], 0, o, 0.0f, net->act[l + 1], 0, net->ld[l + 1], &ep);
    }
    return st;
}

clt_status pinn_gradients(pinn_net *net)
{
    return pinn_gradients_notify(net, NULL, NULL);
}

clt_status pinn_gradients_notify(pinn_net *net, clt_status (*layer_done)(void *user, int64_t first),
                                 void *user)
{
    clt_status st = pinn_forward(net);
    clt_tensor *y = net->act[PINN_LAYERS];
    if (!st)
        st = clt_mse_loss_with_grad(y, net->target, net->loss, net->dy); /* one launch */
    clt_tensor *g = net->dy; /* dL/d(output of layer l) */
    const int axis0 = 0;
    for (int l = PINN_LAYERS - 1; l >= 0 && !st; l--) {
        int64_t k = net->in[l], o = net->out[l], n = net->n, lda = net->ld[l];
        int aug = lda > k; /* column k is all ones: db as the last row of the same GEMM */
        st = clt_gemm(CLT_TRANS, CLT_NO_TRANS, aug ? k + 1 : k, o, n, 1.0f, net->act[l], 0, lda, g, 0,
                      o, 0.0f, net->grads, net->poff[l], o, NULL);
        if (!st && !aug)
            st = clt_reduce(CLT_REDUCE_SUM, g, 1, &axis0, 0, net->db[l]);
        if (!st && layer_done)
            st = layer_done(user, net->poff[l]);
        if (st || l == 0)
            break;
        /* dL/d(act[l]) = (g W^T) * tanh'(act[l]) = (g W^T) * (1 - act[l]^2): one fused GEMM */
        clt_tensor *gin = net->dh[l % 2]; /* never the buffer g is in */
        clt_gemm_epilogue ep;
        clt_gemm_epilogue_init(&ep);
        ep.dact_y = net->act[l];
        ep.dact = CLT_TANH;
        ep.lddy = lda;
        st = clt_gemm(CLT_NO_TRANS, CLT_TRANS, n, k, o, 1.0f, g, 0, o, net->W[l], 0, o, 0.0f, gin, 0,
                      k, &ep);
        g = gin;
    }
    return st;
}

clt_status pinn_train_step(pinn_net *net)
{
    clt_status st = pinn_gradients(net);
    if (!st)
        st = clt_adam_step(net->params, net->grads, net->m, net->v, &net->adam, net->step + 1);
    if (!st)
        net->step++;
    return st;
}
