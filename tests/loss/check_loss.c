/* clt_cross_entropy, clt_bce_with_logits, clt_l1_loss, clt_smooth_l1_loss against tests/ref/loss_ref
 * in double: class and probability targets, label smoothing, ignore_index, every reduction, the
 * gradient of the same launch, awkward shapes (1, primes, rows longer than a work-group, more
 * rows / elements than the groups of one launch, empty); the reference's gradients once against
 * central finite differences. Tolerances (eps = FLT_EPSILON, z = the largest |logit|): row losses
 * 4 eps (sqrt(K) + 8) (1 + |ref| + z); reduced losses the same with sqrt(K) + sqrt(R) (f32 sums
 * in a tree); gradients 4 eps (sqrt(K) + 8) (1 + z) times the reduction's scale. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "ref/loss_ref.h"
#include "util/test_util.h"

#define EPS ((double)FLT_EPSILON)

static clt_tensor *up(clt_context *ctx, clt_dtype dt, int ndim, const int64_t *shape, const void *data)
{
    clt_tensor *t;
    TU_OK(clt_tensor_create(ctx, dt, ndim, shape, &t));
    if (data && clt_tensor_numel(t))
        TU_OK(clt_tensor_write(t, data, clt_tensor_nbytes(t)));
    else
        tu_poison(t);
    return t;
}

static float *down(const clt_tensor *t)
{
    float *f = malloc(clt_tensor_nbytes(t) + 4);
    if (clt_tensor_numel(t))
        TU_OK(clt_tensor_read(t, f, clt_tensor_nbytes(t)));
    return f;
}

static int same_or_both_nan(double got, double want, double tol)
{
    if (isnan(want))
        return isnan(got);
    return fabs(got - want) <= tol;
}

/* logits of ndim/shape (last dim K); prob: probability targets; `bad`: one class target out of range. */
static void check_ce(clt_context *ctx, int ndim, const int64_t *shape, int prob, float smoothing,
                     int reduction, int ignore_some, int bad)
{
    int64_t K = shape[ndim - 1], n = 1;
    for (int d = 0; d < ndim; d++)
        n *= shape[d];
    int64_t R = n / K;
    float *z = malloc(sizeof(float) * (size_t)(n + 1)), *p = malloc(sizeof(float) * (size_t)(n + 1));
    int32_t *ti = malloc(sizeof(int32_t) * (size_t)(R + 1));
    tu_random_f32(z, (size_t)n, -6, 6);
    tu_random_f32(p, (size_t)n, 0, 1);
    for (int64_t r = 0; r < R; r++) {
        double s = 0;
        for (int64_t k = 0; k < K; k++)
            s += p[r * K + k];
        for (int64_t k = 0; k < K; k++)
            p[r * K + k] = (float)(p[r * K + k] / s);
        ti[r] = (int32_t)(tu_rng_next() % (uint64_t)K);
        if (ignore_some && tu_rng_next() % 3 == 0)
            ti[r] = -7;
    }
    if (bad && R > 0)
        ti[R / 2] = (int32_t)K;
    double *dz = malloc(sizeof(double) * (size_t)(n + 1)), *dp = malloc(sizeof(double) * (size_t)(n + 1));
    double *rl = malloc(sizeof(double) * (size_t)(R + 1)), *rg = malloc(sizeof(double) * (size_t)(n + 1));
    double zmax = 0;
    for (int64_t i = 0; i < n; i++)
        dz[i] = z[i], dp[i] = p[i], zmax = fmax(zmax, fabs(z[i]));
    ref_cross_entropy(R, K, dz, ti, prob ? dp : NULL, smoothing, -7, reduction, rl, rg);
    if (bad && R > 0) { /* the library's contract for an out-of-range class: NaN loss and gradient */
        if (reduction == 0)
            rl[R / 2] = NAN;
        else
            rl[0] = NAN;
        for (int64_t k = 0; k < K; k++)
            rg[(R / 2) * K + k] = NAN;
    }
    int64_t lead[CLT_MAX_DIMS], one = 1, rshape = R;
    for (int d = 0; d < ndim - 1; d++)
        lead[d] = shape[d];
    clt_tensor *tz = up(ctx, CLT_F32, ndim, shape, z);
    clt_tensor *tt = prob ? up(ctx, CLT_F32, ndim, shape, p) : up(ctx, CLT_I32, ndim - 1, lead, ti);
    clt_tensor *tl = up(ctx, CLT_F32, 1, reduction ? &one : &rshape, NULL);
    clt_tensor *tg = up(ctx, CLT_F32, ndim, shape, NULL);
    clt_cross_entropy_params hp;
    clt_cross_entropy_params_init(&hp);
    hp.reduction = (clt_reduction)reduction;
    hp.label_smoothing = smoothing;
    hp.ignore_index = -7;
    TU_OK(clt_cross_entropy(tz, tt, &hp, tl, tg));
    float *gl = down(tl), *gg = down(tg);
    double count = 0;
    for (int64_t r = 0; r < R; r++)
        count += prob || ti[r] != -7;
    double scale = reduction == 1 ? 1.0 / count : 1.0;
    double tol_row = 4 * EPS * (sqrt((double)K) + 8), tol_sum = 4 * EPS * (sqrt((double)K) + sqrt((double)R) + 8);
    for (int64_t r = 0; r < (reduction ? 1 : R); r++)
        ck_assert_msg(same_or_both_nan(gl[r], rl[r], (reduction ? tol_sum : tol_row) * (1 + fabs(rl[r]) + zmax)),
                      "ce R %lld K %lld prob %d red %d smooth %g: loss[%lld] = %.9g, want %.9g", (long long)R,
                      (long long)K, prob, reduction, (double)smoothing, (long long)r, gl[r], rl[r]);
    for (int64_t i = 0; i < n; i++)
        ck_assert_msg(same_or_both_nan(gg[i], rg[i], tol_row * (1 + zmax) * (isfinite(scale) ? scale : 1)),
                      "ce R %lld K %lld prob %d red %d: dlogits[%lld] = %.9g, want %.9g", (long long)R,
                      (long long)K, prob, reduction, (long long)i, gg[i], rg[i]);
    /* the loss alone (no gradient) is the same */
    clt_tensor *tl2 = up(ctx, CLT_F32, 1, reduction ? &one : &rshape, NULL);
    TU_OK(clt_cross_entropy(tz, tt, &hp, tl2, NULL));
    float *gl2 = down(tl2);
    for (int64_t r = 0; r < (reduction ? 1 : R); r++)
        ck_assert_msg(isnan(gl[r]) ? isnan(gl2[r]) : gl2[r] == gl[r], "ce without gradient differs");
    clt_tensor_free(tz), clt_tensor_free(tt), clt_tensor_free(tl), clt_tensor_free(tg), clt_tensor_free(tl2);
    free(z), free(p), free(ti), free(dz), free(dp), free(rl), free(rg), free(gl), free(gg), free(gl2);
}

