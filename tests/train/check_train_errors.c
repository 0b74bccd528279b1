/* Every error path of include/cltensor_train.h and of clt_tensor_view: the status, a message naming
 * the call, and no tensor changed (outputs are poisoned first and must still be poisoned). */
#include <check.h>
#include <math.h>
#include <string.h>

#include "util/test_util.h"

#define EXPECT_ERR(ctx, call, want, needle)                                                        \
    do {                                                                                           \
        TU_EXPECT_STATUS(call, want);                                                              \
        TU_EXPECT_MESSAGE(clt_last_error(ctx), needle);                                            \
    } while (0)

static clt_tensor *make(clt_context *ctx, clt_dtype dt, int ndim, const int64_t *shape, float fill)
{
    clt_tensor *t;
    TU_OK(clt_tensor_create(ctx, dt, ndim, shape, &t));
    TU_OK(clt_tensor_fill(t, fill));
    return t;
}

/* Every element of t still equals `fill`. */
static void assert_all(const clt_tensor *t, float fill)
{
    int64_t n = clt_tensor_numel(t);
    float buf[64];
    ck_assert(n <= 64);
    TU_OK(clt_tensor_read(t, buf, sizeof(float) * (size_t)n));
    for (int64_t i = 0; i < n; i++)
        ck_assert_msg(buf[i] == fill, "element %lld changed: %g", (long long)i, buf[i]);
}

START_TEST(view_errors)
{
    clt_context *ctx = tu_context();
    int64_t n = 10, s3 = 3, bad = -1, big[2] = {4, 3}, huge[2] = {INT64_MAX, 4};
    clt_tensor *t = make(ctx, CLT_F32, 1, &n, 0), *v = (clt_tensor *)1;
    EXPECT_ERR(NULL, clt_tensor_view(NULL, 0, 1, &s3, &v), CLT_ERR_INVALID_ARGUMENT, "clt_tensor_view");
    ck_assert_ptr_null(v);
    EXPECT_ERR(ctx, clt_tensor_view(t, 0, 1, &s3, NULL), CLT_ERR_INVALID_ARGUMENT, "out is NULL");
    EXPECT_ERR(ctx, clt_tensor_view(t, -1, 1, &s3, &v), CLT_ERR_INVALID_ARGUMENT, "negative");
    EXPECT_ERR(ctx, clt_tensor_view(t, 0, 1, NULL, &v), CLT_ERR_INVALID_ARGUMENT, "shape is NULL");
    EXPECT_ERR(ctx, clt_tensor_view(t, 0, 9, big, &v), CLT_ERR_INVALID_SHAPE, "ndim 9");
    EXPECT_ERR(ctx, clt_tensor_view(t, 0, 1, &bad, &v), CLT_ERR_INVALID_SHAPE, "dim 0 is -1");
    EXPECT_ERR(ctx, clt_tensor_view(t, 0, 2, big, &v), CLT_ERR_INVALID_SHAPE, "outside the tensor's 10");
    EXPECT_ERR(ctx, clt_tensor_view(t, 8, 1, &s3, &v), CLT_ERR_INVALID_SHAPE, "[8, 8 + 3)");
    EXPECT_ERR(ctx, clt_tensor_view(t, 11, 0, NULL, &v), CLT_ERR_INVALID_SHAPE, "clt_tensor_view");
    EXPECT_ERR(ctx, clt_tensor_view(t, 0, 2, huge, &v), CLT_ERR_SIZE_OVERFLOW, "clt_tensor_view");
    ck_assert_ptr_null(v);
    tu_context_free(ctx);
}
END_TEST

