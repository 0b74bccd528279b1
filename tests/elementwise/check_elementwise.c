/* Elementwise binary ops (every op, every broadcasting pattern, both scalar orders), where, clamp,
 * fma, in-place use, and every error path, against the double references of
 * tests/ref/activation_ref.
 *
 * Tolerances: |got - want| <= rel * |want| + abs, want first rounded to the f32 range.
 *   ADD SUB MUL: rel 1e-6. One f32 rounding is 6e-8 relative; nothing else may go wrong.
 *   DIV: rel 1e-6. OpenCL allows 2.5 ulp (3e-7) for f32 division by default.
 *   POW: rel 4e-6. OpenCL allows 16 ulp (1.9e-6).
 *   MIN MAX and comparisons, where, clamp: exact. No rounding; NaN must give NaN.
 *   fma: abs 2^-22 * (|a*b| + |c|) per element. Two roundings, or one if the compiler contracts
 *   to a fused multiply-add (the header promises neither).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cltensor_cl.h"
#include "ref/activation_ref.h"
#include "util/ew_util.h"
#include "util/test_util.h"

static double binary_rel(clt_binary_op op)
{
    switch (op) {
    case CLT_ADD:
    case CLT_SUB:
    case CLT_MUL:
    case CLT_DIV: return 1e-6;
    case CLT_POW: return 4e-6;
    default: return 0.0;
    }
}

/* Random operands that exercise op's interesting cases. */
static void fill_operand(clt_binary_op op, int which, float *x, int64_t n)
{
    tu_random_f32(x, (size_t)n, -10.0f, 10.0f);
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = tu_rng_next() % 100;
        switch (op) {
        case CLT_DIV: /* x / 0 -> inf, 0 / 0 -> NaN */
            if (r < 6)
                x[i] = 0.0f;
            break;
        case CLT_MIN:
        case CLT_MAX: /* NaN on either side propagates */
            if (r < 5)
                x[i] = NAN;
            break;
        case CLT_POW: /* negative bases: integer exponents finite, others NaN; 0^negative = inf */
            if (which == 0)
                x[i] = r < 5 ? 0.0f : x[i] * 0.4f;
            else if (r < 50)
                x[i] = (float)((int)(r % 7) - 3);
            else
                x[i] *= 0.3f;
            break;
        case CLT_ADD:
        case CLT_SUB:
        case CLT_MUL: break;
        default: /* comparisons: a small set so that ties occur, plus NaN */
            x[i] = r < 5 ? NAN : (float)((int)(r % 5) - 2);
        }
    }
}

/* out = a op b on the device vs the reference; `call` picks the entry point (0 clt_binary,
 * 1 the shorthand for ADD..DIV). */
static void check_binary(clt_context *ctx, clt_binary_op op, const ew_shape *sa, const ew_shape *sb,
                         int call)
{
    ew_shape so;
    const ew_shape *in[2] = {sa, sb};
    ck_assert(ew_broadcast(2, in, &so));
    int64_t na = ew_numel(sa), nb = ew_numel(sb), no = ew_numel(&so);
    float *a = ew_random(na, 0, 1), *b = ew_random(nb, 0, 1);
    fill_operand(op, 0, a, na);
    fill_operand(op, 1, b, nb);
    clt_tensor *ta = ew_tensor(ctx, sa, a), *tb = ew_tensor(ctx, sb, b), *to = ew_output(ctx, &so);
    if (call && op == CLT_ADD)
        TU_OK(clt_add(ta, tb, to));
    else if (call && op == CLT_SUB)
        TU_OK(clt_sub(ta, tb, to));
    else if (call && op == CLT_MUL)
        TU_OK(clt_mul(ta, tb, to));
    else if (call && op == CLT_DIV)
        TU_OK(clt_div(ta, tb, to));
    else
        TU_OK(clt_binary(op, ta, tb, to));
    float *got = ew_read(to);
    double *want = malloc((size_t)(no ? no : 1) * sizeof(double));
    for (int64_t i = 0; i < no; i++)
        want[i] = ref_binary(op, a[ew_source(&so, i, sa)], b[ew_source(&so, i, sb)]);
    char what[200];
    snprintf(what, sizeof what, "%s %s with %s", ref_binary_name(op), ew_shape_str(sa),
             ew_shape_str(sb));
    ew_check_close(what, got, want, NULL, no, binary_rel(op), 0.0);
    clt_tensor_free(ta);
    clt_tensor_free(tb);
    clt_tensor_free(to);
    free(a);
    free(b);
    free(got);
    free(want);
}

