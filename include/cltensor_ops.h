/**
 * @file
 * cltensor ops: elementwise, activations, fused elementwise expressions, reductions, softmax.
 * Included by cltensor.h. All ops take f32 tensors unless stated, write into a caller-provided
 * output tensor, only enqueue (never block) and are one kernel launch each.
 *
 * Common rules
 *   - Every tensor argument must belong to the same context (else CLT_ERR_CONTEXT_MISMATCH).
 *   - Shapes follow NumPy broadcasting: shapes are aligned at the last axis; each pair of dims must
 *     be equal or one of them 1. `out` must have exactly the broadcast shape (else
 *     CLT_ERR_INVALID_SHAPE; the message gives both shapes).
 *   - Aliasing: `out` may be the same memory as an input of the same shape (in-place ops). Any other
 *     overlap between out and an input is CLT_ERR_ALIASING. Reductions and softmax document theirs.
 *   - Empty tensors are valid: nothing is enqueued.
 *   - On any error nothing is enqueued and no tensor changes; clt_last_error(ctx) says why.
 */
#ifndef CLTENSOR_OPS_H
#define CLTENSOR_OPS_H

#include "cltensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ elementwise */

/** Binary ops. Comparisons give 1.0f where true, 0.0f where false. pow follows C powf. min/max
 *  return NaN if either operand is NaN. */
typedef enum clt_binary_op {
    CLT_ADD = 0,
    CLT_SUB = 1,
    CLT_MUL = 2,
    CLT_DIV = 3,
    CLT_MIN = 4,
    CLT_MAX = 5,
    CLT_POW = 6,
    CLT_EQ = 7,
    CLT_NE = 8,
    CLT_LT = 9,
    CLT_LE = 10,
    CLT_GT = 11,
    CLT_GE = 12
} clt_binary_op;

/** out = a op b, broadcasting. */
CLT_API clt_status clt_binary(clt_binary_op op, const clt_tensor *a, const clt_tensor *b,
                              clt_tensor *out);
/** out = a op s (tensor op scalar). */
CLT_API clt_status clt_binary_scalar(clt_binary_op op, const clt_tensor *a, float s, clt_tensor *out);
/** out = s op b (scalar op tensor), for the ops where order matters (s - b, s / b, pow(s, b)). */
CLT_API clt_status clt_scalar_binary(clt_binary_op op, float s, const clt_tensor *b, clt_tensor *out);
/** Shorthands for clt_binary. */
CLT_API clt_status clt_add(const clt_tensor *a, const clt_tensor *b, clt_tensor *out);
/** out = a - b, broadcasting (clt_binary with CLT_SUB). */
CLT_API clt_status clt_sub(const clt_tensor *a, const clt_tensor *b, clt_tensor *out);
/** out = a * b, broadcasting (clt_binary with CLT_MUL). */
CLT_API clt_status clt_mul(const clt_tensor *a, const clt_tensor *b, clt_tensor *out);
/** out = a / b, broadcasting (clt_binary with CLT_DIV). */
CLT_API clt_status clt_div(const clt_tensor *a, const clt_tensor *b, clt_tensor *out);

/** out = cond != 0 ? a : b, all three broadcast together. */
CLT_API clt_status clt_where(const clt_tensor *cond, const clt_tensor *a, const clt_tensor *b,
                             clt_tensor *out);
/** out = min(max(x, lo), hi). CLT_ERR_INVALID_ARGUMENT when lo > hi. */
CLT_API clt_status clt_clamp(const clt_tensor *x, float lo, float hi, clt_tensor *out);
/** out = a * b + c, broadcasting, one rounding per op (no fused multiply-add contraction promised). */
CLT_API clt_status clt_fma(const clt_tensor *a, const clt_tensor *b, const clt_tensor *c,
                           clt_tensor *out);

/** out = op(x). */
CLT_API clt_status clt_unary(clt_unary_op op, const clt_tensor *x, float alpha, clt_tensor *out);

/** Backward of an activation: dx = dy * op'(x). Each activation reads the cheaper of its forward
 *  input x and its forward output y; pass both if you have them, else the one it needs:
 *  y: SIGMOID, TANH, EXP; x: every other op (RELU and LEAKY_RELU accept either). The needed one
 *  being NULL is CLT_ERR_INVALID_ARGUMENT. x/y, dy and dx have equal shapes (no broadcasting); dx
 *  may alias dy. Every clt_unary_op is supported (SIGN's gradient is 0). */
CLT_API clt_status clt_unary_backward(clt_unary_op op, float alpha, const clt_tensor *x,
                                      const clt_tensor *y, const clt_tensor *dy, clt_tensor *dx);

/** Fused: out = act(x + bias), bias of shape [last dim of x] (or [1, ..., 1, last dim]). */
CLT_API clt_status clt_bias_activation(const clt_tensor *x, const clt_tensor *bias, clt_unary_op act,
                                       float alpha, clt_tensor *out);
/** Fused: out = act(a + b), broadcasting. */
CLT_API clt_status clt_add_activation(const clt_tensor *a, const clt_tensor *b, clt_unary_op act,
                                      float alpha, clt_tensor *out);

/* ------------------------------------------------------- expression ops */

/** A small elementwise expression over up to CLT_EXPR_MAX_INPUTS tensors and CLT_EXPR_MAX_SCALARS
 *  scalars, compiled into one kernel and cached by its structure (not by scalar values): building
 *  relu(a*b + c) once and evaluating it every step costs one launch per step and one compile per
 *  process (or none, with the disk cache). An expression is a plain description owned by the
 *  caller, not tied to a context. Node ids are small non-negative ints; builder calls return -1 on
 *  bad arguments (and clt_expr_eval then reports the first such error). */
