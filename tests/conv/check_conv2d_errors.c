/* Every error path of clt_conv2d (include/cltensor_conv.h): the status, a message that names the
 * call and the culprit (both shapes for a wrong shape), and out unchanged (nothing enqueued). */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/gemm_test.h"
#include "util/test_util.h"

/* x [2, 4, 6, 6], w [6, 4, 3, 3], bias [6], out [2, 6, 4, 4] (stride 1, no padding). */
typedef struct fixture {
    clt_context *ctx;
    clt_tensor *x, *w, *bias, *out;
    float hout[2 * 6 * 4 * 4];
    clt_conv2d_params p;
} fixture;

static clt_tensor *make(clt_context *ctx, clt_dtype dt, int ndim, const int64_t *s)
{
    clt_tensor *t = NULL;
    TU_OK(clt_tensor_create(ctx, dt, ndim, s, &t));
    return t;
}

static void setup(fixture *f)
{
    f->ctx = tu_context();
    static const int64_t xs[4] = {2, 4, 6, 6}, ws[4] = {6, 4, 3, 3}, bs[1] = {6}, os[4] = {2, 6, 4, 4};
    f->x = make(f->ctx, CLT_F32, 4, xs);
    f->w = make(f->ctx, CLT_F32, 4, ws);
    f->bias = make(f->ctx, CLT_F32, 1, bs);
    f->out = make(f->ctx, CLT_F32, 4, os);
    TU_OK(clt_tensor_fill_uniform(f->x, 1, -1, 1));
    TU_OK(clt_tensor_fill_uniform(f->w, 2, -1, 1));
    TU_OK(clt_tensor_fill_uniform(f->bias, 3, -1, 1));
    tu_random_f32(f->hout, sizeof f->hout / sizeof f->hout[0], -1, 1);
    TU_OK(clt_tensor_write(f->out, f->hout, sizeof f->hout));
    clt_conv2d_params_init(&f->p);
}

static void teardown(fixture *f)
{
    clt_tensor_free(f->x), clt_tensor_free(f->w), clt_tensor_free(f->bias), clt_tensor_free(f->out);
    tu_context_free(f->ctx);
}

static void expect_fail(fixture *f, clt_status got, clt_status want, const char *n1, const char *n2,
                        int line)
{
    const char *msg = clt_last_error(f->ctx);
    ck_assert_msg(got == want, "line %d: %s, expected %s (%s)", line, clt_status_string(got),
                  clt_status_string(want), msg);
    ck_assert_msg(strstr(msg, "clt_conv2d") != NULL, "line %d: \"%s\" does not name clt_conv2d", line, msg);
    if (n1)
        ck_assert_msg(strstr(msg, n1) != NULL, "line %d: \"%s\" does not mention %s", line, msg, n1);
    if (n2)
        ck_assert_msg(strstr(msg, n2) != NULL, "line %d: \"%s\" does not mention %s", line, msg, n2);
    float *now = gt_read(f->out);
    ck_assert_msg(memcmp(now, f->hout, sizeof f->hout) == 0, "line %d: out changed", line);
    free(now);
}
#define FAIL(call, want, n1, n2) expect_fail(&f, (call), (want), (n1), (n2), __LINE__)

