/**
 * @file
 * cltensor training ops: the optimizer step, the loss and the input encoding of a small network,
 * each ONE kernel launch. Included by cltensor.h. f32 only; ops only enqueue.
 *
 * The intended layout (see bench/bench_pinn.c): every parameter of a network in ONE flat tensor and
 * each layer's weight and bias as clt_tensor_view()s of it, and the same for the gradients and the
 * two Adam moments; then the whole network's update is a single clt_adam_step over the flat tensors.
 *
 * Common rules (as in cltensor_ops.h): every tensor of a call belongs to the same context
 * (CLT_ERR_CONTEXT_MISMATCH), is f32 (CLT_ERR_INVALID_DTYPE) and not NULL (CLT_ERR_INVALID_ARGUMENT);
 * on any error nothing is enqueued and no tensor changes; clt_last_error(ctx) names the call.
 */
#ifndef CLTENSOR_TRAIN_H
#define CLTENSOR_TRAIN_H

#include "cltensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Adam hyper-parameters, as torch.optim.Adam (amsgrad off). weight_decay is L2 regularisation
 *  added to the gradient (grad + weight_decay * param), not AdamW's decoupled decay. */
typedef struct clt_adam_params {
    float lr;           /**< >= 0 */
    float beta1;        /**< first-moment decay, in [0, 1) */
    float beta2;        /**< second-moment decay, in [0, 1) */
    float eps;          /**< >= 0 */
    float weight_decay; /**< >= 0 */
} clt_adam_params;

/** torch.optim.Adam's defaults: lr 1e-3, betas 0.9 / 0.999, eps 1e-8, weight_decay 0. */
CLT_API void clt_adam_params_init(clt_adam_params *p);

/** One fused Adam update of param, m (first moment) and v (second moment) from grad, in place:
 *    g = grad + weight_decay * param
 *    m = beta1 * m + (1 - beta1) * g;  v = beta2 * v + (1 - beta2) * g^2
 *    param -= (lr / (1 - beta1^step)) * m / (sqrt(v) / sqrt(1 - beta2^step) + eps)
 *  step is the 1-based number of this update (the bias corrections are computed on the host in
 *  double). Zero m and v before the first step. grad is only read. The four tensors have the same
 *  shape (CLT_ERR_INVALID_SHAPE) and no two of them overlap (CLT_ERR_ALIASING). step < 1 or a
 *  hyper-parameter outside its range (or not finite): CLT_ERR_INVALID_ARGUMENT. One launch. */
CLT_API clt_status clt_adam_step(clt_tensor *param, const clt_tensor *grad, clt_tensor *m,
                                 clt_tensor *v, const clt_adam_params *p, int64_t step);

/** Mean squared error: out = sum((pred - target)^2) / numel(pred), as torch's mse_loss with
 *  reduction 'mean' (NaN when pred is empty). pred and target have the same shape (no
 *  broadcasting; CLT_ERR_INVALID_SHAPE); out has exactly one element (any shape, e.g. [] or [1];
 *  else CLT_ERR_INVALID_SHAPE) and may not overlap pred or target (CLT_ERR_ALIASING). One launch:
 *  a single work-group reduces everything in a fixed order (deterministic), so it suits losses of
 *  up to ~1M elements; larger ones should use clt_reduce. */
CLT_API clt_status clt_mse_loss(const clt_tensor *pred, const clt_tensor *target, clt_tensor *out);

/** Gradient of clt_mse_loss with respect to pred: dpred = 2 / numel * (pred - target). All three
 *  have the same shape (CLT_ERR_INVALID_SHAPE). dpred may be the same memory as pred or target (in
 *  place); any other overlap is CLT_ERR_ALIASING. One launch. */
CLT_API clt_status clt_mse_loss_backward(const clt_tensor *pred, const clt_tensor *target,
                                         clt_tensor *dpred);

/** clt_mse_loss and clt_mse_loss_backward in ONE launch (same results, same single-work-group
 *  limits): out = mean((pred - target)^2), dpred = 2 / numel * (pred - target). Checks of both;
 *  dpred may be the same memory as pred or target (in place); any other overlap of dpred, and any
 *  overlap of out, is CLT_ERR_ALIASING. */
CLT_API clt_status clt_mse_loss_with_grad(const clt_tensor *pred, const clt_tensor *target,
                                          clt_tensor *out, clt_tensor *dpred);

/** Random Fourier features: with p = scale * (x @ B), x [N, d] and B [d, F],
 *  out [N, 2F] = [sin(p), cos(p)] (columns 0..F-1 the sines, F..2F-1 the cosines). scale is
 *  typically 2*pi; it must be finite (CLT_ERR_INVALID_ARGUMENT). Shapes must match (2-D tensors,
 *  CLT_ERR_INVALID_SHAPE). out may not overlap x or B (CLT_ERR_ALIASING). One launch, one work item
 *  per output element (d multiply-adds each), so it is meant for small d (input coordinates). */
CLT_API clt_status clt_fourier_features(const clt_tensor *x, const clt_tensor *B, float scale,
                                        clt_tensor *out);


