/* clt_unary (every op, over its domain, special and extreme inputs), clt_unary_backward (every op,
 * from x, from y, in place; finite-difference sanity), clt_bias_activation and clt_add_activation,
 * and their error paths, against tests/ref/activation_ref in double.
 *
 * Tolerances: |got - want| <= rel * |want| + abs * scale, scale = 1 + |x| forward (activations of
 * the form x * f(x) carry f's absolute rounding error times |x|) and |dy| * (1 + x^2) backward
 * (derivatives of x * f(x) reach x^2 f'). OpenCL 1.2's f32 accuracy bounds set rel: exp/log/sqrt 3
 * ulp, tanh 5, sin/cos 4, erf 16 (1 ulp = 1.2e-7 relative); composites stack a few such errors. abs
 * covers cancellation where an op subtracts near-equal terms (1 + tanh(u) for u << 0 in GELU, 1 -
 * y^2 in TANH's backward), whose result is only accurate in absolute terms.
 *   exact (0, 0):           IDENTITY NEG ABS SIGN RELU
 *   one rounding (2e-7, 0): SQUARE LEAKY_RELU
 *   (1e-6, 1e-7):           RECIPROCAL SQRT RSQRT EXP LOG SIN COS TANH SIGMOID ELU HARDSWISH
 *   (4e-6, 1e-6):           SILU SOFTPLUS GELU_ERF GELU_TANH (erf's 16 ulp, stacked exp/tanh)
 * Backward: rel doubled plus 2e-7 (the product with dy rounds once more), abs doubled. Device
 * backward vs central differences of the double forward: (1e-5, 1e-6), the differences being good
 * to ~1e-10 and the device's derivative to a few ulp of its terms.
 */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cltensor_cl.h"
#include "ref/activation_ref.h"
#include "util/ew_util.h"
#include "util/test_util.h"

#define NOPS REF_UNARY_OP_COUNT

static void tolerance(clt_unary_op op, double *rel, double *abs)
{
    switch (op) {
    case CLT_IDENTITY:
    case CLT_NEG:
    case CLT_ABS:
    case CLT_SIGN:
    case CLT_RELU: *rel = 0.0, *abs = 0.0; break;
    case CLT_SQUARE:
    case CLT_LEAKY_RELU: *rel = 2e-7, *abs = 0.0; break;
    case CLT_SILU:
    case CLT_SOFTPLUS:
    case CLT_GELU_ERF:
    case CLT_GELU_TANH: *rel = 4e-6, *abs = 1e-6; break;
    default: *rel = 1e-6, *abs = 1e-7;
    }
}

static float alpha_of(clt_unary_op op)
{
    return op == CLT_ELU ? 1.25f : 0.0625f;
}

/* n inputs in op's domain: positives (log-uniform over 1e-3..150) for LOG / SQRT / RSQRT, a range
 * where EXP stays finite, several periods for SIN / COS, and [-8, 8) (every kink inside) else. */
static float *domain_input(clt_unary_op op, int64_t n)
{
    float *x = ew_random(n, -8.0f, 8.0f);
    for (int64_t i = 0; i < n; i++) {
        if (op == CLT_LOG || op == CLT_SQRT || op == CLT_RSQRT)
            x[i] = (float)exp(x[i] * 0.87 - 1.9);
        else if (op == CLT_EXP)
            x[i] *= 10.0f;
        else if (op == CLT_SIN || op == CLT_COS)
            x[i] *= 4.0f;
    }
    return x;
}

/* out = op(x) on the device vs ref_unary, also in place. */
static void check_forward(clt_context *ctx, clt_unary_op op, const ew_shape *s, float *x)
{
    int64_t n = ew_numel(s);
    float alpha = alpha_of(op);
    clt_tensor *tx = ew_tensor(ctx, s, x), *to = ew_output(ctx, s);
    TU_OK(clt_unary(op, tx, alpha, to));
    TU_OK(clt_unary(op, tx, alpha, tx));
    float *got = ew_read(to), *got2 = ew_read(tx);
    double *want = malloc((size_t)(n + 1) * sizeof(double)), *scale = malloc((size_t)(n + 1) * 8);
    for (int64_t i = 0; i < n; i++) {
        want[i] = ref_unary(op, x[i], alpha);
        scale[i] = isfinite(x[i]) ? 1.0 + fabs(x[i]) : 1.0;
    }
    double rel, abs;
    tolerance(op, &rel, &abs);
    char what[120];
    snprintf(what, sizeof what, "clt_unary %s %s", ref_unary_name(op), ew_shape_str(s));
    ew_check_close(what, got, want, scale, n, rel, abs);
    snprintf(what, sizeof what, "clt_unary %s %s in place", ref_unary_name(op), ew_shape_str(s));
    ew_check_close(what, got2, want, scale, n, rel, abs);
    clt_tensor_free(tx);
    clt_tensor_free(to);
    free(got);
    free(got2);
    free(want);
    free(scale);
}

