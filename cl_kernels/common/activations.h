/* Device functions for every clt_unary_op: forward clt_act_<name>(x, alpha) and derivative
 * clt_dact_<name>(v, alpha), where v is the forward output y for sigmoid, tanh and exp (their
 * derivatives are cheapest from y) and the input x for every other op; relu and leaky_relu give the
 * same answer from either (for alpha >= 0). alpha is used by leaky_relu and elu only.
 *
 * Formulas follow the C references (tests/ref/activation_ref.c) so results match tightly; they are
 * written to stay finite where the naive form overflows (sigmoid for large negative x, softplus for
 * large |x|). relu, leaky_relu and elu let NaN through (x < 0 is false for NaN). */
#ifndef CLT_ACTIVATIONS_H
#define CLT_ACTIVATIONS_H

#define CLT_SQRT_2_OVER_PI 0.7978845608028654f
#define CLT_RSQRT_2 0.7071067811865476f
#define CLT_RSQRT_2PI 0.3989422804014327f
#define CLT_GELU_TANH_C 0.044715f

static inline float clt_sigmoidf(float x)
{
    /* exp of a non-positive argument only: no overflow, no inf/inf. */
    float e = exp(-fabs(x));
    return x >= 0.0f ? 1.0f / (1.0f + e) : e / (1.0f + e);
}

static inline float clt_act_identity(float x, float alpha) { return x; }
static inline float clt_act_neg(float x, float alpha) { return -x; }
static inline float clt_act_abs(float x, float alpha) { return fabs(x); }
static inline float clt_act_sign(float x, float alpha)
{
    return isnan(x) ? x : x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : 0.0f;
}
static inline float clt_act_exp(float x, float alpha) { return exp(x); }
static inline float clt_act_log(float x, float alpha) { return log(x); }
static inline float clt_act_sqrt(float x, float alpha) { return sqrt(x); }
static inline float clt_act_rsqrt(float x, float alpha) { return rsqrt(x); }
static inline float clt_act_reciprocal(float x, float alpha) { return 1.0f / x; }
static inline float clt_act_square(float x, float alpha) { return x * x; }
static inline float clt_act_sin(float x, float alpha) { return sin(x); }
static inline float clt_act_cos(float x, float alpha) { return cos(x); }
/* tanh in about 20 instructions, at relu's speed when memory-bound (the built-in tanh, ~2x the
 * instructions, made tanh/16M on the H200 35.6 us against relu's 35.0): |x| < 0.7 an odd minimax
 * polynomial x + x^3 P(x^2) (0.64 ulp in float, fitted in double), else 1 - 2 / (e^2|x| + 1) with
 * x's sign, e and the division by the hardware approximations (NVIDIA: ex2.approx ~2^-22,
 * rcp.approx 1 ulp): at |x| = 0.7 the quotient's error reaches the result scaled by q / (1 - q) =
 * 0.66, about 3 ulp in all, within the tests' 1e-6 (8 ulp). NaN propagates through exp; +-inf
 * and large |x| give +-1. */
