/* Random numbers from Philox 4x32-10 (common/philox.h), and dropout.
 *
 * Element i of a stream (seed, offset): uniform and dropout use word i % 4 of block i / 4; normal
 * uses words 2 (i % 2) and 2 (i % 2) + 1 of block i / 2 (Box-Muller, cosine branch only, so every
 * element has its own pair). So element i's value depends only on (seed, offset, i): not on the
 * grid, the device or how the tensor is split among calls with offsets.
 * Data: f32 outputs, u8 dropout masks (1 = kept); 64-bit element offsets; grid-stride loops.
 * -D contract: RND_CPU_W (8), set for CPU devices under every profile: adds random_normal_cpu (8
 * blocks per item) and makes both normal kernels use rnd_log.
 */
#include "common/philox.h"

#pragma OPENCL FP_CONTRACT OFF

/* Each work item makes one Philox block and writes the elements it covers (4 for uniform and
 * dropout, 2 for normal), so no block is computed twice. */

static inline uint word_of(uint4 w, uint lane)
{
    return lane == 0 ? w.x : lane == 1 ? w.y : lane == 2 ? w.z : w.w;
}

static inline float uniform_in(uint w, float lo, float hi, float width)
{
    float v = lo + width * clt_philox_u01(w);
    return v < hi ? v : nextafter(hi, lo); /* rounding may reach hi: keep [lo, hi) */
}

__kernel void random_uniform(__global float *out, ulong out_off, ulong count, ulong seed,
                             ulong offset, float lo, float hi)
{
    const float width = hi - lo;
    const ulong blocks = (count + 3) >> 2;
    for (ulong b = get_global_id(0); b < blocks; b += get_global_size(0)) {
        uint4 w = clt_philox_block(seed, offset, b);
        ulong i = b << 2;
        if (i + 3 < count) {
            vstore4((float4)(uniform_in(w.x, lo, hi, width), uniform_in(w.y, lo, hi, width),
                             uniform_in(w.z, lo, hi, width), uniform_in(w.w, lo, hi, width)),
                    0, out + out_off + i);
        } else {
            for (uint l = 0; i + l < count; l++)
                out[out_off + i + l] = uniform_in(word_of(w, l), lo, hi, width);
        }
    }
}

#ifdef RND_CPU_W
/* CPU devices: ln x for the normal's u1 in [2^-24, 1], from + - * / only: x = m 2^e with m in
 * [sqrt(1/2), sqrt(2)), ln m = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.1716, by its series to
 * s^9 (the rest is below 1e-9 relative), e ln 2 in two parts; at most 1.7 ulp (all 2^24 inputs
 * checked). Not the built-in log: POCL's vector and scalar logs (SLEEF) differ in the last bit for
 * a few inputs in a million, random_normal_cpu works on vectors and random_normal (the gfx902
 * profile on a CPU) on scalars; these operations round the same in either form, so both give the
 * same numbers. GPUs keep the built-in log (cheaper there: AMD has a log instruction). One body
 * for float and float8. */
#define RND_LOG_BODY(F, I, AS_I, AS_F, CONV_F)                                                     \
    {                                                                                              \
        I t = AS_I(x) - 0x3f3504f3;                                                                \
        F m = AS_F((t & 0x007fffff) + 0x3f3504f3), e = CONV_F(t >> 23);                            \
        F f = m - 1.0f; /* exact: m in [0.5, 2] */                                                 \
        F s = f / (2.0f + f), z = s * s;                                                           \
        F r = z * (0.6666666667f + z * (0.4f + z * (0.2857142857f + z * 0.2222222222f)));         \
        return e * 0.693145751953125f + (2.0f * s + s * r + e * 1.428606820309417e-06f);           \
    }
static inline float rnd_log(float x) RND_LOG_BODY(float, int, as_int, as_float, (float))
#define RND_LOG rnd_log
#else
#define RND_LOG log
#endif

static inline float box_muller(uint a, uint b)
{
    float u1 = (float)((a >> 8) + 1u) * (1.0f / 16777216.0f); /* (0, 1]: log is finite */
    float u2 = clt_philox_u01(b);
    return sqrt(-2.0f * RND_LOG(u1)) * cospi(2.0f * u2);
}

__kernel void random_normal(__global float *out, ulong out_off, ulong count, ulong seed,
                            ulong offset, float mean, float stddev)
{
    const ulong blocks = (count + 1) >> 1;
    for (ulong b = get_global_id(0); b < blocks; b += get_global_size(0)) {
        uint4 w = clt_philox_block(seed, offset, b);
        ulong i = b << 1;
        float2 z = (float2)(box_muller(w.x, w.y), box_muller(w.z, w.w));
        z = mean + stddev * z;
        if (i + 1 < count)
            vstore2(z, 0, out + out_off + i);
        else
            out[out_off + i] = z.x;
    }
}

#ifdef RND_CPU_W
#if RND_CPU_W != 8
#error "RND_CPU_W must be 8 (clt_philox_blocks8)"
#endif
/* CPU devices (POCL): random_normal with 8 Philox blocks (16 outputs) per work item in uint8 /
 * float8 lanes. POCL runs a work-group as a loop over its items and leaves scalar log / sqrt /
 * cospi calls scalar (SLEEF's scalar logf was 3/4 of the time of random_normal/16M); float8
 * operands reach SLEEF's vector functions instead, and the Philox rounds become SIMD multiplies.
 * Same formula, same operation order and the same words per element as random_normal, so the same
 * numbers (the tests compare the two bit for bit). Items: ceil(blocks / 8). */
static inline float8 rnd_log8(float8 x) RND_LOG_BODY(float8, int8, as_int8, as_float8, convert_float8)

static inline float8 box_muller8(uint8 a, uint8 b)
{
    float8 u1 = convert_float8((a >> 8) + 1u) * (1.0f / 16777216.0f);
    float8 u2 = convert_float8(b >> 8) * (1.0f / 16777216.0f);
    return sqrt(-2.0f * rnd_log8(u1)) * cospi(2.0f * u2);
}

__kernel void random_normal_cpu(__global float *out, ulong out_off, ulong count, ulong seed,
                                ulong offset, float mean, float stddev)
{
    const ulong b0 = get_global_id(0) * 8, i0 = b0 << 1;
    if (i0 >= count)
        return;
    uint8 x, y, z, w;
    clt_philox_blocks8(seed, offset, b0, &x, &y, &z, &w);
    /* element 2 b uses words (x, y) of block b, element 2 b + 1 words (z, w) */
    float8 even = mean + stddev * box_muller8(x, y), odd = mean + stddev * box_muller8(z, w);
    float16 v = shuffle2(even, odd, (uint16)(0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15));
    __global float *o = out + out_off + i0;
    if (i0 + 16 <= count) {
        if ((out_off & 15) == 0)
            *(__global float16 *)o = v;
        else
            vstore16(v, 0, o);
    } else {
        float t[16];
        vstore16(v, 0, t);
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
