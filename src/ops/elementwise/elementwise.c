/* Elementwise binary ops, where, clamp and fma. Each is a tiny expression (built on the stack: no
 * allocation per call) evaluated by the expression engine in one launch; this file only checks what
 * is specific to each op (enums, bounds, the exact broadcast shape of out) so that messages can
 * name the public call and its argument. */
#include <stdio.h>

#include "ops/elementwise/elementwise.h"

/* ------------------------------------------------------------------ shared checks */

clt_context *clt__ew_any_ctx(int n, const clt_tensor *const *t)
{
    for (int i = 0; i < n; i++)
        if (t[i])
            return t[i]->ctx;
    return NULL;
}

clt_status clt__ew_not_null(const char *who, int n, const clt_tensor *const *t,
                            const char *const *names)
{
    for (int i = 0; i < n; i++)
        if (!t[i])
            return clt__fail(clt__ew_any_ctx(n, t), CLT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", who,
                             names[i]);
    return CLT_SUCCESS;
}

void clt__ew_shape_str(const clt_tensor *t, char *buf, size_t cap)
{
    size_t at = 0;
    int w = snprintf(buf, cap, "[");
    for (int d = 0; d < t->ndim && w >= 0 && (at += (size_t)w) < cap; d++)
        w = snprintf(buf + at, cap - at, d ? ",%lld" : "%lld", (long long)t->shape[d]);
    if (w >= 0 && (at += (size_t)w) < cap)
        snprintf(buf + at, cap - at, "]");
}

clt_status clt__ew_same_shape(const char *who, const clt_tensor *a, const char *an,
                              const clt_tensor *b, const char *bn)
{
    int same = a->ndim == b->ndim;
    for (int d = 0; same && d < a->ndim; d++)
        same = a->shape[d] == b->shape[d];
    if (same)
        return CLT_SUCCESS;
    char sa[CLT_MAX_DIMS * 21 + 3], sb[CLT_MAX_DIMS * 21 + 3];
    clt__ew_shape_str(a, sa, sizeof sa);
    clt__ew_shape_str(b, sb, sizeof sb);
    return clt__fail(a->ctx, CLT_ERR_INVALID_SHAPE,
                     "%s: %s has shape %s but %s has %s (must be equal)", who, an, sa, bn, sb);
}

clt_status clt__ew_broadcast_out(const char *who, int n, const clt_tensor *const *in,
                                 const char *const *names, const clt_tensor *out)
{
    int64_t shape[CLT_MAX_DIMS];
    int ndim = 0;
    for (int i = 0; i < n; i++)
        if (in[i]->ndim > ndim)
            ndim = in[i]->ndim;
    char s1[CLT_MAX_DIMS * 21 + 3], s2[CLT_MAX_DIMS * 21 + 3];
    /* Align at the last axis: dim d of the result is dim d - (ndim - t->ndim) of t. */
    for (int d = 0; d < ndim; d++) {
        int64_t v = 1;
        int from = -1;
        for (int i = 0; i < n; i++) {
            int k = d - (ndim - in[i]->ndim);
            if (k < 0 || in[i]->shape[k] == 1)
                continue;
            if (v != 1 && in[i]->shape[k] != v) {
                clt__ew_shape_str(in[from], s1, sizeof s1);
                clt__ew_shape_str(in[i], s2, sizeof s2);
                return clt__fail(in[i]->ctx, CLT_ERR_INVALID_SHAPE,
                                 "%s: shapes %s (%s) and %s (%s) do not broadcast", who, s1,
                                 names[from], s2, names[i]);
            }
            v = in[i]->shape[k];
            from = i;
        }
        shape[d] = v;
    }
    int same = out->ndim == ndim;
    for (int d = 0; same && d < ndim; d++)
        same = out->shape[d] == shape[d];
    if (same)
        return CLT_SUCCESS;
    size_t at = 0;
    int w = snprintf(s1, sizeof s1, "[");
    for (int d = 0; d < ndim && w >= 0 && (at += (size_t)w) < sizeof s1; d++)
        w = snprintf(s1 + at, sizeof s1 - at, d ? ",%lld" : "%lld", (long long)shape[d]);
    if (w >= 0 && (at += (size_t)w) < sizeof s1)
        snprintf(s1 + at, sizeof s1 - at, "]");
    clt__ew_shape_str(out, s2, sizeof s2);
    return clt__fail(out->ctx, CLT_ERR_INVALID_SHAPE,
                     "%s: out has shape %s, expected the broadcast shape %s", who, s2, s1);
}

