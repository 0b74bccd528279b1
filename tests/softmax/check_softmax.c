/* clt_softmax, clt_log_softmax and their backward passes (last axis) against the double
 * references of ref/softmax_ref.c: random rows of awkward lengths (1, primes, non-multiples of every
 * group size, rows long enough to stream), inputs of +-1e4, equal rows, -inf entries, in place,
 * tensors at buffer offsets, empty tensors, finite differences, and every error path. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cltensor_cl.h"
#include "ref/softmax_ref.h"
#include "util/test_util.h"

/* Tolerances (f32): |got - ref| <= RTOL * |ref| + ATOL; backward uses the reference's error scale
 * (the formula with absolute values) in place of |ref|.
 * softmax: exp and division (a few ulp) times the float row sum, whose rounding grows with the
 *   terms one item adds (up to ~400 for rows of 100000); ATOL lets results below the smallest
 *   normal float be flushed to zero.
 * log-softmax: (x - max) is exact or rounds by half an ulp (RTOL), log(sum) adds the row sum's
 *   relative error as an absolute one (ATOL). */
#define SOFTMAX_RTOL 2e-5
#define SOFTMAX_ATOL 1e-37
#define LOG_SOFTMAX_RTOL 1e-6
#define LOG_SOFTMAX_ATOL 3e-5
#define BACKWARD_RTOL 2e-5
#define BACKWARD_ATOL 1e-30
#define ROW_SUM_TOL 2e-5    /* |sum of a softmax row - 1| */
#define FD_TOL 1e-4         /* backward vs central differences (h = 1e-3, in double) */

#define EXPECT_STATUS(call, want)                                                                   \
    do {                                                                                            \
        clt_status st_ = (call);                                                                    \
        ck_assert_msg(st_ == (want), "%s -> %s, expected %s (%s)", #call, clt_status_string(st_),   \
                      clt_status_string(want), clt_last_error(tu_ctx_for_msg()));                   \
    } while (0)

typedef struct shape_case {
    int ndim;
    int64_t shape[3];
} shape_case;

static const shape_case random_shapes[] = {
    {1, {1}},      {1, {7}},        {2, {1, 1000}},    {2, {64, 1000}}, {3, {3, 5, 17}},
    {2, {13, 4099}}, {2, {2, 100000}}, {2, {37, 3}},   {2, {5, 257}},
};
#define N_RANDOM_SHAPES (sizeof random_shapes / sizeof random_shapes[0])

static size_t numel_of(const shape_case *s)
{
    size_t n = 1;
    for (int i = 0; i < s->ndim; i++)
        n *= (size_t)s->shape[i];
    return n;
}

static size_t row_len(const shape_case *s) { return (size_t)s->shape[s->ndim - 1]; }

static clt_tensor *upload(clt_context *ctx, const shape_case *s, const float *data)
{
    clt_tensor *t = NULL;
    TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, s->ndim, s->shape, data,
                                      numel_of(s) * sizeof(float), &t));
    return t;
}

static float *download(const clt_tensor *t)
{
    size_t nb = clt_tensor_nbytes(t);
    float *h = malloc(nb ? nb : 1);
    ck_assert_ptr_nonnull(h);
    TU_OK(clt_tensor_read(t, h, nb));
    return h;
}

/* A finite poison: unwritten elements then fail even where NaN is the expected result. */
static void poison_finite(clt_tensor *t)
{
    size_t n = (size_t)clt_tensor_numel(t);
    float *p = malloc(n * sizeof(float));
    ck_assert_ptr_nonnull(p);
    for (size_t i = 0; i < n; i++)
        p[i] = -1234.5f;
    TU_OK(clt_tensor_write(t, p, n * sizeof(float)));
    free(p);
}