/* ------------------------------------------------------------------ more optimisers */

/** torch.optim.AdamW's defaults: lr 1e-3, betas 0.9 / 0.999, eps 1e-8, weight_decay 0.01. */
CLT_API void clt_adamw_params_init(clt_adam_params *p);

/** One fused AdamW update (torch.optim.AdamW, amsgrad off): decoupled weight decay,
 *    param *= 1 - lr * weight_decay, then the Adam step without L2 term (g = grad).
 *  Same tensors, checks and statuses as clt_adam_step; the same kernel (one launch). */
CLT_API clt_status clt_adamw_step(clt_tensor *param, const clt_tensor *grad, clt_tensor *m,
                                  clt_tensor *v, const clt_adam_params *p, int64_t step);

/** SGD hyper-parameters, as torch.optim.SGD. */
typedef struct clt_sgd_params {
    float lr;           /**< >= 0 */
    float momentum;     /**< >= 0 */
    float dampening;    /**< in [0, 1] */
    float weight_decay; /**< >= 0, L2 (added to the gradient) */
    int nesterov;       /**< 1: Nesterov momentum (needs momentum > 0 and dampening 0) */
} clt_sgd_params;

/** torch's defaults: lr 1e-3 (torch requires one), momentum 0, dampening 0, weight_decay 0, no Nesterov. */
CLT_API void clt_sgd_params_init(clt_sgd_params *p);

/** One SGD update in place, as torch.optim.SGD:
 *    g = grad + weight_decay * param
 *    with momentum: buf = g on step 1, else momentum * buf + (1 - dampening) * g;
 *                   g = nesterov ? g + momentum * buf : buf
 *    param -= lr * g
 *  momentum_buf (param's shape) is needed when momentum > 0 (CLT_ERR_INVALID_ARGUMENT when NULL;
 *  ignored otherwise); on step 1 it is only written. Shapes: CLT_ERR_INVALID_SHAPE; overlaps:
 *  CLT_ERR_ALIASING; step < 1, a hyper-parameter out of range, nesterov with momentum 0 or
 *  dampening != 0: CLT_ERR_INVALID_ARGUMENT. One launch. */
CLT_API clt_status clt_sgd_step(clt_tensor *param, const clt_tensor *grad, clt_tensor *momentum_buf,
                                const clt_sgd_params *p, int64_t step);

/* Multi-tensor forms: one call updates a list of `count` parameter tensors (each with its own shape;
 * param[i], grad[i], m[i], v[i] have the same shape). The tensors are grouped into segments: tensors
 * that lie back to back in one buffer for every role (views of one flat parameter arena, as
 * bench/bench_pinn.c lays them out) merge into one segment; each launch updates up to 8 segments
 * (every buffer of a launch is a kernel argument: OpenCL 1.2 has no pointer tables). So a whole
 * network in an arena is ONE launch, and 50 separately allocated tensors are 7 launches. Results are
 * those of the single-tensor calls. No written tensor (param, m, v, momentum_buf) may overlap any
 * other tensor of the call (grads may overlap grads): CLT_ERR_ALIASING. count 0 does nothing;
 * count < 0 or a NULL array or element: CLT_ERR_INVALID_ARGUMENT. */

/** clt_adam_step over a list (see above). */
CLT_API clt_status clt_adam_step_multi(int count, clt_tensor *const *param,
                                       const clt_tensor *const *grad, clt_tensor *const *m,
                                       clt_tensor *const *v, const clt_adam_params *p, int64_t step);
/** clt_adamw_step over a list (see above). */
CLT_API clt_status clt_adamw_step_multi(int count, clt_tensor *const *param,
                                        const clt_tensor *const *grad, clt_tensor *const *m,
                                        clt_tensor *const *v, const clt_adam_params *p, int64_t step);
/** clt_sgd_step over a list (see above); momentum_buf may be NULL when momentum is 0. */
CLT_API clt_status clt_sgd_step_multi(int count, clt_tensor *const *param,
                                      const clt_tensor *const *grad, clt_tensor *const *momentum_buf,
                                      const clt_sgd_params *p, int64_t step);

/** torch.nn.utils.clip_grad_norm_ with norm_type 2, entirely on the device (no host read):
 *  total = sqrt(sum over every element of every grad[i]^2), written to total_norm (one f32
 *  element, may be NULL); then every grad[i] *= min(1, max_norm / (total + 1e-6)). max_norm must be
 *  finite and >= 0 (CLT_ERR_INVALID_ARGUMENT). The grads may not overlap each other or total_norm
 *  (CLT_ERR_ALIASING). Launches: one sum of squares per 8 segments (the last group of the last one
 *  finishes the norm deterministically), then one scaling per 8 segments. The float sum of squares
 *  overflows to inf for norms past ~1.8e19 (then every coefficient is 0, as in torch's float32). */
CLT_API clt_status clt_clip_grad_norm(int count, clt_tensor *const *grad, float max_norm,
                                      clt_tensor *total_norm);

#ifdef __cplusplus
}
#endif
#endif /* CLTENSOR_TRAIN_H */
