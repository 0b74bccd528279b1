/* clt_conv2d against the double reference (ref/conv_ref.c) on fresh random data, for our kernels
 * (conv_impl "tiled"), im2col + CLBlast ("clblast") and auto:
 *  - a covering table of small odd shapes: H, W in {1, 5, 7, 13}, channels in {1, 3, 5, 16},
 *    kernels 1/3/5/7, stride 1/2/3, dilation 1/2, each padding 0..3 (asymmetric), groups 1 / 2 /
 *    depthwise, batch 1 and 3, bias or not. Case i takes each parameter from its list at a
 *    different rate (i, i/2, i/3, ...), so every value meets most values of every other parameter
 *    without the full product; impossible geometry (output < 1) is repaired by padding.
 *  - every activation on shapes that reach each kernel family (1x1, depthwise, general);
 *  - shapes across every tile edge (Co 65, Ci 33, 17x19 images, batch 3) and each implicit-GEMM
 *    configuration forced (CLT_CONV_VARIANT), with both K orders (Ci_g a multiple of 16 or not),
 *    and the implicit kernel's coalesced A loads (CLT_CONV_KERNEL_VARIANT=coalesced, an experiment);
 *  - the empty batch.
 * Tolerance per output element, K = Ci_g*Kh*Kw terms:
 *   |out - ref| <= TOL_C * (K + 4) * eps * scale * TOL_ACT_GAIN + TOL_REL * eps * |ref|
 * scale = sum |x||w| + |bias| (the reference's): a K-term f32 dot product errs by ~K eps of its
 * absolute sum, the admitted activations have slopes below TOL_ACT_GAIN, and the activation's own
 * rounding adds a few ulp. Error paths: check_conv2d_errors.c. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref/conv_ref.h"
#include "util/gemm_test.h"
#include "util/test_util.h"

#define TOL_C 2.0
#define TOL_ACT_GAIN 1.2
#define TOL_REL 8.0
#define EPS 1.1920928955078125e-7

typedef struct cv_case {
    int64_t n, ci, h, w, co, kh, kw;
    clt_conv2d_params p;
    int bias;
    clt_unary_op act;
    int viewed; /* x a view 3 elements into a larger buffer (after NaNs) */
} cv_case;

static clt_context *cv_context(const char *impl)
{
    clt_context_options o;
    clt_context_options_init(&o);
    o.conv_impl = impl;
    return tu_context_with(&o);
}

static clt_tensor *tensor4(clt_context *ctx, const int64_t s[4], const float *h)
{
    clt_tensor *t = NULL;
    size_t n = (size_t)(s[0] * s[1] * s[2] * s[3]);
    if (h)
        TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, 4, s, h, n * sizeof(float), &t));
    else
        TU_OK(clt_tensor_create(ctx, CLT_F32, 4, s, &t));
    return t;
}

