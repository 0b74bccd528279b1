/* What clt_context_describe_dispatch reports: the setting in force and the table of the profile. */
#include <check.h>
#include <string.h>

#include "util/test_util.h"

START_TEST(describe_follows_setting_and_profile)
{
    clt_context_options o;
    clt_context_options_init(&o);
    o.gemm_impl = "clblast";
    o.profile = "gfx902";
    clt_context *ctx = tu_context_with(&o);
    char text[2048];
    TU_OK(clt_context_describe_dispatch(ctx, text, sizeof text));
    TU_EXPECT_MESSAGE(text, "gemm implementation: clblast");
    TU_EXPECT_MESSAGE(text, "gemm kernel table: amd"); /* gfx902 selects the AMD table anywhere */
    /* Truncation still terminates the string. */
    char tiny[8];
    memset(tiny, 'x', sizeof tiny);
    TU_OK(clt_context_describe_dispatch(ctx, tiny, sizeof tiny));
    ck_assert_uint_lt(strlen(tiny), sizeof tiny);
    TU_EXPECT_STATUS(clt_context_describe_dispatch(ctx, NULL, 10), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_STATUS(clt_context_describe_dispatch(ctx, text, 0), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_context_describe_dispatch");
    TU_EXPECT_STATUS(clt_context_describe_dispatch(NULL, text, sizeof text), CLT_ERR_INVALID_ARGUMENT);
    tu_context_free(ctx);
}
END_TEST

START_TEST(bad_gemm_setting_is_rejected)
{
    clt_context_options o;
    clt_context_options_init(&o);
    o.gemm_impl = "cublas";
    clt_context *ctx = NULL;
    TU_EXPECT_STATUS(clt_context_create(&o, &ctx), CLT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(ctx);
    TU_EXPECT_MESSAGE(clt_last_error(NULL), "cublas");
}
END_TEST

Suite *tune_suite(void)
{
    Suite *s = suite_create("tune");
    TCase *tc = tcase_create("tune");
    tcase_add_test(tc, describe_follows_setting_and_profile);
    tcase_add_test(tc, bad_gemm_setting_is_rejected);
    suite_add_tcase(s, tc);
    return s;
}
