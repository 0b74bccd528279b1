/* Double-precision references for unary and binary elementwise ops (see activation_ref.h). */
#include "ref/activation_ref.h"

#include <math.h>

#define SQRT_2_OVER_PI 0.79788456080286535588
#define GELU_TANH_C 0.044715

static double sigmoid(double x)
{
    if (x >= 0)
        return 1.0 / (1.0 + exp(-x));
    double e = exp(x);
    return e / (1.0 + e);
}

static double sign(double x)
{
    if (isnan(x))
        return x;
    return x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0;
}

double ref_unary(clt_unary_op op, double x, double alpha)
{
    switch (op) {
    case CLT_IDENTITY: return x;
    case CLT_NEG: return -x;
    case CLT_ABS: return fabs(x);
    case CLT_SIGN: return sign(x);
    case CLT_EXP: return exp(x);
    case CLT_LOG: return log(x);
    case CLT_SQRT: return sqrt(x);
    case CLT_RSQRT: return 1.0 / sqrt(x);
    case CLT_RECIPROCAL: return 1.0 / x;
    case CLT_SQUARE: return x * x;
    case CLT_SIN: return sin(x);
    case CLT_COS: return cos(x);
    case CLT_TANH: return tanh(x);
    case CLT_SIGMOID: return sigmoid(x);
    case CLT_RELU: return x < 0 ? 0.0 : x; /* NaN passes through */
    case CLT_LEAKY_RELU: return x < 0 ? alpha * x : x;
    case CLT_ELU: return x < 0 ? alpha * expm1(x) : x;
    case CLT_GELU_ERF: return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
    case CLT_GELU_TANH:
        return 0.5 * x * (1.0 + tanh(SQRT_2_OVER_PI * (x + GELU_TANH_C * x * x * x)));
    case CLT_SILU: return x * sigmoid(x);
    case CLT_SOFTPLUS: return fmax(x, 0.0) + log1p(exp(-fabs(x)));
    case CLT_HARDSWISH: return x * fmin(fmax(x + 3.0, 0.0), 6.0) / 6.0;
    }
    return NAN;
}

double ref_unary_deriv(clt_unary_op op, double x, double alpha)
{
    switch (op) {
    case CLT_IDENTITY: return 1.0;
    case CLT_NEG: return -1.0;
    case CLT_ABS: return sign(x);
    case CLT_SIGN: return 0.0;
    case CLT_EXP: return exp(x);
    case CLT_LOG: return 1.0 / x;
    case CLT_SQRT: return 0.5 / sqrt(x);
    case CLT_RSQRT: return -0.5 / (x * sqrt(x));
    case CLT_RECIPROCAL: return -1.0 / (x * x);
    case CLT_SQUARE: return 2.0 * x;
    case CLT_SIN: return cos(x);
    case CLT_COS: return -sin(x);
    case CLT_TANH: {
        double t = tanh(x);
        return 1.0 - t * t;
    }
    case CLT_SIGMOID: {
        double s = sigmoid(x);
        return s * (1.0 - s);
    }
    case CLT_RELU: return x > 0 ? 1.0 : 0.0;
    case CLT_LEAKY_RELU: return x > 0 ? 1.0 : alpha;
    case CLT_ELU: return x > 0 ? 1.0 : alpha * exp(x);
    case CLT_GELU_ERF: {
        double cdf = 0.5 * (1.0 + erf(x / sqrt(2.0)));
        double pdf = exp(-0.5 * x * x) * 0.39894228040143267794 /* 1/sqrt(2 pi) */;
        return cdf + x * pdf;
    }
    case CLT_GELU_TANH: {
        double u = SQRT_2_OVER_PI * (x + GELU_TANH_C * x * x * x);
        double t = tanh(u);
        double du = SQRT_2_OVER_PI * (1.0 + 3.0 * GELU_TANH_C * x * x);
        return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * du;
    }
    case CLT_SILU: {
        double s = sigmoid(x);
        return s * (1.0 + x * (1.0 - s));
    }
    case CLT_SOFTPLUS: return sigmoid(x);
    case CLT_HARDSWISH: return x < -3.0 ? 0.0 : x <= 3.0 ? (2.0 * x + 3.0) / 6.0 : 1.0;
    }
    return NAN;
}