#define CLT_EXPR_MAX_INPUTS 8
/** Most runtime scalars an expression reads. */
#define CLT_EXPR_MAX_SCALARS 8
/** Most nodes in one expression. */
#define CLT_EXPR_MAX_NODES 64

/** An elementwise expression under construction or ready to evaluate. Opaque; not tied to a
 *  context; one thread at a time. */
typedef struct clt_expr clt_expr;

/** A new empty expression, owned by the caller (clt_expr_free). CLT_ERR_INVALID_ARGUMENT for NULL,
 *  CLT_ERR_OUT_OF_HOST_MEMORY. Never blocks. */
CLT_API clt_status clt_expr_create(clt_expr **out);
/** Release an expression (work already enqueued from it is unaffected). NULL is a no-op. */
CLT_API void clt_expr_free(clt_expr *e);
/** Node reading input tensor `index` (0 .. CLT_EXPR_MAX_INPUTS-1). */
CLT_API int clt_expr_input(clt_expr *e, int index);
/** Node reading runtime scalar `index` (0 .. CLT_EXPR_MAX_SCALARS-1), given at eval time. */
CLT_API int clt_expr_scalar(clt_expr *e, int index);
/** op(a); `alpha` is a scalar node for LEAKY_RELU / ELU, else -1. */
CLT_API int clt_expr_unary(clt_expr *e, clt_unary_op op, int a, int alpha);
/** a op b. */
CLT_API int clt_expr_binary(clt_expr *e, clt_binary_op op, int a, int b);
/** cond != 0 ? a : b */
CLT_API int clt_expr_where(clt_expr *e, int cond, int a, int b);

/** Evaluate node `root` elementwise: inputs broadcast together to out's shape (which must be their
 *  broadcast shape, or larger when every input broadcasts to it). Inputs the expression does not
 *  use may be NULL. One launch. */
CLT_API clt_status clt_expr_eval(const clt_expr *e, int root, int ninputs,
                                 const clt_tensor *const *inputs, int nscalars, const float *scalars,
                                 clt_tensor *out);

/* ------------------------------------------------------------ reductions */

/** What clt_reduce computes over the reduced axes. */
typedef enum clt_reduce_op {
    CLT_REDUCE_SUM = 0,          /**< sum */
    CLT_REDUCE_MEAN = 1,         /**< arithmetic mean */
    CLT_REDUCE_MAX = 2,          /**< largest (NaN if any is NaN) */
    CLT_REDUCE_MIN = 3,          /**< smallest (NaN if any is NaN) */
    CLT_REDUCE_VAR = 4,          /**< population variance (divides by n) */
    CLT_REDUCE_VAR_UNBIASED = 5, /**< divides by n - 1 */
    CLT_REDUCE_L2NORM = 6        /**< sqrt(sum x^2) */
} clt_reduce_op;

/** Reduce x over `naxes` axes (naxes == 0 or axes == NULL: all axes). Axes may be negative, must be
 *  distinct (CLT_ERR_INVALID_AXIS otherwise). out has x's shape with the reduced dims removed
 *  (keepdim = 0; all axes -> ndim 0 scalar) or set to 1 (keepdim = 1). out may not overlap x.
 *  Reducing over an empty axis: SUM gives 0, MEAN/VAR NaN, MAX/MIN CLT_ERR_INVALID_SHAPE.
 *  One launch. */
CLT_API clt_status clt_reduce(clt_reduce_op op, const clt_tensor *x, int naxes, const int *axes,
                              int keepdim, clt_tensor *out);
/** Index of the largest (argmax) / smallest (argmin) element along `axis` into an I32 tensor (first
 *  index on ties; NaN counts as largest for argmax and smallest for argmin). */
CLT_API clt_status clt_argmax(const clt_tensor *x, int axis, int keepdim, clt_tensor *out);
/** The index of the smallest element along `axis`, as clt_argmax. */
CLT_API clt_status clt_argmin(const clt_tensor *x, int axis, int keepdim, clt_tensor *out);
/** Sum over the last axis, out of shape x.shape[:-1] (its own fast kernel). */
CLT_API clt_status clt_rowsum(const clt_tensor *x, clt_tensor *out);

/* ---------------------------------------------------------------- softmax */

/** Softmax / log-softmax over the last axis, numerically stable (max subtracted). out may alias x. */
CLT_API clt_status clt_softmax(const clt_tensor *x, clt_tensor *out);
/** log(softmax(x)) over the last axis, computed as x - max - log(sum(exp(x - max))). out may alias x. */
CLT_API clt_status clt_log_softmax(const clt_tensor *x, clt_tensor *out);
/** Backward from the forward output y: softmax: dx = y * (dy - sum(dy * y)); log-softmax:
 *  dx = dy - exp(y) * sum(dy). dx may alias dy. */
CLT_API clt_status clt_softmax_backward(const clt_tensor *y, const clt_tensor *dy, clt_tensor *dx);
/** Backward of clt_log_softmax from its output y: dx = dy - exp(y) * sum(dy). dx may alias dy. */
CLT_API clt_status clt_log_softmax_backward(const clt_tensor *y, const clt_tensor *dy, clt_tensor *dx);

#ifdef __cplusplus
}
#endif
#endif /* CLTENSOR_OPS_H */
