/* Edge cases of issue 15 outside the program cache: impossible geometries (overflow) and Ci = 0,
 * empty tensors at the memory cap and ops on them, messages that name the public call, a foreign
 * OpenCL event, and multi-stage convolutions that must not run a stage before a later stage's
 * kernel is known to build. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cltensor_cl.h"
#include "program/program.h"
#include "tune/tuning_file.h"
#include "util/test_util.h"

START_TEST(geometry_overflow_and_zero_channels_rejected)
{
    clt_conv2d_params p;
    clt_conv2d_params_init(&p);
    p.dilation_h = 4;
    int64_t out[4] = {-1, -1, -1, -1};
    const int64_t x[4] = {1, 2, 5, 5}, w[4] = {3, 2, ((int64_t)1 << 62) + 1, 3};
    TU_EXPECT_STATUS(clt_conv2d_output_shape(x, w, &p, out), CLT_ERR_SIZE_OVERFLOW);
    TU_EXPECT_MESSAGE(clt_last_error(NULL), "clt_conv2d_output_shape");
    ck_assert_int_eq(out[0], -1);
    /* In range, but the dilated window is far larger than the padded input. */
    p.dilation_h = INT32_MAX;
    const int64_t w2[4] = {3, 2, INT32_MAX, 3};
    TU_EXPECT_STATUS(clt_conv2d_output_shape(x, w2, &p, out), CLT_ERR_INVALID_SHAPE);
    /* Ci = 0 is refused (no division by it later). */
    clt_conv2d_params_init(&p);
    const int64_t x0[4] = {2, 0, 5, 5}, w0[4] = {3, 0, 3, 3};
    TU_EXPECT_STATUS(clt_conv2d_output_shape(x0, w0, &p, out), CLT_ERR_INVALID_SHAPE);
    TU_EXPECT_MESSAGE(clt_last_error(NULL), "Ci");

    clt_pool2d_params q;
    clt_pool2d_params_init(&q, 2);
    const int64_t big[4] = {1, 1, (int64_t)1 << 32, (int64_t)1 << 32};
    TU_EXPECT_STATUS(clt_pool2d_output_shape(big, &q, out), CLT_ERR_SIZE_OVERFLOW);
    TU_EXPECT_MESSAGE(clt_last_error(NULL), "clt_pool2d_output_shape");
    const int64_t plane[4] = {1, 1, 65536, 65536}; /* each dim fine, the plane is not */
    TU_EXPECT_STATUS(clt_pool2d_output_shape(plane, &q, out), CLT_ERR_SIZE_OVERFLOW);
}
END_TEST

/* clt_conv2d itself with Ci = 0: refused before anything runs, out untouched. */
START_TEST(conv_with_zero_channels_refused)
{
    clt_context *ctx = tu_context();
    const int64_t xs[4] = {2, 0, 5, 5}, ws[4] = {3, 0, 3, 3}, os[4] = {2, 3, 3, 3};
    clt_tensor *x, *w, *out;
    TU_OK(clt_tensor_create(ctx, CLT_F32, 4, xs, &x));
    TU_OK(clt_tensor_create(ctx, CLT_F32, 4, ws, &w));
    TU_OK(clt_tensor_create(ctx, CLT_F32, 4, os, &out));
    TU_OK(clt_tensor_fill(out, 7.0));
    clt_conv2d_params p;
    clt_conv2d_params_init(&p);
    TU_EXPECT_STATUS(clt_conv2d(x, w, NULL, &p, CLT_IDENTITY, 0.0f, out), CLT_ERR_INVALID_SHAPE);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_conv2d");
    float h[54];
    TU_OK(clt_tensor_read(out, h, sizeof h));
    for (int i = 0; i < 54; i++)
        ck_assert_float_eq(h[i], 7.0f);
    clt_tensor_free(x), clt_tensor_free(w), clt_tensor_free(out);
    tu_context_free(ctx);
}
END_TEST

