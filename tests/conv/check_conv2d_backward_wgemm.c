/* clt_conv2d_backward_weight as one GEMM over the batch (src/ops/conv/conv2d_backward_wgemm.c), forced
 * with CLT_CONVB_WEIGHT_VARIANT=colgemm (on the gfx902 profile a GPU class, as on the H200; on
 * the native POCL profile the switch forces it too), against the double reference on fresh random
 * data: batch 1 and 3, groups 1 and 2, stride 1/2, dilation 2, asymmetric padding, kernel 1/3/5,
 * odd H/W, channels 1, 3, 5, 17; whole batch, one- and two-image chunks (a lowered column cap);
 * our GEMM split in K over a grouped batch; on the gfx902 profile, dy read in place across images
 * (k segments, with and without float4 loads). The profiler's launch counts show which path ran (two
 * launches per chunk; none for the dy copy or columns where the operands are dy and x themselves).
 *
 * Tolerance: dw within 2e-5 * scale (scale = sum of |terms| per element; float sums of at most
 * ~700 terms in any order; a missing term is ~1/K of the scale, far above this). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cltensor_profile.h"
#include "ops/conv/conv2d_backward.h"
#include "ops/common/launch.h"
#include "ref/conv_backward_ref.h"
#include "util/conv_case.h"
#include "util/ew_util.h"
#include "util/test_util.h"

#define DW_TOL 2e-5

/* n, ci, co, h, w, kh, kw, sh, sw, dh, dw, pt, pb, pl, pr, groups */
static const int cases[][16] = {
    {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1},
    {3, 3, 5, 7, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {1, 17, 17, 11, 9, 3, 3, 2, 2, 1, 1, 1, 0, 2, 1, 1},
    {3, 17, 17, 15, 15, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {3, 10, 6, 9, 7, 5, 5, 2, 1, 2, 2, 2, 3, 0, 4, 2},
    {3, 5, 5, 13, 13, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1},
    {1, 4, 6, 7, 5, 1, 1, 2, 2, 1, 1, 0, 1, 1, 0, 2},
    {3, 17, 5, 9, 11, 3, 5, 2, 1, 2, 1, 0, 2, 3, 1, 1},
    {1, 6, 34, 9, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2},
    {3, 1, 3, 5, 3, 3, 3, 1, 2, 2, 1, 2, 1, 0, 1, 1},
    /* Ho*Wo a multiple of 4: dy read in place with float4 loads across images (k segments) */
    {3, 6, 10, 8, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {3, 8, 12, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2},
};
#define N_CASES (int)(sizeof cases / sizeof cases[0])

static clt_tensor *tensor(clt_context *ctx, const int64_t *s, const float *data, int64_t n)
{
    clt_tensor *t = NULL;
    if (data)
        TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, 4, s, data, (size_t)n * sizeof(float), &t));
    else
        TU_OK(clt_tensor_create(ctx, CLT_F32, 4, s, &t));
    return t;
}

/* Launches of the profiler rows of clt_conv2d_backward_weight whose impl starts with prefix. */
/* dw twice (beta 0 must overwrite; split-K counters back at 0) against the reference; returns the
 * column-kernel launches per call. */
static uint64_t run_case(clt_context *ctx, const int *c, const char *what)
{
    conv_case s;
    conv_case_make(c, &s);
    char label[200];
    snprintf(label, sizeof label,
             "%s x [%d,%d,%d,%d] w [%d,%d,%d,%d] s %d,%d d %d,%d pad %d,%d,%d,%d g %d", what, c[0],
             c[1], c[3], c[4], c[2], c[1] / c[15], c[5], c[6], c[7], c[8], c[9], c[10], c[11],
             c[12], c[13], c[14], c[15]);
    float *x = ew_random(s.nx, -1.0f, 1.0f), *dy = ew_random(s.ny, -1.0f, 1.0f),
          *got = malloc((size_t)s.nw * sizeof *got);
    double *ref = malloc((size_t)s.nw * sizeof *ref), *scale = malloc((size_t)s.nw * sizeof *scale);
    clt_tensor *tx = tensor(ctx, s.xs, x, s.nx), *tdy = tensor(ctx, s.ys, dy, s.ny);
    clt_tensor *tdw = tensor(ctx, s.ws, NULL, 0);
    ref_conv2d_backward_weight(&s.rc, dy, x, ref, scale);
    TU_OK(clt_profile_reset(ctx));
    for (int rep = 0; rep < 2; rep++) {
        tu_poison(tdw);
        TU_OK(clt_conv2d_backward_weight(tdy, tx, &s.p, tdw));
        TU_OK(clt_tensor_read(tdw, got, (size_t)s.nw * sizeof(float)));
        for (int64_t i = 0; i < s.nw; i++)
            ck_assert_msg(fabs((double)got[i] - ref[i]) <= DW_TOL * scale[i] + 1e-30 &&
                              !isnan(got[i]),
                          "%s dw[%lld] (call %d): got %.9g, expected %.9g (scale %.3g)", label,
                          (long long)i, rep + 1, (double)got[i], ref[i], scale[i]);
    }
    ck_assert_msg(tu_launches(ctx, "clt_conv2d_backward_weight", "conv_bwd_weight") == 0,
                  "%s: the tiled kernel ran", label);
    uint64_t cols = tu_launches(ctx, "clt_conv2d_backward_weight", "conv_dw_columns");
    clt_tensor_free(tx), clt_tensor_free(tdy), clt_tensor_free(tdw);
    free(x), free(dy), free(got), free(ref), free(scale);
    return cols / 2;
}

static clt_context *profiled_context(void)
{
    clt_context_options o;
    clt_context_options_init(&o);
    o.profiler = 1;
    return tu_context_with(&o);
}

/* One prep launch for the whole batch; none for one image of a 1x1 / stride 1 / unpadded layer. */
START_TEST(whole_batch)
{
    setenv("CLT_CONVB_WEIGHT_VARIANT", "colgemm", 1); /* Check forks per test */
    clt_context *ctx = profiled_context();
    for (int i = 0; i < N_CASES; i++) {
        const int *c = cases[i];
        int identity = c[0] == 1 && c[5] == 1 && c[6] == 1 && c[7] == 1 && c[8] == 1 &&
                       !(c[11] | c[12] | c[13] | c[14]);
        uint64_t preps = run_case(ctx, c, "colgemm");
        ck_assert_msg(preps == (identity ? 0u : 1u), "case %d: %llu column launches per call", i,
                      (unsigned long long)preps);
    }
    tu_context_free(ctx);
}
END_TEST

/* Batch-3 cases in chunks: one image per chunk (dy and, for 1x1, x read in place), then two
 * images and one (the dy copy in a chunk, beta 1 after the first). */
START_TEST(chunks)
{
    setenv("CLT_CONVB_WEIGHT_VARIANT", "colgemm", 1);
    clt_context *ctx = profiled_context();
    for (int i = 0; i < N_CASES; i++) {
        const int *c = cases[i];
        if (c[0] != 3)
            continue;
        conv_case s;
        conv_case_make(c, &s);
        int identity =
            c[5] == 1 && c[6] == 1 && c[7] == 1 && c[8] == 1 && !(c[11] | c[12] | c[13] | c[14]);
        clt__convb_col_cap_bytes = 1;
        uint64_t preps = run_case(ctx, c, "colgemm, 1-image chunks");
        ck_assert_uint_eq(preps, identity ? 0 : 3);
        int64_t rows = s.xs[1] * s.ws[2] * s.ws[3] + s.ws[0],
                k2 = (2 * s.ys[2] * s.ys[3] + 3) / 4 * 4;
        clt__convb_col_cap_bytes = (uint64_t)(rows * k2) * sizeof(float);
        preps = run_case(ctx, c, "colgemm, 2+1-image chunks");
        ck_assert_uint_eq(preps, identity ? 1 : 2);
    }
    tu_context_free(ctx);
}
END_TEST

/* Our GEMM split in K (forced: POCL has too few compute units to split by itself) over groups. */
START_TEST(split_k_groups)
{
    setenv("CLT_CONVB_WEIGHT_VARIANT", "colgemm", 1);
    setenv("CLT_GEMM_VARIANT", "tiled:0:3", 1);
    clt_context *ctx = profiled_context();
    run_case(ctx, cases[4], "colgemm, GEMM split in 3");
    run_case(ctx, cases[8], "colgemm, GEMM split in 3");
    tu_context_free(ctx);
}
END_TEST

/* Forced tiled: the old kernel, no column launch. */
START_TEST(variant_choice)
{
    setenv("CLT_CONVB_WEIGHT_VARIANT", "tiled", 1);
    clt_context *ctx = profiled_context();
    conv_case s;
    conv_case_make(cases[3], &s);
    float *x = ew_random(s.nx, -1.0f, 1.0f), *dy = ew_random(s.ny, -1.0f, 1.0f);
    clt_tensor *tx = tensor(ctx, s.xs, x, s.nx), *tdy = tensor(ctx, s.ys, dy, s.ny);
    clt_tensor *tdw = tensor(ctx, s.ws, NULL, 0);
    TU_OK(clt_profile_reset(ctx));
    if (!clt__cpu_style(ctx)) { /* CPU class: the GPU kernel would cost a long cold compile */
        TU_OK(clt_conv2d_backward_weight(tdy, tx, &s.p, tdw));
        ck_assert_uint_eq(tu_launches(ctx, "clt_conv2d_backward_weight", "conv_dw_columns"), 0);
        ck_assert_uint_eq(tu_launches(ctx, "clt_conv2d_backward_weight", "conv_bwd_weight_tiled"), 1);
    }
    clt_tensor_free(tx), clt_tensor_free(tdy), clt_tensor_free(tdw);
    free(x), free(dy);
    tu_context_free(ctx);
}
END_TEST

static int suits(int64_t n, int64_t ci, int64_t h, int64_t co, int64_t k, int64_t stride,
                 int64_t groups)
{
    int64_t xs[4] = {n, ci, h, h}, ws[4] = {co, ci / groups, k, k};
    clt_conv2d_params p;
    clt_conv2d_params_init(&p);
    p.stride_h = p.stride_w = stride;
    p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = k / 2;
    p.groups = groups;
    clt__conv_geom g;
    ck_assert_int_eq(clt__conv_geom_make(NULL, "test", xs, ws, &p, &g), CLT_SUCCESS);
    return clt__convb_weight_gemm_suits(&g);
}

/* The automatic choice's geometry test (taken on the NVIDIA class only): colgemm for the two big
 * H200 bench layers, tiled for n1c64h56o64k3s1, depthwise, and columns over the cap. */
START_TEST(auto_choice)
{
    ck_assert(suits(8, 64, 56, 64, 3, 1, 1));
    ck_assert(suits(8, 3, 224, 64, 7, 2, 1));
    ck_assert(suits(32, 128, 28, 128, 3, 1, 1));
    ck_assert(!suits(1, 64, 56, 64, 3, 1, 1));
    ck_assert(!suits(8, 64, 56, 64, 3, 1, 64));   /* depthwise: the direct kernel */
    clt__convb_col_cap_bytes = (uint64_t)1 << 20; /* one image's columns no longer fit */
    ck_assert(!suits(8, 64, 56, 64, 3, 1, 1));
}
END_TEST

Suite *conv2d_backward_wgemm_suite(void)
{
    Suite *s = suite_create("conv2d_backward_wgemm");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, whole_batch);
    tcase_add_test(tc, chunks);
    tcase_add_test(tc, split_k_groups);
    tcase_add_test(tc, variant_choice);
    tcase_add_test(tc, auto_choice);
    suite_add_tcase(s, tc);
    return s;
}