static void expect_close(const char *what, const float *got, const double *want,
                         const double *scale, size_t count, double rtol, double atol)
{
    for (size_t i = 0; i < count; i++) {
        double w = want[i], g = got[i];
        if (isnan(w) || isinf(w)) {
            ck_assert_msg(isnan(w) ? isnan(g) : g == w, "%s: element %zu = %.9g, expected %g",
                          what, i, g, w);
            continue;
        }
        double allowed = rtol * (scale ? scale[i] : fabs(w)) + atol;
        ck_assert_msg(fabs(g - w) <= allowed,
                      "%s: element %zu = %.9g, expected %.9g (error %.3g, allowed %.3g)", what, i, g,
                      w, fabs(g - w), allowed);
    }
}

/* Rows of a softmax whose reference is finite sum to 1. */
static void expect_row_sums(const char *what, const float *got, const double *want, size_t rows,
                            size_t n)
{
    for (size_t r = 0; r < rows; r++) {
        if (isnan(want[r * n]))
            continue;
        double s = 0.0;
        for (size_t i = 0; i < n; i++)
            s += got[r * n + i];
        ck_assert_msg(fabs(s - 1.0) <= ROW_SUM_TOL, "%s: row %zu sums to %.9g", what, r, s);
    }
}

/* Run softmax (log_form 0) or log-softmax (1) on x of shape s, into a fresh poisoned tensor or in
 * place, and compare with the reference. */
static void check_forward(clt_context *ctx, const shape_case *s, const float *x, int log_form,
                          int in_place)
{
    size_t count = numel_of(s), n = row_len(s), rows = count / n;
    const char *what = log_form ? "clt_log_softmax" : "clt_softmax";
    double *want = malloc(count * sizeof(double));
    ck_assert_ptr_nonnull(want);
    ref_softmax(x, want, rows, n, log_form);
    clt_tensor *tx = upload(ctx, s, x), *out = tx;
    if (!in_place) {
        TU_OK(clt_tensor_create(ctx, CLT_F32, s->ndim, s->shape, &out));
        poison_finite(out);
    }
    TU_OK(log_form ? clt_log_softmax(tx, out) : clt_softmax(tx, out));
    float *got = download(out);
    if (log_form)
        expect_close(what, got, want, NULL, count, LOG_SOFTMAX_RTOL, LOG_SOFTMAX_ATOL);
    else {
        expect_close(what, got, want, NULL, count, SOFTMAX_RTOL, SOFTMAX_ATOL);
        expect_row_sums(what, got, want, rows, n);
    }
    if (out != tx)
        clt_tensor_free(out);
    clt_tensor_free(tx);
    free(got);
    free(want);
}

static float *random_data(size_t count, float lo, float hi)
{
    float *x = malloc(count * sizeof(float));
    ck_assert_ptr_nonnull(x);
    tu_random_f32(x, count, lo, hi);
    return x;
}

START_TEST(forward_random)
{
    clt_context *ctx = tu_context();
    for (size_t k = 0; k < N_RANDOM_SHAPES; k++) {
        float *x = random_data(numel_of(&random_shapes[k]), -8.0f, 8.0f);
        check_forward(ctx, &random_shapes[k], x, 0, 0);
        check_forward(ctx, &random_shapes[k], x, 1, 0);
        free(x);
    }
    tu_context_free(ctx);
}
END_TEST

/* +-1e4 would overflow exp without the max subtracted. */
START_TEST(forward_large_magnitude)
{
    clt_context *ctx = tu_context();
    static const shape_case shapes[] = {{1, {7}}, {2, {64, 1000}}, {3, {3, 5, 17}},
                                        {2, {13, 4099}}, {2, {2, 100000}}};
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        float *x = random_data(numel_of(&shapes[k]), -1e4f, 1e4f);
        check_forward(ctx, &shapes[k], x, 0, 0);
        check_forward(ctx, &shapes[k], x, 1, 0);
        free(x);
    }
    /* Rows close to each other near the top of the range: many terms matter. */
    shape_case s = {2, {9, 1000}};
    float *x = random_data(numel_of(&s), 9990.0f, 10000.0f);
    check_forward(ctx, &s, x, 0, 0);
    check_forward(ctx, &s, x, 1, 0);
    free(x);
    tu_context_free(ctx);
}
END_TEST

