/* Error paths of the expression engine (suite expr_errors): every builder error, every eval
 * check (root, inputs, scalars, shapes, dtypes, contexts, aliasing), each with its status, a
 * message naming the call, and out left unchanged. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "cltensor_cl.h"
#include "ops/elementwise/expr.h"
#include "util/ew_util.h"
#include "util/test_util.h"

#define EXPECT_STATUS(call, want)                                                                  \
    do {                                                                                           \
        clt_status st_ = (call);                                                                   \
        ck_assert_msg(st_ == (want), "%s -> %s, expected %s (%s)", #call, clt_status_string(st_),  \
                      clt_status_string(want), clt_last_error(tu_ctx_for_msg()));                  \
    } while (0)

static void read_all(const clt_tensor *t, float *dst)
{
    TU_OK(clt_tensor_read(t, dst, clt_tensor_nbytes(t)));
}

/* ------------------------------------------------------------------ errors */

#define FILL_VALUE 5.0

static clt_tensor *filled(clt_context *ctx, int ndim, const int64_t *shape)
{
    clt_tensor *t = NULL;
    TU_OK(clt_tensor_create(ctx, CLT_F32, ndim, shape, &t));
    TU_OK(clt_tensor_fill(t, FILL_VALUE));
    return t;
}

static void assert_unchanged(const clt_tensor *t)
{
    int64_t n = clt_tensor_numel(t);
    float *v = malloc((size_t)n * sizeof(float));
    TU_OK(clt_tensor_read(t, v, (size_t)n * sizeof(float)));
    for (int64_t i = 0; i < n; i++)
        ck_assert_msg(v[i] == (float)FILL_VALUE, "element %lld changed to %g", (long long)i, v[i]);
    free(v);
}

/* The call fails with want, its message names the call and contains `part`, out is unchanged. */
static void expect_eval_error(clt_context *ctx, const clt_expr *e, int root, int nin,
                              const clt_tensor *const *in, int nsc, const float *sc,
                              clt_tensor *out, clt_status want, const char *part)
{
    clt_status st = clt_expr_eval(e, root, nin, in, nsc, sc, out);
    ck_assert_msg(st == want, "got %s, expected %s (%s)", clt_status_string(st),
                  clt_status_string(want), clt_last_error(ctx));
    const char *msg = clt_last_error(ctx);
    ck_assert_msg(strstr(msg, "clt_expr_eval") && strstr(msg, part),
                  "message '%s' lacks 'clt_expr_eval' or '%s'", msg, part);
    if (out && clt_tensor_dtype(out) == CLT_F32)
        assert_unchanged(out);
}

typedef int (*builder_fn)(clt_expr *e);

static int b_bad_unary_op(clt_expr *e) { return clt_expr_unary(e, (clt_unary_op)99, clt_expr_input(e, 0), -1); }
static int b_bad_binary_op(clt_expr *e)
{
    int a = clt_expr_input(e, 0);
    return clt_expr_binary(e, (clt_binary_op)-1, a, a);
}
static int b_forward_ref(clt_expr *e) { return clt_expr_binary(e, CLT_ADD, clt_expr_input(e, 0), 1); }
static int b_negative_ref(clt_expr *e) { return clt_expr_unary(e, CLT_EXP, -1, -1); }
static int b_where_out_of_range(clt_expr *e) { int a = clt_expr_input(e, 0); return clt_expr_where(e, a, a, 7); }
static int b_input_index(clt_expr *e) { return clt_expr_input(e, CLT_EXPR_MAX_INPUTS); }
static int b_negative_input(clt_expr *e) { return clt_expr_input(e, -1); }
static int b_scalar_index(clt_expr *e) { return clt_expr_scalar(e, CLT_EXPR_MAX_SCALARS); }
static int b_alpha_unexpected(clt_expr *e)
{
    int a = clt_expr_input(e, 0), s = clt_expr_scalar(e, 0);
    return clt_expr_unary(e, CLT_RELU, a, s);
}
static int b_alpha_missing_leaky(clt_expr *e) { return clt_expr_unary(e, CLT_LEAKY_RELU, clt_expr_input(e, 0), -1); }
static int b_alpha_missing_elu(clt_expr *e) { return clt__expr_grad(e, CLT_ELU, clt_expr_input(e, 0), -1, 0); }
static int b_grad_from_y(clt_expr *e) { return clt__expr_grad(e, CLT_GELU_ERF, clt_expr_input(e, 0), -1, 1); }
static int b_too_many_nodes(clt_expr *e)
{
    int id = 0;
    for (int i = 0; i <= CLT_EXPR_MAX_NODES; i++)
        id = clt_expr_input(e, 0);
    return id;
}