START_TEST(adam_errors)
{
    clt_context *ctx = tu_context();
    int64_t n = 8, n2 = 9, total = 32;
    clt_tensor *p = make(ctx, CLT_F32, 1, &n, 1), *g = make(ctx, CLT_F32, 1, &n, 2),
               *m = make(ctx, CLT_F32, 1, &n, 3), *v = make(ctx, CLT_F32, 1, &n, 4);
    clt_tensor *gi = make(ctx, CLT_I32, 1, &n, 0), *g9 = make(ctx, CLT_F32, 1, &n2, 2);
    clt_adam_params hp;
    clt_adam_params_init(&hp);
    EXPECT_ERR(ctx, clt_adam_step(NULL, g, m, v, &hp, 1), CLT_ERR_INVALID_ARGUMENT, "param is NULL");
    EXPECT_ERR(ctx, clt_adam_step(p, g, m, NULL, &hp, 1), CLT_ERR_INVALID_ARGUMENT, "v is NULL");
    EXPECT_ERR(ctx, clt_adam_step(p, g, m, v, NULL, 1), CLT_ERR_INVALID_ARGUMENT, "p is NULL");
    EXPECT_ERR(ctx, clt_adam_step(p, gi, m, v, &hp, 1), CLT_ERR_INVALID_DTYPE, "grad is i32");
    EXPECT_ERR(ctx, clt_adam_step(p, g9, m, v, &hp, 1), CLT_ERR_INVALID_SHAPE, "clt_adam_step");
    EXPECT_ERR(ctx, clt_adam_step(p, g, m, v, &hp, 0), CLT_ERR_INVALID_ARGUMENT, "step 0");
    clt_adam_params bad[5] = {hp, hp, hp, hp, hp};
    bad[0].lr = NAN, bad[1].beta1 = 1.0f, bad[2].beta2 = -0.1f, bad[3].eps = -1e-8f;
    bad[4].weight_decay = INFINITY;
    for (int i = 0; i < 5; i++)
        EXPECT_ERR(ctx, clt_adam_step(p, g, m, v, &bad[i], 1), CLT_ERR_INVALID_ARGUMENT, "betas");
    /* overlapping views of one buffer: m and v share element 7 */
    clt_tensor *flat = make(ctx, CLT_F32, 1, &total, 5), *fm, *fv;
    TU_OK(clt_tensor_view(flat, 0, 1, &n, &fm));
    TU_OK(clt_tensor_view(flat, 7, 1, &n, &fv));
    EXPECT_ERR(ctx, clt_adam_step(p, g, fm, fv, &hp, 1), CLT_ERR_ALIASING, "m overlaps v");
    EXPECT_ERR(ctx, clt_adam_step(p, p, m, v, &hp, 1), CLT_ERR_ALIASING, "param overlaps grad");
    /* another context */
    clt_context *other = tu_context();
    clt_tensor *vo = make(other, CLT_F32, 1, &n, 4);
    EXPECT_ERR(ctx, clt_adam_step(p, g, m, vo, &hp, 1), CLT_ERR_CONTEXT_MISMATCH, "clt_adam_step");
    assert_all(p, 1), assert_all(g, 2), assert_all(m, 3), assert_all(v, 4), assert_all(flat, 5);
    tu_context_free(other);
    tu_context_free(ctx);
}
END_TEST

START_TEST(mse_errors)
{
    clt_context *ctx = tu_context();
    int64_t s[2] = {5, 2}, s2[2] = {2, 5}, one = 1, two = 2, total = 11;
    clt_tensor *p = make(ctx, CLT_F32, 2, s, 1), *t = make(ctx, CLT_F32, 2, s, 2),
               *t2 = make(ctx, CLT_F32, 2, s2, 2), *out = make(ctx, CLT_F32, 1, &one, 7),
               *out2 = make(ctx, CLT_F32, 1, &two, 7), *oi = make(ctx, CLT_I32, 1, &one, 0),
               *d = make(ctx, CLT_F32, 2, s, 7);
    EXPECT_ERR(ctx, clt_mse_loss(p, NULL, out), CLT_ERR_INVALID_ARGUMENT, "clt_mse_loss: target is NULL");
    EXPECT_ERR(ctx, clt_mse_loss(p, t, oi), CLT_ERR_INVALID_DTYPE, "out is i32");
    EXPECT_ERR(ctx, clt_mse_loss(p, t2, out), CLT_ERR_INVALID_SHAPE, "clt_mse_loss");
    EXPECT_ERR(ctx, clt_mse_loss(p, t, out2), CLT_ERR_INVALID_SHAPE, "out has 2 elements");
    clt_tensor *flat = make(ctx, CLT_F32, 1, &total, 3), *fp, *fo;
    TU_OK(clt_tensor_view(flat, 0, 2, s, &fp));
    TU_OK(clt_tensor_view(flat, 9, 1, &one, &fo));
    EXPECT_ERR(ctx, clt_mse_loss(fp, t, fo), CLT_ERR_ALIASING, "out overlaps pred");
    EXPECT_ERR(ctx, clt_mse_loss_backward(p, NULL, d), CLT_ERR_INVALID_ARGUMENT,
               "clt_mse_loss_backward: target is NULL");
    EXPECT_ERR(ctx, clt_mse_loss_backward(p, t2, d), CLT_ERR_INVALID_SHAPE, "clt_mse_loss_backward");
    EXPECT_ERR(ctx, clt_mse_loss_backward(p, t, t2), CLT_ERR_INVALID_SHAPE, "dpred");
    clt_tensor *fd;
    TU_OK(clt_tensor_view(flat, 1, 2, s, &fd));
    EXPECT_ERR(ctx, clt_mse_loss_backward(fp, t, fd), CLT_ERR_ALIASING, "clt_mse_loss_backward");
    EXPECT_ERR(ctx, clt_mse_loss_with_grad(p, t, out, NULL), CLT_ERR_INVALID_ARGUMENT,
               "clt_mse_loss_with_grad: dpred is NULL");
    EXPECT_ERR(ctx, clt_mse_loss_with_grad(p, t, out, t2), CLT_ERR_INVALID_SHAPE, "dpred");
    EXPECT_ERR(ctx, clt_mse_loss_with_grad(p, t, out2, d), CLT_ERR_INVALID_SHAPE, "out has 2 elements");
    EXPECT_ERR(ctx, clt_mse_loss_with_grad(fp, t, out, fd), CLT_ERR_ALIASING, "dpred overlaps pred");
    EXPECT_ERR(ctx, clt_mse_loss_with_grad(p, t, fo, fp), CLT_ERR_ALIASING, "dpred overlaps out");
    EXPECT_ERR(ctx, clt_mse_loss_with_grad(fp, t, fo, d), CLT_ERR_ALIASING, "out overlaps pred");
    clt_context *other = tu_context();
    clt_tensor *po = make(other, CLT_F32, 2, s, 1);
    EXPECT_ERR(ctx, clt_mse_loss(po, t, out), CLT_ERR_CONTEXT_MISMATCH, "clt_mse_loss");
    assert_all(out, 7), assert_all(out2, 7), assert_all(d, 7), assert_all(flat, 3);
    tu_context_free(other);
    tu_context_free(ctx);
}
END_TEST

