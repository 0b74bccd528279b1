/* Conv2D math modes (clt_conv2d_params.math): forward and both backward passes under FP32, TF32 and
 * 3xTF32 against float64, with the bounds of tests/gemm/check_gemm_math.c (K = the reduction length
 * of each pass): T32 = 2 (K + 4) eps32 scale + 8 eps32 |out|, TF32 adds 2.01 * 2^-11 scale, 3xTF32
 * keeps T32; meaningful where TF32 really rounds, and on POCL (every mode is fp32 there). Also a
 * mode set on the context, and a bad mode rejected by all three calls with nothing written. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/gemm/gemm.h"
#include "ref/cast_ref.h"
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

/* The tensor-core forward (conv2d_mma.cl, TF32 and 3xTF32) across its edges, under CLT_CONV_MMA=1 (both
 * forms wherever they apply). Gather form (Ci not a multiple of 16): a 7x7 stride-2 stem over 3 channels
 * (K = 147: weights copied element by element), Co of 65, 130 and 7, K below one slice and over several
 * with a partial last one, dilation, asymmetric padding, strides, a 1x1 stride-2 kernel (not a GEMM).
 * Channels-last form (Ci 16, 32, 48, 64): Co of 1, 65, 130 and 64, P not a multiple of the 128-column
 * tile nor of 4 (scalar stores across image boundaries) or a multiple of 4 (float4 stores), 3x3, 5x3
 * with strides, asymmetric padding and dilation, a 1x1 stride-2 kernel, x a view at an odd offset (the
 * transpose reads from there). Bias or none, identity and ReLU. On a device with tensor cores the
 * profiler must show the expected form ran each time; elsewhere the same calls take the fp32 kernels
 * and must meet the same bounds. */
START_TEST(mma_forward)
{
    char *saved = tu_env_save("CLT_CONV_MMA"), *saved_cfg = tu_env_save("CLT_CONV_MMA_CFG");
    setenv("CLT_CONV_MMA", "1", 1);
    /* the built-in tile choice, then (TF32 only) tiles of 8 warps of 32 x 64, 64 columns, 4 warps of 32 x 64 */
    static const char *const cfgs[] = {NULL, "2,4,2,3", "4,2,1,4", "2,2,2,4"};
    clt_context *ctx = tu_profiled_context();
    const int tc = clt__device_has_tensor_cores(ctx);
    /* n ci h w co kh kw sh sw pt pb pl pr dh dw */
    static const int32_t shapes[][15] = {{2, 3, 23, 19, 65, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1},
                                         {3, 16, 9, 11, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
                                         {1, 20, 17, 13, 130, 5, 3, 1, 2, 2, 0, 1, 2, 2, 1},
                                         {2, 2, 8, 8, 7, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1},
                                         {4, 33, 12, 12, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
                                         {2, 32, 13, 11, 65, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
                                         {1, 48, 17, 13, 130, 5, 3, 2, 1, 2, 1, 0, 2, 1, 2},
                                         {2, 32, 9, 7, 33, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1},
                                         {3, 64, 12, 12, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}};
    const clt_math_mode modes[] = {CLT_MATH_TF32, CLT_MATH_FP32_3XTF32};
    char label[192];
    for (size_t cf = 0; cf < sizeof cfgs / sizeof cfgs[0]; cf++) {
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int md = 0; md < 2 - (cf > 0); md++) {
                const int32_t *c = shapes[s];
                if (cfgs[cf])
                    setenv("CLT_CONV_MMA_CFG", cfgs[cf], 1);
                else
                    unsetenv("CLT_CONV_MMA_CFG");
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
                /* the channels-last shapes with an even index read x through a view at offset 3 */
                const int nhwc = c[1] % 16 == 0, viewed = nhwc && s % 2 == 0;
                float *hbig = malloc((size_t)(nx + 3) * sizeof *hbig);
                ck_assert_ptr_nonnull(hbig);
                memcpy(hbig + 3, hx, (size_t)nx * sizeof *hx);
                hbig[0] = hbig[1] = hbig[2] = NAN;
                int64_t nbig = nx + 3;
                clt_tensor *big = NULL, *x = NULL, *w = upload(ctx, ws, hw), *b = NULL, *out = NULL;
                if (viewed) {
                    TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, 1, &nbig, hbig, (size_t)nbig * 4, &big));
                    TU_OK(clt_tensor_view(big, 3, 4, xs, &x));
                } else {
                    x = upload(ctx, xs, hx);
                }
                int64_t co = c[4];
                if (with_bias)
                    TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, 1, &co, hb, (size_t)co * 4, &b));
                TU_OK(clt_tensor_create(ctx, CLT_F32, 4, os, &out));
                tu_poison(out);
                const char *form = nhwc ? "conv2d_mma_nhwc" : "conv2d_mma"; /* conv2d_mma counts both forms */
                uint64_t before = tc ? tu_launches(ctx, NULL, form) : 0;
                TU_OK(clt_conv2d(x, w, b, &p, act, 0.0f, out));
                snprintf(label, sizeof label, "%s forward, shape %zu (%s, %s%s, tiles %s)", clt_math_mode_name(modes[md]),
                         s, with_bias ? "bias" : "no bias", act == CLT_RELU ? "relu" : "identity",
                         viewed ? ", x a view" : "", cfgs[cf] ? cfgs[cf] : "built in");
                if (tc)
                    ck_assert_msg(tu_launches(ctx, NULL, form) == before + 1, "%s: %s did not run", label, form);
                ref_conv rc = ref_conv_make(xs, ws, &p);
                double *want = malloc((size_t)no * sizeof *want), *scale = malloc((size_t)no * sizeof *scale);
                ck_assert(want && scale);
                ref_conv2d_forward(&rc, hx, hw, with_bias ? hb : NULL, act, 0.0, want, scale);
                compare(out, want, scale, no, (double)(c[1] * c[5] * c[6] + 1), modes[md], label);
                free(want), free(scale), free(hx), free(hw), free(hb), free(hbig);
                clt_tensor_free(x), clt_tensor_free(big), clt_tensor_free(w), clt_tensor_free(b), clt_tensor_free(out);
            }
    }
    tu_context_free(ctx);
    tu_env_restore("CLT_CONV_MMA", saved);
    tu_env_restore("CLT_CONV_MMA_CFG", saved_cfg);
}
END_TEST