START_TEST(empty_tensors_take_no_pool_block)
{
    clt_context_options o;
    clt_context_options_init(&o);
    o.memory_limit = 4096;
    clt_context *ctx = tu_context_with(&o);
    const int64_t full = 1024, none = 0, grid[2] = {0, 3};
    clt_tensor *big, *e1, *e2, *e3, *g;
    TU_OK(clt_tensor_create(ctx, CLT_F32, 1, &full, &big)); /* the whole cap */
    clt_pool_stats before, after;
    TU_OK(clt_pool_get_stats(ctx, &before));
    TU_OK(clt_tensor_create(ctx, CLT_F32, 1, &none, &e1));
    TU_OK(clt_tensor_create(ctx, CLT_F32, 1, &none, &e2));
    TU_OK(clt_tensor_create(ctx, CLT_F32, 1, &none, &e3));
    TU_OK(clt_tensor_create(ctx, CLT_F32, 2, grid, &g));
    TU_OK(clt_pool_get_stats(ctx, &after));
    ck_assert_uint_eq(after.bytes_in_use, before.bytes_in_use);
    ck_assert_uint_eq(after.bytes_cached, before.bytes_cached);
    /* Every op on them still behaves: nothing to do, success. */
    TU_OK(clt_tensor_fill(e1, 1.0));
    TU_OK(clt_add(e1, e2, e3));
    TU_OK(clt_unary(CLT_RELU, e1, 0.0f, e3));
    TU_OK(clt_tensor_read(e1, NULL, 0));
    TU_OK(clt_tensor_write(e1, NULL, 0));
    clt_tensor *from;
    TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, 1, &none, NULL, 0, &from));
    const int64_t three = 3;
    clt_tensor *sums;
    /* A full cap leaves no room for sums: free the big tensor first. */
    clt_tensor_free(big);
    TU_OK(clt_tensor_create(ctx, CLT_F32, 1, &three, &sums));
    static const int axis0[1] = {0};
    TU_OK(clt_reduce(CLT_REDUCE_SUM, g, 1, axis0, 0, sums));
    float h[3];
    TU_OK(clt_tensor_read(sums, h, sizeof h));
    for (int i = 0; i < 3; i++)
        ck_assert_float_eq(h[i], 0.0f); /* a sum over nothing */
    /* GEMM with m = 0 over empty operands. */
    TU_OK(clt_gemm(CLT_NO_TRANS, CLT_NO_TRANS, 0, 3, 0, 1.0f, e1, 0, 1, e2, 0, 3, 0.0f, e3, 0, 3,
                   NULL));
    clt_tensor *view;
    TU_OK(clt_tensor_reshape(g, 1, &none, &view));
    clt_tensor_free(view);
    clt_tensor_free(sums), clt_tensor_free(from);
    clt_tensor_free(e1), clt_tensor_free(e2), clt_tensor_free(e3), clt_tensor_free(g);
    TU_OK(clt_pool_get_stats(ctx, &after));
    ck_assert_uint_eq(after.bytes_in_use, 0);
    tu_context_free(ctx);
}
END_TEST

START_TEST(messages_name_the_call)
{
    int index = -1;
    ck_assert_int_ne(clt_device_select("no-such-device-at-all-zq", &index), CLT_SUCCESS);
    ck_assert_msg(strncmp(clt_last_error(NULL), "clt_device_select", 17) == 0, "\"%s\"",
                  clt_last_error(NULL));
    clt_context_options o;
    clt_context_options_init(&o);
    o.profile = "no-such-profile";
    clt_context *ctx = NULL;
    ck_assert_int_ne(clt_context_create(&o, &ctx), CLT_SUCCESS);
    ck_assert_msg(strncmp(clt_last_error(NULL), "clt_context_create", 18) == 0, "\"%s\"",
                  clt_last_error(NULL));

    /* clt_gemm_batched with batch < 0: the message goes to C's context, not the thread slot. */
    ctx = tu_context();
    const int64_t n = 4;
    clt_tensor *t;
    TU_OK(clt_tensor_create(ctx, CLT_F32, 1, &n, &t));
    const clt_tensor *ab[1] = {t};
    clt_tensor *cs[1] = {t};
    int64_t offs[1] = {0};
    TU_EXPECT_STATUS(clt_gemm_batched(CLT_NO_TRANS, CLT_NO_TRANS, 1, 1, 1, 1.0f, ab, offs, 1, ab,
                                      offs, 1, 0.0f, cs, offs, 1, -1, NULL),
                     CLT_ERR_INVALID_SHAPE);
    ck_assert_msg(strncmp(clt_last_error(ctx), "clt_gemm_batched", 16) == 0, "\"%s\"",
                  clt_last_error(ctx));

    /* An event of another OpenCL context. */
    cl_int err;
    cl_device_id dev = ctx->dev->entry->device;
    cl_context other = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    cl_event ev = clCreateUserEvent(other, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    TU_EXPECT_STATUS(clt_context_wait_event(ctx, ev), CLT_ERR_CONTEXT_MISMATCH);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_context_wait_event");
    clSetUserEventStatus(ev, CL_COMPLETE);
    clReleaseEvent(ev);
    clReleaseContext(other);
    /* One of our own context's: fine. */
    cl_event mine;
    TU_OK(clt_context_export_event(ctx, &mine));
    TU_OK(clt_context_wait_event(ctx, mine));
    clReleaseEvent(mine);
    clt_tensor_free(t);
    tu_context_free(ctx);
}
END_TEST

START_TEST(crlf_tuning_file_named_as_such)
{
    clt__tuning_entries e;
    memset(&e, 0, sizeof e);
    char *text = clt__tuning_format(&e);
    ck_assert_ptr_nonnull(text);
    size_t n = strlen(text);
    char *crlf = malloc(2 * n + 1);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (text[i] == '\n')
            crlf[m++] = '\r';
        crlf[m++] = text[i];
    }
    char why[256];
    ck_assert_int_eq(clt__tuning_parse(text, n, &e, why, sizeof why), 0);
    ck_assert_int_ne(clt__tuning_parse(crlf, m, &e, why, sizeof why), 0);
    TU_EXPECT_MESSAGE(why, "CR line endings");
    free(crlf);
    free(text);
}
END_TEST