START_TEST(fourier_errors)
{
    clt_context *ctx = tu_context();
    int64_t xs[2] = {3, 2}, bs[2] = {2, 4}, os[2] = {3, 8}, bad_os[2] = {3, 4}, b3[3] = {2, 4, 1};
    clt_tensor *x = make(ctx, CLT_F32, 2, xs, 1), *B = make(ctx, CLT_F32, 2, bs, 2),
               *out = make(ctx, CLT_F32, 2, os, 7), *ob = make(ctx, CLT_F32, 2, bad_os, 7),
               *B3 = make(ctx, CLT_F32, 3, b3, 2), *xi = make(ctx, CLT_I32, 2, xs, 0);
    EXPECT_ERR(ctx, clt_fourier_features(NULL, B, 1, out), CLT_ERR_INVALID_ARGUMENT,
               "clt_fourier_features: x is NULL");
    EXPECT_ERR(ctx, clt_fourier_features(xi, B, 1, out), CLT_ERR_INVALID_DTYPE, "x is i32");
    EXPECT_ERR(ctx, clt_fourier_features(x, B, NAN, out), CLT_ERR_INVALID_ARGUMENT, "not finite");
    EXPECT_ERR(ctx, clt_fourier_features(x, B3, 1, out), CLT_ERR_INVALID_SHAPE, "2-D");
    EXPECT_ERR(ctx, clt_fourier_features(x, B, 1, ob), CLT_ERR_INVALID_SHAPE, "need out [3, 8]");
    EXPECT_ERR(ctx, clt_fourier_features(x, x, 1, out), CLT_ERR_INVALID_SHAPE, "clt_fourier_features");
    int64_t total = 40;
    clt_tensor *flat = make(ctx, CLT_F32, 1, &total, 3), *fx, *fo;
    TU_OK(clt_tensor_view(flat, 0, 2, xs, &fx));
    TU_OK(clt_tensor_view(flat, 5, 2, os, &fo));
    EXPECT_ERR(ctx, clt_fourier_features(fx, B, 1, fo), CLT_ERR_ALIASING, "out overlaps x");
    assert_all(out, 7), assert_all(ob, 7);
    float buf[40];
    TU_OK(clt_tensor_read(flat, buf, sizeof buf));
    for (int i = 0; i < 40; i++)
        ck_assert(buf[i] == 3.0f);
    tu_context_free(ctx);
}
END_TEST

Suite *train_errors_suite(void)
{
    Suite *s = suite_create("train_errors");
    TCase *tc = tcase_create("train_errors");
    tcase_add_test(tc, view_errors);
    tcase_add_test(tc, adam_errors);
    tcase_add_test(tc, mse_errors);
    tcase_add_test(tc, fourier_errors);
    suite_add_tcase(s, tc);
    return s;
}
