/* Error paths of clt_conv2d_backward_input / _weight / _bias: each returns the documented status,
 * a message naming the call (and the offending tensor or value), and leaves every output as it was
 * (nothing enqueued). */
#include <check.h>
#include <string.h>

#include "util/test_util.h"

#define IN "clt_conv2d_backward_input"
#define WT "clt_conv2d_backward_weight"
#define BI "clt_conv2d_backward_bias"

typedef struct fixture {
    clt_context *ctx, *other;
    clt_tensor *x, *w, *dy, *dx, *dw, *db; /* x [2,4,5,5], w [6,2,3,3], groups 2, pad 1: dy [2,6,5,5] */
    clt_tensor *dy_i32, *dx3, *dy_other, *dy_bad;
    clt_conv2d_params p;
    float before_dx[200], before_dw[108], before_db[6];
} fixture;

static clt_tensor *make(clt_context *ctx, clt_dtype dt, int ndim, const int64_t *s)
{
    clt_tensor *t = NULL;
    TU_OK(clt_tensor_create(ctx, dt, ndim, s, &t));
    if (dt == CLT_F32)
        TU_OK(clt_tensor_fill_uniform(t, tu_rng_next(), -1.0f, 1.0f));
    return t;
}

static void setup(fixture *f)
{
    static const int64_t xs[4] = {2, 4, 5, 5}, ws[4] = {6, 2, 3, 3}, ys[4] = {2, 6, 5, 5};
    static const int64_t x3[3] = {2, 4, 25}, yb[4] = {2, 6, 5, 4}, nb = 6;
    f->ctx = tu_context();
    f->other = tu_context();
    f->x = make(f->ctx, CLT_F32, 4, xs), f->w = make(f->ctx, CLT_F32, 4, ws);
    f->dy = make(f->ctx, CLT_F32, 4, ys), f->dx = make(f->ctx, CLT_F32, 4, xs);
    f->dw = make(f->ctx, CLT_F32, 4, ws), f->db = make(f->ctx, CLT_F32, 1, &nb);
    f->dy_i32 = make(f->ctx, CLT_I32, 4, ys), f->dx3 = make(f->ctx, CLT_F32, 3, x3);
    f->dy_other = make(f->other, CLT_F32, 4, ys), f->dy_bad = make(f->ctx, CLT_F32, 4, yb);
    clt_conv2d_params_init(&f->p);
    f->p.groups = 2;
    f->p.pad_top = f->p.pad_bottom = f->p.pad_left = f->p.pad_right = 1;
    TU_OK(clt_tensor_read(f->dx, f->before_dx, sizeof f->before_dx));
    TU_OK(clt_tensor_read(f->dw, f->before_dw, sizeof f->before_dw));
    TU_OK(clt_tensor_read(f->db, f->before_db, sizeof f->before_db));
}

static void unchanged(fixture *f)
{
    float dx[200], dw[108], db[6];
    TU_OK(clt_tensor_read(f->dx, dx, sizeof dx));
    TU_OK(clt_tensor_read(f->dw, dw, sizeof dw));
    TU_OK(clt_tensor_read(f->db, db, sizeof db));
    ck_assert_msg(!memcmp(dx, f->before_dx, sizeof dx), "dx changed");
    ck_assert_msg(!memcmp(dw, f->before_dw, sizeof dw), "dw changed");
    ck_assert_msg(!memcmp(db, f->before_db, sizeof db), "dbias changed");
}

static void teardown(fixture *f)
{
    clt_context *ctx = f->ctx, *other = f->other;
    tu_context_free(other);
    tu_context_free(ctx);
}

#define EXPECT(f, call, status, who, needle)                                                       \
    do {                                                                                           \
        TU_EXPECT_STATUS(call, status);                                                            \
        TU_EXPECT_MESSAGE(clt_last_error((f)->ctx), who);                                          \
        TU_EXPECT_MESSAGE(clt_last_error((f)->ctx), needle);                                       \
    } while (0)