static inline float clt_tanhf(float x)
{
    float a = fabs(x), t = x * x;
    float p = fma(fma(fma(fma(fma(0.00193305162f, t, -0.00793354679f), t, 0.021595953f), t,
                          -0.0539264902f), t, 0.13333036f), t, -0.333333254f);
    float small = fma(x * t, p, x);
    float big = copysign(1.0f - native_divide(2.0f, native_exp(2.0f * a) + 1.0f), x);
    return a < 0.7f ? small : big;
}
static inline float clt_act_tanh(float x, float alpha) { return clt_tanhf(x); }
static inline float clt_act_sigmoid(float x, float alpha) { return clt_sigmoidf(x); }
static inline float clt_act_relu(float x, float alpha) { return x < 0.0f ? 0.0f : x; }
static inline float clt_act_leaky_relu(float x, float alpha) { return x < 0.0f ? alpha * x : x; }
static inline float clt_act_elu(float x, float alpha) { return x < 0.0f ? alpha * expm1(x) : x; }
static inline float clt_act_gelu_erf(float x, float alpha)
{
    return 0.5f * x * (1.0f + erf(x * CLT_RSQRT_2));
}
static inline float clt_act_gelu_tanh(float x, float alpha)
{
    float u = CLT_SQRT_2_OVER_PI * (x + CLT_GELU_TANH_C * x * x * x);
    return 0.5f * x * (1.0f + clt_tanhf(u));
}
static inline float clt_act_silu(float x, float alpha) { return x * clt_sigmoidf(x); }
static inline float clt_act_softplus(float x, float alpha)
{
    /* max(x, 0) + log1p(exp(-|x|)): exact for large |x|, never overflows. */
    return fmax(x, 0.0f) + log1p(exp(-fabs(x)));
}
static inline float clt_act_hardswish(float x, float alpha)
{
    return x * clamp(x + 3.0f, 0.0f, 6.0f) / 6.0f;
}

/* Derivatives. v = y for exp, tanh, sigmoid; v = x otherwise. */
static inline float clt_dact_identity(float v, float alpha) { return 1.0f; }
static inline float clt_dact_neg(float v, float alpha) { return -1.0f; }
static inline float clt_dact_abs(float v, float alpha) { return clt_act_sign(v, alpha); }
static inline float clt_dact_sign(float v, float alpha) { return 0.0f; }
static inline float clt_dact_exp(float v, float alpha) { return v; }
static inline float clt_dact_log(float v, float alpha) { return 1.0f / v; }
static inline float clt_dact_sqrt(float v, float alpha) { return 0.5f / sqrt(v); }
static inline float clt_dact_rsqrt(float v, float alpha) { return -0.5f * rsqrt(v) / v; }
static inline float clt_dact_reciprocal(float v, float alpha)
{
    float r = 1.0f / v; /* -r*r keeps range where -1/(v*v) would overflow v*v */
    return -(r * r);
}
static inline float clt_dact_square(float v, float alpha) { return 2.0f * v; }
static inline float clt_dact_sin(float v, float alpha) { return cos(v); }
static inline float clt_dact_cos(float v, float alpha) { return -sin(v); }
static inline float clt_dact_tanh(float v, float alpha) { return 1.0f - v * v; }
static inline float clt_dact_sigmoid(float v, float alpha) { return v * (1.0f - v); }
static inline float clt_dact_relu(float v, float alpha) { return v > 0.0f ? 1.0f : 0.0f; }
static inline float clt_dact_leaky_relu(float v, float alpha) { return v > 0.0f ? 1.0f : alpha; }
static inline float clt_dact_elu(float v, float alpha) { return v > 0.0f ? 1.0f : alpha * exp(v); }
static inline float clt_dact_gelu_erf(float v, float alpha)
{
    float cdf = 0.5f * (1.0f + erf(v * CLT_RSQRT_2));
    return cdf + v * CLT_RSQRT_2PI * exp(-0.5f * v * v);
}
static inline float clt_dact_gelu_tanh(float v, float alpha)
{
    float u = CLT_SQRT_2_OVER_PI * (v + CLT_GELU_TANH_C * v * v * v);
    float t = clt_tanhf(u);
    float du = CLT_SQRT_2_OVER_PI * (1.0f + 3.0f * CLT_GELU_TANH_C * v * v);
    return 0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * du;
}
static inline float clt_dact_silu(float v, float alpha)
{
    float s = clt_sigmoidf(v);
    return s * (1.0f + v * (1.0f - s));
}
static inline float clt_dact_softplus(float v, float alpha) { return clt_sigmoidf(v); }
static inline float clt_dact_hardswish(float v, float alpha)
{
    return v < -3.0f ? 0.0f : v <= 3.0f ? (2.0f * v + 3.0f) / 6.0f : 1.0f;
}

#endif
