/* clt_tensor_view, clt_adam_step, clt_mse_loss, clt_mse_loss_backward, clt_fourier_features against
 * tests/ref/train_ref in double, on awkward sizes, every tensor a view at an odd offset of one shared
 * buffer (the flat-parameter layout). Error paths: check_train_errors.c.
 *
 * Tolerances (eps = FLT_EPSILON):
 *   Adam: param, m, v within 8 eps * (1 + |ref|) of the double update from the same float inputs
 *     (a handful of roundings per element; v >= 0.01 keeps sqrt(v) + eps well conditioned).
 *   MSE: relative eps * (2 sqrt(n) + 16) (a float sum of positive terms in a blocked/tree order).
 *   MSE backward: 2 eps relative to |2/n (p - t)| plus eps * 2/n * (|p| + |t|) (the subtraction).
 *   Fourier: sin/cos are 4 ulp; p = scale * dot in float is off by (d + 2) eps * scale * sum|x B|,
 *     which passes into sin/cos 1:1; tolerance 2 * that + 8 eps.
 */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "ref/train_ref.h"
#include "util/test_util.h"

#define EPS ((double)FLT_EPSILON)

static float *rnd(int64_t n, float lo, float hi)
{
    float *x = malloc(sizeof(float) * (size_t)(n ? n : 1));
    tu_random_f32(x, (size_t)n, lo, hi);
    return x;
}

/* A 1-D view of n elements at `offset` of base, filled with data (if any). */
static clt_tensor *view_of(clt_tensor *base, int64_t offset, int64_t n, const float *data)
{
    clt_tensor *v;
    TU_OK(clt_tensor_view(base, offset, 1, &n, &v));
    if (data)
        TU_OK(clt_tensor_write(v, data, sizeof(float) * (size_t)n));
    return v;
}

START_TEST(view_reads_and_writes_its_range)
{
    clt_context *ctx = tu_context();
    int64_t n = 61;
    float *data = rnd(n, -1, 1), got[61];
    clt_tensor *base, *v, *vv;
    TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, 1, &n, data, sizeof got, &base));
    int64_t shape[2] = {3, 5};
    TU_OK(clt_tensor_view(base, 7, 2, shape, &v));
    ck_assert_int_eq(clt_tensor_numel(v), 15);
    ck_assert_int_eq(clt_tensor_dim(v, 0), 3);
    TU_OK(clt_tensor_read(v, got, 15 * sizeof(float)));
    for (int i = 0; i < 15; i++)
        ck_assert(got[i] == data[7 + i]);
    /* a view of a view counts from its own start; it outlives both */
    int64_t four = 4;
    TU_OK(clt_tensor_view(v, 11, 1, &four, &vv));
    clt_tensor_free(base);
    clt_tensor_free(v);
    float w[4] = {1, 2, 3, 4};
    TU_OK(clt_tensor_write(vv, w, sizeof w));
    TU_OK(clt_tensor_read(vv, got, sizeof w));
    for (int i = 0; i < 4; i++)
        ck_assert(got[i] == w[i]);
    /* the whole tensor, an empty view at its end, a scalar view */
    clt_tensor *e, *s;
    int64_t zero = 0;
    TU_OK(clt_tensor_view(vv, 4, 1, &zero, &e));
    TU_OK(clt_tensor_view(vv, 3, 0, NULL, &s));
    TU_OK(clt_tensor_read(s, got, sizeof(float)));
    ck_assert(got[0] == 4.0f);
    free(data);
    tu_context_free(ctx);
}
END_TEST