/* Writes every embedded kernel file into dir, those whose names start with `broken` made
 * uncompilable. */
/* A Conv2D call (forward, or the weight gradient) whose GEMM family cannot build, for each
 * multi-stage variant that `variant_env` forces (Winograd: transform, GEMM, output; column GEMM:
 * column copy, GEMM): the op fails with CLT_ERR_BUILD_FAILED and a message naming `call`, not one
 * launch was recorded (no first stage ran), and the output is intact. */
static void broken_gemm_runs_no_stage(const char *variant_env, int backward, const char *call)
{
    static const char *variants[2] = {"winograd", "colgemm"};
    char *kdir = tu_make_temp_dir();
    tu_write_kernel_tree(kdir, "gemm/"); /* every GEMM variant: whichever the device picks */
    char *saved_dir = tu_env_save("CLT_KERNEL_DIR"), *saved_var = tu_env_save(variant_env);
    setenv("CLT_KERNEL_DIR", kdir, 1);
    for (int v = 0; v < 2; v++) {
        setenv(variant_env, variants[v], 1);
        clt_context *ctx = tu_profiled_context();
        const int64_t xs[4] = {2, 8, 12, 12}, ws[4] = {8, 8, 3, 3}, os[4] = {2, 8, 10, 10};
        /* b: w (forward) or dy (backward); out: y or dw */
        clt_tensor *x = tu_uniform_1d(ctx, 2 * 8 * 12 * 12);
        clt_tensor *b = backward ? tu_uniform_1d(ctx, 2 * 8 * 10 * 10) : tu_uniform_1d(ctx, 8 * 8 * 9);
        clt_tensor *x4, *b4, *out;
        TU_OK(clt_tensor_reshape(x, 4, xs, &x4));
        TU_OK(clt_tensor_reshape(b, 4, backward ? os : ws, &b4));
        TU_OK(clt_tensor_create(ctx, CLT_F32, 4, backward ? ws : os, &out));
        TU_OK(clt_tensor_fill(out, 3.0));
        uint64_t before = tu_launches(ctx, NULL, "");
        clt_conv2d_params p;
        clt_conv2d_params_init(&p);
        clt_status st = backward ? clt_conv2d_backward_weight(b4, x4, &p, out)
                                 : clt_conv2d(x4, b4, NULL, &p, CLT_IDENTITY, 0.0f, out);
        ck_assert_msg(st == CLT_ERR_BUILD_FAILED, "%s: %s", variants[v], clt_last_error(ctx));
        ck_assert_msg(strncmp(clt_last_error(ctx), call, strlen(call)) == 0, "\"%s\"",
                      clt_last_error(ctx));
        ck_assert_msg(tu_launches(ctx, NULL, "") == before,
                      "%s: a stage ran before the failing GEMM build was found", variants[v]);
        float h[2 * 8 * 10 * 10];
        size_t n = (size_t)clt_tensor_numel(out);
        TU_OK(clt_tensor_read(out, h, n * sizeof(float)));
        for (size_t i = 0; i < n; i++)
            ck_assert_float_eq(h[i], 3.0f);
        clt_tensor_free(x4), clt_tensor_free(b4), clt_tensor_free(x), clt_tensor_free(b);
        clt_tensor_free(out);
        tu_context_free(ctx);
    }
    tu_env_restore("CLT_KERNEL_DIR", saved_dir);
    tu_env_restore(variant_env, saved_var);
    tu_remove_dir(kdir);
    free(kdir);
}

START_TEST(multi_stage_conv_checks_every_stage_first)
{
    broken_gemm_runs_no_stage("CLT_CONV_VARIANT", 0, "clt_conv2d");
}
END_TEST

START_TEST(multi_stage_conv_backward_checks_every_stage_first)
{
    broken_gemm_runs_no_stage("CLT_CONVB_WEIGHT_VARIANT", 1, "clt_conv2d_backward_weight");
}
END_TEST

Suite *edge_cases_suite(void)
{
    Suite *s = suite_create("edge_cases");
    TCase *tc = tcase_create("edges");
    tcase_add_test(tc, geometry_overflow_and_zero_channels_rejected);
    tcase_add_test(tc, conv_with_zero_channels_refused);
    tcase_add_test(tc, empty_tensors_take_no_pool_block);
    tcase_add_test(tc, messages_name_the_call);
    tcase_add_test(tc, crlf_tuning_file_named_as_such);
    tcase_add_test(tc, multi_stage_conv_checks_every_stage_first);
    tcase_add_test(tc, multi_stage_conv_backward_checks_every_stage_first);
    suite_add_tcase(s, tc);
    return s;
}