/* Which tensor-core form runs (CLT_CONV_WGMMA=1 lifts wgmma's grid-size rule for these small shapes):
 * wgmma on Hopper where Ci is near a multiple of 32 (not 16, not 3); CLT_CONV_MMA=1 the mma.sync
 * channels-last form where Ci is a multiple of 16 (and wgmma never), gather the gather form even there, 0
 * none, unset or auto no mma.sync form; CLT_CONV_WGMMA=0 no wgmma. Each result still meets the TF32
 * bound. Without tensor cores none ever runs. */
START_TEST(mma_choice)
{
    char *saved = tu_env_save("CLT_CONV_MMA");
    clt_context *ctx = tu_profiled_context();
    char *saved_wg = tu_env_save("CLT_CONV_WGMMA");
    const int tc = clt__device_has_tensor_cores(ctx), hopper = clt__device_nv_sm(ctx) == 90;
    static const struct {
        const char *env, *wgmma_env;
        int64_t ci;
        int wgmma, nhwc, gather; /* launches expected on a tensor-core device (wgmma: on Hopper) */
    } cases[] = {{NULL, "1", 32, 1, 0, 0}, {NULL, NULL, 3, 0, 0, 0},  {"gather", "1", 32, 0, 0, 1},
                 {"0", "1", 32, 0, 0, 0},  {"1", NULL, 16, 0, 1, 0},  {NULL, "0", 64, 0, 0, 0},
                 {"1", "1", 64, 0, 1, 0},  {NULL, "1", 16, 0, 0, 0}, {"auto", NULL, 64, 0, 0, 0}};
    char label[128];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (cases[i].env)
            setenv("CLT_CONV_MMA", cases[i].env, 1);
        else
            unsetenv("CLT_CONV_MMA");
        if (cases[i].wgmma_env)
            setenv("CLT_CONV_WGMMA", cases[i].wgmma_env, 1);
        else
            unsetenv("CLT_CONV_WGMMA");
        clt_conv2d_params p;
        clt_conv2d_params_init(&p);
        p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = 1;
        p.math = CLT_MATH_TF32;
        int64_t xs[4] = {2, cases[i].ci, 10, 7}, ws[4] = {24, cases[i].ci, 3, 3}, os[4];
        TU_OK(clt_conv2d_output_shape(xs, ws, &p, os));
        int64_t nx = xs[0] * xs[1] * xs[2] * xs[3], nw = ws[0] * ws[1] * ws[2] * ws[3];
        int64_t no = os[0] * os[1] * os[2] * os[3];
        float *hx = random_of(nx), *hw = random_of(nw);
        clt_tensor *x = upload(ctx, xs, hx), *w = upload(ctx, ws, hw), *out = NULL;
        TU_OK(clt_tensor_create(ctx, CLT_F32, 4, os, &out));
        tu_poison(out);
        /* tu_launches matches names by substring: conv2d_mma counts both mma.sync forms */
        uint64_t n0 = tu_launches(ctx, NULL, "conv2d_mma_nhwc"), a0 = tu_launches(ctx, NULL, "conv2d_mma");
        uint64_t w0 = tu_launches(ctx, NULL, "conv2d_wgmma");
        TU_OK(clt_conv2d(x, w, NULL, &p, CLT_IDENTITY, 0.0f, out));
        snprintf(label, sizeof label, "CLT_CONV_MMA=%s CLT_CONV_WGMMA=%s, Ci %lld",
                 cases[i].env ? cases[i].env : "(unset)", cases[i].wgmma_env ? cases[i].wgmma_env : "(unset)",
                 (long long)cases[i].ci);
        const int want_wg = tc && hopper && cases[i].wgmma, want_nhwc = tc && cases[i].nhwc;
        const uint64_t wgmma = tu_launches(ctx, NULL, "conv2d_wgmma") - w0;
        ck_assert_msg(wgmma == (uint64_t)want_wg, "%s: %llu wgmma launches", label, (unsigned long long)wgmma);
        const uint64_t nhwc = tu_launches(ctx, NULL, "conv2d_mma_nhwc") - n0;
        const uint64_t gather = tu_launches(ctx, NULL, "conv2d_mma") - a0 - nhwc;
        ck_assert_msg(nhwc == (uint64_t)want_nhwc, "%s: %llu channels-last launches", label,
                      (unsigned long long)nhwc);
        ck_assert_msg(gather == (uint64_t)(tc && cases[i].gather), "%s: %llu gather launches", label,
                      (unsigned long long)gather);
        ref_conv rc = ref_conv_make(xs, ws, &p);
        double *want = malloc((size_t)no * sizeof *want), *scale = malloc((size_t)no * sizeof *scale);
        ck_assert(want && scale);
        ref_conv2d_forward(&rc, hx, hw, NULL, CLT_IDENTITY, 0.0, want, scale);
        compare(out, want, scale, no, (double)(cases[i].ci * 9), CLT_MATH_TF32, label);
        free(want), free(scale), free(hx), free(hw);
        clt_tensor_free(x), clt_tensor_free(w), clt_tensor_free(out);
    }
    tu_context_free(ctx);
    tu_env_restore("CLT_CONV_MMA", saved);
    tu_env_restore("CLT_CONV_WGMMA", saved_wg);
}
END_TEST

