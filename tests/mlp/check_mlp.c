/* The fused MLP (include/cltensor_mlp.h) against the double reference (tests/ref/mlp_ref.c): the
 * forward pass, the gradients and several optimizer steps for several widths, depths, activations,
 * encodings and N (1, 7, 200, 10000), on the fused path, the CPU-shaped fused path and the
 * per-layer path, which must agree; launch counts (forward 1, step 2); deterministic repeats.
 *
 * Tolerances: f32 sums of <= 128 products per layer through <= 4 layers: forward 5e-5 * (1 + max
 * |y|); gradients sum over N points in f32: 2e-4 * max |grad| + 1e-6 (1e-3 at N = 10000). Adam's
 * update is ~lr * sign(g) where |g| >> eps, so after S steps parameters agree to 1e-5 except where
 * a gradient is within rounding of zero (at most 2 lr S, on < 1% of them); SGD agrees to 1e-5.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref/mlp_ref.h"
#include "util/test_util.h"

typedef struct net_case {
    int64_t inputs, fourier; /* fourier 0: identity encoding */
    int layers;
    int64_t widths[4];
    clt_unary_op acts[4];
    clt_mlp_optimizer opt;
    int64_t n;
} net_case;

static const net_case cases[] = {
    {2, 8, 3, {32, 32, 2}, {CLT_TANH, CLT_TANH, CLT_IDENTITY}, CLT_MLP_ADAM, 7},
    {3, 0, 3, {16, 64, 1}, {CLT_RELU, CLT_SILU, CLT_SIGMOID}, CLT_MLP_SGD, 200},
    {2, 0, 3, {128, 128, 2}, {CLT_TANH, CLT_SIGMOID, CLT_IDENTITY}, CLT_MLP_ADAM, 1},
    {2, 64, 4, {128, 128, 128, 2}, {CLT_TANH, CLT_TANH, CLT_TANH, CLT_IDENTITY}, CLT_MLP_ADAM, 200},
    {5, 0, 2, {16, 3}, {CLT_SILU, CLT_TANH}, CLT_MLP_ADAM, 10000},
    {1, 4, 1, {5}, {CLT_IDENTITY}, CLT_MLP_SGD, 13},
    /* widths off every chunk (KC 32/64, BWC 4-64) and 4-wide block: remainder rows, masked dW
     * blocks, partial weight chunks; 1031 points: several tiles per group on every device */
    {3, 0, 4, {100, 37, 7, 3}, {CLT_TANH, CLT_SILU, CLT_RELU, CLT_IDENTITY}, CLT_MLP_ADAM, 1031},
    /* the register-tiled big tiles (width 64..128): rows not float4-aligned (70), a silu output
     * layer of 4 (its k split across the row), 333 points (a partial last tile) */
    {3, 0, 2, {70, 4}, {CLT_SILU, CLT_SILU}, CLT_MLP_SGD, 333},
    /* the same with every layer's input resident in local memory (64 wide, 2 layers: fits) */
    {2, 16, 2, {64, 2}, {CLT_TANH, CLT_IDENTITY}, CLT_MLP_ADAM, 777},
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

static void desc_of(const net_case *c, clt_mlp_desc *d)
{
    clt_mlp_desc_init(d);
    d->inputs = c->inputs;
    if (c->fourier) {
        d->encoding = CLT_MLP_ENCODING_FOURIER;
        d->fourier_features = c->fourier;
        d->fourier_scale = 2.0f;
    }
    d->layers = c->layers;
    for (int l = 0; l < c->layers; l++)
        d->widths[l] = c->widths[l], d->activations[l] = c->acts[l];
    d->optimizer = c->opt;
    d->lr = c->opt == CLT_MLP_SGD ? 0.05f : 1e-3f;
}

static clt_tensor *upload(clt_context *ctx, int64_t r, int64_t c, const float *h)
{
    int64_t shape[2] = {r, c};
    clt_tensor *t;
    TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, 2, shape, h, sizeof(float) * (size_t)(r * c), &t));
    return t;
}

