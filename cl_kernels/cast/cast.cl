/* clt_cast: dst[i] = convert(src[i]) between f32, f16, bf16 and i32, one grid-stride launch.
 *
 * Every conversion is done on bit patterns with integer arithmetic (no f16 arithmetic, no reliance on
 * a device's denormal or NaN handling), so all devices give the same bits:
 *   f16 -> f32, bf16 -> f32     exact (subnormals kept; NaN payload kept)
 *   f32 -> f16                  nearest, ties to even; |x| >= 65520 -> inf; NaN -> sign | 0x7E00
 *   f32 -> bf16                 nearest, ties to even; overflow -> inf; NaN -> quiet, sign and the
 *                               top payload bits kept ((bits >> 16) | 0x0040)
 *   f16 <-> bf16                through f32 (the first step is exact: one rounding)
 *   i32 -> f32 / f16 / bf16     nearest, ties to even, one rounding (i32 -> f32 rounds to odd first:
 *                               24 bits >= the target's 11 + 2, so the second rounding is exact)
 *   f32 / f16 / bf16 -> i32     toward zero, saturated to [-2^31, 2^31 - 1], NaN -> 0
 *   same dtype                  the bits
 * -D contract: SRC and DST, the clt_dtype values (1 f32, 2 f16, 3 i32, 6 bf16). */
#include "common/half_bf16.h"

#ifndef SRC
#define SRC 1
#endif
#ifndef DST
#define DST 1
#endif

#define T_F32 1
#define T_F16 2
#define T_I32 3
#define T_BF16 6

#if SRC == T_F16 || SRC == T_BF16
typedef ushort src_t;
#else
typedef uint src_t;
#endif
#if DST == T_F16 || DST == T_BF16
typedef ushort dst_t;
#else
typedef uint dst_t;
#endif

static inline float cast_f16_to_f32(ushort h)
{
    uint sign = (uint)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 31u)
        return as_float(sign | 0x7f800000u | (m << 13));
    if (e == 0u) { /* subnormal or zero: m * 2^-24, exact, a normal f32 */
        if (m == 0u)
            return as_float(sign);
        uint shift = 0u; /* normalise: leading one of m to bit 10 */
        while (!(m & 0x400u)) {
            m <<= 1;
            shift++;
        }
        return as_float(sign | ((113u - shift) << 23) | ((m & 0x3ffu) << 13));
    }
    return as_float(sign | ((e + 112u) << 23) | (m << 13));
}

static inline ushort cast_f32_to_f16(float f)
{
    uint u = as_uint(f), sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
    if (a > 0x7f800000u)
        return (ushort)(sign | 0x7e00u);
    if (a >= 0x477ff000u) /* 65520: halfway past the largest finite rounds to even = inf */
        return (ushort)(sign | 0x7c00u);
    if (a < 0x38800000u) { /* below 2^-14: a multiple of 2^-24 (1024 = the smallest normal) */
        uint e = a >> 23;
        if (e < 102u) /* below 2^-25: rounds to zero */
            return (ushort)sign;
        uint m = (a & 0x7fffffu) | 0x800000u, shift = 126u - e; /* 14 .. 24 */
        uint q = m >> shift, rem = m & ((1u << shift) - 1u), mid = 1u << (shift - 1u);
        q += (rem > mid || (rem == mid && (q & 1u))) ? 1u : 0u;
        return (ushort)(sign | q);
    }
    uint r = a - 0x38000000u; /* exponent rebased from 127 to 15 */
    r += 0xfffu + ((r >> 13) & 1u);
    return (ushort)(sign | (r >> 13));
}

/* i32 to f32 rounded to odd (toward zero, then the last bit set when inexact): a later rounding
 * to 8 or 11 bits is then the correctly rounded result of the integer. */
static inline float cast_i32_odd(int x)
{
    float f = convert_float_rtz(x);
    return convert_int_rtz(f) != x ? as_float(as_uint(f) | 1u) : f;
}

static inline float cast_load(src_t v)
{
#if SRC == T_F32
    return as_float(v);
#elif SRC == T_F16
    return cast_f16_to_f32(v);
#elif SRC == T_BF16
    return clt_bf16_to_f32(v);
#else
    return (DST == T_F32) ? convert_float_rte(as_int(v)) : cast_i32_odd(as_int(v));
#endif
}

static inline dst_t cast_store(float f)
{
#if DST == T_F32
    return as_uint(f);
#elif DST == T_F16
    return cast_f32_to_f16(f);
#elif DST == T_BF16
    return clt_f32_to_bf16(f);
#else
    /* NaN -> 0 by its bits (OpenCL only says a saturated conversion "should" give 0) */
    return (as_uint(f) & 0x7fffffffu) > 0x7f800000u ? 0u : as_uint(convert_int_sat_rtz(f));
#endif
}

__kernel void cast(__global const src_t *src, ulong src_off, __global dst_t *dst, ulong dst_off,
                   ulong count)
{
    for (ulong i = get_global_id(0); i < count; i += get_global_size(0)) {
#if SRC == DST
        dst[dst_off + i] = src[src_off + i];
#else
        dst[dst_off + i] = cast_store(cast_load(src[src_off + i]));
#endif
    }
}