/* Rows of one repeated value give 1/n and -log(n). */
START_TEST(forward_equal_rows)
{
    clt_context *ctx = tu_context();
    static const shape_case shapes[] = {{2, {5, 3}}, {2, {4, 1000}}, {2, {3, 4099}},
                                        {2, {2, 100000}}};
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        size_t count = numel_of(&shapes[k]), n = row_len(&shapes[k]);
        float *x = malloc(count * sizeof(float));
        ck_assert_ptr_nonnull(x);
        for (size_t r = 0; r < count / n; r++) {
            float v = 0.0f;
            if (r > 0)
                tu_random_f32(&v, 1, -1e4f, 1e4f);
            for (size_t i = 0; i < n; i++)
                x[r * n + i] = v;
        }
        check_forward(ctx, &shapes[k], x, 0, 0);
        check_forward(ctx, &shapes[k], x, 1, 0);
        free(x);
    }
    tu_context_free(ctx);
}
END_TEST

/* -inf entries give 0 (log-softmax: -inf) and leave the rest a softmax of the others; a row that
 * is all -inf gives NaN, as the formula does. */
START_TEST(forward_negative_infinity)
{
    clt_context *ctx = tu_context();
    static const shape_case shapes[] = {{2, {6, 1}}, {2, {6, 37}}, {2, {5, 4099}},
                                        {2, {4, 100000}}};
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        size_t count = numel_of(&shapes[k]), n = row_len(&shapes[k]), rows = count / n;
        float *x = random_data(count, -20.0f, 20.0f);
        for (size_t r = 0; r < rows; r++) {
            float *row = x + r * n;
            if (r == 0) {
                row[0] = -INFINITY;
            } else if (r == 1) {
                for (size_t i = 0; i < n; i++)
                    row[i] = -INFINITY; /* NaN row */
            } else if (r == 2) {
                for (size_t i = 0; i + 1 < n; i++)
                    row[i] = -INFINITY; /* only the last entry survives: 1 and 0 */
            } else {
                row[tu_rng_next() % n] = -INFINITY;
            }
        }
        check_forward(ctx, &shapes[k], x, 0, 0);
        check_forward(ctx, &shapes[k], x, 1, 0);
        free(x);
    }
    tu_context_free(ctx);
}
END_TEST

START_TEST(forward_in_place)
{
    clt_context *ctx = tu_context();
    static const shape_case shapes[] = {{1, {7}}, {2, {64, 1000}}, {3, {3, 5, 17}},
                                        {2, {2, 100000}}};
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        float *x = random_data(numel_of(&shapes[k]), -30.0f, 30.0f);
        check_forward(ctx, &shapes[k], x, 0, 1);
        check_forward(ctx, &shapes[k], x, 1, 1);
        free(x);
    }
    tu_context_free(ctx);
}
END_TEST

/* Tensors wrapped at element offsets of one buffer: x, out, y, dy and dx each elsewhere; bytes
 * outside the outputs stay as they were. */
