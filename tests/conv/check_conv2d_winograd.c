/* clt_conv2d through Winograd F(4x4, 3x3) (CLT_CONV_VARIANT=winograd, conv2d_winograd.c) against
 * the double reference (ref/conv_ref.c) on fresh random data in [-1, 1):
 *  - a table of odd shapes: H, W in {1, 2, 5, 7, 13} (square and not), per-side padding 0..2,
 *    Ci, Co in {1, 3, 5, 16, 33}, batch 1 and 3, bias or not (partial edge blocks everywhere);
 *  - every activation once; tensor views at non-zero offsets (x, w, bias, out); a batch split
 *    into one-image chunks (workspace cap forced tiny); a shape past the GEMM's tiles;
 *  - no room for the workspace under a memory cap: the implicit kernel instead;
 *  - rows of more than 8 blocks (the CPU kernels' strips of 8 blocks); the profiler's kernel names
 *    show that the native run on POCL exercises the CPU-style kernels, gfx902 the GPU ones;
 *  - the automatic choice under both profiles (gfx902 = a GPU-class table, native = the CPU class
 *    on POCL): Winograd for qualifying layers (checked through the profiler's kernel names too)
 *    and not for stride 2, dilation 2, groups 2, 5x5, the small seed layer or Ci 8.
 * The matrices are not checked against a table: a wrong one fails every comparison.
 * Tolerance per output element (F(4,3) in f32 is less exact than a direct sum: the input transform
 * scales a 6x6 patch by up to 10 per axis, the output transform's rows sum to up to 10 again, and
 * taps outside an output's own window cancel only in exact arithmetic):
 *   |out - ref| <= TOL_W * (Ci + 8) * eps * (scale + bscale / 36) * TOL_ACT_GAIN + TOL_REL * eps * |ref|
 * scale = sum |x||w| + |bias| of the output (the reference's); bscale = sum over c of the 6x6
 * patch's sum |x| times sum |w[k][c]| (block_scale: /36 makes it about scale inside the image, and
 * it keeps the bound honest at edges where the window is mostly padding but the patch is not).
 * Measured on POCL (15 seeds x both profiles): the largest err / ((Ci + 8) eps (scale +
 * bscale/36)) was 2.35; TOL_W = 8 leaves a 3.4x margin (~4e-5 of 2*scale at Ci = 33). A per-output
 * bound without bscale needed ~200x that at a 1-row image with padding 2 (measured). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cltensor_profile.h"
#include "ops/conv/conv2d.h"
#include "ops/common/launch.h"
#include "ref/conv_ref.h"
#include "util/gemm_test.h"
#include "util/test_util.h"

#define TOL_W 8.0
#define TOL_ACT_GAIN 1.2
#define TOL_REL 8.0
#define EPS 1.1920928955078125e-7

typedef struct wg_case {
    int64_t n, ci, h, w, co;
    clt_conv2d_params p;
    int bias;
    clt_unary_op act;
    int64_t off; /* > 0: every tensor is a view this many elements into a larger one */
} wg_case;

static double worst_ratio; /* largest err / unit (below), printed under WG_MEASURE=1 */

static clt_tensor *make(clt_context *ctx, int ndim, const int64_t *s, const float *h, int64_t off,
                        clt_tensor **base)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= s[i];
    int64_t total = n + 2 * off;
    float *fill = gt_random(total);
    if (h)
        memcpy(fill + off, h, (size_t)n * sizeof(float));
    TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, 1, &total, fill, (size_t)total * sizeof(float),
                                      base));
    free(fill);
    clt_tensor *t = NULL;
    TU_OK(clt_tensor_view(*base, off, ndim, s, &t));
    return t;
}

/* sum over c of (sum |x| over the 6x6 input patch of output i's 4x4 block) * (sum |w[k][c]|):
 * every product of the block's transformed tiles scales with it, and the output transform cancels
 * the taps outside output i's own window exactly only in exact arithmetic (an output whose window
 * is mostly padding still carries the rounding of its neighbours' taps). */
static double block_scale(const wg_case *c, const float *x, const float *w, int64_t ho, int64_t wo,
                          int64_t i)
{
    int64_t ox = i % wo, oy = i / wo % ho, k = i / (wo * ho) % c->co, n = i / (wo * ho * c->co);
    int64_t y0 = oy / 4 * 4 - c->p.pad_top, x0 = ox / 4 * 4 - c->p.pad_left;
    double s = 0;
    for (int64_t ci = 0; ci < c->ci; ci++) {
        double sx = 0, sw = 0;
        for (int64_t y = y0 < 0 ? 0 : y0; y < y0 + 6 && y < c->h; y++)
            for (int64_t xx = x0 < 0 ? 0 : x0; xx < x0 + 6 && xx < c->w; xx++)
                sx += fabs(x[((n * c->ci + ci) * c->h + y) * c->w + xx]);
        for (int j = 0; j < 9; j++)
            sw += fabs(w[(k * c->ci + ci) * 9 + j]);
        s += sx * sw;
    }
    return s;
}

