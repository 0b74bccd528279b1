/* Data-parallel training of the fused-MLP network: each rank computes gradients on its shard, the
 * helper averages them in buckets (started layer by layer, last layer first), every rank applies the
 * same Adam step. Checked: the parameters are the same bits on every rank after every step, and
 * match single-process training on the full batch (computed on every rank alongside) within
 * 2e-5 absolute after 4 steps (lr 1e-3; the two differ only by the rounding of a sum of shard means
 * against one mean over the whole batch). */
#include <math.h>
#include <stdlib.h>

#include "dist/dist_test.h"

#define SHARD 9 /* points per rank: the full batch is SHARD * size */
#define STEPS 4

static void mlp_desc(clt_mlp_desc *d)
{
    clt_mlp_desc_init(d);
    d->inputs = 2;
    d->layers = 3;
    d->widths[0] = 16, d->widths[1] = 16, d->widths[2] = 1;
    d->activations[0] = CLT_TANH, d->activations[1] = CLT_TANH, d->activations[2] = CLT_IDENTITY;
}

static clt_tensor *zeros(clt_context *ctx, int64_t n)
{
    clt_tensor *t = NULL;
    DT_OK(ctx, clt_tensor_create(ctx, CLT_F32, 1, &n, &t));
    DT_OK(ctx, clt_tensor_fill(t, 0.0));
    return t;
}

static clt_tensor *rows(clt_context *ctx, const float *x, int64_t first, int64_t count, int64_t width)
{
    int64_t shape[2] = {count, width};
    clt_tensor *t = NULL;
    DT_OK(ctx, clt_tensor_create_from_host(ctx, CLT_F32, 2, shape, x + first * width,
                                           (size_t)(count * width) * sizeof(float), &t));
    return t;
}

void dt_data_parallel(clt_context *ctx)
{
    clt_dist_comm *comm = NULL;
    DT_OK(ctx, clt_dist_comm_create(ctx, MPI_COMM_WORLD, NULL, &comm));
    clt_mlp_desc d;
    mlp_desc(&d);
    clt_mlp *dp_net = NULL, *ref_net = NULL;
    /* Different seeds per rank: the helper's broadcast must make them equal. */
    DT_OK(ctx, clt_mlp_create(ctx, &d, NULL, 11 + (uint64_t)dt_rank, &dp_net));
    DT_OK(ctx, clt_mlp_create(ctx, &d, NULL, 11, &ref_net));
    if (!comm || !dp_net || !ref_net)
        return;
    clt_tensor *params = clt_mlp_params(dp_net), *grads = clt_mlp_grads(dp_net);
    int64_t np = clt_tensor_numel(params);
    clt_dist_dp *dp = NULL;
    DT_OK(ctx, clt_dist_dp_create(comm, params, grads, 64 * sizeof(float), &dp));
    if (!dp)
        return;
    DT_CHECK(clt_dist_dp_buckets(dp) == (int)((np + 63) / 64), "buckets %d", clt_dist_dp_buckets(dp));
    /* Layer offsets in the flat layout (W then b per layer), for grads_ready from the last layer. */
    int64_t offsets[4], in = d.inputs, at = 0;
    for (int l = 0; l < d.layers; l++) {
        offsets[l] = at;
        at += in * d.widths[l] + d.widths[l];
        in = d.widths[l];
    }
    DT_CHECK(at == np, "layout: %lld of %lld", (long long)at, (long long)np);

    int64_t n = (int64_t)SHARD * dt_size;
    float *x = malloc((size_t)n * 2 * sizeof *x), *y = malloc((size_t)n * sizeof *y);
    for (int64_t i = 0; i < n; i++) {
        x[2 * i] = dt_value(100, (uint64_t)(2 * i));
        x[2 * i + 1] = dt_value(100, (uint64_t)(2 * i + 1));
        y[i] = sinf(3.14159265f * x[2 * i]) * cosf(3.14159265f * x[2 * i + 1]);
    }
    clt_tensor *x_all = rows(ctx, x, 0, n, 2), *y_all = rows(ctx, y, 0, n, 1);
    clt_tensor *x_mine = rows(ctx, x, (int64_t)dt_rank * SHARD, SHARD, 2);
    clt_tensor *y_mine = rows(ctx, y, (int64_t)dt_rank * SHARD, SHARD, 1);
    clt_tensor *m = zeros(ctx, np), *v = zeros(ctx, np), *m_ref = zeros(ctx, np), *v_ref = zeros(ctx, np);
    clt_adam_params adam;
    clt_adam_params_init(&adam);
    adam.eps = 1e-4f; /* keeps a gradient at rounding level from being scaled up to a full step */
    float *p = malloc((size_t)np * sizeof *p), *q = malloc((size_t)np * sizeof *q);
    for (int step = 1; step <= STEPS; step++) {
        DT_OK(ctx, clt_mlp_gradients(dp_net, x_mine, y_mine));
        for (int l = d.layers - 1; l >= 0; l--) /* as a layer-by-layer backward would announce them */
            DT_OK(ctx, clt_dist_dp_grads_ready(dp, offsets[l]));
        DT_OK(ctx, clt_dist_dp_sync(dp));
        DT_OK(ctx, clt_adam_step(params, grads, m, v, &adam, step));

        DT_OK(ctx, clt_mlp_gradients(ref_net, x_all, y_all));
        DT_OK(ctx, clt_adam_step(clt_mlp_params(ref_net), clt_mlp_grads(ref_net), m_ref, v_ref, &adam, step));

        DT_OK(ctx, clt_tensor_read(params, p, (size_t)np * sizeof *p));
        DT_OK(ctx, clt_tensor_read(clt_mlp_params(ref_net), q, (size_t)np * sizeof *q));
        DT_CHECK(dt_same_on_all_ranks(p, (size_t)np * sizeof *p), "step %d: parameters differ between ranks",
                 step);
        double worst = 0;
        for (int64_t i = 0; i < np; i++)
            worst = fmax(worst, fabs((double)p[i] - (double)q[i]));
        DT_CHECK(worst <= 2e-5, "step %d: data-parallel vs full batch differ by %.3g", step, worst);
        if (dt_rank == 0 && step == STEPS)
            printf("  data parallel vs full batch after %d steps: max |diff| %.3g (tolerance 2e-5)\n",
                   STEPS, worst);
    }
    free(p);
    free(q);
    free(x);
    free(y);
    clt_dist_dp_free(dp);
    clt_tensor *ts[] = {x_all, y_all, x_mine, y_mine, m, v, m_ref, v_ref};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        clt_tensor_free(ts[i]);
    clt_mlp_free(dp_net);
    clt_mlp_free(ref_net);
    clt_dist_comm_free(comm);
}
