/* clt_reduce (every op, all / single / contiguous / scattered axis sets, keepdim, negative axes),
 * clt_argmax / clt_argmin (ties, NaN), clt_rowsum, the multi-group single-launch path (twice on one
 * context: the counters must reset), empty reductions and every error path of the header.
 *
 * Tolerances, against a double reference on the same float inputs (eps = FLT_EPSILON):
 *   SUM, MEAN: |got - ref| <= eps * (2 sqrt(n) + 16) * sum|x| (MEAN: / n), n = elements reduced.
 *     Any float summation order is within (n - 1) eps sum|x|; the blocked/tree order the kernel
 *     uses behaves like a random walk, so sqrt(n) with margin. Missing or doubled elements are
 *     caught exactly by the integer-valued test (sums below 2^24 are exact in any order).
 *   L2NORM: relative eps * (2 sqrt(n) + 16) (all terms positive).
 *   VAR, VAR_UNBIASED: relative 1e-4 + eps * (4 sqrt(n) + 16) (Welford/Chan keeps this even for a
 *     mean of 1e4 and a standard deviation of 1).
 *   MAX, MIN, ARGMAX, ARGMIN: exact.
 */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cltensor_cl.h"
#include "ref/reduce_ref.h"
#include "util/test_util.h"

#define EXPECT_STATUS(call, want)                                                                   \
    do {                                                                                            \
        clt_status st_ = (call);                                                                    \
        ck_assert_msg(st_ == (want), "%s -> %s, expected %s", #call, clt_status_string(st_),        \
                      clt_status_string(want));                                                     \
    } while (0)

#define EXPECT_MESSAGE(ctx, needle)                                                                 \
    ck_assert_msg(strstr(clt_last_error(ctx), (needle)) != NULL,                                    \
                  "error message \"%s\" does not mention \"%s\"", clt_last_error(ctx), (needle))

static const char *const op_name[] = {"sum", "mean", "max", "min", "var", "var_unbiased", "l2norm",
                                      "argmax", "argmin"};

static double tolerance(int op, int64_t n, double ref, double scale)
{
    double e = FLT_EPSILON, sq = sqrt((double)n);
    switch (op) {
    case 0: case 1: return e * (2 * sq + 16) * scale + 1e-30;
    case 6: return e * (2 * sq + 16) * fabs(ref) + 1e-30;
    case 4: case 5: return (1e-4 + e * (4 * sq + 16)) * fabs(ref) + 1e-30;
    default: return 0.0;
    }
}

/* Run op over `axes` of x (data given) and compare with the reference. Returns nothing; fails the
 * test with the case in the message. */
static void check_case(clt_context *ctx, int op, int ndim, const int64_t *shape, const float *data,
                       int naxes, const int *axes, int keepdim)
{
    int reduced[CLT_MAX_DIMS] = {0};
    int64_t n = 1, R = 1;
    for (int d = 0; d < ndim; d++)
        n *= shape[d];
    if (naxes == 0) {
        for (int d = 0; d < ndim; d++)
            reduced[d] = 1;
    }
    for (int i = 0; i < naxes; i++)
        reduced[axes[i] < 0 ? axes[i] + ndim : axes[i]] = 1;
    int64_t oshape[CLT_MAX_DIMS];
    int ondim = 0;
    for (int d = 0; d < ndim; d++) {
        if (reduced[d])
            R *= shape[d];
        if (!reduced[d] || keepdim)
            oshape[ondim++] = reduced[d] ? 1 : shape[d];
    }
    clt_tensor *x = NULL, *out = NULL;
    TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, ndim, shape, data, (size_t)n * sizeof(float), &x));
    int is_arg = op >= REF_ARGMAX;
    TU_OK(clt_tensor_create(ctx, is_arg ? CLT_I32 : CLT_F32, ondim, oshape, &out));
    int64_t O = clt_tensor_numel(out);
    tu_poison(out);
    if (op == REF_ARGMAX)
        TU_OK(clt_argmax(x, axes[0], keepdim, out));
    else if (op == REF_ARGMIN)
        TU_OK(clt_argmin(x, axes[0], keepdim, out));
    else
        TU_OK(clt_reduce((clt_reduce_op)op, x, naxes, axes, keepdim, out));
    double *want = malloc(((size_t)O + 1) * sizeof *want), *scale = malloc(((size_t)O + 1) * sizeof *scale);
    float *got = malloc(((size_t)O + 1) * sizeof *got);
    ref_reduce(op, data, ndim, shape, reduced, want, scale);
    TU_OK(clt_tensor_read(out, got, (size_t)O * 4));
    for (int64_t o = 0; o < O; o++) {
        double g;
        if (is_arg) {
            int32_t gi;
            memcpy(&gi, &got[o], 4);
            g = gi;
        } else {
            g = got[o];
        }
        double w = want[o];
        int ok = isnan(w) ? isnan(g) : g == w || fabs(g - w) <= tolerance(op, R, w, scale[o]);
        if (!ok)
            ck_abort_msg("%s over %d axes (first %d) of a %d-d tensor [%lld, ...] (n %lld, R %lld, "
                         "keepdim %d): out[%lld] = %.9g, expected %.9g (tolerance %.3g)",
                         op_name[op], naxes, naxes ? axes[0] : -99, ndim, (long long)shape[0],
                         (long long)n, (long long)R, keepdim, (long long)o, g, w,
                         tolerance(op, R, w, scale[o]));
    }
    free(want);
    free(scale);
    free(got);
    clt_tensor_free(x);
    clt_tensor_free(out);
}

