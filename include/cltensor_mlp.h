/**
 * @file
 * cltensor fused MLP: a small fully connected network (input encoding, dense layers with an
 * activation each, MSE loss, Adam or SGD) whose forward pass is ONE launch and whose training step
 * is TWO (forward + loss + backward + per-group weight gradients; then a fixed-order reduction of
 * the gradients fused with the optimizer update; the loss is summed in a fixed order by the first
 * on GPUs, where its read goes between the two, by the second on CPUs), when every width is <= 
 * CLT_MLP_FUSED_MAX_WIDTH. Wider networks run the general per-layer path (one GEMM per layer and
 * direction, the library's clt_gemm) with the same API and results to rounding. On a CPU device
 * (POCL) CLT_MLP_PATH_AUTO takes the fused kernels shaped for CPUs ("fused-cpu": one work item per
 * core-sized tile, SIMD across points; the same launch counts), which measured faster there than
 * both the GPU-shaped fused kernels and the per-layer path.
 * clt_mlp_path_name says which path a network runs; the profiler's implementation names are
 * mlp_forward, mlp_train and mlp_update on the fused path, mlp_cpu_forward, mlp_cpu_train and
 * mlp_update on fused-cpu, and the GEMM kernels on the per-layer path.
 *
 * Parameters live in ONE flat f32 tensor (clt_mlp_params): for each layer l in order, its weight
 * W_l [in_l, out_l] row-major (y = x W + b, as torch's Linear with its weight transposed), then its
 * bias b_l [out_l]. clt_mlp_grads has the same layout. in_0 is the encoding's width: `inputs` for
 * CLT_MLP_ENCODING_IDENTITY, 2F for Fourier features [sin(scale x B), cos(scale x B)] (B [inputs, F]).
 *
 * Results are deterministic: the same inputs give the same bits on the same device and path (every
 * sum has a fixed order; no atomics).
 *
 * Common rules (as in cltensor_ops.h): tensors are f32 (CLT_ERR_INVALID_DTYPE), of the network's
 * context (CLT_ERR_CONTEXT_MISMATCH), not NULL (CLT_ERR_INVALID_ARGUMENT); on any error nothing is
 * enqueued and nothing changes, and clt_last_error(ctx) starts with the call's name.
 */
#ifndef CLTENSOR_MLP_H
#define CLTENSOR_MLP_H

#include "cltensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Dense layers of one network, at most. */
#define CLT_MLP_MAX_LAYERS 16
/** The widest layer (or encoding) the fused kernels hold. */
#define CLT_MLP_FUSED_MAX_WIDTH 128
/** The widest layer any path takes. */
#define CLT_MLP_MAX_WIDTH 65536

/** The input encoding: what the first layer sees of a point. */
typedef enum clt_mlp_encoding {
    CLT_MLP_ENCODING_IDENTITY = 0, /**< the input coordinates themselves */
    CLT_MLP_ENCODING_FOURIER = 1   /**< [sin(scale x B), cos(scale x B)], B [inputs, F] */
} clt_mlp_encoding;

/** The loss a training step minimises. */
typedef enum clt_mlp_loss_kind {
    CLT_MLP_LOSS_MSE = 0 /**< mean squared error over every output element */
} clt_mlp_loss_kind;

/** The optimizer of a training step. */
typedef enum clt_mlp_optimizer {
    CLT_MLP_ADAM = 0, /**< torch.optim.Adam (amsgrad off; weight_decay as L2 on the gradient) */
    CLT_MLP_SGD = 1   /**< torch.optim.SGD with momentum (dampening, no nesterov) */
} clt_mlp_optimizer;

/** Which implementation runs the network. */
typedef enum clt_mlp_path {
    CLT_MLP_PATH_AUTO = 0,  /**< fused when every width fits (fused-cpu on CPU devices), else per-layer */
    CLT_MLP_PATH_FUSED = 1, /**< fused, or CLT_ERR_UNSUPPORTED at clt_mlp_create */
    CLT_MLP_PATH_LAYERS = 2, /**< the general per-layer path (clt_gemm per layer) */
    CLT_MLP_PATH_FUSED_CPU = 3 /**< fused kernels shaped for CPU devices (auto's choice there), or
                                    CLT_ERR_UNSUPPORTED at clt_mlp_create */
} clt_mlp_path;