static void cv_check(clt_context *ctx, const cv_case *c, const char *label)
{
    int64_t xs[4] = {c->n, c->ci, c->h, c->w}, ws[4] = {c->co, c->ci / c->p.groups, c->kh, c->kw};
    ref_conv rc = ref_conv_make(xs, ws, &c->p);
    int64_t ho = ref_conv_ho(&rc), wo = ref_conv_wo(&rc), os[4] = {c->n, c->co, ho, wo};
    ck_assert_msg(ho >= 1 && wo >= 1, "%s: bad test geometry", label);
    int64_t nx = xs[0] * xs[1] * xs[2] * xs[3], nw = ws[0] * ws[1] * ws[2] * ws[3];
    int64_t no = os[0] * os[1] * os[2] * os[3];
    float *hx = gt_random(nx), *hw = gt_random(nw), *hb = c->bias ? gt_random(c->co) : NULL;
    clt_tensor *big = NULL, *x = NULL, *w = tensor4(ctx, ws, hw), *out = tensor4(ctx, os, NULL);
    if (c->viewed) {
        int64_t nbig = nx + 3;
        float *hbig = malloc((size_t)nbig * sizeof *hbig);
        ck_assert_ptr_nonnull(hbig);
        hbig[0] = hbig[1] = hbig[2] = NAN;
        memcpy(hbig + 3, hx, (size_t)nx * sizeof *hx);
        TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, 1, &nbig, hbig, (size_t)nbig * sizeof *hbig, &big));
        TU_OK(clt_tensor_view(big, 3, 4, xs, &x));
        free(hbig);
    } else {
        x = tensor4(ctx, xs, hx);
    }
    clt_tensor *b = c->bias ? gt_tensor(ctx, c->co, hb) : NULL;
    tu_poison(out);
    clt_status st = clt_conv2d(x, w, b, &c->p, c->act, 0.0f, out);
    ck_assert_msg(st == CLT_SUCCESS, "%s: %s: %s", label, clt_status_string(st), clt_last_error(ctx));
    float *got = gt_read(out);
    double *ref = malloc((size_t)(no ? no : 1) * sizeof(double));
    double *scale = malloc((size_t)(no ? no : 1) * sizeof(double));
    ref_conv2d_forward(&rc, hx, hw, hb, c->act, 0.0, ref, scale);
    double k = (double)(ws[1] * ws[2] * ws[3]);
    for (int64_t i = 0; i < no; i++) {
        double tol = TOL_C * (k + 4) * EPS * scale[i] * TOL_ACT_GAIN + TOL_REL * EPS * fabs(ref[i]);
        double err = fabs((double)got[i] - ref[i]);
        ck_assert_msg(err <= tol, "%s: out[%lld] = %.9g, reference %.9g (error %.3g > %.3g); x [%lld, %lld, "
                      "%lld, %lld] w [%lld, %lld, %lld, %lld] stride %dx%d pad %d,%d,%d,%d dil %dx%d groups %d",
                      label, (long long)i, (double)got[i], ref[i], err, tol, (long long)xs[0],
                      (long long)xs[1], (long long)xs[2], (long long)xs[3], (long long)ws[0],
                      (long long)ws[1], (long long)ws[2], (long long)ws[3], c->p.stride_h,
                      c->p.stride_w, c->p.pad_top, c->p.pad_bottom, c->p.pad_left, c->p.pad_right,
                      c->p.dilation_h, c->p.dilation_w, c->p.groups);
    }
    free(got), free(ref), free(scale), free(hx), free(hw), free(hb);
    clt_tensor_free(x), clt_tensor_free(big), clt_tensor_free(w), clt_tensor_free(out), clt_tensor_free(b);
}

static const int64_t dims[] = {1, 5, 7, 13};
static const int64_t chans[] = {1, 3, 5, 16};
static const int64_t ks[] = {1, 3, 5, 7};
static const clt_unary_op acts[] = {CLT_IDENTITY, CLT_RELU,    CLT_GELU_ERF, CLT_GELU_TANH,
                                    CLT_TANH,     CLT_SIGMOID, CLT_SILU};

/* Grow the padding until the dilated window fits (the reference agrees on the result). */
static void repair(int64_t in, int64_t k, int32_t dil, int32_t *lo, int32_t *hi)
{
    while (in + *lo + *hi - (int64_t)dil * (k - 1) - 1 < 0) {
        if (*lo <= *hi)
            (*lo)++;
        else
            (*hi)++;
    }
}

#define N_TABLE 48

static cv_case table_case(int i)
{
    cv_case c;
    memset(&c, 0, sizeof c);
    clt_conv2d_params_init(&c.p);
    c.h = dims[i % 4];
    c.w = dims[(i / 4 + i) % 4];
    c.kh = ks[(i / 2) % 4];
    c.kw = ks[(i / 8 + i / 2 + (i % 2)) % 4];
    c.p.stride_h = 1 + i % 3;
    c.p.stride_w = 1 + (i / 3 + 1) % 3;
    c.p.dilation_h = 1 + (i / 5) % 2;
    c.p.dilation_w = 1 + (i / 6 + i) % 2;
    c.p.pad_top = i % 4;
    c.p.pad_bottom = (i / 4) % 4;
    c.p.pad_left = (i / 3 + 2) % 4;
    c.p.pad_right = (i / 7 + i) % 4;
    c.n = i % 5 == 2 || i % 7 == 0 ? 3 : 1;
    c.bias = (i / 2) % 2;
    c.act = i % 6 == 5 ? CLT_RELU : CLT_IDENTITY;
    int gkind = (i / 3) % 3; /* 0 dense, 1 two groups, 2 depthwise */
    int64_t ci = chans[(i / 2 + i / 9) % 4], co = chans[(i + i / 4) % 4];
    if (gkind == 0) {
        c.ci = ci, c.co = co;
    } else if (gkind == 1) {
        c.p.groups = 2;
        c.ci = ci == 16 ? 16 : 2 * ci, c.co = co == 16 ? 16 : 2 * co;
    } else {
        c.p.groups = (int32_t)ci;
        c.ci = ci, c.co = ci * (i % 4 == 3 ? 2 : 1); /* depthwise, sometimes multiplier 2 */
    }
    repair(c.h, c.kh, c.p.dilation_h, &c.p.pad_top, &c.p.pad_bottom);
    repair(c.w, c.kw, c.p.dilation_w, &c.p.pad_left, &c.p.pad_right);
    return c;
}