/* ------------------------------------------------------------------ binary */

static clt_status binary_named(const char *who, clt_binary_op op, const clt_tensor *a,
                               const clt_tensor *b, clt_tensor *out)
{
    static const char *const names[3] = {"a", "b", "out"};
    const clt_tensor *t[3] = {a, b, out};
    clt_status st = clt__ew_not_null(who, 3, t, names);
    if (st != CLT_SUCCESS)
        return st;
    if (!clt__ew_binary_ok(op))
        return clt__fail(out->ctx, CLT_ERR_INVALID_ARGUMENT, "%s: unknown clt_binary_op %d", who,
                         (int)op);
    if ((st = clt__ew_broadcast_out(who, 2, t, names, out)) != CLT_SUCCESS)
        return st;
    clt_expr e;
    clt__ew_begin(&e);
    int an = clt_expr_input(&e, 0), bn = clt_expr_input(&e, 1); /* in order: ids are the key */
    int root = clt_expr_binary(&e, op, an, bn);
    return clt__expr_eval_named(who, &e, root, 2, t, 0, NULL, out);
}

clt_status clt_binary(clt_binary_op op, const clt_tensor *a, const clt_tensor *b, clt_tensor *out)
{
    CLT_PUBLIC_CALL();
    return binary_named("clt_binary", op, a, b, out);
}

clt_status clt_add(const clt_tensor *a, const clt_tensor *b, clt_tensor *out)
{
    CLT_PUBLIC_CALL();
    return binary_named("clt_add", CLT_ADD, a, b, out);
}

clt_status clt_sub(const clt_tensor *a, const clt_tensor *b, clt_tensor *out)
{
    CLT_PUBLIC_CALL();
    return binary_named("clt_sub", CLT_SUB, a, b, out);
}

clt_status clt_mul(const clt_tensor *a, const clt_tensor *b, clt_tensor *out)
{
    CLT_PUBLIC_CALL();
    return binary_named("clt_mul", CLT_MUL, a, b, out);
}

clt_status clt_div(const clt_tensor *a, const clt_tensor *b, clt_tensor *out)
{
    CLT_PUBLIC_CALL();
    return binary_named("clt_div", CLT_DIV, a, b, out);
}

/* x op s (scalar_first = 0) or s op x (scalar_first = 1); s is a runtime scalar, so every value
 * shares one compiled kernel. */
static clt_status scalar_named(const char *who, clt_binary_op op, const clt_tensor *x, float s,
                               int scalar_first, clt_tensor *out)
{
    static const char *const names[2][2] = {{"a", "out"}, {"b", "out"}};
    const clt_tensor *t[2] = {x, out};
    clt_status st = clt__ew_not_null(who, 2, t, names[scalar_first]);
    if (st != CLT_SUCCESS)
        return st;
    if (!clt__ew_binary_ok(op))
        return clt__fail(out->ctx, CLT_ERR_INVALID_ARGUMENT, "%s: unknown clt_binary_op %d", who,
                         (int)op);
    if ((st = clt__ew_broadcast_out(who, 1, t, names[scalar_first], out)) != CLT_SUCCESS)
        return st;
    clt_expr e;
    clt__ew_begin(&e);
    int root;
    if (scalar_first) {
        int sn = clt_expr_scalar(&e, 0);
        root = clt_expr_binary(&e, op, sn, clt_expr_input(&e, 0));
    } else {
        int xn = clt_expr_input(&e, 0);
        root = clt_expr_binary(&e, op, xn, clt_expr_scalar(&e, 0));
    }
    return clt__expr_eval_named(who, &e, root, 1, t, 1, &s, out);
}

