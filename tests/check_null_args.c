/* Every public function that takes a pointer rejects NULL with CLT_ERR_INVALID_ARGUMENT (and a
 * message naming the call), never crashes, and leaves the other arguments untouched. */
#include <check.h>
#include <string.h>

#include "util/test_util.h"



START_TEST(null_arguments_are_rejected)
{
    clt_context *ctx = tu_context();
    clt_device_info info;
    clt_context_limits lim;
    clt_pool_stats ps;
    clt_program_cache_stats pcs;
    float buf[4] = {0};
    int64_t shape[1] = {4};
    clt_tensor *t = NULL;
    TU_OK(clt_tensor_create(ctx, CLT_F32, 1, shape, &t));

    TU_EXPECT_STATUS(clt_context_create(NULL, NULL), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_MESSAGE(clt_last_error(NULL), "clt_context_create");
    TU_EXPECT_STATUS(clt_finish(NULL), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_STATUS(clt_flush(NULL), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_STATUS(clt_context_device_info(NULL, &info), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_STATUS(clt_context_device_info(ctx, NULL), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_context_device_info");
    TU_EXPECT_STATUS(clt_context_get_limits(NULL, &lim), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_STATUS(clt_context_get_limits(ctx, NULL), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_context_get_limits");
    TU_EXPECT_STATUS(clt_pool_get_stats(NULL, &ps), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_STATUS(clt_pool_get_stats(ctx, NULL), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_STATUS(clt_pool_trim(NULL), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_STATUS(clt_program_cache_get_stats(NULL, &pcs), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_STATUS(clt_program_cache_get_stats(ctx, NULL), CLT_ERR_INVALID_ARGUMENT);

    clt_tensor *out = (clt_tensor *)buf;
    TU_EXPECT_STATUS(clt_tensor_create(NULL, CLT_F32, 1, shape, &out), CLT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(out);
    TU_EXPECT_MESSAGE(clt_last_error(NULL), "clt_tensor_create");
    TU_EXPECT_STATUS(clt_tensor_create(ctx, CLT_F32, 1, shape, NULL), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_tensor_create");
    out = (clt_tensor *)buf;
    TU_EXPECT_STATUS(clt_tensor_create(ctx, CLT_F32, 1, NULL, &out), CLT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(out);
    out = (clt_tensor *)buf;
    TU_EXPECT_STATUS(clt_tensor_create_from_host(NULL, CLT_F32, 1, shape, buf, sizeof buf, &out),
                  CLT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(out);
    out = (clt_tensor *)buf;
    TU_EXPECT_STATUS(clt_tensor_create_from_host(ctx, CLT_F32, 1, shape, NULL, sizeof buf, &out),
                  CLT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(out);
    TU_EXPECT_STATUS(clt_tensor_create_from_host(ctx, CLT_F32, 1, shape, buf, sizeof buf, NULL),
                  CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_STATUS(clt_tensor_write(NULL, buf, sizeof buf), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_MESSAGE(clt_last_error(NULL), "clt_tensor_write");
    TU_EXPECT_STATUS(clt_tensor_write(t, NULL, sizeof buf), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_tensor_write");
    TU_EXPECT_STATUS(clt_tensor_read(NULL, buf, sizeof buf), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_STATUS(clt_tensor_read(t, NULL, sizeof buf), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_tensor_read");
    clt_future *f = (clt_future *)buf;
    TU_EXPECT_STATUS(clt_tensor_read_async(NULL, 0, 1, &f), CLT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(f);
    TU_EXPECT_STATUS(clt_tensor_read_async(t, 0, 1, NULL), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_STATUS(clt_future_poll(NULL), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_STATUS(clt_future_wait(NULL), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_STATUS(clt_future_get(NULL, buf, 4), CLT_ERR_INVALID_ARGUMENT);
    TU_OK(clt_tensor_read_async(t, 0, 1, &f));
    TU_EXPECT_STATUS(clt_future_get(f, NULL, 4), CLT_ERR_INVALID_ARGUMENT);
    clt_future_free(f);
    TU_EXPECT_STATUS(clt_tensor_fill(NULL, 1.0), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_STATUS(clt_tensor_fill_uniform(NULL, 1, 0.0f, 1.0f), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_STATUS(clt_tensor_copy(NULL, t), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_STATUS(clt_tensor_copy(t, NULL), CLT_ERR_INVALID_ARGUMENT);
    out = (clt_tensor *)buf;
    TU_EXPECT_STATUS(clt_tensor_reshape(NULL, 1, shape, &out), CLT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(out);
    out = (clt_tensor *)buf;
    TU_EXPECT_STATUS(clt_tensor_reshape(t, 1, NULL, &out), CLT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(out);
    TU_EXPECT_STATUS(clt_tensor_reshape(t, 1, shape, NULL), CLT_ERR_INVALID_ARGUMENT);

    /* Accessors: documented NULL results, and no crash for the rest. */
    ck_assert_ptr_null(clt_tensor_context(NULL));
    ck_assert_int_eq(clt_tensor_ndim(NULL), -1);
    ck_assert_int_eq(clt_tensor_dim(NULL, 0), -1);
    int64_t sh[CLT_MAX_DIMS];
    ck_assert_int_eq(clt_tensor_shape(NULL, sh), -1);
    (void)clt_tensor_dtype(NULL);
    (void)clt_tensor_numel(NULL);
    ck_assert_uint_eq(clt_tensor_nbytes(NULL), 0);

    /* The tensor survived all of that untouched and usable. */
    float data[4], back[4];
    tu_random_f32(data, 4, -1.0f, 1.0f);
    TU_OK(clt_tensor_write(t, data, sizeof data));
    TU_OK(clt_tensor_read(t, back, sizeof back));
    ck_assert_mem_eq(data, back, sizeof data);
    clt_tensor_free(t);
    tu_context_free(ctx);
}
END_TEST

Suite *null_args_suite(void)
{
    Suite *s = suite_create("null_args");
    TCase *tc = tcase_create("null_args");
    tcase_add_test(tc, null_arguments_are_rejected);
    suite_add_tcase(s, tc);
    return s;
}