static void run_table(const char *impl)
{
    clt_context *ctx = cv_context(impl);
    for (int i = 0; i < N_TABLE; i++) {
        cv_case c = table_case(i);
        char label[64];
        snprintf(label, sizeof label, "%s table case %d", impl, i);
        cv_check(ctx, &c, label);
    }
    tu_context_free(ctx);
}

START_TEST(table_tiled) { run_table("tiled"); }
END_TEST
START_TEST(table_clblast) { run_table("clblast"); }
END_TEST
START_TEST(table_auto) { run_table("auto"); }
END_TEST

static const char *const impls[] = {"tiled", "clblast", "auto"};

static cv_case plain(int64_t n, int64_t ci, int64_t h, int64_t w, int64_t co, int64_t k)
{
    cv_case c;
    memset(&c, 0, sizeof c);
    clt_conv2d_params_init(&c.p);
    c.n = n, c.ci = ci, c.h = h, c.w = w, c.co = co, c.kh = c.kw = k;
    c.act = CLT_IDENTITY;
    return c;
}

/* Every activation, with bias, on a 1x1 (GEMM), a depthwise and a general 3x3 shape. */
START_TEST(activations)
{
    clt_context *ctx = cv_context(impls[_i]);
    for (int a = 0; a < 7; a++) {
        cv_case cs[3] = {plain(2, 5, 7, 6, 3, 1), plain(1, 4, 9, 8, 4, 3), plain(3, 3, 8, 5, 6, 3)};
        cs[1].p.groups = 4;
        cs[1].p.pad_top = cs[1].p.pad_left = 1;
        cs[2].p.pad_bottom = cs[2].p.pad_right = 2;
        for (int j = 0; j < 3; j++) {
            cs[j].act = acts[a];
            cs[j].bias = 1;
            char label[64];
            snprintf(label, sizeof label, "%s activation %d shape %d", impls[_i], (int)acts[a], j);
            cv_check(ctx, &cs[j], label);
        }
    }
    tu_context_free(ctx);
}
END_TEST

/* Past every tile edge: Co 65 (rows), Ci 33 and 32 (K not / a multiple of the K slice), 17x19
 * images in a batch of 3 (columns), grouped, strided and 1x1 variants; Wo = 24 (8-wide CPU path). */
static void large_cases(clt_context *ctx, const char *tag)
{
    cv_case cs[6] = {plain(3, 33, 17, 19, 65, 3), plain(3, 32, 17, 19, 65, 3), plain(2, 34, 19, 17, 66, 3),
                     plain(3, 33, 17, 19, 65, 1), plain(1, 16, 24, 24, 20, 5), plain(2, 48, 13, 11, 66, 3)};
    cs[0].p.pad_top = cs[0].p.pad_bottom = cs[0].p.pad_left = cs[0].p.pad_right = 1;
    cs[0].bias = 1;
    cs[1].p.pad_top = 2, cs[1].p.pad_left = 1, cs[1].p.stride_w = 2;
    cs[2].p.groups = 2, cs[2].p.dilation_h = 2, cs[2].bias = 1, cs[2].act = CLT_SILU;
    cs[3].bias = 1;
    cs[4].p.pad_top = cs[4].p.pad_bottom = cs[4].p.pad_left = cs[4].p.pad_right = 2;
    cs[5].p.groups = 3, cs[5].p.pad_left = 1, cs[5].p.pad_right = 1;
    for (int j = 0; j < 6; j++) {
        char label[64];
        snprintf(label, sizeof label, "%s large case %d", tag, j);
        cv_check(ctx, &cs[j], label);
    }
}

