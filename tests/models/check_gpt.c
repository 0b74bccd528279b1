/* End-to-end proof: a small GPT-style model (2 layers, d 128, 4 heads, vocab 512, context 128)
 * built only from public cltensor calls (embedding, broadcast add, layer_norm, GEMM with bias /
 * ReLU / residual / ReLU-backward epilogues, permute, attention, cross_entropy, embedding backward,
 * SGD), trained for 50 steps on generated next-token data; every step's loss is compared with the
 * float64 model of ref/gpt_ref.c started from the same weights, and the loss must fall.
 *
 * Data: sequences that follow a fixed random permutation of the vocabulary (the next token is
 * perm[token]) from random starts, so the model can learn them. CI uses batch 2 (the shapes of the
 * model are the issue's; only the batch is small, to keep the run short under POCL). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ref/gpt_ref.h"
#include "util/test_util.h"

#define GPT_STEPS 50
#define GPT_LR 0.05
/* Two comparisons of the loss, relative to the reference's:
 *   free-running (the reference trained from the same initial weights, in double): the first
 *   EXACT_STEPS steps within LOSS_TOL_EXACT (measured: ~1e-7); later steps within LOSS_TOL_FREE.
 *   SGD on this model runs at the edge of stability (the loss oscillates from step to step even at
 *   lr 0.05), which amplifies float32 rounding: measured worst 3e-2 over 50 steps, and with some
 *   seeds already 3e-5 at step 4 (gfx902 profile), so only the first two steps are held to 1e-5.
 *   resynced: every SYNC_EVERY steps the reference restarts from the device's current weights and
 *   that step's loss must match within LOSS_TOL_EXACT, so a fault that only shows late in training
 *   (not hidden by the loose free-running bound) still fails. */
#define EXACT_STEPS 2
#define LOSS_TOL_EXACT 1e-5
#define LOSS_TOL_FREE 2.5e-1 /* chaotic drift: 8.4e-2 seen (seed 2); the resynced check is the sharp one */
#define SYNC_EVERY 5 /* the sharp check, from the device's own weights: often */
/* The loss must fall: the last step's below this fraction of the first. */
#define LOSS_FALL 0.9

/* One step on the device with the loss read back (blocking). */
static float device_step(gpt_model *m, float lr, int64_t step)
{
    TU_OK(gpt_model_step(m, lr, step));
    float loss = 0.0f;
    TU_OK(clt_tensor_read(gpt_model_loss(m), &loss, sizeof loss));
    return loss;
}

/* Next-token data: each sequence follows perm from a random start. */
static void make_data(const gpt_config *c, int32_t *ids, int32_t *targets)
{
    int32_t *perm = malloc((size_t)c->vocab * sizeof(int32_t));
    ck_assert_ptr_nonnull(perm);
    for (int i = 0; i < c->vocab; i++)
        perm[i] = i;
    for (int i = c->vocab - 1; i > 0; i--) {
        int j = (int)(tu_rng_next() % (uint64_t)(i + 1));
        int32_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (int b = 0; b < c->batch; b++) {
        int32_t tok = (int32_t)(tu_rng_next() % (uint64_t)c->vocab);
        for (int t = 0; t < c->seq; t++) {
            ids[b * c->seq + t] = tok;
            tok = perm[tok];
            targets[b * c->seq + t] = tok;
        }
    }
    free(perm);
}

START_TEST(test_gpt_trains_like_reference)
{
    const gpt_config c = {512, 128, 4, 2, 2, 128};
    gpt_layout l;
    gpt_layout_of(&c, &l);
    float *params = malloc(l.total * sizeof(float));
    double *ref = malloc(l.total * sizeof(double));
    int32_t *ids = malloc((size_t)(c.batch * c.seq) * 4), *targets = malloc((size_t)(c.batch * c.seq) * 4);
    ck_assert(params && ref && ids && targets);
    gpt_init_params(&c, tu_rng_next(), params);
    for (size_t i = 0; i < l.total; i++)
        ref[i] = params[i];
    make_data(&c, ids, targets);
    clt_context *ctx = tu_context();
    gpt_model *m = NULL;
    TU_OK(gpt_model_create(ctx, &c, params, ids, targets, &m));
    double first = 0.0, last = 0.0, worst = 0.0;
    double *synced = malloc(l.total * sizeof(double)), worst_sync = 0.0;
    ck_assert_ptr_nonnull(synced);
    for (int s = 1; s <= GPT_STEPS; s++) {
        int sync = s % SYNC_EVERY == 0;
        if (sync) {
            TU_OK(clt_tensor_read(gpt_model_params(m), params, l.total * sizeof(float)));
            for (size_t i = 0; i < l.total; i++)
                synced[i] = params[i];
        }
        float got = device_step(m, (float)GPT_LR, s);
        double want = ref_gpt_step(&c, ref, ids, targets, GPT_LR);
        double rel = fabs(got - want) / want;
        worst = rel > worst ? rel : worst;
        if (getenv("GPT_TRACE"))
            printf("step %d: %.7f %.7f %.2e\n", s, got, want, rel);
        double tol = s <= EXACT_STEPS ? LOSS_TOL_EXACT : LOSS_TOL_FREE;
        ck_assert_msg(rel <= tol, "step %d: loss %.7g, reference %.7g (relative %.3g, allowed %.3g)",
                      s, got, want, rel, tol);
        if (sync) {
            double want_sync = ref_gpt_step(&c, synced, ids, targets, GPT_LR);
            double rel_sync = fabs(got - want_sync) / want_sync;
            worst_sync = rel_sync > worst_sync ? rel_sync : worst_sync;
            ck_assert_msg(rel_sync <= LOSS_TOL_EXACT,
                          "step %d: loss %.7g, reference from the same weights %.7g (relative %.3g)",
                          s, got, want_sync, rel_sync);
        }
        if (s == 1)
            first = got;
        last = got;
    }
    printf("gpt: loss %.4f -> %.4f over %d steps; worst relative difference %.2e free-running, "
           "%.2e resynced\n", first, last, GPT_STEPS, worst, worst_sync);
    ck_assert_msg(last < LOSS_FALL * first, "loss did not fall: %.5g -> %.5g", first, last);
    gpt_model_free(m);
    tu_context_free(ctx);
    free(params), free(ref), free(synced), free(ids), free(targets);
}
END_TEST

Suite *gpt_suite(void)
{
    Suite *s = suite_create("gpt");
    TCase *tc = tcase_create("gpt");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_gpt_trains_like_reference);
    suite_add_tcase(s, tc);
    return s;
}
