/* Every error path of the pooling calls in include/cltensor_conv.h: the status, a message naming
 * the call (and the culprit), and no tensor of the fixture changed (nothing was enqueued). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "cltensor_cl.h"
#include "util/test_util.h"

enum { X, OUT, IDX, DY, DX, XI, OUT5, G4, G2, BADG, FOREIGN, NT };

typedef struct fixture {
    clt_context *ctx, *other;
    clt_tensor *t[NT];
    void *host[NT];
    clt_pool2d_params p; /* 3x3, stride 2: [2, 3, 7, 7] -> [2, 3, 3, 3] */
} fixture;

static void add(fixture *f, int i, clt_context *ctx, clt_dtype dt, int nd, const int64_t *s)
{
    TU_OK(clt_tensor_create(ctx, dt, nd, s, &f->t[i]));
    size_t n = clt_tensor_nbytes(f->t[i]);
    f->host[i] = malloc(n);
    ck_assert_ptr_nonnull(f->host[i]);
    tu_random_bytes(f->host[i], n);
    TU_OK(clt_tensor_write(f->t[i], f->host[i], n));
}

static void setup(fixture *f)
{
    f->ctx = tu_context();
    f->other = tu_context();
    const int64_t xs[4] = {2, 3, 7, 7}, os[4] = {2, 3, 3, 3}, o5[4] = {2, 3, 5, 5};
    const int64_t gs[4] = {2, 3, 1, 1}, bad[4] = {2, 3, 2, 1};
    add(f, X, f->ctx, CLT_F32, 4, xs);
    add(f, OUT, f->ctx, CLT_F32, 4, os);
    add(f, IDX, f->ctx, CLT_I32, 4, os);
    add(f, DY, f->ctx, CLT_F32, 4, os);
    add(f, DX, f->ctx, CLT_F32, 4, xs);
    add(f, XI, f->ctx, CLT_I32, 4, xs);
    add(f, OUT5, f->ctx, CLT_F32, 4, o5);
    add(f, G4, f->ctx, CLT_F32, 4, gs);
    add(f, G2, f->ctx, CLT_F32, 2, gs);
    add(f, BADG, f->ctx, CLT_F32, 4, bad);
    add(f, FOREIGN, f->other, CLT_F32, 4, os);
    clt_pool2d_params_init(&f->p, 3);
    f->p.stride_h = f->p.stride_w = 2;
}

static void teardown(fixture *f)
{
    for (int i = 0; i < NT; i++) {
        clt_tensor_free(f->t[i]);
        free(f->host[i]);
    }
    tu_context_free(f->other);
    tu_context_free(f->ctx);
}

static void expect_fail(fixture *f, clt_status got, clt_status want, const char *who,
                        const char *needle, int line)
{
    const char *msg = clt_last_error(f->ctx);
    ck_assert_msg(got == want, "line %d: %s, expected %s (%s)", line, clt_status_string(got),
                  clt_status_string(want), msg);
    ck_assert_msg(strstr(msg, who) != NULL, "line %d: message \"%s\" does not name %s", line, msg, who);
    if (needle)
        ck_assert_msg(strstr(msg, needle) != NULL, "line %d: message \"%s\" does not mention %s",
                      line, msg, needle);
    TU_OK(clt_finish(f->ctx));
    for (int i = 0; i < NT; i++) {
        size_t n = clt_tensor_nbytes(f->t[i]);
        void *now = malloc(n);
        ck_assert_ptr_nonnull(now);
        TU_OK(clt_tensor_read(f->t[i], now, n));
        ck_assert_msg(memcmp(now, f->host[i], n) == 0, "line %d: tensor %d changed", line, i);
        free(now);
    }
}
#define FAIL_AS(who, call, want, needle) expect_fail(&f, (call), (want), (who), (needle), __LINE__)
#define MAXP "clt_max_pool2d"
#define MAXB "clt_max_pool2d_backward"
#define AVGP "clt_avg_pool2d"
#define AVGB "clt_avg_pool2d_backward"
#define GAP "clt_global_avg_pool2d"
#define GAPB "clt_global_avg_pool2d_backward"

