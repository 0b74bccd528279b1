/* clt_layer_norm, clt_rms_norm, clt_group_norm and their backwards against tests/ref/norm_ref in
 * double, on fresh random data and awkward shapes (1, primes, rows longer than a work-group,
 * empty), with and without the affine parameters, dx in place over dy; the reference's analytic
 * gradients are checked once against central finite differences of the reference forward.
 * Tolerances (eps = FLT_EPSILON): forward 16 eps (sqrt(L) + 8) (1 + |ref|) (f32 sums of L terms in
 * a tree); dx the same relative to the row's largest |dx| plus rstd |dy|; dgamma / dbeta 4 eps
 * (count + 8) times the sum of the absolute terms (f32 sums of `count` terms in order); dgamma also
 * the forward tolerance times sum |dy| (|x - mean| cancels when x is near the mean: xhat carries the
 * mean's rounding, ~eps (|x| + |mean|) rstd, with |x|, |mean| <= 3 and rstd < 1.4 here). */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "ref/norm_ref.h"
#include "util/test_util.h"

#define EPS ((double)FLT_EPSILON)

enum { LAYER, RMS, GROUP };

static double *to_d(const float *f, int64_t n)
{
    double *d = malloc(sizeof(double) * (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++)
        d[i] = f[i];
    return d;
}

static clt_tensor *upload(clt_context *ctx, int ndim, const int64_t *shape, const float *data)
{
    clt_tensor *t;
    TU_OK(clt_tensor_create(ctx, CLT_F32, ndim, shape, &t));
    if (data && clt_tensor_numel(t))
        TU_OK(clt_tensor_write(t, data, clt_tensor_nbytes(t)));
    else
        tu_poison(t);
    return t;
}

static float *download(const clt_tensor *t)
{
    int64_t n = clt_tensor_numel(t);
    float *f = malloc(sizeof(float) * (size_t)(n ? n : 1));
    if (n)
        TU_OK(clt_tensor_read(t, f, clt_tensor_nbytes(t)));
    return f;
}

static void expect_close(const char *what, const float *got, const double *want, int64_t n, double tol_rel,
                         double floor)
{
    for (int64_t i = 0; i < n; i++)
        ck_assert_msg(fabs(got[i] - want[i]) <= tol_rel * (floor + fabs(want[i])),
                      "%s [%lld] = %.9g, want %.9g", what, (long long)i, got[i], want[i]);
}

/* One forward + backward of `kind` on x of ndim/shape (groups for GROUP), affine or not. */
static void check_case(clt_context *ctx, int kind, int ndim, const int64_t *shape, int64_t groups,
                       int affine, int inplace)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++)
        n *= shape[d];
    int64_t R, L, S = 1, G = 1, P;
    if (kind == GROUP) {
        int64_t hw = 1;
        for (int d = 2; d < ndim; d++)
            hw *= shape[d];
        G = groups, S = hw, R = shape[0] * groups, L = shape[1] / groups * hw, P = shape[1];
    } else {
        L = shape[ndim - 1], R = L ? n / L : 0, P = L;
    }
    float *x = malloc(sizeof(float) * (size_t)(n + 1)), *dy = malloc(sizeof(float) * (size_t)(n + 1));
    float *gm = malloc(sizeof(float) * (size_t)(P + 1)), *bt = malloc(sizeof(float) * (size_t)(P + 1));
    tu_random_f32(x, (size_t)n, -2, 3);
    tu_random_f32(dy, (size_t)n, -1, 1);
    tu_random_f32(gm, (size_t)P, 0.5f, 1.5f);
    tu_random_f32(bt, (size_t)P, -1, 1);
    const float eps = 1e-5f;
    int64_t pshape[1] = {P}, rshape[1] = {R};
    clt_tensor *tx = upload(ctx, ndim, shape, x), *ty = upload(ctx, ndim, shape, NULL);
    clt_tensor *tg = affine ? upload(ctx, 1, pshape, gm) : NULL;
    clt_tensor *tb = affine && kind != RMS ? upload(ctx, 1, pshape, bt) : NULL;
    clt_tensor *tm = kind != RMS ? upload(ctx, 1, rshape, NULL) : NULL, *ts = upload(ctx, 1, rshape, NULL);
    if (kind == LAYER)
        TU_OK(clt_layer_norm(tx, tg, tb, eps, ty, tm, ts));
    else if (kind == RMS)
        TU_OK(clt_rms_norm(tx, tg, eps, ty, ts));
    else
        TU_OK(clt_group_norm(tx, groups, tg, tb, eps, ty, tm, ts));
    double *dx_ = to_d(x, n), *ddy = to_d(dy, n), *dg = to_d(gm, P), *db = to_d(bt, P);
    double *ry = malloc(sizeof(double) * (size_t)(n + 1)), *rm = malloc(sizeof(double) * (size_t)(R + 1)),
           *rs = malloc(sizeof(double) * (size_t)(R + 1));
    const double *rg = affine ? dg : NULL, *rb = affine && kind != RMS ? db : NULL;
    ref_rownorm_forward(R, L, S, G, kind == RMS, dx_, rg, rb, eps, ry, rm, rs);
    double tol = 16 * EPS * (sqrt((double)L) + 8);
    float *got = download(ty);
    expect_close("y", got, ry, n, tol, 1.0);
    free(got);
    if (L == 0) /* empty rows: nothing to normalise, the statistics are not written */
        R = 0;
    if (tm) {
        got = download(tm);
        expect_close("mean", got, rm, R, tol, 1.0);
        free(got);
    }
    got = download(ts);
    expect_close("rstd", got, rs, R, tol, 1.0);
    free(got);

    /* backward */
    clt_tensor *tdy = upload(ctx, ndim, shape, dy);
    clt_tensor *tdx = inplace ? tdy : upload(ctx, ndim, shape, NULL);
    clt_tensor *tdg = affine ? upload(ctx, 1, pshape, NULL) : NULL;
    clt_tensor *tdb = affine && kind != RMS ? upload(ctx, 1, pshape, NULL) : NULL;
    if (kind == LAYER)
        TU_OK(clt_layer_norm_backward(tdy, tx, tg, tm, ts, tdx, tdg, tdb));
    else if (kind == RMS)
        TU_OK(clt_rms_norm_backward(tdy, tx, tg, ts, tdx, tdg));
    else
        TU_OK(clt_group_norm_backward(tdy, tx, groups, tg, tm, ts, tdx, tdg, tdb));
    double *rdx = malloc(sizeof(double) * (size_t)(n + 1)), *rdg = calloc((size_t)(P + 1), sizeof(double)),
           *rdb = calloc((size_t)(P + 1), sizeof(double)), *ag = calloc((size_t)(P + 1), sizeof(double)),
           *ab = calloc((size_t)(P + 1), sizeof(double)); /* zero: empty rows leave them unwritten */
    ref_rownorm_backward(R, L, S, G, kind == RMS, ddy, dx_, rg, eps, rdx, rdg, rdb, ag, ab);
    got = download(tdx);
    for (int64_t r = 0; r < R; r++) {
        double big = 0;
        for (int64_t i = 0; i < L; i++)
            big = fmax(big, fabs(rdx[r * L + i]) + rs[r] * fabs(ddy[r * L + i]) * (affine ? 1.5 : 1.0));
        for (int64_t i = 0; i < L; i++)
            ck_assert_msg(fabs(got[r * L + i] - rdx[r * L + i]) <= tol * big,
                          "kind %d dx [%lld] = %.9g, want %.9g", kind, (long long)(r * L + i),
                          got[r * L + i], rdx[r * L + i]);
    }
    free(got);
    double count = (double)(R / G * S);
    if (tdg) {
        got = download(tdg);
        for (int64_t p = 0; p < P; p++)
            ck_assert_msg(fabs(got[p] - rdg[p]) <= 4 * EPS * (count + 8) * (ag[p] + 1e-30) + tol * (ag[p] + 4 * ab[p]),
                          "kind %d dgamma [%lld] = %.9g, want %.9g", kind, (long long)p, got[p], rdg[p]);
        free(got);
    }
    if (tdb) {
        got = download(tdb);
        for (int64_t p = 0; p < P; p++)
            ck_assert_msg(fabs(got[p] - rdb[p]) <= 4 * EPS * (count + 8) * (ab[p] + 1e-30),
                          "kind %d dbeta [%lld] = %.9g, want %.9g", kind, (long long)p, got[p], rdb[p]);
        free(got);
    }
    clt_tensor *all[] = {tx, ty, tg, tb, tm, ts, tdy, inplace ? NULL : tdx, tdg, tdb};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        clt_tensor_free(all[i]);
    free(x), free(dy), free(gm), free(bt), free(dx_), free(ddy), free(dg), free(db), free(ry), free(rm);
    free(rs), free(rdx), free(rdg), free(rdb), free(ag), free(ab);
}