static float *read_all(const clt_tensor *t)
{
    int64_t n = clt_tensor_numel(t);
    float *h = malloc(sizeof(float) * (size_t)(n ? n : 1));
    TU_OK(clt_tensor_read(t, h, sizeof(float) * (size_t)n));
    return h;
}

/* The case's data: x, target, B (host) and a network on the given path. */
typedef struct fixture {
    clt_mlp_desc d;
    ref_mlp r;
    float *x, *t, *B;
    clt_tensor *dx, *dt, *dB;
    clt_mlp *mlp;
    int64_t n, out;
} fixture;

static void fixture_make(clt_context *ctx, const net_case *c, clt_mlp_path path, uint64_t seed,
                         fixture *f)
{
    memset(f, 0, sizeof *f);
    desc_of(c, &f->d);
    f->d.path = path;
    f->n = c->n, f->out = c->widths[c->layers - 1];
    f->x = malloc(sizeof(float) * (size_t)(f->n * c->inputs));
    f->t = malloc(sizeof(float) * (size_t)(f->n * f->out));
    tu_random_f32(f->x, (size_t)(f->n * c->inputs), 0.0f, 1.0f);
    tu_random_f32(f->t, (size_t)(f->n * f->out), -1.0f, 1.0f);
    f->dx = upload(ctx, f->n, c->inputs, f->x);
    f->dt = upload(ctx, f->n, f->out, f->t);
    if (c->fourier) {
        f->B = malloc(sizeof(float) * (size_t)(c->inputs * c->fourier));
        tu_random_f32(f->B, (size_t)(c->inputs * c->fourier), -2.0f, 2.0f);
        f->dB = upload(ctx, c->inputs, c->fourier, f->B);
    }
    ref_mlp_init(&f->r, &f->d, f->B);
    TU_OK(clt_mlp_create(ctx, &f->d, f->dB, seed, &f->mlp));
}

static void fixture_free(fixture *f)
{
    clt_mlp_free(f->mlp);
    clt_tensor_free(f->dx), clt_tensor_free(f->dt), clt_tensor_free(f->dB);
    free(f->x), free(f->t), free(f->B);
}

static double *params_double(clt_mlp *mlp)
{
    float *p = read_all(clt_mlp_params(mlp));
    int64_t np = clt_tensor_numel(clt_mlp_params(mlp));
    double *d = malloc(sizeof(double) * (size_t)np);
    for (int64_t i = 0; i < np; i++)
        d[i] = p[i];
    free(p);
    return d;
}

static double max_abs(const double *v, int64_t n)
{
    double m = 0;
    for (int64_t i = 0; i < n; i++)
        m = fmax(m, fabs(v[i]));
    return m;
}

static const char *path_name(clt_mlp_path path)
{
    return path == CLT_MLP_PATH_LAYERS ? "layers" : path == CLT_MLP_PATH_FUSED_CPU ? "fused-cpu" : "fused";
}