static const ew_shape scalar0 = {0, {0}};
static const struct {
    ew_shape a, b;
} patterns[] = {
    {S(1031), S(1031)},
    {S(19, 257), S(257)},
    {S(257), S(19, 257)},
    {S(19, 257), S(19, 1)},
    {S(19, 1), S(1, 257)},
    {S(2, 1, 5), S(3, 1)},
    {S(1), S(19, 257)},
    {S(19, 257), S(1)},
    {{0, {0}}, S(7, 13)},
    {S(7, 13), {0, {0}}},
    {{0, {0}}, {0, {0}}},
    {S(3, 1, 4, 1), S(5, 1, 6)},
    {S(2, 1, 2, 1, 2, 1, 2, 1), S(1, 2, 1, 2, 1, 2, 1, 2)},
    {S(1), S(1)},
    {S(0), S(0)},
    {S(3, 0), S(1)},
    {S(0, 5), S(5)},
};
#define NPATTERNS (int)(sizeof patterns / sizeof patterns[0])

/* Every op over every pattern (each op x access pattern is a kernel variant of its own). */
START_TEST(binary_every_pattern)
{
    clt_binary_op op = (clt_binary_op)_i;
    clt_context *ctx = tu_context();
    for (int p = 0; p < NPATTERNS; p++)
        check_binary(ctx, op, &patterns[p].a, &patterns[p].b, p & 1);
    tu_context_free(ctx);
}
END_TEST

/* Past the grid cap of clt__launch_1d: the kernel must loop over the rest. */
START_TEST(binary_large)
{
    clt_context *ctx = tu_context();
    ew_shape big = S(1000003), row = S(1000003);
    check_binary(ctx, CLT_ADD, &big, &row, 1);
    ew_shape m = S(1009, 997), v = S(997);
    check_binary(ctx, CLT_MUL, &m, &v, 0);
    tu_context_free(ctx);
}
END_TEST

/* a op s and s op b, with scalars that hit the special cases (0, NaN, negative bases). */
START_TEST(scalar_both_orders)
{
    clt_binary_op op = (clt_binary_op)_i;
    clt_context *ctx = tu_context();
    const float scalars[] = {-1.5f, 0.0f, 2.5f, 3.0f, -2.0f, NAN, INFINITY};
    const ew_shape shapes[] = {S(1031), {0, {0}}, S(7, 3), S(0)};
    for (size_t si = 0; si < sizeof scalars / sizeof scalars[0]; si++) {
        for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
            float s = scalars[si];
            int64_t n = ew_numel(&shapes[k]);
            float *x = ew_random(n, 0, 1);
            fill_operand(op, (int)(si & 1), x, n);
            clt_tensor *tx = ew_tensor(ctx, &shapes[k], x), *t1 = ew_output(ctx, &shapes[k]);
            clt_tensor *t2 = ew_output(ctx, &shapes[k]);
            TU_OK(clt_binary_scalar(op, tx, s, t1));
            TU_OK(clt_scalar_binary(op, s, tx, t2));
            float *g1 = ew_read(t1), *g2 = ew_read(t2);
            double *w1 = malloc((size_t)(n + 1) * sizeof(double)),
                   *w2 = malloc((size_t)(n + 1) * 8);
            for (int64_t i = 0; i < n; i++) {
                w1[i] = ref_binary(op, x[i], s);
                w2[i] = ref_binary(op, s, x[i]);
            }
            char what[160];
            snprintf(what, sizeof what, "clt_binary_scalar %s %s s = %g", ref_binary_name(op),
                     ew_shape_str(&shapes[k]), (double)s);
            ew_check_close(what, g1, w1, NULL, n, binary_rel(op), 0.0);
            snprintf(what, sizeof what, "clt_scalar_binary %s s = %g %s", ref_binary_name(op),
                     (double)s, ew_shape_str(&shapes[k]));
            ew_check_close(what, g2, w2, NULL, n, binary_rel(op), 0.0);
            clt_tensor_free(tx);
            clt_tensor_free(t1);
            clt_tensor_free(t2);
            free(x);
            free(g1);
            free(g2);
            free(w1);
            free(w2);
        }
    }
    tu_context_free(ctx);
}
END_TEST