START_TEST(null_arguments)
{
    fixture f;
    setup(&f);
    FAIL(clt_conv2d(NULL, f.w, f.bias, &f.p, CLT_IDENTITY, 0, f.out), CLT_ERR_INVALID_ARGUMENT, "x is NULL", NULL);
    FAIL(clt_conv2d(f.x, NULL, f.bias, &f.p, CLT_IDENTITY, 0, f.out), CLT_ERR_INVALID_ARGUMENT, "w is NULL", NULL);
    TU_EXPECT_STATUS(clt_conv2d(f.x, f.w, f.bias, &f.p, CLT_IDENTITY, 0, NULL), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_MESSAGE(clt_last_error(f.ctx), "out is NULL");
    FAIL(clt_conv2d(f.x, f.w, f.bias, NULL, CLT_IDENTITY, 0, f.out), CLT_ERR_INVALID_ARGUMENT, "params", NULL);
    teardown(&f);
}
END_TEST

START_TEST(dtypes_and_shapes)
{
    fixture f;
    setup(&f);
    const int64_t xi[4] = {2, 4, 6, 6}, o3[3] = {2, 6, 16}, ob[4] = {2, 6, 5, 4}, w5[4] = {6, 3, 3, 3};
    const int64_t b7[1] = {7}, b2[2] = {6, 1};
    clt_tensor *x_i32 = make(f.ctx, CLT_I32, 4, xi), *out3 = make(f.ctx, CLT_F32, 3, o3);
    clt_tensor *out_bad = make(f.ctx, CLT_F32, 4, ob), *w_bad = make(f.ctx, CLT_F32, 4, w5);
    clt_tensor *bias7 = make(f.ctx, CLT_F32, 1, b7), *bias2d = make(f.ctx, CLT_F32, 2, b2);
    clt_tensor *bias_i = make(f.ctx, CLT_I32, 1, b2);
    FAIL(clt_conv2d(x_i32, f.w, f.bias, &f.p, CLT_IDENTITY, 0, f.out), CLT_ERR_INVALID_DTYPE, "x is i32", "f32");
    FAIL(clt_conv2d(f.x, f.w, bias_i, &f.p, CLT_IDENTITY, 0, f.out), CLT_ERR_INVALID_DTYPE, "bias", NULL);
    FAIL(clt_conv2d(f.x, w_bad, f.bias, &f.p, CLT_IDENTITY, 0, f.out), CLT_ERR_INVALID_SHAPE, "[6, 3, 3, 3]", "[2, 4, 6, 6]");
    FAIL(clt_conv2d(f.x, f.w, f.bias, &f.p, CLT_IDENTITY, 0, out_bad), CLT_ERR_INVALID_SHAPE, "[2, 6, 5, 4]", "[2, 6, 4, 4]");
    /* the 3-D out is checked through the same path: both shapes named */
    TU_EXPECT_STATUS(clt_conv2d(f.x, f.w, f.bias, &f.p, CLT_IDENTITY, 0, out3), CLT_ERR_INVALID_SHAPE);
    TU_EXPECT_MESSAGE(clt_last_error(f.ctx), "[2, 6, 16]");
    TU_EXPECT_MESSAGE(clt_last_error(f.ctx), "[2, 6, 4, 4]");
    FAIL(clt_conv2d(out3, f.w, f.bias, &f.p, CLT_IDENTITY, 0, f.out), CLT_ERR_INVALID_SHAPE, "x has 3 dimensions", NULL);
    FAIL(clt_conv2d(f.x, f.w, bias7, &f.p, CLT_IDENTITY, 0, f.out), CLT_ERR_INVALID_SHAPE, "bias", "[6]");
    FAIL(clt_conv2d(f.x, f.w, bias2d, &f.p, CLT_IDENTITY, 0, f.out), CLT_ERR_INVALID_SHAPE, "bias", "[6]");
    clt_tensor *all[7] = {x_i32, out3, out_bad, w_bad, bias7, bias2d, bias_i};
    for (int i = 0; i < 7; i++)
        clt_tensor_free(all[i]);
    teardown(&f);
}
END_TEST

START_TEST(bad_params)
{
    fixture f;
    setup(&f);
    clt_conv2d_params p = f.p;
    p.stride_w = 0;
    FAIL(clt_conv2d(f.x, f.w, f.bias, &p, CLT_IDENTITY, 0, f.out), CLT_ERR_INVALID_ARGUMENT, "stride", NULL);
    p = f.p, p.dilation_h = -1;
    FAIL(clt_conv2d(f.x, f.w, f.bias, &p, CLT_IDENTITY, 0, f.out), CLT_ERR_INVALID_ARGUMENT, "dilation", NULL);
    p = f.p, p.pad_left = -2;
    FAIL(clt_conv2d(f.x, f.w, f.bias, &p, CLT_IDENTITY, 0, f.out), CLT_ERR_INVALID_ARGUMENT, "padding", NULL);
    p = f.p, p.groups = 0;
    FAIL(clt_conv2d(f.x, f.w, f.bias, &p, CLT_IDENTITY, 0, f.out), CLT_ERR_INVALID_ARGUMENT, "groups", NULL);
    p = f.p, p.groups = 4; /* divides Ci = 4 but not Co = 6 */
    FAIL(clt_conv2d(f.x, f.w, f.bias, &p, CLT_IDENTITY, 0, f.out), CLT_ERR_INVALID_ARGUMENT, "groups = 4", "Co = 6");
    p = f.p, p.groups = 2; /* divides both, but w has Ci = 4 per group, not 2 */
    FAIL(clt_conv2d(f.x, f.w, f.bias, &p, CLT_IDENTITY, 0, f.out), CLT_ERR_INVALID_SHAPE, "Ci / groups", NULL);
    p = f.p, p.dilation_h = 4; /* window 9 > 6 */
    FAIL(clt_conv2d(f.x, f.w, f.bias, &p, CLT_IDENTITY, 0, f.out), CLT_ERR_INVALID_SHAPE, "output size", NULL);
    int64_t xs[4] = {2, 4, 6, 6}, ws[4] = {6, 4, 7, 3}, os[4];
    TU_EXPECT_STATUS(clt_conv2d_output_shape(xs, ws, &f.p, os), CLT_ERR_INVALID_SHAPE);
    teardown(&f);
}
END_TEST

START_TEST(activation_aliasing_context)
{
    fixture f;
    setup(&f);
    FAIL(clt_conv2d(f.x, f.w, f.bias, &f.p, CLT_EXP, 0, f.out), CLT_ERR_UNSUPPORTED, "activation", NULL);
    FAIL(clt_conv2d(f.x, f.w, f.bias, &f.p, CLT_LEAKY_RELU, 0.1f, f.out), CLT_ERR_UNSUPPORTED, "activation", NULL);
    /* out sharing x's buffer: one 192-element buffer seen as x [2, 4, 6, 4] and as out */
    int64_t os[4] = {2, 6, 4, 4}, n192[1] = {192}, x2s[4] = {2, 4, 6, 4};
    clt_tensor *buf = make(f.ctx, CLT_F32, 1, n192), *as_x = NULL, *as_out = NULL;
    TU_OK(clt_tensor_reshape(buf, 4, x2s, &as_x));
    TU_OK(clt_tensor_reshape(buf, 4, os, &as_out));
    clt_conv2d_params p = f.p;
    p.pad_left = p.pad_right = 1; /* x [2, 4, 6, 4] -> out [2, 6, 4, 4] */
    TU_EXPECT_STATUS(clt_conv2d(as_x, f.w, NULL, &p, CLT_IDENTITY, 0, as_out), CLT_ERR_ALIASING);
    TU_EXPECT_MESSAGE(clt_last_error(f.ctx), "clt_conv2d: out overlaps x");
    /* out sharing w's buffer: w [6, 4, 2, 4] (192 elements) on x [2, 4, 5, 7] -> out [2, 6, 4, 4] */
    int64_t w3s[4] = {6, 4, 2, 4}, x3s[4] = {2, 4, 5, 7};
    clt_tensor *x3 = make(f.ctx, CLT_F32, 4, x3s), *as_w = NULL;
    TU_OK(clt_tensor_reshape(buf, 4, w3s, &as_w));
    TU_EXPECT_STATUS(clt_conv2d(x3, as_w, NULL, &f.p, CLT_IDENTITY, 0, as_out), CLT_ERR_ALIASING);
    TU_EXPECT_MESSAGE(clt_last_error(f.ctx), "clt_conv2d: out overlaps w");
    /* out sharing bias's buffer: out [1, 6, 1, 1] viewed from bias [6] */
    int64_t x4s[4] = {1, 4, 3, 3}, o4s[4] = {1, 6, 1, 1};
    clt_tensor *x4 = make(f.ctx, CLT_F32, 4, x4s), *bias_as_out = NULL;
    TU_OK(clt_tensor_reshape(f.bias, 4, o4s, &bias_as_out));
    TU_EXPECT_STATUS(clt_conv2d(x4, f.w, f.bias, &f.p, CLT_IDENTITY, 0, bias_as_out), CLT_ERR_ALIASING);
    TU_EXPECT_MESSAGE(clt_last_error(f.ctx), "clt_conv2d: out overlaps bias");
    TU_OK(clt_finish(f.ctx));
    clt_tensor *all[7] = {buf, as_x, as_out, x3, as_w, x4, bias_as_out};
    for (int k = 0; k < 7; k++)
        clt_tensor_free(all[k]);
    /* another context's tensor */
    clt_context *other = tu_context_with(NULL);
    int64_t bs[1] = {6};
    clt_tensor *foreign = make(other, CLT_F32, 1, bs);
    FAIL(clt_conv2d(f.x, f.w, foreign, &f.p, CLT_IDENTITY, 0, f.out), CLT_ERR_CONTEXT_MISMATCH, "bias", "another context");
    clt_tensor_free(foreign);
    clt_context_free(other);
    teardown(&f);
}
END_TEST

Suite *conv2d_errors_suite(void)
{
    Suite *s = suite_create("conv2d_errors");
    TCase *tc = tcase_create("errors");
    tcase_add_test(tc, null_arguments);
    tcase_add_test(tc, dtypes_and_shapes);
    tcase_add_test(tc, bad_params);
    tcase_add_test(tc, activation_aliasing_context);
    suite_add_tcase(s, tc);
    return s;
}