/* forward, gradients and 3 optimizer steps of case i on one path */
static void check_case(int ci, clt_mlp_path path)
{
    const net_case *c = &cases[ci];
    clt_context *ctx = tu_context();
    fixture f;
    fixture_make(ctx, c, path, tu_rng_next(), &f);
    ck_assert_str_eq(clt_mlp_path_name(f.mlp), path_name(path));
    int64_t np = f.r.nparams, n = f.n;
    double *p = params_double(f.mlp);
    /* forward */
    clt_tensor *y;
    int64_t ys[2] = {n, f.out};
    TU_OK(clt_tensor_create(ctx, CLT_F32, 2, ys, &y));
    tu_poison(y);
    TU_OK(clt_mlp_forward(f.mlp, f.dx, y));
    float *yd = read_all(y);
    double *yr = malloc(sizeof(double) * (size_t)(n * f.out));
    ref_mlp_forward(&f.r, p, n, f.x, yr);
    double ym = max_abs(yr, n * f.out);
    for (int64_t i = 0; i < n * f.out; i++)
        ck_assert_msg(fabs(yd[i] - yr[i]) <= 5e-5 * (1 + ym), "case %d y[%lld] = %.9g, want %.9g", ci,
                      (long long)i, yd[i], yr[i]);
    /* gradients and loss */
    double *g = malloc(sizeof(double) * (size_t)np * 3), *m = g + np, *v = m + np;
    double loss = ref_mlp_gradients(&f.r, p, n, f.x, f.t, g);
    TU_OK(clt_mlp_gradients(f.mlp, f.dx, f.dt));
    float *gd = read_all(clt_mlp_grads(f.mlp)), dl;
    TU_OK(clt_tensor_read(clt_mlp_loss(f.mlp), &dl, sizeof dl));
    ck_assert_msg(fabs(dl - loss) <= 1e-5 * (1 + loss), "case %d loss %.9g, want %.9g", ci, dl, loss);
    double gm = max_abs(g, np), gtol = (n >= 10000 ? 1e-3 : 2e-4) * gm + 1e-6;
    for (int64_t i = 0; i < np; i++)
        ck_assert_msg(fabs(gd[i] - g[i]) <= gtol, "case %d grad[%lld] = %.9g, want %.9g (max %g)", ci,
                      (long long)i, gd[i], g[i], gm);
    ck_assert_int_eq(clt_mlp_steps(f.mlp), 0);
    /* three optimizer steps, each step's loss read through a future, all waited for only after
     * the last step: each future keeps its own step's loss */
    memset(m, 0, sizeof(double) * (size_t)np * 2);
    double want_loss[3];
    clt_future *fut[3] = {NULL, NULL, NULL};
    for (int s = 1; s <= 3; s++) {
        want_loss[s - 1] = ref_mlp_gradients(&f.r, p, n, f.x, f.t, g);
        ref_mlp_update(&f.r, p, g, m, v, s);
        TU_OK(clt_mlp_train_step(f.mlp, f.dx, f.dt, &fut[s - 1]));
    }
    for (int s = 0; s < 3; s++) {
        float fl = 0;
        double l = want_loss[s];
        TU_OK(clt_future_get(fut[s], &fl, sizeof fl));
        clt_future_free(fut[s]);
        ck_assert_msg(fabs(fl - l) <= 1e-4 * (1 + l), "case %d step %d loss %.9g, want %.9g", ci, s + 1,
                      fl, l);
    }
    ck_assert_int_eq(clt_mlp_steps(f.mlp), 3);
    float *pd = read_all(clt_mlp_params(f.mlp));
    int64_t loose = 0;
    double lr = f.d.lr;
    for (int64_t i = 0; i < np; i++) {
        double e = fabs(pd[i] - p[i]);
        if (c->opt == CLT_MLP_SGD)
            ck_assert_msg(e <= 1e-5 + 1e-4 * fabs(p[i]), "case %d SGD param[%lld] %.9g, want %.9g", ci,
                          (long long)i, pd[i], p[i]);
        else {
            ck_assert_msg(e <= 2 * lr * 3 + 1e-6, "case %d Adam param[%lld] %.9g, want %.9g", ci,
                          (long long)i, pd[i], p[i]);
            loose += e > 1e-5;
        }
    }
    ck_assert_msg(loose * 100 <= np, "case %d: %lld of %lld parameters off by > 1e-5", ci,
                  (long long)loose, (long long)np);
    free(yd), free(yr), free(g), free(gd), free(pd), free(p);
    clt_tensor_free(y);
    fixture_free(&f);
    tu_context_free(ctx);
}

START_TEST(mlp_fused_matches_double_reference) { check_case(_i, CLT_MLP_PATH_FUSED); }
END_TEST