START_TEST(cross_entropy_class_targets)
{
    clt_context *ctx = tu_context();
    int64_t s1[2] = {1, 1}, s2[2] = {7, 13}, s3[3] = {3, 5, 11}, s4[2] = {5, 601}, s5[2] = {0, 5},
            s6[2] = {1000, 3};
    for (int red = 0; red <= 2; red++) {
        check_ce(ctx, 2, s1, 0, 0.0f, red, 0, 0);
        check_ce(ctx, 2, s2, 0, 0.1f, red, 1, 0);
        check_ce(ctx, 3, s3, 0, 0.0f, red, 1, 0);
        check_ce(ctx, 2, s4, 0, 0.25f, red, 0, 0);
        check_ce(ctx, 2, s5, 0, 0.0f, red, 0, 0);
        check_ce(ctx, 2, s6, 0, 0.1f, red, 1, 0);
        check_ce(ctx, 2, s2, 0, 0.0f, red, 0, 1);
    }
    tu_context_free(ctx);
}
END_TEST

START_TEST(cross_entropy_probability_targets)
{
    clt_context *ctx = tu_context();
    int64_t s1[2] = {1, 1}, s2[2] = {7, 13}, s4[2] = {3, 601}, s6[2] = {600, 7};
    for (int red = 0; red <= 2; red++) {
        check_ce(ctx, 2, s1, 1, 0.0f, red, 0, 0);
        check_ce(ctx, 2, s2, 1, 0.1f, red, 0, 0);
        check_ce(ctx, 2, s4, 1, 0.0f, red, 0, 0);
        check_ce(ctx, 2, s6, 1, 0.3f, red, 0, 0);
    }
    tu_context_free(ctx);
}
END_TEST