double ref_unary_deriv_from_y(clt_unary_op op, double y, double alpha)
{
    switch (op) {
    case CLT_EXP: return y;
    case CLT_TANH: return 1.0 - y * y;
    case CLT_SIGMOID: return y * (1.0 - y);
    case CLT_RELU: return y > 0 ? 1.0 : 0.0;
    case CLT_LEAKY_RELU: return y > 0 ? 1.0 : alpha;
    default: return NAN;
    }
}

int ref_unary_grad_uses_y(clt_unary_op op)
{
    return op == CLT_SIGMOID || op == CLT_TANH || op == CLT_EXP;
}

int ref_unary_has_alpha(clt_unary_op op)
{
    return op == CLT_LEAKY_RELU || op == CLT_ELU;
}

const char *ref_unary_name(clt_unary_op op)
{
    static const char *const names[REF_UNARY_OP_COUNT] = {
        "IDENTITY", "NEG", "ABS",  "SIGN",    "EXP",  "LOG",        "SQRT", "RSQRT",
        "RECIPROCAL", "SQUARE", "SIN", "COS", "TANH", "SIGMOID", "RELU", "LEAKY_RELU",
        "ELU", "GELU_ERF", "GELU_TANH", "SILU", "SOFTPLUS", "HARDSWISH"};
    return (int)op >= 0 && (int)op < REF_UNARY_OP_COUNT ? names[op] : "?";
}

double ref_binary(clt_binary_op op, double a, double b)
{
    switch (op) {
    case CLT_ADD: return a + b;
    case CLT_SUB: return a - b;
    case CLT_MUL: return a * b;
    case CLT_DIV: return a / b;
    case CLT_MIN: return isnan(a) || isnan(b) ? NAN : a < b ? a : b;
    case CLT_MAX: return isnan(a) || isnan(b) ? NAN : a > b ? a : b;
    case CLT_POW: return pow(a, b);
    case CLT_EQ: return a == b ? 1.0 : 0.0;
    case CLT_NE: return a != b ? 1.0 : 0.0;
    case CLT_LT: return a < b ? 1.0 : 0.0;
    case CLT_LE: return a <= b ? 1.0 : 0.0;
    case CLT_GT: return a > b ? 1.0 : 0.0;
    case CLT_GE: return a >= b ? 1.0 : 0.0;
    }
    return NAN;
}

void ref_binary_deriv(clt_binary_op op, double a, double b, double *da, double *db)
{
    *da = 0.0;
    *db = 0.0;
    switch (op) {
    case CLT_ADD: *da = 1.0; *db = 1.0; break;
    case CLT_SUB: *da = 1.0; *db = -1.0; break;
    case CLT_MUL: *da = b; *db = a; break;
    case CLT_DIV: *da = 1.0 / b; *db = -a / (b * b); break;
    case CLT_MIN: *da = a <= b ? 1.0 : 0.0; *db = a <= b ? 0.0 : 1.0; break;
    case CLT_MAX: *da = a >= b ? 1.0 : 0.0; *db = a >= b ? 0.0 : 1.0; break;
    case CLT_POW: *da = b * pow(a, b - 1.0); *db = pow(a, b) * log(a); break;
    default: break; /* comparisons: zero gradient */
    }
}

const char *ref_binary_name(clt_binary_op op)
{
    static const char *const names[REF_BINARY_OP_COUNT] = {"ADD", "SUB", "MUL", "DIV", "MIN",
                                                           "MAX", "POW", "EQ",  "NE",  "LT",
                                                           "LE",  "GT",  "GE"};
    return (int)op >= 0 && (int)op < REF_BINARY_OP_COUNT ? names[op] : "?";
}

double ref_where(double cond, double a, double b)
{
    return cond != 0 ? a : b;
}
