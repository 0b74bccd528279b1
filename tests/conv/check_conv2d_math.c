/* Conv2D math modes (clt_conv2d_params.math): forward and both backward passes under FP32, TF32 and
 * 3xTF32 against float64, with the bounds of tests/gemm/check_gemm_math.c (K = the reduction length
 * of each pass): T32 = 2 (K + 4) eps32 scale + 8 eps32 |out|, TF32 adds 2.01 * 2^-11 scale, 3xTF32
 * keeps T32; meaningful where TF32 really rounds, and on POCL (every mode is fp32 there). Also a
 * mode set on the context, and a bad mode rejected by all three calls with nothing written. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ops/gemm/gemm.h"
#include "ref/conv_backward_ref.h"
#include "ref/conv_ref.h"
#include "util/test_util.h"

#define EPS32 1.1920928955078125e-7
#define U_TF32 4.8828125e-4

static clt_tensor *upload(clt_context *ctx, const int64_t s[4], const float *v)
{
    clt_tensor *t = NULL;
    TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, 4, s, v, (size_t)(s[0] * s[1] * s[2] * s[3]) * 4, &t));
    return t;
}

static float *random_of(int64_t n)
{
    float *v = malloc((size_t)n * sizeof *v);
    ck_assert_ptr_nonnull(v);
    tu_random_f32(v, (size_t)n, -1.0f, 1.0f);
    return v;
}

static void compare(const clt_tensor *t, const double *want, const double *scale, int64_t n, double k,
                    clt_math_mode mode, const char *label)
{
    float *got = malloc((size_t)n * sizeof *got);
    ck_assert_ptr_nonnull(got);
    TU_OK(clt_tensor_read(t, got, (size_t)n * sizeof *got));
    for (int64_t i = 0; i < n; i++) {
        double tol = 2.0 * (k + 4.0) * EPS32 * scale[i] + 8.0 * EPS32 * fabs(want[i]);
        if (mode == CLT_MATH_TF32)
            tol += 2.01 * U_TF32 * scale[i];
        ck_assert_msg(isfinite(got[i]) && fabs(got[i] - want[i]) <= tol + 1e-30,
                      "%s: element %lld = %.9g, expected %.9g (allowed %.3g)", label, (long long)i,
                      got[i], want[i], tol);
    }
    free(got);
}

START_TEST(every_mode_every_pass)
{
    clt_context *ctx = tu_context();
    static const int64_t shapes[][6] = {{2, 3, 7, 5, 3, 1} /* n ci h co k pad */, {2, 8, 5, 4, 1, 0},
                                        {1, 5, 9, 6, 3, 0}};
    const clt_math_mode modes[] = {CLT_MATH_FP32, CLT_MATH_TF32, CLT_MATH_FP32_3XTF32};
    char label[128];
    for (int md = 0; md < 3; md++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            const int64_t *c = shapes[s];
            clt_conv2d_params p;
            clt_conv2d_params_init(&p);
            p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = (int32_t)c[5];
            int via_context = (int)s == md; /* one case per mode through the context instead */
            if (via_context)
                TU_OK(clt_context_set_math_mode(ctx, modes[md]));
            else
                p.math = modes[md];
            int64_t xs[4] = {c[0], c[1], c[2], c[2]}, ws[4] = {c[3], c[1], c[4], c[4]}, os[4];
            TU_OK(clt_conv2d_output_shape(xs, ws, &p, os));
            int64_t nx = xs[0] * xs[1] * xs[2] * xs[3], nw = ws[0] * ws[1] * ws[2] * ws[3];
            int64_t no = os[0] * os[1] * os[2] * os[3];
            float *hx = random_of(nx), *hw = random_of(nw), *hb = random_of(c[3]), *hdy = random_of(no);
            clt_tensor *x = upload(ctx, xs, hx), *w = upload(ctx, ws, hw), *dy = upload(ctx, os, hdy);
            clt_tensor *b = NULL, *out = NULL, *dx = NULL, *dw = NULL;
            TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, 1, &c[3], hb, (size_t)c[3] * 4, &b));
            TU_OK(clt_tensor_create(ctx, CLT_F32, 4, os, &out));
            TU_OK(clt_tensor_create(ctx, CLT_F32, 4, xs, &dx));
            TU_OK(clt_tensor_create(ctx, CLT_F32, 4, ws, &dw));
            tu_poison(out), tu_poison(dx), tu_poison(dw);
            TU_OK(clt_conv2d(x, w, b, &p, CLT_IDENTITY, 0.0f, out));
            TU_OK(clt_conv2d_backward_input(dy, w, &p, dx));
            TU_OK(clt_conv2d_backward_weight(dy, x, &p, dw));
            TU_OK(clt_context_set_math_mode(ctx, CLT_MATH_DEFAULT));
            ref_conv rc = ref_conv_make(xs, ws, &p);
            double *want = malloc((size_t)(no + nx + nw) * sizeof *want);
            double *scale = malloc((size_t)(no + nx + nw) * sizeof *scale);
            ck_assert(want && scale);
            ref_conv2d_forward(&rc, hx, hw, hb, CLT_IDENTITY, 0.0, want, scale);
            snprintf(label, sizeof label, "%s%s forward shape %zu", clt_math_mode_name(modes[md]),
                     via_context ? " (context)" : "", s);
            compare(out, want, scale, no, (double)(c[1] * c[4] * c[4] + 1), modes[md], label);
            ref_conv2d_backward_input(&rc, hdy, hw, want, scale);
            snprintf(label, sizeof label, "%s backward_input shape %zu", clt_math_mode_name(modes[md]), s);
            compare(dx, want, scale, nx, (double)(c[3] * c[4] * c[4]), modes[md], label);
            ref_conv2d_backward_weight(&rc, hdy, hx, want, scale);
            snprintf(label, sizeof label, "%s backward_weight shape %zu", clt_math_mode_name(modes[md]), s);
            compare(dw, want, scale, nw, (double)(os[0] * os[2] * os[3]), modes[md], label);
            free(want), free(scale), free(hx), free(hw), free(hb), free(hdy);
            clt_tensor_free(x), clt_tensor_free(w), clt_tensor_free(dy), clt_tensor_free(b);
            clt_tensor_free(out), clt_tensor_free(dx), clt_tensor_free(dw);
        }
    tu_context_free(ctx);
}
END_TEST