START_TEST(unary_forward)
{
    clt_unary_op op = (clt_unary_op)_i;
    clt_context *ctx = tu_context();
    const ew_shape shapes[] = {S(1031), S(1), S(3, 5, 7), {0, {0}}, S(0), S(4, 0)};
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        float *x = domain_input(op, ew_numel(&shapes[k]));
        check_forward(ctx, op, &shapes[k], x);
        free(x);
    }
    tu_context_free(ctx);
}
END_TEST

/* Values at the edges of domains and far out in the tails: exact IEEE results where C has them
 * (log(0) = -inf, sqrt(-1) = NaN), finite correct limits for the saturating activations. */
START_TEST(unary_special_and_extreme)
{
    clt_context *ctx = tu_context();
    static const struct {
        clt_unary_op op;
        float x[8];
        int n;
    } special[] = {
        {CLT_LOG, {0.0f, -1.0f, 1.0f, INFINITY}, 4},
        {CLT_SQRT, {-1.0f, 0.0f, INFINITY, 4.0f}, 4},
        {CLT_RSQRT, {0.0f, -1.0f, INFINITY, 4.0f}, 4},
        {CLT_RECIPROCAL, {0.0f, -0.0f, INFINITY, -2.0f}, 4},
        {CLT_EXP, {-INFINITY, 100.0f, -200.0f, 0.0f}, 4},
        {CLT_SIGN, {NAN, 0.0f, -3.0f, 1e-30f, INFINITY}, 5},
        {CLT_ABS, {-INFINITY, NAN, -0.0f}, 3},
        {CLT_NEG, {NAN, INFINITY}, 2},
    };
    ew_shape s = S(1);
    for (size_t k = 0; k < sizeof special / sizeof special[0]; k++) {
        s.d[0] = special[k].n;
        float x[8];
        memcpy(x, special[k].x, sizeof x);
        check_forward(ctx, special[k].op, &s, x);
    }
    const clt_unary_op saturating[] = {CLT_TANH,      CLT_SIGMOID, CLT_SOFTPLUS, CLT_GELU_ERF,
                                       CLT_GELU_TANH, CLT_SILU,    CLT_ELU,      CLT_HARDSWISH};
    float ext[] = {100.0f, -100.0f, 1e4f,   -1e4f, 20.0f, -20.0f, 88.7f, -88.7f, 89.5f,
                   -89.5f, 1e-7f,   -1e-7f, 0.0f,  40.0f, -40.0f, 3.0f,  -3.0f};
    s.d[0] = (int64_t)(sizeof ext / sizeof ext[0]);
    for (size_t k = 0; k < sizeof saturating / sizeof saturating[0]; k++)
        check_forward(ctx, saturating[k], &s, ext);
    tu_context_free(ctx);
}
END_TEST

/* Past the grid cap of the launch helper. */
START_TEST(unary_large)
{
    clt_context *ctx = tu_context();
    ew_shape s = S(1000003);
    float *x = domain_input(CLT_SIGMOID, s.d[0]);
    check_forward(ctx, CLT_SIGMOID, &s, x);
    free(x);
    tu_context_free(ctx);
}
END_TEST

/* ------------------------------------------------------------------ backward */

/* dx = dy * op'(.) with y the device's own forward output. mode 0: x and y both given; 1: only the
 * one needed (RELU / LEAKY_RELU: only y); 2: both, in place (dx is dy). The reference derivative is
 * taken from y where the device reads y, so the device's forward rounding is not counted twice. */