START_TEST(mlp_fused_cpu_matches_double_reference) { check_case(_i, CLT_MLP_PATH_FUSED_CPU); }
END_TEST

START_TEST(mlp_layers_matches_double_reference)
{
    const net_case *c = &cases[_i];
    int silu = 0;
    for (int l = 0; l < c->layers; l++)
        silu |= c->acts[l] == CLT_SILU;
    if (!silu) {
        check_case(_i, CLT_MLP_PATH_LAYERS);
        return;
    }
    /* silu runs only fused: the per-layer path refuses it */
    clt_context *ctx = tu_context();
    clt_mlp_desc d;
    desc_of(c, &d);
    d.path = CLT_MLP_PATH_LAYERS;
    clt_mlp *mlp = NULL;
    ck_assert_int_eq(c->fourier, 0);
    TU_EXPECT_STATUS(clt_mlp_create(ctx, &d, NULL, 1, &mlp), CLT_ERR_UNSUPPORTED);
    ck_assert_ptr_null(mlp);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "silu");
    tu_context_free(ctx);
}
END_TEST

/* a fused path (_i: GPU-shaped, CPU-shaped) and the per-layer path from the same seed: the same
 * parameters, outputs and gradients to rounding */
START_TEST(mlp_fused_and_layers_agree)
{
    const net_case *c = &cases[3];
    clt_context *ctx = tu_context();
    uint64_t seed = tu_rng_next();
    fixture a, b;
    fixture_make(ctx, c, _i ? CLT_MLP_PATH_FUSED_CPU : CLT_MLP_PATH_FUSED, seed, &a);
    fixture_make(ctx, c, CLT_MLP_PATH_LAYERS, seed, &b);
    clt_mlp_free(b.mlp); /* the same B as a's */
    TU_OK(clt_mlp_create(ctx, &b.d, a.dB, seed, &b.mlp));
    ck_assert_str_eq(clt_mlp_path_name(b.mlp), "layers");
    TU_OK(clt_mlp_gradients(a.mlp, a.dx, a.dt));
    TU_OK(clt_mlp_gradients(b.mlp, a.dx, a.dt));
    float *ga = read_all(clt_mlp_grads(a.mlp)), *gb = read_all(clt_mlp_grads(b.mlp));
    int64_t np = a.r.nparams;
    double gm = 0;
    for (int64_t i = 0; i < np; i++)
        gm = fmax(gm, fabs(ga[i]));
    for (int64_t i = 0; i < np; i++)
        ck_assert_msg(fabs(ga[i] - gb[i]) <= 2e-4 * gm + 1e-6, "grad[%lld] fused %.9g layers %.9g",
                      (long long)i, ga[i], gb[i]);
    for (int s = 0; s < 2; s++) {
        TU_OK(clt_mlp_train_step(a.mlp, a.dx, a.dt, NULL));
        TU_OK(clt_mlp_train_step(b.mlp, a.dx, a.dt, NULL));
    }
    float *pa = read_all(clt_mlp_params(a.mlp)), *pb = read_all(clt_mlp_params(b.mlp));
    int64_t off = 0;
    for (int64_t i = 0; i < np; i++)
        off += fabs(pa[i] - pb[i]) > 1e-5;
    ck_assert_msg(off * 100 <= np, "%lld of %lld parameters differ by > 1e-5", (long long)off,
                  (long long)np);
    free(ga), free(gb), free(pa), free(pb);
    fixture_free(&a), fixture_free(&b);
    tu_context_free(ctx);
}
END_TEST

/* forward 1 launch, a step 2, the same bits on a repeat; a deferred step leaves the loss alone;
 * _i: the GPU-shaped (0) or the CPU-shaped (1) fused path */
