/* Pooling beyond the sweep of check_pool2d.c: backward against finite differences of the double
 * reference on tiny cases, tensors at offsets inside one buffer (nothing outside them touched),
 * empty batches and channels, and global average pooling (both output forms, a plane long enough
 * for the reduction to split it over several work-groups).
 *
 * Tolerances (eps = FLT_EPSILON):
 *   finite differences: |dx - (L(x + h) - L(x - h)) / 2h| <= 1e-4 (the losses are linear in x, or
 *   piecewise linear with distinct inputs spaced wider than 2h, so only rounding remains).
 *   global average: eps * (2 sqrt(n) + 16) * mean|x| (the reduction tests' bound for MEAN), n = H * W;
 *   its backward: 2 eps relative. Offsets: the same bounds as check_pool2d.c, (terms + 2) eps scale.
 */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cltensor_cl.h"
#include "ref/pool_ref.h"
#include "util/test_util.h"

#define FD_TOL 1e-4
#define SUM_TOL(terms) (((double)(terms) + 2.0) * FLT_EPSILON)

static int64_t prod4(const int64_t s[4]) { return s[0] * s[1] * s[2] * s[3]; }

static clt_tensor *make(clt_context *ctx, clt_dtype dt, int nd, const int64_t *s, const void *host)
{
    clt_tensor *t = NULL;
    TU_OK(clt_tensor_create(ctx, dt, nd, s, &t));
    if (host)
        TU_OK(clt_tensor_write(t, host, clt_tensor_nbytes(t)));
    else
        tu_poison(t);
    return t;
}

static float *fetch(const clt_tensor *t)
{
    size_t n = clt_tensor_nbytes(t);
    float *h = malloc(n ? n : 1);
    ck_assert_ptr_nonnull(h);
    TU_OK(clt_tensor_read(t, h, n));
    return h;
}

/* sum_o r_o * pool(x)_o in double; kind 0 max, 1 avg excluding padding, 2 avg including it. */
static double loss(const ref_pool *g, int kind, const float *x, const float *r, double *tmp)
{
    if (kind == 0)
        ref_max_pool2d(g, x, tmp, NULL);
    else
        ref_avg_pool2d(g, x, kind == 2, tmp, NULL);
    double s = 0;
    for (int64_t i = 0; i < g->n * g->c * ref_pool_ho(g) * ref_pool_wo(g); i++)
        s += r[i] * tmp[i];
    return s;
}

static const struct {
    int64_t x[4];
    clt_pool2d_params p;
} tiny[] = {
    {{1, 2, 4, 5}, {3, 3, 2, 2, 1, 1, 1, 1}},
    {{2, 1, 5, 5}, {2, 2, 1, 1, 0, 1, 1, 0}},
    {{1, 1, 3, 4}, {3, 2, 1, 2, 2, 1, 1, 0}},
};