START_TEST(layer_norm_forward_backward)
{
    clt_context *ctx = tu_context();
    int64_t s1[2] = {1, 1}, s2[2] = {7, 13}, s3[3] = {3, 5, 131}, s4[2] = {2, 601}, s5[2] = {0, 5},
            s6[2] = {4, 0}, s7[1] = {37};
    check_case(ctx, LAYER, 2, s1, 0, 1, 0);
    check_case(ctx, LAYER, 2, s2, 0, 1, 1);
    check_case(ctx, LAYER, 2, s2, 0, 0, 0);
    check_case(ctx, LAYER, 3, s3, 0, 1, 0);
    check_case(ctx, LAYER, 2, s4, 0, 1, 1);
    check_case(ctx, LAYER, 2, s5, 0, 1, 0);
    check_case(ctx, LAYER, 2, s6, 0, 1, 0);
    check_case(ctx, LAYER, 1, s7, 0, 1, 0);
    /* GPUs: dgamma / dbeta split over column strips x row blocks, the last block short (1000 rows
     * of 67 columns: two strips, the second of 3 columns), one column in 8 blocks, one row */
    int64_t s8[2] = {1000, 67}, s9[2] = {257, 1}, s10[2] = {1, 300};
    check_case(ctx, LAYER, 2, s8, 0, 1, 0);
    check_case(ctx, LAYER, 2, s8, 0, 0, 1);
    check_case(ctx, LAYER, 2, s9, 0, 1, 0);
    check_case(ctx, LAYER, 2, s10, 0, 1, 0);
    /* many row blocks (more groups per compute unit than this machine's few cores ask for): the
     * last block of a strip adds four blocks' partials at a time, then the rest one by one; 39
     * blocks of 2000 rows, twice (the counters must reset) */
    int64_t s11[2] = {2000, 67};
    setenv("CLT_NORM_GROUPS_PER_CU", "40", 1);
    check_case(ctx, LAYER, 2, s11, 0, 1, 0);
    check_case(ctx, LAYER, 2, s11, 0, 1, 1);
    unsetenv("CLT_NORM_GROUPS_PER_CU");
    /* GPUs: rows past what the forward keeps in registers (8 values per item of 256): the
     * general three-pass loop, a prime length */
    int64_t s12[2] = {3, 2053};
    check_case(ctx, LAYER, 2, s12, 0, 1, 0);
    check_case(ctx, RMS, 2, s12, 0, 1, 1);
    /* GPUs: the forward's group edges (row_norm.c row_group): 512 keeps 256 items, 513 .. 1024
     * take 128 holding up to 8 values each, 1025 is back in 256 */
    int64_t s13[2] = {3, 512}, s14[2] = {5, 1024}, s15[2] = {2, 1025}, s16[2] = {4, 513};
    check_case(ctx, LAYER, 2, s13, 0, 1, 0);
    check_case(ctx, LAYER, 2, s14, 0, 1, 0);
    check_case(ctx, RMS, 2, s14, 0, 1, 1);
    check_case(ctx, LAYER, 2, s15, 0, 0, 0);
    check_case(ctx, LAYER, 2, s16, 0, 1, 1);
    tu_context_free(ctx);
}
END_TEST