static void check_backward(clt_context *ctx, clt_unary_op op, const ew_shape *s, int mode)
{
    int64_t n = ew_numel(s);
    float alpha = alpha_of(op);
    float *x = domain_input(op, n), *dy = ew_random(n, -2.0f, 2.0f);
    clt_tensor *tx = ew_tensor(ctx, s, x), *ty = ew_output(ctx, s), *tdy = ew_tensor(ctx, s, dy);
    clt_tensor *tdx = ew_output(ctx, s);
    TU_OK(clt_unary(op, tx, alpha, ty));
    float *y = ew_read(ty);
    int relu = op == CLT_RELU || op == CLT_LEAKY_RELU;
    int via_y = ref_unary_grad_uses_y(op) || (relu && mode == 1);
    const clt_tensor *gx = mode == 1 && via_y ? NULL : tx;
    const clt_tensor *gy = mode == 1 && !via_y ? NULL : ty;
    clt_tensor *out = mode == 2 ? tdy : tdx;
    TU_OK(clt_unary_backward(op, alpha, gx, gy, tdy, out));
    float *got = ew_read(out);
    double *want = malloc((size_t)(n + 1) * sizeof(double)), *scale = malloc((size_t)(n + 1) * 8);
    for (int64_t i = 0; i < n; i++) {
        double d =
            via_y ? ref_unary_deriv_from_y(op, y[i], alpha) : ref_unary_deriv(op, x[i], alpha);
        want[i] = dy[i] * d;
        scale[i] = fabs(dy[i]) * (via_y ? 1.0 : 1.0 + (double)x[i] * x[i]);
    }
    double rel, abs;
    tolerance(op, &rel, &abs);
    char what[120];
    snprintf(what, sizeof what, "clt_unary_backward %s %s mode %d", ref_unary_name(op),
             ew_shape_str(s), mode);
    ew_check_close(what, got, want, scale, n, 2 * rel + 2e-7, 2 * abs + 1e-30);
    clt_tensor_free(tx);
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

START_TEST(unary_backward)
{
    clt_unary_op op = (clt_unary_op)_i;
    clt_context *ctx = tu_context();
    const ew_shape shapes[] = {S(1031), S(3, 5, 7), {0, {0}}, S(0)};
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++)
        for (int mode = 0; mode < 3; mode++)
            check_backward(ctx, op, &shapes[k], mode);
    tu_context_free(ctx);
}
END_TEST

static int near_kink(clt_unary_op op, double x)
{
    return fabs(x) < 1e-2 || (op == CLT_HARDSWISH && fabs(fabs(x) - 3.0) < 1e-2);
}

/* Sanity of the reference itself: every derivative matches central differences of the forward
 * (in double, away from kinks); and the device's backward of the smooth activations does too. */
START_TEST(backward_finite_differences)
{
    for (int op = 0; op < NOPS; op++) {
        float *x = domain_input((clt_unary_op)op, 200);
        for (int i = 0; i < 200; i++) {
            double v = x[i], a = alpha_of((clt_unary_op)op), h = 1e-6 * fmax(1.0, fabs(v));
            if (near_kink((clt_unary_op)op, v))
                continue;
            double fd =
                (ref_unary((clt_unary_op)op, v + h, a) - ref_unary((clt_unary_op)op, v - h, a)) /
                (2 * h);
            double d = ref_unary_deriv((clt_unary_op)op, v, a);
            ck_assert_msg(fabs(d - fd) <= 1e-5 * (1.0 + fabs(d)),
                          "%s'(%.9g): reference %.9g, central "
                          "difference %.9g",
                          ref_unary_name((clt_unary_op)op), v, d, fd);
        }
        free(x);
    }
    clt_context *ctx = tu_context();
    const clt_unary_op smooth[] = {CLT_SIGMOID, CLT_TANH,     CLT_GELU_ERF, CLT_GELU_TANH,
                                   CLT_SILU,    CLT_SOFTPLUS, CLT_ELU,      CLT_HARDSWISH};
    ew_shape s = S(257);
    float ones[257];
    for (int i = 0; i < 257; i++)
        ones[i] = 1.0f;
    for (size_t k = 0; k < sizeof smooth / sizeof smooth[0]; k++) {
        clt_unary_op op = smooth[k];
        float a = alpha_of(op), *x = ew_random(257, -6.0f, 6.0f);
        for (int i = 0; i < 257; i++)
            if (near_kink(op, x[i]))
                x[i] = 0.5f;
        clt_tensor *tx = ew_tensor(ctx, &s, x), *ty = ew_output(ctx, &s),
                   *tdy = ew_tensor(ctx, &s, ones);
        clt_tensor *tdx = ew_output(ctx, &s);
        TU_OK(clt_unary(op, tx, a, ty));
        TU_OK(clt_unary_backward(op, a, tx, ty, tdy, tdx));
        float *got = ew_read(tdx);
        double want[257], scale[257];
        for (int i = 0; i < 257; i++) {
            double h = 1e-6 * fmax(1.0, fabs(x[i]));
            want[i] = (ref_unary(op, x[i] + h, a) - ref_unary(op, x[i] - h, a)) / (2 * h);
            scale[i] = 1.0 + (double)x[i] * x[i];
        }
        char what[80];
        snprintf(what, sizeof what, "%s backward vs central differences", ref_unary_name(op));
        ew_check_close(what, got, want, scale, 257, 1e-5, 1e-6);
        clt_tensor_free(tx);
        clt_tensor_free(ty);
        clt_tensor_free(tdy);
        clt_tensor_free(tdx);
        free(x);
        free(got);
    }
    tu_context_free(ctx);
}
END_TEST

