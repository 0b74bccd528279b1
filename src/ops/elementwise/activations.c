/* Unary ops and activations, their backward, and the fused bias/add + activation ops: each a small
 * expression evaluated by the expression engine in one launch (see elementwise.c). */
#include "ops/elementwise/elementwise.h"

/* act(node) appended to e; alpha (for LEAKY_RELU / ELU) is runtime scalar 0. IDENTITY adds nothing,
 * so act(a + b) with IDENTITY is the very expression (and kernel) of clt_add. */
static int apply_act(clt_expr *e, clt_unary_op act, int node)
{
    if (act == CLT_IDENTITY)
        return node;
    int alpha = clt__ew_uses_alpha(act) ? clt_expr_scalar(e, 0) : -1;
    return clt_expr_unary(e, act, node, alpha);
}

static clt_status bad_unary(const char *who, const clt_context *ctx, const char *what, int op)
{
    return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: unknown clt_unary_op %d for %s", who, op,
                     what);
}

clt_status clt_unary(clt_unary_op op, const clt_tensor *x, float alpha, clt_tensor *out)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_unary";
    static const char *const names[2] = {"x", "out"};
    const clt_tensor *t[2] = {x, out};
    clt_status st = clt__ew_not_null(who, 2, t, names);
    if (st != CLT_SUCCESS)
        return st;
    if (!clt__ew_unary_ok(op))
        return bad_unary(who, out->ctx, "op", (int)op);
    if ((st = clt__ew_broadcast_out(who, 1, t, names, out)) != CLT_SUCCESS)
        return st;
    clt_expr e;
    clt__ew_begin(&e);
    int xn = clt_expr_input(&e, 0);
    int alpha_node = clt__ew_uses_alpha(op) ? clt_expr_scalar(&e, 0) : -1;
    int root = clt_expr_unary(&e, op, xn, alpha_node);
    return clt__expr_eval_named(who, &e, root, 1, t, alpha_node >= 0 ? 1 : 0, &alpha, out);
}

static const char *op_name(clt_unary_op op)
{
    switch (op) {
    case CLT_EXP: return "EXP";
    case CLT_TANH: return "TANH";
    case CLT_SIGMOID: return "SIGMOID";
    default: return "this op";
    }
}

clt_status clt_unary_backward(clt_unary_op op, float alpha, const clt_tensor *x,
                              const clt_tensor *y, const clt_tensor *dy, clt_tensor *dx)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_unary_backward";
    const clt_tensor *all[4] = {x, y, dy, dx};
    clt_context *ctx = clt__ew_any_ctx(4, all);
    if (!dy || !dx)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", who, dy ? "dx" : "dy");
    if (!clt__ew_unary_ok(op))
        return bad_unary(who, ctx, "op", (int)op);
    /* Which forward tensor the derivative reads: the output for ops whose derivative is cheapest
     * from it, the input otherwise; RELU / LEAKY_RELU take either (x preferred). */
    const clt_tensor *v;
    int from_y;
    if (op == CLT_SIGMOID || op == CLT_TANH || op == CLT_EXP) {
        if (!y)
            return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT,
                             "%s: %s's backward needs y (the forward output), got NULL", who,
                             op_name(op));
        v = y;
        from_y = 1;
    } else if (op == CLT_RELU || op == CLT_LEAKY_RELU) {
        if (!x && !y)
            return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT,
                             "%s: RELU / LEAKY_RELU backward needs x or y, both are NULL", who);
        v = x ? x : y;
        from_y = !x;
    } else {
        if (!x)
            return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT,
                             "%s: op %d's backward needs x (the forward input), got NULL", who,
                             (int)op);
        v = x;
        from_y = 0;
    }
    /* Every tensor given, used or not, must fit: a wrong shape is a caller bug worth reporting. */
    static const char *const names[4] = {"x", "y", "dy", "dx"};
    clt_status st;
    for (int i = 0; i < 3; i++) {
        if (!all[i])
            continue;
        if (all[i]->ctx != dx->ctx)
            return clt__fail(dx->ctx, CLT_ERR_CONTEXT_MISMATCH,
                             "%s: %s and dx belong to different contexts", who, names[i]);
        if ((st = clt__ew_same_shape(who, all[i], names[i], dx, "dx")) != CLT_SUCCESS)
            return st;
    }
    clt_expr e;
    clt__ew_begin(&e);
    int dyn = clt_expr_input(&e, 0), vn = clt_expr_input(&e, 1);
    int alpha_node = clt__ew_uses_alpha(op) ? clt_expr_scalar(&e, 0) : -1;
    int g = clt__expr_grad(&e, op, vn, alpha_node, from_y);
    int root = clt_expr_binary(&e, CLT_MUL, dyn, g);
    const clt_tensor *in[2] = {dy, v};
    return clt__expr_eval_named(who, &e, root, 2, in, alpha_node >= 0 ? 1 : 0, &alpha, dx);
}

