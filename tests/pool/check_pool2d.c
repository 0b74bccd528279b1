/* Max and average 2-D pooling, forward and backward, against the double reference (ref/pool_ref.c,
 * which scatters where the library gathers) on fresh random data: H, W in {1, 5, 7, 13}, channels
 * {1, 3, 16}, kernels 1/2/3/5 (square and not), strides 1/2/3, asymmetric padding 0..2, batch 1 and
 * 3, both divisors of average pooling, overlapping windows; wide rows (W 17..40) for the CPU
 * kernels' vector runs. Ties on a coarse grid (first maximum,
 * backward with and without indices bit-identical), NaN and -inf in windows, all-negative inputs
 * under padding.
 * Finite differences, offsets, empty batches and global average pooling: check_pool2d_more.c;
 * error paths: check_pool2d_errors.c.
 *
 * Tolerances (eps = FLT_EPSILON), terms = kh * kw (at most that many windows cover one element):
 *   max forward, indices: exact. max backward with indices == without (bit for bit).
 *   sums (avg forward, both backwards): |got - ref| <= (terms + 2) * eps * scale, scale = the sum of
 *   the magnitudes of what was added (from the reference), + 1e-30.
 */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref/pool_ref.h"
#include "util/test_util.h"

#define SUM_TOL(terms) (((double)(terms) + 2.0) * FLT_EPSILON)

typedef struct pcase {
    int64_t x[4];
    clt_pool2d_params p;
} pcase;

static int64_t prod4(const int64_t s[4]) { return s[0] * s[1] * s[2] * s[3]; }

static clt_tensor *make(clt_context *ctx, clt_dtype dt, const int64_t s[4], const void *host)
{
    clt_tensor *t = NULL;
    TU_OK(clt_tensor_create(ctx, dt, 4, s, &t));
    if (host)
        TU_OK(clt_tensor_write(t, host, clt_tensor_nbytes(t)));
    else
        tu_poison(t);
    return t;
}

static void *fetch(const clt_tensor *t)
{
    size_t n = clt_tensor_nbytes(t);
    void *h = malloc(n ? n : 1);
    ck_assert_ptr_nonnull(h);
    TU_OK(clt_tensor_read(t, h, n));
    return h;
}

static void label_of(const pcase *c, char *buf, size_t size)
{
    const clt_pool2d_params *p = &c->p;
    snprintf(buf, size, "x [%lld, %lld, %lld, %lld] k %dx%d s %dx%d pad t%d b%d l%d r%d",
             (long long)c->x[0], (long long)c->x[1], (long long)c->x[2], (long long)c->x[3],
             p->kernel_h, p->kernel_w, p->stride_h, p->stride_w, p->pad_top, p->pad_bottom,
             p->pad_left, p->pad_right);
}

static void expect_close(const float *got, const double *want, const double *scale, int64_t n,
                         double tol, const char *what, const char *label)
{
    for (int64_t i = 0; i < n; i++) {
        if (isnan(want[i]) || isinf(want[i])) {
            ck_assert_msg(isnan(want[i]) ? isnan(got[i]) : (double)got[i] == want[i],
                          "%s, %s: element %lld = %.9g, expected %.9g", label, what, (long long)i,
                          (double)got[i], want[i]);
            continue;
        }
        double bound = tol * (scale ? scale[i] : fabs(want[i])) + 1e-30;
        ck_assert_msg(fabs((double)got[i] - want[i]) <= bound,
                      "%s, %s: element %lld = %.9g, expected %.9g", label, what, (long long)i,
                      (double)got[i], want[i]);
    }
}