START_TEST(large)
{
    clt_context *ctx = cv_context(impls[_i]);
    large_cases(ctx, impls[_i]);
    tu_context_free(ctx);
}
END_TEST

/* The implicit-GEMM configurations that small devices never pick on their own (64x128 and 64x64;
 * 128x128 and 32x32 are chosen by the cases above under the gfx902 profile), the CPU-style kernel
 * and im2col + our GEMM (colgemm), forced whatever the device. */
START_TEST(variants)
{
    static const char *const forced[] = {"implicit:1", "implicit:2", "cpu", "colgemm"};
    char *saved = tu_env_save("CLT_CONV_VARIANT");
    setenv("CLT_CONV_VARIANT", forced[_i], 1);
    clt_context *ctx = cv_context("tiled");
    cv_case cs[2] = {plain(2, 32, 9, 11, 65, 3), plain(1, 5, 13, 7, 3, 3)};
    cs[0].p.pad_top = cs[0].p.pad_left = 1, cs[0].bias = 1;
    cs[1].p.stride_h = 2, cs[1].p.pad_right = 2;
    for (int j = 0; j < 2; j++) {
        char label[64];
        snprintf(label, sizeof label, "variant %s case %d", forced[_i], j);
        cv_check(ctx, &cs[j], label);
    }
    tu_context_free(ctx);
    tu_env_restore("CLT_CONV_VARIANT", saved);
}
END_TEST

/* The implicit kernel on both K orders (channel-major when Ci_g is a multiple of KWG, else flat)
 * with a bias, asymmetric padding and stride 2: its A-slice loads run along k of one weight row. */
START_TEST(implicit_k_orders)
{
    char *saved = tu_env_save("CLT_CONV_VARIANT");
    setenv("CLT_CONV_VARIANT", "implicit", 1);
    clt_context *ctx = cv_context("tiled");
    cv_case cs[2] = {plain(2, 32, 9, 11, 65, 3), plain(1, 5, 13, 7, 3, 3)};
    cs[0].p.pad_top = cs[0].p.pad_left = 1, cs[0].bias = 1;
    cs[1].p.stride_h = 2, cs[1].p.pad_right = 2;
    cv_check(ctx, &cs[0], "implicit, channel-major K");
    cv_check(ctx, &cs[1], "implicit, flat K");
    tu_context_free(ctx);
    tu_env_restore("CLT_CONV_VARIANT", saved);
}
END_TEST

/* CPU devices' im2col + GEMM path with one image per column chunk (several chunks per call). */
extern uint64_t clt__conv_cpu_chunk_bytes;
/* The few-input-channel kernel (conv2d_stem.cl) forced (CLT_CONV_VARIANT=stem: CPU devices too), under
 * its built-in tile shape (every shape) and three others (CLT_CONV_STEM_CFG, two shapes each: 8 / 32
 * columns, 1-3 item rows, 1-3 pixels and 4-16 channels an item, 1-3 channel blocks): Ci 1 .. 4; Co 1, 5, 16, 32, 65, 130 (partial channel
 * groups and blocks); images smaller than a tile and not multiples of one; 7x7 stride 2 (ResNet's stem),
 * 11x11 stride 4, 5x3 with strides 3 x 1 and dilation 1 x 2, 3x3 dilation 2, a padded 1x1, 3x3 stride 2;
 * asymmetric padding; bias or none, four activations; x a view at an odd offset. The profiler must show
 * conv2d_stem ran each time (where the built-in shape does not fit a device, that fails loudly). */