START_TEST(offsets_in_one_buffer)
{
    clt_context *ctx = tu_context();
    enum { ROWS = 3, N = 301, COUNT = ROWS * N, PAD = 5, TOTAL = 4 * (COUNT + PAD) + PAD };
    float *host = random_data(TOTAL, -3.0f, 3.0f);
    cl_int err;
    cl_mem buf = clCreateBuffer(clt_context_cl_context(ctx), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                TOTAL * sizeof(float), host, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    int64_t shape[2] = {ROWS, N};
    size_t at[4];
    clt_tensor *t[4];
    for (int i = 0; i < 4; i++) {
        at[i] = PAD + (size_t)i * (COUNT + PAD);
        TU_OK(clt_tensor_wrap_cl_mem(ctx, buf, at[i] * sizeof(float), CLT_F32, 2, shape, &t[i]));
    }
    /* t0 = x, t1 = softmax(x), t2 = dy, t3 = backward. */
    TU_OK(clt_softmax(t[0], t[1]));
    TU_OK(clt_softmax_backward(t[1], t[2], t[3]));
    float *back = malloc(TOTAL * sizeof(float));
    ck_assert_ptr_nonnull(back);
    ck_assert_int_eq(clEnqueueReadBuffer(clt_context_cl_queue(ctx), buf, CL_TRUE, 0,
                                         TOTAL * sizeof(float), back, 0, NULL, NULL),
                     CL_SUCCESS);
    double *want = malloc(COUNT * sizeof(double)), *scale = malloc(COUNT * sizeof(double));
    ck_assert_ptr_nonnull(want);
    ck_assert_ptr_nonnull(scale);
    ref_softmax(host + at[0], want, ROWS, N, 0);
    expect_close("clt_softmax at an offset", back + at[1], want, NULL, COUNT, SOFTMAX_RTOL,
                 SOFTMAX_ATOL);
    ref_softmax_backward(back + at[1], host + at[2], want, scale, ROWS, N, 0);
    expect_close("clt_softmax_backward at an offset", back + at[3], want, scale, COUNT,
                 BACKWARD_RTOL, BACKWARD_ATOL);
    for (size_t i = 0; i < TOTAL; i++) {
        int in_output = (i >= at[1] && i < at[1] + COUNT) || (i >= at[3] && i < at[3] + COUNT);
        if (!in_output)
            ck_assert_msg(memcmp(&back[i], &host[i], sizeof(float)) == 0,
                          "element %zu outside the outputs changed", i);
    }
    for (int i = 0; i < 4; i++)
        clt_tensor_free(t[i]);
    clReleaseMemObject(buf);
    free(host);
    free(back);
    free(want);
    free(scale);
    tu_context_free(ctx);
}
END_TEST

START_TEST(empty_tensors)
{
    clt_context *ctx = tu_context();
    static const shape_case shapes[] = {{1, {0}}, {2, {4, 0}}, {2, {0, 3}}, {3, {2, 0, 5}}};
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        clt_tensor *a = NULL, *b = NULL, *c = NULL;
        TU_OK(clt_tensor_create(ctx, CLT_F32, shapes[k].ndim, shapes[k].shape, &a));
        TU_OK(clt_tensor_create(ctx, CLT_F32, shapes[k].ndim, shapes[k].shape, &b));
        TU_OK(clt_tensor_create(ctx, CLT_F32, shapes[k].ndim, shapes[k].shape, &c));
        TU_OK(clt_softmax(a, b));
        TU_OK(clt_log_softmax(a, b));
        TU_OK(clt_softmax_backward(a, b, c));
        TU_OK(clt_log_softmax_backward(a, b, c));
        TU_OK(clt_finish(ctx));
        clt_tensor_free(a);
        clt_tensor_free(b);
        clt_tensor_free(c);
    }
    tu_context_free(ctx);
}
END_TEST

/* y from the reference forward of random x (so it is a real softmax / log-softmax output), dy
 * random; dx into a fresh poisoned tensor, or into dy or y itself (dx may alias either exactly). */
static void check_backward(clt_context *ctx, const shape_case *s, int log_form, int alias)
{
    size_t count = numel_of(s), n = row_len(s), rows = count / n;
    float *x = random_data(count, -6.0f, 6.0f), *dy = random_data(count, -1.0f, 1.0f);
    float *y = malloc(count * sizeof(float));
    double *want = malloc(count * sizeof(double)), *scale = malloc(count * sizeof(double));
    ck_assert(y && want && scale);
    ref_softmax(x, want, rows, n, log_form);
    for (size_t i = 0; i < count; i++)
        y[i] = (float)want[i];
    ref_softmax_backward(y, dy, want, scale, rows, n, log_form);
    clt_tensor *ty = upload(ctx, s, y), *tdy = upload(ctx, s, dy), *tdx = NULL;
    if (alias == 0) {
        TU_OK(clt_tensor_create(ctx, CLT_F32, s->ndim, s->shape, &tdx));
        tu_poison(tdx);
    }
    clt_tensor *dst = alias == 0 ? tdx : alias == 1 ? tdy : ty;
    TU_OK(log_form ? clt_log_softmax_backward(ty, tdy, dst) : clt_softmax_backward(ty, tdy, dst));
    float *got = download(dst);
    expect_close(log_form ? "clt_log_softmax_backward" : "clt_softmax_backward", got, want, scale,
                 count, BACKWARD_RTOL, BACKWARD_ATOL);
    clt_tensor_free(ty);
    clt_tensor_free(tdy);
    clt_tensor_free(tdx);
    free(x);
    free(dy);
    free(y);
    free(got);
    free(want);
    free(scale);
}

