/* See cast_ref.h. Scaling by powers of two is exact in double, so rint() is the only rounding. */
#include "ref/cast_ref.h"

#include <math.h>
#include <string.h>

uint32_t ref_encode_binary(double v, int mbits, int ebits)
{
    uint32_t sign = signbit(v) ? 1u << (mbits + ebits) : 0u;
    uint32_t inf = ((1u << ebits) - 1u) << mbits;
    int bias = (1 << (ebits - 1)) - 1, emin = 1 - bias;
    double a = fabs(v);
    if (isinf(a))
        return sign | inf;
    if (a == 0.0)
        return sign;
    int ex;
    frexp(a, &ex);
    int e = ex - 1; /* a in [2^e, 2^(e+1)) */
    if (e < emin)
        e = emin; /* subnormal: units of 2^(emin - mbits) */
    double q = rint(ldexp(a, mbits - e));
    if (q >= ldexp(1.0, mbits + 1)) {
        q = ldexp(1.0, mbits);
        e++;
    }
    if (e > bias)
        return sign | inf;
    if (q < ldexp(1.0, mbits)) /* subnormal (or zero) */
        return sign | (uint32_t)q;
    return sign | ((uint32_t)(e + bias) << mbits) | ((uint32_t)q - (1u << mbits));
}

double ref_decode_binary(uint32_t bits, int mbits, int ebits)
{
    int bias = (1 << (ebits - 1)) - 1;
    uint32_t e = (bits >> mbits) & ((1u << ebits) - 1u), m = bits & ((1u << mbits) - 1u);
    int neg = (bits >> (mbits + ebits)) & 1u;
    double v;
    if (e == (1u << ebits) - 1u)
        v = m ? NAN : INFINITY;
    else if (e == 0)
        v = ldexp((double)m, 1 - bias - mbits);
    else
        v = ldexp((double)(m + (1u << mbits)), (int)e - bias - mbits);
    return neg ? -v : v;
}

float ref_round_tf32(float v)
{
    if (isnan(v) || isinf(v) || v == 0.0f)
        return v;
    double a = fabs((double)v);
    int ex;
    frexp(a, &ex);
    int e = ex - 1;
    if (e < -126)
        e = -126;
    double scaled = ldexp(a, 10 - e);
    double q = floor(scaled + 0.5); /* ties away from zero */
    double r = ldexp(q, e - 10);
    return (float)(v < 0 ? -r : r);
}

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float f32_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* The exact f32 pattern of a 16-bit pattern (widening is exact; NaN payload moved along). */
static uint32_t widen(clt_dtype from, uint32_t bits)
{
    if (from == CLT_BF16)
        return bits << 16;
    uint32_t sign = (bits & 0x8000u) << 16;
    if ((bits & 0x7C00u) == 0x7C00u)
        return sign | 0x7F800000u | ((bits & 0x3FFu) << 13);
    return f32_bits((float)ref_decode_binary(bits, 10, 5)); /* exact in f32, sign of zero kept */
}

static uint32_t to_i32(double v)
{
    if (isnan(v))
        return 0;
    v = trunc(v);
    if (v < -2147483648.0)
        v = -2147483648.0;
    if (v > 2147483647.0)
        v = 2147483647.0;
    int32_t i = (int32_t)v;
    uint32_t u;
    memcpy(&u, &i, sizeof u);
    return u;
}

uint32_t ref_cast_bits(clt_dtype from, uint32_t bits, clt_dtype to)
{
    if (from == to)
        return bits;
    if (from == CLT_F16 || from == CLT_BF16)
        return ref_cast_bits(CLT_F32, widen(from, bits), to); /* exact first step */
    double v;
    if (from == CLT_I32) {
        int32_t i;
        memcpy(&i, &bits, sizeof i);
        v = (double)i;
    } else {
        float f = f32_of(bits);
        if (isnan(f)) {
            if (to == CLT_F16)
                return ((bits >> 16) & 0x8000u) | 0x7E00u;
            if (to == CLT_BF16)
                return (bits >> 16) | 0x0040u;
            return 0; /* i32 */
        }
        v = (double)f;
    }
    switch (to) {
    case CLT_F32: return f32_bits((float)v); /* i32 -> f32: one rounding, ties to even */
    case CLT_F16: return ref_encode_binary(v, 10, 5);
    case CLT_BF16: return ref_encode_binary(v, 7, 8);
    case CLT_I32: return to_i32(v);
    default: return 0;
    }
}

double ref_16bit_value(clt_dtype d, uint16_t bits)
{
    return d == CLT_F16 ? ref_decode_binary(bits, 10, 5) : ref_decode_binary(bits, 7, 8);
}

uint16_t ref_16bit_from_f32(clt_dtype d, float v)
{
    return (uint16_t)ref_cast_bits(CLT_F32, f32_bits(v), d);
}