START_TEST(stem)
{
    static const char *const cfgs[] = {NULL, "8,2,3,4,3", "32,1,2,8,2", "16,3,1,16,1"};
    static const clt_unary_op sacts[] = {CLT_IDENTITY, CLT_RELU, CLT_GELU_TANH, CLT_SILU};
    /* n ci h w co kh kw sh sw pt pb pl pr dh dw */
    static const int32_t shapes[][15] = {{2, 3, 37, 45, 65, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1},
                                         {1, 1, 1, 1, 5, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1},
                                         {3, 4, 13, 17, 16, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2},
                                         {1, 2, 29, 31, 130, 5, 3, 3, 1, 2, 0, 1, 2, 1, 2},
                                         {2, 3, 16, 16, 32, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},
                                         {1, 3, 50, 23, 1, 11, 11, 4, 4, 2, 1, 0, 3, 1, 1}};
    char *saved = tu_env_save("CLT_CONV_VARIANT"), *saved_cfg = tu_env_save("CLT_CONV_STEM_CFG");
    setenv("CLT_CONV_VARIANT", "stem", 1);
    if (cfgs[_i])
        setenv("CLT_CONV_STEM_CFG", cfgs[_i], 1);
    else
        unsetenv("CLT_CONV_STEM_CFG");
    clt_context *ctx = tu_profiled_context();
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        if (_i > 0 && i % 3 != (size_t)_i - 1) /* the other tile shapes: two shapes each */
            continue;
        const int32_t *v = shapes[i];
        cv_case c = plain(v[0], v[1], v[2], v[3], v[4], v[5]);
        c.kw = v[6];
        c.p.stride_h = v[7], c.p.stride_w = v[8];
        c.p.pad_top = v[9], c.p.pad_bottom = v[10], c.p.pad_left = v[11], c.p.pad_right = v[12];
        c.p.dilation_h = v[13], c.p.dilation_w = v[14];
        c.bias = (int)((i + (size_t)_i) % 2), c.act = sacts[(i + (size_t)_i) % 4], c.viewed = i % 2 == 1;
        char label[96];
        snprintf(label, sizeof label, "stem shape %zu, tile %s", i, cfgs[_i] ? cfgs[_i] : "built in");
        uint64_t before = tu_launches(ctx, NULL, "conv2d_stem");
        cv_check(ctx, &c, label);
        ck_assert_msg(tu_launches(ctx, NULL, "conv2d_stem") == before + 1, "%s: conv2d_stem did not run", label);
    }
    tu_context_free(ctx);
    tu_env_restore("CLT_CONV_VARIANT", saved);
    tu_env_restore("CLT_CONV_STEM_CFG", saved_cfg);
}
END_TEST

START_TEST(cpu_chunks)
{
    clt__conv_cpu_chunk_bytes = 1; /* Check forks per test: no other test sees this */
    clt_context *ctx = cv_context("tiled");
    large_cases(ctx, "one-image chunks");
    tu_context_free(ctx);
}
END_TEST

/* N = 0: success, nothing written. */
START_TEST(empty_batch)
{
    clt_context *ctx = cv_context(impls[_i]);
    int64_t xs[4] = {0, 3, 5, 5}, ws[4] = {4, 3, 3, 3}, os[4] = {0, 4, 3, 3};
    clt_tensor *x = tensor4(ctx, xs, NULL), *w = tensor4(ctx, ws, NULL), *out = tensor4(ctx, os, NULL);
    clt_conv2d_params p;
    clt_conv2d_params_init(&p);
    TU_OK(clt_conv2d(x, w, NULL, &p, CLT_RELU, 0.0f, out));
    TU_OK(clt_finish(ctx));
    clt_tensor_free(x), clt_tensor_free(w), clt_tensor_free(out);
    tu_context_free(ctx);
}
END_TEST

Suite *conv2d_suite(void)
{
    Suite *s = suite_create("conv2d");
    TCase *tc = tcase_create("forward");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, table_tiled);
    tcase_add_test(tc, table_clblast);
    tcase_add_test(tc, table_auto);
    tcase_add_loop_test(tc, activations, 0, 3);
    tcase_add_loop_test(tc, large, 0, 3);
    tcase_add_loop_test(tc, variants, 0, 4);
    tcase_add_test(tc, implicit_k_orders);
    tcase_add_loop_test(tc, stem, 0, 4);
    tcase_add_test(tc, cpu_chunks);
    tcase_add_loop_test(tc, empty_batch, 0, 3);
    suite_add_tcase(s, tc);
    return s;
}