static void wg_check(clt_context *ctx, const wg_case *c, const char *label)
{
    int64_t xs[4] = {c->n, c->ci, c->h, c->w}, ws[4] = {c->co, c->ci / c->p.groups, 3, 3};
    ref_conv rc = ref_conv_make(xs, ws, &c->p);
    int64_t ho = ref_conv_ho(&rc), wo = ref_conv_wo(&rc), os[4] = {c->n, c->co, ho, wo};
    ck_assert_msg(ho >= 1 && wo >= 1, "%s: bad test geometry", label);
    int64_t nx = xs[0] * xs[1] * xs[2] * xs[3], nw = ws[0] * ws[1] * 9, no = c->n * c->co * ho * wo;
    float *hx = gt_random(nx), *hw = gt_random(nw), *hb = c->bias ? gt_random(c->co) : NULL;
    clt_tensor *bx, *bw, *bo, *bb = NULL;
    clt_tensor *x = make(ctx, 4, xs, hx, c->off, &bx), *w = make(ctx, 4, ws, hw, c->off, &bw);
    clt_tensor *out = make(ctx, 4, os, NULL, c->off, &bo);
    clt_tensor *b = c->bias ? make(ctx, 1, &c->co, hb, c->off, &bb) : NULL;
    float *before = gt_read(bo);
    tu_poison(out);
    clt_status st = clt_conv2d(x, w, b, &c->p, c->act, 0.0f, out);
    ck_assert_msg(st == CLT_SUCCESS, "%s: %s: %s", label, clt_status_string(st), clt_last_error(ctx));
    float *all = gt_read(bo), *got = all + c->off;
    double *ref = malloc((size_t)no * sizeof(double)), *scale = malloc((size_t)no * sizeof(double));
    ref_conv2d_forward(&rc, hx, hw, hb, c->act, 0.0, ref, scale);
    for (int64_t i = 0; i < no; i++) {
        double unit = (double)(c->ci + 8) * EPS * (scale[i] + block_scale(c, hx, hw, ho, wo, i) / 36);
        double tol = TOL_W * unit * TOL_ACT_GAIN + TOL_REL * EPS * fabs(ref[i]);
        double err = fabs((double)got[i] - ref[i]);
        if (unit > 0 && err / unit > worst_ratio)
            worst_ratio = err / unit;
        ck_assert_msg(err <= tol, "%s: out[%lld] = %.9g, reference %.9g (error %.3g > %.3g); x [%lld, "
                      "%lld, %lld, %lld] Co %lld pad %d,%d,%d,%d", label, (long long)i,
                      (double)got[i], ref[i], err, tol, (long long)c->n, (long long)c->ci,
                      (long long)c->h, (long long)c->w, (long long)c->co, c->p.pad_top,
                      c->p.pad_bottom, c->p.pad_left, c->p.pad_right);
    }
    for (int64_t i = 0; i < c->off; i++) /* the view's neighbours are untouched */
        ck_assert_msg(all[i] == before[i] && all[c->off + no + i] == before[c->off + no + i],
                      "%s: wrote outside the output view", label);
    if (getenv("WG_MEASURE"))
        printf("%s: worst err / unit so far %.3f\n", label, worst_ratio);
    free(all), free(before), free(ref), free(scale), free(hx), free(hw), free(hb);
    clt_tensor_free(x), clt_tensor_free(w), clt_tensor_free(out), clt_tensor_free(b);
    clt_tensor_free(bx), clt_tensor_free(bw), clt_tensor_free(bo), clt_tensor_free(bb);
}

/* A context with our kernels and Winograd forced (the variable is read per call). */
static clt_context *wg_context(const char *profile, int profiler)
{
    setenv("CLT_CONV_VARIANT", "winograd", 1);
    clt_context_options o;
    clt_context_options_init(&o);
    o.conv_impl = "tiled";
    o.profile = profile;
    o.profiler = profiler;
    return tu_context_with(&o);
}

/* The transform and output kernels this context runs: CPU style (conv2d_winograd_cpu.cl) on the
 * CPU class, else conv2d_winograd.cl (GPU classes, and the gfx902 profile on any device). */
static const char *transform_kernel(clt_context *ctx)
{
    return clt__cpu_style(ctx) ? "conv2d_winograd_cpu_transform" : "conv2d_winograd_transform";
}

static const char *output_kernel(clt_context *ctx)
{
    return clt__cpu_style(ctx) ? "conv2d_winograd_cpu_output" : "conv2d_winograd_output";
}