/* ------------------------------------------------------------------ fused */

/* out = act(a + b) by clt_bias_activation (bias = 1) or clt_add_activation, vs act applied in
 * double to the f32 sum (the device rounds the sum once, as composing clt_add and clt_unary would).
 */
static void check_fused(clt_context *ctx, int bias, clt_unary_op act, ew_shape sa, ew_shape sb,
                        int in_place)
{
    const ew_shape *in[2] = {&sa, &sb};
    ew_shape so;
    ck_assert(ew_broadcast(2, in, &so));
    int64_t na = ew_numel(&sa), nb = ew_numel(&sb), no = ew_numel(&so);
    float alpha = alpha_of(act), *a = ew_random(na, -4.0f, 4.0f), *b = ew_random(nb, -4.0f, 4.0f);
    clt_tensor *ta = ew_tensor(ctx, &sa, a), *tb = ew_tensor(ctx, &sb, b);
    clt_tensor *to = in_place ? ta : ew_output(ctx, &so);
    if (bias)
        TU_OK(clt_bias_activation(ta, tb, act, alpha, to));
    else
        TU_OK(clt_add_activation(ta, tb, act, alpha, to));
    float *got = ew_read(to);
    double *want = malloc((size_t)(no + 1) * sizeof(double)), *scale = malloc((size_t)(no + 1) * 8);
    for (int64_t i = 0; i < no; i++) {
        float sum = a[ew_source(&so, i, &sa)] + b[ew_source(&so, i, &sb)];
        want[i] = ref_unary(act, sum, alpha);
        scale[i] = 1.0 + fabs(sum);
    }
    double rel, abs;
    tolerance(act, &rel, &abs);
    char what[160];
    snprintf(what, sizeof what, "%s %s %s + %s%s",
             bias ? "clt_bias_activation" : "clt_add_activation", ref_unary_name(act),
             ew_shape_str(&sa), ew_shape_str(&sb), in_place ? " in place" : "");
    ew_check_close(what, got, want, scale, no, rel, abs);
    clt_tensor_free(ta);
    clt_tensor_free(tb);
    if (!in_place)
        clt_tensor_free(to);
    free(a);
    free(b);
    free(got);
    free(want);
    free(scale);
}

/* Every activation fused once per entry point: each (activation, broadcast pattern) pair is a
 * kernel of its own, and transcendental ones take ~0.7 s each to build on POCL, so the patterns are
 * covered by a few activations in fused_broadcasting. */
START_TEST(fused_every_activation)
{
    clt_unary_op act = (clt_unary_op)_i;
    clt_context *ctx = tu_context();
    check_fused(ctx, 1, act, (ew_shape)S(19, 257), (ew_shape)S(257), _i & 1);
    check_fused(ctx, 0, act, (ew_shape)S(1031), (ew_shape)S(1031), !(_i & 1));
    tu_context_free(ctx);
}
END_TEST

