/**
 * @file
 * cltensor losses: cross-entropy fused with log-softmax, binary cross-entropy with logits, L1 and
 * smooth L1, each with its gradient in the same pass when asked for. f32 (targets of
 * clt_cross_entropy may be i32 class indices); ops only enqueue; a scalar loss stays a device
 * tensor (read it with clt_tensor_read_async when it is wanted on the host).
 *
 * Common rules (as in cltensor_ops.h): every tensor of a call belongs to the same context
 * (CLT_ERR_CONTEXT_MISMATCH) and has the documented dtype (CLT_ERR_INVALID_DTYPE); required tensors
 * are not NULL (CLT_ERR_INVALID_ARGUMENT); outputs overlap neither the inputs nor each other
 * (CLT_ERR_ALIASING). On any error nothing is enqueued and no tensor changes; clt_last_error(ctx)
 * names the call.
 *
 * Scalar reductions (mean, sum) are deterministic: a fixed number of work-groups (per device) each
 * sums its share in a fixed order and the last group to finish adds the partials in group order
 * (one launch; a per-context workspace holds the partials, so calls on one context must not run
 * concurrently, as for every op).
 */
#ifndef CLTENSOR_LOSS_H
#define CLTENSOR_LOSS_H

#include "cltensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/** How a loss reduces its per-element (per-row) values, as torch's `reduction`. */
typedef enum clt_reduction {
    CLT_REDUCTION_NONE = 0, /**< one value per element (row): loss has the input's (row) shape */
    CLT_REDUCTION_MEAN = 1, /**< the mean: loss has one element */
    CLT_REDUCTION_SUM = 2   /**< the sum: loss has one element */
} clt_reduction;

/** Settings of clt_cross_entropy, as torch.nn.functional.cross_entropy (no class weights). */
typedef struct clt_cross_entropy_params {
    clt_reduction reduction; /**< default MEAN */
    float label_smoothing;   /**< in [0, 1]; default 0 */
    int32_t ignore_index;    /**< class-index targets equal to it add nothing (default -100) */
} clt_cross_entropy_params;

/** torch's defaults: mean, no smoothing, ignore_index -100. */
CLT_API void clt_cross_entropy_params_init(clt_cross_entropy_params *p);

/** Cross-entropy of logits [..., K] over the last axis (R = numel / K rows), fused with the
 *  log-softmax: with lse = log(sum_k exp(z_k)) and eps = label_smoothing,
 *    class targets (i32, the logits' shape without the last axis, or [R]): for t != ignore_index,
 *      loss_r = (1 - eps) * (lse - z_t) + eps / K * sum_k (lse - z_k); ignored rows add 0;
 *    probability targets (f32, the logits' shape): q = (1 - eps) * p + eps / K,
 *      loss_r = sum_k q_k * (lse - z_k).
 *  reduction NONE: loss has R elements; MEAN: sum / (the number of rows not ignored; R for
 *  probability targets), NaN when that is 0; SUM: the sum. A class target outside [0, K) that is
 *  not ignore_index makes its row's loss NaN (nothing is read out of bounds).
 *  dlogits (the logits' shape, may be NULL): the gradient of the loss (of the sum of loss_r for
 *  NONE) with respect to the logits, softmax - q (q the one-hot target, smoothed), scaled like the
 *  reduction; 0 in ignored rows; written in the same launch.
 *  K == 0: CLT_ERR_INVALID_SHAPE; label_smoothing outside [0, 1], a bad reduction or p NULL:
 *  CLT_ERR_INVALID_ARGUMENT. One launch, one work-group per row (a grid of rows for many rows). */
CLT_API clt_status clt_cross_entropy(const clt_tensor *logits, const clt_tensor *target,
                                     const clt_cross_entropy_params *p, clt_tensor *loss,
                                     clt_tensor *dlogits);

/** Binary cross-entropy with logits, as torch.nn.functional.binary_cross_entropy_with_logits:
 *  loss_i = pw * y * softplus(-x) + (1 - y) * softplus(x), pw = pos_weight[i % D] (pos_weight [D],
 *  D = x's last dim, may be NULL: 1). x and y (targets) have the same shape. loss: x's shape for
 *  NONE, one element otherwise. dx (x's shape, may be NULL): d loss / dx = sigmoid(x) * (pw * y +
 *  1 - y) - pw * y, scaled like the reduction (1 / numel for MEAN). One launch. */
CLT_API clt_status clt_bce_with_logits(const clt_tensor *x, const clt_tensor *y,
                                       const clt_tensor *pos_weight, clt_reduction reduction,
                                       clt_tensor *loss, clt_tensor *dx);

/** L1 loss |x - y| (torch.nn.functional.l1_loss); dx = sign(x - y) (0 at 0), scaled like the
 *  reduction. As clt_bce_with_logits otherwise (no pos_weight). One launch. */
CLT_API clt_status clt_l1_loss(const clt_tensor *x, const clt_tensor *y, clt_reduction reduction,
                               clt_tensor *loss, clt_tensor *dx);

/** Smooth L1 loss (torch.nn.functional.smooth_l1_loss): d = x - y, 0.5 d^2 / beta where |d| < beta,
 *  else |d| - 0.5 beta; beta == 0 is L1. dx = d / beta or sign(d). beta < 0 or not finite:
 *  CLT_ERR_INVALID_ARGUMENT. One launch. */
CLT_API clt_status clt_smooth_l1_loss(const clt_tensor *x, const clt_tensor *y, float beta,
                                      clt_reduction reduction, clt_tensor *loss, clt_tensor *dx);

#ifdef __cplusplus
}
#endif
#endif /* CLTENSOR_LOSS_H */