/* The wgmma forward (conv2d_wgmma.cl, TF32) across its edges, CLT_CONV_MMA unset: Ci 32, 48 (zero channels
 * to 64), 64, 96 and 128; Co of 1, 65, 130, 64 and 200 (one or two warpgroups, partial tiles); P not a
 * multiple of 128 nor even (stores across image boundaries); 3x3, 5x3 with strides, asymmetric padding and
 * dilation, a 1x1 stride-2 kernel, 7x7; an image of 9 x 7 (rows of the channels-last copy padded to 64);
 * x a view at an odd offset (the pack's unaligned path) on every other shape; bias or none, identity,
 * ReLU and GELU; under the built-in kernel shape and the others CLT_CONV_WGMMA_CFG can pick (one or two
 * warpgroups, 128 or 64 pixels a tile, 3-5 stages, waiting on 0-2 slices of products). On an
 * sm_90 device the profiler must show conv2d_wgmma ran each time; elsewhere the fp32 (or mma.sync) kernels
 * run the same calls against the same bounds. */
START_TEST(wgmma_forward)
{
    char *saved = tu_env_save("CLT_CONV_MMA"), *saved_wg = tu_env_save("CLT_CONV_WGMMA"),
         *saved_cfg = tu_env_save("CLT_CONV_WGMMA_CFG");
    unsetenv("CLT_CONV_MMA");
    setenv("CLT_CONV_WGMMA", "1", 1); /* every size: these shapes are below the grid-size rule */
    clt_context *ctx = tu_profiled_context();
    const int hopper = clt__device_nv_sm(ctx) == 90;
    static const char *const cfgs[] = {NULL, "1,128,4,0", "2,128,3,1", "1,64,5,0", "2,64,4,2"};
    /* n ci h w co kh kw sh sw pt pb pl pr dh dw */
    static const int32_t shapes[][15] = {{2, 32, 13, 11, 65, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
                                         {1, 48, 17, 13, 130, 5, 3, 2, 1, 2, 1, 0, 2, 1, 2},
                                         {3, 64, 9, 7, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
                                         {2, 96, 8, 9, 64, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1},
                                         {1, 128, 12, 12, 200, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
                                         {2, 64, 15, 14, 33, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1}};
    static const clt_unary_op acts[] = {CLT_IDENTITY, CLT_RELU, CLT_GELU_TANH};
    char label[192];
    for (size_t cf = 0; cf < sizeof cfgs / sizeof cfgs[0]; cf++) {
        if (cfgs[cf])
            setenv("CLT_CONV_WGMMA_CFG", cfgs[cf], 1);
        else
            unsetenv("CLT_CONV_WGMMA_CFG");
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            if (cf > 0 && s % 2 != cf % 2) /* the other shapes see every shape twice between them */
                continue;
            const int32_t *c = shapes[s];
            clt_conv2d_params p;
            clt_conv2d_params_init(&p);
            p.stride_h = c[7], p.stride_w = c[8];
            p.pad_top = c[9], p.pad_bottom = c[10], p.pad_left = c[11], p.pad_right = c[12];
            p.dilation_h = c[13], p.dilation_w = c[14];
            p.math = CLT_MATH_TF32;
            const clt_unary_op act = acts[(s + cf) % 3];
            const int with_bias = (s + cf) % 2 == 0, viewed = s % 2 == 1;
            int64_t xs[4] = {c[0], c[1], c[2], c[3]}, ws[4] = {c[4], c[1], c[5], c[6]}, os[4];
            TU_OK(clt_conv2d_output_shape(xs, ws, &p, os));
            int64_t nx = xs[0] * xs[1] * xs[2] * xs[3], nw = ws[0] * ws[1] * ws[2] * ws[3];
            int64_t no = os[0] * os[1] * os[2] * os[3], nbig = nx + 5, co = c[4];
            float *hx = random_of(nx), *hw = random_of(nw), *hb = random_of(co);
            float *hbig = malloc((size_t)nbig * sizeof *hbig);
            ck_assert_ptr_nonnull(hbig);
            memcpy(hbig + 5, hx, (size_t)nx * sizeof *hx);
            for (int i = 0; i < 5; i++)
                hbig[i] = NAN;
            clt_tensor *big = NULL, *x = NULL, *w = upload(ctx, ws, hw), *b = NULL, *out = NULL;
            if (viewed) {
                TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, 1, &nbig, hbig, (size_t)nbig * 4, &big));
                TU_OK(clt_tensor_view(big, 5, 4, xs, &x));
            } else {
                x = upload(ctx, xs, hx);
            }
            if (with_bias)
                TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, 1, &co, hb, (size_t)co * 4, &b));
            TU_OK(clt_tensor_create(ctx, CLT_F32, 4, os, &out));
            tu_poison(out);
            uint64_t before = tu_launches(ctx, NULL, "conv2d_wgmma");
            TU_OK(clt_conv2d(x, w, b, &p, act, 0.0f, out));
            snprintf(label, sizeof label, "TF32 wgmma forward, shape %zu (%s, act %d%s, kernel %s)", s,
                     with_bias ? "bias" : "no bias", (int)act, viewed ? ", x a view" : "",
                     cfgs[cf] ? cfgs[cf] : "built in");
            ck_assert_msg(tu_launches(ctx, NULL, "conv2d_wgmma") == before + (uint64_t)hopper,
                          "%s: conv2d_wgmma ran %s", label, hopper ? "not" : "off Hopper");
            ref_conv rc = ref_conv_make(xs, ws, &p);
            double *want = malloc((size_t)no * sizeof *want), *scale = malloc((size_t)no * sizeof *scale);
            ck_assert(want && scale);
            ref_conv2d_forward(&rc, hx, hw, with_bias ? hb : NULL, act, 0.0, want, scale);
            compare(out, want, scale, no, (double)(c[1] * c[5] * c[6] + 1), CLT_MATH_TF32, label);
            free(want), free(scale), free(hx), free(hw), free(hb), free(hbig);
            clt_tensor_free(x), clt_tensor_free(big), clt_tensor_free(w), clt_tensor_free(b), clt_tensor_free(out);
        }
    }
    tu_context_free(ctx);
    tu_env_restore("CLT_CONV_MMA", saved);
    tu_env_restore("CLT_CONV_WGMMA", saved_wg);
    tu_env_restore("CLT_CONV_WGMMA_CFG", saved_cfg);
}
END_TEST