static float *random_data(int64_t n, float lo, float hi)
{
    float *d = malloc(((size_t)n + 1) * sizeof *d);
    ck_assert_ptr_nonnull(d);
    tu_random_f32(d, (size_t)n, lo, hi);
    return d;
}

/* Every clt_reduce op over the given axes. */
static void check_all_ops(clt_context *ctx, int ndim, const int64_t *shape, int naxes,
                          const int *axes, int keepdim)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++)
        n *= shape[d];
    float *data = random_data(n, -1.0f, 1.0f);
    for (int op = 0; op <= 6; op++)
        check_case(ctx, op, ndim, shape, data, naxes, axes, keepdim);
    free(data);
}

START_TEST(reduce_all_axes)
{
    clt_context *ctx = tu_context();
    static const int64_t sizes[] = {1, 7, 13, 256, 1000, 4099};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (int kd = 0; kd < 2; kd++)
            check_all_ops(ctx, 1, &sizes[i], 0, NULL, kd);
    int64_t s3[3] = {3, 5, 7};
    check_all_ops(ctx, 3, s3, 0, NULL, 0);
    check_all_ops(ctx, 3, s3, 0, NULL, 1);
    check_all_ops(ctx, 0, NULL, 0, NULL, 0); /* a scalar reduces to itself */
    tu_context_free(ctx);
}
END_TEST

START_TEST(reduce_single_axis)
{
    clt_context *ctx = tu_context();
    int64_t s3[3] = {3, 7, 13}, s4[4] = {2, 3, 5, 7}, s2[2] = {1, 13};
    for (int a = -3; a < 3; a++)
        check_all_ops(ctx, 3, s3, 1, &a, a & 1);
    for (int a = 0; a < 4; a++)
        check_all_ops(ctx, 4, s4, 1, &a, 0);
    for (int a = 0; a < 2; a++)
        check_all_ops(ctx, 2, s2, 1, &a, 1);
    tu_context_free(ctx);
}
END_TEST

START_TEST(reduce_axis_sets)
{
    clt_context *ctx = tu_context();
    int64_t s4[4] = {3, 4, 5, 6}, s5[5] = {2, 1, 3, 5, 7};
    static const int sets[][4] = {{0, 2}, {1, 3}, {0, 1}, {2, 3}, {0, 3}, {1, 2}, {-1, 0}, {3, 1, 0}, {0, 2, 3}};
    static const int counts[] = {2, 2, 2, 2, 2, 2, 2, 3, 3};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        check_all_ops(ctx, 4, s4, counts[i], sets[i], (int)(i & 1));
    int a5[3] = {0, 2, 4}, b5[2] = {1, 3};
    check_all_ops(ctx, 5, s5, 3, a5, 1);
    check_all_ops(ctx, 5, s5, 2, b5, 0);
    tu_context_free(ctx);
}
END_TEST

/* Long reductions with few outputs run as many work-groups in one launch (last group finishes);
 * doing each twice on the same context proves the counters were reset. */
