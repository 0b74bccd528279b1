/* Plain-C double references for the losses (include/cltensor_loss.h). */
#ifndef CLT_REF_LOSS_REF_H
#define CLT_REF_LOSS_REF_H

#include <stdint.h>

/* Cross-entropy of z [R, K] with class targets tidx [R] (prob == NULL) or probabilities prob
 * [R, K]; reduction 0 none (loss [R]), 1 mean, 2 sum (loss[0]). dz [R, K] (may be NULL): the
 * gradient of the reduced loss (of the sum for none). Written from torch's definition: log_softmax,
 * smoothed target distribution, weighted negative log-likelihood. */
void ref_cross_entropy(int64_t R, int64_t K, const double *z, const int32_t *tidx, const double *prob,
                       double smoothing, int32_t ignore_index, int reduction, double *loss, double *dz);

/* mode 0 BCE with logits (pos_weight [D] may be NULL), 1 L1, 2 smooth L1 (beta); n elements, last
 * dim D; per-element loss into loss (reduction 0) or loss[0]; dx (may be NULL). */
void ref_pointwise_loss(int mode, int64_t n, int64_t D, const double *x, const double *y,
                        const double *pos_weight, double beta, int reduction, double *loss, double *dx);

#endif
