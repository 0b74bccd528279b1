/* Setups of the transformer and cnn suites: training steps of the models of model_gpt.h and
 * model_cnn.h (plain SGD) on generated data. p = {batch, steps, deferred}: steps = 1, deferred 0
 * times one step and its loss on the host (a blocking read, as loss.item()); deferred 1 reads
 * every step's loss through a future that is only collected after the last step, so the loop
 * never waits for the device. Time only (no FLOP column). */
#include <stdlib.h>

#include "bench_cases.h"
#include "model_cnn.h"
#include "model_gpt.h"

#define MAX_STEPS 128
#define MODEL_LR 0.05f

typedef struct model_state {
    gpt_model *gpt;
    cnn_model *cnn;
    int64_t steps, deferred, step;
    float last_loss;
} model_state;

static void model_teardown(void *v)
{
    model_state *s = v;
    if (!s)
        return;
    gpt_model_free(s->gpt);
    cnn_model_free(s->cnn);
    free(s);
}

static clt_status one_step(model_state *s)
{
    s->step++;
    return s->gpt ? gpt_model_step(s->gpt, MODEL_LR, s->step)
                  : cnn_model_step(s->cnn, MODEL_LR, s->step);
}

static const clt_tensor *loss_of(const model_state *s)
{
    return s->gpt ? gpt_model_loss(s->gpt) : cnn_model_loss(s->cnn);
}

static clt_status model_run(void *v)
{
    model_state *s = v;
    clt_future *fut[MAX_STEPS];
    int nfut = 0;
    clt_status st = CLT_SUCCESS;
    for (int64_t i = 0; i < s->steps && st == CLT_SUCCESS; i++) {
        if ((st = one_step(s)) != CLT_SUCCESS)
            break;
        if (!s->deferred) {
            st = clt_tensor_read(loss_of(s), &s->last_loss, sizeof(float));
            continue;
        }
        clt_future *f = NULL;
        if ((st = clt_tensor_read_async(loss_of(s), 0, 1, &f)) == CLT_SUCCESS)
            fut[nfut++] = f;
    }
    for (int i = 0; i < nfut; i++) { /* every loss reaches the host before the run ends */
        clt_status g = clt_future_get(fut[i], &s->last_loss, sizeof(float));
        if (st == CLT_SUCCESS)
            st = g;
        clt_future_free(fut[i]);
    }
    return st;
}

static clt_status model_setup(bench_env *env, const bench_case *c, bench_run *out, int gpt)
{
    model_state *s = calloc(1, sizeof *s);
    if (!s)
        return CLT_ERR_OUT_OF_HOST_MEMORY;
    s->steps = c->p[1] > MAX_STEPS ? MAX_STEPS : c->p[1];
    s->deferred = c->p[2];
    int batch = (int)c->p[0];
    uint64_t seed = env->next_seed++;
    clt_status st = CLT_ERR_OUT_OF_HOST_MEMORY;
    if (gpt) {
        const gpt_config cfg = {512, 128, 4, 2, batch, 128};
        gpt_layout l;
        gpt_layout_of(&cfg, &l);
        float *params = malloc(l.total * sizeof(float));
        int32_t *ids = malloc((size_t)batch * 128 * sizeof(int32_t));
        int32_t *targets = malloc((size_t)batch * 128 * sizeof(int32_t));
        if (params && ids && targets) {
            gpt_init_params(&cfg, seed, params);
            for (int i = 0; i < batch * 128; i++) { /* the next token: a fixed affine rule */
                ids[i] = (int32_t)((seed + (uint64_t)i * 2654435761u) % 512);
                targets[i] = (ids[i] * 5 + 3) % 512;
            }
            st = gpt_model_create(env->ctx, &cfg, params, ids, targets, &s->gpt);
        }
        free(params), free(ids), free(targets);
    } else {
        cnn_layout l;
        cnn_layout_of(&l);
        size_t nx = (size_t)batch * CNN_IN_C * CNN_HW * CNN_HW;
        float *params = malloc(l.total * sizeof(float)), *x = malloc(nx * sizeof(float));
        int32_t *labels = malloc((size_t)batch * sizeof(int32_t));
        if (params && x && labels) {
            cnn_init_params(seed, params);
            uint64_t r = seed;
            for (size_t i = 0; i < nx; i++) {
                r = r * 6364136223846793005ull + 1442695040888963407ull;
                x[i] = (float)((r >> 40) & 0xFFFF) / 65536.0f - 0.5f;
            }
            for (int i = 0; i < batch; i++)
                labels[i] = i % CNN_CLASSES;
            st = cnn_model_create(env->ctx, batch, params, x, labels, &s->cnn);
        }
        free(params), free(x), free(labels);
    }
    if (st != CLT_SUCCESS) {
        model_teardown(s);
        return st;
    }
    out->state = s;
    out->run = model_run;
    out->teardown = model_teardown;
    out->unit = BENCH_UNIT_NONE;
    return CLT_SUCCESS;
}

clt_status bench_setup_transformer(bench_env *env, const bench_case *c, bench_run *out)
{
    return model_setup(env, c, out, 1);
}

clt_status bench_setup_cnn(bench_env *env, const bench_case *c, bench_run *out)
{
    return model_setup(env, c, out, 0);
}
