/**
 * @file
 * cltensor normalisation ops: layer norm, RMS norm, batch norm and group norm, forward and backward.
 * f32 only; ops only enqueue; outputs are caller-provided tensors.
 *
 * Common rules (as in cltensor_ops.h): every tensor of a call belongs to the same context
 * (CLT_ERR_CONTEXT_MISMATCH), is f32 (CLT_ERR_INVALID_DTYPE); required tensors are not NULL
 * (CLT_ERR_INVALID_ARGUMENT; the optional ones are named "may be NULL"); outputs may not overlap
 * inputs or each other (CLT_ERR_ALIASING); eps must be finite and > 0 (CLT_ERR_INVALID_ARGUMENT).
 * On any error nothing is enqueued and no tensor changes; clt_last_error(ctx) names the call.
 *
 * Launches: each forward is ONE launch; each backward is one launch for dx (batch norm: dx, dgamma
 * and dbeta together) and one more when dgamma or dbeta is asked for.
 * Statistics are accumulated in f32 (two passes over the data: mean, then the centred variance).
 */
#ifndef CLTENSOR_NORM_H
#define CLTENSOR_NORM_H

#include "cltensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Layer norm over the last axis, as torch.nn.functional.layer_norm with normalized_shape = the
 *  last dim: x [..., D] -> y = (x - mean) * rstd * gamma + beta, rstd = 1 / sqrt(var + eps) with the
 *  biased variance. gamma, beta [D] may be NULL (1 and 0). mean and rstd, one value per row (any
 *  shape with numel = rows = numel(x) / D), may be NULL; the backward needs them. y has x's shape.
 *  Shapes that do not fit: CLT_ERR_INVALID_SHAPE (x must have at least one dim). D == 0 or no rows:
 *  nothing to do, success. One launch, one work-group per row. */
CLT_API clt_status clt_layer_norm(const clt_tensor *x, const clt_tensor *gamma, const clt_tensor *beta,
                                  float eps, clt_tensor *y, clt_tensor *mean, clt_tensor *rstd);

/** Gradients of clt_layer_norm from dy (x's shape) and the forward's mean and rstd: dx (x's shape;
 *  may be NULL), dgamma and dbeta ([D]; either may be NULL; they are overwritten, not accumulated).
 *  gamma may be NULL (the forward had none). dx may be the same memory as dy (in place). One launch
 *  for dx, one for dgamma / dbeta. */
CLT_API clt_status clt_layer_norm_backward(const clt_tensor *dy, const clt_tensor *x,
                                           const clt_tensor *gamma, const clt_tensor *mean,
                                           const clt_tensor *rstd, clt_tensor *dx, clt_tensor *dgamma,
                                           clt_tensor *dbeta);

/** RMS norm over the last axis, as torch.nn.functional.rms_norm: y = x * rstd * gamma with
 *  rstd = 1 / sqrt(mean(x^2) + eps). gamma [D] may be NULL; rstd (one per row) may be NULL. As
 *  clt_layer_norm otherwise. */
CLT_API clt_status clt_rms_norm(const clt_tensor *x, const clt_tensor *gamma, float eps, clt_tensor *y,
                                clt_tensor *rstd);

/** Gradients of clt_rms_norm: dx (may be NULL, may be dy's memory) and dgamma (may be NULL). */
CLT_API clt_status clt_rms_norm_backward(const clt_tensor *dy, const clt_tensor *x,
                                         const clt_tensor *gamma, const clt_tensor *rstd,
                                         clt_tensor *dx, clt_tensor *dgamma);

/** Group norm as torch.nn.functional.group_norm: x [N, C, *] (at least 2 dims; the trailing dims
 *  are flattened to HW), C split into `groups` groups of C / groups channels; each (n, group) is
 *  normalised over its channels and HW with the biased variance, then y = xhat * gamma[c] + beta[c]
 *  (gamma, beta [C], may be NULL). mean and rstd: N * groups values each (may be NULL). groups < 1
 *  or not dividing C: CLT_ERR_INVALID_ARGUMENT. One launch, one work-group per (n, group). */
CLT_API clt_status clt_group_norm(const clt_tensor *x, int64_t groups, const clt_tensor *gamma,
                                  const clt_tensor *beta, float eps, clt_tensor *y, clt_tensor *mean,
                                  clt_tensor *rstd);

/** Gradients of clt_group_norm: dx (may be NULL, may be dy's memory), dgamma, dbeta ([C], may be
 *  NULL). One launch for dx, one for dgamma / dbeta. */
CLT_API clt_status clt_group_norm_backward(const clt_tensor *dy, const clt_tensor *x, int64_t groups,
                                           const clt_tensor *gamma, const clt_tensor *mean,
                                           const clt_tensor *rstd, clt_tensor *dx,
                                           clt_tensor *dgamma, clt_tensor *dbeta);

/** Batch norm settings, as torch.nn.functional.batch_norm. */
typedef struct clt_batch_norm_params {
    int training;   /**< 1: batch statistics (and the running-stat update); 0: running statistics */
    float momentum; /**< running = (1 - momentum) * running + momentum * batch; in [0, 1] */
    float eps;      /**< > 0 */
} clt_batch_norm_params;

/** torch's defaults: training 1, momentum 0.1, eps 1e-5. */
CLT_API void clt_batch_norm_params_init(clt_batch_norm_params *p);

/** Batch norm over x [N, C] or [N, C, *] (NCHW: the trailing dims are flattened to HW), per channel c:
 *  training: mean and the biased variance over N * HW values; running_mean / running_var ([C], may
 *  be NULL: no update) are updated with momentum, running_var with the unbiased variance (times
 *  M / (M - 1), M = N * HW) as torch does; M == 1 in training is CLT_ERR_INVALID_SHAPE (torch:
 *  "Expected more than 1 value per channel"). Inference: running_mean and running_var are required
 *  (CLT_ERR_INVALID_ARGUMENT) and only read. y = (x - mean) * rstd * gamma[c] + beta[c]; gamma, beta
 *  [C] may be NULL. save_mean and save_rstd ([C], may be NULL) receive the mean and 1 / sqrt(var +
 *  eps) that were used (batch or running), which is what the backward takes. One launch, one
 *  work-group per channel. */
CLT_API clt_status clt_batch_norm(const clt_tensor *x, const clt_tensor *gamma, const clt_tensor *beta,
                                  clt_tensor *running_mean, clt_tensor *running_var,
                                  const clt_batch_norm_params *p, clt_tensor *y, clt_tensor *save_mean,
                                  clt_tensor *save_rstd);

/** Gradients of clt_batch_norm from the forward's save_mean and save_rstd: training selects the
 *  batch-statistics gradient (the statistics depend on x), else dx = dy * gamma * rstd. dx (may be
 *  NULL, may be dy's memory), dgamma and dbeta ([C], may be NULL). ONE launch for all three. */
CLT_API clt_status clt_batch_norm_backward(const clt_tensor *dy, const clt_tensor *x,
                                           const clt_tensor *gamma, const clt_tensor *save_mean,
                                           const clt_tensor *save_rstd, int training, clt_tensor *dx,
                                           clt_tensor *dgamma, clt_tensor *dbeta);

#ifdef __cplusplus
}
#endif
#endif /* CLTENSOR_NORM_H */