/* The tensor-core forward (conv2d_mma.cl, TF32 and 3xTF32) across its edges: a 7x7 stride-2 stem over 3
 * channels (K = 147: weights copied element by element), Co of 1, 7, 64, 65 and 130 (both tile heights,
 * partial tiles), P not a multiple of the 128-column tile and not of 4 (scalar stores across image
 * boundaries) or a multiple of 4 (float4 stores), K below one slice and over several with a partial
 * last one, dilation, asymmetric padding, strides, a 1x1 stride-2 kernel (not a GEMM), bias or none,
 * identity and ReLU, under CLT_CONV_MMA=1 (the kernel is opt-in). On a device with tensor cores the
 * profiler must show conv2d_mma ran each time; elsewhere the same calls take the fp32 kernels and must
 * meet the same bounds. */
START_TEST(mma_forward)
{
    char *saved = tu_env_save("CLT_CONV_MMA");
    setenv("CLT_CONV_MMA", "1", 1);
    clt_context *ctx = tu_profiled_context();
    const int tc = clt__device_has_tensor_cores(ctx);
    /* n ci h w co kh kw sh sw pt pb pl pr dh dw */
    static const int32_t shapes[][15] = {{2, 3, 23, 19, 65, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1},
                                         {3, 16, 9, 11, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
                                         {1, 20, 17, 13, 130, 5, 3, 1, 2, 2, 0, 1, 2, 2, 1},
                                         {2, 2, 8, 8, 7, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1},
                                         {4, 33, 12, 12, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}};
    const clt_math_mode modes[] = {CLT_MATH_TF32, CLT_MATH_FP32_3XTF32};
    char label[160];
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int md = 0; md < 2; md++) {
            const int32_t *c = shapes[s];
            clt_conv2d_params p;
            clt_conv2d_params_init(&p);
            p.stride_h = c[7], p.stride_w = c[8];
            p.pad_top = c[9], p.pad_bottom = c[10], p.pad_left = c[11], p.pad_right = c[12];
            p.dilation_h = c[13], p.dilation_w = c[14];
            p.math = modes[md];
            const clt_unary_op act = (s + md) % 2 ? CLT_RELU : CLT_IDENTITY;
            const int with_bias = s != 1 || md == 0;
            int64_t xs[4] = {c[0], c[1], c[2], c[3]}, ws[4] = {c[4], c[1], c[5], c[6]}, os[4];
            TU_OK(clt_conv2d_output_shape(xs, ws, &p, os));
            int64_t nx = xs[0] * xs[1] * xs[2] * xs[3], nw = ws[0] * ws[1] * ws[2] * ws[3];
            int64_t no = os[0] * os[1] * os[2] * os[3];
            float *hx = random_of(nx), *hw = random_of(nw), *hb = random_of(c[4]);
            clt_tensor *x = upload(ctx, xs, hx), *w = upload(ctx, ws, hw), *b = NULL, *out = NULL;
            int64_t co = c[4];
            if (with_bias)
                TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, 1, &co, hb, (size_t)co * 4, &b));
            TU_OK(clt_tensor_create(ctx, CLT_F32, 4, os, &out));
            tu_poison(out);
            uint64_t before = tc ? tu_launches(ctx, NULL, "conv2d_mma") : 0;
            TU_OK(clt_conv2d(x, w, b, &p, act, 0.0f, out));
            snprintf(label, sizeof label, "%s forward, shape %zu (%s, %s)", clt_math_mode_name(modes[md]), s,
                     with_bias ? "bias" : "no bias", act == CLT_RELU ? "relu" : "identity");
            if (tc)
                ck_assert_msg(tu_launches(ctx, NULL, "conv2d_mma") == before + 1, "%s: conv2d_mma did not run",
                              label);
            ref_conv rc = ref_conv_make(xs, ws, &p);
            double *want = malloc((size_t)no * sizeof *want), *scale = malloc((size_t)no * sizeof *scale);
            ck_assert(want && scale);
            ref_conv2d_forward(&rc, hx, hw, with_bias ? hb : NULL, act, 0.0, want, scale);
            compare(out, want, scale, no, (double)(c[1] * c[5] * c[6] + 1), modes[md], label);
            free(want), free(scale), free(hx), free(hw), free(hb);
            clt_tensor_free(x), clt_tensor_free(w), clt_tensor_free(b), clt_tensor_free(out);
        }
    tu_context_free(ctx);
    tu_env_restore("CLT_CONV_MMA", saved);
}
END_TEST

