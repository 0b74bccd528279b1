/* Shared argument checks of the elementwise ops (elementwise.c, activations.c). Each op checks what
 * is specific to it here, then builds a small expression on the stack and hands it to the
 * expression engine (expr.h), which checks contexts, dtypes, aliasing and launches. Internal. */
#ifndef CLT_ELEMENTWISE_H
#define CLT_ELEMENTWISE_H

#include <string.h>

#include "ops/elementwise/expr.h"
#include "tensor/tensor.h"

/* A fresh, empty expression (zeroed so that its unused nodes are deterministic). */
static inline void clt__ew_begin(clt_expr *e)
{
    memset(e, 0, sizeof *e);
}

/* The context of the first non-NULL tensor of n (for messages about the NULL ones), or NULL. */
clt_context *clt__ew_any_ctx(int n, const clt_tensor *const *t);

/* CLT_ERR_INVALID_ARGUMENT "who: <name> is NULL" for the first NULL of t[0..n-1], else success. */
clt_status clt__ew_not_null(const char *who, int n, const clt_tensor *const *t,
                            const char *const *names);

/* The n inputs broadcast together (NumPy rules) and out has exactly their broadcast shape; else
 * CLT_ERR_INVALID_SHAPE with the shapes in the message. No NULLs allowed. */
clt_status clt__ew_broadcast_out(const char *who, int n, const clt_tensor *const *in,
                                 const char *const *names, const clt_tensor *out);

/* a and b have equal shapes; else CLT_ERR_INVALID_SHAPE naming both. */
clt_status clt__ew_same_shape(const char *who, const clt_tensor *a, const char *an,
                              const clt_tensor *b, const char *bn);

/* "[2,3,5]" into buf (always terminated). */
void clt__ew_shape_str(const clt_tensor *t, char *buf, size_t cap);

/* Whether op is a known clt_unary_op / clt_binary_op, and whether a unary op reads alpha. */
static inline int clt__ew_unary_ok(clt_unary_op op)
{
    return (int)op >= (int)CLT_IDENTITY && (int)op <= (int)CLT_HARDSWISH;
}
static inline int clt__ew_binary_ok(clt_binary_op op)
{
    return (int)op >= (int)CLT_ADD && (int)op <= (int)CLT_GE;
}
static inline int clt__ew_uses_alpha(clt_unary_op op)
{
    return op == CLT_LEAKY_RELU || op == CLT_ELU;
}

#endif
