/* Random numbers from Philox 4x32-10 (common/philox.h), and dropout.
 *
 * Element i of a stream (seed, offset) comes from Philox block i / 4. Uniform and dropout use its
 * word i % 4; normal uses both Box-Muller branches: words (x, y) give elements 4 b (cosine) and
 * 4 b + 1 (sine), words (z, w) elements 4 b + 2 and 4 b + 3 (one Philox call per 4 outputs, one
 * log and sqrt per 2). So element i's value depends only on (seed, offset, i): not on the grid,
 * the device or how the tensor is split among calls with offsets.
 * Data: f32 outputs, u8 dropout masks (1 = kept); 64-bit element offsets; grid-stride loops.
 * -D contract: RND_CPU_W (8), set for CPU devices under every profile: adds random_normal_cpu (8
 * blocks per item). RND_ILP (1, 2, 4, 8): blocks per item and grid pass of random_uniform and
 * random_normal (random_options.h: 4 on GPU-class devices, 1 on CPUs). Built with -cl-fp32-correctly-rounded-divide-sqrt everywhere: the normal's
 * only built-in is sqrt, so with it correctly rounded the bits are the same on every device.
 */
#include "common/philox.h"

#pragma OPENCL FP_CONTRACT OFF

/* Philox blocks per work item and grid pass in random_uniform / random_normal (b, b + grid, ...):
 * independent chains for the scheduler to interleave. */
#ifndef RND_ILP
#define RND_ILP 1
#endif

/* Each work item makes one Philox block and writes the 4 elements it covers, so no block is
 * computed twice. */

static inline uint word_of(uint4 w, uint lane)
{
    return lane == 0 ? w.x : lane == 1 ? w.y : lane == 2 ? w.z : w.w;
}

static inline float uniform_in(uint w, float lo, float hi, float width)
{
    float v = lo + width * clt_philox_u01(w);
    return v < hi ? v : nextafter(hi, lo); /* rounding may reach hi: keep [lo, hi) */
}

/* Block b of random_uniform: elements 4 b .. 4 b + 3 (fewer at the end of the stream). */
static inline void uniform_block(__global float *out, ulong out_off, ulong count, ulong seed,
                                 ulong offset, float lo, float hi, float width, int aligned, ulong b)
{
    uint4 w = clt_philox_block(seed, offset, b);
    ulong i = b << 2;
    if (i + 3 < count) {
        const float4 v = (float4)(uniform_in(w.x, lo, hi, width), uniform_in(w.y, lo, hi, width),
                                  uniform_in(w.z, lo, hi, width), uniform_in(w.w, lo, hi, width));
        if (aligned)
            ((__global float4 *)(out + out_off))[b] = v;
        else
            vstore4(v, 0, out + out_off + i);
    } else {
        for (uint l = 0; i + l < count; l++)
            out[out_off + i + l] = uniform_in(word_of(w, l), lo, hi, width);
    }
}

__kernel void random_uniform(__global float *out, ulong out_off, ulong count, ulong seed,
                             ulong offset, float lo, float hi)
{
    const float width = hi - lo;
    const ulong blocks = (count + 3) >> 2, grid = get_global_size(0);
    const int aligned = (out_off & 3) == 0; /* whole float4s: a vector pointer (see dropout) */
    for (ulong b0 = get_global_id(0); b0 < blocks; b0 += grid * RND_ILP) {
#pragma unroll
        for (int j = 0; j < RND_ILP; j++) {
            const ulong b = b0 + (ulong)j * grid;
            if (b < blocks)
                uniform_block(out, out_off, count, seed, offset, lo, hi, width, aligned, b);
        }
    }
}

/* ln x for the normal's u1 in [2^-24, 1], from + - * and fma only, on every device:
 * x = m 2^e with m in [sqrt(1/2), sqrt(2)), f = m - 1 (exact), ln m = f + f^2 q(f) with q a
 * degree-7 polynomial fitted for this library, e ln 2 in two parts; at most 1.14 ulp (all 2^24
 * inputs checked). Not the built-in log, whose last bit differs among devices (NVIDIA's, AMD's and
 * POCL's, even POCL's vector and scalar forms for a few inputs in a million), so that a seed gives
 * the same numbers everywhere, under every profile. Also cheaper where it matters: NVIDIA (sm_90)
 * ~17 instructions against ~27 for libdevice's logf, which handles zero, denormals, infinities and
 * NaN that u1 never is. One body for float and float8. */
