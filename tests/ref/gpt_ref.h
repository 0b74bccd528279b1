/* A small GPT-style model (token + position embeddings; pre-norm blocks of causal multi-head
 * attention and a ReLU MLP; final layer norm; a linear head without bias; mean cross-entropy of the
 * next token) in double: the reference of tests/models/check_gpt.c. Parameters live in one flat
 * array (gpt_layout), shared with the device model so both start from the same weights. */
#ifndef CLT_GPT_REF_H
#define CLT_GPT_REF_H

#include <stddef.h>
#include <stdint.h>

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

/* One training step in double: the mean cross-entropy of targets given ids (both [batch, seq]),
 * its gradient, then params -= lr * grad (plain SGD). Returns the loss before the update. */
double ref_gpt_step(const gpt_config *c, double *params, const int32_t *ids,
                    const int32_t *targets, double lr);

#endif
