/* The PINN of bench/README.md (pinn suite) on the public API only: Fourier features of 2-D points
 * (2 -> 2F), three tanh layers of width W (bias + tanh fused into each GEMM), a linear layer to 2;
 * MSE loss; a hand-written backward; Adam over ONE flat parameter tensor. Every tensor is allocated
 * once in pinn_create (the workspace); a step allocates nothing and never waits.
 * Shared by clt-bench (bench_pinn.c) and tests/train/check_pinn.c, which checks its gradients. */
#ifndef BENCH_PINN_NET_H
#define BENCH_PINN_NET_H

#include <stdint.h>

#include "cltensor_all.h"

#define PINN_LAYERS 4 /* three tanh layers and the linear output */

typedef struct pinn_net {
    clt_context *ctx;
    int64_t n, f, w;         /* points, Fourier frequencies (features 2F), hidden width */
    int64_t in[PINN_LAYERS], out[PINN_LAYERS];
    int64_t nparams;
    clt_tensor *x, *target, *B;                 /* [n, 2], [n, 2], [2, f] */
    clt_tensor *params, *grads, *m, *v;         /* flat [nparams]: W0 b0 W1 b1 ... */
    clt_tensor *W[PINN_LAYERS], *b[PINN_LAYERS];   /* views of params: W [in, out], b [out] */
    clt_tensor *dW[PINN_LAYERS], *db[PINN_LAYERS]; /* the same views of grads */
    clt_tensor *act[PINN_LAYERS + 1]; /* act[0] features [n, 2f], act[1..3] hidden [n, ld] (column
                                         w all ones, see ld), act[4] y [n, 2] */
    int64_t ld[PINN_LAYERS + 1];      /* stored row length of act[l]; > in[l] where column in[l] is
                                         the ones column that folds db into the dW GEMM (then
                                         w + 1 rounded up to 4: aligned rows for float4 paths) */
    int64_t poff[PINN_LAYERS];        /* offset of layer l's [W; b] block ((in+1) x out) in params */
    clt_tensor *dy, *dh[2], *loss;    /* dL/dy [n, 2], two ping-pong [n, w], the loss [1] */
    clt_adam_params adam;
    int64_t step;                     /* Adam updates done */
} pinn_net;

/* Build the network for n random points in [0, 1)^2 with its targets, B ~ N(0, 2^2), weights and
 * biases uniform in +-1/sqrt(fan_in) (torch.nn.Linear's default), m = v = 0; deterministic from
 * seed. On failure everything made so far is freed and *out is NULL. */
clt_status pinn_create(clt_context *ctx, int64_t n, int64_t f, int64_t w, uint64_t seed,
                       pinn_net **out);
void pinn_free(pinn_net *net);

/* Enqueue the forward pass: act[4] = y [n, 2]. 5 launches. */
clt_status pinn_forward(pinn_net *net);
/* Enqueue forward, loss (into net->loss), backward (into grads) — no Adam. */
clt_status pinn_gradients(pinn_net *net);
/* pinn_gradients, calling layer_done(user, first) as soon as the gradients of every parameter from
 * flat offset `first` on are enqueued (after each layer's dW / db, the last layer first), so that a
 * data-parallel step starts exchanging them while the backward of earlier layers is enqueued and
 * runs. A status other than CLT_SUCCESS from layer_done stops the pass and is returned. */
clt_status pinn_gradients_notify(pinn_net *net, clt_status (*layer_done)(void *user, int64_t first),
                                 void *user);
/* pinn_gradients then one Adam step over the flat parameters. 15 launches; never waits. */
clt_status pinn_train_step(pinn_net *net);

#endif