START_TEST(backward_random)
{
    clt_context *ctx = tu_context();
    for (size_t k = 0; k < N_RANDOM_SHAPES; k++) {
        check_backward(ctx, &random_shapes[k], 0, 0);
        check_backward(ctx, &random_shapes[k], 1, 0);
    }
    tu_context_free(ctx);
}
END_TEST

START_TEST(backward_in_place)
{
    clt_context *ctx = tu_context();
    static const shape_case shapes[] = {{1, {7}}, {2, {64, 1000}}, {2, {2, 100000}}};
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++)
        for (int alias = 1; alias <= 2; alias++) {
            check_backward(ctx, &shapes[k], 0, alias);
            check_backward(ctx, &shapes[k], 1, alias);
        }
    tu_context_free(ctx);
}
END_TEST

/* sum(w * f(x)) for one row, f = softmax or log-softmax, in double. */
static double weighted_row(const double *x, const float *w, size_t n, int log_form)
{
    double m = -INFINITY, s = 0.0, total = 0.0;
    for (size_t i = 0; i < n; i++)
        m = x[i] > m ? x[i] : m;
    for (size_t i = 0; i < n; i++)
        s += exp(x[i] - m);
    for (size_t i = 0; i < n; i++)
        total += w[i] * (log_form ? x[i] - m - log(s) : exp(x[i] - m) / s);
    return total;
}

/* The backward contract, independent of the reference's formula: dx is the gradient of
 * sum(dy * f(x)), here by central differences. */
START_TEST(backward_finite_differences)
{
    clt_context *ctx = tu_context();
    const shape_case s = {2, {3, 5}};
    enum { ROWS = 3, N = 5, COUNT = ROWS * N };
    const double h = 1e-3;
    for (int log_form = 0; log_form <= 1; log_form++) {
        float x[COUNT], dy[COUNT], y[COUNT];
        tu_random_f32(x, COUNT, -2.0f, 2.0f);
        tu_random_f32(dy, COUNT, -1.0f, 1.0f);
        clt_tensor *tx = upload(ctx, &s, x), *ty = NULL, *tdy = upload(ctx, &s, dy), *tdx = NULL;
        TU_OK(clt_tensor_create(ctx, CLT_F32, 2, s.shape, &ty));
        TU_OK(clt_tensor_create(ctx, CLT_F32, 2, s.shape, &tdx));
        TU_OK(log_form ? clt_log_softmax(tx, ty) : clt_softmax(tx, ty));
        TU_OK(log_form ? clt_log_softmax_backward(ty, tdy, tdx) : clt_softmax_backward(ty, tdy, tdx));
        float *got = download(tdx);
        TU_OK(clt_tensor_read(ty, y, sizeof y));
        for (size_t r = 0; r < ROWS; r++)
            for (size_t i = 0; i < N; i++) {
                double xp[N], xm[N];
                for (size_t j = 0; j < N; j++)
                    xp[j] = xm[j] = x[r * N + j];
                xp[i] += h;
                xm[i] -= h;
                double fd = (weighted_row(xp, dy + r * N, N, log_form) -
                             weighted_row(xm, dy + r * N, N, log_form)) / (2 * h);
                ck_assert_msg(fabs(got[r * N + i] - fd) <= FD_TOL * (1.0 + fabs(fd)),
                              "%s backward [%zu,%zu] = %.7g, finite difference %.7g",
                              log_form ? "log-softmax" : "softmax", r, i, got[r * N + i], fd);
            }
        free(got);
        clt_tensor_free(tx);
        clt_tensor_free(ty);
        clt_tensor_free(tdy);
        clt_tensor_free(tdx);
    }
    tu_context_free(ctx);
}
END_TEST

