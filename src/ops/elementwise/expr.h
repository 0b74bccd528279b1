/* The elementwise expression engine: every elementwise op of cltensor_ops.h (binary, unary, where,
 * clamp, fma, fused bias/add + activation, activation backward) is an expression evaluated here, in
 * one generated kernel per expression structure. Internal. */
#ifndef CLT_EXPR_H
#define CLT_EXPR_H

#include "cltensor_ops.h"
#include "runtime/runtime.h"

typedef enum clt__node_kind {
    CLT__NODE_INPUT = 0,  /* index = input slot */
    CLT__NODE_SCALAR = 1, /* index = scalar slot */
    CLT__NODE_UNARY = 2,  /* op = clt_unary_op, a = operand, b = alpha scalar node or -1 */
    CLT__NODE_BINARY = 3, /* op = clt_binary_op, a, b */
    CLT__NODE_WHERE = 4,  /* a = cond, b = then, c = else */
    CLT__NODE_GRAD = 5    /* op'(a) for clt_unary_op op; b = alpha node or -1; from_y: a is the
                             forward output y instead of the input x */
} clt__node_kind;

typedef struct clt__expr_node {
    clt__node_kind kind;
    int op;
    int a, b, c;
    int index;
    int from_y;
} clt__expr_node;

struct clt_expr {
    int count;
    clt__expr_node nodes[CLT_EXPR_MAX_NODES];
    char error[200]; /* first builder error, reported by eval; "" when none */
};

/* Derivative node (see CLT__NODE_GRAD). Returns the node id or -1. */
int clt__expr_grad(clt_expr *e, clt_unary_op op, int a, int alpha, int from_y);

/* Tests: streaming stores of out (cpu layout) from this many bytes of traffic (out plus the
 * inputs in its layout) on; -1, the default: above the device's global-memory cache.
 * Process-wide. */
void clt__expr_set_stream_bytes(int64_t bytes);

/* clt_expr_eval with the public call's name for messages ("clt_add: ..."). Validates: same context,
 * f32 inputs and out, every used input present, each input broadcasts to out's shape, no partial
 * overlap of out with an input (exact same memory + shape is fine: in place). */
clt_status clt__expr_eval_named(const char *who, const clt_expr *e, int root, int ninputs,
                                const clt_tensor *const *inputs, int nscalars, const float *scalars,
                                clt_tensor *out);

/* The program clt_expr_eval would build for these arguments (same validation): the full source
 * (elementwise.cl prelude + generated kernel, heap for the caller) and its build options (static).
 * Nothing is built or enqueued: the kernel ISA check (src/tools/expr_variants.c) compiles it. */
clt_status clt__expr_program(const clt_expr *e, int root, int ninputs,
                             const clt_tensor *const *inputs, int nscalars, const float *scalars,
                             clt_tensor *out, char **source, const char **options);

#endif
