/* The profiler's error paths (cltensor_profile.h): the profiler off (CLT_ERR_UNSUPPORTED saying how to
 * turn it on), NULL and bad arguments, the CLT_PROFILE switch, and the row cap ("(other)"). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"
#include "runtime/runtime.h"
#include "util/test_util.h"

/* More (op, impl) pairs than CLT_PROFILE_MAX_ROWS: the last row, "(other)", takes the rest. Markers
 * stand in for commands, recorded through the internal hook under made-up names. */
START_TEST(rows_overflow_into_other)
{
    enum { PAIRS = CLT_PROFILE_MAX_ROWS + 40 };
    clt_context *ctx = tu_profiled_context();
    for (int i = 0; i < PAIRS; i++) {
        cl_event ev = NULL;
        ck_assert_int_eq(clEnqueueMarkerWithWaitList(ctx->queue, 0, NULL, &ev), CL_SUCCESS);
        char op[32];
        snprintf(op, sizeof op, "op_%d", i);
        clt__prof_record(ctx, ev, op, "marker", CLT_PROFILE_KERNEL, 0);
        clReleaseEvent(ev);
    }
    TU_OK(clt_profile_collect(ctx));
    size_t n = 0;
    clt_profile_entry *e = malloc(CLT_PROFILE_MAX_ROWS * sizeof *e);
    TU_OK(clt_profile_get(ctx, e, CLT_PROFILE_MAX_ROWS, &n));
    ck_assert_uint_eq(n, CLT_PROFILE_MAX_ROWS);
    ck_assert_str_eq(e[0].op, "op_0");
    char last[32];
    snprintf(last, sizeof last, "op_%d", CLT_PROFILE_MAX_ROWS - 2);
    ck_assert_str_eq(e[CLT_PROFILE_MAX_ROWS - 2].op, last);
    ck_assert_str_eq(e[CLT_PROFILE_MAX_ROWS - 1].op, "(other)");
    ck_assert_uint_eq(e[CLT_PROFILE_MAX_ROWS - 1].count, PAIRS - (CLT_PROFILE_MAX_ROWS - 1));
    /* A pair seen before the table filled keeps its own row. */
    cl_event ev = NULL;
    ck_assert_int_eq(clEnqueueMarkerWithWaitList(ctx->queue, 0, NULL, &ev), CL_SUCCESS);
    clt__prof_record(ctx, ev, "op_3", "marker", CLT_PROFILE_KERNEL, 0);
    clReleaseEvent(ev);
    TU_OK(clt_profile_collect(ctx));
    TU_OK(clt_profile_get(ctx, e, CLT_PROFILE_MAX_ROWS, &n));
    ck_assert_uint_eq(e[3].count, 2);
    free(e);
    tu_context_free(ctx);
}
END_TEST

START_TEST(off_is_unsupported)
{
    clt_context_options o;
    clt_context_options_init(&o);
    o.profiler = -1;
    clt_context *ctx = tu_context_with(&o);
    clt_tensor *x = tu_uniform_1d(ctx, 5);
    TU_OK(clt_add(x, x, x));
    clt_profile_entry e;
    clt_profile_stats st;
    size_t n = 99;
    char buf[64] = "untouched";
    TU_EXPECT_STATUS(clt_profile_collect(ctx), CLT_ERR_UNSUPPORTED);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_profile_collect");
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "CLT_PROFILE=1");
    TU_EXPECT_STATUS(clt_profile_get(ctx, &e, 1, &n), CLT_ERR_UNSUPPORTED);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_profile_get");
    ck_assert_uint_eq(n, 99);
    TU_EXPECT_STATUS(clt_profile_get_stats(ctx, &st), CLT_ERR_UNSUPPORTED);
    TU_EXPECT_STATUS(clt_profile_report(ctx, buf, sizeof buf), CLT_ERR_UNSUPPORTED);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_profile_report");
    ck_assert_str_eq(buf, "untouched");
    TU_EXPECT_STATUS(clt_profile_write_trace(ctx, "/tmp/never-written.json"), CLT_ERR_UNSUPPORTED);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_profile_write_trace");
    TU_EXPECT_STATUS(clt_profile_reset(ctx), CLT_ERR_UNSUPPORTED);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_profile_reset");
    ck_assert_ptr_null(ctx->prof);
    clt_tensor_free(x);
    tu_context_free(ctx);
}
END_TEST

START_TEST(bad_arguments)
{
    TU_EXPECT_STATUS(clt_profile_collect(NULL), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_MESSAGE(clt_last_error(NULL), "clt_profile_collect");
    size_t n = 0;
    TU_EXPECT_STATUS(clt_profile_get(NULL, NULL, 0, &n), CLT_ERR_INVALID_ARGUMENT);
    clt_context *ctx = tu_profiled_context();
    TU_EXPECT_STATUS(clt_profile_get(ctx, NULL, 0, NULL), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "count");
    TU_EXPECT_STATUS(clt_profile_get(ctx, NULL, 4, &n), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "entries");
    TU_OK(clt_profile_get(ctx, NULL, 0, &n));
    TU_EXPECT_STATUS(clt_profile_get_stats(ctx, NULL), CLT_ERR_INVALID_ARGUMENT);
    char buf[8];
    TU_EXPECT_STATUS(clt_profile_report(ctx, NULL, 10), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_STATUS(clt_profile_report(ctx, buf, 0), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_profile_report");
    TU_OK(clt_profile_report(ctx, buf, sizeof buf)); /* truncated, terminated */
    ck_assert_uint_eq(strlen(buf), sizeof buf - 1);
    TU_EXPECT_STATUS(clt_profile_write_trace(ctx, NULL), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_profile_write_trace");
    TU_EXPECT_STATUS(clt_profile_reset(NULL), CLT_ERR_INVALID_ARGUMENT);
    tu_context_free(ctx);
}
END_TEST

/* CLT_PROFILE=1 turns it on when the option says 0; a bad value is refused. */
START_TEST(environment_switch)
{
    char *saved = tu_env_save("CLT_PROFILE");
    setenv("CLT_PROFILE", "1", 1);
    clt_context *ctx = tu_context();
    clt_context_limits lim;
    TU_OK(clt_context_get_limits(ctx, &lim));
    ck_assert_int_eq(lim.profiler, 1);
    TU_OK(clt_profile_reset(ctx));
    tu_context_free(ctx);
    setenv("CLT_PROFILE", "yes", 1);
    clt_context *bad = NULL;
    TU_EXPECT_STATUS(clt_context_create(NULL, &bad), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_MESSAGE(clt_last_error(NULL), "CLT_PROFILE");
    tu_env_restore("CLT_PROFILE", saved);
}
END_TEST

Suite *profile_errors_suite(void)
{
    Suite *s = suite_create("profile_errors");
    TCase *tc = tcase_create("profile_errors");
    tcase_add_test(tc, rows_overflow_into_other);
    tcase_add_test(tc, off_is_unsupported);
    tcase_add_test(tc, bad_arguments);
    tcase_add_test(tc, environment_switch);
    suite_add_tcase(s, tc);
    return s;
}