START_TEST(max_pool_errors)
{
    fixture f;
    setup(&f);
    clt_tensor **t = f.t;
    clt_pool2d_params p = f.p;
    FAIL_AS(MAXP, clt_max_pool2d(NULL, &p, t[OUT], t[IDX]), CLT_ERR_INVALID_ARGUMENT, "x is NULL");
    FAIL_AS(MAXP, clt_max_pool2d(t[X], &p, NULL, t[IDX]), CLT_ERR_INVALID_ARGUMENT, "out is NULL");
    FAIL_AS(MAXP, clt_max_pool2d(t[X], NULL, t[OUT], t[IDX]), CLT_ERR_INVALID_ARGUMENT, "params");
    FAIL_AS(MAXP, clt_max_pool2d(t[XI], &p, t[OUT], t[IDX]), CLT_ERR_INVALID_DTYPE, "i32");
    FAIL_AS(MAXP, clt_max_pool2d(t[X], &p, t[IDX], NULL), CLT_ERR_INVALID_DTYPE, "out is i32");
    FAIL_AS(MAXP, clt_max_pool2d(t[X], &p, t[OUT], t[DY]), CLT_ERR_INVALID_DTYPE, "indices is f32");
    clt_tensor *flat = NULL;
    const int64_t s3[3] = {6, 7, 7};
    TU_OK(clt_tensor_reshape(t[X], 3, s3, &flat));
    FAIL_AS(MAXP, clt_max_pool2d(flat, &p, t[OUT], NULL), CLT_ERR_INVALID_SHAPE, "3 dimensions");
    /* parameters */
    clt_pool2d_params q = p;
    q.kernel_w = 0;
    FAIL_AS(MAXP, clt_max_pool2d(t[X], &q, t[OUT], NULL), CLT_ERR_INVALID_ARGUMENT, "kernel");
    q = p, q.stride_h = 0;
    FAIL_AS(MAXP, clt_max_pool2d(t[X], &q, t[OUT], NULL), CLT_ERR_INVALID_ARGUMENT, "stride");
    q = p, q.pad_bottom = -1;
    FAIL_AS(MAXP, clt_max_pool2d(t[X], &q, t[OUT], NULL), CLT_ERR_INVALID_ARGUMENT, "padding");
    q = p, q.pad_left = 3;
    FAIL_AS(MAXP, clt_max_pool2d(t[X], &q, t[OUT], NULL), CLT_ERR_INVALID_ARGUMENT, "below the kernel");
    q = p, q.kernel_h = 9;
    FAIL_AS(MAXP, clt_max_pool2d(t[X], &q, t[OUT], NULL), CLT_ERR_INVALID_SHAPE, "output size");
    /* shapes: expected and actual named */
    q = p, q.stride_h = q.stride_w = 1;
    FAIL_AS(MAXP, clt_max_pool2d(t[X], &q, t[OUT], NULL), CLT_ERR_INVALID_SHAPE,
            "out is [2, 3, 3, 3], expected [2, 3, 5, 5]");
    FAIL_AS(MAXP, clt_max_pool2d(t[X], &q, t[OUT5], t[IDX]), CLT_ERR_INVALID_SHAPE,
            "indices is [2, 3, 3, 3], expected [2, 3, 5, 5]");
    /* contexts */
    FAIL_AS(MAXP, clt_max_pool2d(t[X], &p, t[FOREIGN], NULL), CLT_ERR_CONTEXT_MISMATCH, "out");
    /* aliasing: a 1x1 pool maps x onto its own shape */
    clt_pool2d_params one;
    clt_pool2d_params_init(&one, 1);
    const int64_t xs[4] = {2, 3, 7, 7};
    clt_tensor *x_view = NULL, *x_as_i32 = NULL, *dx_as_i32 = NULL;
    size_t xoff, dxoff;
    cl_mem xm = clt_tensor_cl_mem(t[X], &xoff), dxm = clt_tensor_cl_mem(t[DX], &dxoff);
    TU_OK(clt_tensor_reshape(t[X], 4, xs, &x_view));
    TU_OK(clt_tensor_wrap_cl_mem(f.ctx, xm, xoff, CLT_I32, 4, xs, &x_as_i32));
    TU_OK(clt_tensor_wrap_cl_mem(f.ctx, dxm, dxoff, CLT_I32, 4, xs, &dx_as_i32));
    FAIL_AS(MAXP, clt_max_pool2d(t[X], &one, x_view, NULL), CLT_ERR_ALIASING, "out overlaps x");
    FAIL_AS(MAXP, clt_max_pool2d(t[X], &one, t[DX], x_as_i32), CLT_ERR_ALIASING,
            "indices overlaps x");
    FAIL_AS(MAXP, clt_max_pool2d(t[X], &one, t[DX], dx_as_i32), CLT_ERR_ALIASING,
            "out overlaps indices");
    /* backward */
    FAIL_AS(MAXB, clt_max_pool2d_backward(NULL, t[X], NULL, &p, t[DX]), CLT_ERR_INVALID_ARGUMENT,
            "dy is NULL");
    FAIL_AS(MAXB, clt_max_pool2d_backward(t[DY], t[X], NULL, &p, NULL), CLT_ERR_INVALID_ARGUMENT,
            "dx is NULL");
    FAIL_AS(MAXB, clt_max_pool2d_backward(t[DY], NULL, NULL, &p, t[DX]), CLT_ERR_INVALID_ARGUMENT,
            "x and indices are both NULL");
    FAIL_AS(MAXB, clt_max_pool2d_backward(t[DY], t[X], NULL, NULL, t[DX]), CLT_ERR_INVALID_ARGUMENT,
            "params");
    FAIL_AS(MAXB, clt_max_pool2d_backward(t[DY], t[X], NULL, &p, flat), CLT_ERR_INVALID_SHAPE,
            "dx has 3 dimensions");
    FAIL_AS(MAXB, clt_max_pool2d_backward(t[OUT5], t[X], NULL, &p, t[DX]), CLT_ERR_INVALID_SHAPE,
            "dy is [2, 3, 5, 5], expected [2, 3, 3, 3]");
    FAIL_AS(MAXB, clt_max_pool2d_backward(t[DY], t[XI], NULL, &p, t[DX]), CLT_ERR_INVALID_DTYPE,
            "x is i32");
    FAIL_AS(MAXB, clt_max_pool2d_backward(t[DY], t[OUT5], NULL, &p, t[DX]), CLT_ERR_INVALID_SHAPE,
            "x is [2, 3, 5, 5], expected [2, 3, 7, 7]");
    FAIL_AS(MAXB, clt_max_pool2d_backward(t[DY], NULL, t[OUT], &p, t[DX]), CLT_ERR_INVALID_DTYPE,
            "indices is f32");
    FAIL_AS(MAXB, clt_max_pool2d_backward(t[FOREIGN], t[X], NULL, &p, t[DX]),
            CLT_ERR_CONTEXT_MISMATCH, "dy");
    FAIL_AS(MAXB, clt_max_pool2d_backward(t[DY], NULL, t[IDX], &q, t[DX]), CLT_ERR_INVALID_SHAPE,
            "expected [2, 3, 5, 5]");
    FAIL_AS(MAXB, clt_max_pool2d_backward(t[DX], NULL, x_as_i32, &one, x_view),
            CLT_ERR_ALIASING, "dx overlaps indices");
    FAIL_AS(MAXB, clt_max_pool2d_backward(t[DX], t[X], NULL, &one, x_view), CLT_ERR_ALIASING,
            "dx overlaps x");
    FAIL_AS(MAXB, clt_max_pool2d_backward(x_view, NULL, dx_as_i32, &one, t[X]), CLT_ERR_ALIASING,
            "dx overlaps dy");
    clt_tensor_free(x_view);
    clt_tensor_free(x_as_i32);
    clt_tensor_free(dx_as_i32);
    clt_tensor_free(flat);
    teardown(&f);
}
END_TEST

