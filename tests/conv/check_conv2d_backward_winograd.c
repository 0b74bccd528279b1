/* clt_conv2d_backward_weight by Winograd F(4x4, 3x3) (CLT_CONVB_WEIGHT_VARIANT=winograd,
 * src/ops/conv/conv2d_backward_winograd.c) against the double reference (ref/conv_backward_ref.c) on
 * fresh random data in [-1, 1):
 *  - odd shapes: H, W in {1, 5, 7, 13} and 30x17, per-side padding 0..2 (asymmetric), Ci, Co in
 *    {1, 3, 5, 16, 33}, batch 1 and 3 (partial edge blocks everywhere); each case twice (beta 0
 *    must overwrite M and dw; dw poisoned first); tensor views at non-zero offsets;
 *  - the batch in chunks (cap lowered: 1-image chunks, then 2 + 1), the GEMM's beta 1 path;
 *  - our GEMM split in K (as on the H200), also with beta 1;
 *  - the profiler's launch counts: one transform per chunk, one output, no tiled kernel;
 *  - no room for the workspace under a memory cap: the fallback runs, same result;
 *  - a geometry it does not take (5x5, stride 2, groups 2): CLT_ERR_UNSUPPORTED with a message
 *    naming the call, nothing enqueued, dw untouched;
 *  - the automatic choice's geometry test (taken on the NVIDIA class only).
 * Grad-bias is a separate call (clt_conv2d_backward_bias): nothing to check here.
 * Tolerance per dw element, the first-order rounding bound of the Winograd path:
 *   |dw - ref| <= TOL_W * eps * ts,
 *   ts = |G^T| (sum over blocks of (|A| |Dy| |A|^T) .* (|B^T| |D| |B|)) |G|
 * (ref/winograd_dw_ref.c: every transformed value, GEMM product and output sum rounds relative to
 * its part of ts; a per-output bound from sum |dy||x| alone failed by 25x at a 1-row
 * image with padding 2, where ky = 0 sees only padding and its exact zero comes from cancellation).
 * Measured on POCL (18 runs x 2 tests x both profiles, blocks per call T <= 120): the largest
 * err / (eps ts) was 0.222; TOL_W = 1 leaves a 4.5x margin. Hand mutations that fail (shapes and
 * chunks): WINO_GT's 1/24 -> 1/12, WINO_A's o5 = d -> c, (co, ci) swapped in the output kernel's
 * store, dy's past-the-edge mask dropped; beta always 0 in the GEMM fails chunks. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cltensor_profile.h"
#include "ops/conv/conv2d_backward.h"
#include "ref/conv_backward_ref.h"
#include "ref/winograd_dw_ref.h"
#include "util/conv_case.h"
#include "util/ew_util.h"
#include "util/test_util.h"

#define TOL_W 1.0
#define EPS 1.1920928955078125e-7
#define WHO "clt_conv2d_backward_weight"

/* n, ci, co, h, w, pt, pb, pl, pr (3x3, stride 1) */
static const int cases[][9] = {
    {1, 1, 1, 1, 1, 1, 1, 1, 1},     {3, 3, 5, 5, 7, 0, 0, 1, 1},    {1, 5, 3, 7, 5, 2, 1, 0, 2},
    {3, 16, 33, 13, 13, 1, 1, 1, 1}, {1, 33, 16, 13, 7, 0, 2, 2, 0}, {3, 5, 1, 1, 13, 2, 0, 1, 1},
    {3, 33, 5, 30, 17, 1, 2, 0, 1},  {1, 3, 16, 7, 13, 2, 2, 2, 2},
};
#define N_CASES (int)(sizeof cases / sizeof cases[0])

static double worst_ratio; /* largest err / unit, printed under WG_MEASURE=1 */

/* The suite's 9-int row as the shared 16-int conv case (3x3, stride 1, dilation 1, one group). */
static void shape_of(const int *c, conv_case *s)
{
    const int row[16] = {c[0], c[1], c[2], c[3], c[4], 3, 3, 1, 1, 1, 1, c[5], c[6], c[7], c[8], 1};
    conv_case_make(row, s);
}

/* A tensor of shape s (data or uninitialised), a view off elements into a larger base when off > 0.
 */