/* The grad-input in TF32 math through the flipped forward on wgmma (conv2d_backward_cpu.c asks
 * clt__conv2d_wgmma_takes before reading w in place by Winograd): stride 1, Co (the flipped problem's input
 * channels) 32, 64, 96, odd Ci (its output channels), 3x3 with and without padding (the flipped padding 0 and
 * 2), 5x3 with asymmetric padding and dilation, 7x7; dy a view at an odd offset once. Under CLT_CONV_WGMMA=1
 * (these grids are below its size rule). On Hopper the profiler must show conv2d_wgmma ran for each call
 * and no Winograd transform; elsewhere the same calls take the fp32 paths and meet the same bound. */
START_TEST(wgmma_backward_input)
{
    char *saved = tu_env_save("CLT_CONV_MMA"), *saved_wg = tu_env_save("CLT_CONV_WGMMA");
    unsetenv("CLT_CONV_MMA");
    setenv("CLT_CONV_WGMMA", "1", 1);
    clt_context *ctx = tu_profiled_context();
    const int hopper = clt__device_nv_sm(ctx) == 90;
    /* n ci h w co kh kw pt pb pl pr dh dw */
    static const int32_t shapes[][13] = {{2, 65, 13, 11, 32, 3, 3, 1, 1, 1, 1, 1, 1},
                                         {3, 130, 9, 7, 96, 3, 3, 0, 0, 0, 0, 1, 1},
                                         {1, 7, 17, 13, 64, 5, 3, 2, 1, 0, 2, 1, 2},
                                         {2, 33, 15, 14, 64, 7, 7, 3, 3, 3, 3, 1, 1}};
    char label[160];
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const int32_t *c = shapes[s];
        clt_conv2d_params p;
        clt_conv2d_params_init(&p);
        p.pad_top = c[7], p.pad_bottom = c[8], p.pad_left = c[9], p.pad_right = c[10];
        p.dilation_h = c[11], p.dilation_w = c[12];
        p.math = CLT_MATH_TF32;
        int64_t xs[4] = {c[0], c[1], c[2], c[3]}, ws[4] = {c[4], c[1], c[5], c[6]}, os[4];
        TU_OK(clt_conv2d_output_shape(xs, ws, &p, os));
        const int64_t nx = xs[0] * xs[1] * xs[2] * xs[3], nw = ws[0] * ws[1] * ws[2] * ws[3];
        const int64_t no = os[0] * os[1] * os[2] * os[3], nbig = no + 3;
        float *hw = random_of(nw), *hdy = random_of(no), *hbig = malloc((size_t)nbig * sizeof *hbig);
        ck_assert_ptr_nonnull(hbig);
        memcpy(hbig + 3, hdy, (size_t)no * sizeof *hdy);
        hbig[0] = hbig[1] = hbig[2] = NAN;
        clt_tensor *w = upload(ctx, ws, hw), *big = NULL, *dy = NULL, *dx = NULL;
        const int viewed = s == 2;
        if (viewed) {
            TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, 1, &nbig, hbig, (size_t)nbig * 4, &big));
            TU_OK(clt_tensor_view(big, 3, 4, os, &dy));
        } else {
            dy = upload(ctx, os, hdy);
        }
        TU_OK(clt_tensor_create(ctx, CLT_F32, 4, xs, &dx));
        tu_poison(dx);
        const uint64_t before = tu_launches(ctx, NULL, "conv2d_wgmma"), wino = tu_launches(ctx, NULL, "winograd");
        TU_OK(clt_conv2d_backward_input(dy, w, &p, dx));
        snprintf(label, sizeof label, "TF32 grad-input, shape %zu%s", s, viewed ? " (dy a view)" : "");
        ck_assert_msg(tu_launches(ctx, NULL, "conv2d_wgmma") == before + (uint64_t)hopper, "%s: conv2d_wgmma ran %s",
                      label, hopper ? "not" : "off Hopper");
        if (hopper)
            ck_assert_msg(tu_launches(ctx, NULL, "winograd") == wino, "%s: a Winograd kernel ran", label);
        ref_conv rc = ref_conv_make(xs, ws, &p);
        double *want = malloc((size_t)nx * sizeof *want), *scale = malloc((size_t)nx * sizeof *scale);
        ck_assert(want && scale);
        ref_conv2d_backward_input(&rc, hdy, hw, want, scale);
        compare(dx, want, scale, nx, (double)(c[4] * c[5] * c[6]), CLT_MATH_TF32, label);
        free(want), free(scale), free(hw), free(hdy), free(hbig);
        clt_tensor_free(w), clt_tensor_free(dy), clt_tensor_free(big), clt_tensor_free(dx);
    }
    tu_context_free(ctx);
    tu_env_restore("CLT_CONV_MMA", saved);
    tu_env_restore("CLT_CONV_WGMMA", saved_wg);
}
END_TEST