START_TEST(cross_entropy_all_ignored_mean_is_nan)
{
    clt_context *ctx = tu_context();
    int64_t s[2] = {3, 4}, r3 = 3, one = 1;
    float z[12];
    int32_t t[3] = {-100, -100, -100};
    tu_random_f32(z, 12, -1, 1);
    clt_tensor *tz = up(ctx, CLT_F32, 2, s, z), *tt = up(ctx, CLT_I32, 1, &r3, t), *tl = up(ctx, CLT_F32, 1, &one, NULL),
               *tg = up(ctx, CLT_F32, 2, s, NULL);
    clt_cross_entropy_params hp;
    clt_cross_entropy_params_init(&hp);
    TU_OK(clt_cross_entropy(tz, tt, &hp, tl, tg));
    float l, g[12];
    TU_OK(clt_tensor_read(tl, &l, sizeof l));
    TU_OK(clt_tensor_read(tg, g, sizeof g));
    ck_assert_msg(isnan(l), "mean over no rows: %g, want NaN", l);
    for (int i = 0; i < 12; i++)
        ck_assert_msg(g[i] == 0.0f, "ignored rows' gradient %g, want 0", g[i]);
    tu_context_free(ctx);
}
END_TEST

static void check_pointwise(clt_context *ctx, int mode, int ndim, const int64_t *shape, int posw, float beta,
                            int reduction)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++)
        n *= shape[d];
    int64_t D = ndim ? shape[ndim - 1] : 1;
    float *x = malloc(sizeof(float) * (size_t)(n + 1)), *y = malloc(sizeof(float) * (size_t)(n + 1)),
          *pw = malloc(sizeof(float) * (size_t)(D + 1));
    tu_random_f32(x, (size_t)n, -4, 4);
    tu_random_f32(y, (size_t)n, mode == 0 ? 0 : -4, mode == 0 ? 1 : 4);
    tu_random_f32(pw, (size_t)D, 0.5f, 3);
    if (mode != 0 && n > 2)
        y[1] = x[1]; /* d == 0: sign 0 */
    double *dx = malloc(sizeof(double) * (size_t)(n + 1)), *dy = malloc(sizeof(double) * (size_t)(n + 1)),
           *dpw = malloc(sizeof(double) * (size_t)(D + 1)), *rl = malloc(sizeof(double) * (size_t)(n + 1)),
           *rg = malloc(sizeof(double) * (size_t)(n + 1));
    double abs_sum = 0;
    for (int64_t i = 0; i < n; i++)
        dx[i] = x[i], dy[i] = y[i];
    for (int64_t i = 0; i < D; i++)
        dpw[i] = pw[i];
    ref_pointwise_loss(mode, n, D, dx, dy, posw ? dpw : NULL, beta, reduction, rl, rg);
    for (int64_t i = 0; i < n; i++) {
        double l;
        ref_pointwise_loss(mode, 1, 1, dx + i, dy + i, posw ? dpw + i % D : NULL, beta, 0, &l, NULL);
        abs_sum += fabs(l);
    }
    int64_t one = 1;
    clt_tensor *tx = up(ctx, CLT_F32, ndim, shape, x), *ty = up(ctx, CLT_F32, ndim, shape, y);
    clt_tensor *tp = posw ? up(ctx, CLT_F32, 1, &D, pw) : NULL;
    clt_tensor *tl = reduction ? up(ctx, CLT_F32, 0, &one, NULL) : up(ctx, CLT_F32, ndim, shape, NULL);
    clt_tensor *tg = up(ctx, CLT_F32, ndim, shape, NULL);
    clt_reduction red = (clt_reduction)reduction;
    if (mode == 0)
        TU_OK(clt_bce_with_logits(tx, ty, tp, red, tl, tg));
    else if (mode == 1)
        TU_OK(clt_l1_loss(tx, ty, red, tl, tg));
    else
        TU_OK(clt_smooth_l1_loss(tx, ty, beta, red, tl, tg));
    float *gl = down(tl), *gg = down(tg);
    if (reduction) {
        double want = rl[0], tol = 8 * EPS * (sqrt((double)n) + 16) * abs_sum / (reduction == 1 ? (double)n : 1);
        if (n == 0 && reduction == 1)
            ck_assert_msg(isnan(gl[0]), "mode %d mean of nothing %g, want NaN", mode, gl[0]);
        else
            ck_assert_msg(fabs(gl[0] - want) <= tol + 1e-30, "mode %d n %lld red %d: loss %.9g, want %.9g", mode,
                          (long long)n, reduction, gl[0], want);
    } else {
        for (int64_t i = 0; i < n; i++)
            ck_assert_msg(fabs(gl[i] - rl[i]) <= 16 * EPS * (1 + fabs(rl[i]) + fabs(dx[i])),
                          "mode %d loss[%lld] = %.9g, want %.9g", mode, (long long)i, gl[i], rl[i]);
    }
    double sc = reduction == 1 ? 1.0 / (double)n : 1.0;
    for (int64_t i = 0; i < n; i++)
        ck_assert_msg(fabs(gg[i] - rg[i]) <= 16 * EPS * sc * (4 + fabs(rg[i]) / sc),
                      "mode %d dx[%lld] = %.9g, want %.9g", mode, (long long)i, gg[i], rg[i]);
    clt_tensor_free(tx), clt_tensor_free(ty), clt_tensor_free(tp), clt_tensor_free(tl), clt_tensor_free(tg);
    free(x), free(y), free(pw), free(dx), free(dy), free(dpw), free(rl), free(rg), free(gl), free(gg);
}

