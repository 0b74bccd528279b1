/* Setups of the pinn suite (suite_pinn.c): p = {points N, steps, read the loss every k-th step}.
 * Two paths of the same network from the same data and weights:
 *  - fused (default): clt_mlp (include/cltensor_mlp.h): forward 1 launch, a step 2;
 *  - layers (clt-bench --pinn-path layers, peer cltensor-layers): bench/pinn_net.c, one GEMM per
 *    layer and direction: forward 5 launches, a step 15.
 * steps 0: pinn_forward/N, one forward pass. Otherwise `steps` train steps with the loss delivered
 * to the host every k-th step: k = 1 waits for it after the step (what loss.item() does: a blocking
 * clt_tensor_read, or the step's future collected at once), k > 1 by futures that are only collected
 * after the last step, so the loop never waits; the fused path skips the loss reduction on the
 * other steps (deferred loss). The networks and their whole workspace are made in setup (and one
 * untimed step warms the fused path's buffers): a timed run allocates nothing. Width 128, 64
 * frequencies. */
#include <stdio.h>
#include <stdlib.h>

#include "bench_cases.h"
#include "pinn_net.h"

#define PINN_FREQS 64
#define PINN_WIDTH 128
#define MAX_FUTURES 128

typedef struct pinn_state {
    pinn_net *net;
    clt_mlp *mlp;   /* NULL on the per-layer path */
    clt_tensor *y;  /* the fused forward's output [n, 2] */
    int64_t steps, every;
    float last_loss;
} pinn_state;

static void pinn_teardown(void *p)
{
    pinn_state *s = p;
    if (!s)
        return;
    clt_mlp_free(s->mlp);
    clt_tensor_free(s->y);
    pinn_free(s->net);
    free(s);
}

static clt_status pinn_run_forward(void *p)
{
    return pinn_forward(((pinn_state *)p)->net);
}

static clt_status pinn_run_train(void *p)
{
    pinn_state *s = p;
    clt_future *fut[MAX_FUTURES];
    int nfut = 0;
    clt_status st = CLT_SUCCESS;
    for (int64_t i = 1; i <= s->steps && !st; i++) {
        st = pinn_train_step(s->net);
        if (st || i % s->every != 0)
            continue;
        if (s->every == 1)
            st = clt_tensor_read(s->net->loss, &s->last_loss, sizeof(float));
        else if (nfut < MAX_FUTURES)
            st = clt_tensor_read_async(s->net->loss, 0, 1, &fut[nfut++]);
    }
    for (int i = 0; i < nfut; i++) { /* every deferred loss reaches the host before the run ends */
        clt_status g = clt_future_get(fut[i], &s->last_loss, sizeof(float));
        if (!st)
            st = g;
        clt_future_free(fut[i]);
    }
    return st;
}

static clt_status fused_run_forward(void *p)
{
    pinn_state *s = p;
    return clt_mlp_forward(s->mlp, s->net->x, s->y);
}

static clt_status fused_run_train(void *p)
{
    pinn_state *s = p;
    clt_future *fut[MAX_FUTURES];
    int nfut = 0;
    clt_status st = CLT_SUCCESS;
    for (int64_t i = 1; i <= s->steps && !st; i++) {
        int read = i % s->every == 0 && nfut < MAX_FUTURES;
        clt_future *f = NULL;
        st = clt_mlp_train_step(s->mlp, s->net->x, s->net->target, read ? &f : NULL);
        if (st || !f)
            continue;
        if (s->every == 1) { /* loss.item(): wait for this step's loss now */
            st = clt_future_get(f, &s->last_loss, sizeof(float));
            clt_future_free(f);
        } else
            fut[nfut++] = f;
    }
    for (int i = 0; i < nfut; i++) {
        clt_status g = clt_future_get(fut[i], &s->last_loss, sizeof(float));
        if (!st)
            st = g;
        clt_future_free(fut[i]);
    }
    return st;
}

/* The fused network of the same description, B and initial weights as s->net (the flat parameter
 * layouts are the same), and one untimed step on a copy so that the step's buffers exist. */
static clt_status fused_setup(pinn_state *s)
{
    pinn_net *net = s->net;
    clt_mlp_desc d;
    clt_mlp_desc_init(&d);
    d.inputs = 2;
    d.encoding = CLT_MLP_ENCODING_FOURIER;
    d.fourier_features = net->f;
    d.fourier_scale = (float)(2.0 * 3.14159265358979323846);
    d.layers = PINN_LAYERS;
    for (int l = 0; l < PINN_LAYERS; l++) {
        d.widths[l] = net->out[l];
        d.activations[l] = l == PINN_LAYERS - 1 ? CLT_IDENTITY : CLT_TANH;
    }
    d.path = CLT_MLP_PATH_AUTO; /* fused, except auto's per-layer choice on CPU devices */
    int64_t ys[2] = {net->n, 2};
    clt_status st = clt_mlp_create(net->ctx, &d, net->B, 1, &s->mlp);
    if (!st)
        st = clt_tensor_copy(clt_mlp_params(s->mlp), net->params);
    if (!st)
        st = clt_tensor_create(net->ctx, CLT_F32, 2, ys, &s->y);
    if (!st && s->steps) { /* warm: the partial-gradient buffers, then the weights back */
        st = clt_mlp_gradients(s->mlp, net->x, net->target);
        if (!st)
            st = clt_finish(net->ctx);
    }
    return st;
}

static clt_status pinn_setup(bench_env *env, const bench_case *c, bench_run *out)
{
    pinn_state *s = calloc(1, sizeof *s);
    if (!s)
        return CLT_ERR_OUT_OF_HOST_MEMORY;
    s->steps = c->p[1];
    s->every = c->p[2] > 0 ? c->p[2] : 1;
    clt_status st = pinn_create(env->ctx, c->p[0], PINN_FREQS, PINN_WIDTH, env->next_seed++, &s->net);
    if (st != CLT_SUCCESS) {
        free(s);
        return st;
    }
    if (!env->pinn_layers && (st = fused_setup(s)) != CLT_SUCCESS) {
        pinn_teardown(s);
        return st;
    }
    out->state = s;
    if (env->pinn_layers)
        out->run = s->steps ? pinn_run_train : pinn_run_forward;
    else
        out->run = s->steps ? fused_run_train : fused_run_forward;
    if (!env->pinn_layers)
        snprintf(out->note, sizeof out->note, "clt_mlp, %s path", clt_mlp_path_name(s->mlp));
    out->teardown = pinn_teardown;
    out->unit = BENCH_UNIT_NONE;
    return CLT_SUCCESS;
}

clt_status bench_setup_pinn(bench_env *env, const bench_case *c, bench_run *out)
{
    return pinn_setup(env, c, out);
}