START_TEST(reduce_long_multi_group)
{
    clt_context *ctx = tu_context();
    int64_t n1 = 1000003, s2[2] = {2, 300007}, s3[2] = {300007, 3}, s4[4] = {2, 50021, 3, 2};
    int a1 = 1, a0 = 0, g[2] = {1, 3}, h[2] = {0, 2};
    for (int rep = 0; rep < 2; rep++) {
        check_all_ops(ctx, 1, &n1, 0, NULL, rep);
        check_all_ops(ctx, 2, s2, 1, &a1, 0);
        check_all_ops(ctx, 2, s3, 1, &a0, 1);
        check_all_ops(ctx, 4, s4, 2, g, 0); /* general, innermost reduced */
        check_all_ops(ctx, 4, s4, 2, h, 0); /* general, innermost kept */
    }
    float *d = random_data(n1, -1.0f, 1.0f);
    for (int op = REF_ARGMAX; op <= REF_ARGMIN; op++)
        for (int rep = 0; rep < 2; rep++)
            check_case(ctx, op, 1, &n1, d, 1, &a0, rep);
    free(d);
    tu_context_free(ctx);
}
END_TEST

/* Rows whose start and length are multiples of 4 take the float4 path on GPU-style kernels (the
 * gfx902 profile here), and long ones are also split across work-groups: both at once, every op,
 * twice on one context. Under the native profile on POCL the same shapes run the CPU rows variant. */
START_TEST(reduce_vec4_rows_split)
{
    clt_context *ctx = tu_context();
    static const int64_t shapes[][2] = {{1, 65536}, {3, 65536}, {1, 100004}, {2, 40000},
                                        {5, 16388}, {64, 1000},  {1, 262144}};
    int last = 1;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        int64_t n = shapes[i][0] * shapes[i][1];
        float *d = random_data(n, -1.0f, 1.0f);
        for (int rep = 0; rep < 2; rep++)
            for (int op = 0; op <= REF_ARGMIN; op++)
                check_case(ctx, op, 2, shapes[i], d, 1, &last, rep);
        free(d);
    }
    tu_context_free(ctx);
}
END_TEST

/* Column sums of few outputs over many chunk groups: the last group merges its chunks' partials
 * four at a time, then one by one. A device of few compute units splits into few chunks, so the
 * test asks for more groups per compute unit (reduce.c's A/B switch, read at each launch): 2500
 * rows of 131 columns (capped at 64 outputs per group, 4 lanes each) then make 18 chunks, so two
 * lanes merge four and one, two merge four. Every op, twice on one context (the counters must
 * reset). */
START_TEST(reduce_cols_many_chunks)
{
    clt_context *ctx = tu_context();
    int64_t shape[2] = {2500, 131};
    int first = 0;
    setenv("CLT_REDUCE_GROUPS_PER_CU", "128", 1);
    float *d = random_data(shape[0] * shape[1], -1.0f, 1.0f);
    for (int rep = 0; rep < 2; rep++)
        for (int op = 0; op <= REF_ARGMIN; op++)
            check_case(ctx, op, 2, shape, d, 1, &first, rep);
    free(d);
    unsetenv("CLT_REDUCE_GROUPS_PER_CU");
    tu_context_free(ctx);
}
END_TEST

/* Integer values: every partial sum is exact, so any lost or doubled element shows. */
START_TEST(reduce_sum_exact_integers)
{
    clt_context *ctx = tu_context();
    int64_t n = 1000003, s2[2] = {5, 200003}, s3[3] = {200003, 5};
    float *d = malloc((size_t)(5 * 200003) * sizeof *d);
    for (int64_t i = 0; i < 5 * 200003; i++)
        d[i] = (float)((int)(tu_rng_next() % 17) - 8);
    int axes1 = 1, axes0 = 0;
    for (int rep = 0; rep < 2; rep++) {
        clt_tensor *x = NULL, *out = NULL;
        TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, 1, &n, d, (size_t)n * 4, &x));
        TU_OK(clt_tensor_create(ctx, CLT_F32, 0, NULL, &out));
        tu_poison(out);
        TU_OK(clt_reduce(CLT_REDUCE_SUM, x, 0, NULL, 0, out));
        float got;
        TU_OK(clt_tensor_read(out, &got, 4));
        double want = 0;
        for (int64_t i = 0; i < n; i++)
            want += d[i];
        ck_assert_msg(got == (float)want, "exact sum: got %.9g, expected %.9g", got, want);
        clt_tensor_free(x);
        clt_tensor_free(out);
    }
    int reduced2[2] = {0, 1}, reduced3[2] = {1, 0};
    double want[5];
    for (int k = 0; k < 2; k++) {
        const int64_t *s = k ? s3 : s2;
        clt_tensor *x = NULL, *out = NULL;
        int64_t os = 5;
        TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, 2, s, d, (size_t)(5 * 200003) * 4, &x));
        TU_OK(clt_tensor_create(ctx, CLT_F32, 1, &os, &out));
        tu_poison(out);
        TU_OK(clt_reduce(CLT_REDUCE_SUM, x, 1, k ? &axes0 : &axes1, 0, out));
        float got[5];
        TU_OK(clt_tensor_read(out, got, sizeof got));
        ref_reduce(0, d, 2, s, k ? reduced3 : reduced2, want, NULL);
        for (int o = 0; o < 5; o++)
            ck_assert_msg(got[o] == (float)want[o], "exact sum (case %d) out[%d] = %.9g, expected %.9g",
                          k, o, got[o], want[o]);
        clt_tensor_free(x);
        clt_tensor_free(out);
    }
    free(d);
    tu_context_free(ctx);
}
END_TEST

