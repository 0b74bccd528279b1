/* A dense layer in one GEMM call: Y = relu(X W + b), the bias and the activation fused into the
 * GEMM kernel (its epilogue). Checks Y against a CPU computation and prints the largest error.
 *
 *   cc gemm_epilogue.c $(pkg-config --cflags --libs cltensor) -o gemm_epilogue && ./gemm_epilogue
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <cltensor.h>
#include <cltensor_gemm.h>

#define CHECK(call)                                                                                \
    do {                                                                                           \
        clt_status st_ = (call);                                                                   \
        if (st_ != CLT_SUCCESS) {                                                                  \
            fprintf(stderr, "%s failed: %s: %s\n", #call, clt_status_string(st_),                  \
                    clt_last_error(ctx));                                                          \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

enum { M = 67, K = 129, N = 33 }; /* batch rows, input features, output features */

int main(void)
{
    clt_context *ctx = NULL;
    CHECK(clt_context_create(NULL, &ctx)); /* first GPU, else the CPU (CLT_DEVICE overrides) */
    clt_device_info info;
    CHECK(clt_context_device_info(ctx, &info));
    printf("device: %s\n", info.device_name);

    static float x[M * K], w[K * N], b[N], y[M * N];
    srand(7);
    for (int i = 0; i < M * K; i++)
        x[i] = (float)rand() / RAND_MAX - 0.5f;
    for (int i = 0; i < K * N; i++)
        w[i] = (float)rand() / RAND_MAX - 0.5f;
    for (int i = 0; i < N; i++)
        b[i] = (float)rand() / RAND_MAX - 0.5f;

    int64_t xs[2] = {M, K}, ws[2] = {K, N}, bs[1] = {N}, ys[2] = {M, N};
    clt_tensor *tx, *tw, *tb, *ty;
    CHECK(clt_tensor_create_from_host(ctx, CLT_F32, 2, xs, x, sizeof x, &tx));
    CHECK(clt_tensor_create_from_host(ctx, CLT_F32, 2, ws, w, sizeof w, &tw));
    CHECK(clt_tensor_create_from_host(ctx, CLT_F32, 1, bs, b, sizeof b, &tb));
    CHECK(clt_tensor_create(ctx, CLT_F32, 2, ys, &ty));

    clt_gemm_epilogue ep;
    clt_gemm_epilogue_init(&ep);
    ep.bias = tb;
    ep.bias_mode = CLT_BIAS_PER_COLUMN;
    ep.activation = CLT_RELU;
    /* Row-major: Y[M,N] = 1 * X[M,K] W[K,N] + 0 * Y, then + b per column, then relu. Enqueued only. */
    CHECK(clt_gemm(CLT_NO_TRANS, CLT_NO_TRANS, M, N, K, 1.0f, tx, 0, K, tw, 0, N, 0.0f, ty, 0, N, &ep));
    CHECK(clt_tensor_read(ty, y, sizeof y)); /* blocks until the GEMM is done */

    double worst = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double acc = b[j];
            for (int k = 0; k < K; k++)
                acc += (double)x[i * K + k] * w[k * N + j];
            double want = acc > 0 ? acc : 0;
            double err = fabs(y[i * N + j] - want) / (1 + fabs(want));
            worst = err > worst ? err : worst;
        }
    printf("relu(X W + b), %dx%dx%d: largest relative error %.3g\n", M, N, K, worst);
    clt_tensor_free(tx);
    clt_tensor_free(tw);
    clt_tensor_free(tb);
    clt_tensor_free(ty);
    clt_context_free(ctx);
    return worst < 1e-4 ? 0 : 1;
}