START_TEST(null_arguments)
{
    fixture f;
    setup(&f);
    EXPECT(&f, clt_conv2d_backward_input(NULL, f.w, &f.p, f.dx), CLT_ERR_INVALID_ARGUMENT, IN, "dy");
    EXPECT(&f, clt_conv2d_backward_input(f.dy, NULL, &f.p, f.dx), CLT_ERR_INVALID_ARGUMENT, IN, "w");
    EXPECT(&f, clt_conv2d_backward_input(f.dy, f.w, NULL, f.dx), CLT_ERR_INVALID_ARGUMENT, IN, "params");
    EXPECT(&f, clt_conv2d_backward_input(f.dy, f.w, &f.p, NULL), CLT_ERR_INVALID_ARGUMENT, IN, "dx");
    EXPECT(&f, clt_conv2d_backward_weight(NULL, f.x, &f.p, f.dw), CLT_ERR_INVALID_ARGUMENT, WT, "dy");
    EXPECT(&f, clt_conv2d_backward_weight(f.dy, NULL, &f.p, f.dw), CLT_ERR_INVALID_ARGUMENT, WT, "x");
    EXPECT(&f, clt_conv2d_backward_weight(f.dy, f.x, NULL, f.dw), CLT_ERR_INVALID_ARGUMENT, WT, "params");
    EXPECT(&f, clt_conv2d_backward_weight(f.dy, f.x, &f.p, NULL), CLT_ERR_INVALID_ARGUMENT, WT, "dw");
    EXPECT(&f, clt_conv2d_backward_bias(NULL, f.db), CLT_ERR_INVALID_ARGUMENT, BI, "dy");
    EXPECT(&f, clt_conv2d_backward_bias(f.dy, NULL), CLT_ERR_INVALID_ARGUMENT, BI, "dbias");
    unchanged(&f);
    teardown(&f);
}
END_TEST

START_TEST(dtypes_shapes_contexts)
{
    fixture f;
    setup(&f);
    EXPECT(&f, clt_conv2d_backward_input(f.dy_i32, f.w, &f.p, f.dx), CLT_ERR_INVALID_DTYPE, IN, "i32");
    EXPECT(&f, clt_conv2d_backward_weight(f.dy_i32, f.x, &f.p, f.dw), CLT_ERR_INVALID_DTYPE, WT, "dy");
    EXPECT(&f, clt_conv2d_backward_bias(f.dy_i32, f.db), CLT_ERR_INVALID_DTYPE, BI, "dy");
    EXPECT(&f, clt_conv2d_backward_bias(f.dy, f.dy_i32), CLT_ERR_INVALID_DTYPE, BI, "dbias");
    /* dy of the wrong size: the message gives expected and actual shapes */
    EXPECT(&f, clt_conv2d_backward_input(f.dy_bad, f.w, &f.p, f.dx), CLT_ERR_INVALID_SHAPE, IN,
           "expected [2, 6, 5, 5]");
    EXPECT(&f, clt_conv2d_backward_weight(f.dy_bad, f.x, &f.p, f.dw), CLT_ERR_INVALID_SHAPE, WT,
           "[2, 6, 5, 4]");
    EXPECT(&f, clt_conv2d_backward_input(f.dy, f.w, &f.p, f.dx3), CLT_ERR_INVALID_SHAPE, IN, "dx");
    EXPECT(&f, clt_conv2d_backward_weight(f.dy, f.dx3, &f.p, f.dw), CLT_ERR_INVALID_SHAPE, WT, "x");
    EXPECT(&f, clt_conv2d_backward_bias(f.dx3, f.db), CLT_ERR_INVALID_SHAPE, BI, "dy");
    EXPECT(&f, clt_conv2d_backward_bias(f.dy, f.dx), CLT_ERR_INVALID_SHAPE, BI, "[6]");
    /* w with the wrong Ci / groups */
    f.p.groups = 1;
    EXPECT(&f, clt_conv2d_backward_input(f.dy, f.w, &f.p, f.dx), CLT_ERR_INVALID_SHAPE, IN, "Ci / groups");
    EXPECT(&f, clt_conv2d_backward_weight(f.dy, f.x, &f.p, f.dw), CLT_ERR_INVALID_SHAPE, WT, "Ci / groups");
    f.p.groups = 2;
    EXPECT(&f, clt_conv2d_backward_input(f.dy_other, f.w, &f.p, f.dx), CLT_ERR_CONTEXT_MISMATCH, IN, "dy");
    EXPECT(&f, clt_conv2d_backward_weight(f.dy_other, f.x, &f.p, f.dw), CLT_ERR_CONTEXT_MISMATCH, WT, "dy");
    EXPECT(&f, clt_conv2d_backward_bias(f.dy_other, f.db), CLT_ERR_CONTEXT_MISMATCH, BI, "dy");
    unchanged(&f);
    teardown(&f);
}
END_TEST