/* Data with mean 1e4 and standard deviation ~1: sum of squares minus squared sum would lose
 * everything; Welford/Chan must not. */
START_TEST(reduce_var_large_mean)
{
    clt_context *ctx = tu_context();
    int64_t sizes[] = {13, 1000, 1000003}, s2[2] = {7, 4099};
    for (int i = 0; i < 3; i++) {
        float *d = random_data(sizes[i], 1e4f - 1.7320508f, 1e4f + 1.7320508f);
        check_case(ctx, CLT_REDUCE_VAR, 1, &sizes[i], d, 0, NULL, 0);
        check_case(ctx, CLT_REDUCE_VAR_UNBIASED, 1, &sizes[i], d, 0, NULL, 1);
        check_case(ctx, CLT_REDUCE_MEAN, 1, &sizes[i], d, 0, NULL, 0);
        free(d);
    }
    float *d = random_data(7 * 4099, -1e4f - 1.0f, -1e4f + 1.0f);
    int a = 1, b = 0;
    check_case(ctx, CLT_REDUCE_VAR, 2, s2, d, 1, &a, 0);
    check_case(ctx, CLT_REDUCE_VAR_UNBIASED, 2, s2, d, 1, &b, 0);
    free(d);
    /* one element: VAR 0, VAR_UNBIASED NaN (n - 1 = 0) */
    int64_t one = 1;
    float v = 3.5f;
    check_case(ctx, CLT_REDUCE_VAR, 1, &one, &v, 0, NULL, 0);
    check_case(ctx, CLT_REDUCE_VAR_UNBIASED, 1, &one, &v, 0, NULL, 0);
    tu_context_free(ctx);
}
END_TEST

/* Ties go to the first index; NaN is the largest for argmax and the smallest for argmin. MAX/MIN
 * propagate NaN. Checked against the reference for short rows and across chunk boundaries. */
START_TEST(reduce_argmax_ties_and_nan)
{
    clt_context *ctx = tu_context();
    static const float rows[][6] = {
        {1, 3, 3, 2, -1, 3},           {-INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY},
        {2, NAN, 5, NAN, 9, -9},       {INFINITY, 1, INFINITY, -INFINITY, -INFINITY, 0},
        {0, -0.0f, 0, 0, 0, 0},        {4, 4, 4, 4, 4, NAN},
        {NAN, NAN, 1, 2, 3, 4},        {-5, 7, -5, 7, -5, 7}};
    int64_t shape[2] = {8, 6};
    int a = 1, b = -2;
    for (int op = REF_ARGMAX; op <= REF_ARGMIN; op++) {
        check_case(ctx, op, 2, shape, &rows[0][0], 1, &a, 0);
        check_case(ctx, op, 2, shape, &rows[0][0], 1, &b, 1); /* columns */
    }
    check_case(ctx, CLT_REDUCE_MAX, 2, shape, &rows[0][0], 1, &a, 0);
    check_case(ctx, CLT_REDUCE_MIN, 2, shape, &rows[0][0], 1, &b, 0);
    /* long: the extreme value appears several times, across chunks; then a NaN late in the array */
    int64_t n = 1000003, s2[2] = {3, 333334};
    float *d = random_data(n, -1.0f, 1.0f);
    int64_t pos[] = {999999, 123457, 500001, 77};
    for (int i = 0; i < 4; i++)
        d[pos[i]] = i & 1 ? -2.0f : 2.0f;
    int axis0 = 0, axis1 = 1;
    for (int op = REF_ARGMAX; op <= REF_ARGMIN; op++) {
        check_case(ctx, op, 1, &n, d, 1, &axis0, 0);
        check_case(ctx, op, 2, s2, d + 1, 1, &axis1, 0);
    }
    d[876543] = NAN;
    d[876544] = NAN;
    for (int op = REF_ARGMAX; op <= REF_ARGMIN; op++)
        check_case(ctx, op, 1, &n, d, 1, &axis0, 1);
    check_case(ctx, CLT_REDUCE_MAX, 1, &n, d, 0, NULL, 0);
    check_case(ctx, CLT_REDUCE_MIN, 1, &n, d, 0, NULL, 0);
    check_case(ctx, CLT_REDUCE_SUM, 1, &n, d, 0, NULL, 0);
    free(d);
    tu_context_free(ctx);
}
END_TEST

