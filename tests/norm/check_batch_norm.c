/* clt_batch_norm and clt_batch_norm_backward against tests/ref/norm_ref in double: training (batch
 * statistics, the running-stat update with the unbiased variance) and inference, [N, C] and NCHW,
 * awkward sizes, dx in place over dy. Tolerances as check_norm.c (M = N * HW values per channel):
 * y, stats 16 eps (sqrt(M) + 8) (1 + |ref|); dx relative to the channel's largest term; dgamma and
 * dbeta 4 eps (M + 8) times the sum of absolute terms, plus the stats' error. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "ref/norm_ref.h"
#include "util/test_util.h"

#define EPS ((double)FLT_EPSILON)

static clt_tensor *up(clt_context *ctx, int ndim, const int64_t *shape, const float *data)
{
    clt_tensor *t;
    TU_OK(clt_tensor_create(ctx, CLT_F32, ndim, shape, &t));
    if (data && clt_tensor_numel(t))
        TU_OK(clt_tensor_write(t, data, clt_tensor_nbytes(t)));
    else
        tu_poison(t);
    return t;
}

static void read_f(const clt_tensor *t, float *f)
{
    if (clt_tensor_numel(t))
        TU_OK(clt_tensor_read(t, f, clt_tensor_nbytes(t)));
}

static void check_bn(clt_context *ctx, int ndim, const int64_t *shape, int training, int affine, int inplace)
{
    int64_t N = shape[0], C = shape[1], HW = 1;
    for (int d = 2; d < ndim; d++)
        HW *= shape[d];
    int64_t n = N * C * HW, M = N * HW;
    size_t nb = (size_t)(n + 1);
    float *x = malloc(sizeof(float) * nb), *dy = malloc(sizeof(float) * nb), *f = malloc(sizeof(float) * nb);
    float gm[64], bt[64], rmean[64], rvar[64];
    tu_random_f32(x, (size_t)n, -2, 3);
    tu_random_f32(dy, (size_t)n, -1, 1);
    tu_random_f32(gm, (size_t)C, 0.5f, 1.5f);
    tu_random_f32(bt, (size_t)C, -1, 1);
    tu_random_f32(rmean, (size_t)C, -0.5f, 0.5f);
    tu_random_f32(rvar, (size_t)C, 0.5f, 2);
    int64_t cs[1] = {C};
    clt_tensor *tx = up(ctx, ndim, shape, x), *ty = up(ctx, ndim, shape, NULL);
    clt_tensor *tg = affine ? up(ctx, 1, cs, gm) : NULL, *tb = affine ? up(ctx, 1, cs, bt) : NULL;
    clt_tensor *trm = up(ctx, 1, cs, rmean), *trv = up(ctx, 1, cs, rvar);
    clt_tensor *tsm = up(ctx, 1, cs, NULL), *tss = up(ctx, 1, cs, NULL);
    clt_batch_norm_params p;
    clt_batch_norm_params_init(&p);
    p.training = training;
    p.momentum = 0.3f;
    TU_OK(clt_batch_norm(tx, tg, tb, trm, trv, &p, ty, tsm, tss));
    double *dxx = malloc(sizeof(double) * nb), *ddy = malloc(sizeof(double) * nb), *ry = malloc(sizeof(double) * nb),
           *rdx = malloc(sizeof(double) * nb);
    double dg[64], db[64], drm[64], drv[64], sm[64], ss[64], rdg[64], rdb[64];
    for (int64_t i = 0; i < n; i++)
        dxx[i] = x[i], ddy[i] = dy[i];
    for (int64_t c = 0; c < C; c++)
        dg[c] = gm[c], db[c] = bt[c], drm[c] = rmean[c], drv[c] = rvar[c];
    ref_batch_norm(N, C, HW, training, dxx, affine ? dg : NULL, affine ? db : NULL, drm, drv, p.momentum,
                   p.eps, ry, sm, ss);
    double tol = 16 * EPS * (sqrt((double)M) + 8);
    read_f(ty, f);
    for (int64_t i = 0; i < n; i++)
        ck_assert_msg(fabs(f[i] - ry[i]) <= tol * (1 + fabs(ry[i])), "bn y[%lld] = %.9g, want %.9g",
                      (long long)i, f[i], ry[i]);
    float g4[4][64];
    read_f(trm, g4[0]), read_f(trv, g4[1]), read_f(tsm, g4[2]), read_f(tss, g4[3]);
    for (int64_t c = 0; c < C && M > 0; c++) {
        ck_assert_msg(fabs(g4[0][c] - drm[c]) <= tol * (1 + fabs(drm[c])), "running_mean[%lld] %.9g want %.9g (training %d, N %lld C %lld HW %lld, was %g)",
                      (long long)c, g4[0][c], drm[c], training, (long long)N, (long long)C, (long long)HW, (double)g4[2][c] - sm[c]);
        ck_assert_msg(fabs(g4[1][c] - drv[c]) <= tol * (1 + fabs(drv[c])), "running_var[%lld] %.9g want %.9g",
                      (long long)c, g4[1][c], drv[c]);
        ck_assert_msg(fabs(g4[2][c] - sm[c]) <= tol * (1 + fabs(sm[c])), "save_mean[%lld]", (long long)c);
        ck_assert_msg(fabs(g4[3][c] - ss[c]) <= tol * (1 + fabs(ss[c])), "save_rstd[%lld]", (long long)c);
    }
    /* backward from the device's saved statistics */
    clt_tensor *tdy = up(ctx, ndim, shape, dy), *tdx = inplace ? tdy : up(ctx, ndim, shape, NULL);
    clt_tensor *tdg = up(ctx, 1, cs, NULL), *tdb = up(ctx, 1, cs, NULL);
    TU_OK(clt_batch_norm_backward(tdy, tx, tg, tsm, tss, training, tdx, tdg, tdb));
    ref_batch_norm_backward(N, C, HW, training, ddy, dxx, affine ? dg : NULL, sm, ss, rdx, rdg, rdb);
    read_f(tdx, f);
    for (int64_t c = 0; c < C; c++) {
        double big = 0, abs_dg = 0, abs_db = 0;
        for (int64_t b = 0; b < N; b++)
            for (int64_t j = 0; j < HW; j++) {
                int64_t e = (b * C + c) * HW + j;
                big = fmax(big, fabs(rdx[e]) + ss[c] * fabs(ddy[e]) * (affine ? 1.5 : 1));
                abs_dg += fabs(ddy[e] * (dxx[e] - sm[c]) * ss[c]);
                abs_db += fabs(ddy[e]);
            }
        for (int64_t b = 0; b < N; b++)
            for (int64_t j = 0; j < HW; j++) {
                int64_t e = (b * C + c) * HW + j;
                ck_assert_msg(fabs(f[e] - rdx[e]) <= 4 * tol * big, "bn dx[%lld] = %.9g, want %.9g (training %d)",
                              (long long)e, f[e], rdx[e], training);
            }
        float gg, gb;
        read_f(tdg, g4[0]), read_f(tdb, g4[1]);
        gg = g4[0][c], gb = g4[1][c];
        ck_assert_msg(fabs(gg - rdg[c]) <= (4 * EPS * (M + 8) + tol) * (abs_dg + 1e-30) + 4 * tol * abs_db, "bn dgamma[%lld] %.9g want %.9g",
                      (long long)c, gg, rdg[c]);
        ck_assert_msg(fabs(gb - rdb[c]) <= 4 * EPS * (M + 8) * (abs_db + 1e-30), "bn dbeta[%lld] %.9g want %.9g",
                      (long long)c, gb, rdb[c]);
    }
    clt_tensor *all[] = {tx, ty, tg, tb, trm, trv, tsm, tss, tdy, inplace ? NULL : tdx, tdg, tdb};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        clt_tensor_free(all[i]);
    free(x), free(dy), free(f), free(dxx), free(ddy), free(ry), free(rdx);
}

