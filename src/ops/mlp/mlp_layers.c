/* The per-layer path of the MLP family: the network as library ops, for widths the fused kernels
 * cannot hold. Forward: the encoding (clt_fourier_features) then one GEMM per layer with bias and
 * activation in its epilogue. Step: forward, clt_mse_loss_with_grad, the output activation's
 * derivative (a k = 0 GEMM whose epilogue multiplies C by act'(y)), per layer a TN GEMM for dW, a
 * column sum for db and an NT GEMM with the activation backward fused for the input gradient;
 * then mlp_update (G = 1) for the optimizer. About 4 launches per layer. */
#include "cltensor_gemm.h"
#include "cltensor_ops.h"
#include "cltensor_train.h"
#include "ops/mlp/mlp.h"
#include "tensor/tensor.h"

void clt__mlp_layers_free(clt_mlp *mlp)
{
    for (int l = 0; l <= CLT_MLP_MAX_LAYERS; l++)
        clt_tensor_free(mlp->act[l]), mlp->act[l] = NULL;
    clt_tensor_free(mlp->gbuf[0]), clt_tensor_free(mlp->gbuf[1]);
    mlp->gbuf[0] = mlp->gbuf[1] = NULL;
    mlp->cap_n = 0;
}

static clt_status ensure_points(clt_mlp *mlp, int64_t n)
{
    if (n <= mlp->cap_n)
        return CLT_SUCCESS;
    clt__mlp_layers_free(mlp);
    int64_t maxw = 0;
    clt_status st = CLT_SUCCESS;
    for (int l = 0; l <= mlp->d.layers && !st; l++) {
        int64_t cnt = n * mlp->width[l];
        maxw = mlp->width[l] > maxw ? mlp->width[l] : maxw;
        st = clt_tensor_create(mlp->ctx, CLT_F32, 1, &cnt, &mlp->act[l]);
    }
    int64_t g = n * maxw;
    if (!st)
        st = clt_tensor_create(mlp->ctx, CLT_F32, 1, &g, &mlp->gbuf[0]);
    if (!st)
        st = clt_tensor_create(mlp->ctx, CLT_F32, 1, &g, &mlp->gbuf[1]);
    if (st) {
        clt__mlp_layers_free(mlp);
        return st;
    }
    mlp->cap_n = n;
    return CLT_SUCCESS;
}

/* A [rows, cols] view of the first rows * cols elements of t (freed by the caller). */
static clt_status view2(clt_tensor *t, int64_t rows, int64_t cols, clt_tensor **out)
{
    int64_t shape[2] = {rows, cols};
    return clt_tensor_view(t, 0, 2, shape, out);
}

/* act[l + 1] = act(act[l] W_l + b_l) for every layer; act[0] the encoding of x (or x itself). */
static clt_status forward(clt_mlp *mlp, const clt_tensor *x, int64_t n, clt_tensor *y_out)
{
    const clt_mlp_desc *d = &mlp->d;
    clt_status st = CLT_SUCCESS;
    const clt_tensor *in = x;
    if (d->encoding == CLT_MLP_ENCODING_FOURIER) {
        clt_tensor *e;
        if ((st = view2(mlp->act[0], n, mlp->width[0], &e)))
            return st;
        st = clt_fourier_features(x, mlp->B, d->fourier_scale, e);
        clt_tensor_free(e);
        in = mlp->act[0];
    }
    for (int l = 0; l < d->layers && !st; l++) {
        int last = l == d->layers - 1;
        clt_gemm_epilogue ep;
        clt_gemm_epilogue_init(&ep);
        ep.bias = mlp->bias[l];
        ep.bias_mode = CLT_BIAS_PER_COLUMN;
        ep.activation = d->activations[l];
        int64_t k = mlp->width[l], o = mlp->width[l + 1];
        clt_tensor *out = last && y_out ? y_out : mlp->act[l + 1];
        st = clt_gemm(CLT_NO_TRANS, CLT_NO_TRANS, n, o, k, 1.0f, in, 0, k, mlp->params,
                      mlp->poff[l], o, 0.0f, out, 0, o, &ep);
        in = mlp->act[l + 1];
    }
    return st;
}