START_TEST(finite_differences)
{
    clt_context *ctx = tu_context();
    for (int t = 0; t < 3; t++) {
        ref_pool g = ref_pool_make(tiny[t].x, &tiny[t].p);
        const int64_t os[4] = {g.n, g.c, ref_pool_ho(&g), ref_pool_wo(&g)};
        int64_t n = prod4(tiny[t].x), no = prod4(os);
        float x[64], r[64], xp[64];
        double tmp[64];
        ck_assert(n <= 64 && no <= 64);
        /* distinct values 1/n apart (a random permutation), so +-h never changes a maximum */
        for (int64_t i = 0; i < n; i++)
            x[i] = (float)i / (float)n - 0.5f;
        for (int64_t i = n - 1; i > 0; i--) {
            int64_t j = (int64_t)(tu_rng_next() % (uint64_t)(i + 1));
            float v = x[i];
            x[i] = x[j];
            x[j] = v;
        }
        tu_random_f32(r, (size_t)no, -1, 1);
        const float h = 0.25f / (float)n;
        clt_tensor *tx = make(ctx, CLT_F32, 4, tiny[t].x, x), *tr = make(ctx, CLT_F32, 4, os, r);
        clt_tensor *dx = make(ctx, CLT_F32, 4, tiny[t].x, NULL), *idx = make(ctx, CLT_I32, 4, os, NULL);
        clt_tensor *out = make(ctx, CLT_F32, 4, os, NULL);
        for (int kind = 0; kind < 4; kind++) { /* 3: max backward through the indices */
            if (kind == 3) {
                TU_OK(clt_max_pool2d(tx, &tiny[t].p, out, idx));
                TU_OK(clt_max_pool2d_backward(tr, NULL, idx, &tiny[t].p, dx));
            } else if (kind == 0) {
                TU_OK(clt_max_pool2d_backward(tr, tx, NULL, &tiny[t].p, dx));
            } else {
                TU_OK(clt_avg_pool2d_backward(tr, &tiny[t].p, kind == 2, dx));
            }
            float *got = fetch(dx);
            for (int64_t i = 0; i < n; i++) {
                memcpy(xp, x, sizeof xp);
                xp[i] = x[i] + h;
                double up = loss(&g, kind % 3, xp, r, tmp), step = (double)xp[i];
                xp[i] = x[i] - h;
                double down = loss(&g, kind % 3, xp, r, tmp);
                double fd = (up - down) / (step - (double)xp[i]);
                ck_assert_msg(fabs(got[i] - fd) <= FD_TOL,
                              "case %d kind %d: dx[%lld] = %.9g, finite difference %.9g", t, kind,
                              (long long)i, (double)got[i], fd);
            }
            free(got);
        }
        clt_tensor *all[5] = {tx, tr, dx, idx, out};
        for (int i = 0; i < 5; i++)
            clt_tensor_free(all[i]);
    }
    tu_context_free(ctx);
}
END_TEST