static void check_adam(clt_context *ctx, int64_t n, float wd, int64_t step)
{
    /* param, grad, m, v as four adjacent views at odd offsets of one buffer */
    int64_t total = 4 * n + 5;
    clt_tensor *base;
    TU_OK(clt_tensor_create(ctx, CLT_F32, 1, &total, &base));
    float *p = rnd(n, -2, 2), *g = rnd(n, -1, 1), *m = rnd(n, -0.5f, 0.5f), *v = rnd(n, 0.01f, 1);
    clt_tensor *tp = view_of(base, 1, n, p), *tg = view_of(base, 1 + n, n, g),
               *tm = view_of(base, 2 + 2 * n, n, m), *tv = view_of(base, 3 + 3 * n, n, v);
    clt_adam_params hp;
    clt_adam_params_init(&hp);
    hp.lr = 0.01f;
    hp.weight_decay = wd;
    TU_OK(clt_adam_step(tp, tg, tm, tv, &hp, step));
    double *rp = malloc(sizeof(double) * 4 * (size_t)n), *rg = rp + n, *rm = rg + n, *rv = rm + n;
    for (int64_t i = 0; i < n; i++)
        rp[i] = p[i], rg[i] = g[i], rm[i] = m[i], rv[i] = v[i];
    ref_adam_step(n, rp, rg, rm, rv, hp.lr, hp.beta1, hp.beta2, hp.eps, hp.weight_decay, step);
    float *got = malloc(sizeof(float) * (size_t)n);
    const clt_tensor *outs[4] = {tp, tg, tm, tv};
    const double *refs[4] = {rp, NULL, rm, rv};
    for (int k = 0; k < 4; k++) {
        TU_OK(clt_tensor_read(outs[k], got, sizeof(float) * (size_t)n));
        for (int64_t i = 0; i < n; i++) {
            if (k == 1) { /* grad is only read */
                ck_assert(got[i] == g[i]);
                continue;
            }
            double want = refs[k][i];
            ck_assert_msg(fabs(got[i] - want) <= 8 * EPS * (1 + fabs(want)),
                          "adam n %lld wd %g step %lld: tensor %d [%lld] = %.9g, want %.9g",
                          (long long)n, (double)wd, (long long)step, k, (long long)i, got[i], want);
        }
    }
    for (int k = 0; k < 4; k++)
        clt_tensor_free((clt_tensor *)outs[k]);
    clt_tensor_free(base);
    free(p), free(g), free(m), free(v), free(rp), free(got);
}

START_TEST(adam_matches_torch_formula)
{
    clt_context *ctx = tu_context();
    check_adam(ctx, 1, 0.0f, 1);
    check_adam(ctx, 7, 0.01f, 3);
    check_adam(ctx, 1000, 0.0f, 1);
    check_adam(ctx, 4099, 0.1f, 250);
    /* empty: nothing enqueued, success */
    check_adam(ctx, 0, 0.0f, 1);
    tu_context_free(ctx);
}
END_TEST

static void check_mse(clt_context *ctx, int ndim, const int64_t *shape)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++)
        n *= shape[d];
    float *p = rnd(n, -3, 3), *t = rnd(n, -3, 3);
    int64_t total = 2 * n + 3;
    clt_tensor *base, *tp, *tt, *out, *dp;
    TU_OK(clt_tensor_create(ctx, CLT_F32, 1, &total, &base));
    TU_OK(clt_tensor_view(base, 1, ndim, shape, &tp));
    TU_OK(clt_tensor_view(base, 2 + n, ndim, shape, &tt));
    TU_OK(clt_tensor_write(tp, p, sizeof(float) * (size_t)n));
    TU_OK(clt_tensor_write(tt, t, sizeof(float) * (size_t)n));
    TU_OK(clt_tensor_view(base, 2 * n + 2, 0, NULL, &out));
    tu_poison(out);
    TU_OK(clt_mse_loss(tp, tt, out));
    float loss;
    TU_OK(clt_tensor_read(out, &loss, sizeof loss));
    double want = ref_mse(n, p, t);
    if (n == 0)
        ck_assert_msg(isnan(loss), "mse of nothing: %g, want NaN", loss);
    else
        ck_assert_msg(fabs(loss - want) <= EPS * (2 * sqrt((double)n) + 16) * want,
                      "mse n %lld: %.9g, want %.9g", (long long)n, loss, want);
    /* backward, out of place then in place over pred; then the fused call, out of place then in
     * place over target (pred and target rewritten first: the in-place passes overwrote them) */
    TU_OK(clt_tensor_create(ctx, CLT_F32, ndim, shape, &dp));
    tu_poison(dp);
    float *got = malloc(sizeof(float) * (size_t)(n ? n : 1));
    for (int pass = 0; pass < 4; pass++) {
        int inplace = pass % 2;
        clt_tensor *dst = inplace ? (pass < 2 ? tp : tt) : dp;
        if (pass < 2) {
            TU_OK(clt_mse_loss_backward(tp, tt, dst));
        } else {
            TU_OK(clt_tensor_write(tp, p, sizeof(float) * (size_t)n));
            TU_OK(clt_tensor_write(tt, t, sizeof(float) * (size_t)n));
            tu_poison(dp), tu_poison(out);
            TU_OK(clt_mse_loss_with_grad(tp, tt, out, dst));
            TU_OK(clt_tensor_read(out, &loss, sizeof loss));
            ck_assert_msg(n == 0 ? isnan(loss) : fabs(loss - want) <= EPS * (2 * sqrt((double)n) + 16) * want,
                          "mse with grad n %lld: %.9g, want %.9g", (long long)n, loss, want);
        }
        TU_OK(clt_tensor_read(dst, got, sizeof(float) * (size_t)n));
        for (int64_t i = 0; i < n; i++) {
            double w = 2.0 / (double)n * ((double)p[i] - (double)t[i]);
            double tol = 2 * EPS * fabs(w) + EPS * 2.0 / (double)n * (fabs(p[i]) + fabs(t[i]));
            ck_assert_msg(fabs(got[i] - w) <= tol, "mse backward pass %d n %lld [%lld]: %.9g, want %.9g",
                          pass, (long long)n, (long long)i, got[i], w);
        }
    }
    clt_tensor_free(tp), clt_tensor_free(tt), clt_tensor_free(out), clt_tensor_free(dp);
    clt_tensor_free(base);
    free(p), free(t), free(got);
}

