/* Expression builder (the public clt_expr_* calls and clt__expr_grad), reachability and the
 * canonical structure key that the kernel cache is indexed by. Builders never touch a device: an
 * expression is a plain description, validated node by node as it is built. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/elementwise/expr_internal.h"

static const char *const unary_names[] = {
    "identity", "neg",  "abs",     "sign",       "exp",        "log",  "sqrt",     "rsqrt",
    "reciprocal", "square", "sin", "cos",        "tanh",       "sigmoid", "relu",  "leaky_relu",
    "elu",      "gelu_erf", "gelu_tanh", "silu", "softplus",   "hardswish"};
#define UNARY_COUNT ((int)(sizeof unary_names / sizeof unary_names[0]))
#define BINARY_COUNT 13

const char *clt__unary_name(int op)
{
    return op >= 0 && op < UNARY_COUNT ? unary_names[op] : NULL;
}

int clt__unary_grad_uses_y(int op)
{
    return op == CLT_SIGMOID || op == CLT_TANH || op == CLT_EXP;
}

static int takes_alpha(int op)
{
    return op == CLT_LEAKY_RELU || op == CLT_ELU;
}

/* Remember the first error only: later calls usually fail because of it. */
static int builder_error(clt_expr *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int builder_error(clt_expr *e, const char *fmt, ...)
{
    if (!e->error[0]) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->error, sizeof e->error, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static int add_node(clt_expr *e, const char *who, clt__expr_node n)
{
    if (e->count >= CLT_EXPR_MAX_NODES)
        return builder_error(e, "%s: the expression already has CLT_EXPR_MAX_NODES (%d) nodes", who,
                             CLT_EXPR_MAX_NODES);
    e->nodes[e->count] = n;
    return e->count++;
}

/* Operands must be existing nodes: ids only point backwards, so the graph is acyclic by
 * construction and evaluation order is id order. */
static int check_operand(clt_expr *e, const char *who, const char *what, int id)
{
    if (id < 0 || id >= e->count) {
        builder_error(e, "%s: operand %s = %d is not a node of the expression (0 .. %d)", who, what,
                      id, e->count - 1);
        return 0;
    }
    return 1;
}

clt_status clt_expr_create(clt_expr **out)
{
    CLT_PUBLIC_CALL();
    if (!out)
        return clt__fail(NULL, CLT_ERR_INVALID_ARGUMENT, "clt_expr_create: out is NULL");
    *out = calloc(1, sizeof **out);
    if (!*out)
        return clt__fail(NULL, CLT_ERR_OUT_OF_HOST_MEMORY, "clt_expr_create: out of host memory");
    return CLT_SUCCESS;
}

void clt_expr_free(clt_expr *e)
{
    free(e);
}

int clt_expr_input(clt_expr *e, int index)
{
    CLT_PUBLIC_CALL();
    if (!e)
        return -1;
    if (index < 0 || index >= CLT_EXPR_MAX_INPUTS)
        return builder_error(e, "clt_expr_input: index %d outside 0 .. %d", index,
                             CLT_EXPR_MAX_INPUTS - 1);
    return add_node(e, "clt_expr_input",
                    (clt__expr_node){CLT__NODE_INPUT, 0, -1, -1, -1, index, 0});
}

int clt_expr_scalar(clt_expr *e, int index)
{
    CLT_PUBLIC_CALL();
    if (!e)
        return -1;
    if (index < 0 || index >= CLT_EXPR_MAX_SCALARS)
        return builder_error(e, "clt_expr_scalar: index %d outside 0 .. %d", index,
                             CLT_EXPR_MAX_SCALARS - 1);
    return add_node(e, "clt_expr_scalar",
                    (clt__expr_node){CLT__NODE_SCALAR, 0, -1, -1, -1, index, 0});
}

static int unary_like(clt_expr *e, const char *who, clt__node_kind kind, int op, int a, int alpha,
                      int from_y)
{
    if (!e)
        return -1;
    if (!clt__unary_name(op))
        return builder_error(e, "%s: op %d is not a clt_unary_op", who, op);
    if (!check_operand(e, who, "a", a))
        return -1;
    if (takes_alpha(op) && alpha == -1)
        return builder_error(e, "%s: %s needs an alpha node, got -1", who, unary_names[op]);
    if (!takes_alpha(op) && alpha != -1)
        return builder_error(e, "%s: %s takes no alpha, got node %d (pass -1)", who,
                             unary_names[op], alpha);
    if (alpha != -1 && !check_operand(e, who, "alpha", alpha))
        return -1;
    return add_node(e, who, (clt__expr_node){kind, op, a, alpha, -1, 0, from_y});
}

int clt_expr_unary(clt_expr *e, clt_unary_op op, int a, int alpha)
{
    CLT_PUBLIC_CALL();
    return unary_like(e, "clt_expr_unary", CLT__NODE_UNARY, (int)op, a, alpha, 0);
}

int clt__expr_grad(clt_expr *e, clt_unary_op op, int a, int alpha, int from_y)
{
    if (e && from_y && clt__unary_name((int)op) && !clt__unary_grad_uses_y((int)op) &&
        op != CLT_RELU && op != CLT_LEAKY_RELU)
        return builder_error(e, "clt__expr_grad: the derivative of %s needs x, not y",
                             unary_names[op]);
    return unary_like(e, "clt__expr_grad", CLT__NODE_GRAD, (int)op, a, alpha, from_y ? 1 : 0);
}

int clt_expr_binary(clt_expr *e, clt_binary_op op, int a, int b)
{
    CLT_PUBLIC_CALL();
    if (!e)
        return -1;
    if ((int)op < 0 || (int)op >= BINARY_COUNT)
        return builder_error(e, "clt_expr_binary: op %d is not a clt_binary_op", (int)op);
    if (!check_operand(e, "clt_expr_binary", "a", a) ||
        !check_operand(e, "clt_expr_binary", "b", b))
        return -1;
    return add_node(e, "clt_expr_binary",
                    (clt__expr_node){CLT__NODE_BINARY, (int)op, a, b, -1, 0, 0});
}

int clt_expr_where(clt_expr *e, int cond, int a, int b)
{
    CLT_PUBLIC_CALL();
    if (!e)
        return -1;
    if (!check_operand(e, "clt_expr_where", "cond", cond) ||
        !check_operand(e, "clt_expr_where", "a", a) || !check_operand(e, "clt_expr_where", "b", b))
        return -1;
    return add_node(e, "clt_expr_where",
                    (clt__expr_node){CLT__NODE_WHERE, 0, cond, a, b, 0, 0});
}

void clt__expr_reach(const clt_expr *e, int root, unsigned char *reach, unsigned *inputs_mask,
                     unsigned *scalars_mask)
{
    memset(reach, 0, (size_t)e->count);
    *inputs_mask = 0;
    *scalars_mask = 0;
    reach[root] = 1;
    /* Operands have smaller ids, so one backward sweep finds everything. */
    for (int i = root; i >= 0; i--) {
        if (!reach[i])
            continue;
        const clt__expr_node *n = &e->nodes[i];
        if (n->kind == CLT__NODE_INPUT)
            *inputs_mask |= 1u << n->index;
        else if (n->kind == CLT__NODE_SCALAR)
            *scalars_mask |= 1u << n->index;
        if (n->a >= 0)
            reach[n->a] = 1;
        if (n->b >= 0)
            reach[n->b] = 1;
        if (n->c >= 0)
            reach[n->c] = 1;
    }
}

/* Appends without snprintf: this runs on every evaluation. */
static char *put_int(char *p, int v)
{
    char digits[12];
    int n = 0;
    unsigned u = v < 0 ? (unsigned)(-(long)v) : (unsigned)v;
    if (v < 0)
        *p++ = '-';
    do {
        digits[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    while (n)
        *p++ = digits[--n];
    return p;
}

static char *put_node(char *p, char tag, int n, const int *v)
{
    *p++ = tag;
    for (int i = 0; i < n; i++) {
        p = put_int(p, v[i]);
        *p++ = i + 1 < n ? ',' : ';';
    }
    return p;
}

size_t clt__expr_key(const clt_expr *e, int root, const unsigned char *reach,
                     const clt__expr_plan *plan, char *key)
{
    /* Worst case per node: tag + 4 ints of <= 3 chars + separators, well under 24. */
    _Static_assert(CLT_EXPR_MAX_NODES * 24 + 64 + 4 * CLT_EXPR_MAX_INPUTS < CLT__EXPR_KEY_MAX,
                   "key buffer too small");
    int map[CLT_EXPR_MAX_NODES];
    int next = 0;
    char *p = key;
    memcpy(p, "expr:", 5);
    p += 5;
    for (int i = 0; i <= root; i++) {
        if (!reach[i])
            continue;
        map[i] = next++;
        const clt__expr_node *n = &e->nodes[i];
        int a = n->a >= 0 ? map[n->a] : -1, b = n->b >= 0 ? map[n->b] : -1;
        int c = n->c >= 0 ? map[n->c] : -1;
        switch (n->kind) {
        case CLT__NODE_INPUT: p = put_node(p, 'i', 1, (int[]){n->index}); break;
        case CLT__NODE_SCALAR: p = put_node(p, 's', 1, (int[]){n->index}); break;
        case CLT__NODE_UNARY: p = put_node(p, 'u', 3, (int[]){n->op, a, b}); break;
        case CLT__NODE_GRAD: p = put_node(p, 'g', 4, (int[]){n->op, a, b, n->from_y}); break;
        case CLT__NODE_BINARY: p = put_node(p, 'b', 3, (int[]){n->op, a, b}); break;
        default: p = put_node(p, 'w', 3, (int[]){a, b, c}); break;
        }
    }
    *p++ = '|';
    *p++ = plan->flat ? 'F' : 'B';
    *p++ = plan->idx32 ? 'i' : 'l';
    *p++ = (char)('0' + plan->offsets);
    if (!plan->flat) {
        *p++ = '|';
        for (int k = 0; k < plan->n_in; k++) {
            *p++ = "scwg"[plan->acc[k]];
            if (plan->acc[k] == CLT__ACC_WINDOW) {
                *p++ = plan->win_div[k] ? 'd' : '-';
                *p++ = plan->win_mod[k] ? 'm' : '-';
            }
            if (plan->acc[k] == CLT__ACC_GENERAL)
                *p++ = (char)('0' + plan->ndim);
        }
    }
    *p = '\0';
    return (size_t)(p - key);
}