START_TEST(fused_broadcasting)
{
    const clt_unary_op acts[] = {CLT_RELU, CLT_LEAKY_RELU, CLT_GELU_TANH};
    clt_context *ctx = tu_context();
    for (int k = 0; k < 3; k++) {
        check_fused(ctx, 1, acts[k], (ew_shape)S(2, 3, 33), (ew_shape)S(1, 1, 33), k == 1);
        check_fused(ctx, 1, acts[k], (ew_shape)S(5, 7), (ew_shape)S(1, 7), 0);
        check_fused(ctx, 1, acts[k], (ew_shape)S(1031), (ew_shape)S(1031), 0);
        check_fused(ctx, 1, acts[k], (ew_shape)S(0, 4), (ew_shape)S(4), 0);
        check_fused(ctx, 0, acts[k], (ew_shape)S(19, 1), (ew_shape)S(1, 257), 0);
        check_fused(ctx, 0, acts[k], (ew_shape){0, {0}}, (ew_shape)S(7, 13), 0);
        check_fused(ctx, 0, acts[k], (ew_shape)S(3, 0), (ew_shape)S(1), 0);
    }
    tu_context_free(ctx);
}
END_TEST

/* ------------------------------------------------------------------ errors */

#define MENTIONS(text)                                                                             \
    ck_assert_msg(strstr(clt_last_error(ctx), text), "\"%s\" lacks \"%s\"", clt_last_error(ctx),   \
                  text)