START_TEST(bad_mode_rejected)
{
    clt_context *ctx = tu_context();
    int64_t xs[4] = {1, 2, 4, 4}, ws[4] = {3, 2, 3, 3}, os[4] = {1, 3, 2, 2};
    clt_tensor *x = NULL, *w = NULL, *out = NULL, *dx = NULL, *dw = NULL;
    TU_OK(clt_tensor_create(ctx, CLT_F32, 4, xs, &x));
    TU_OK(clt_tensor_create(ctx, CLT_F32, 4, ws, &w));
    TU_OK(clt_tensor_create(ctx, CLT_F32, 4, os, &out));
    TU_OK(clt_tensor_create(ctx, CLT_F32, 4, xs, &dx));
    TU_OK(clt_tensor_create(ctx, CLT_F32, 4, ws, &dw));
    clt_tensor *fills[5] = {x, w, out, dx, dw};
    for (int i = 0; i < 5; i++)
        TU_OK(clt_tensor_fill(fills[i], i < 2 ? 1.0 : 5.0));
    clt_conv2d_params p;
    clt_conv2d_params_init(&p);
    ck_assert_int_eq(p.math, CLT_MATH_DEFAULT);
    p.math = (clt_math_mode)4;
    TU_EXPECT_STATUS(clt_conv2d(x, w, NULL, &p, CLT_IDENTITY, 0.0f, out), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_conv2d: math mode");
    TU_EXPECT_STATUS(clt_conv2d_backward_input(out, w, &p, dx), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_conv2d_backward_input");
    TU_EXPECT_STATUS(clt_conv2d_backward_weight(out, x, &p, dw), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_conv2d_backward_weight");
    const clt_tensor *ts[3] = {out, dx, dw};
    for (int i = 0; i < 3; i++) {
        int64_t n = clt_tensor_numel(ts[i]);
        float *v = malloc((size_t)n * sizeof *v);
        ck_assert_ptr_nonnull(v);
        TU_OK(clt_tensor_read(ts[i], v, (size_t)n * sizeof *v));
        for (int64_t j = 0; j < n; j++)
            ck_assert_float_eq(v[j], 5.0f);
        free(v);
    }
    clt_tensor_free(x), clt_tensor_free(w), clt_tensor_free(out), clt_tensor_free(dx), clt_tensor_free(dw);
    tu_context_free(ctx);
}
END_TEST

Suite *conv2d_math_suite(void)
{
    Suite *s = suite_create("conv2d_math");
    TCase *tc = tcase_create("conv2d_math");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, every_mode_every_pass);
    tcase_add_test(tc, bad_mode_rejected);
    tcase_add_test(tc, mma_forward);
    suite_add_tcase(s, tc);
    return s;
}