static clt_tensor *make(clt_context *ctx, const int64_t *s, const float *data, int64_t n,
                        int64_t off, clt_tensor **base)
{
    int64_t total = n + 2 * off;
    float *fill = calloc((size_t)total, sizeof *fill);
    if (data)
        memcpy(fill + off, data, (size_t)n * sizeof(float));
    TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, 1, &total, fill, (size_t)total * sizeof(float),
                                      base));
    free(fill);
    clt_tensor *t = NULL;
    TU_OK(clt_tensor_view(*base, off, 4, s, &t));
    return t;
}

/* dw twice against the reference (views at off elements when off > 0); returns the transform
 * launches per call. */
static uint64_t run_case(clt_context *ctx, const int *c, int64_t off, const char *what)
{
    conv_case s;
    shape_of(c, &s);
    char label[200];
    snprintf(label, sizeof label, "%s x [%d,%d,%d,%d] co %d pad %d,%d,%d,%d off %lld", what, c[0],
             c[1], c[3], c[4], c[2], c[5], c[6], c[7], c[8], (long long)off);
    float *x = ew_random(s.nx, -1.0f, 1.0f), *dy = ew_random(s.ny, -1.0f, 1.0f);
    float *got = malloc((size_t)s.nw * sizeof *got);
    double *ref = malloc((size_t)s.nw * sizeof *ref), *scale = malloc((size_t)s.nw * sizeof *scale);
    double *ts = malloc((size_t)s.nw * sizeof *ts);
    clt_tensor *bx, *bdy, *bdw;
    clt_tensor *tx = make(ctx, s.xs, x, s.nx, off, &bx),
               *tdy = make(ctx, s.ys, dy, s.ny, off, &bdy);
    clt_tensor *tdw = make(ctx, s.ws, NULL, s.nw, off, &bdw);
    ref_conv2d_backward_weight(&s.rc, dy, x, ref, scale);
    ref_winograd_dw_scale(&s.rc, dy, x, ts);
    TU_OK(clt_profile_reset(ctx));
    for (int rep = 0; rep < 2; rep++) {
        tu_poison(tdw);
        TU_OK(clt_conv2d_backward_weight(tdy, tx, &s.p, tdw));
        TU_OK(clt_tensor_read(tdw, got, (size_t)s.nw * sizeof(float)));
        for (int64_t i = 0; i < s.nw; i++) {
            double unit = EPS * ts[i], err = fabs((double)got[i] - ref[i]);
            if (err / unit > worst_ratio)
                worst_ratio = err / unit;
            ck_assert_msg(err <= TOL_W * unit && !isnan(got[i]),
                          "%s dw[%lld] (call %d): got %.9g, expected %.9g (unit %.3g)", label,
                          (long long)i, rep + 1, (double)got[i], ref[i], unit);
        }
    }
    ck_assert_msg(tu_launches(ctx, WHO, "conv_bwd_weight") == 0, "%s: the tiled kernel ran", label);
    ck_assert_uint_eq(tu_launches(ctx, WHO, "conv2d_winograd_dw_output"), 2);
    uint64_t transforms = tu_launches(ctx, WHO, "conv2d_winograd_dw_transform");
    clt_tensor_free(tx), clt_tensor_free(tdy), clt_tensor_free(tdw);
    clt_tensor_free(bx), clt_tensor_free(bdy), clt_tensor_free(bdw);
    free(x), free(dy), free(got), free(ref), free(scale), free(ts);
    return transforms / 2;
}

static void report_ratio(void)
{
    if (getenv("WG_MEASURE"))
        printf("conv2d_backward_winograd: worst err / unit %.3f\n", worst_ratio);
}

static clt_context *profiled(uint64_t memory_limit)
{
    clt_context_options o;
    clt_context_options_init(&o);
    o.profiler = 1;
    o.memory_limit = memory_limit;
    if (memory_limit) /* the GPU-class fallback, the tiled kernel (the CPU class's needs room too)
                       */
        o.profile = "gfx902";
    return tu_context_with(&o);
}

/* The whole batch in one chunk: one transform launch per call; views on the odd cases. */
START_TEST(shapes)
{
    setenv("CLT_CONVB_WEIGHT_VARIANT", "winograd", 1); /* Check forks per test */
    clt_context *ctx = profiled(0);
    for (int i = 0; i < N_CASES; i++)
        ck_assert_uint_eq(run_case(ctx, cases[i], i % 2 ? 7 : 0, "winograd"), 1);
    report_ratio();
    tu_context_free(ctx);
}
END_TEST

