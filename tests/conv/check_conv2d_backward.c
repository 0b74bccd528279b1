/* clt_conv2d_backward_input / _weight / _bias against the double references (ref/conv_backward_ref.c)
 * on fresh random data, over a covering table of shapes (H, W in {1, 5, 7, 13}, channels {1, 3, 5,
 * 16}, kernel 1/3/5/7, stride 1/2/3, dilation 1/2, padding 0..3 per side, groups 1/2/depthwise,
 * batch 1 and 3, one case large enough for split-K), once per implementation (conv_impl "tiled" and
 * "clblast"). The references themselves are checked against central differences of
 * ref_conv2d_forward. Every error path: status, message naming the call, outputs unchanged.
 *
 * Tolerances, relative to the reference's scale (sum of |terms| of each element):
 *   dx, dw: 2e-5 * scale (float sums of at most ~800 terms, any order; a missing term is ~1/K of
 *           the scale, far above this); dbias: 1e-5 * scale.
 *   dx through Winograd F(4x4, 3x3) (stride-1 grad-input reading the forward weights in place):
 *           2e-4 * scale. Its transforms add and cancel terms of up to ~10x an output's own
 *           |terms| (check_conv2d_winograd.c bounds them per 6x6 patch); a transposed or
 *           unflipped weight read is off by O(scale). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref/conv_backward_ref.h"
#include "util/ew_util.h"
#include "util/test_util.h"

#define DXW_TOL 2e-5
#define DB_TOL 1e-5
#define WINO_DX_TOL 2e-4

/* n, ci, co, h, w, kh, kw, sh, sw, dh, dw, pt, pb, pl, pr, groups */
static const int cases[][16] = {
    {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1},      {3, 3, 5, 5, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {1, 16, 16, 13, 13, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, {3, 16, 5, 7, 5, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2, 1},
    {1, 5, 3, 13, 7, 7, 7, 3, 3, 1, 1, 3, 3, 3, 3, 1},    {3, 16, 16, 13, 13, 3, 3, 2, 2, 2, 2, 2, 1, 0, 3, 1},
    {1, 16, 16, 13, 13, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 16}, {3, 5, 5, 7, 7, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 5},
    {1, 16, 16, 13, 7, 5, 3, 3, 2, 2, 1, 3, 0, 1, 2, 2},  {3, 16, 16, 5, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2},
    {1, 3, 16, 13, 13, 7, 7, 2, 2, 1, 1, 3, 3, 3, 3, 1},  {3, 16, 16, 7, 13, 3, 5, 3, 1, 2, 2, 0, 3, 2, 1, 1},
    {1, 1, 3, 5, 5, 5, 5, 1, 1, 1, 1, 0, 0, 0, 0, 1},     {3, 16, 16, 1, 13, 1, 3, 1, 3, 1, 2, 0, 0, 3, 3, 1},
    {1, 16, 3, 13, 1, 7, 1, 2, 1, 2, 1, 3, 2, 0, 0, 1},   {1, 5, 16, 7, 5, 1, 1, 3, 2, 1, 1, 1, 2, 3, 0, 1},
    {3, 16, 16, 13, 13, 5, 5, 1, 1, 2, 2, 3, 3, 3, 3, 16}, {1, 16, 16, 13, 13, 3, 3, 3, 3, 1, 1, 0, 0, 0, 0, 1},
    {3, 16, 16, 7, 7, 3, 3, 2, 2, 2, 2, 1, 0, 1, 0, 2},   {1, 16, 16, 5, 7, 7, 7, 1, 1, 1, 1, 3, 3, 3, 3, 1},
    {3, 16, 16, 29, 29, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, /* K = 2523: split-K on GPU kernels */
};
#define N_CASES (int)(sizeof cases / sizeof cases[0])

static void case_setup(const int *c, int64_t xs[4], int64_t ws[4], clt_conv2d_params *p)
{
    clt_conv2d_params_init(p);
    xs[0] = c[0], xs[1] = c[1], xs[2] = c[3], xs[3] = c[4];
    ws[0] = c[2], ws[1] = c[1] / c[15], ws[2] = c[5], ws[3] = c[6];
    p->stride_h = c[7], p->stride_w = c[8], p->dilation_h = c[9], p->dilation_w = c[10];
    p->pad_top = c[11], p->pad_bottom = c[12], p->pad_left = c[13], p->pad_right = c[14];
    p->groups = c[15];
}

/* case_setup, then the reference geometry and dy's shape ys. */
static ref_conv case_geometry(const int *c, int64_t xs[4], int64_t ws[4], int64_t ys[4], clt_conv2d_params *p)
{
    case_setup(c, xs, ws, p);
    ref_conv rc = ref_conv_make(xs, ws, p);
    ys[0] = xs[0], ys[1] = ws[0], ys[2] = ref_conv_ho(&rc), ys[3] = ref_conv_wo(&rc);
    return rc;
}

static clt_tensor *tensor(clt_context *ctx, int ndim, const int64_t *s, const float *data)
{
    clt_tensor *t = NULL;
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= s[i];
    if (data)
        TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, ndim, s, data, (size_t)n * sizeof(float), &t));
    else
        TU_OK(clt_tensor_create(ctx, CLT_F32, ndim, s, &t));
    return t;
}

static void compare(const char *label, const char *what, const clt_tensor *t, const double *ref,
                    const double *scale, int64_t n, double tol)
{
    float *got = malloc((size_t)(n ? n : 1) * sizeof *got);
    TU_OK(clt_tensor_read(t, got, (size_t)n * sizeof(float)));
    for (int64_t i = 0; i < n; i++) {
        double err = fabs((double)got[i] - ref[i]);
        ck_assert_msg(err <= tol * scale[i] + 1e-30 && !isnan(got[i]),
                      "%s %s[%lld]: got %.9g, expected %.9g (scale %.3g)", label, what,
                      (long long)i, (double)got[i], ref[i], scale[i]);
    }
    free(got);
}

/* One case on one context: fresh data, all three calls (weight twice: the split-K counters must be
 * back at 0 after a launch). */
static void run_case(clt_context *ctx, const int *c, const char *impl)
{
    int64_t xs[4], ws[4], ys[4];
    clt_conv2d_params p;
    ref_conv rc = case_geometry(c, xs, ws, ys, &p);
    ck_assert_msg(ys[2] >= 1 && ys[3] >= 1, "bad test case");
    int64_t nx = xs[0] * xs[1] * xs[2] * xs[3], nw = ws[0] * ws[1] * ws[2] * ws[3];
    int64_t ny = ys[0] * ys[1] * ys[2] * ys[3];
    char label[200];
    snprintf(label, sizeof label,
             "%s x [%lld,%lld,%lld,%lld] w [%lld,%lld,%lld,%lld] s %d,%d d %d,%d pad %d,%d,%d,%d g %d",
             impl, (long long)xs[0], (long long)xs[1], (long long)xs[2], (long long)xs[3],
             (long long)ws[0], (long long)ws[1], (long long)ws[2], (long long)ws[3], c[7], c[8], c[9],
             c[10], c[11], c[12], c[13], c[14], c[15]);
    float *x = ew_random(nx, -1.0f, 1.0f), *w = ew_random(nw, -1.0f, 1.0f);
    float *dy = ew_random(ny, -1.0f, 1.0f);
    double *ref = malloc((size_t)(nx + nw + ny + 1) * sizeof *ref);
    double *scale = malloc((size_t)(nx + nw + ny + 1) * sizeof *scale);
    clt_tensor *tx = tensor(ctx, 4, xs, x), *tw = tensor(ctx, 4, ws, w), *tdy = tensor(ctx, 4, ys, dy);
    clt_tensor *tdx = tensor(ctx, 4, xs, NULL), *tdw = tensor(ctx, 4, ws, NULL);
    clt_tensor *tdb = tensor(ctx, 1, &ws[0], NULL);
    tu_poison(tdx), tu_poison(tdw), tu_poison(tdb);

    TU_OK(clt_conv2d_backward_input(tdy, tw, &p, tdx));
    ref_conv2d_backward_input(&rc, dy, w, ref, scale);
    compare(label, "dx", tdx, ref, scale, nx, DXW_TOL);

    ref_conv2d_backward_weight(&rc, dy, x, ref, scale);
    for (int rep = 0; rep < 2; rep++) {
        TU_OK(clt_conv2d_backward_weight(tdy, tx, &p, tdw));
        compare(label, rep ? "dw (again)" : "dw", tdw, ref, scale, nw, DXW_TOL);
        tu_poison(tdw);
    }

    TU_OK(clt_conv2d_backward_bias(tdy, tdb));
    ref_conv2d_backward_bias(&rc, dy, ref, scale);
    compare(label, "dbias", tdb, ref, scale, ws[0], DB_TOL);

    clt_tensor *ts[] = {tx, tw, tdy, tdx, tdw, tdb};
    for (int i = 0; i < 6; i++)
        clt_tensor_free(ts[i]);
    free(x), free(w), free(dy), free(ref), free(scale);
}

static clt_context *impl_context(const char *impl)
{
    clt_context_options o;
    clt_context_options_init(&o);
    o.conv_impl = impl;
    return tu_context_with(&o);
}

static void run_table(const char *impl, int first, int step)
{
    clt_context *ctx = impl_context(impl);
    for (int i = first; i < N_CASES; i += step)
        run_case(ctx, cases[i], impl);
    tu_context_free(ctx);
}

START_TEST(table_tiled) { run_table("tiled", 0, 1); }
END_TEST

START_TEST(table_clblast) { run_table("clblast", 0, 1); }
END_TEST

START_TEST(table_auto) { run_table("auto", 1, 5); }
END_TEST

/* Stride-1 3x3 grad-input with Winograd forced: U is built from the forward weights read
 * transposed and flipped in place, so no flip kernel runs; odd sizes, asymmetric padding (dx's
 * padding is 2 - pad per side), batch 3, channel counts off the strips of 8, a view offset. */
static void winograd_dx_on(const char *profile)
{
    static const int wcases[][16] = {
        {3, 16, 5, 13, 11, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
        {1, 9, 17, 7, 5, 3, 3, 1, 1, 1, 1, 0, 2, 2, 1, 1},
        {2, 33, 10, 6, 19, 3, 3, 1, 1, 1, 1, 2, 0, 1, 0, 1},
    };
    char *saved = tu_env_save("CLT_CONV_VARIANT");
    setenv("CLT_CONV_VARIANT", "winograd", 1);
    clt_context_options o;
    clt_context_options_init(&o);
    o.conv_impl = "tiled", o.profile = profile, o.profiler = 1;
    clt_context *ctx = tu_context_with(&o);
    for (int i = 0; i < 3; i++) {
        const int *c = wcases[i];
        int64_t xs[4], ws[4], ys[4];
        clt_conv2d_params p;
        ref_conv rc = case_geometry(c, xs, ws, ys, &p);
        int64_t nx = xs[0] * xs[1] * xs[2] * xs[3], nw = ws[0] * ws[1] * ws[2] * ws[3];
        int64_t ny = ys[0] * ys[1] * ys[2] * ys[3];
        float *w = ew_random(nw + 3, -1.0f, 1.0f), *dy = ew_random(ny, -1.0f, 1.0f);
        double *ref = malloc((size_t)nx * sizeof *ref), *scale = malloc((size_t)nx * sizeof *scale);
        /* the weights as a view 3 floats into a larger buffer */
        int64_t flat = nw + 3;
        clt_tensor *wbuf = tensor(ctx, 1, &flat, w), *tw = NULL;
        TU_OK(clt_tensor_view(wbuf, 3, 4, ws, &tw));
        clt_tensor *tdy = tensor(ctx, 4, ys, dy), *tdx = tensor(ctx, 4, xs, NULL);
        tu_poison(tdx);
        TU_OK(clt_conv2d_backward_input(tdy, tw, &p, tdx));
        ref_conv2d_backward_input(&rc, dy, w + 3, ref, scale);
        char label[64];
        snprintf(label, sizeof label, "%s winograd dx case %d", profile, i);
        compare(label, "dx", tdx, ref, scale, nx, WINO_DX_TOL);
        clt_tensor_free(tdx), clt_tensor_free(tdy), clt_tensor_free(tw), clt_tensor_free(wbuf);
        free(w), free(dy), free(ref), free(scale);
    }
    ck_assert_int_eq(tu_launches(ctx, NULL, "conv_flip_weights"), 0);
    ck_assert_int_eq(tu_launches(ctx, NULL, "winograd"), 6); /* transform + output, per case */
    tu_context_free(ctx);
    tu_env_restore("CLT_CONV_VARIANT", saved);
}

START_TEST(winograd_dx_native) { winograd_dx_on("native"); }
END_TEST

START_TEST(winograd_dx_gfx902) { winograd_dx_on("gfx902"); }
END_TEST

/* CPU devices' im2col + GEMM paths with one image per column chunk: the batch-3 cases. */
extern uint64_t clt__conv_cpu_chunk_bytes;
/* The few-input-channel grad-weight (conv2d_stem_dw.cl) forced (CLT_CONVB_WEIGHT_VARIANT=stem: CPU devices
 * too) under its built-in shape and two others (CLT_CONVB_STEM_CFG: 8 x 4 and 16 x 2 pixel tiles, 4 and 8
 * columns an item, 1 and 3 slots a compute unit; a shape they leave under 64 items falls back to the
 * built-in one): Ci 1 .. 4, Co 1 .. 130 (partial channel blocks, two channel groups), 7x7 stride 2 and
 * dilation 2, 11x11 stride 4, 5x3 with strides and dilation, 5x5, asymmetric padding, a single tile (one
 * slot: dw written without partials) and batches of 3 (slots walking several tiles);
 * twice per shape (the partials rewritten). The profiler must show conv2d_stem_dw ran each time. */
START_TEST(stem_weight)
{
    static const char *const cfgs[] = {NULL, "8,4,4,1", "16,2,8,3"};
    /* n, ci, co, h, w, kh, kw, sh, sw, dh, dw, pt, pb, pl, pr, groups */
    static const int shapes[][16] = {{3, 3, 65, 37, 45, 7, 7, 2, 2, 1, 1, 3, 3, 3, 3, 1},
                                     {1, 4, 32, 5, 6, 5, 5, 1, 1, 1, 1, 2, 2, 1, 2, 1},
                                     {2, 4, 130, 29, 31, 5, 3, 3, 1, 1, 2, 2, 0, 1, 2, 1},
                                     {1, 1, 64, 13, 17, 7, 7, 1, 1, 2, 2, 6, 6, 6, 6, 1},
                                     {3, 3, 1, 50, 23, 11, 11, 4, 4, 1, 1, 2, 1, 0, 3, 1}};
    char *saved = tu_env_save("CLT_CONVB_WEIGHT_VARIANT"), *saved_cfg = tu_env_save("CLT_CONVB_STEM_CFG");
    setenv("CLT_CONVB_WEIGHT_VARIANT", "stem", 1);
    if (cfgs[_i])
        setenv("CLT_CONVB_STEM_CFG", cfgs[_i], 1);
    else
        unsetenv("CLT_CONVB_STEM_CFG");
    clt_context *ctx = tu_profiled_context();
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const int *c = shapes[i];
        int64_t xs[4], ws[4], ys[4];
        clt_conv2d_params p;
        ref_conv rc = case_geometry(c, xs, ws, ys, &p);
        const int64_t nx = xs[0] * xs[1] * xs[2] * xs[3], nw = ws[0] * ws[1] * ws[2] * ws[3];
        const int64_t ny = ys[0] * ys[1] * ys[2] * ys[3];
        float *x = ew_random(nx, -1.0f, 1.0f), *dy = ew_random(ny, -1.0f, 1.0f);
        double *ref = malloc((size_t)nw * sizeof *ref), *scale = malloc((size_t)nw * sizeof *scale);
        ck_assert(ref && scale);
        clt_tensor *tx = tensor(ctx, 4, xs, x), *tdy = tensor(ctx, 4, ys, dy), *tdw = tensor(ctx, 4, ws, NULL);
        ref_conv2d_backward_weight(&rc, dy, x, ref, scale);
        char label[96];
        snprintf(label, sizeof label, "stem grad-weight shape %zu, shape %s", i, cfgs[_i] ? cfgs[_i] : "built in");
        for (int rep = 0; rep < 2; rep++) {
            tu_poison(tdw);
            const uint64_t before = tu_launches(ctx, NULL, "conv2d_stem_dw");
            TU_OK(clt_conv2d_backward_weight(tdy, tx, &p, tdw));
            ck_assert_msg(tu_launches(ctx, NULL, "conv2d_stem_dw") > before, "%s: conv2d_stem_dw did not run", label);
            compare(label, rep ? "dw (again)" : "dw", tdw, ref, scale, nw, DXW_TOL);
        }
        clt_tensor_free(tx), clt_tensor_free(tdy), clt_tensor_free(tdw);
        free(x), free(dy), free(ref), free(scale);
    }
    tu_context_free(ctx);
    tu_env_restore("CLT_CONVB_WEIGHT_VARIANT", saved);
    tu_env_restore("CLT_CONVB_STEM_CFG", saved_cfg);
}
END_TEST

START_TEST(cpu_chunks)
{
    clt__conv_cpu_chunk_bytes = 1; /* Check forks per test: no other test sees this */
    clt_context *ctx = impl_context("tiled");
    for (int i = 0; i < N_CASES; i++)
        if (cases[i][0] > 1)
            run_case(ctx, cases[i], "tiled, one-image chunks");
    tu_context_free(ctx);
}
END_TEST

/* Empty batch: dx untouched (it is empty), dw and dbias zeros (sums over nothing). */
START_TEST(empty_batch)
{
    static const char *const impls[] = {"tiled", "clblast"};
    for (int k = 0; k < 2; k++) {
        clt_context *ctx = impl_context(impls[k]);
        int64_t xs[4] = {0, 4, 5, 5}, ws[4] = {6, 2, 3, 3}, ys[4] = {0, 6, 3, 3}, nb = 6;
        clt_conv2d_params p;
        clt_conv2d_params_init(&p);
        p.groups = 2;
        clt_tensor *tx = tensor(ctx, 4, xs, NULL), *tdy = tensor(ctx, 4, ys, NULL);
        clt_tensor *tw = tensor(ctx, 4, ws, NULL), *tdw = tensor(ctx, 4, ws, NULL);
        clt_tensor *tdx = tensor(ctx, 4, xs, NULL), *tdb = tensor(ctx, 1, &nb, NULL);
        TU_OK(clt_tensor_fill(tw, 1.0));
        tu_poison(tdw), tu_poison(tdb);
        TU_OK(clt_conv2d_backward_input(tdy, tw, &p, tdx));
        TU_OK(clt_conv2d_backward_weight(tdy, tx, &p, tdw));
        TU_OK(clt_conv2d_backward_bias(tdy, tdb));
        float got[108];
        TU_OK(clt_tensor_read(tdw, got, sizeof got));
        for (int i = 0; i < 108; i++)
            ck_assert_msg(got[i] == 0.0f, "%s dw[%d] = %g", impls[k], i, (double)got[i]);
        TU_OK(clt_tensor_read(tdb, got, 6 * sizeof(float)));
        for (int i = 0; i < 6; i++)
            ck_assert_msg(got[i] == 0.0f, "%s dbias[%d] = %g", impls[k], i, (double)got[i]);
        clt_tensor *ts[] = {tx, tdy, tw, tdw, tdx, tdb};
        for (int i = 0; i < 6; i++)
            clt_tensor_free(ts[i]);
        tu_context_free(ctx);
    }
}
END_TEST

/* sum_o out[o] * g[o] of the forward, in double (the loss whose gradient the calls compute). */
static double loss(const ref_conv *c, const float *x, const float *w, const float *b,
                   const float *g, int64_t ny, double *out)
{
    ref_conv2d_forward(c, x, w, b, CLT_IDENTITY, 0.0, out, NULL);
    double s = 0.0;
    for (int64_t i = 0; i < ny; i++)
        s += out[i] * g[i];
    return s;
}

/* Central difference of the loss in v[i]; the loss is linear in v, so this is exact up to
 * rounding once the actual float perturbations are used. */
static double central(const ref_conv *c, float *x, float *w, float *b, const float *g, int64_t ny,
                      double *out, float *v, int64_t i)
{
    float keep = v[i], up = keep + 0.0625f, down = keep - 0.0625f;
    v[i] = up;
    double lu = loss(c, x, w, b, g, ny, out);
    v[i] = down;
    double ld = loss(c, x, w, b, g, ny, out);
    v[i] = keep;
    return (lu - ld) / ((double)up - (double)down);
}

static void fd_check(const double *ref, const double *fd, int64_t n, const char *what, int k)
{
    for (int64_t i = 0; i < n; i++)
        ck_assert_msg(fabs(ref[i] - fd[i]) <= 1e-9 * (1.0 + fabs(fd[i])),
                      "case %d %s[%lld]: reference %.12g, central difference %.12g", k, what,
                      (long long)i, ref[i], fd[i]);
}

/* The double references are the gradient of ref_conv2d_forward (tiny cases, every element). */
START_TEST(reference_finite_differences)
{
    static const int tiny[][16] = {
        {2, 2, 4, 5, 4, 3, 2, 2, 1, 1, 2, 1, 0, 2, 1, 2},
        {1, 3, 2, 4, 5, 2, 3, 1, 2, 2, 1, 0, 2, 1, 1, 1},
        {2, 3, 3, 5, 5, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 3},
    };
    for (int k = 0; k < 3; k++) {
        int64_t xs[4], ws[4];
        clt_conv2d_params p;
        case_setup(tiny[k], xs, ws, &p);
        ref_conv rc = ref_conv_make(xs, ws, &p);
        int64_t ny = xs[0] * ws[0] * ref_conv_ho(&rc) * ref_conv_wo(&rc);
        int64_t nx = xs[0] * xs[1] * xs[2] * xs[3], nw = ws[0] * ws[1] * ws[2] * ws[3];
        float *x = ew_random(nx, -1.0f, 1.0f), *w = ew_random(nw, -1.0f, 1.0f);
        float *b = ew_random(ws[0], -1.0f, 1.0f), *g = ew_random(ny, -1.0f, 1.0f);
        double *out = malloc((size_t)ny * sizeof *out), *ref = malloc((size_t)nx * sizeof *ref);
        double *fd = malloc((size_t)nx * sizeof *fd);
        ref_conv2d_backward_input(&rc, g, w, ref, NULL);
        for (int64_t i = 0; i < nx; i++)
            fd[i] = central(&rc, x, w, b, g, ny, out, x, i);
        fd_check(ref, fd, nx, "dx", k);
        ref_conv2d_backward_weight(&rc, g, x, ref, NULL);
        for (int64_t i = 0; i < nw; i++)
            fd[i] = central(&rc, x, w, b, g, ny, out, w, i);
        fd_check(ref, fd, nw, "dw", k);
        ref_conv2d_backward_bias(&rc, g, ref, NULL);
        for (int64_t i = 0; i < ws[0]; i++)
            fd[i] = central(&rc, x, w, b, g, ny, out, b, i);
        fd_check(ref, fd, ws[0], "dbias", k);
        free(x), free(w), free(b), free(g), free(out), free(ref), free(fd);
    }
}
END_TEST

Suite *conv2d_backward_suite(void)
{
    Suite *s = suite_create("conv2d_backward");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, reference_finite_differences);
    tcase_add_test(tc, table_tiled);
    tcase_add_test(tc, table_clblast);
    tcase_add_test(tc, table_auto);
    tcase_add_test(tc, empty_batch);
    tcase_add_test(tc, cpu_chunks);
    tcase_add_loop_test(tc, stem_weight, 0, 3);
    tcase_add_test(tc, winograd_dx_native);
    tcase_add_test(tc, winograd_dx_gfx902);
    suite_add_tcase(s, tc);
    return s;
}