/* ------------------------------------------------------------------ errors */

/* The call failed with want, named itself, and out still holds `before`. */
static void expect_failure(clt_context *ctx, clt_status got, clt_status want, const char *who,
                           const clt_tensor *out, const float *before)
{
    ck_assert_msg(got == want, "%s -> %s, expected %s (%s)", who, clt_status_string(got),
                  clt_status_string(want), clt_last_error(ctx));
    ck_assert_msg(strstr(clt_last_error(ctx), who) != NULL, "message \"%s\" does not name %s",
                  clt_last_error(ctx), who);
    if (out && before) {
        float *after = download(out);
        ck_assert_msg(memcmp(after, before, clt_tensor_nbytes(out)) == 0, "%s changed its output",
                      who);
        free(after);
    }
}

static const char *const fwd_names[2] = {"clt_softmax", "clt_log_softmax"};
static const char *const bwd_names[2] = {"clt_softmax_backward", "clt_log_softmax_backward"};

static clt_status fwd(int f, const clt_tensor *x, clt_tensor *out)
{
    return f ? clt_log_softmax(x, out) : clt_softmax(x, out);
}

static clt_status bwd(int f, const clt_tensor *y, const clt_tensor *dy, clt_tensor *dx)
{
    return f ? clt_log_softmax_backward(y, dy, dx) : clt_softmax_backward(y, dy, dx);
}