#define RND_LOG_BODY(F, I, AS_I, AS_F, CONV_F)                                                    \
    {                                                                                             \
        I t = AS_I(x) - 0x3f3504f3;                                                               \
        F m = AS_F((t & 0x007fffff) + 0x3f3504f3), e = CONV_F(t >> 23);                           \
        F f = m - 1.0f; /* exact: m in [0.5, 2] */                                                \
        F q = (F)(8.7348595e-02f);                                                                \
        q = fma(q, f, (F)(-1.4307532e-01f));                                                      \
        q = fma(q, f, (F)(1.4917973e-01f));                                                       \
        q = fma(q, f, (F)(-1.6570507e-01f));                                                      \
        q = fma(q, f, (F)(1.9962072e-01f));                                                       \
        q = fma(q, f, (F)(-2.5001755e-01f));                                                      \
        q = fma(q, f, (F)(3.3339512e-01f));                                                       \
        q = fma(q, f, (F)(-4.9999991e-01f));                                                      \
        F r = fma(f * f, q, fma(e, (F)(1.428606820309417e-06f), f));                              \
        return fma(e, (F)(0.693145751953125f), r); /* e ln2_hi exact */                           \
    }
static inline float rnd_log(float x) RND_LOG_BODY(float, int, as_int, as_float, (float))

/* sin and cos of the angle 2 pi k / 2^24 of a 24-bit k (the normal's u2 = k / 2^24), from + - * and
 * fma only, so that scalar and vector forms give the same bits on every device. The reduction is
 * exact in integers: j = the nearest quarter turn (0 .. 4), k - j 2^22 in [-2^21, 2^21] times
 * pi / 2^23 gives t in [-pi/4, pi/4] (one rounding); minimax polynomials in t^2 (sin to t^7, cos to
 * t^8, fitted for this library) and a swap and sign flips by quadrant. At most 1.95 ulp and 1.1e-7
 * absolute (all 2^24 angles checked against double), within the 4 ulp OpenCL allows sinpi and cospi
 * at 2/5 of their cost (sm_90 with libdevice's sinpif and cospif: ~25 against ~63 instructions per
 * pair): one reduction and one t^2 serve both values, and no range checks. One body for uint /
 * float and uint8 / float8. */
#define RND_SINCOS_BODY(F, U, AS_F, AS_U, TO_F)                                                    \
    {                                                                                              \
        U j = (k + 0x200000u) >> 22;                                                               \
        F t = TO_F(k - (j << 22)) * 3.7450702e-07f; /* pi / 2^23 */                                \
        F z = t * t;                                                                               \
        F s = fma(t * z, fma(fma((F)(-1.9515285e-04f), z, (F)(8.3321610e-03f)), z,                 \
                             (F)(-1.6666655e-01f)), t);                                            \
        F c = fma(z * z, fma(fma((F)(2.4433166e-05f), z, (F)(-1.3887316e-03f)), z,                 \
                             (F)(4.1666646e-02f)), fma((F)(-0.5f), z, (F)(1.0f)));                 \
        U odd = (U)(0u) - (j & 1u); /* all ones: the quarter turn swaps sin and cos */             \
        U cb = AS_U(c), sb = AS_U(s);                                                              \
        *cos_out = AS_F(((sb & odd) | (cb & ~odd)) ^ (((j + 1u) & 2u) << 30));                     \
        *sin_out = AS_F(((cb & odd) | (sb & ~odd)) ^ ((j & 2u) << 30));                            \
    }

/* Box-Muller of words (a, b): r = stddev sqrt(-2 ln u1) with u1 = ((a >> 8) + 1) / 2^24 in (0, 1]
 * (log finite), then mean + r cos(2 pi u2) and mean + r sin(2 pi u2), u2 = (b >> 8) / 2^24. */