/* Batch-3 cases in chunks: one image each, then two + one (beta 1 after the first chunk). */
START_TEST(chunks)
{
    setenv("CLT_CONVB_WEIGHT_VARIANT", "winograd", 1);
    clt_context *ctx = profiled(0);
    for (int i = 0; i < N_CASES; i++) {
        const int *c = cases[i];
        if (c[0] != 3)
            continue;
        conv_case s;
        shape_of(c, &s);
        uint64_t tpi = (uint64_t)((s.ys[2] + 3) / 4 * ((s.ys[3] + 3) / 4));
        uint64_t m = 36u * (uint64_t)(c[2] * ((c[1] + 3) / 4 * 4));
        clt__convb_winograd_cap_bytes = 1;
        ck_assert_uint_eq(run_case(ctx, c, 0, "winograd, 1-image chunks"), 3);
        clt__convb_winograd_cap_bytes = (m + 2 * 36u * (uint64_t)(c[1] + c[2]) * tpi) * 4;
        ck_assert_uint_eq(run_case(ctx, c, 0, "winograd, 2+1-image chunks"), 2);
    }
    report_ratio();
    tu_context_free(ctx);
}
END_TEST

/* Our GEMM split in K (forced: POCL has too few compute units to split by itself; on the H200 the
 * 36 tiles of 64x64 split on their own): K = 96 blocks in 3 pieces, then 1-image chunks of 32 in 2
 * (K slices of 16; beta 1 with the split). */
START_TEST(split_k)
{
    setenv("CLT_CONVB_WEIGHT_VARIANT", "winograd", 1);
    setenv("CLT_GEMM_VARIANT", "tiled:0:3", 1);
    clt_context *ctx = profiled(0);
    ck_assert_uint_eq(run_case(ctx, cases[6], 0, "winograd, GEMM split in 3"), 1);
    clt__convb_winograd_cap_bytes = 1;
    ck_assert_uint_eq(run_case(ctx, cases[6], 0, "winograd, GEMM split, 1-image chunks"), 3);
    ck_assert_uint_eq(tu_launches(ctx, WHO, "gemm_tiled"), 6);
    tu_context_free(ctx);
}
END_TEST

/* No room for the workspace under a memory cap (U, V, M ~1.5 MB here): the caller's fallback. */
START_TEST(no_room_falls_back)
{
    setenv("CLT_CONVB_WEIGHT_VARIANT", "winograd", 1);
    clt_context *ctx = profiled((uint64_t)1 << 20);
    static const int c[9] = {1, 32, 32, 48, 48, 1, 1, 1, 1};
    conv_case s;
    shape_of(c, &s);
    float *x = ew_random(s.nx, -1.0f, 1.0f), *dy = ew_random(s.ny, -1.0f, 1.0f);
    float *got = malloc((size_t)s.nw * sizeof *got);
    double *ref = malloc((size_t)s.nw * sizeof *ref), *scale = malloc((size_t)s.nw * sizeof *scale);
    clt_tensor *bx, *bdy, *bdw;
    clt_tensor *tx = make(ctx, s.xs, x, s.nx, 0, &bx), *tdy = make(ctx, s.ys, dy, s.ny, 0, &bdy);
    clt_tensor *tdw = make(ctx, s.ws, NULL, s.nw, 0, &bdw);
    ref_conv2d_backward_weight(&s.rc, dy, x, ref, scale);
    TU_OK(clt_profile_reset(ctx));
    tu_poison(tdw);
    TU_OK(clt_conv2d_backward_weight(tdy, tx, &s.p, tdw));
    TU_OK(clt_tensor_read(tdw, got, (size_t)s.nw * sizeof(float)));
    for (int64_t i = 0; i < s.nw; i++)
        ck_assert_msg(fabs((double)got[i] - ref[i]) <= 1e-4 * scale[i] && !isnan(got[i]),
                      "fallback dw[%lld]: got %.9g, expected %.9g", (long long)i, (double)got[i],
                      ref[i]);
    ck_assert_uint_eq(tu_launches(ctx, WHO, "conv2d_winograd_dw"), 0);
    clt_tensor_free(tx), clt_tensor_free(tdy), clt_tensor_free(tdw);
    clt_tensor_free(bx), clt_tensor_free(bdy), clt_tensor_free(bdw);
    free(x), free(dy), free(got), free(ref), free(scale);
    tu_context_free(ctx);
}
END_TEST