/* Reducing an empty axis: SUM 0, L2NORM 0, MEAN/VAR NaN; MAX/MIN/argmax: CLT_ERR_INVALID_SHAPE.
 * No outputs at all: nothing to do. */
START_TEST(reduce_empty)
{
    clt_context *ctx = tu_context();
    int64_t s[2] = {3, 0}, t[2] = {0, 3}, three = 3;
    clt_tensor *x = NULL, *y = NULL, *out = NULL, *none = NULL, *iout = NULL;
    TU_OK(clt_tensor_create(ctx, CLT_F32, 2, s, &x));
    TU_OK(clt_tensor_create(ctx, CLT_F32, 2, t, &y));
    TU_OK(clt_tensor_create(ctx, CLT_F32, 1, &three, &out));
    TU_OK(clt_tensor_create(ctx, CLT_I32, 1, &three, &iout));
    int64_t zero = 0;
    TU_OK(clt_tensor_create(ctx, CLT_F32, 1, &zero, &none));
    int a = 1;
    for (int op = 0; op <= 6; op++) {
        tu_poison(out);
        clt_status st = clt_reduce((clt_reduce_op)op, x, 1, &a, 0, out);
        float got[3];
        if (op == CLT_REDUCE_MAX || op == CLT_REDUCE_MIN) {
            ck_assert_int_eq(st, CLT_ERR_INVALID_SHAPE);
            EXPECT_MESSAGE(ctx, "clt_reduce");
            TU_OK(clt_tensor_read(out, got, sizeof got));
            for (int i = 0; i < 3; i++)
                ck_assert(isnan(got[i])); /* still the poison */
            EXPECT_STATUS(clt_reduce((clt_reduce_op)op, y, 1, &a, 0, none), CLT_SUCCESS);
            a = 0;
            EXPECT_STATUS(clt_reduce((clt_reduce_op)op, y, 1, &a, 0, out), CLT_ERR_INVALID_SHAPE);
            a = 1;
            continue;
        }
        TU_OK(st);
        TU_OK(clt_tensor_read(out, got, sizeof got));
        for (int i = 0; i < 3; i++) {
            int want_nan = op == CLT_REDUCE_MEAN || op == CLT_REDUCE_VAR || op == CLT_REDUCE_VAR_UNBIASED;
            ck_assert_msg(want_nan ? isnan(got[i]) : got[i] == 0.0f, "%s of an empty axis: %g",
                          op_name[op], got[i]);
        }
        TU_OK(clt_reduce((clt_reduce_op)op, y, 1, &a, 0, none)); /* no outputs */
    }
    EXPECT_STATUS(clt_argmax(x, 1, 0, iout), CLT_ERR_INVALID_SHAPE);
    EXPECT_MESSAGE(ctx, "clt_argmax");
    EXPECT_STATUS(clt_argmin(x, -1, 0, iout), CLT_ERR_INVALID_SHAPE);
    EXPECT_MESSAGE(ctx, "clt_argmin");
    clt_tensor *scalar = NULL;
    TU_OK(clt_tensor_create(ctx, CLT_F32, 0, NULL, &scalar));
    tu_poison(scalar);
    TU_OK(clt_reduce(CLT_REDUCE_SUM, none, 0, NULL, 0, scalar));
    float v;
    TU_OK(clt_tensor_read(scalar, &v, 4));
    ck_assert(v == 0.0f);
    clt_tensor_free(x);
    clt_tensor_free(y);
    clt_tensor_free(out);
    clt_tensor_free(iout);
    clt_tensor_free(none);
    clt_tensor_free(scalar);
    tu_context_free(ctx);
}
END_TEST