static wg_case plain(int64_t n, int64_t ci, int64_t h, int64_t w, int64_t co, int pad)
{
    wg_case c;
    memset(&c, 0, sizeof c);
    clt_conv2d_params_init(&c.p);
    c.n = n, c.ci = ci, c.h = h, c.w = w, c.co = co;
    c.p.pad_top = c.p.pad_bottom = c.p.pad_left = c.p.pad_right = pad;
    c.act = CLT_IDENTITY;
    return c;
}

static const int64_t dims[] = {1, 2, 5, 7, 13};
static const int64_t chans[] = {1, 3, 5, 16, 33};

/* Case i takes each parameter from its list at a different rate; padding grows until Ho, Wo >= 1. */
static wg_case table_case(int i)
{
    wg_case c = plain(i % 3 == 1 ? 3 : 1, chans[(i / 2 + i) % 5], dims[i % 5], dims[(i / 5 + 2 * i) % 5],
                      chans[(i / 3 + 2 * i + 1) % 5], 0);
    c.p.pad_top = i % 3, c.p.pad_bottom = (i / 3) % 3;
    c.p.pad_left = (i / 2 + 1) % 3, c.p.pad_right = (i / 4 + i) % 3;
    while (c.h + c.p.pad_top + c.p.pad_bottom < 3)
        c.p.pad_bottom++;
    while (c.w + c.p.pad_left + c.p.pad_right < 3)
        c.p.pad_right++;
    c.bias = i % 2;
    return c;
}

#define N_TABLE 25

START_TEST(table)
{
    char *saved = tu_env_save("CLT_CONV_VARIANT");
    clt_context *ctx = wg_context(NULL, 1);
    for (int i = 0; i < N_TABLE; i++) {
        wg_case c = table_case(i);
        char label[48];
        snprintf(label, sizeof label, "winograd table case %d", i);
        wg_check(ctx, &c, label);
    }
    /* every case ran this class's kernels (the CPU class: the CPU-style ones) */
    ck_assert_int_eq(tu_launches(ctx, NULL, transform_kernel(ctx)), N_TABLE);
    ck_assert_int_eq(tu_launches(ctx, NULL, output_kernel(ctx)), N_TABLE);
    tu_context_free(ctx);
    tu_env_restore("CLT_CONV_VARIANT", saved);
}
END_TEST

/* Every activation with bias; views at odd offsets; one-image chunks; past the GEMM tiles. */
START_TEST(epilogue_views_chunks)
{
    static const clt_unary_op acts[] = {CLT_IDENTITY, CLT_RELU,    CLT_GELU_ERF, CLT_GELU_TANH,
                                        CLT_TANH,     CLT_SIGMOID, CLT_SILU};
    char *saved = tu_env_save("CLT_CONV_VARIANT");
    clt_context *ctx = wg_context(NULL, -1);
    for (int a = 0; a < 7; a++) {
        wg_case c = plain(2, 5, 9, 6, 3, 1);
        c.act = acts[a], c.bias = 1, c.p.pad_bottom = 2;
        char label[48];
        snprintf(label, sizeof label, "winograd activation %d", (int)acts[a]);
        wg_check(ctx, &c, label);
    }
    wg_case v = plain(3, 7, 11, 10, 6, 1);
    v.off = 5, v.bias = 1, v.act = CLT_RELU, v.p.pad_left = 0;
    wg_check(ctx, &v, "winograd views at offset 5");
    wg_case big = plain(3, 33, 17, 19, 65, 1);
    big.bias = 1;
    wg_check(ctx, &big, "winograd Ci 33 Co 65 17x19");
    /* rows of more than 8 blocks (the CPU kernels' strips of 8: full, partial, interior), Ci 9 */
    wg_case wide = plain(2, 9, 9, 37, 6, 1);
    wide.bias = 1, wide.act = CLT_RELU;
    wg_check(ctx, &wide, "winograd 9x37, 10 blocks a row");
    wg_case wider = plain(1, 3, 6, 70, 4, 0);
    wider.p.pad_right = 2;
    wg_check(ctx, &wider, "winograd 6x70, 18 blocks a row");
    clt__conv_winograd_cap_bytes = 1; /* Check forks per test: no other test sees this */
    wg_case ch = plain(3, 16, 13, 9, 5, 2);
    ch.bias = 1, ch.p.pad_top = 0;
    wg_check(ctx, &ch, "winograd one-image chunks");
    tu_context_free(ctx);
    tu_env_restore("CLT_CONV_VARIANT", saved);
}
END_TEST