START_TEST(rms_norm_forward_backward)
{
    clt_context *ctx = tu_context();
    int64_t s1[2] = {1, 1}, s2[2] = {11, 17}, s3[2] = {3, 523}, s5[2] = {0, 3};
    check_case(ctx, RMS, 2, s1, 0, 1, 0);
    check_case(ctx, RMS, 2, s2, 0, 1, 1);
    check_case(ctx, RMS, 2, s2, 0, 0, 0);
    check_case(ctx, RMS, 2, s3, 0, 1, 0);
    check_case(ctx, RMS, 2, s5, 0, 1, 0);
    int64_t s6[3] = {13, 47, 129}; /* GPUs: three strips, the last of one column, in row blocks */
    check_case(ctx, RMS, 3, s6, 0, 1, 0);
    tu_context_free(ctx);
}
END_TEST

START_TEST(group_norm_forward_backward)
{
    clt_context *ctx = tu_context();
    int64_t s1[3] = {2, 6, 5}, s2[4] = {3, 4, 7, 3}, s3[3] = {1, 5, 1}, s4[2] = {3, 6}, s5[3] = {2, 4, 0},
            s6[4] = {2, 3, 13, 11};
    check_case(ctx, GROUP, 3, s1, 3, 1, 0);
    check_case(ctx, GROUP, 4, s2, 2, 1, 1);
    check_case(ctx, GROUP, 4, s2, 1, 0, 0);
    check_case(ctx, GROUP, 3, s3, 5, 1, 0);
    check_case(ctx, GROUP, 2, s4, 2, 1, 0);
    check_case(ctx, GROUP, 3, s5, 2, 1, 0);
    check_case(ctx, GROUP, 4, s6, 3, 1, 0);
    tu_context_free(ctx);
}
END_TEST

/* The reference's analytic gradients against central differences of the reference forward, for
 * the loss sum(w * y): the tests above trust ref_rownorm_backward, this keeps it honest. */