START_TEST(where_broadcasting)
{
    clt_context *ctx = tu_context();
    const ew_shape cases[][3] = {
        {S(1031), S(1031), S(1031)}, {S(19, 1), S(257), S(19, 257)}, {{0, {0}}, S(5, 7), S(7)},
        {S(2, 1, 5), S(3, 1), S(1)}, {S(0, 3), S(3), S(1)},          {S(1), S(1), {0, {0}}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const ew_shape *in[3] = {&cases[k][0], &cases[k][1], &cases[k][2]};
        ew_shape so;
        ck_assert(ew_broadcast(3, in, &so));
        float *x[3];
        clt_tensor *t[3];
        for (int j = 0; j < 3; j++) {
            int64_t n = ew_numel(in[j]);
            x[j] = ew_random(n, -5.0f, 5.0f);
            for (int64_t i = 0; j == 0 && i < n; i++) { /* NaN != 0 is true; -0 == 0 */
                static const float conds[] = {0.0f, 1.0f, -0.0f, NAN, 2.5f, 0.0f};
                x[0][i] = conds[tu_rng_next() % 6];
            }
            t[j] = ew_tensor(ctx, in[j], x[j]);
        }
        clt_tensor *to = ew_output(ctx, &so);
        TU_OK(clt_where(t[0], t[1], t[2], to));
        int64_t no = ew_numel(&so);
        float *got = ew_read(to);
        double *want = malloc((size_t)(no + 1) * sizeof(double));
        for (int64_t i = 0; i < no; i++)
            want[i] = ref_where(x[0][ew_source(&so, i, in[0])], x[1][ew_source(&so, i, in[1])],
                                x[2][ew_source(&so, i, in[2])]);
        ew_check_close("clt_where", got, want, NULL, no, 0.0, 0.0);
        for (int j = 0; j < 3; j++) {
            clt_tensor_free(t[j]);
            free(x[j]);
        }
        clt_tensor_free(to);
        free(got);
        free(want);
    }
    tu_context_free(ctx);
}
END_TEST

START_TEST(clamp_values)
{
    clt_context *ctx = tu_context();
    const float bounds[][2] = {{-1.0f, 0.5f}, {0.25f, 0.25f}, {-INFINITY, 1.0f}, {-1.0f, INFINITY}};
    const ew_shape shapes[] = {S(1031), S(7, 13), {0, {0}}, S(0)};
    for (size_t b = 0; b < 4; b++) {
        for (size_t k = 0; k < 4; k++) {
            int64_t n = ew_numel(&shapes[k]);
            float *x = ew_random(n, -3.0f, 3.0f);
            for (int64_t i = 0; i < n; i++) {
                uint64_t r = tu_rng_next() % 20;
                x[i] = r == 0 ? NAN : r == 1 ? INFINITY : r == 2 ? -INFINITY : x[i];
            }
            clt_tensor *tx = ew_tensor(ctx, &shapes[k], x), *to = ew_output(ctx, &shapes[k]);
            TU_OK(clt_clamp(tx, bounds[b][0], bounds[b][1], to));
            TU_OK(clt_clamp(tx, bounds[b][0], bounds[b][1], tx)); /* in place */
            float *got = ew_read(to), *got2 = ew_read(tx);
            double *want = malloc((size_t)(n + 1) * sizeof(double));
            for (int64_t i = 0; i < n; i++) /* NaN stays NaN */
                want[i] = isnan(x[i]) ? NAN : fmin(fmax(x[i], bounds[b][0]), bounds[b][1]);
            ew_check_close("clt_clamp", got, want, NULL, n, 0.0, 0.0);
            ew_check_close("clt_clamp in place", got2, want, NULL, n, 0.0, 0.0);
            clt_tensor_free(tx);
            clt_tensor_free(to);
            free(x);
            free(got);
            free(got2);
            free(want);
        }
    }
    tu_context_free(ctx);
}
END_TEST

START_TEST(fma_broadcasting)
{
    clt_context *ctx = tu_context();
    const ew_shape cases[][3] = {{S(1031), S(1031), S(1031)},
                                 {S(19, 257), S(257), S(19, 1)},
                                 {{0, {0}}, S(3, 5), S(1)},
                                 {S(0), S(1), S(1)}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const ew_shape *in[3] = {&cases[k][0], &cases[k][1], &cases[k][2]};
        ew_shape so;
        ck_assert(ew_broadcast(3, in, &so));
        float *x[3];
        clt_tensor *t[3];
        for (int j = 0; j < 3; j++) {
            x[j] = ew_random(ew_numel(in[j]), -10.0f, 10.0f);
            t[j] = ew_tensor(ctx, in[j], x[j]);
        }
        clt_tensor *to = ew_output(ctx, &so);
        TU_OK(clt_fma(t[0], t[1], t[2], to));
        int64_t no = ew_numel(&so);
        float *got = ew_read(to);
        double *want = malloc((size_t)(no + 1) * sizeof(double));
        double *scale = malloc((size_t)(no + 1) * sizeof(double));
        for (int64_t i = 0; i < no; i++) {
            double ab = (double)x[0][ew_source(&so, i, in[0])] * x[1][ew_source(&so, i, in[1])];
            double c = x[2][ew_source(&so, i, in[2])];
            want[i] = ab + c;
            scale[i] = fabs(ab) + fabs(c);
        }
        ew_check_close("clt_fma", got, want, scale, no, 0.0, 0x1p-22);
        for (int j = 0; j < 3; j++) {
            clt_tensor_free(t[j]);
            free(x[j]);
        }
        clt_tensor_free(to);
        free(got);
        free(want);
        free(scale);
    }
    tu_context_free(ctx);
}
END_TEST

/* out may be the very tensor of an input of the same shape (a broadcast partner is fine). */
START_TEST(in_place)
{
    clt_context *ctx = tu_context();
    ew_shape sm = S(19, 257), sv = S(257);
    int64_t n = ew_numel(&sm);
    float *a = ew_random(n, -4, 4), *b = ew_random(257, -4, 4), *c = ew_random(n, -4, 4);
    clt_tensor *ta = ew_tensor(ctx, &sm, a), *tb = ew_tensor(ctx, &sv, b),
               *tc = ew_tensor(ctx, &sm, c);
    TU_OK(clt_add(ta, tb, ta)); /* a += b (broadcast) */
    TU_OK(clt_sub(ta, tc, tc)); /* c = a - c */
    TU_OK(clt_binary_scalar(CLT_MUL, tc, 0.5f, tc));
    TU_OK(clt_scalar_binary(CLT_SUB, 1.0f, tc, tc));
    TU_OK(clt_fma(tc, tb, ta, ta)); /* a = c * b + a */
    float *ga = ew_read(ta), *gc = ew_read(tc);
    double *wa = malloc((size_t)n * sizeof(double)), *wc = malloc((size_t)n * sizeof(double));
    for (int64_t i = 0; i < n; i++) {
        float a1 = a[i] + b[i % 257];
        float c1 = 1.0f - (a1 - c[i]) * 0.5f;
        wc[i] = c1;
        wa[i] = (double)c1 * b[i % 257] + a1;
    }
    ew_check_close("in place chain: c", gc, wc, NULL, n, 1e-6, 1e-6);
    ew_check_close("in place chain: a", ga, wa, NULL, n, 1e-6, 1e-5);
    clt_tensor_free(ta);
    clt_tensor_free(tb);
    clt_tensor_free(tc);
    free(a);
    free(b);
    free(c);
    free(ga);
    free(gc);
    free(wa);
    free(wc);
}
END_TEST

/* ------------------------------------------------------------------ errors */

START_TEST(error_null_arguments)
{
    clt_context *ctx = tu_context();
    clt_tensor *a = F32(5), *b = F32(5), *c = F32(5), *o = F32(5);
    const clt_status E = CLT_ERR_INVALID_ARGUMENT;
    EXPECT_FAIL(E, "clt_add", o, clt_add(NULL, b, o));
    EXPECT_FAIL(E, "clt_sub", o, clt_sub(a, NULL, o));
    EXPECT_FAIL(E, "clt_mul", NULL, clt_mul(a, b, NULL));
    EXPECT_FAIL(E, "clt_div", o, clt_div(a, NULL, o));
    EXPECT_FAIL(E, "clt_binary", o, clt_binary(CLT_POW, a, NULL, o));
    ck_assert_ptr_nonnull(strstr(clt_last_error(ctx), "b is NULL"));
    EXPECT_FAIL(E, "clt_binary_scalar", o, clt_binary_scalar(CLT_ADD, NULL, 1.0f, o));
    EXPECT_FAIL(E, "clt_binary_scalar", NULL, clt_binary_scalar(CLT_ADD, a, 1.0f, NULL));
    EXPECT_FAIL(E, "clt_scalar_binary", o, clt_scalar_binary(CLT_SUB, 1.0f, NULL, o));
    EXPECT_FAIL(E, "clt_where", o, clt_where(NULL, a, b, o));
    ck_assert_ptr_nonnull(strstr(clt_last_error(ctx), "cond is NULL"));
    EXPECT_FAIL(E, "clt_where", o, clt_where(c, NULL, b, o));
    EXPECT_FAIL(E, "clt_where", o, clt_where(c, a, NULL, o));
    EXPECT_FAIL(E, "clt_where", NULL, clt_where(c, a, b, NULL));
    EXPECT_FAIL(E, "clt_clamp", o, clt_clamp(NULL, 0.0f, 1.0f, o));
    EXPECT_FAIL(E, "clt_clamp", NULL, clt_clamp(a, 0.0f, 1.0f, NULL));
    EXPECT_FAIL(E, "clt_fma", o, clt_fma(NULL, b, c, o));
    EXPECT_FAIL(E, "clt_fma", o, clt_fma(a, NULL, c, o));
    EXPECT_FAIL(E, "clt_fma", o, clt_fma(a, b, NULL, o));
    ck_assert_ptr_nonnull(strstr(clt_last_error(ctx), "c is NULL"));
    EXPECT_FAIL(E, "clt_fma", NULL, clt_fma(a, b, c, NULL));
    /* Every argument NULL: no context to record on; must not crash. */
    ck_assert_int_eq(clt_add(NULL, NULL, NULL), E);
    ck_assert_ptr_nonnull(strstr(clt_last_error(NULL), "clt_add"));
    tu_context_free(ctx);
}
END_TEST

START_TEST(error_bad_enums_and_bounds)
{
    clt_context *ctx = tu_context();
    clt_tensor *a = F32(5), *b = F32(5), *o = F32(5);
    const clt_status E = CLT_ERR_INVALID_ARGUMENT;
    EXPECT_FAIL(E, "clt_binary", o, clt_binary((clt_binary_op)13, a, b, o));
    EXPECT_FAIL(E, "clt_binary", o, clt_binary((clt_binary_op)-1, a, b, o));
    EXPECT_FAIL(E, "clt_binary_scalar", o, clt_binary_scalar((clt_binary_op)99, a, 2.0f, o));
    EXPECT_FAIL(E, "clt_scalar_binary", o, clt_scalar_binary((clt_binary_op)-3, 2.0f, b, o));
    EXPECT_FAIL(E, "clt_clamp", o, clt_clamp(a, 1.0f, 0.5f, o));
    EXPECT_FAIL(E, "clt_clamp", o, clt_clamp(a, NAN, 0.5f, o));
    EXPECT_FAIL(E, "clt_clamp", o, clt_clamp(a, 0.0f, NAN, o));
    EXPECT_FAIL(E, "clt_clamp", a, clt_clamp(a, INFINITY, -INFINITY, a));
    tu_context_free(ctx);
}
END_TEST

START_TEST(error_shapes)
{
    clt_context *ctx = tu_context();
    const clt_status E = CLT_ERR_INVALID_SHAPE;
    clt_tensor *a3 = F32(3), *a4 = F32(4), *m23 = F32(2, 3), *m32 = F32(3, 2), *o4 = F32(4);
    clt_tensor *o6 = F32(6), *o123 = F32(1, 2, 3), *s0 = ew_make(ctx, CLT_F32, scalar0),
               *o1 = F32(1);
    EXPECT_FAIL(E, "clt_add", o4, clt_add(a3, a4, o4)); /* do not broadcast */
    EXPECT_FAIL(E, "clt_binary", m32, clt_binary(CLT_MAX, m23, m32, m32));
    EXPECT_FAIL(E, "clt_where", o4, clt_where(a3, a4, a4, o4));
    EXPECT_FAIL(E, "clt_fma", o4, clt_fma(a4, a4, a3, o4));
    EXPECT_FAIL(E, "clt_mul", m32, clt_mul(m23, a3, m32)); /* out not the broadcast shape */
    EXPECT_FAIL(E, "clt_mul", o6, clt_mul(m23, a3, o6));
    EXPECT_FAIL(E, "clt_mul", o123, clt_mul(m23, a3, o123)); /* larger than the broadcast shape */
    ck_assert_ptr_nonnull(strstr(clt_last_error(ctx), "[1,2,3]"));
    ck_assert_ptr_nonnull(strstr(clt_last_error(ctx), "[2,3]"));
    EXPECT_FAIL(E, "clt_sub", o1, clt_sub(s0, s0, o1)); /* 0-d with 0-d is 0-d, not [1] */
    EXPECT_FAIL(E, "clt_binary_scalar", o4, clt_binary_scalar(CLT_ADD, a3, 1.0f, o4));
    EXPECT_FAIL(E, "clt_scalar_binary", o4, clt_scalar_binary(CLT_DIV, 1.0f, a3, o4));
    EXPECT_FAIL(E, "clt_clamp", o4, clt_clamp(a3, 0.0f, 1.0f, o4));
    EXPECT_FAIL(E, "clt_where", o123, clt_where(a3, m23, s0, o123));
    EXPECT_FAIL(E, "clt_fma", m23, clt_fma(a3, s0, a3, m23));
    tu_context_free(ctx);
}
END_TEST

START_TEST(error_dtypes)
{
    clt_context *ctx = tu_context();
    const clt_status E = CLT_ERR_INVALID_DTYPE;
    clt_tensor *a = F32(6), *o = F32(6), *i = ew_make(ctx, CLT_I32, (ew_shape)S(6));
    clt_tensor *h = ew_make(ctx, CLT_F16, (ew_shape)S(6)),
               *u = ew_make(ctx, CLT_U8, (ew_shape)S(6));
    EXPECT_FAIL(E, "clt_add", o, clt_add(i, a, o));
    EXPECT_FAIL(E, "clt_div", h, clt_div(a, a, h));
    EXPECT_FAIL(E, "clt_binary_scalar", o, clt_binary_scalar(CLT_MUL, u, 2.0f, o));
    EXPECT_FAIL(E, "clt_scalar_binary", i, clt_scalar_binary(CLT_MUL, 2.0f, a, i));
    EXPECT_FAIL(E, "clt_where", o, clt_where(u, a, a, o));
    EXPECT_FAIL(E, "clt_clamp", o, clt_clamp(h, 0.0f, 1.0f, o));
    EXPECT_FAIL(E, "clt_fma", o, clt_fma(a, a, i, o));
    tu_context_free(ctx);
}
END_TEST

START_TEST(error_context_mismatch)
{
    clt_context *ctx2 = tu_context(), *ctx = tu_context();
    clt_tensor *a = F32(6), *o = F32(6), *b2 = NULL;
    TU_OK(clt_tensor_create(ctx2, CLT_F32, 1, (int64_t[]){6}, &b2));
    const char *whos[] = {"clt_add", "clt_where", "clt_fma", "clt_clamp"};
    for (int k = 0; k < 4; k++) {
        float *before = ew_read(o);
        clt_status st = k == 0   ? clt_add(a, b2, o)
                        : k == 1 ? clt_where(a, a, b2, o)
                        : k == 2 ? clt_fma(b2, a, a, o)
                                 : clt_clamp(b2, 0.0f, 1.0f, o);
        ck_assert_msg(st == CLT_ERR_CONTEXT_MISMATCH, "%s -> %s", whos[k], clt_status_string(st));
        ck_assert_msg(strstr(clt_last_error(ctx), whos[k]) || strstr(clt_last_error(ctx2), whos[k]),
                      "%s: no message names it", whos[k]);
        ew_expect_error(whos[k], st, st, strstr(clt_last_error(ctx), whos[k]) ? ctx : ctx2, whos[k],
                        o, before);
        free(before);
    }
    clt_tensor *o2 = NULL; /* out in the other context */
    TU_OK(clt_tensor_create(ctx2, CLT_F32, 1, (int64_t[]){6}, &o2));
    ck_assert_int_eq(clt_mul(a, a, o2), CLT_ERR_CONTEXT_MISMATCH);
    clt_tensor_free(o2);
    clt_tensor_free(b2);
    tu_context_free(ctx);
    tu_context_free(ctx2);
}
END_TEST

/* Two wraps of one cl_mem: out partly overlapping an input is refused; the very same memory with
 * the same shape is in place and allowed. */
START_TEST(error_aliasing)
{
    clt_context *ctx = tu_context();
    enum { N = 64 };
    cl_int err;
    cl_mem buf =
        clCreateBuffer(clt_context_cl_context(ctx), CL_MEM_READ_WRITE, (N + 8) * 4, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    clt_tensor *in = NULL, *out = NULL, *one = NULL, *b = F32(N);
    int64_t n = N, n1 = 1;
    TU_OK(clt_tensor_wrap_cl_mem(ctx, buf, 0, CLT_F32, 1, &n, &in));
    TU_OK(clt_tensor_wrap_cl_mem(ctx, buf, 4, CLT_F32, 1, &n, &out));
    TU_OK(clt_tensor_wrap_cl_mem(ctx, buf, 4, CLT_F32, 1, &n1, &one));
    float *init = ew_random(N + 8, -1, 1);
    TU_OK(clt_tensor_write(in, init, N * 4));
    const clt_status E = CLT_ERR_ALIASING;
    EXPECT_FAIL(E, "clt_add", out, clt_add(in, b, out));
    EXPECT_FAIL(E, "clt_sub", out, clt_sub(b, in, out));
    EXPECT_FAIL(E, "clt_binary_scalar", out, clt_binary_scalar(CLT_ADD, in, 1.0f, out));
    EXPECT_FAIL(E, "clt_scalar_binary", in, clt_scalar_binary(CLT_ADD, 1.0f, out, in));
    EXPECT_FAIL(E, "clt_where", out, clt_where(b, b, in, out));
    EXPECT_FAIL(E, "clt_clamp", out, clt_clamp(in, 0.0f, 1.0f, out));
    EXPECT_FAIL(E, "clt_fma", out, clt_fma(b, in, b, out));
    /* A broadcast input at out's first element: same start, other shape -> still aliasing. */
    EXPECT_FAIL(E, "clt_mul", out, clt_mul(b, one, out));
    TU_OK(clt_add(out, b, out)); /* exactly in place */
    clt_tensor_free(in);
    clt_tensor_free(out);
    clt_tensor_free(one);
    clReleaseMemObject(buf);
    free(init);
    tu_context_free(ctx);
}
END_TEST

static void add_error_tests(TCase *tc)
{
    tcase_add_test(tc, error_null_arguments);
    tcase_add_test(tc, error_bad_enums_and_bounds);
    tcase_add_test(tc, error_shapes);
    tcase_add_test(tc, error_dtypes);
    tcase_add_test(tc, error_context_mismatch);
    tcase_add_test(tc, error_aliasing);
}

Suite *elementwise_suite(void)
{
    Suite *s = suite_create("elementwise");
    TCase *tc = tcase_create("binary");
    tcase_add_loop_test(tc, binary_every_pattern, CLT_ADD, CLT_GE + 1);
    tcase_add_test(tc, binary_large);
    tcase_add_loop_test(tc, scalar_both_orders, CLT_ADD, CLT_GE + 1);
    suite_add_tcase(s, tc);
    tc = tcase_create("ternary");
    tcase_add_test(tc, where_broadcasting);
    tcase_add_test(tc, clamp_values);
    tcase_add_test(tc, fma_broadcasting);
    tcase_add_test(tc, in_place);
    suite_add_tcase(s, tc);
    tc = tcase_create("errors");
    add_error_tests(tc);
    suite_add_tcase(s, tc);
    return s;
}
