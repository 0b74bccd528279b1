/* Bad input to the normalisation ops: each returns the documented status, its message names the
 * call, and nothing is enqueued or changed (the output keeps its known contents). */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "util/test_util.h"

#define N_ELEMS 24

typedef struct fixture {
    clt_context *ctx;
    clt_tensor *x, *y, *g, *b, *r, *xi, *c3;
} fixture;

static void setup(fixture *f)
{
    f->ctx = tu_context();
    int64_t s[3] = {2, 4, 3}, p[1] = {3}, c[1] = {4}, rows[1] = {8};
    float data[N_ELEMS];
    for (int i = 0; i < N_ELEMS; i++)
        data[i] = (float)i;
    TU_OK(clt_tensor_create_from_host(f->ctx, CLT_F32, 3, s, data, sizeof data, &f->x));
    TU_OK(clt_tensor_create_from_host(f->ctx, CLT_F32, 3, s, data, sizeof data, &f->y));
    TU_OK(clt_tensor_create(f->ctx, CLT_F32, 1, p, &f->g));
    TU_OK(clt_tensor_create(f->ctx, CLT_F32, 1, p, &f->b));
    TU_OK(clt_tensor_create(f->ctx, CLT_F32, 1, rows, &f->r));
    TU_OK(clt_tensor_create(f->ctx, CLT_I32, 3, s, &f->xi));
    TU_OK(clt_tensor_create(f->ctx, CLT_F32, 1, c, &f->c3));
    TU_OK(clt_tensor_fill(f->g, 1.0));
    TU_OK(clt_tensor_fill(f->b, 0.0));
}

/* y still holds 0, 1, 2, ... (nothing ran) and the message names `who`. */
static void untouched(fixture *f, const char *who)
{
    float got[N_ELEMS];
    TU_EXPECT_MESSAGE(clt_last_error(f->ctx), who);
    TU_OK(clt_tensor_read(f->y, got, sizeof got));
    for (int i = 0; i < N_ELEMS; i++)
        ck_assert_msg(got[i] == (float)i, "%s changed y[%d] = %g", who, i, got[i]);
}