/* act(a + b) for the two fused ops; the caller has checked shapes. */
static clt_status add_act(const char *who, const clt_tensor *const *t, clt_unary_op act,
                          float alpha, clt_tensor *out)
{
    clt_expr e;
    clt__ew_begin(&e);
    int an = clt_expr_input(&e, 0), bn = clt_expr_input(&e, 1);
    int root = apply_act(&e, act, clt_expr_binary(&e, CLT_ADD, an, bn));
    return clt__expr_eval_named(who, &e, root, 2, t, clt__ew_uses_alpha(act) ? 1 : 0, &alpha, out);
}

clt_status clt_bias_activation(const clt_tensor *x, const clt_tensor *bias, clt_unary_op act,
                               float alpha, clt_tensor *out)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_bias_activation";
    static const char *const names[3] = {"x", "bias", "out"};
    const clt_tensor *t[3] = {x, bias, out};
    clt_status st = clt__ew_not_null(who, 3, t, names);
    if (st != CLT_SUCCESS)
        return st;
    if (!clt__ew_unary_ok(act))
        return bad_unary(who, out->ctx, "act", (int)act);
    /* bias is [N] or [1, ..., 1, N] with N = x's last dim and no more dims than x, so that
     * out = act(x + bias) has exactly x's shape. */
    int ok = x->ndim >= 1 && bias->ndim >= 1 && bias->ndim <= x->ndim &&
             bias->shape[bias->ndim - 1] == x->shape[x->ndim - 1];
    for (int d = 0; ok && d < bias->ndim - 1; d++)
        ok = bias->shape[d] == 1;
    if (!ok) {
        char sx[CLT_MAX_DIMS * 21 + 3], sb[CLT_MAX_DIMS * 21 + 3];
        clt__ew_shape_str(x, sx, sizeof sx);
        clt__ew_shape_str(bias, sb, sizeof sb);
        return clt__fail(out->ctx, CLT_ERR_INVALID_SHAPE,
                         "%s: bias has shape %s, expected [N] or [1,...,1,N] with N = the last dim "
                         "of x %s",
                         who, sb, sx);
    }
    if ((st = clt__ew_same_shape(who, out, "out", x, "x")) != CLT_SUCCESS)
        return st;
    return add_act(who, t, act, alpha, out);
}

clt_status clt_add_activation(const clt_tensor *a, const clt_tensor *b, clt_unary_op act,
                              float alpha, clt_tensor *out)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_add_activation";
    static const char *const names[3] = {"a", "b", "out"};
    const clt_tensor *t[3] = {a, b, out};
    clt_status st = clt__ew_not_null(who, 3, t, names);
    if (st != CLT_SUCCESS)
        return st;
    if (!clt__ew_unary_ok(act))
        return bad_unary(who, out->ctx, "act", (int)act);
    if ((st = clt__ew_broadcast_out(who, 2, t, names, out)) != CLT_SUCCESS)
        return st;
    return add_act(who, t, act, alpha, out);
}
