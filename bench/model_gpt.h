/* The small GPT-style model of issue 20 on the device, built only from public cltensor calls: token
 * + position embeddings; pre-norm blocks of causal multi-head attention (clt_attention_*) and a
 * ReLU MLP with residual connections (GEMM epilogues); a final layer norm; a linear head without
 * bias; mean cross-entropy of the next token; plain SGD. Shared by the model test
 * (tests/models/check_gpt.c, against the float64 model of tests/ref/gpt_ref.c) and the transformer
 * bench suite. Parameters live in one flat f32 tensor (gpt_layout), so one SGD launch updates all. */
#ifndef BENCH_MODEL_GPT_H
#define BENCH_MODEL_GPT_H

#include <stddef.h>
#include <stdint.h>

#include "cltensor_all.h"

#define GPT_MAX_LAYERS 4
#define GPT_LN_EPS 1e-5

typedef struct gpt_config {
    int vocab, d, heads, layers, batch, seq; /* seq <= the context the position table holds */
} gpt_config;

typedef struct gpt_layer_layout {
    size_t ln1_g, ln1_b, wqkv, bqkv, wo, bo, ln2_g, ln2_b, w1, b1, w2, b2;
} gpt_layer_layout;

/* Element offsets of every parameter in the flat array. Weights are [in, out] row-major (y = x W);
 * wqkv's 3d columns are [q | k | v], each [heads, d / heads]; w1 [d, 4d], w2 [4d, d]. */
typedef struct gpt_layout {
    size_t wte, wpe, lnf_g, lnf_b, wlm;
    gpt_layer_layout layer[GPT_MAX_LAYERS];
    size_t total;
} gpt_layout;

void gpt_layout_of(const gpt_config *c, gpt_layout *l);

/* GPT-2-like initial weights from a seed: normal(0, 0.02) matrices and embeddings (the projections
 * into the residual stream scaled by 1 / sqrt(2 layers)), zero biases, unit layer-norm gains. */
void gpt_init_params(const gpt_config *c, uint64_t seed, float *params);

typedef struct gpt_model gpt_model;

/* A model on ctx with the given flat parameters (host, gpt_layout order), token ids and next-token
 * targets (host, [batch, seq] each). Allocates every activation once. */
clt_status gpt_model_create(clt_context *ctx, const gpt_config *c, const float *params,
                            const int32_t *ids, const int32_t *targets, gpt_model **out);
void gpt_model_free(gpt_model *m);

/* Enqueue one training step (forward, loss, backward, SGD with lr; step counts from 1). The loss
 * lands in gpt_model_loss (one f32 element); nothing blocks. */
clt_status gpt_model_step(gpt_model *m, float lr, int64_t step);
const clt_tensor *gpt_model_loss(const gpt_model *m);
/* The flat parameter tensor. */
const clt_tensor *gpt_model_params(const gpt_model *m);

#endif