START_TEST(layer_and_rms_norm_reject_bad_input)
{
    fixture f;
    setup(&f);
    TU_EXPECT_STATUS(clt_layer_norm(f.xi, NULL, NULL, 1e-5f, f.y, NULL, NULL), CLT_ERR_INVALID_DTYPE);
    untouched(&f, "clt_layer_norm");
    TU_EXPECT_STATUS(clt_layer_norm(f.x, f.c3, NULL, 1e-5f, f.y, NULL, NULL), CLT_ERR_INVALID_SHAPE);
    untouched(&f, "clt_layer_norm");
    TU_EXPECT_STATUS(clt_layer_norm(f.x, f.g, f.b, 1e-5f, f.y, f.c3, NULL), CLT_ERR_INVALID_SHAPE);
    untouched(&f, "clt_layer_norm");
    TU_EXPECT_STATUS(clt_layer_norm(f.x, f.g, f.b, 0.0f, f.y, NULL, NULL), CLT_ERR_INVALID_ARGUMENT);
    untouched(&f, "clt_layer_norm");
    TU_EXPECT_STATUS(clt_layer_norm(f.x, f.g, f.b, NAN, f.y, NULL, NULL), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_STATUS(clt_layer_norm(NULL, f.g, f.b, 1e-5f, f.y, NULL, NULL), CLT_ERR_INVALID_ARGUMENT);
    untouched(&f, "clt_layer_norm");
    TU_EXPECT_STATUS(clt_layer_norm(f.x, f.g, f.b, 1e-5f, NULL, NULL, NULL), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_STATUS(clt_layer_norm(f.y, f.g, f.b, 1e-5f, f.y, NULL, NULL), CLT_ERR_ALIASING);
    untouched(&f, "clt_layer_norm");
    TU_EXPECT_STATUS(clt_rms_norm(f.x, f.c3, 1e-5f, f.y, NULL), CLT_ERR_INVALID_SHAPE);
    untouched(&f, "clt_rms_norm");
    TU_EXPECT_STATUS(clt_rms_norm_backward(f.x, f.x, f.g, NULL, f.y, NULL), CLT_ERR_INVALID_ARGUMENT);
    untouched(&f, "clt_rms_norm_backward");
    TU_EXPECT_STATUS(clt_layer_norm_backward(f.x, f.x, f.g, f.r, f.r, f.y, f.r, NULL), CLT_ERR_INVALID_SHAPE);
    untouched(&f, "clt_layer_norm_backward");
    TU_EXPECT_STATUS(clt_layer_norm_backward(f.x, f.xi, f.g, f.r, f.r, f.y, NULL, NULL), CLT_ERR_INVALID_DTYPE);
    untouched(&f, "clt_layer_norm_backward");
    /* dx may be dy's memory, but not x's */
    TU_EXPECT_STATUS(clt_layer_norm_backward(f.x, f.y, f.g, f.r, f.r, f.y, NULL, NULL), CLT_ERR_ALIASING);
    untouched(&f, "clt_layer_norm_backward");
    tu_context_free(f.ctx);
}
END_TEST

START_TEST(group_and_batch_norm_reject_bad_input)
{
    fixture f;
    setup(&f);
    /* x [2, 4, 3]: C = 4 */
    TU_EXPECT_STATUS(clt_group_norm(f.x, 3, NULL, NULL, 1e-5f, f.y, NULL, NULL), CLT_ERR_INVALID_ARGUMENT);
    untouched(&f, "clt_group_norm");
    TU_EXPECT_STATUS(clt_group_norm(f.x, 0, NULL, NULL, 1e-5f, f.y, NULL, NULL), CLT_ERR_INVALID_ARGUMENT);
    untouched(&f, "clt_group_norm");
    TU_EXPECT_STATUS(clt_group_norm(f.x, 2, f.g, NULL, 1e-5f, f.y, NULL, NULL), CLT_ERR_INVALID_SHAPE);
    untouched(&f, "clt_group_norm");
    TU_EXPECT_STATUS(clt_group_norm_backward(f.x, f.x, 5, NULL, f.r, f.r, f.y, NULL, NULL),
                     CLT_ERR_INVALID_ARGUMENT);
    untouched(&f, "clt_group_norm_backward");
    clt_batch_norm_params p;
    clt_batch_norm_params_init(&p);
    TU_EXPECT_STATUS(clt_batch_norm(f.x, f.g, NULL, NULL, NULL, &p, f.y, NULL, NULL), CLT_ERR_INVALID_SHAPE);
    untouched(&f, "clt_batch_norm");
    TU_EXPECT_STATUS(clt_batch_norm(f.x, NULL, NULL, NULL, NULL, NULL, f.y, NULL, NULL),
                     CLT_ERR_INVALID_ARGUMENT);
    untouched(&f, "clt_batch_norm");
    p.training = 0; /* inference needs the running stats */
    TU_EXPECT_STATUS(clt_batch_norm(f.x, NULL, NULL, NULL, NULL, &p, f.y, NULL, NULL),
                     CLT_ERR_INVALID_ARGUMENT);
    untouched(&f, "clt_batch_norm");
    p.training = 1;
    p.momentum = 1.5f;
    TU_EXPECT_STATUS(clt_batch_norm(f.x, NULL, NULL, f.c3, f.c3, &p, f.y, NULL, NULL),
                     CLT_ERR_INVALID_ARGUMENT);
    untouched(&f, "clt_batch_norm");
    p.momentum = 0.1f;
    TU_EXPECT_STATUS(clt_batch_norm(f.xi, NULL, NULL, NULL, NULL, &p, f.y, NULL, NULL),
                     CLT_ERR_INVALID_DTYPE);
    untouched(&f, "clt_batch_norm");
    /* one value per channel in training */
    clt_tensor *one, *one_y;
    int64_t s[2] = {1, 4};
    TU_OK(clt_tensor_create(f.ctx, CLT_F32, 2, s, &one));
    TU_OK(clt_tensor_create(f.ctx, CLT_F32, 2, s, &one_y));
    TU_EXPECT_STATUS(clt_batch_norm(one, NULL, NULL, NULL, NULL, &p, one_y, NULL, NULL), CLT_ERR_INVALID_SHAPE);
    TU_EXPECT_MESSAGE(clt_last_error(f.ctx), "clt_batch_norm");
    TU_EXPECT_STATUS(clt_batch_norm_backward(f.x, f.x, NULL, f.c3, f.c3, 1, f.y, f.g, NULL),
                     CLT_ERR_INVALID_SHAPE);
    untouched(&f, "clt_batch_norm_backward");
    TU_EXPECT_STATUS(clt_batch_norm_backward(f.x, f.y, NULL, f.c3, f.c3, 1, f.y, NULL, NULL), CLT_ERR_ALIASING);
    untouched(&f, "clt_batch_norm_backward");
    tu_context_free(f.ctx);
}
END_TEST

Suite *norm_errors_suite(void)
{
    Suite *s = suite_create("norm_errors");
    TCase *tc = tcase_create("norm_errors");
    tcase_add_test(tc, layer_and_rms_norm_reject_bad_input);
    tcase_add_test(tc, group_and_batch_norm_reject_bad_input);
    suite_add_tcase(s, tc);
    return s;
}