#define RND_PAIR_BODY(F, U, LOG, SINCOS, TO_F)                                                     \
    {                                                                                              \
        F u1 = TO_F((a >> 8) + 1u) * (1.0f / 16777216.0f);                                         \
        F r = stddev * sqrt(-2.0f * LOG(u1));                                                      \
        F c, s;                                                                                    \
        SINCOS(b >> 8, &c, &s);                                                                    \
        *cos_out = fma(r, c, (F)(mean));                                                           \
        *sin_out = fma(r, s, (F)(mean));                                                           \
    }

#define RND_I2F(v) ((float)as_int(v)) /* k - j 2^22 may wrap below 0 */
#define RND_I2F8(v) convert_float8(as_int8(v))

static inline void rnd_sincos(uint k, float *cos_out, float *sin_out)
    RND_SINCOS_BODY(float, uint, as_float, as_uint, RND_I2F)

static inline void normal_pair(uint a, uint b, float mean, float stddev, float *cos_out,
                               float *sin_out)
    RND_PAIR_BODY(float, uint, rnd_log, rnd_sincos, (float))

/* Block b of random_normal gives elements 4 b .. 4 b + 3: (cos, sin) of words (x, y), then of
 * words (z, w). */
static inline void normal_block(__global float *out, ulong out_off, ulong count, ulong seed,
                                ulong offset, float mean, float stddev, int aligned, ulong b)
{
    uint4 w = clt_philox_block(seed, offset, b);
    float c0, s0, c1, s1;
    normal_pair(w.x, w.y, mean, stddev, &c0, &s0);
    normal_pair(w.z, w.w, mean, stddev, &c1, &s1);
    const float4 v = (float4)(c0, s0, c1, s1);
    const ulong i = b << 2;
    __global float *o = out + out_off;
    if (i + 3 < count) {
        if (aligned)
            ((__global float4 *)o)[b] = v;
        else
            vstore4(v, 0, o + i);
    } else { /* the last 1 .. 3 elements */
        o[i] = v.x;
        if (i + 1 < count)
            o[i + 1] = v.y;
        if (i + 2 < count)
            o[i + 2] = v.z;
    }
}

__kernel void random_normal(__global float *out, ulong out_off, ulong count, ulong seed,
                            ulong offset, float mean, float stddev)
{
    const ulong blocks = (count + 3) >> 2, grid = get_global_size(0);
    const int aligned = (out_off & 3) == 0; /* whole float4s: a vector pointer (see dropout) */
    for (ulong b0 = get_global_id(0); b0 < blocks; b0 += grid * RND_ILP) {
#pragma unroll
        for (int j = 0; j < RND_ILP; j++) {
            const ulong b = b0 + (ulong)j * grid;
            if (b < blocks)
                normal_block(out, out_off, count, seed, offset, mean, stddev, aligned, b);
        }
    }
}

#ifdef RND_CPU_W
#if RND_CPU_W != 8
#error "RND_CPU_W must be 8 (clt_philox_blocks8)"
#endif
/* CPU devices (POCL): random_normal with 8 Philox blocks (32 outputs) per work item in uint8 /
 * float8 lanes. POCL runs a work-group as a loop over its items and does not vectorise across them
 * here (the kernel's loop and bounds checks), so scalar code stays scalar (SLEEF's scalar logf was
 * 3/4 of the time of random_normal/16M when the kernel used it); in float8 lanes the Philox rounds,
 * the log and sin/cos polynomials and sqrt become SIMD instructions. The same bodies, so the same
 * operation order and words per element as random_normal: the same numbers (the tests compare the
 * two bit for bit). Items: ceil(blocks / 8). */
static inline float8 rnd_log8(float8 x)
    RND_LOG_BODY(float8, int8, as_int8, as_float8, convert_float8)

static inline void rnd_sincos8(uint8 k, float8 *cos_out, float8 *sin_out)
    RND_SINCOS_BODY(float8, uint8, as_float8, as_uint8, RND_I2F8)

static inline void normal_pair8(uint8 a, uint8 b, float mean, float stddev, float8 *cos_out,
                                float8 *sin_out)
    RND_PAIR_BODY(float8, uint8, rnd_log8, rnd_sincos8, convert_float8)