START_TEST(mse_loss_and_backward)
{
    clt_context *ctx = tu_context();
    int64_t s1[1] = {1}, s2[2] = {7, 3}, s3[2] = {1000, 2}, s4[1] = {100003}, s5[2] = {0, 2};
    check_mse(ctx, 1, s1);
    check_mse(ctx, 2, s2);
    check_mse(ctx, 2, s3);
    check_mse(ctx, 1, s4);
    check_mse(ctx, 2, s5);
    tu_context_free(ctx);
}
END_TEST

static void check_fourier(clt_context *ctx, int64_t n, int64_t d, int64_t f, double scale)
{
    float *x = rnd(n * d, 0, 1), *B = rnd(d * f, -4, 4);
    int64_t xs[2] = {n, d}, bs[2] = {d, f}, os[2] = {n, 2 * f};
    int64_t total = n * d + d * f + 2 * n * f + 3;
    clt_tensor *base, *tx, *tb, *out;
    TU_OK(clt_tensor_create(ctx, CLT_F32, 1, &total, &base));
    TU_OK(clt_tensor_view(base, 1, 2, xs, &tx));
    TU_OK(clt_tensor_view(base, 2 + n * d, 2, bs, &tb));
    TU_OK(clt_tensor_view(base, 3 + n * d + d * f, 2, os, &out));
    TU_OK(clt_tensor_write(tx, x, sizeof(float) * (size_t)(n * d)));
    TU_OK(clt_tensor_write(tb, B, sizeof(float) * (size_t)(d * f)));
    tu_poison(out);
    TU_OK(clt_fourier_features(tx, tb, (float)scale, out));
    size_t cnt = (size_t)(n * 2 * f);
    float *got = malloc(sizeof(float) * (cnt ? cnt : 1));
    double *want = malloc(sizeof(double) * (cnt ? cnt : 1));
    TU_OK(clt_tensor_read(out, got, sizeof(float) * cnt));
    ref_fourier(n, d, f, x, B, (double)(float)scale, want);
    for (int64_t r = 0; r < n; r++)
        for (int64_t j = 0; j < 2 * f; j++) {
            double mag = 0.0;
            for (int64_t k = 0; k < d; k++)
                mag += fabs((double)x[r * d + k] * B[k * f + j % f]);
            double tol = 2 * (double)(d + 2) * EPS * fabs(scale) * mag + 8 * EPS;
            double w = want[r * 2 * f + j], g = got[r * 2 * f + j];
            ck_assert_msg(fabs(g - w) <= tol, "fourier %lldx%lld F %lld [%lld, %lld]: %.9g, want %.9g",
                          (long long)n, (long long)d, (long long)f, (long long)r, (long long)j, g, w);
        }
    clt_tensor_free(tx), clt_tensor_free(tb), clt_tensor_free(out), clt_tensor_free(base);
    free(x), free(B), free(got), free(want);
}

START_TEST(fourier_features_values)
{
    clt_context *ctx = tu_context();
    const double two_pi = 6.283185307179586;
    check_fourier(ctx, 1, 1, 1, two_pi);
    check_fourier(ctx, 7, 2, 5, two_pi);
    check_fourier(ctx, 200, 2, 64, two_pi);
    check_fourier(ctx, 13, 3, 17, -0.5);
    check_fourier(ctx, 0, 2, 64, two_pi);
    check_fourier(ctx, 5, 0, 3, two_pi); /* d = 0: p = 0, sin 0 and cos 1 */
    tu_context_free(ctx);
}
END_TEST

Suite *train_suite(void)
{
    Suite *s = suite_create("train");
    TCase *tc = tcase_create("train");
    tcase_add_test(tc, view_reads_and_writes_its_range);
    tcase_add_test(tc, adam_matches_torch_formula);
    tcase_add_test(tc, mse_loss_and_backward);
    tcase_add_test(tc, fourier_features_values);
    suite_add_tcase(s, tc);
    return s;
}