clt_status clt_binary_scalar(clt_binary_op op, const clt_tensor *a, float s, clt_tensor *out)
{
    CLT_PUBLIC_CALL();
    return scalar_named("clt_binary_scalar", op, a, s, 0, out);
}

clt_status clt_scalar_binary(clt_binary_op op, float s, const clt_tensor *b, clt_tensor *out)
{
    CLT_PUBLIC_CALL();
    return scalar_named("clt_scalar_binary", op, b, s, 1, out);
}

/* ------------------------------------------------------------------ where, clamp, fma */

clt_status clt_where(const clt_tensor *cond, const clt_tensor *a, const clt_tensor *b,
                     clt_tensor *out)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_where";
    static const char *const names[4] = {"cond", "a", "b", "out"};
    const clt_tensor *t[4] = {cond, a, b, out};
    clt_status st = clt__ew_not_null(who, 4, t, names);
    if (st != CLT_SUCCESS || (st = clt__ew_broadcast_out(who, 3, t, names, out)) != CLT_SUCCESS)
        return st;
    clt_expr e;
    clt__ew_begin(&e);
    int c = clt_expr_input(&e, 0), x = clt_expr_input(&e, 1), y = clt_expr_input(&e, 2);
    int root = clt_expr_where(&e, c, x, y);
    return clt__expr_eval_named(who, &e, root, 3, t, 0, NULL, out);
}

clt_status clt_clamp(const clt_tensor *x, float lo, float hi, clt_tensor *out)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_clamp";
    static const char *const names[2] = {"x", "out"};
    const clt_tensor *t[2] = {x, out};
    clt_status st = clt__ew_not_null(who, 2, t, names);
    if (st != CLT_SUCCESS)
        return st;
    /* NaN bounds are refused too: min/max would turn every element into NaN. */
    if (!(lo <= hi))
        return clt__fail(out->ctx, CLT_ERR_INVALID_ARGUMENT,
                         "%s: need lo <= hi (neither NaN), got lo = %g, hi = %g", who, (double)lo,
                         (double)hi);
    if ((st = clt__ew_broadcast_out(who, 1, t, names, out)) != CLT_SUCCESS)
        return st;
    /* min(max(x, lo), hi) with NaN-propagating min/max: a NaN element stays NaN. */
    clt_expr e;
    clt__ew_begin(&e);
    int xn = clt_expr_input(&e, 0), lon = clt_expr_scalar(&e, 0), hin = clt_expr_scalar(&e, 1);
    int root = clt_expr_binary(&e, CLT_MIN, clt_expr_binary(&e, CLT_MAX, xn, lon), hin);
    const float bounds[2] = {lo, hi};
    return clt__expr_eval_named(who, &e, root, 1, t, 2, bounds, out);
}

clt_status clt_fma(const clt_tensor *a, const clt_tensor *b, const clt_tensor *c, clt_tensor *out)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_fma";
    static const char *const names[4] = {"a", "b", "c", "out"};
    const clt_tensor *t[4] = {a, b, c, out};
    clt_status st = clt__ew_not_null(who, 4, t, names);
    if (st != CLT_SUCCESS || (st = clt__ew_broadcast_out(who, 3, t, names, out)) != CLT_SUCCESS)
        return st;
    clt_expr e;
    clt__ew_begin(&e);
    int an = clt_expr_input(&e, 0), bn = clt_expr_input(&e, 1), cn = clt_expr_input(&e, 2);
    int ab = clt_expr_binary(&e, CLT_MUL, an, bn);
    int root = clt_expr_binary(&e, CLT_ADD, ab, cn);
    return clt__expr_eval_named(who, &e, root, 3, t, 0, NULL, out);
}