START_TEST(errors)
{
    clt_context *ctx = tu_context();
    const shape_case s = {2, {4, 6}}, t = {2, {6, 4}}, u = {1, {24}};
    float data[24];
    tu_random_f32(data, 24, -1.0f, 1.0f);
    clt_tensor *x = upload(ctx, &s, data), *out = upload(ctx, &s, data);
    clt_tensor *dy = upload(ctx, &s, data), *transposed = upload(ctx, &t, data);
    clt_tensor *flat = upload(ctx, &u, data), *ints = NULL, *scalar = NULL, *scalar_out = NULL;
    TU_OK(clt_tensor_create(ctx, CLT_I32, 2, s.shape, &ints));
    TU_OK(clt_tensor_create(ctx, CLT_F32, 0, NULL, &scalar));
    TU_OK(clt_tensor_create(ctx, CLT_F32, 0, NULL, &scalar_out));
    /* Partly overlapping views of one buffer. */
    cl_int err;
    cl_mem buf = clCreateBuffer(clt_context_cl_context(ctx), CL_MEM_READ_WRITE, 64 * sizeof(float),
                                NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    clt_tensor *va = NULL, *vb = NULL, *vc = NULL;
    TU_OK(clt_tensor_wrap_cl_mem(ctx, buf, 0, CLT_F32, 2, s.shape, &va));
    TU_OK(clt_tensor_wrap_cl_mem(ctx, buf, 5 * sizeof(float), CLT_F32, 2, s.shape, &vb));
    TU_OK(clt_tensor_wrap_cl_mem(ctx, buf, 30 * sizeof(float), CLT_F32, 2, s.shape, &vc));
    TU_OK(clt_tensor_write(vb, data, sizeof data));
    float vb_before[24];
    memcpy(vb_before, data, sizeof data);
    clt_context *other = tu_context();
    clt_tensor *foreign = upload(other, &s, data);

    for (int f = 0; f <= 1; f++) {
        const char *w = fwd_names[f], *b = bwd_names[f];
        expect_failure(ctx, fwd(f, ints, out), CLT_ERR_INVALID_DTYPE, w, out, data);
        expect_failure(ctx, fwd(f, x, ints), CLT_ERR_INVALID_DTYPE, w, NULL, NULL);
        expect_failure(ctx, fwd(f, x, transposed), CLT_ERR_INVALID_SHAPE, w, transposed, data);
        expect_failure(ctx, fwd(f, x, flat), CLT_ERR_INVALID_SHAPE, w, flat, data);
        expect_failure(ctx, fwd(f, scalar, scalar_out), CLT_ERR_INVALID_SHAPE, w, NULL, NULL);
        expect_failure(ctx, fwd(f, va, vb), CLT_ERR_ALIASING, w, vb, vb_before);
        expect_failure(ctx, fwd(f, vb, va), CLT_ERR_ALIASING, w, vb, vb_before);
        expect_failure(ctx, fwd(f, x, foreign), CLT_ERR_CONTEXT_MISMATCH, w, out, data);
        expect_failure(ctx, fwd(f, x, NULL), CLT_ERR_INVALID_ARGUMENT, w, NULL, NULL);
        expect_failure(ctx, fwd(f, NULL, out), CLT_ERR_INVALID_ARGUMENT, w, out, data);

        expect_failure(ctx, bwd(f, ints, dy, out), CLT_ERR_INVALID_DTYPE, b, out, data);
        expect_failure(ctx, bwd(f, x, ints, out), CLT_ERR_INVALID_DTYPE, b, out, data);
        expect_failure(ctx, bwd(f, x, dy, ints), CLT_ERR_INVALID_DTYPE, b, NULL, NULL);
        expect_failure(ctx, bwd(f, x, transposed, out), CLT_ERR_INVALID_SHAPE, b, out, data);
        expect_failure(ctx, bwd(f, x, dy, flat), CLT_ERR_INVALID_SHAPE, b, flat, data);
        expect_failure(ctx, bwd(f, scalar, scalar, scalar_out), CLT_ERR_INVALID_SHAPE, b, NULL,
                       NULL);
        expect_failure(ctx, bwd(f, va, vc, vb), CLT_ERR_ALIASING, b, vb, vb_before);
        expect_failure(ctx, bwd(f, vc, va, vb), CLT_ERR_ALIASING, b, vb, vb_before);
        expect_failure(ctx, bwd(f, x, foreign, out), CLT_ERR_CONTEXT_MISMATCH, b, out, data);
        expect_failure(ctx, bwd(f, x, dy, foreign), CLT_ERR_CONTEXT_MISMATCH, b, NULL, NULL);
        expect_failure(ctx, bwd(f, NULL, dy, out), CLT_ERR_INVALID_ARGUMENT, b, out, data);
        expect_failure(ctx, bwd(f, x, NULL, out), CLT_ERR_INVALID_ARGUMENT, b, out, data);
        expect_failure(ctx, bwd(f, x, dy, NULL), CLT_ERR_INVALID_ARGUMENT, b, NULL, NULL);
    }
    float *fb = download(foreign);
    ck_assert_mem_eq(fb, data, sizeof data);
    free(fb);
    clt_tensor *all[] = {x, out, dy, transposed, flat, ints, scalar, scalar_out, va, vb, vc};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        clt_tensor_free(all[i]);
    clReleaseMemObject(buf);
    clt_tensor_free(foreign);
    tu_context_free(other);
    tu_context_free(ctx);
}
END_TEST

Suite *softmax_suite(void)
{
    Suite *s = suite_create("softmax");
    TCase *tc = tcase_create("forward");
    tcase_add_test(tc, forward_random);
    tcase_add_test(tc, forward_large_magnitude);
    tcase_add_test(tc, forward_equal_rows);
    tcase_add_test(tc, forward_negative_infinity);
    tcase_add_test(tc, forward_in_place);
    tcase_add_test(tc, offsets_in_one_buffer);
    tcase_add_test(tc, empty_tensors);
    suite_add_tcase(s, tc);
    tc = tcase_create("backward");
    tcase_add_test(tc, backward_random);
    tcase_add_test(tc, backward_in_place);
    tcase_add_test(tc, backward_finite_differences);
    suite_add_tcase(s, tc);
    tc = tcase_create("errors");
    tcase_add_test(tc, errors);
    suite_add_tcase(s, tc);
    return s;
}