START_TEST(pointwise_losses)
{
    clt_context *ctx = tu_context();
    int64_t s1[1] = {1}, s2[2] = {7, 3}, s3[2] = {1031, 5}, s4[1] = {0}, s5[3] = {2, 3, 67};
    for (int red = 0; red <= 2; red++)
        for (int mode = 0; mode <= 2; mode++) {
            float beta = mode == 2 ? 1.5f : 0.0f;
            check_pointwise(ctx, mode, 1, s1, 0, beta, red);
            check_pointwise(ctx, mode, 2, s2, mode == 0, beta, red);
            check_pointwise(ctx, mode, 2, s3, mode == 0, beta, red);
            check_pointwise(ctx, mode, 1, s4, 0, beta, red);
            check_pointwise(ctx, mode, 3, s5, 0, beta, red);
        }
    check_pointwise(ctx, 2, 2, s2, 0, 0.0f, 1); /* smooth L1 with beta 0 is L1 */
    tu_context_free(ctx);
}
END_TEST

/* The references' gradients against central differences of the references' losses. */
START_TEST(reference_gradients_match_finite_differences)
{
    const int64_t R = 3, K = 5;
    double z[15], p[15], g[15], lp, lm;
    int32_t t[3] = {1, -7, 4};
    float f[30];
    tu_random_f32(f, 30, -2, 2);
    for (int i = 0; i < 15; i++)
        z[i] = f[i], p[i] = (f[15 + i] + 2) / 4;
    const double h = 1e-6;
    for (int use_prob = 0; use_prob <= 1; use_prob++) {
        ref_cross_entropy(R, K, z, t, use_prob ? p : NULL, 0.2, -7, 1, &lp, g);
        for (int i = 0; i < 15; i++) {
            double save = z[i];
            z[i] = save + h;
            ref_cross_entropy(R, K, z, t, use_prob ? p : NULL, 0.2, -7, 1, &lp, NULL);
            z[i] = save - h;
            ref_cross_entropy(R, K, z, t, use_prob ? p : NULL, 0.2, -7, 1, &lm, NULL);
            z[i] = save;
            ck_assert_msg(fabs((lp - lm) / (2 * h) - g[i]) <= 1e-6, "ce fd %d [%d]: %.10g vs %.10g", use_prob, i,
                          (lp - lm) / (2 * h), g[i]);
        }
    }
    double pw[5] = {0.5, 1, 2, 3, 1.5};
    for (int mode = 0; mode <= 2; mode++) {
        ref_pointwise_loss(mode, 15, 5, z, p, mode == 0 ? pw : NULL, 0.7, 2, &lp, g);
        for (int i = 0; i < 15; i++) {
            if (mode != 0 && fabs(z[i] - p[i]) < 1e-3)
                continue; /* the kink of |d| */
            double save = z[i];
            z[i] = save + h;
            ref_pointwise_loss(mode, 15, 5, z, p, mode == 0 ? pw : NULL, 0.7, 2, &lp, NULL);
            z[i] = save - h;
            ref_pointwise_loss(mode, 15, 5, z, p, mode == 0 ? pw : NULL, 0.7, 2, &lm, NULL);
            z[i] = save;
            ck_assert_msg(fabs((lp - lm) / (2 * h) - g[i]) <= 1e-6, "mode %d fd [%d]: %.10g vs %.10g", mode, i,
                          (lp - lm) / (2 * h), g[i]);
        }
    }
}
END_TEST

Suite *loss_suite(void)
{
    Suite *s = suite_create("loss");
    TCase *tc = tcase_create("loss");
    tcase_add_test(tc, cross_entropy_class_targets);
    tcase_add_test(tc, cross_entropy_probability_targets);
    tcase_add_test(tc, cross_entropy_all_ignored_mean_is_nan);
    tcase_add_test(tc, pointwise_losses);
    tcase_add_test(tc, reference_gradients_match_finite_differences);
    suite_add_tcase(s, tc);
    return s;
}