/* out (f32, or 16-bit od: rounded once from the f32 result) against want with the fp32 bound over k terms,
 * plus half a unit of od's last place. */
static void compare_half(const clt_tensor *out, clt_dtype od, const double *want, const double *scale, int64_t n,
                         double k, const char *label)
{
    void *bo = malloc((size_t)(n ? n : 1) * 4);
    ck_assert_ptr_nonnull(bo);
    TU_OK(clt_tensor_read(out, bo, (size_t)n * clt_dtype_size(od)));
    const double half_ulp = od == CLT_F32 ? 0.0 : od == CLT_F16 ? 0x1p-11 : 0x1p-8;
    for (int64_t i = 0; i < n; i++) {
        const double got = od == CLT_F32 ? ((float *)bo)[i] : ref_16bit_value(od, ((uint16_t *)bo)[i]);
        const double tol = 2.0 * (k + 4.0) * EPS32 * scale[i] + 8.0 * EPS32 * fabs(want[i]);
        ck_assert_msg(isfinite(got) && fabs(got - want[i]) <= tol + half_ulp * (fabs(want[i]) + tol) + 1e-30,
                      "%s: element %lld = %.9g, expected %.9g", label, (long long)i, got, want[i]);
    }
    free(bo);
}

/* f16 / bf16 operands (x, w and dy of one type) with f32 outputs and with ones of their type, forward and
 * both backward passes, under every math mode: against float64 over the 16-bit values (their products are
 * exact in every mode), with the fp32 bound T32, plus half a unit of the output's last place when it is
 * 16-bit (rounded once, from the f32 sum). Ci = 32 takes wgmma on Hopper, Ci = 5 and the strided 5x5 the
 * other kernels; x is a view at an odd element offset once; an empty batch zeroes a 16-bit dw. Mixed
 * input types, another output type and a 16-bit bias are refused with nothing written. */