__kernel void random_normal_cpu(__global float *out, ulong out_off, ulong count, ulong seed,
                                ulong offset, float mean, float stddev)
{
    const ulong b0 = get_global_id(0) * 8, i0 = b0 << 2;
    if (i0 >= count)
        return;
    uint8 x, y, z, w;
    clt_philox_blocks8(seed, offset, b0, &x, &y, &z, &w);
    float8 c0, s0, c1, s1; /* lane l: elements 4 (b0 + l) + 0, 1 and 2, 3 */
    normal_pair8(x, y, mean, stddev, &c0, &s0);
    normal_pair8(z, w, mean, stddev, &c1, &s1);
    const uint16 pairs = (uint16)(0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15);
    float16 p0 = shuffle2(c0, s0, pairs), p1 = shuffle2(c1, s1, pairs); /* (cos, sin) by lane */
    float16 lo = shuffle2(p0, p1, (uint16)(0, 1, 16, 17, 2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23));
    float16 hi = shuffle2(p0, p1, (uint16)(8, 9, 24, 25, 10, 11, 26, 27, 12, 13, 28, 29, 14, 15,
                                           30, 31));
    __global float *o = out + out_off + i0;
    if (i0 + 32 <= count) {
        if ((out_off & 15) == 0) {
            ((__global float16 *)o)[0] = lo;
            ((__global float16 *)o)[1] = hi;
        } else {
            vstore16(lo, 0, o);
            vstore16(hi, 1, o);
        }
    } else {
        float t[32];
        vstore16(lo, 0, t);
        vstore16(hi, 1, t);
        for (uint l = 0; i0 + l < count; l++)
            o[l] = t[l];
    }
}
#endif

/* Dropout: keep element i when its uniform is >= p; kept elements are scaled by 1 / (1 - p).
 * A whole block's 4 elements move as one float4 load, one float4 store and one uchar4 mask store
 * (the scalar form issued 12 narrow accesses per block, each behind its own bounds check); the
 * last partial block goes element by element. Same words, comparisons and products: same bits. */
static inline int dropout_keep(uint w, float p) { return clt_philox_u01(w) >= p; }

__kernel void random_dropout(__global float *out, ulong out_off, __global const float *x,
                             ulong x_off, __global uchar *mask, ulong mask_off, ulong count,
                             ulong seed, ulong offset, float p, float scale)
{
    const ulong blocks = (count + 3) >> 2;
    /* offsets of whole float4 / uchar4: vector pointers (NVIDIA splits vload4 of a float * into
     * four scalar loads, since it cannot assume 16-byte alignment) */
    const int aligned = ((out_off | x_off | mask_off) & 3) == 0;
    for (ulong b = get_global_id(0); b < blocks; b += get_global_size(0)) {
        uint4 w = clt_philox_block(seed, offset, b);
        const ulong i = b << 2;
        if (i + 3 < count) {
            int4 keep = (int4)(dropout_keep(w.x, p), dropout_keep(w.y, p), dropout_keep(w.z, p),
                               dropout_keep(w.w, p));
            if (aligned) {
                float4 v = ((__global const float4 *)(x + x_off))[b] * scale;
                ((__global float4 *)(out + out_off))[b] = select((float4)(0.0f), v, keep != 0);
                ((__global uchar4 *)(mask + mask_off))[b] = convert_uchar4(keep);
            } else {
                float4 v = vload4(0, x + x_off + i) * scale;
                vstore4(select((float4)(0.0f), v, keep != 0), 0, out + out_off + i);
                vstore4(convert_uchar4(keep), 0, mask + mask_off + i);
            }
        } else {
#pragma unroll /* constant lanes: word_of with a variable lane became a stack array (PTX) */
            for (uint l = 0; l < 4; l++) {
                if (i + l < count) {
                    int keep = dropout_keep(word_of(w, l), p);
                    out[out_off + i + l] = keep ? x[x_off + i + l] * scale : 0.0f;
                    mask[mask_off + i + l] = (uchar)keep;
                }
            }
        }
    }
}

__kernel void random_dropout_backward(__global float *dx, ulong dx_off, __global const float *dy,
                                      ulong dy_off, __global const uchar *mask, ulong mask_off,
                                      ulong count, float scale)
{
    for (ulong i = get_global_id(0); i < count; i += get_global_size(0))
        dx[dx_off + i] = mask[mask_off + i] ? dy[dy_off + i] * scale : 0.0f;
}