START_TEST(reference_gradients_match_finite_differences)
{
    for (int kind = LAYER; kind <= GROUP; kind++) {
        int64_t R = kind == GROUP ? 4 : 3, L = kind == GROUP ? 6 : 7, S = kind == GROUP ? 3 : 1,
                G = kind == GROUP ? 2 : 1, P = G * (L / S), n = R * L;
        double x[42], w[42], gm[8], bt[8], y[42], dx[42], dg[8], db[8];
        float f[42 + 42 + 16];
        tu_random_f32(f, (size_t)(2 * n + 2 * P), -1, 1);
        for (int64_t i = 0; i < n; i++)
            x[i] = f[i] * 2, w[i] = f[n + i];
        for (int64_t p = 0; p < P; p++)
            gm[p] = 1 + f[2 * n + p] * 0.5, bt[p] = f[2 * n + P + p];
        const double eps = 1e-5, h = 1e-6;
        int rms = kind == RMS;
        ref_rownorm_backward(R, L, S, G, rms, w, x, gm, eps, dx, dg, db, NULL, NULL);
        for (int64_t i = 0; i < n; i++) {
            double save = x[i], lp = 0, lm = 0;
            x[i] = save + h;
            ref_rownorm_forward(R, L, S, G, rms, x, gm, bt, eps, y, NULL, NULL);
            for (int64_t j = 0; j < n; j++)
                lp += w[j] * y[j];
            x[i] = save - h;
            ref_rownorm_forward(R, L, S, G, rms, x, gm, bt, eps, y, NULL, NULL);
            for (int64_t j = 0; j < n; j++)
                lm += w[j] * y[j];
            x[i] = save;
            double fd = (lp - lm) / (2 * h);
            ck_assert_msg(fabs(fd - dx[i]) <= 1e-6 * (1 + fabs(fd)), "kind %d dx[%lld]: fd %.12g, analytic %.12g",
                          kind, (long long)i, fd, dx[i]);
        }
        for (int64_t p = 0; p < P; p++) {
            double save = gm[p], lp = 0, lm = 0;
            gm[p] = save + h;
            ref_rownorm_forward(R, L, S, G, rms, x, gm, bt, eps, y, NULL, NULL);
            for (int64_t j = 0; j < n; j++)
                lp += w[j] * y[j];
            gm[p] = save - h;
            ref_rownorm_forward(R, L, S, G, rms, x, gm, bt, eps, y, NULL, NULL);
            for (int64_t j = 0; j < n; j++)
                lm += w[j] * y[j];
            gm[p] = save;
            ck_assert_msg(fabs((lp - lm) / (2 * h) - dg[p]) <= 1e-6 * (1 + fabs(dg[p])), "kind %d dgamma", kind);
        }
    }
    /* batch norm, training */
    {
        int64_t N = 3, C = 2, HW = 5, n = N * C * HW;
        double x[30], w[30], gm[2] = {1.3, 0.7}, bt[2] = {0.1, -0.2}, y[30], dx[30], dg[2], db[2], m[2], s[2];
        float f[60];
        tu_random_f32(f, 60, -1, 1);
        for (int64_t i = 0; i < n; i++)
            x[i] = f[i] * 2, w[i] = f[n + i];
        ref_batch_norm(N, C, HW, 1, x, gm, bt, NULL, NULL, 0.1, 1e-5, y, m, s);
        ref_batch_norm_backward(N, C, HW, 1, w, x, gm, m, s, dx, dg, db);
        const double h = 1e-6;
        for (int64_t i = 0; i < n; i++) {
            double save = x[i], lp = 0, lm = 0;
            x[i] = save + h;
            ref_batch_norm(N, C, HW, 1, x, gm, bt, NULL, NULL, 0.1, 1e-5, y, NULL, NULL);
            for (int64_t j = 0; j < n; j++)
                lp += w[j] * y[j];
            x[i] = save - h;
            ref_batch_norm(N, C, HW, 1, x, gm, bt, NULL, NULL, 0.1, 1e-5, y, NULL, NULL);
            for (int64_t j = 0; j < n; j++)
                lm += w[j] * y[j];
            x[i] = save;
            double fd = (lp - lm) / (2 * h);
            ck_assert_msg(fabs(fd - dx[i]) <= 1e-6 * (1 + fabs(fd)), "batch norm dx[%lld]: fd %.12g, analytic %.12g",
                          (long long)i, fd, dx[i]);
        }
    }
}
END_TEST

Suite *norm_suite(void)
{
    Suite *s = suite_create("norm");
    TCase *tc = tcase_create("row_norms");
    tcase_add_test(tc, layer_norm_forward_backward);
    tcase_add_test(tc, rms_norm_forward_backward);
    tcase_add_test(tc, group_norm_forward_backward);
    tcase_add_test(tc, reference_gradients_match_finite_differences);
    suite_add_tcase(s, tc);
    return s;
}
