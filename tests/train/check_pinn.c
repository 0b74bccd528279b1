/* The PINN of the pinn bench suite (bench/pinn_net.c, compiled in here so the test checks the very
 * code clt-bench times): its gradients and one Adam step against a double-precision host reference
 * of the same network (n 13, 3 frequencies, width 8) — through the fused paths: tanh's backward in
 * the input-gradient GEMM's epilogue, loss + gradient in one launch, the bias gradients of layers
 * 1-3 as the last row of the dW GEMM (ones column) — and ~50 training steps that must cut the loss
 * substantially (with the ones columns intact afterwards).
 *
 * Tolerances: the device works in f32 through ~10 chained ops; gradients agree with the double
 * backward to 2e-4 * (1 + max |grad|) (each layer's GEMM sums <= 13 products; tanh' loses a few ulp
 * near saturation); one Adam step from the device's gradients agrees with the double update to 1e-5
 * absolute (the update is ~lr = 1e-3 per element: its sign and size are checked).
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "../bench/pinn_net.c"
#include "ref/train_ref.h"
#include "util/test_util.h"

#define N 13
#define F 3
#define W 8

static float *read_all(const clt_tensor *t)
{
    int64_t n = clt_tensor_numel(t);
    float *h = malloc(sizeof(float) * (size_t)n);
    TU_OK(clt_tensor_read(t, h, sizeof(float) * (size_t)n));
    return h;
}

/* Double forward and backward of the net from the device's own inputs and parameters (host
 * copies): fills grad[nparams] and returns the loss. */
static double ref_gradients(const pinn_net *net, const float *x, const float *t, const float *B,
                            const float *p, double *grad)
{
    double a[PINN_LAYERS + 1][N * W], g[N * W], gin[N * W];
    for (int i = 0; i < N; i++)
        for (int c = 0; c < F; c++) {
            double dot = 2.0 * PI * ((double)x[2 * i] * B[c] + (double)x[2 * i + 1] * B[F + c]);
            a[0][i * 2 * F + c] = sin(dot), a[0][i * 2 * F + F + c] = cos(dot);
        }
    int64_t off[PINN_LAYERS], o0 = 0;
    for (int l = 0; l < PINN_LAYERS; l++) {
        off[l] = o0;
        int64_t k = net->in[l], o = net->out[l];
        const float *Wl = p + o0, *bl = Wl + k * o;
        for (int i = 0; i < N; i++)
            for (int j = 0; j < o; j++) {
                double s = bl[j];
                for (int q = 0; q < k; q++)
                    s += a[l][i * k + q] * Wl[q * o + j];
                a[l + 1][i * o + j] = l < PINN_LAYERS - 1 ? tanh(s) : s;
            }
        o0 += (k + 1) * o;
    }
    double loss = 0.0;
    for (int i = 0; i < 2 * N; i++) {
        double d = a[PINN_LAYERS][i] - t[i];
        loss += d * d;
        g[i] = 2.0 / (2 * N) * d;
    }
    for (int l = PINN_LAYERS - 1; l >= 0; l--) {
        int64_t k = net->in[l], o = net->out[l];
        double *dW = grad + off[l], *db = dW + k * o;
        for (int q = 0; q < k; q++)
            for (int j = 0; j < o; j++) {
                double s = 0.0;
                for (int i = 0; i < N; i++)
                    s += a[l][i * k + q] * g[i * o + j];
                dW[q * o + j] = s;
            }
        for (int j = 0; j < o; j++) {
            double s = 0.0;
            for (int i = 0; i < N; i++)
                s += g[i * o + j];
            db[j] = s;
        }
        if (l == 0)
            break;
        const float *Wl = p + off[l];
        for (int i = 0; i < N; i++)
            for (int q = 0; q < k; q++) {
                double s = 0.0;
                for (int j = 0; j < o; j++)
                    s += g[i * o + j] * Wl[q * o + j];
                double y = a[l][i * k + q];
                gin[i * k + q] = s * (1.0 - y * y);
            }
        memcpy(g, gin, sizeof(double) * (size_t)(N * k));
    }
    return loss / (2 * N);
}