START_TEST(mlp_fused_launches_and_determinism)
{
    clt_context *ctx = tu_profiled_context();
    fixture f;
    clt_mlp_path path = _i ? CLT_MLP_PATH_FUSED_CPU : CLT_MLP_PATH_FUSED;
    fixture_make(ctx, &cases[3], path, 42, &f);
    ck_assert_str_eq(clt_mlp_path_name(f.mlp), path_name(path));
    clt_tensor *y;
    int64_t ys[2] = {f.n, f.out};
    TU_OK(clt_tensor_create(ctx, CLT_F32, 2, ys, &y));
    uint64_t before = tu_launches(ctx, NULL, "");
    TU_OK(clt_mlp_forward(f.mlp, f.dx, y));
    ck_assert_uint_eq(tu_launches(ctx, NULL, "") - before, 1);
    ck_assert_uint_eq(tu_launches(ctx, "clt_mlp_forward", _i ? "mlp_cpu_forward" : "mlp_forward"), 1);
    before = tu_launches(ctx, NULL, "");
    TU_OK(clt_mlp_gradients(f.mlp, f.dx, f.dt));
    ck_assert_uint_eq(tu_launches(ctx, NULL, "") - before, 2);
    float *g1 = read_all(clt_mlp_grads(f.mlp)), loss1, loss2;
    TU_OK(clt_tensor_read(clt_mlp_loss(f.mlp), &loss1, sizeof loss1));
    TU_OK(clt_mlp_gradients(f.mlp, f.dx, f.dt));
    float *g2 = read_all(clt_mlp_grads(f.mlp));
    ck_assert_mem_eq(g1, g2, sizeof(float) * (size_t)f.r.nparams);
    ck_assert_uint_eq(tu_launches(ctx, "clt_mlp_gradients", _i ? "mlp_cpu_train" : "mlp_train"), 2);
    before = tu_launches(ctx, NULL, "");
    TU_OK(clt_mlp_train_step(f.mlp, f.dx, f.dt, NULL));
    ck_assert_uint_eq(tu_launches(ctx, NULL, "") - before, 2);
    ck_assert_uint_eq(tu_launches(ctx, "clt_mlp_train_step", _i ? "mlp_cpu_update" : "mlp_update"), 1);
    TU_OK(clt_tensor_read(clt_mlp_loss(f.mlp), &loss2, sizeof loss2));
    ck_assert_msg(loss2 == loss1, "a deferred step wrote the loss: %g, was %g", loss2, loss1);
    free(g1), free(g2);
    clt_tensor_free(y);
    fixture_free(&f);
    tu_context_free(ctx);
}
END_TEST

