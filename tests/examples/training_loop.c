/* A training loop that never waits for the device: linear regression (y = X w) learnt with Adam.
 * Each step reads its loss asynchronously (clt_tensor_read_async): the read is queued behind the
 * step, and the host collects the value a few steps later, so the queue never drains.
 *
 *   cc training_loop.c $(pkg-config --cflags --libs cltensor) -o training_loop && ./training_loop
 */
#include <stdio.h>
#include <stdlib.h>

#include <cltensor.h>
#include <cltensor_gemm.h>
#include <cltensor_train.h>

#define CHECK(call)                                                                                \
    do {                                                                                           \
        clt_status st_ = (call);                                                                   \
        if (st_ != CLT_SUCCESS) {                                                                  \
            fprintf(stderr, "%s failed: %s: %s\n", #call, clt_status_string(st_),                  \
                    clt_last_error(ctx));                                                          \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

enum { SAMPLES = 256, FEATURES = 8, STEPS = 300, LAG = 4 };

int main(void)
{
    clt_context *ctx = NULL;
    CHECK(clt_context_create(NULL, &ctx));

    /* Data: X uniform in [-1, 1), targets from a hidden weight vector. */
    static float x[SAMPLES * FEATURES], y[SAMPLES];
    float w_true[FEATURES];
    srand(11);
    for (int j = 0; j < FEATURES; j++)
        w_true[j] = (float)(j + 1) / FEATURES - 0.5f;
    for (int i = 0; i < SAMPLES; i++) {
        double acc = 0;
        for (int j = 0; j < FEATURES; j++) {
            x[i * FEATURES + j] = 2.0f * rand() / RAND_MAX - 1.0f;
            acc += x[i * FEATURES + j] * w_true[j];
        }
        y[i] = (float)acc;
    }
    int64_t xs[2] = {SAMPLES, FEATURES}, ys[2] = {SAMPLES, 1}, ws[2] = {FEATURES, 1}, ls[1] = {1};
    clt_tensor *tx, *ty, *w, *gw, *m, *v, *pred, *dpred, *loss;
    CHECK(clt_tensor_create_from_host(ctx, CLT_F32, 2, xs, x, sizeof x, &tx));
    CHECK(clt_tensor_create_from_host(ctx, CLT_F32, 2, ys, y, sizeof y, &ty));
    CHECK(clt_tensor_create(ctx, CLT_F32, 2, ws, &w));
    CHECK(clt_tensor_create(ctx, CLT_F32, 2, ws, &gw));
    CHECK(clt_tensor_create(ctx, CLT_F32, 2, ws, &m));
    CHECK(clt_tensor_create(ctx, CLT_F32, 2, ws, &v));
    CHECK(clt_tensor_create(ctx, CLT_F32, 2, ys, &pred));
    CHECK(clt_tensor_create(ctx, CLT_F32, 2, ys, &dpred));
    CHECK(clt_tensor_create(ctx, CLT_F32, 1, ls, &loss));
    CHECK(clt_tensor_fill(w, 0.0));
    CHECK(clt_tensor_fill(m, 0.0));
    CHECK(clt_tensor_fill(v, 0.0));
    clt_adam_params adam;
    clt_adam_params_init(&adam);
    adam.lr = 0.05f;

    clt_future *pending[LAG] = {NULL};
    float first = -1, last = -1;
    for (int step = 1; step <= STEPS; step++) {
        /* pred = X w; loss and dpred in one launch; gw = X^T dpred; Adam. All only enqueued. */
        CHECK(clt_matmul(tx, w, pred));
        CHECK(clt_mse_loss_with_grad(pred, ty, loss, dpred));
        CHECK(clt_gemm(CLT_TRANS, CLT_NO_TRANS, FEATURES, 1, SAMPLES, 1.0f, tx, 0, FEATURES, dpred, 0,
                       1, 0.0f, gw, 0, 1, NULL));
        CHECK(clt_adam_step(w, gw, m, v, &adam, step));
        /* The loss of this step, read behind it; the value of step - LAG is collected now. */
        clt_future **slot = &pending[step % LAG];
        if (*slot) {
            float value;
            CHECK(clt_future_get(*slot, &value, sizeof value)); /* long done: does not stall */
            clt_future_free(*slot);
            if (first < 0)
                first = value;
            last = value;
            if ((step - LAG) % 50 == 1)
                printf("step %4d  loss %.6f\n", step - LAG, value);
        }
        CHECK(clt_tensor_read_async(loss, 0, 1, slot));
    }
    for (int i = 0; i < LAG; i++) { /* the last LAG losses */
        clt_future *f = pending[(STEPS + 1 + i) % LAG];
        float value;
        CHECK(clt_future_get(f, &value, sizeof value));
        clt_future_free(f);
        last = value;
    }
    printf("loss: first %.6f, last %.6f\n", first, last);
    float w_got[FEATURES];
    CHECK(clt_tensor_read(w, w_got, sizeof w_got));
    double worst = 0;
    for (int j = 0; j < FEATURES; j++) {
        double d = w_got[j] > w_true[j] ? w_got[j] - w_true[j] : w_true[j] - w_got[j];
        worst = d > worst ? d : worst;
    }
    printf("largest weight error %.3g\n", worst);
    clt_context_free(ctx); /* frees the tensors too */
    return last < first / 100 && worst < 0.05 ? 0 : 1;
}