START_TEST(pinn_backward_and_adam_match_double_reference)
{
    clt_context *ctx = tu_context();
    pinn_net *net;
    TU_OK(pinn_create(ctx, N, F, W, tu_rng_next(), &net));
    float *x = read_all(net->x), *t = read_all(net->target), *B = read_all(net->B);
    float *p0 = read_all(net->params);
    int64_t np = net->nparams;
    double *grad = malloc(sizeof(double) * (size_t)np), *pm = malloc(sizeof(double) * 3 * (size_t)np);
    double *mm = pm + np, *vv = mm + np;
    double want_loss = ref_gradients(net, x, t, B, p0, grad);

    TU_OK(pinn_train_step(net));
    float loss, *dg = read_all(net->grads), *p1 = read_all(net->params);
    TU_OK(clt_tensor_read(net->loss, &loss, sizeof loss));
    ck_assert_msg(fabs(loss - want_loss) <= 1e-5 * (1 + want_loss), "loss %.9g, want %.9g", loss,
                  want_loss);
    double gmax = 0.0;
    for (int64_t i = 0; i < np; i++)
        gmax = fmax(gmax, fabs(grad[i]));
    for (int64_t i = 0; i < np; i++)
        ck_assert_msg(fabs(dg[i] - grad[i]) <= 2e-4 * (1 + gmax), "grad[%lld] = %.9g, want %.9g",
                      (long long)i, dg[i], grad[i]);
    /* Adam from the device's own gradients: where |grad| is near eps the update g / (|g| + eps)
     * swings with the gradient's last bits, which the gradient check above already bounds */
    for (int64_t i = 0; i < np; i++)
        pm[i] = p0[i], mm[i] = 0.0, vv[i] = 0.0, grad[i] = dg[i];
    ref_adam_step(np, pm, grad, mm, vv, 1e-3, 0.9, 0.999, 1e-8, 0.0, 1);
    int moved = 0;
    for (int64_t i = 0; i < np; i++) {
        ck_assert_msg(fabs(p1[i] - pm[i]) <= 1e-5, "param[%lld] after one step %.9g, want %.9g",
                      (long long)i, p1[i], pm[i]);
        moved += p1[i] != p0[i];
    }
    ck_assert_int_gt(moved, np / 2);
    pinn_free(net);
    free(x), free(t), free(B), free(p0), free(dg), free(p1), free(grad), free(pm);
    tu_context_free(ctx);
}
END_TEST

START_TEST(pinn_training_reduces_the_loss)
{
    clt_context *ctx = tu_context();
    pinn_net *net;
    TU_OK(pinn_create(ctx, 64, 16, 32, tu_rng_next(), &net));
    net->adam.lr = 1e-2f; /* a small net learns the fit visibly within 60 steps */
    float first = 0, loss = 0;
    for (int i = 0; i < 60; i++) {
        TU_OK(pinn_train_step(net));
        if (i == 0)
            TU_OK(clt_tensor_read(net->loss, &first, sizeof first));
    }
    TU_OK(clt_tensor_read(net->loss, &loss, sizeof loss));
    ck_assert_msg(isfinite(loss) && loss < 0.3f * first, "loss %g after 60 steps, %g at the first",
                  loss, first);
    ck_assert_int_eq(net->step, 60);
    /* the ones columns that fold the bias gradients into the dW GEMMs are never overwritten */
    for (int l = 1; l < PINN_LAYERS; l++) {
        float *a = read_all(net->act[l]);
        for (int64_t i = 0; i < net->n; i++)
            ck_assert_msg(a[i * net->ld[l] + net->in[l]] == 1.0f, "act[%d] row %lld: %g", l,
                          (long long)i, a[i * net->ld[l] + net->in[l]]);
        free(a);
    }
    pinn_free(net);
    tu_context_free(ctx);
}
END_TEST

Suite *pinn_suite(void)
{
    Suite *s = suite_create("pinn");
    TCase *tc = tcase_create("pinn");
    tcase_add_test(tc, pinn_backward_and_adam_match_double_reference);
    tcase_add_test(tc, pinn_training_reduces_the_loss);
    suite_add_tcase(s, tc);
    return s;
}
