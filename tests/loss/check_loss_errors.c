/* Bad input to the losses: the documented status, a message naming the call, nothing enqueued or
 * changed (the loss output keeps its known contents). */
#include <check.h>
#include <math.h>

#include "util/test_util.h"

START_TEST(losses_reject_bad_input)
{
    clt_context *ctx = tu_context();
    int64_t s[2] = {4, 3}, rows = 4, one = 1, five = 5, zero_k[2] = {4, 0};
    clt_tensor *z, *ti, *tf, *tu8, *l, *lr, *g, *bad_rows, *empty_k, *pw;
    TU_OK(clt_tensor_create(ctx, CLT_F32, 2, s, &z));
    TU_OK(clt_tensor_create(ctx, CLT_I32, 1, &rows, &ti));
    TU_OK(clt_tensor_create(ctx, CLT_F32, 2, s, &tf));
    TU_OK(clt_tensor_create(ctx, CLT_U8, 1, &rows, &tu8));
    TU_OK(clt_tensor_create(ctx, CLT_F32, 1, &one, &l));
    TU_OK(clt_tensor_create(ctx, CLT_F32, 1, &rows, &lr));
    TU_OK(clt_tensor_create(ctx, CLT_F32, 2, s, &g));
    TU_OK(clt_tensor_create(ctx, CLT_I32, 1, &five, &bad_rows));
    TU_OK(clt_tensor_create(ctx, CLT_F32, 2, zero_k, &empty_k));
    TU_OK(clt_tensor_create(ctx, CLT_F32, 1, &five, &pw));
    TU_OK(clt_tensor_fill(z, 0.5));
    TU_OK(clt_tensor_fill(tf, 0.25));
    TU_OK(clt_tensor_fill(ti, 1));
    TU_OK(clt_tensor_fill(l, 42.0));
    clt_cross_entropy_params p;
    clt_cross_entropy_params_init(&p);
#define UNCHANGED(who)                                                                             \
    do {                                                                                           \
        float v_;                                                                                  \
        TU_EXPECT_MESSAGE(clt_last_error(ctx), who);                                               \
        TU_OK(clt_tensor_read(l, &v_, sizeof v_));                                                 \
        ck_assert_msg(v_ == 42.0f, "%s changed the loss: %g", who, v_);                            \
    } while (0)
    TU_EXPECT_STATUS(clt_cross_entropy(z, tu8, &p, l, g), CLT_ERR_INVALID_DTYPE);
    UNCHANGED("clt_cross_entropy");
    TU_EXPECT_STATUS(clt_cross_entropy(z, bad_rows, &p, l, g), CLT_ERR_INVALID_SHAPE);
    UNCHANGED("clt_cross_entropy");
    TU_EXPECT_STATUS(clt_cross_entropy(z, ti, &p, lr, g), CLT_ERR_INVALID_SHAPE); /* mean: 1 element */
    UNCHANGED("clt_cross_entropy");
    TU_EXPECT_STATUS(clt_cross_entropy(z, ti, &p, l, lr), CLT_ERR_INVALID_SHAPE);
    UNCHANGED("clt_cross_entropy");
    TU_EXPECT_STATUS(clt_cross_entropy(empty_k, ti, &p, l, NULL), CLT_ERR_INVALID_SHAPE);
    UNCHANGED("clt_cross_entropy");
    TU_EXPECT_STATUS(clt_cross_entropy(z, ti, NULL, l, g), CLT_ERR_INVALID_ARGUMENT);
    UNCHANGED("clt_cross_entropy");
    TU_EXPECT_STATUS(clt_cross_entropy(NULL, ti, &p, l, g), CLT_ERR_INVALID_ARGUMENT);
    UNCHANGED("clt_cross_entropy");
    TU_EXPECT_STATUS(clt_cross_entropy(z, ti, &p, l, z), CLT_ERR_ALIASING);
    UNCHANGED("clt_cross_entropy");
    p.label_smoothing = 1.5f;
    TU_EXPECT_STATUS(clt_cross_entropy(z, ti, &p, l, g), CLT_ERR_INVALID_ARGUMENT);
    UNCHANGED("clt_cross_entropy");
    p.label_smoothing = 0.0f;
    p.reduction = (clt_reduction)7;
    TU_EXPECT_STATUS(clt_cross_entropy(z, ti, &p, l, g), CLT_ERR_INVALID_ARGUMENT);
    UNCHANGED("clt_cross_entropy");
    TU_EXPECT_STATUS(clt_bce_with_logits(z, tf, pw, CLT_REDUCTION_MEAN, l, g), CLT_ERR_INVALID_SHAPE);
    UNCHANGED("clt_bce_with_logits");
    TU_EXPECT_STATUS(clt_bce_with_logits(z, ti, NULL, CLT_REDUCTION_MEAN, l, g), CLT_ERR_INVALID_DTYPE);
    UNCHANGED("clt_bce_with_logits");
    TU_EXPECT_STATUS(clt_l1_loss(z, tf, CLT_REDUCTION_NONE, l, g), CLT_ERR_INVALID_SHAPE);
    UNCHANGED("clt_l1_loss");
    TU_EXPECT_STATUS(clt_l1_loss(z, tf, CLT_REDUCTION_SUM, l, tf), CLT_ERR_ALIASING);
    UNCHANGED("clt_l1_loss");
    TU_EXPECT_STATUS(clt_smooth_l1_loss(z, tf, -1.0f, CLT_REDUCTION_SUM, l, g), CLT_ERR_INVALID_ARGUMENT);
    UNCHANGED("clt_smooth_l1_loss");
    TU_EXPECT_STATUS(clt_smooth_l1_loss(z, lr, 1.0f, CLT_REDUCTION_SUM, l, g), CLT_ERR_INVALID_SHAPE);
    UNCHANGED("clt_smooth_l1_loss");
    tu_context_free(ctx);
}
END_TEST

Suite *loss_errors_suite(void)
{
    Suite *s = suite_create("loss_errors");
    TCase *tc = tcase_create("loss_errors");
    tcase_add_test(tc, losses_reject_bad_input);
    suite_add_tcase(s, tc);
    return s;
}