START_TEST(half_inputs)
{
    clt_context *ctx = tu_context();
    static const clt_dtype types[] = {CLT_BF16, CLT_F16};
    /* n ci h w co k stride pad */
    static const int64_t shapes[][8] = {{2, 5, 9, 7, 6, 3, 1, 1}, {1, 32, 10, 9, 40, 3, 1, 1}, {3, 3, 11, 13, 8, 5, 2, 2}};
    const clt_math_mode modes[] = {CLT_MATH_FP32, CLT_MATH_TF32, CLT_MATH_FP32_3XTF32};
    char label[160];
    for (int td = 0; td < 2; td++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int same = 0; same < 2; same++) {
                const clt_dtype d = types[td], od = same ? d : CLT_F32;
                const int64_t *c = shapes[s];
                clt_conv2d_params p;
                clt_conv2d_params_init(&p);
                p.stride_h = p.stride_w = (int32_t)c[6];
                p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = (int32_t)c[7];
                p.math = modes[(td + s + same) % 3];
                int64_t xs[4] = {c[0], c[1], c[2], c[3]}, ws[4] = {c[4], c[1], c[5], c[5]}, os[4];
                TU_OK(clt_conv2d_output_shape(xs, ws, &p, os));
                const int64_t nx = xs[0] * xs[1] * xs[2] * xs[3], nw = ws[0] * ws[1] * ws[2] * ws[3];
                const int64_t no = os[0] * os[1] * os[2] * os[3], off = s == 1 ? 3 : 0;
                uint16_t *bx = malloc((size_t)(nx + off) * 2), *bw = malloc((size_t)nw * 2);
                float *hx = malloc((size_t)nx * sizeof *hx), *hw = malloc((size_t)nw * sizeof *hw), *hb = random_of(c[4]);
                ck_assert(bx && bw && hx && hw);
                float *r = random_of(nx + nw);
                for (int64_t i = 0; i < off; i++)
                    bx[i] = d == CLT_F16 ? 0x7E00 : 0x7FC0; /* NaN before the view */
                for (int64_t i = 0; i < nx; i++)
                    hx[i] = (float)ref_16bit_value(d, bx[off + i] = ref_16bit_from_f32(d, r[i]));
                for (int64_t i = 0; i < nw; i++)
                    hw[i] = (float)ref_16bit_value(d, bw[i] = ref_16bit_from_f32(d, r[nx + i]));
                int64_t nbig = nx + off, co = c[4];
                clt_tensor *big = NULL, *x = NULL, *w = NULL, *b = NULL, *out = NULL;
                TU_OK(clt_tensor_create_from_host(ctx, d, 1, &nbig, bx, (size_t)nbig * 2, &big));
                TU_OK(clt_tensor_view(big, off, 4, xs, &x));
                TU_OK(clt_tensor_create_from_host(ctx, d, 4, ws, bw, (size_t)nw * 2, &w));
                TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, 1, &co, hb, (size_t)co * 4, &b));
                TU_OK(clt_tensor_create(ctx, od, 4, os, &out));
                tu_poison(out);
                TU_OK(clt_conv2d(x, w, b, &p, CLT_RELU, 0.0f, out));
                snprintf(label, sizeof label, "%s inputs, %s out, shape %zu, %s", clt_dtype_name(d),
                         clt_dtype_name(od), s, clt_math_mode_name(p.math));
                ref_conv rc = ref_conv_make(xs, ws, &p);
                double *want = malloc((size_t)no * sizeof *want), *scale = malloc((size_t)no * sizeof *scale);
                ck_assert(want && scale);
                ref_conv2d_forward(&rc, hx, hw, hb, CLT_RELU, 0.0, want, scale);
                compare_half(out, od, want, scale, no, (double)(c[1] * c[5] * c[5] + 1), label);
                /* the backward passes from a 16-bit dy */
                float *rdy = random_of(no), *hdy = malloc((size_t)no * sizeof *hdy);
                uint16_t *bdy = malloc((size_t)no * 2);
                ck_assert(hdy && bdy);
                for (int64_t i = 0; i < no; i++)
                    hdy[i] = (float)ref_16bit_value(d, bdy[i] = ref_16bit_from_f32(d, rdy[i]));
                clt_tensor *dy = NULL, *dx = NULL, *dw = NULL;
                TU_OK(clt_tensor_create_from_host(ctx, d, 4, os, bdy, (size_t)no * 2, &dy));
                TU_OK(clt_tensor_create(ctx, od, 4, xs, &dx));
                TU_OK(clt_tensor_create(ctx, od, 4, ws, &dw));
                tu_poison(dx), tu_poison(dw);
                TU_OK(clt_conv2d_backward_input(dy, w, &p, dx));
                TU_OK(clt_conv2d_backward_weight(dy, x, &p, dw));
                double *want2 = malloc((size_t)(nx > nw ? nx : nw) * sizeof *want2);
                double *scale2 = malloc((size_t)(nx > nw ? nx : nw) * sizeof *scale2);
                ck_assert(want2 && scale2);
                ref_conv2d_backward_input(&rc, hdy, hw, want2, scale2);
                snprintf(label, sizeof label, "%s dy, %s dx, shape %zu", clt_dtype_name(d), clt_dtype_name(od), s);
                compare_half(dx, od, want2, scale2, nx, (double)(c[4] * c[5] * c[5]), label);
                ref_conv2d_backward_weight(&rc, hdy, hx, want2, scale2);
                snprintf(label, sizeof label, "%s dy, %s dw, shape %zu", clt_dtype_name(d), clt_dtype_name(od), s);
                compare_half(dw, od, want2, scale2, nw, (double)(os[0] * os[2] * os[3]), label);
                free(want2), free(scale2), free(rdy), free(hdy), free(bdy);
                clt_tensor_free(dy), clt_tensor_free(dx), clt_tensor_free(dw);
                free(want), free(scale), free(bx), free(bw), free(hx), free(hw), free(hb), free(r);
                clt_tensor_free(x), clt_tensor_free(big), clt_tensor_free(w), clt_tensor_free(b), clt_tensor_free(out);
            }

    /* refusals: nothing written (out stays poisoned) */
    int64_t xs[4] = {1, 2, 5, 5}, ws[4] = {3, 2, 3, 3}, os[4] = {1, 3, 3, 3}, three = 3;
    clt_tensor *x16 = NULL, *xb = NULL, *w16 = NULL, *wf = NULL, *b16 = NULL, *o16 = NULL, *of = NULL;
    TU_OK(clt_tensor_create(ctx, CLT_F16, 4, xs, &x16));
    TU_OK(clt_tensor_create(ctx, CLT_BF16, 4, xs, &xb));
    TU_OK(clt_tensor_create(ctx, CLT_F16, 4, ws, &w16));
    TU_OK(clt_tensor_create(ctx, CLT_F32, 4, ws, &wf));
    TU_OK(clt_tensor_create(ctx, CLT_F16, 1, &three, &b16));
    TU_OK(clt_tensor_create(ctx, CLT_BF16, 4, os, &o16));
    TU_OK(clt_tensor_create(ctx, CLT_F32, 4, os, &of));
    tu_poison(of), tu_poison(o16);
    unsigned char got[27 * 4], ff[27 * 4];
    memset(ff, 0xFF, sizeof ff);
    clt_conv2d_params p;
    clt_conv2d_params_init(&p);
    ck_assert_int_eq(clt_conv2d(x16, wf, NULL, &p, CLT_IDENTITY, 0.0f, of), CLT_ERR_INVALID_DTYPE);
    ck_assert_ptr_nonnull(strstr(clt_last_error(ctx), "clt_conv2d: w is f32, expected f16"));
    ck_assert_int_eq(clt_conv2d(xb, w16, NULL, &p, CLT_IDENTITY, 0.0f, of), CLT_ERR_INVALID_DTYPE);
    ck_assert_int_eq(clt_conv2d(x16, w16, NULL, &p, CLT_IDENTITY, 0.0f, o16), CLT_ERR_INVALID_DTYPE);
    ck_assert_ptr_nonnull(strstr(clt_last_error(ctx), "out is bf16, expected f32 or f16"));
    ck_assert_int_eq(clt_conv2d(x16, w16, b16, &p, CLT_IDENTITY, 0.0f, of), CLT_ERR_INVALID_DTYPE);
    ck_assert_ptr_nonnull(strstr(clt_last_error(ctx), "bias is f16, expected f32"));
    ck_assert_int_eq(clt_conv2d(xb, xb, NULL, &p, CLT_IDENTITY, 0.0f, o16), CLT_ERR_INVALID_SHAPE);
    clt_tensor *dyb = NULL, *dyh = NULL, *dwb = NULL, *dwh = NULL, *dxf = NULL;
    TU_OK(clt_tensor_create(ctx, CLT_F32, 4, xs, &dxf));
    TU_OK(clt_tensor_create(ctx, CLT_BF16, 4, os, &dyb));
    TU_OK(clt_tensor_create(ctx, CLT_F16, 4, os, &dyh));
    TU_OK(clt_tensor_create(ctx, CLT_BF16, 4, ws, &dwb));
    TU_OK(clt_tensor_create(ctx, CLT_F16, 4, ws, &dwh));
    tu_poison(dwb);
    ck_assert_int_eq(clt_conv2d_backward_input(dyb, w16, &p, dxf), CLT_ERR_INVALID_DTYPE);
    ck_assert_ptr_nonnull(strstr(clt_last_error(ctx), "clt_conv2d_backward_input: w is f16, expected bf16"));
    ck_assert_int_eq(clt_conv2d_backward_weight(dyh, x16, &p, dwb), CLT_ERR_INVALID_DTYPE);
    ck_assert_ptr_nonnull(strstr(clt_last_error(ctx), "dw is bf16, expected f32 or f16"));
    ck_assert_int_eq(clt_conv2d_backward_weight(dyb, xb, &p, dwh), CLT_ERR_INVALID_DTYPE);
    TU_OK(clt_tensor_read(dwb, got, 54 * 2));
    ck_assert(memcmp(got, ff, 54 * 2) == 0);
    /* an empty batch: dw (16-bit) is zeroed */
    int64_t xe[4] = {0, 2, 5, 5}, ye[4] = {0, 3, 3, 3};
    clt_tensor *xe16 = NULL, *ye16 = NULL;
    TU_OK(clt_tensor_create(ctx, CLT_F16, 4, xe, &xe16));
    TU_OK(clt_tensor_create(ctx, CLT_F16, 4, ye, &ye16));
    tu_poison(dwh);
    TU_OK(clt_conv2d_backward_weight(ye16, xe16, &p, dwh));
    uint16_t zeros[54];
    TU_OK(clt_tensor_read(dwh, zeros, sizeof zeros));
    for (int i = 0; i < 54; i++)
        ck_assert_int_eq(zeros[i], 0);
    clt_tensor_free(dyb), clt_tensor_free(dyh), clt_tensor_free(dwb), clt_tensor_free(dwh), clt_tensor_free(dxf);
    clt_tensor_free(xe16), clt_tensor_free(ye16);
    TU_OK(clt_tensor_read(o16, got, 27 * 2));
    ck_assert(memcmp(got, ff, 27 * 2) == 0);
    TU_OK(clt_tensor_read(of, got, 27 * 4));
    ck_assert(memcmp(got, ff, 27 * 4) == 0);
    clt_tensor_free(x16), clt_tensor_free(xb), clt_tensor_free(w16), clt_tensor_free(wf), clt_tensor_free(b16);
    clt_tensor_free(o16), clt_tensor_free(of);
    tu_context_free(ctx);
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
    tcase_add_test(tc, mma_choice);
    tcase_add_test(tc, wgmma_forward);
    tcase_add_test(tc, wgmma_backward_input);
    tcase_add_test(tc, half_inputs);
    suite_add_tcase(s, tc);
    return s;
}