static void check_rowsum(clt_context *ctx, int ndim, const int64_t *shape)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++)
        n *= shape[d];
    float *d = random_data(n, -1.0f, 1.0f);
    clt_tensor *x = NULL, *out = NULL;
    TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, ndim, shape, d, (size_t)n * 4, &x));
    TU_OK(clt_tensor_create(ctx, CLT_F32, ndim - 1, shape, &out));
    tu_poison(out);
    TU_OK(clt_rowsum(x, out));
    int64_t O = clt_tensor_numel(out), R = shape[ndim - 1];
    float *got = malloc((size_t)O * 4);
    double *want = malloc((size_t)O * 8), *scale = malloc((size_t)O * 8);
    int reduced[CLT_MAX_DIMS] = {0};
    reduced[ndim - 1] = 1;
    ref_reduce(0, d, ndim, shape, reduced, want, scale);
    TU_OK(clt_tensor_read(out, got, (size_t)O * 4));
    for (int64_t o = 0; o < O; o++)
        ck_assert_msg(fabs(got[o] - want[o]) <= tolerance(0, R, want[o], scale[o]),
                      "rowsum %d-d, R %lld: out[%lld] = %.9g, expected %.9g", ndim, (long long)R,
                      (long long)o, got[o], want[o]);
    free(d);
    free(got);
    free(want);
    free(scale);
    clt_tensor_free(x);
    clt_tensor_free(out);
}

START_TEST(rowsum_shapes)
{
    clt_context *ctx = tu_context();
    int64_t a[2] = {512, 1000}, b[2] = {7, 13}, c[2] = {1, 1}, e[3] = {3, 5, 7}, f[2] = {3, 100003},
            g[1] = {1000003}, h[2] = {257, 1};
    check_rowsum(ctx, 2, a);
    check_rowsum(ctx, 2, b);
    check_rowsum(ctx, 2, c);
    check_rowsum(ctx, 3, e);
    check_rowsum(ctx, 2, f);
    check_rowsum(ctx, 1, g);
    check_rowsum(ctx, 2, h);
    tu_context_free(ctx);
}
END_TEST

/* x and out at byte offsets inside one user buffer (views): offsets are honoured, and bytes around
 * out are untouched. */