START_TEST(error_unary)
{
    clt_context *ctx = tu_context();
    clt_tensor *x = F32(6), *o = F32(6), *o7 = F32(7), *o23 = F32(2, 3);
    clt_tensor *i = ew_make(ctx, CLT_I32, (ew_shape)S(6)),
               *h = ew_make(ctx, CLT_F16, (ew_shape)S(6));
    const char *w = "clt_unary";
    EXPECT_FAIL(CLT_ERR_INVALID_ARGUMENT, w, o, clt_unary(CLT_RELU, NULL, 0.0f, o));
    EXPECT_FAIL(CLT_ERR_INVALID_ARGUMENT, w, NULL, clt_unary(CLT_RELU, x, 0.0f, NULL));
    EXPECT_FAIL(CLT_ERR_INVALID_ARGUMENT, w, o, clt_unary((clt_unary_op)22, x, 0.0f, o));
    EXPECT_FAIL(CLT_ERR_INVALID_ARGUMENT, w, o, clt_unary((clt_unary_op)-1, x, 0.0f, o));
    EXPECT_FAIL(CLT_ERR_INVALID_SHAPE, w, o7, clt_unary(CLT_EXP, x, 0.0f, o7));
    EXPECT_FAIL(CLT_ERR_INVALID_SHAPE, w, o23, clt_unary(CLT_EXP, x, 0.0f, o23));
    EXPECT_FAIL(CLT_ERR_INVALID_DTYPE, w, o, clt_unary(CLT_TANH, i, 0.0f, o));
    EXPECT_FAIL(CLT_ERR_INVALID_DTYPE, w, h, clt_unary(CLT_TANH, x, 0.0f, h));
    /* another context */
    clt_context *ctx2 = tu_context();
    clt_tensor *x2 = NULL;
    TU_OK(clt_tensor_create(ctx2, CLT_F32, 1, (int64_t[]){6}, &x2));
    float *before = ew_read(o);
    clt_status st = clt_unary(CLT_SILU, x2, 0.0f, o);
    ew_expect_error("clt_unary across contexts", st, CLT_ERR_CONTEXT_MISMATCH,
                    strstr(clt_last_error(ctx), w) ? ctx : ctx2, w, o, before);
    free(before);
    clt_tensor_free(x2);
    tu_context_free(ctx2);
    /* partial overlap through two wraps of one buffer */
    cl_int err;
    cl_mem buf = clCreateBuffer(clt_context_cl_context(ctx), CL_MEM_READ_WRITE, 64 * 4, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    clt_tensor *lo = NULL, *hi = NULL;
    int64_t n = 32;
    TU_OK(clt_tensor_wrap_cl_mem(ctx, buf, 0, CLT_F32, 1, &n, &lo));
    TU_OK(clt_tensor_wrap_cl_mem(ctx, buf, 16 * 4, CLT_F32, 1, &n, &hi));
    float *init = ew_random(64, -1, 1);
    TU_OK(clt_tensor_write(lo, init, 32 * 4));
    TU_OK(clt_tensor_write(hi, init + 32, 32 * 4));
    EXPECT_FAIL(CLT_ERR_ALIASING, w, hi, clt_unary(CLT_NEG, lo, 0.0f, hi));
    EXPECT_FAIL(CLT_ERR_ALIASING, w, lo, clt_unary(CLT_NEG, hi, 0.0f, lo));
    clt_tensor_free(lo);
    clt_tensor_free(hi);
    clReleaseMemObject(buf);
    free(init);
    tu_context_free(ctx);
}
END_TEST

START_TEST(error_backward)
{
    clt_context *ctx = tu_context();
    clt_tensor *x = F32(6), *y = F32(6), *dy = F32(6), *dx = F32(6), *x5 = F32(5),
               *dx23 = F32(2, 3);
    clt_tensor *i = ew_make(ctx, CLT_I32, (ew_shape)S(6));
    const char *w = "clt_unary_backward";
    const clt_status A = CLT_ERR_INVALID_ARGUMENT, SH = CLT_ERR_INVALID_SHAPE;
    EXPECT_FAIL(A, w, dx, clt_unary_backward(CLT_RELU, 0.0f, x, y, NULL, dx));
    MENTIONS("dy");
    EXPECT_FAIL(A, w, NULL, clt_unary_backward(CLT_RELU, 0.0f, x, y, dy, NULL));
    EXPECT_FAIL(A, w, dx, clt_unary_backward((clt_unary_op)22, 0.0f, x, y, dy, dx));
    EXPECT_FAIL(A, w, dx, clt_unary_backward(CLT_SIGMOID, 0.0f, x, NULL, dy, dx));
    MENTIONS("needs y");
    EXPECT_FAIL(A, w, dx, clt_unary_backward(CLT_TANH, 0.0f, x, NULL, dy, dx));
    EXPECT_FAIL(A, w, dx, clt_unary_backward(CLT_EXP, 0.0f, x, NULL, dy, dx));
    EXPECT_FAIL(A, w, dx, clt_unary_backward(CLT_GELU_ERF, 0.0f, NULL, y, dy, dx));
    MENTIONS("needs x");
    EXPECT_FAIL(A, w, dx, clt_unary_backward(CLT_LOG, 0.0f, NULL, y, dy, dx));
    EXPECT_FAIL(A, w, dx, clt_unary_backward(CLT_RELU, 0.0f, NULL, NULL, dy, dx));
    EXPECT_FAIL(A, w, dx, clt_unary_backward(CLT_LEAKY_RELU, 0.1f, NULL, NULL, dy, dx));
    EXPECT_FAIL(SH, w, dx, clt_unary_backward(CLT_RELU, 0.0f, x5, NULL, dy, dx));
    EXPECT_FAIL(SH, w, dx, clt_unary_backward(CLT_SIGMOID, 0.0f, NULL, x5, dy, dx));
    EXPECT_FAIL(SH, w, dx, clt_unary_backward(CLT_SIGMOID, 0.0f, x5, y, dy, dx)); /* unused x */
    EXPECT_FAIL(SH, w, dx, clt_unary_backward(CLT_SILU, 0.0f, x, y, x5, dx));
    EXPECT_FAIL(SH, w, dx23, clt_unary_backward(CLT_SILU, 0.0f, x, y, dy, dx23));
    EXPECT_FAIL(CLT_ERR_INVALID_DTYPE, w, dx, clt_unary_backward(CLT_SILU, 0.0f, x, NULL, i, dx));
    EXPECT_FAIL(CLT_ERR_INVALID_DTYPE, w, i, clt_unary_backward(CLT_SILU, 0.0f, x, NULL, dy, i));
    clt_context *ctx2 = tu_context();
    clt_tensor *x2 = NULL;
    TU_OK(clt_tensor_create(ctx2, CLT_F32, 1, (int64_t[]){6}, &x2));
    float *before = ew_read(dx);
    clt_status st = clt_unary_backward(CLT_GELU_TANH, 0.0f, x2, NULL, dy, dx);
    ew_expect_error("backward across contexts", st, CLT_ERR_CONTEXT_MISMATCH,
                    strstr(clt_last_error(ctx), w) ? ctx : ctx2, w, dx, before);
    free(before);
    tu_context_free(ctx2);
    tu_context_free(ctx);
}
END_TEST

START_TEST(error_fused)
{
    clt_context *ctx = tu_context();
    clt_tensor *x = F32(4, 6), *o = F32(4, 6), *b6 = F32(6), *b7 = F32(7), *b26 = F32(2, 6);
    clt_tensor *b116 = F32(1, 1, 6), *b0 = ew_make(ctx, CLT_F32, (ew_shape){0, {0}}),
               *b16 = F32(1, 6);
    clt_tensor *x0 = ew_make(ctx, CLT_F32, (ew_shape){0, {0}}), *o6 = F32(6), *a4 = F32(4),
               *o46 = F32(4, 6);
    const char *w = "clt_bias_activation", *w2 = "clt_add_activation";
    const clt_status A = CLT_ERR_INVALID_ARGUMENT, SH = CLT_ERR_INVALID_SHAPE;
    EXPECT_FAIL(A, w, o, clt_bias_activation(NULL, b6, CLT_RELU, 0.0f, o));
    EXPECT_FAIL(A, w, o, clt_bias_activation(x, NULL, CLT_RELU, 0.0f, o));
    MENTIONS("bias is NULL");
    EXPECT_FAIL(A, w, NULL, clt_bias_activation(x, b6, CLT_RELU, 0.0f, NULL));
    EXPECT_FAIL(A, w, o, clt_bias_activation(x, b6, (clt_unary_op)40, 0.0f, o));
    EXPECT_FAIL(SH, w, o, clt_bias_activation(x, b7, CLT_RELU, 0.0f, o));
    MENTIONS("[7]");
    EXPECT_FAIL(SH, w, o, clt_bias_activation(x, b26, CLT_RELU, 0.0f, o));
    EXPECT_FAIL(SH, w, o, clt_bias_activation(x, b116, CLT_RELU, 0.0f, o)); /* more dims than x */
    EXPECT_FAIL(SH, w, o, clt_bias_activation(x, b0, CLT_RELU, 0.0f, o));
    EXPECT_FAIL(SH, w, o6, clt_bias_activation(x0, b6, CLT_RELU, 0.0f, o6));
    EXPECT_FAIL(SH, w, o6, clt_bias_activation(x, b16, CLT_RELU, 0.0f, o6)); /* out not x's shape */
    EXPECT_FAIL(A, w2, o, clt_add_activation(NULL, x, CLT_GELU_TANH, 0.0f, o));
    EXPECT_FAIL(A, w2, o, clt_add_activation(x, NULL, CLT_GELU_TANH, 0.0f, o));
    EXPECT_FAIL(A, w2, NULL, clt_add_activation(x, x, CLT_GELU_TANH, 0.0f, NULL));
    EXPECT_FAIL(A, w2, o, clt_add_activation(x, x, (clt_unary_op)-5, 0.0f, o));
    EXPECT_FAIL(SH, w2, o, clt_add_activation(x, a4, CLT_SIGMOID, 0.0f, o)); /* [4,6] with [4] */
    EXPECT_FAIL(SH, w2, o6, clt_add_activation(x, b6, CLT_SIGMOID, 0.0f, o6));
    clt_tensor *i = ew_make(ctx, CLT_I32, (ew_shape)S(6));
    EXPECT_FAIL(CLT_ERR_INVALID_DTYPE, w, o46, clt_bias_activation(x, i, CLT_RELU, 0.0f, o46));
    EXPECT_FAIL(CLT_ERR_INVALID_DTYPE, w2, o46, clt_add_activation(i, x, CLT_RELU, 0.0f, o46));
    tu_context_free(ctx);
}
END_TEST

Suite *activations_suite(void)
{
    Suite *s = suite_create("activations");
    TCase *tc = tcase_create("forward");
    tcase_add_loop_test(tc, unary_forward, 0, NOPS);
    tcase_add_test(tc, unary_special_and_extreme);
    tcase_add_test(tc, unary_large);
    suite_add_tcase(s, tc);
    tc = tcase_create("backward");
    tcase_add_loop_test(tc, unary_backward, 0, NOPS);
    tcase_add_test(tc, backward_finite_differences);
    suite_add_tcase(s, tc);
    tc = tcase_create("fused");
    tcase_add_loop_test(tc, fused_every_activation, 0, NOPS);
    tcase_add_test(tc, fused_broadcasting);
    suite_add_tcase(s, tc);
    tc = tcase_create("errors");
    tcase_add_test(tc, error_unary);
    tcase_add_test(tc, error_backward);
    tcase_add_test(tc, error_fused);
    suite_add_tcase(s, tc);
    return s;
}