START_TEST(avg_pool_errors)
{
    fixture f;
    setup(&f);
    clt_tensor **t = f.t;
    clt_pool2d_params p = f.p, q = f.p;
    FAIL_AS(AVGP, clt_avg_pool2d(NULL, &p, 0, t[OUT]), CLT_ERR_INVALID_ARGUMENT, "x is NULL");
    FAIL_AS(AVGP, clt_avg_pool2d(t[X], &p, 0, NULL), CLT_ERR_INVALID_ARGUMENT, "out is NULL");
    FAIL_AS(AVGP, clt_avg_pool2d(t[X], NULL, 1, t[OUT]), CLT_ERR_INVALID_ARGUMENT, "params");
    FAIL_AS(AVGP, clt_avg_pool2d(t[XI], &p, 1, t[OUT]), CLT_ERR_INVALID_DTYPE, "x is i32");
    q.pad_top = 3;
    FAIL_AS(AVGP, clt_avg_pool2d(t[X], &q, 1, t[OUT]), CLT_ERR_INVALID_ARGUMENT, "padding");
    FAIL_AS(AVGP, clt_avg_pool2d(t[X], &p, 1, t[OUT5]), CLT_ERR_INVALID_SHAPE,
            "out is [2, 3, 5, 5], expected [2, 3, 3, 3]");
    FAIL_AS(AVGP, clt_avg_pool2d(t[X], &p, 1, t[FOREIGN]), CLT_ERR_CONTEXT_MISMATCH, "out");
    clt_pool2d_params one;
    clt_pool2d_params_init(&one, 1);
    const int64_t xs[4] = {2, 3, 7, 7};
    clt_tensor *x_view = NULL;
    TU_OK(clt_tensor_reshape(t[X], 4, xs, &x_view));
    FAIL_AS(AVGP, clt_avg_pool2d(t[X], &one, 0, x_view), CLT_ERR_ALIASING, "out overlaps x");
    FAIL_AS(AVGB, clt_avg_pool2d_backward(NULL, &p, 0, t[DX]), CLT_ERR_INVALID_ARGUMENT, "dy is NULL");
    FAIL_AS(AVGB, clt_avg_pool2d_backward(t[DY], &p, 0, NULL), CLT_ERR_INVALID_ARGUMENT, "dx is NULL");
    FAIL_AS(AVGB, clt_avg_pool2d_backward(t[DY], NULL, 0, t[DX]), CLT_ERR_INVALID_ARGUMENT, "params");
    FAIL_AS(AVGB, clt_avg_pool2d_backward(t[OUT5], &p, 0, t[DX]), CLT_ERR_INVALID_SHAPE,
            "dy is [2, 3, 5, 5], expected [2, 3, 3, 3]");
    FAIL_AS(AVGB, clt_avg_pool2d_backward(t[DY], &p, 0, t[XI]), CLT_ERR_INVALID_DTYPE, "dx is i32");
    FAIL_AS(AVGB, clt_avg_pool2d_backward(t[FOREIGN], &p, 0, t[DX]), CLT_ERR_CONTEXT_MISMATCH, "dy");
    FAIL_AS(AVGB, clt_avg_pool2d_backward(x_view, &one, 1, t[X]), CLT_ERR_ALIASING, "dx overlaps dy");
    clt_tensor_free(x_view);
    teardown(&f);
}
END_TEST