/* Every pooling call on one case and input x; dy fresh. */
static void run_case(clt_context *ctx, const pcase *c, const float *x)
{
    char label[160];
    label_of(c, label, sizeof label);
    ref_pool g = ref_pool_make(c->x, &c->p);
    const int64_t os[4] = {c->x[0], c->x[1], ref_pool_ho(&g), ref_pool_wo(&g)};
    int64_t ni = prod4(c->x), no = prod4(os), terms = g.kh * g.kw;
    float *dy = malloc((size_t)no * sizeof *dy);
    double *want = malloc((size_t)(ni + no) * sizeof *want), *scale = malloc((size_t)(ni + no) * 8);
    int32_t *want_idx = malloc((size_t)no * sizeof *want_idx);
    ck_assert(dy && want && scale && want_idx);
    tu_random_f32(dy, (size_t)no, -1, 1);
    clt_tensor *tx = make(ctx, CLT_F32, c->x, x), *tdy = make(ctx, CLT_F32, os, dy);
    clt_tensor *out = make(ctx, CLT_F32, os, NULL), *out2 = make(ctx, CLT_F32, os, NULL);
    clt_tensor *idx = make(ctx, CLT_I32, os, NULL);
    clt_tensor *dx1 = make(ctx, CLT_F32, c->x, NULL), *dx2 = make(ctx, CLT_F32, c->x, NULL);

    /* max forward, with and without indices */
    TU_OK(clt_max_pool2d(tx, &c->p, out, idx));
    TU_OK(clt_max_pool2d(tx, &c->p, out2, NULL));
    ref_max_pool2d(&g, x, want, want_idx);
    float *got = fetch(out), *got2 = fetch(out2);
    int32_t *gidx = fetch(idx);
    expect_close(got, want, NULL, no, 0.0, "max", label);
    ck_assert_msg(memcmp(got, got2, (size_t)no * 4) == 0, "%s: max without indices differs", label);
    for (int64_t i = 0; i < no; i++)
        ck_assert_msg(gidx[i] == want_idx[i], "%s: index %lld = %d, expected %d", label,
                      (long long)i, gidx[i], want_idx[i]);
    free(got);
    free(got2);
    free(gidx);

    /* max backward, from the indices and recomputed from x: the same bits */
    TU_OK(clt_max_pool2d_backward(tdy, NULL, idx, &c->p, dx1));
    TU_OK(clt_max_pool2d_backward(tdy, tx, NULL, &c->p, dx2));
    ref_max_pool2d_backward(&g, x, dy, want, scale);
    got = fetch(dx1);
    got2 = fetch(dx2);
    ck_assert_msg(memcmp(got, got2, (size_t)ni * 4) == 0,
                  "%s: max backward with indices differs from without", label);
    expect_close(got, want, scale, ni, SUM_TOL(terms), "max backward", label);
    free(got);
    free(got2);

    /* average pooling, both divisors */
    for (int incl = 0; incl < 2; incl++) {
        char what[64];
        snprintf(what, sizeof what, "avg (count_include_pad %d)", incl);
        TU_OK(clt_avg_pool2d(tx, &c->p, incl, out));
        ref_avg_pool2d(&g, x, incl, want, scale);
        got = fetch(out);
        expect_close(got, want, scale, no, SUM_TOL(terms), what, label);
        free(got);
        snprintf(what, sizeof what, "avg backward (count_include_pad %d)", incl);
        tu_poison(dx1);
        TU_OK(clt_avg_pool2d_backward(tdy, &c->p, incl, dx1));
        ref_avg_pool2d_backward(&g, dy, incl, want, scale);
        got = fetch(dx1);
        expect_close(got, want, scale, ni, SUM_TOL(terms), what, label);
        free(got);
    }
    clt_tensor *all[7] = {tx, tdy, out, out2, idx, dx1, dx2};
    for (int i = 0; i < 7; i++)
        clt_tensor_free(all[i]);
    free(dy);
    free(want);
    free(scale);
    free(want_idx);
}

static const int64_t dims[] = {1, 5, 7, 13};
static const int64_t chans[] = {1, 3, 16};
static const int kernels[] = {1, 2, 3, 5};
static const int strides[] = {1, 2, 3};

static int pad_of(int64_t v, int k) { return (int)(v % (k < 3 ? k : 3)); } /* 0..2, < k */

/* Case `i` of the sweep (pass shifts the secondary choices): every kernel x stride x H. Returns 0
 * when the geometry has no output (skipped). */