START_TEST(reduce_offsets_in_shared_buffer)
{
    clt_context *ctx = tu_context();
    enum { N = 6 * 1001, BYTES = (N + 64) * 4 };
    cl_int err;
    cl_mem buf = clCreateBuffer(clt_context_cl_context(ctx), CL_MEM_READ_WRITE, BYTES, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    float *host = random_data(BYTES / 4, -1.0f, 1.0f), *back = malloc(BYTES);
    ck_assert_int_eq(clEnqueueWriteBuffer(clt_context_cl_queue(ctx), buf, CL_TRUE, 0, BYTES, host, 0,
                                          NULL, NULL), CL_SUCCESS);
    int64_t xs[2] = {6, 1001}, os = 6;
    clt_tensor *x = NULL, *out = NULL;
    TU_OK(clt_tensor_wrap_cl_mem(ctx, buf, 3 * 4, CLT_F32, 2, xs, &x));
    TU_OK(clt_tensor_wrap_cl_mem(ctx, buf, (N + 20) * 4, CLT_F32, 1, &os, &out));
    TU_OK(clt_rowsum(x, out));
    clt_tensor_free(x);
    clt_tensor_free(out);
    ck_assert_int_eq(clEnqueueReadBuffer(clt_context_cl_queue(ctx), buf, CL_TRUE, 0, BYTES, back, 0,
                                         NULL, NULL), CL_SUCCESS);
    int reduced[2] = {0, 1};
    double want[6], scale[6];
    ref_reduce(0, host + 3, 2, xs, reduced, want, scale);
    for (int i = 0; i < BYTES / 4; i++) {
        if (i >= N + 20 && i < N + 26)
            ck_assert_msg(fabs(back[i] - want[i - N - 20]) <= tolerance(0, 1001, want[i - N - 20],
                                                                        scale[i - N - 20]),
                          "out[%d] = %g, expected %g", i - N - 20, back[i], want[i - N - 20]);
        else
            ck_assert_msg(memcmp(&back[i], &host[i], 4) == 0, "element %d outside out changed", i);
    }
    clReleaseMemObject(buf);
    free(host);
    free(back);
    tu_context_free(ctx);
}
END_TEST

/* Every error of the header: status, message naming the call, and out left as it was. */
START_TEST(reduce_errors)
{
    clt_context *ctx = tu_context();
    int64_t s3[3] = {2, 3, 4}, s2[2] = {2, 3}, s4[1] = {4}, s1 = 2;
    clt_tensor *x = NULL, *out = NULL, *out23 = NULL, *iout = NULL, *xi = NULL;
    float data[24];
    tu_random_f32(data, 24, -1.0f, 1.0f);
    TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, 3, s3, data, sizeof data, &x));
    TU_OK(clt_tensor_create(ctx, CLT_F32, 2, s2, &out23));
    TU_OK(clt_tensor_create(ctx, CLT_F32, 1, s4, &out));
    TU_OK(clt_tensor_create(ctx, CLT_I32, 2, s2, &iout));
    TU_OK(clt_tensor_create(ctx, CLT_I32, 3, s3, &xi));
    tu_poison(out23);
    tu_poison(iout);
    int bad[2] = {3, 0}, neg = -4, dup[2] = {1, -2}, ok2 = 2, ok0 = 0;

    EXPECT_STATUS(clt_reduce(CLT_REDUCE_SUM, x, 1, &bad[0], 0, out23), CLT_ERR_INVALID_AXIS);
    EXPECT_MESSAGE(ctx, "clt_reduce");
    EXPECT_MESSAGE(ctx, "axis 3");
    EXPECT_STATUS(clt_reduce(CLT_REDUCE_MAX, x, 1, &neg, 0, out23), CLT_ERR_INVALID_AXIS);
    EXPECT_MESSAGE(ctx, "axis -4");
    EXPECT_STATUS(clt_reduce(CLT_REDUCE_MEAN, x, 2, dup, 0, out), CLT_ERR_INVALID_AXIS);
    EXPECT_MESSAGE(ctx, "twice");
    EXPECT_STATUS(clt_reduce(CLT_REDUCE_SUM, x, 5, bad, 0, out23), CLT_ERR_INVALID_AXIS);
    EXPECT_STATUS(clt_reduce(CLT_REDUCE_SUM, x, -1, bad, 0, out23), CLT_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(clt_reduce((clt_reduce_op)7, x, 1, &ok2, 0, out23), CLT_ERR_INVALID_ARGUMENT);
    EXPECT_MESSAGE(ctx, "clt_reduce");
    /* wrong out shapes: keepdim mismatch, wrong dims */
    EXPECT_STATUS(clt_reduce(CLT_REDUCE_SUM, x, 1, &ok2, 1, out23), CLT_ERR_INVALID_SHAPE);
    EXPECT_MESSAGE(ctx, "[2, 3, 1]");
    EXPECT_MESSAGE(ctx, "[2, 3]");
    EXPECT_STATUS(clt_reduce(CLT_REDUCE_SUM, x, 1, &ok0, 0, out23), CLT_ERR_INVALID_SHAPE);
    EXPECT_STATUS(clt_reduce(CLT_REDUCE_SUM, x, 0, NULL, 0, out), CLT_ERR_INVALID_SHAPE);
    /* dtypes */
    EXPECT_STATUS(clt_reduce(CLT_REDUCE_SUM, xi, 1, &ok2, 0, out23), CLT_ERR_INVALID_DTYPE);
    EXPECT_MESSAGE(ctx, "i32");
    EXPECT_STATUS(clt_reduce(CLT_REDUCE_SUM, x, 1, &ok2, 0, iout), CLT_ERR_INVALID_DTYPE);
    EXPECT_STATUS(clt_argmax(x, 2, 0, out23), CLT_ERR_INVALID_DTYPE);
    EXPECT_MESSAGE(ctx, "clt_argmax");
    EXPECT_STATUS(clt_argmin(xi, 2, 0, iout), CLT_ERR_INVALID_DTYPE);
    EXPECT_STATUS(clt_argmax(x, 3, 0, iout), CLT_ERR_INVALID_AXIS);
    EXPECT_STATUS(clt_argmin(x, 1, 0, iout), CLT_ERR_INVALID_SHAPE);
    EXPECT_MESSAGE(ctx, "clt_argmin");
    EXPECT_STATUS(clt_rowsum(x, out), CLT_ERR_INVALID_SHAPE);
    EXPECT_MESSAGE(ctx, "clt_rowsum");
    EXPECT_STATUS(clt_rowsum(x, iout), CLT_ERR_INVALID_DTYPE);
    /* NULLs */
    EXPECT_STATUS(clt_reduce(CLT_REDUCE_SUM, NULL, 0, NULL, 0, out), CLT_ERR_INVALID_ARGUMENT);
    EXPECT_MESSAGE(ctx, "clt_reduce");
    EXPECT_STATUS(clt_reduce(CLT_REDUCE_SUM, x, 0, NULL, 0, NULL), CLT_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(clt_argmax(NULL, 0, 0, iout), CLT_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(clt_argmin(x, 0, 0, NULL), CLT_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(clt_rowsum(NULL, out23), CLT_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(clt_rowsum(x, NULL), CLT_ERR_INVALID_ARGUMENT);
    EXPECT_MESSAGE(ctx, "clt_rowsum");
    EXPECT_STATUS(clt_reduce(CLT_REDUCE_SUM, NULL, 0, NULL, 0, NULL), CLT_ERR_INVALID_ARGUMENT);
    /* a scalar has no rows */
    clt_tensor *sc = NULL;
    TU_OK(clt_tensor_create(ctx, CLT_F32, 0, NULL, &sc));
    EXPECT_STATUS(clt_rowsum(sc, sc), CLT_ERR_INVALID_SHAPE);
    EXPECT_STATUS(clt_argmax(sc, 0, 0, iout), CLT_ERR_INVALID_AXIS);
    /* aliasing: out inside x's memory */
    cl_int err;
    cl_mem buf = clCreateBuffer(clt_context_cl_context(ctx), CL_MEM_READ_WRITE, 64 * 4, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    clt_tensor *wx = NULL, *wout = NULL, *wfar = NULL;
    int64_t ws[2] = {4, 4};
    TU_OK(clt_tensor_wrap_cl_mem(ctx, buf, 0, CLT_F32, 2, ws, &wx));
    TU_OK(clt_tensor_wrap_cl_mem(ctx, buf, 15 * 4, CLT_F32, 1, &ws[0], &wout));
    TU_OK(clt_tensor_wrap_cl_mem(ctx, buf, 16 * 4, CLT_F32, 1, &ws[0], &wfar));
    TU_OK(clt_tensor_fill(wx, 1.0));
    EXPECT_STATUS(clt_rowsum(wx, wout), CLT_ERR_ALIASING);
    EXPECT_MESSAGE(ctx, "clt_rowsum");
    EXPECT_STATUS(clt_reduce(CLT_REDUCE_MAX, wx, 1, &ok0, 0, wx), CLT_ERR_INVALID_SHAPE);
    TU_OK(clt_rowsum(wx, wfar)); /* adjacent, not overlapping */
    float row[4];
    TU_OK(clt_tensor_read(wfar, row, sizeof row));
    for (int i = 0; i < 4; i++)
        ck_assert(row[i] == 4.0f);
    /* context mismatch */
    clt_context *other = NULL;
    ck_assert_int_eq(clt_context_create(NULL, &other), CLT_SUCCESS);
    clt_tensor *oout = NULL;
    ck_assert_int_eq(clt_tensor_create(other, CLT_F32, 2, s2, &oout), CLT_SUCCESS);
    EXPECT_STATUS(clt_reduce(CLT_REDUCE_SUM, x, 1, &ok2, 0, oout), CLT_ERR_CONTEXT_MISMATCH);
    EXPECT_MESSAGE(ctx, "clt_reduce");
    clt_context_free(other);
    /* nothing was written by any failed call */
    float got[6];
    int32_t goti[6];
    TU_OK(clt_tensor_read(out23, got, sizeof got));
    TU_OK(clt_tensor_read(iout, goti, sizeof goti));
    for (int i = 0; i < 6; i++) {
        ck_assert_msg(isnan(got[i]), "out23[%d] changed to %g", i, got[i]);
        ck_assert_msg(goti[i] == -1, "iout[%d] changed to %d", i, goti[i]);
    }
    (void)s1;
    clt_tensor_free(wx);
    clt_tensor_free(wout);
    clt_tensor_free(wfar);
    clReleaseMemObject(buf);
    tu_context_free(ctx);
}
END_TEST

Suite *reduce_suite(void)
{
    Suite *s = suite_create("reduce");
    TCase *tc = tcase_create("reduce");
    tcase_add_test(tc, reduce_all_axes);
    tcase_add_test(tc, reduce_single_axis);
    tcase_add_test(tc, reduce_axis_sets);
    tcase_add_test(tc, reduce_long_multi_group);
    tcase_add_test(tc, reduce_vec4_rows_split);
    tcase_add_test(tc, reduce_cols_many_chunks);
    tcase_add_test(tc, reduce_sum_exact_integers);
    tcase_add_test(tc, reduce_var_large_mean);
    tcase_add_test(tc, reduce_argmax_ties_and_nan);
    tcase_add_test(tc, reduce_empty);
    tcase_add_test(tc, rowsum_shapes);
    tcase_add_test(tc, reduce_offsets_in_shared_buffer);
    tcase_add_test(tc, reduce_errors);
    suite_add_tcase(s, tc);
    return s;
}