START_TEST(global_errors)
{
    fixture f;
    setup(&f);
    clt_tensor **t = f.t;
    FAIL_AS(GAP, clt_global_avg_pool2d(NULL, t[G4]), CLT_ERR_INVALID_ARGUMENT, "x is NULL");
    FAIL_AS(GAP, clt_global_avg_pool2d(t[X], NULL), CLT_ERR_INVALID_ARGUMENT, "out is NULL");
    FAIL_AS(GAP, clt_global_avg_pool2d(t[XI], t[G4]), CLT_ERR_INVALID_DTYPE, "x is i32");
    FAIL_AS(GAP, clt_global_avg_pool2d(t[X], t[BADG]), CLT_ERR_INVALID_SHAPE,
            "out is [2, 3, 2, 1], expected [2, 3, 1, 1] (or [2, 3])");
    FAIL_AS(GAP, clt_global_avg_pool2d(t[X], t[OUT]), CLT_ERR_INVALID_SHAPE, "expected [2, 3, 1, 1]");
    FAIL_AS(GAP, clt_global_avg_pool2d(t[X], t[FOREIGN]), CLT_ERR_CONTEXT_MISMATCH, "out");
    clt_tensor *flat = NULL, *x_head = NULL;
    const int64_t s3[3] = {6, 7, 7}, gs[2] = {2, 3};
    TU_OK(clt_tensor_reshape(t[X], 3, s3, &flat));
    FAIL_AS(GAP, clt_global_avg_pool2d(flat, t[G4]), CLT_ERR_INVALID_SHAPE, "x has 3 dimensions");
    size_t off;
    cl_mem xm = clt_tensor_cl_mem(t[X], &off);
    TU_OK(clt_tensor_wrap_cl_mem(f.ctx, xm, off + 8, CLT_F32, 2, gs, &x_head));
    FAIL_AS(GAP, clt_global_avg_pool2d(t[X], x_head), CLT_ERR_ALIASING, "out overlaps x");
    FAIL_AS(GAPB, clt_global_avg_pool2d_backward(NULL, t[DX]), CLT_ERR_INVALID_ARGUMENT, "dy is NULL");
    FAIL_AS(GAPB, clt_global_avg_pool2d_backward(t[G2], NULL), CLT_ERR_INVALID_ARGUMENT, "dx is NULL");
    FAIL_AS(GAPB, clt_global_avg_pool2d_backward(t[BADG], t[DX]), CLT_ERR_INVALID_SHAPE,
            "dy is [2, 3, 2, 1]");
    FAIL_AS(GAPB, clt_global_avg_pool2d_backward(t[G4], flat), CLT_ERR_INVALID_SHAPE,
            "dx has 3 dimensions");
    FAIL_AS(GAPB, clt_global_avg_pool2d_backward(t[G4], t[XI]), CLT_ERR_INVALID_DTYPE, "dx is i32");
    FAIL_AS(GAPB, clt_global_avg_pool2d_backward(x_head, t[X]), CLT_ERR_ALIASING, "dx overlaps dy");
    clt_tensor_free(flat);
    clt_tensor_free(x_head);
    teardown(&f);
}
END_TEST

