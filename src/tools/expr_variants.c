/* Expression programs for the kernel ISA check (see expr_variants.h). Each expression is prepared
 * exactly as clt_expr_eval would (clt__expr_program: same validation, plan, source and options) on
 * small tensors of ctx; nothing is launched. */
#include "tools/expr_variants.h"

#include <stdio.h>
#include <stdlib.h>

#include "cltensor_ops.h"
#include "ops/elementwise/expr.h"

#define N 1031 /* a prime: no layout divides it */

/* The alpha operand of op: leaky_relu and elu take one, the others none (-1). */
static int alpha_of(clt_unary_op op, int s0)
{
    return op == CLT_LEAKY_RELU || op == CLT_ELU ? s0 : -1;
}

typedef struct expr_set {
    clt_context *ctx;
    clt__variant_use use;
    clt__variant_list *l;
    clt__variant_add_fn add;
    clt_tensor *a, *b, *row, *view; /* [N], [N], [1, N] broadcast row, a view at offset 1 */
    clt_tensor *out, *out2;          /* [N], [3, N] */
} expr_set;

static clt_status emit(expr_set *s, const char *label, const clt_expr *e, int root, int nin,
                       const clt_tensor *const *in, int nsc, const float *sc, clt_tensor *out)
{
    char *source = NULL;
    const char *options = NULL;
    clt_status st = clt__expr_program(e, root, nin, in, nsc, sc, out, &source, &options);
    if (st != CLT_SUCCESS)
        return st;
    char program[48];
    snprintf(program, sizeof program, "expr:%s", label);
    return s->add(s->l, s->use, program, options, 0, source);
}

#define OPS_PER_EXPR 6 /* unary ops (or derivatives) summed in one expression: a realistic size */

/* sum of op(a * s0 + b) over ops first..last, forward (grad = 0) or their derivatives at a */
static clt_status unary_group(expr_set *s, int first, int last, int grad)
{
    clt_expr *e;
    clt_status st = clt_expr_create(&e);
    if (st)
        return st;
    int a = clt_expr_input(e, 0), b = clt_expr_input(e, 1), s0 = clt_expr_scalar(e, 0);
    int x = grad ? a : clt_expr_binary(e, CLT_ADD, clt_expr_binary(e, CLT_MUL, a, s0), b), acc = x;
    for (int op = first; op <= last; op++) {
        int alpha = alpha_of((clt_unary_op)op, s0);
        int t = grad ? clt__expr_grad(e, (clt_unary_op)op, x, alpha, 0)
                     : clt_expr_unary(e, (clt_unary_op)op, x, alpha);
        acc = clt_expr_binary(e, CLT_ADD, acc, t);
    }
    const clt_tensor *in[2] = {s->a, s->b};
    float sc[1] = {0.5f};
    char label[40];
    snprintf(label, sizeof label, "%s_%d_%d", grad ? "grad" : "unary", first, last);
    st = emit(s, label, e, acc, grad ? 1 : 2, in, 1, sc, s->out);
    clt_expr_free(e);
    return st;
}

/* every unary op and every derivative, OPS_PER_EXPR to an expression */
static clt_status all_unary(expr_set *s)
{
    clt_status st = CLT_SUCCESS;
    for (int grad = 0; grad < 2 && !st; grad++)
        for (int first = grad ? CLT_IDENTITY : CLT_NEG; first <= CLT_HARDSWISH && !st;
             first += OPS_PER_EXPR) {
            int last = first + OPS_PER_EXPR - 1;
            st = unary_group(s, first, last < CLT_HARDSWISH ? last : CLT_HARDSWISH, grad);
        }
    return st;
}

/* every binary op and where, with a broadcast row and an offset view (unaligned loads) */
static clt_status binaries(expr_set *s)
{
    clt_expr *e;
    clt_status st = clt_expr_create(&e);
    if (st)
        return st;
    int a = clt_expr_input(e, 0), r = clt_expr_input(e, 1), acc = a;
    for (int op = CLT_ADD; op <= CLT_GE; op++)
        acc = clt_expr_binary(e, CLT_ADD, acc, clt_expr_binary(e, (clt_binary_op)op, a, r));
    acc = clt_expr_where(e, clt_expr_binary(e, CLT_GT, a, r), acc, r);
    const clt_tensor *in[2] = {s->view, s->row};
    st = emit(s, "binary_where_bcast", e, acc, 2, in, 0, NULL, s->out2);
    clt_expr_free(e);
    return st;
}

/* the common small ones: a + b, relu(a * s0 + b) (a fused bias + activation) */
static clt_status small_ones(expr_set *s)
{
    clt_expr *e;
    clt_status st = clt_expr_create(&e);
    if (st)
        return st;
    int a = clt_expr_input(e, 0), b = clt_expr_input(e, 1), s0 = clt_expr_scalar(e, 0);
    int sum = clt_expr_binary(e, CLT_ADD, a, b);
    int fused = clt_expr_unary(e, CLT_RELU, clt_expr_binary(e, CLT_ADD,
                                                       clt_expr_binary(e, CLT_MUL, a, s0), b), -1);
    const clt_tensor *in[2] = {s->a, s->b};
    float sc[1] = {2.0f};
    st = emit(s, "add", e, sum, 2, in, 0, NULL, s->out);
    if (!st)
        st = emit(s, "relu_axpy", e, fused, 2, in, 1, sc, s->out);
    clt_expr_free(e);
    return st;
}

clt_status clt__expr_variants(clt_context *ctx, int cpu, clt__variant_use use, clt__variant_list *l,
                              clt__variant_add_fn add)
{
    (void)cpu; /* the layout follows ctx (clt__cpu_style), as in clt_expr_eval */
    expr_set s = {ctx, use, l, add, NULL, NULL, NULL, NULL, NULL, NULL};
    const int64_t n1[1] = {N}, big[1] = {N + 1}, row[2] = {1, N}, wide[2] = {3, N};
    clt_tensor *base = NULL;
    clt_status st = clt_tensor_create(ctx, CLT_F32, 1, n1, &s.a);
    if (!st)
        st = clt_tensor_create(ctx, CLT_F32, 1, n1, &s.b);
    if (!st)
        st = clt_tensor_create(ctx, CLT_F32, 2, row, &s.row);
    if (!st)
        st = clt_tensor_create(ctx, CLT_F32, 1, big, &base);
    if (!st)
        st = clt_tensor_view(base, 1, 2, row, &s.view);
    if (!st)
        st = clt_tensor_create(ctx, CLT_F32, 1, n1, &s.out);
    if (!st)
        st = clt_tensor_create(ctx, CLT_F32, 2, wide, &s.out2);
    if (!st)
        st = small_ones(&s);
    if (!st)
        st = all_unary(&s);
    if (!st)
        st = binaries(&s);
    clt_tensor *ts[] = {s.a, s.b, s.row, s.view, base, s.out, s.out2};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        clt_tensor_free(ts[i]);
    return st;
}