static const struct {
    builder_fn fn;
    const char *part; /* in the message */
} builder_cases[] = {
    {b_bad_unary_op, "clt_expr_unary"},     {b_bad_binary_op, "clt_expr_binary"},
    {b_forward_ref, "clt_expr_binary"},     {b_negative_ref, "clt_expr_unary"},
    {b_where_out_of_range, "clt_expr_where"}, {b_input_index, "clt_expr_input"},
    {b_negative_input, "clt_expr_input"},   {b_scalar_index, "clt_expr_scalar"},
    {b_alpha_unexpected, "takes no alpha"}, {b_alpha_missing_leaky, "needs an alpha"},
    {b_alpha_missing_elu, "needs an alpha"}, {b_grad_from_y, "needs x"},
    {b_too_many_nodes, "CLT_EXPR_MAX_NODES"},
};

/* A bad builder call returns -1; the expression then refuses to evaluate, with the first error,
 * even from a root that was built fine. */
START_TEST(test_builder_errors)
{
    clt_context *ctx = tu_context();
    clt_expr *e = NULL;
    TU_OK(clt_expr_create(&e));
    ck_assert_int_eq(builder_cases[_i].fn(e), -1);
    ck_assert_int_eq(clt_expr_input(e, 99), -1); /* a later error does not replace the first */
    int64_t shape = 9;
    clt_tensor *x = filled(ctx, 1, &shape), *out = filled(ctx, 1, &shape);
    const clt_tensor *in[1] = {x};
    float s = 1;
    expect_eval_error(ctx, e, 0, 1, in, 1, &s, out, CLT_ERR_INVALID_ARGUMENT,
                      builder_cases[_i].part);
    clt_tensor_free(x);
    clt_tensor_free(out);
    clt_expr_free(e);
    ck_assert_int_eq(clt_expr_input(NULL, 0), -1);
    EXPECT_STATUS(clt_expr_create(NULL), CLT_ERR_INVALID_ARGUMENT);
    tu_context_free(ctx);
}
END_TEST

START_TEST(test_eval_errors)
{
    clt_context *ctx = tu_context();
    int root;
    clt_expr *e = ew_fma_relu(&root);
    int s_root = clt_expr_binary(e, CLT_MUL, clt_expr_input(e, 0), clt_expr_scalar(e, 1));
    int64_t shape[2] = {4, 6}, tshape[2] = {6, 4}, big[3] = {2, 4, 6}, row = 6;
    clt_tensor *a = filled(ctx, 2, shape), *b = filled(ctx, 2, shape), *c = filled(ctx, 2, shape);
    clt_tensor *out = filled(ctx, 2, shape);
    const clt_tensor *in[3] = {a, b, c};
    float sc[2] = {1, 2};

    expect_eval_error(ctx, e, root + 100, 3, in, 0, NULL, out, CLT_ERR_INVALID_ARGUMENT, "root");
    expect_eval_error(ctx, e, -1, 3, in, 0, NULL, out, CLT_ERR_INVALID_ARGUMENT, "root");
    expect_eval_error(ctx, NULL, root, 3, in, 0, NULL, out, CLT_ERR_INVALID_ARGUMENT, "NULL");
    EXPECT_STATUS(clt_expr_eval(e, root, 3, in, 0, NULL, NULL), CLT_ERR_INVALID_ARGUMENT);
    expect_eval_error(ctx, e, root, 2, in, 0, NULL, out, CLT_ERR_INVALID_ARGUMENT, "input 2");
    expect_eval_error(ctx, e, root, 3, NULL, 0, NULL, out, CLT_ERR_INVALID_ARGUMENT, "inputs");
    expect_eval_error(ctx, e, root, CLT_EXPR_MAX_INPUTS + 1, in, 0, NULL, out,
                      CLT_ERR_INVALID_ARGUMENT, "ninputs");
    const clt_tensor *with_null[3] = {a, NULL, c};
    expect_eval_error(ctx, e, root, 3, with_null, 0, NULL, out, CLT_ERR_INVALID_ARGUMENT,
                      "input 1");
    expect_eval_error(ctx, e, s_root, 3, in, 1, sc, out, CLT_ERR_INVALID_ARGUMENT, "scalar 1");
    expect_eval_error(ctx, e, s_root, 3, in, 2, NULL, out, CLT_ERR_INVALID_ARGUMENT, "scalars");

    /* Shapes: transposed, more dims than out, out not the broadcast shape. */
    clt_tensor *t = filled(ctx, 2, tshape), *t3 = filled(ctx, 3, big), *r = filled(ctx, 1, &row);
    const clt_tensor *bad[3] = {a, t, c};
    expect_eval_error(ctx, e, root, 3, bad, 0, NULL, out, CLT_ERR_INVALID_SHAPE, "[6, 4]");
    bad[1] = t3;
    expect_eval_error(ctx, e, root, 3, bad, 0, NULL, out, CLT_ERR_INVALID_SHAPE, "[2, 4, 6]");
    expect_eval_error(ctx, e, root, 3, in, 0, NULL, r, CLT_ERR_INVALID_SHAPE, "[4, 6]");

    /* Dtypes. */
    clt_tensor *i32 = NULL;
    TU_OK(clt_tensor_create(ctx, CLT_I32, 2, shape, &i32));
    const clt_tensor *ints[3] = {a, i32, c};
    expect_eval_error(ctx, e, root, 3, ints, 0, NULL, out, CLT_ERR_INVALID_DTYPE, "i32");
    expect_eval_error(ctx, e, root, 3, in, 0, NULL, i32, CLT_ERR_INVALID_DTYPE, "out");

    /* Another context. */
    clt_context *other = tu_context();
    clt_tensor *foreign = NULL;
    TU_OK(clt_tensor_create(other, CLT_F32, 2, shape, &foreign));
    const clt_tensor *mixed[3] = {a, b, foreign};
    expect_eval_error(ctx, e, root, 3, mixed, 0, NULL, out, CLT_ERR_CONTEXT_MISMATCH, "context");
    tu_context_free(other);

    clt_tensor_free(a);
    clt_tensor_free(b);
    clt_tensor_free(c);
    clt_tensor_free(t);
    clt_tensor_free(t3);
    clt_tensor_free(r);
    clt_tensor_free(i32);
    clt_tensor_free(out);
    clt_expr_free(e);
    tu_context_free(ctx);
}
END_TEST