START_TEST(output_shape_errors)
{
    clt_pool2d_params p;
    clt_pool2d_params_init(&p, 2);
    clt_pool2d_params_init(NULL, 2); /* no-op */
    int64_t xs[4] = {3, 4, 9, 8}, os[4] = {-1, -1, -1, -1};
    TU_OK(clt_pool2d_output_shape(xs, &p, os));
    ck_assert(os[0] == 3 && os[1] == 4 && os[2] == 4 && os[3] == 4);
    p.pad_top = 1;
    p.stride_w = 3;
    TU_OK(clt_pool2d_output_shape(xs, &p, os));
    ck_assert(os[2] == 5 && os[3] == 3);
    const char *who = "clt_pool2d_output_shape";
    TU_EXPECT_STATUS(clt_pool2d_output_shape(NULL, &p, os), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_MESSAGE(clt_last_error(NULL), who);
    TU_EXPECT_STATUS(clt_pool2d_output_shape(xs, &p, NULL), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_STATUS(clt_pool2d_output_shape(xs, NULL, os), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_MESSAGE(clt_last_error(NULL), "params");
    xs[2] = -1;
    TU_EXPECT_STATUS(clt_pool2d_output_shape(xs, &p, os), CLT_ERR_INVALID_SHAPE);
    TU_EXPECT_MESSAGE(clt_last_error(NULL), "negative");
    xs[2] = 1;
    p.pad_top = 0;
    TU_EXPECT_STATUS(clt_pool2d_output_shape(xs, &p, os), CLT_ERR_INVALID_SHAPE);
    TU_EXPECT_MESSAGE(clt_last_error(NULL), "output size");
    xs[2] = 1 << 16, xs[3] = 1 << 15;
    TU_EXPECT_STATUS(clt_pool2d_output_shape(xs, &p, os), CLT_ERR_SIZE_OVERFLOW);
    TU_EXPECT_MESSAGE(clt_last_error(NULL), who);
}
END_TEST

Suite *pool2d_errors_suite(void)
{
    Suite *s = suite_create("pool2d_errors");
    TCase *tc = tcase_create("pool2d_errors");
    tcase_add_test(tc, max_pool_errors);
    tcase_add_test(tc, avg_pool_errors);
    tcase_add_test(tc, global_errors);
    tcase_add_test(tc, output_shape_errors);
    suite_add_tcase(s, tc);
    return s;
}