START_TEST(bad_params)
{
    fixture f;
    setup(&f);
    clt_conv2d_params q = f.p;
    q.stride_h = 0;
    EXPECT(&f, clt_conv2d_backward_input(f.dy, f.w, &q, f.dx), CLT_ERR_INVALID_ARGUMENT, IN, "stride");
    q = f.p, q.dilation_w = -1;
    EXPECT(&f, clt_conv2d_backward_weight(f.dy, f.x, &q, f.dw), CLT_ERR_INVALID_ARGUMENT, WT, "dilation");
    q = f.p, q.pad_left = -2;
    EXPECT(&f, clt_conv2d_backward_input(f.dy, f.w, &q, f.dx), CLT_ERR_INVALID_ARGUMENT, IN, "padding");
    q = f.p, q.groups = 3;
    EXPECT(&f, clt_conv2d_backward_weight(f.dy, f.x, &q, f.dw), CLT_ERR_INVALID_ARGUMENT, WT, "groups");
    q = f.p, q.groups = 0;
    EXPECT(&f, clt_conv2d_backward_input(f.dy, f.w, &q, f.dx), CLT_ERR_INVALID_ARGUMENT, IN, "groups");
    /* output < 1: a 3x3 window over 5x5 with dilation 3 and no padding */
    q = f.p, q.dilation_h = q.dilation_w = 3, q.pad_top = q.pad_bottom = q.pad_left = q.pad_right = 0;
    EXPECT(&f, clt_conv2d_backward_input(f.dy, f.w, &q, f.dx), CLT_ERR_INVALID_SHAPE, IN, "output size");
    EXPECT(&f, clt_conv2d_backward_weight(f.dy, f.x, &q, f.dw), CLT_ERR_INVALID_SHAPE, WT, "output size");
    unchanged(&f);
    teardown(&f);
}
END_TEST

/* Outputs overlapping an input: reshape views of the same memory. */
START_TEST(aliasing)
{
    clt_context *ctx = tu_context();
    clt_conv2d_params p;
    clt_conv2d_params_init(&p);
    /* 1x1, Ci = 1, Co = 2: x [2,1,1,1], w [2,1,1,1], dy [2,2,1,1], dw [2,1,1,1], dbias [2] */
    int64_t xs[4] = {2, 1, 1, 1}, ys[4] = {2, 2, 1, 1}, two = 2;
    clt_tensor *w = make(ctx, CLT_F32, 4, xs), *x = make(ctx, CLT_F32, 4, xs);
    clt_tensor *dy = make(ctx, CLT_F32, 4, ys), *dx_w = NULL, *dw_x = NULL, *db_dy = NULL;
    TU_OK(clt_tensor_reshape(w, 4, xs, &dx_w));
    TU_OK(clt_tensor_reshape(x, 4, xs, &dw_x));
    float before[4], after[4];
    TU_OK(clt_tensor_read(dy, before, sizeof before));
    TU_EXPECT_STATUS(clt_conv2d_backward_input(dy, w, &p, dx_w), CLT_ERR_ALIASING);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), IN);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "dx overlaps w");
    TU_EXPECT_STATUS(clt_conv2d_backward_weight(dy, x, &p, dw_x), CLT_ERR_ALIASING);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), WT);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "dw overlaps x");
    /* dbias as a view of dy: dy [1,2,1,1] -> [2] */
    int64_t y1[4] = {1, 2, 1, 1};
    clt_tensor *dyv = NULL;
    TU_OK(clt_tensor_create(ctx, CLT_F32, 4, y1, &dyv));
    TU_OK(clt_tensor_reshape(dyv, 1, &two, &db_dy));
    TU_EXPECT_STATUS(clt_conv2d_backward_bias(dyv, db_dy), CLT_ERR_ALIASING);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), BI);
    /* dx as dy itself (same shape when Ci = Co and 1x1) */
    int64_t sq[4] = {2, 2, 1, 1}, ws2[4] = {2, 2, 1, 1};
    clt_tensor *w2 = make(ctx, CLT_F32, 4, ws2), *y2 = make(ctx, CLT_F32, 4, sq);
    TU_EXPECT_STATUS(clt_conv2d_backward_input(y2, w2, &p, y2), CLT_ERR_ALIASING);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "dx overlaps dy");
    TU_OK(clt_tensor_read(dy, after, sizeof after));
    ck_assert(!memcmp(before, after, sizeof after));
    tu_context_free(ctx);
}
END_TEST

Suite *conv2d_backward_errors_suite(void)
{
    Suite *s = suite_create("conv2d_backward_errors");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, null_arguments);
    tcase_add_test(tc, dtypes_shapes_contexts);
    tcase_add_test(tc, bad_params);
    tcase_add_test(tc, aliasing);
    suite_add_tcase(s, tc);
    return s;
}
