/* Random numbers from Philox 4x32-10 (common/philox.h), and dropout.
 *
 * Element i of a stream (seed, offset): uniform and dropout use word i % 4 of block i / 4; normal
 * uses words 2 (i % 2) and 2 (i % 2) + 1 of block i / 2 (Box-Muller, cosine branch only, so every
 * element has its own pair). So element i's value depends only on (seed, offset, i): not on the
 * grid, the device or how the tensor is split among calls with offsets.
 * Data: f32 outputs, u8 dropout masks (1 = kept); 64-bit element offsets; grid-stride loops.
 * -D contract: none.
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

static inline float box_muller(uint a, uint b)
{
    float u1 = (float)((a >> 8) + 1u) * (1.0f / 16777216.0f); /* (0, 1]: log is finite */
    float u2 = clt_philox_u01(b);
    return sqrt(-2.0f * log(u1)) * cospi(2.0f * u2);
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

/* Dropout: keep element i when its uniform is >= p; kept elements are scaled by 1 / (1 - p). */
__kernel void random_dropout(__global float *out, ulong out_off, __global const float *x,
                             ulong x_off, __global uchar *mask, ulong mask_off, ulong count,
                             ulong seed, ulong offset, float p, float scale)
{
    const ulong blocks = (count + 3) >> 2;
    for (ulong b = get_global_id(0); b < blocks; b += get_global_size(0)) {
        uint4 w = clt_philox_block(seed, offset, b);
        for (uint l = 0; l < 4; l++) {
            ulong i = (b << 2) + l;
            if (i < count) {
                int keep = clt_philox_u01(word_of(w, l)) >= p;
                out[out_off + i] = keep ? x[x_off + i] * scale : 0.0f;
                mask[mask_off + i] = (uchar)keep;
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