/** A network: encoding, dense layers, loss and optimizer (clt_mlp_desc_init, then set the layers). */
typedef struct clt_mlp_desc {
    int64_t inputs;                               /**< coordinates per point, >= 1 */
    clt_mlp_encoding encoding;                    /**< the input encoding */
    int64_t fourier_features;                     /**< F (encoding width 2F), Fourier only */
    float fourier_scale;                          /**< e.g. 2 pi; finite */
    int layers;                                   /**< 1 .. CLT_MLP_MAX_LAYERS */
    int64_t widths[CLT_MLP_MAX_LAYERS];           /**< output width of each layer, >= 1 */
    clt_unary_op activations[CLT_MLP_MAX_LAYERS]; /**< CLT_IDENTITY, CLT_TANH, CLT_RELU,
                                                       CLT_SIGMOID or CLT_SILU, per layer */
    clt_mlp_loss_kind loss;                       /**< the loss (MSE) */
    clt_mlp_optimizer optimizer;                  /**< Adam or SGD */
    float lr;                                     /**< learning rate, >= 0 */
    float beta1;                                  /**< Adam first-moment decay, in [0, 1) */
    float beta2;                                  /**< Adam second-moment decay, in [0, 1) */
    float eps;                                    /**< Adam, >= 0 */
    float momentum;                               /**< SGD, in [0, 1) */
    float dampening;                              /**< SGD, in [0, 1] */
    float weight_decay;                           /**< >= 0, added to the gradient (L2) */
    clt_mlp_path path;                            /**< which implementation */
} clt_mlp_desc;

/** A network on one context: its parameters, optimizer state and workspace. */
typedef struct clt_mlp clt_mlp;

/** Defaults: 2 inputs, identity encoding, no layers (set layers/widths/activations), MSE, Adam with
 *  torch's defaults (lr 1e-3, betas 0.9 / 0.999, eps 1e-8), SGD momentum 0.9 dampening 0, weight
 *  decay 0, path auto. */
CLT_API void clt_mlp_desc_init(clt_mlp_desc *d);

/** Build a network on ctx. B is Fourier's [inputs, F] matrix (copied; NULL for the identity
 *  encoding). Parameters start uniform in +-1/sqrt(in_l) (torch.nn.Linear's default bound) from
 *  `seed`; the optimizer state starts at zero.
 *  Statuses: CLT_ERR_INVALID_ARGUMENT for a bad description (inputs < 1, layers outside
 *  1..CLT_MLP_MAX_LAYERS, a width outside 1..CLT_MLP_MAX_WIDTH, an unknown activation, loss,
 *  optimizer or path, a hyper-parameter out of range, B missing or given when not needed),
 *  CLT_ERR_INVALID_SHAPE (B not [inputs, F]), CLT_ERR_UNSUPPORTED (path FUSED or FUSED_CPU with a width or
 *  encoding wider than CLT_MLP_FUSED_MAX_WIDTH, or a device that cannot hold the fused kernel's
 *  state; a CLT_SILU layer in a network that runs per-layer), memory errors. On failure
 *  *out is NULL and nothing was enqueued. */
CLT_API clt_status clt_mlp_create(clt_context *ctx, const clt_mlp_desc *desc, const clt_tensor *B,
                                  uint64_t seed, clt_mlp **out);
/** Free the network and its tensors (NULL: nothing). */
CLT_API void clt_mlp_free(clt_mlp *mlp);

/** The flat parameters, their gradients (after clt_mlp_train_step / clt_mlp_gradients) and the
 *  loss [1] (the mean of the last step that computed it). Owned by the network; they may be read
 *  and written (e.g. clt_tensor_write to load weights) but not freed. */
CLT_API clt_tensor *clt_mlp_params(const clt_mlp *mlp);
/** The flat gradients [nparams], same layout as clt_mlp_params (see there). */
CLT_API clt_tensor *clt_mlp_grads(const clt_mlp *mlp);
/** The loss [1] (see clt_mlp_params). */
CLT_API clt_tensor *clt_mlp_loss(const clt_mlp *mlp);
/** "fused", "fused-cpu" or "layers": the path this network runs ("" for NULL). */
CLT_API const char *clt_mlp_path_name(const clt_mlp *mlp);
/** Optimizer steps done (0 for NULL). */
CLT_API int64_t clt_mlp_steps(const clt_mlp *mlp);

/** y [N, out] = the network at x [N, inputs]. N >= 0 (0: nothing enqueued). Fused: one launch.
 *  CLT_ERR_INVALID_SHAPE for mismatched shapes, CLT_ERR_ALIASING if y overlaps x. */
CLT_API clt_status clt_mlp_forward(clt_mlp *mlp, const clt_tensor *x, clt_tensor *y);

/** Forward, loss, backward into clt_mlp_grads (no update); the loss into clt_mlp_loss. N >= 1.
 *  Fused: two launches. */
CLT_API clt_status clt_mlp_gradients(clt_mlp *mlp, const clt_tensor *x, const clt_tensor *target);

/** One training step on (x [N, inputs], target [N, out]), N >= 1: forward, MSE loss, backward,
 *  the optimizer update of every parameter. Fused: two launches. With loss_out non-NULL the loss
 *  is computed into clt_mlp_loss and *loss_out receives a future of it (clt_tensor_read_async: the
 *  call never waits; clt_future_get then clt_future_free). With loss_out NULL (deferred loss) the
 *  loss reduction is skipped and clt_mlp_loss keeps its last value. Never blocks. */
CLT_API clt_status clt_mlp_train_step(clt_mlp *mlp, const clt_tensor *x, const clt_tensor *target,
                                      clt_future **loss_out);

#ifdef __cplusplus
}
#endif
#endif /* CLTENSOR_MLP_H */