static clt__conv_geom geom(clt_context *ctx, int64_t n, int64_t ci, int64_t hw, int64_t co,
                           int64_t k, int stride, int dil, int groups)
{
    clt_conv2d_params p;
    clt_conv2d_params_init(&p);
    p.stride_h = p.stride_w = stride;
    p.dilation_h = p.dilation_w = dil;
    p.groups = groups;
    p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = (int32_t)(dil * (k - 1) / 2);
    int64_t xs[4] = {n, ci, hw, hw}, ws[4] = {co, ci / groups, k, k};
    clt__conv_geom g;
    TU_OK(clt__conv_geom_make(ctx, "test", xs, ws, &p, &g));
    return g;
}

/* The automatic choice, the same thresholds for every class: the AMD table (gfx902 profile, any
 * device) and the native one (the CPU class on POCL: Winograd with its CPU-style kernels). */
static void auto_choice_on(const char *profile)
{
    clt_context *ctx = wg_context(profile, 1);
    unsetenv("CLT_CONV_VARIANT");
    /* the bench layers n1c64h56o64, n8c64h56o64, n32c128h28o128 and the smallest that qualifies */
    clt__conv_geom yes[4] = {geom(ctx, 1, 64, 56, 64, 3, 1, 1, 1), geom(ctx, 8, 64, 56, 64, 3, 1, 1, 1),
                             geom(ctx, 32, 128, 28, 128, 3, 1, 1, 1), geom(ctx, 1, 32, 32, 32, 3, 1, 1, 1)};
    for (int i = 0; i < 4; i++)
        ck_assert_msg(clt__conv_winograd_auto(ctx, &yes[i]), "%s: qualifying layer %d not taken",
                      profile, i);
    /* stride 2, dilation 2, groups 2, 5x5, the seed n1c16h64o32, 1x1, under 1024 pixels, Ci 8 */
    clt__conv_geom no[8] = {geom(ctx, 1, 64, 56, 64, 3, 2, 1, 1), geom(ctx, 1, 64, 56, 64, 3, 1, 2, 1),
                            geom(ctx, 1, 64, 56, 64, 3, 1, 1, 2), geom(ctx, 1, 64, 56, 64, 5, 1, 1, 1),
                            geom(ctx, 1, 16, 64, 32, 3, 1, 1, 1), geom(ctx, 1, 64, 56, 64, 1, 1, 1, 1),
                            geom(ctx, 1, 64, 28, 64, 3, 1, 1, 1), geom(ctx, 1, 8, 64, 8, 3, 1, 1, 1)};
    for (int i = 0; i < 8; i++)
        ck_assert_msg(!clt__conv_winograd_auto(ctx, &no[i]), "%s: layer %d taken", profile, i);
    /* End to end: the smallest qualifying layer runs the Winograd kernels, stride 2 does not. */
    wg_case c = plain(1, 32, 32, 32, 32, 1);
    c.bias = 1;
    wg_check(ctx, &c, "auto winograd 32x32x32x32");
    c.p.stride_h = 2;
    wg_check(ctx, &c, "auto stride 2");
    ck_assert_int_eq(tu_launches(ctx, NULL, transform_kernel(ctx)), 1);
    ck_assert_int_eq(tu_launches(ctx, NULL, output_kernel(ctx)), 1);
    tu_context_free(ctx);
}

START_TEST(auto_choice)
{
    char *saved = tu_env_save("CLT_CONV_VARIANT");
    auto_choice_on("gfx902");
    auto_choice_on("native");
    tu_env_restore("CLT_CONV_VARIANT", saved);
}
END_TEST

/* A memory cap with room for the tensors but not for the workspace (U, V, M: ~2.5 MB here): the
 * implicit kernel runs instead, with the same result (GPU variants: the gfx902 profile; the CPU
 * class's own fallback, im2col, needs a workspace too). */
START_TEST(no_room_falls_back)
{
    char *saved = tu_env_save("CLT_CONV_VARIANT");
    setenv("CLT_CONV_VARIANT", "winograd", 1);
    clt_context_options o;
    clt_context_options_init(&o);
    o.conv_impl = "tiled";
    o.memory_limit = (uint64_t)1 << 20;
    o.profile = "gfx902";
    o.profiler = 1;
    clt_context *ctx = tu_context_with(&o);
    wg_case c = plain(1, 32, 32, 32, 32, 1);
    c.bias = 1;
    wg_check(ctx, &c, "winograd without workspace room");
    ck_assert_msg(tu_launches(ctx, NULL, "conv2d_winograd") == 0, "a Winograd kernel ran");
    tu_context_free(ctx);
    tu_env_restore("CLT_CONV_VARIANT", saved);
}
END_TEST

Suite *conv2d_winograd_suite(void)
{
    Suite *s = suite_create("conv2d_winograd");
    TCase *tc = tcase_create("forward");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, table);
    tcase_add_test(tc, epilogue_views_chunks);
    tcase_add_test(tc, auto_choice);
    tcase_add_test(tc, no_room_falls_back);
    suite_add_tcase(s, tc);
    return s;
}
