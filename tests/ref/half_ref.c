/* Conversion done in double on the magnitude: scaling a float by a power of two is exact in double,
 * so rint() (ties to even under the default rounding mode) performs the only rounding step. */
#include "ref/half_ref.h"

#include <math.h>
#include <string.h>

uint16_t ref_float_to_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    if (isnan(f))
        return (uint16_t)(sign | 0x7E00u);
    double a = fabs((double)f);
    if (a >= 65520.0) /* halfway between 65504 and the next binade rounds up to infinity */
        return (uint16_t)(sign | 0x7C00u);
    if (a < ldexp(1.0, -14)) {
        /* Subnormal range: units of 2^-24; a result of 1024 is the smallest normal, same bits. */
        double q = rint(a * ldexp(1.0, 24));
        return (uint16_t)(sign | (uint16_t)q);
    }
    int ex;
    frexp(a, &ex); /* a = m * 2^ex, m in [0.5, 1) */
    int e = ex - 1;
    double q = rint(ldexp(a, 10 - e)); /* in [1024, 2048] */
    if (q >= 2048.0) {
        q = 1024.0;
        e++;
    }
    if (e + 15 >= 31)
        return (uint16_t)(sign | 0x7C00u);
    return (uint16_t)(sign | (uint16_t)((e + 15) << 10) | (uint16_t)((uint32_t)q - 1024u));
}

float ref_half_to_float(uint16_t h)
{
    int sign = (h >> 15) & 1;
    int e = (h >> 10) & 0x1F;
    int m = h & 0x3FF;
    double v;
    if (e == 0)
        v = ldexp((double)m, -24);
    else if (e == 31)
        v = m ? NAN : INFINITY;
    else
        v = ldexp((double)(m + 1024), e - 25);
    return (float)(sign ? -v : v);
}

int ref_half_is_nan(uint16_t h) { return (h & 0x7C00u) == 0x7C00u && (h & 0x3FFu) != 0; }
