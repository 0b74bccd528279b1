/* The small GPT-style model of bench/model_gpt.h in double: the reference of
 * tests/models/check_gpt.c (same flat parameter layout, so both start from the same weights). */
#ifndef CLT_GPT_REF_H
#define CLT_GPT_REF_H

#include "model_gpt.h"

/* One training step in double: the mean cross-entropy of targets given ids (both [batch, seq]),
 * its gradient, then params -= lr * grad (plain SGD). Returns the loss before the update. */
double ref_gpt_step(const gpt_config *c, double *params, const int32_t *ids,
                    const int32_t *targets, double lr);

#endif