/* bad descriptions and tensors: the documented status, a message naming the call, nothing changed */
START_TEST(mlp_bad_descriptions_and_tensors)
{
    clt_context *ctx = tu_profiled_context();
    clt_mlp_desc d;
    clt_mlp *mlp = (clt_mlp *)&d;
    clt_mlp_desc_init(&d);
    d.layers = 2, d.widths[0] = 0, d.widths[1] = 2;
    TU_EXPECT_STATUS(clt_mlp_create(ctx, &d, NULL, 1, &mlp), CLT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(mlp);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_mlp_create");
    d.widths[0] = 200, d.path = CLT_MLP_PATH_FUSED;
    TU_EXPECT_STATUS(clt_mlp_create(ctx, &d, NULL, 1, &mlp), CLT_ERR_UNSUPPORTED);
    d.path = CLT_MLP_PATH_FUSED_CPU;
    TU_EXPECT_STATUS(clt_mlp_create(ctx, &d, NULL, 1, &mlp), CLT_ERR_UNSUPPORTED);
    ck_assert_ptr_null(mlp);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "CPU-shaped");
    d.path = (clt_mlp_path)4;
    TU_EXPECT_STATUS(clt_mlp_create(ctx, &d, NULL, 1, &mlp), CLT_ERR_INVALID_ARGUMENT);
    d.path = CLT_MLP_PATH_AUTO;
    d.layers = CLT_MLP_MAX_LAYERS + 1;
    TU_EXPECT_STATUS(clt_mlp_create(ctx, &d, NULL, 1, &mlp), CLT_ERR_INVALID_ARGUMENT);
    d.layers = 0;
    TU_EXPECT_STATUS(clt_mlp_create(ctx, &d, NULL, 1, &mlp), CLT_ERR_INVALID_ARGUMENT);
    d.layers = 2, d.widths[0] = 16, d.activations[0] = CLT_GELU_ERF;
    TU_EXPECT_STATUS(clt_mlp_create(ctx, &d, NULL, 1, &mlp), CLT_ERR_INVALID_ARGUMENT);
    d.activations[0] = CLT_TANH, d.encoding = CLT_MLP_ENCODING_FOURIER, d.fourier_features = 4;
    TU_EXPECT_STATUS(clt_mlp_create(ctx, &d, NULL, 1, &mlp), CLT_ERR_INVALID_ARGUMENT);
    clt_tensor *B = tu_uniform_1d(ctx, 8);
    TU_EXPECT_STATUS(clt_mlp_create(ctx, &d, B, 1, &mlp), CLT_ERR_INVALID_SHAPE);
    d.encoding = CLT_MLP_ENCODING_IDENTITY, d.lr = -1;
    TU_EXPECT_STATUS(clt_mlp_create(ctx, &d, NULL, 1, &mlp), CLT_ERR_INVALID_ARGUMENT);
    d.lr = 1e-3f, d.widths[0] = 200, d.activations[0] = CLT_SILU; /* wide silu: no path */
    TU_EXPECT_STATUS(clt_mlp_create(ctx, &d, NULL, 1, &mlp), CLT_ERR_UNSUPPORTED);
    d.widths[0] = 16;
    TU_OK(clt_mlp_create(ctx, &d, NULL, 1, &mlp));
    float *p0 = read_all(clt_mlp_params(mlp));
    clt_tensor *x, *t, *y, *xi;
    int64_t xs[2] = {5, 2}, ts[2] = {5, 2}, bad[2] = {4, 2}, x3[2] = {5, 3};
    TU_OK(clt_tensor_create(ctx, CLT_F32, 2, xs, &x));
    TU_OK(clt_tensor_create(ctx, CLT_F32, 2, ts, &t));
    TU_OK(clt_tensor_create(ctx, CLT_F32, 2, bad, &y));
    TU_OK(clt_tensor_create(ctx, CLT_I32, 2, xs, &xi));
    TU_OK(clt_tensor_fill(x, 0.5));
    TU_OK(clt_tensor_fill(t, 0.5));
    TU_EXPECT_STATUS(clt_mlp_train_step(mlp, x, y, NULL), CLT_ERR_INVALID_SHAPE);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_mlp_train_step");
    TU_EXPECT_STATUS(clt_mlp_forward(mlp, x, y), CLT_ERR_INVALID_SHAPE);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_mlp_forward");
    TU_EXPECT_STATUS(clt_mlp_train_step(mlp, xi, t, NULL), CLT_ERR_INVALID_DTYPE);
    TU_EXPECT_STATUS(clt_mlp_gradients(mlp, x, NULL), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_STATUS(clt_mlp_forward(mlp, x, x), CLT_ERR_ALIASING);
    clt_tensor *x3t;
    TU_OK(clt_tensor_create(ctx, CLT_F32, 2, x3, &x3t));
    TU_EXPECT_STATUS(clt_mlp_train_step(mlp, x3t, t, NULL), CLT_ERR_INVALID_SHAPE);
    TU_EXPECT_STATUS(clt_mlp_train_step(NULL, x, t, NULL), CLT_ERR_INVALID_ARGUMENT);
    float *p1 = read_all(clt_mlp_params(mlp));
    ck_assert_mem_eq(p0, p1, sizeof(float) * (size_t)clt_tensor_numel(clt_mlp_params(mlp)));
    ck_assert_int_eq(clt_mlp_steps(mlp), 0);
    ck_assert_uint_eq(tu_launches(ctx, NULL, "mlp_"), 0); /* nothing enqueued by the failures */
    TU_OK(clt_mlp_train_step(mlp, x, t, NULL));
    ck_assert_int_eq(clt_mlp_steps(mlp), 1);
    ck_assert_uint_gt(tu_launches(ctx, "clt_mlp_train_step", "mlp_"), 0);
    free(p0), free(p1);
    clt_tensor_free(x), clt_tensor_free(t), clt_tensor_free(y), clt_tensor_free(xi);
    clt_tensor_free(x3t), clt_tensor_free(B);
    clt_mlp_free(mlp);
    tu_context_free(ctx);
}
END_TEST

/* auto: a network wider than the fused limit runs the per-layer path, and is right; a narrow one
 * runs fused, on a CPU device (native profile) the CPU-shaped fused kernels */
START_TEST(mlp_wide_network_falls_back_to_layers)
{
    net_case c = {3, 0, 2, {160, 2}, {CLT_TANH, CLT_IDENTITY}, CLT_MLP_ADAM, 9};
    clt_context *ctx = tu_context();
    fixture f;
    fixture_make(ctx, &c, CLT_MLP_PATH_AUTO, tu_rng_next(), &f);
    ck_assert_str_eq(clt_mlp_path_name(f.mlp), "layers");
    double *p = params_double(f.mlp), *g = malloc(sizeof(double) * (size_t)f.r.nparams);
    ref_mlp_gradients(&f.r, p, f.n, f.x, f.t, g);
    TU_OK(clt_mlp_gradients(f.mlp, f.dx, f.dt));
    float *gd = read_all(clt_mlp_grads(f.mlp));
    double gm = max_abs(g, f.r.nparams);
    for (int64_t i = 0; i < f.r.nparams; i++)
        ck_assert_msg(fabs(gd[i] - g[i]) <= 2e-4 * gm + 1e-6, "grad[%lld] = %.9g, want %.9g",
                      (long long)i, gd[i], g[i]);
    free(p), free(g), free(gd);
    fixture_free(&f);
    clt_device_info info;
    TU_OK(clt_context_device_info(ctx, &info));
    clt_context_limits lim;
    TU_OK(clt_context_get_limits(ctx, &lim));
    int cpu = info.type == CLT_DEVICE_CPU && strcmp(lim.profile, "gfx902") != 0;
    fixture_make(ctx, &cases[0], CLT_MLP_PATH_AUTO, 3, &f);
    ck_assert_str_eq(clt_mlp_path_name(f.mlp), cpu ? "fused-cpu" : "fused");
    fixture_free(&f);
    fixture_make(ctx, &cases[1], CLT_MLP_PATH_AUTO, 3, &f);
    ck_assert_str_eq(clt_mlp_path_name(f.mlp), cpu ? "fused-cpu" : "fused");
    fixture_free(&f);
    tu_context_free(ctx);
}
END_TEST

Suite *mlp_suite(void)
{
    Suite *s = suite_create("mlp");
    TCase *tc = tcase_create("mlp");
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, mlp_fused_matches_double_reference, 0, NCASES);
    tcase_add_loop_test(tc, mlp_fused_cpu_matches_double_reference, 0, NCASES);
    tcase_add_loop_test(tc, mlp_layers_matches_double_reference, 0, NCASES);
    tcase_add_loop_test(tc, mlp_fused_and_layers_agree, 0, 2);
    tcase_add_loop_test(tc, mlp_fused_launches_and_determinism, 0, 2);
    tcase_add_test(tc, mlp_bad_descriptions_and_tensors);
    tcase_add_test(tc, mlp_wide_network_falls_back_to_layers);
    suite_add_tcase(s, tc);
    return s;
}