clt_status clt__mlp_layers_forward(clt_mlp *mlp, const clt_tensor *x, clt_tensor *y, int64_t n)
{
    clt_status st = ensure_points(mlp, n);
    if (st == CLT_SUCCESS)
        st = forward(mlp, x, n, y);
    return st;
}

static clt_status backward(clt_mlp *mlp, const clt_tensor *x, const clt_tensor *target, int64_t n)
{
    const clt_mlp_desc *d = &mlp->d;
    int nl = d->layers;
    int64_t ow = mlp->width[nl];
    clt_tensor *yv = NULL, *gv = NULL;
    clt_status st = view2(mlp->act[nl], n, ow, &yv);
    if (!st)
        st = view2(mlp->gbuf[0], n, ow, &gv);
    if (!st)
        st = clt_mse_loss_with_grad(yv, target, mlp->loss, gv);
    clt_tensor_free(yv), clt_tensor_free(gv);
    clt_unary_op aout = d->activations[nl - 1];
    if (!st && aout != CLT_IDENTITY) { /* G *= act'(y): a GEMM with k = 0 and beta 1 */
        clt_gemm_epilogue ep;
        clt_gemm_epilogue_init(&ep);
        ep.dact_y = mlp->act[nl], ep.dact = aout, ep.lddy = ow;
        st = clt_gemm(CLT_NO_TRANS, CLT_NO_TRANS, n, ow, 0, 1.0f, mlp->act[nl], 0, 1, mlp->params,
                      0, ow, 1.0f, mlp->gbuf[0], 0, ow, &ep);
    }
    int cur = 0;
    for (int l = nl - 1; l >= 0 && !st; l--) {
        int64_t k = mlp->width[l], o = mlp->width[l + 1];
        const clt_tensor *a = l == 0 && d->encoding == CLT_MLP_ENCODING_IDENTITY ? x : mlp->act[l];
        st = clt_gemm(CLT_TRANS, CLT_NO_TRANS, k, o, n, 1.0f, a, 0, k, mlp->gbuf[cur], 0, o, 0.0f,
                      mlp->grads, mlp->poff[l], o, NULL);
        clt_tensor *g2 = NULL;
        const int axis0 = 0;
        if (!st && !(st = view2(mlp->gbuf[cur], n, o, &g2)))
            st = clt_reduce(CLT_REDUCE_SUM, g2, 1, &axis0, 0, mlp->dbias[l]);
        clt_tensor_free(g2);
        if (st || l == 0)
            break;
        clt_gemm_epilogue ep;
        clt_gemm_epilogue_init(&ep);
        ep.dact_y = mlp->act[l], ep.dact = d->activations[l - 1], ep.lddy = k;
        if (ep.dact == CLT_IDENTITY)
            ep.dact_y = NULL;
        st = clt_gemm(CLT_NO_TRANS, CLT_TRANS, n, k, o, 1.0f, mlp->gbuf[cur], 0, o, mlp->params,
                      mlp->poff[l], o, 0.0f, mlp->gbuf[1 - cur], 0, k, &ep);
        cur = 1 - cur;
    }
    return st;
}

clt_status clt__mlp_layers_step(clt_mlp *mlp, const clt_tensor *x, const clt_tensor *target,
                                int64_t n, int update, const char *who)
{
    clt_status st = ensure_points(mlp, n);
    if (!st)
        st = forward(mlp, x, n, NULL);
    if (!st)
        st = backward(mlp, x, target, n);
    if (st)
        return st;
    if (!update)
        return CLT_SUCCESS;
    return clt__mlp_update(mlp, mlp->grads, 1, mlp->loss, n, 1, 0, who);
}