/* Every tensor a view at an odd offset inside one buffer full of a sentinel. */
START_TEST(offsets)
{
    clt_context *ctx = tu_context();
    enum { TOTAL = 4096, X0 = 3, OUT0 = 1005, IDX0 = 2007, DY0 = 2501, DX0 = 3009, GDY0 = 3801 };
    const float sentinel = 12345.0f;
    cl_int err;
    cl_mem buf = clCreateBuffer(clt_context_cl_context(ctx), CL_MEM_READ_WRITE, TOTAL * 4, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    float *host = malloc(TOTAL * sizeof *host);
    ck_assert_ptr_nonnull(host);
    for (int i = 0; i < TOTAL; i++)
        host[i] = sentinel;
    const int64_t xs[4] = {2, 3, 7, 6}, os[4] = {2, 3, 4, 3}, gs[2] = {2, 3}, all_n = TOTAL;
    clt_pool2d_params p;
    clt_pool2d_params_init(&p, 3);
    p.stride_h = p.stride_w = 2;
    p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = 1;
    tu_random_f32(host + X0, 252, -1, 1);
    tu_random_f32(host + DY0, 72, -1, 1);
    tu_random_f32(host + GDY0, 6, -1, 1);
    clt_tensor *whole, *x, *out, *idx, *dy, *dx, *gdy;
    TU_OK(clt_tensor_wrap_cl_mem(ctx, buf, 0, CLT_F32, 1, &all_n, &whole));
    TU_OK(clt_tensor_write(whole, host, TOTAL * 4));
    TU_OK(clt_tensor_wrap_cl_mem(ctx, buf, X0 * 4, CLT_F32, 4, xs, &x));
    TU_OK(clt_tensor_wrap_cl_mem(ctx, buf, OUT0 * 4, CLT_F32, 4, os, &out));
    TU_OK(clt_tensor_wrap_cl_mem(ctx, buf, IDX0 * 4, CLT_I32, 4, os, &idx));
    TU_OK(clt_tensor_wrap_cl_mem(ctx, buf, DY0 * 4, CLT_F32, 4, os, &dy));
    TU_OK(clt_tensor_wrap_cl_mem(ctx, buf, DX0 * 4, CLT_F32, 4, xs, &dx));
    TU_OK(clt_tensor_wrap_cl_mem(ctx, buf, GDY0 * 4, CLT_F32, 2, gs, &gdy));
    ref_pool g = ref_pool_make(xs, &p);
    double want[252], scale[252];
    int32_t want_idx[72];
    float got[TOTAL];
    /* one op at a time, each result read back (the regions are reused) */
    for (int op = 0; op < 5; op++) {
        const char *what[] = {"max", "max backward", "avg", "avg backward", "global backward"};
        int64_t at = DX0, n = 252, terms = 9;
        if (op == 0) {
            TU_OK(clt_max_pool2d(x, &p, out, idx));
            ref_max_pool2d(&g, host + X0, want, want_idx);
            at = OUT0, n = 72, terms = 0;
        } else if (op == 1) {
            TU_OK(clt_max_pool2d_backward(dy, NULL, idx, &p, dx));
            ref_max_pool2d_backward(&g, host + X0, host + DY0, want, scale);
        } else if (op == 2) {
            TU_OK(clt_avg_pool2d(x, &p, 1, out));
            ref_avg_pool2d(&g, host + X0, 1, want, scale);
            at = OUT0, n = 72;
        } else if (op == 3) {
            TU_OK(clt_avg_pool2d_backward(dy, &p, 0, dx));
            ref_avg_pool2d_backward(&g, host + DY0, 0, want, scale);
        } else {
            TU_OK(clt_global_avg_pool2d_backward(gdy, dx));
            ref_global_avg_pool2d_backward(2, 3, 7, 6, host + GDY0, want);
            for (int i = 0; i < 252; i++)
                scale[i] = fabs(want[i]);
        }
        TU_OK(clt_tensor_read(whole, got, sizeof got));
        for (int64_t i = 0; i < n; i++) {
            double bound = op == 0 ? 0.0 : SUM_TOL(terms) * scale[i] + 1e-30;
            ck_assert_msg(fabs(got[at + i] - want[i]) <= bound, "%s: element %lld = %.9g, expected %.9g",
                          what[op], (long long)i, (double)got[at + i], want[i]);
        }
        if (op == 0)
            ck_assert_mem_eq(got + IDX0, want_idx, sizeof want_idx);
        for (int i = 0; i < TOTAL; i++) {
            int written = (i >= X0 && i < X0 + 252) || (i >= OUT0 && i < OUT0 + 72) ||
                          (i >= IDX0 && i < IDX0 + 72) || (i >= DY0 && i < DY0 + 72) ||
                          (i >= DX0 && i < DX0 + 252) || (i >= GDY0 && i < GDY0 + 6);
            ck_assert_msg(written || got[i] == sentinel, "%s: element %d outside every tensor changed",
                          what[op], i);
        }
    }
    clt_tensor *all[7] = {whole, x, out, idx, dy, dx, gdy};
    for (int i = 0; i < 7; i++)
        clt_tensor_free(all[i]);
    clReleaseMemObject(buf);
    free(host);
    tu_context_free(ctx);
}
END_TEST

/* N = 0 or C = 0: every call succeeds (nothing to do). */
START_TEST(empty)
{
    clt_context *ctx = tu_context();
    for (int e = 0; e < 2; e++) {
        const int64_t xs[4] = {e ? 2 : 0, e ? 0 : 3, 5, 5}, os[4] = {xs[0], xs[1], 2, 2};
        const int64_t gs[4] = {xs[0], xs[1], 1, 1};
        clt_pool2d_params p;
        clt_pool2d_params_init(&p, 2);
        clt_tensor *x = make(ctx, CLT_F32, 4, xs, NULL), *dx = make(ctx, CLT_F32, 4, xs, NULL);
        clt_tensor *out = make(ctx, CLT_F32, 4, os, NULL), *idx = make(ctx, CLT_I32, 4, os, NULL);
        clt_tensor *g = make(ctx, CLT_F32, 4, gs, NULL), *g2 = make(ctx, CLT_F32, 2, gs, NULL);
        TU_OK(clt_max_pool2d(x, &p, out, idx));
        TU_OK(clt_max_pool2d_backward(out, x, NULL, &p, dx));
        TU_OK(clt_max_pool2d_backward(out, NULL, idx, &p, dx));
        TU_OK(clt_avg_pool2d(x, &p, 1, out));
        TU_OK(clt_avg_pool2d_backward(out, &p, 0, dx));
        TU_OK(clt_global_avg_pool2d(x, g));
        TU_OK(clt_global_avg_pool2d(x, g2));
        TU_OK(clt_global_avg_pool2d_backward(g, dx));
        TU_OK(clt_finish(ctx));
        clt_tensor *all[6] = {x, dx, out, idx, g, g2};
        for (int i = 0; i < 6; i++)
            clt_tensor_free(all[i]);
    }
    tu_context_free(ctx);
}
END_TEST

static const int64_t global_shapes[][4] = {
    {1, 1, 1, 1}, {3, 16, 7, 7}, {2, 3, 13, 5}, {1, 5, 1, 13}, {2, 2, 128, 130}, {3, 1, 5, 1},
};

START_TEST(global_average)
{
    clt_context *ctx = tu_context();
    for (int s = 0; s < 6; s++) {
        const int64_t *xs = global_shapes[s];
        int64_t n = prod4(xs), planes = xs[0] * xs[1], area = xs[2] * xs[3];
        const int64_t gs[4] = {xs[0], xs[1], 1, 1};
        float *x = malloc((size_t)n * 4), *dy = malloc((size_t)planes * 4);
        double *want = malloc((size_t)n * 8), *scale = malloc((size_t)planes * 8);
        ck_assert(x && dy && want && scale);
        tu_random_f32(x, (size_t)n, -1, 1);
        tu_random_f32(dy, (size_t)planes, -1, 1);
        clt_tensor *tx = make(ctx, CLT_F32, 4, xs, x), *dx = make(ctx, CLT_F32, 4, xs, NULL);
        for (int nd = 2; nd <= 4; nd += 2) {
            clt_tensor *out = make(ctx, CLT_F32, nd, gs, NULL), *tdy = make(ctx, CLT_F32, nd, gs, dy);
            TU_OK(clt_global_avg_pool2d(tx, out));
            ref_global_avg_pool2d(xs[0], xs[1], xs[2], xs[3], x, want, scale);
            float *got = fetch(out);
            double tol = FLT_EPSILON * (2 * sqrt((double)area) + 16);
            for (int64_t i = 0; i < planes; i++)
                ck_assert_msg(fabs(got[i] - want[i]) <= tol * scale[i] + 1e-30,
                              "shape %d (%d-D out): plane %lld = %.9g, expected %.9g", s, nd,
                              (long long)i, (double)got[i], want[i]);
            free(got);
            tu_poison(dx);
            TU_OK(clt_global_avg_pool2d_backward(tdy, dx));
            ref_global_avg_pool2d_backward(xs[0], xs[1], xs[2], xs[3], dy, want);
            got = fetch(dx);
            for (int64_t i = 0; i < n; i++)
                ck_assert_msg(fabs(got[i] - want[i]) <= 2 * FLT_EPSILON * fabs(want[i]) + 1e-30,
                              "shape %d (%d-D dy): backward %lld = %.9g, expected %.9g", s, nd,
                              (long long)i, (double)got[i], want[i]);
            free(got);
            clt_tensor_free(out);
            clt_tensor_free(tdy);
        }
        clt_tensor_free(tx);
        clt_tensor_free(dx);
        free(x);
        free(dy);
        free(want);
        free(scale);
    }
    tu_context_free(ctx);
}
END_TEST

Suite *pool2d_more_suite(void)
{
    Suite *s = suite_create("pool2d_more");
    TCase *tc = tcase_create("pool2d_more");
    tcase_add_test(tc, finite_differences);
    tcase_add_test(tc, offsets);
    tcase_add_test(tc, empty);
    tcase_add_test(tc, global_average);
    suite_add_tcase(s, tc);
    return s;
}
