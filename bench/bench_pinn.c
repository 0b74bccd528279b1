/* Setups of the pinn suite (suite_pinn.c): p = {points N, steps, read the loss every k-th step}.
 * steps 0: pinn_forward/N, one forward pass (5 launches). Otherwise `steps` train steps (15 launches
 * each) with the loss delivered to the host every k-th step: k = 1 by a blocking clt_tensor_read
 * after the step (what loss.item() does), k > 1 by clt_tensor_read_async futures that are only
 * collected after the last step, so the loop never waits. The network (pinn_net.c) and its whole
 * workspace are made in setup: a timed run allocates nothing. Width 128, 64 frequencies. */
#include <stdlib.h>

#include "bench_cases.h"
#include "pinn_net.h"

#define PINN_FREQS 64
#define PINN_WIDTH 128
#define MAX_FUTURES 128

typedef struct pinn_state {
    pinn_net *net;
    int64_t steps, every;
    float last_loss;
} pinn_state;

static void pinn_teardown(void *p)
{
    pinn_state *s = p;
    if (!s)
        return;
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
    out->state = s;
    out->run = s->steps ? pinn_run_train : pinn_run_forward;
    out->teardown = pinn_teardown;
    out->unit = BENCH_UNIT_NONE;
    return CLT_SUCCESS;
}

clt_status bench_setup_pinn(bench_env *env, const bench_case *c, bench_run *out)
{
    return pinn_setup(env, c, out);
}