/* Partial overlap of out with an input (two wraps of one buffer, or a smaller view at the same
 * offset) is refused; the same memory and shape is in place and allowed. */
START_TEST(test_aliasing)
{
    clt_context *ctx = tu_context();
    int64_t total = 64, shape[2] = {4, 8}, row = 8;
    clt_tensor *big = filled(ctx, 1, &total);
    cl_mem mem = clt_tensor_cl_mem(big, NULL);
    clt_tensor *x = NULL, *out = NULL, *head = NULL, *same = NULL;
    TU_OK(clt_tensor_wrap_cl_mem(ctx, mem, 0, CLT_F32, 2, shape, &x));
    TU_OK(clt_tensor_wrap_cl_mem(ctx, mem, 4 * 4, CLT_F32, 2, shape, &out)); /* overlaps x */
    TU_OK(clt_tensor_wrap_cl_mem(ctx, mem, 4 * 4, CLT_F32, 1, &row, &head)); /* out's first row */
    TU_OK(clt_tensor_wrap_cl_mem(ctx, mem, 4 * 4, CLT_F32, 2, shape, &same));
    clt_expr *e = NULL;
    TU_OK(clt_expr_create(&e));
    int root = clt_expr_unary(e, CLT_NEG, clt_expr_input(e, 0), -1);
    const clt_tensor *in[1] = {x};
    expect_eval_error(ctx, e, root, 1, in, 0, NULL, out, CLT_ERR_ALIASING, "overlaps");
    assert_unchanged(big);
    in[0] = head;
    expect_eval_error(ctx, e, root, 1, in, 0, NULL, out, CLT_ERR_ALIASING, "overlaps");
    assert_unchanged(big);
    in[0] = same; /* another handle on exactly out's memory: in place */
    TU_OK(clt_expr_eval(e, root, 1, in, 0, NULL, out));
    float v[64];
    read_all(big, v);
    for (int i = 0; i < 64; i++)
        ck_assert_float_eq(v[i], i >= 4 && i < 36 ? -(float)FILL_VALUE : (float)FILL_VALUE);
    clt_tensor_free(x);
    clt_tensor_free(out);
    clt_tensor_free(head);
    clt_tensor_free(same);
    clt_tensor_free(big);
    clt_expr_free(e);
    tu_context_free(ctx);
}
END_TEST

Suite *expr_errors_suite(void)
{
    Suite *s = suite_create("expr_errors");
    TCase *tc = tcase_create("expr_errors");
    tcase_add_loop_test(tc, test_builder_errors, 0,
                        (int)(sizeof builder_cases / sizeof builder_cases[0]));
    tcase_add_test(tc, test_eval_errors);
    tcase_add_test(tc, test_aliasing);
    suite_add_tcase(s, tc);
    return s;
}