static int sweep_case(int i, int pass, pcase *c)
{
    int ki = i % 4, si = (i / 4) % 3, hi = (i / 12) % 4, j = i + pass * 7;
    memset(c, 0, sizeof *c);
    c->x[0] = j % 2 ? 3 : 1;
    c->x[1] = chans[j % 3];
    c->x[2] = dims[hi];
    c->x[3] = dims[(hi + ki + si + pass) % 4];
    clt_pool2d_params *p = &c->p;
    p->kernel_h = kernels[ki];
    p->kernel_w = j % 3 == 0 ? kernels[(ki + 1 + pass) % 4] : kernels[ki];
    p->stride_h = strides[si];
    p->stride_w = j % 4 == 1 ? strides[(si + 1) % 3] : strides[si];
    p->pad_top = pad_of(j, p->kernel_h);
    p->pad_bottom = pad_of(j / 2 + pass, p->kernel_h);
    p->pad_left = pad_of(j / 3, p->kernel_w);
    p->pad_right = pad_of(j / 5 + pass, p->kernel_w);
    ref_pool g = ref_pool_make(c->x, p);
    return ref_pool_ho(&g) >= 1 && ref_pool_wo(&g) >= 1;
}

static void run_sweep(int pass)
{
    clt_context *ctx = tu_context();
    int ran = 0;
    for (int i = 0; i < 48; i++) {
        pcase c;
        if (!sweep_case(i, pass, &c))
            continue;
        int64_t n = prod4(c.x);
        float *x = malloc((size_t)n * sizeof *x);
        ck_assert_ptr_nonnull(x);
        tu_random_f32(x, (size_t)n, -1, 1);
        run_case(ctx, &c, x);
        free(x);
        ran++;
    }
    ck_assert_int_ge(ran, 40);
    tu_context_free(ctx);
}

START_TEST(sweep) { run_sweep(_i); }
END_TEST

/* A few geometries with overlapping windows and padding, for the special-value tests. */
static const pcase special[] = {
    {{1, 3, 7, 5}, {3, 3, 1, 1, 1, 1, 1, 1}},
    {{3, 2, 13, 13}, {5, 3, 2, 1, 2, 2, 0, 1}},
    {{1, 16, 5, 7}, {2, 2, 1, 1, 1, 0, 0, 1}},
    {{3, 1, 13, 7}, {3, 5, 2, 3, 0, 2, 2, 1}},
    /* wide rows: CPU kernels' float8 runs at strides 1, 2 (float16 even lanes, and 8 loads where
     * the last float16 would pass the row: W = 17) and 3, with scalar outputs at both ends */
    {{1, 2, 9, 37}, {3, 3, 2, 2, 1, 1, 1, 1}},
    {{2, 3, 6, 17}, {3, 3, 2, 2, 0, 1, 0, 0}},
    {{1, 3, 5, 29}, {3, 2, 1, 1, 1, 1, 1, 0}},
    {{1, 2, 4, 40}, {2, 3, 1, 3, 0, 1, 2, 1}},
};

/* fill: 0 ties on a grid of 3 values, 1 NaN and -inf sprinkled, 2 all -inf, 3 all negative. */
static void special_input(float *x, int64_t n, int fill)
{
    tu_random_f32(x, (size_t)n, -1, 1);
    for (int64_t i = 0; i < n; i++) {
        if (fill == 0)
            x[i] = floorf(x[i] * 1.5f);
        else if (fill == 1 && i % 11 == 3)
            x[i] = NAN;
        else if (fill == 1 && i % 7 == 2)
            x[i] = -INFINITY;
        else if (fill == 2)
            x[i] = -INFINITY;
        else if (fill == 3)
            x[i] = x[i] * 0.5f - 1.5f;
    }
}

START_TEST(special_values)
{
    clt_context *ctx = tu_context();
    for (int s = 0; s < (int)(sizeof special / sizeof special[0]); s++) {
        int64_t n = prod4(special[s].x);
        float *x = malloc((size_t)n * sizeof *x);
        ck_assert_ptr_nonnull(x);
        special_input(x, n, _i);
        run_case(ctx, &special[s], x);
        free(x);
    }
    tu_context_free(ctx);
}
END_TEST

Suite *pool2d_suite(void)
{
    Suite *s = suite_create("pool2d");
    TCase *tc = tcase_create("pool2d");
    tcase_add_loop_test(tc, sweep, 0, 2);
    tcase_add_loop_test(tc, special_values, 0, 4);
    suite_add_tcase(s, tc);
    return s;
}