START_TEST(batch_norm_training_and_inference)
{
    clt_context *ctx = tu_context();
    int64_t s1[2] = {5, 3}, s2[4] = {4, 6, 7, 3}, s3[3] = {2, 1, 1}, s4[4] = {3, 2, 17, 19}, s5[2] = {1, 7};
    for (int training = 0; training <= 1; training++) {
        check_bn(ctx, 2, s1, training, 1, 0);
        check_bn(ctx, 4, s2, training, 1, 1);
        check_bn(ctx, 4, s2, training, 0, 0);
        check_bn(ctx, 3, s3, training, 1, 0);
        check_bn(ctx, 4, s4, training, 1, 0);
    }
    check_bn(ctx, 2, s5, 0, 1, 0); /* one value per channel: inference only */
    /* GPUs: few channels of many values, split into chunks that start mid-plane: an odd plane,
     * one channel of a prime plane, [N, C] (planes of one value), planes of a multiple of 4
     * (batchnorm_apply in float4s) */
    int64_t s6[4] = {4, 3, 61, 67}, s7[3] = {2, 1, 12289}, s8[2] = {20011, 2}, s9[4] = {3, 2, 16, 260};
    for (int training = 0; training <= 1; training++) {
        check_bn(ctx, 4, s6, training, 1, 0);
        check_bn(ctx, 3, s7, training, 0, 1);
        check_bn(ctx, 2, s8, training, 1, 0);
        check_bn(ctx, 4, s9, training, 1, 1);
    }
    tu_context_free(ctx);
}
END_TEST

Suite *batch_norm_suite(void)
{
    Suite *s = suite_create("batch_norm");
    TCase *tc = tcase_create("batch_norm");
    tcase_add_test(tc, batch_norm_training_and_inference);
    suite_add_tcase(s, tc);
    return s;
}