/* Geometries it does not take: UNSUPPORTED from the function itself, naming the call, nothing
 * enqueued, dw as it was. */
START_TEST(not_applicable)
{
    clt_context *ctx = profiled(0);
    int64_t xs[4] = {1, 4, 9, 9};
    int64_t shapes[3][4] = {{2, 4, 5, 5}, {2, 4, 3, 3}, {2, 2, 3, 3}};
    for (int i = 0; i < 3; i++) {
        clt_conv2d_params p;
        clt_conv2d_params_init(&p);
        p.stride_h = i == 1 ? 2 : 1;
        p.groups = i == 2 ? 2 : 1;
        clt__conv_geom g;
        ck_assert_int_eq(clt__conv_geom_make(NULL, "test", xs, shapes[i], &p, &g), CLT_SUCCESS);
        int64_t ys[4] = {1, 2, g.ho, g.wo}, nw = 2 * shapes[i][1] * shapes[i][2] * shapes[i][3];
        clt_tensor *tx, *tdy, *tdw;
        TU_OK(clt_tensor_create(ctx, CLT_F32, 4, xs, &tx));
        TU_OK(clt_tensor_create(ctx, CLT_F32, 4, ys, &tdy));
        TU_OK(clt_tensor_create(ctx, CLT_F32, 4, shapes[i], &tdw));
        TU_OK(clt_tensor_fill(tdw, 3.0));
        TU_OK(clt_profile_reset(ctx));
        TU_EXPECT_STATUS(clt__convb_weight_winograd(ctx, &g, tdy, tx, tdw, WHO),
                         CLT_ERR_UNSUPPORTED);
        TU_EXPECT_MESSAGE(clt_last_error(ctx), WHO);
        TU_EXPECT_MESSAGE(clt_last_error(ctx), "Winograd");
        ck_assert_uint_eq(tu_launches(ctx, NULL, ""), 0);
        float got[2 * 4 * 25];
        TU_OK(clt_tensor_read(tdw, got, (size_t)nw * sizeof(float)));
        for (int64_t j = 0; j < nw; j++)
            ck_assert_float_eq(got[j], 3.0f);
        clt_tensor_free(tx), clt_tensor_free(tdy), clt_tensor_free(tdw);
    }
    tu_context_free(ctx);
}
END_TEST

static int suits(clt_context *ctx, int64_t n, int64_t ci, int64_t h, int64_t co, int64_t k,
                 int64_t stride)
{
    int64_t xs[4] = {n, ci, h, h}, ws[4] = {co, ci, k, k};
    clt_conv2d_params p;
    clt_conv2d_params_init(&p);
    p.stride_h = p.stride_w = stride;
    p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = k / 2;
    clt__conv_geom g;
    ck_assert_int_eq(clt__conv_geom_make(NULL, "test", xs, ws, &p, &g), CLT_SUCCESS);
    return clt__convb_weight_winograd_suits(ctx, &g);
}

/* The forward's thresholds (every class's table has them): Ci, Co >= 32, >= 1024 pixels. */
START_TEST(auto_choice)
{
    clt_context *ctx = tu_context();
    ck_assert(suits(ctx, 8, 64, 56, 64, 3, 1));
    ck_assert(suits(ctx, 32, 128, 28, 128, 3, 1));
    ck_assert(!suits(ctx, 8, 16, 56, 64, 3, 1));
    ck_assert(!suits(ctx, 8, 64, 56, 16, 3, 1));
    ck_assert(!suits(ctx, 8, 64, 56, 64, 3, 2));
    ck_assert(!suits(ctx, 8, 64, 56, 64, 5, 1));
    ck_assert(!suits(ctx, 1, 64, 16, 64, 3, 1)); /* 256 pixels */
    tu_context_free(ctx);
}
END_TEST

Suite *conv2d_backward_winograd_suite(void)
{
    Suite *s = suite_create("conv2d_backward_winograd");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, shapes);
    tcase_add_test(tc, chunks);
    tcase_add_test(tc, split_k);
    tcase_add_test(tc, no_room_falls_back);
    tcase_add_test(tc, not_applicable);
    tcase_add_test(tc, auto_choice);
    suite_add_tcase(s, tc);
    return s;
}
