/* Tensor utilities: fill with a bit pattern, fill with uniform random numbers.
 *
 * Layout: a flat range of `count` elements starting `offset` elements into a buffer. Offsets and
 * counts are 64-bit (tensors can exceed 2^31 elements). Each kernel is a grid-stride loop, so any
 * global size works; the host sizes the grid to fill the device.
 *
 * -D contract: none required. CLT_WAVE / CLT_MAX_WG come from the base options and are unused here.
 */
#include "common/random.h"

/* lo + (hi - lo) * u must round the same way everywhere: no fused multiply-add. */
#pragma OPENCL FP_CONTRACT OFF

__kernel void tensor_fill_u8(__global uchar *data, ulong offset, ulong count, uint pattern)
{
    for (ulong i = get_global_id(0); i < count; i += get_global_size(0))
        data[offset + i] = (uchar)pattern;
}

__kernel void tensor_fill_u16(__global ushort *data, ulong offset, ulong count, uint pattern)
{
    for (ulong i = get_global_id(0); i < count; i += get_global_size(0))
        data[offset + i] = (ushort)pattern;
}

__kernel void tensor_fill_u32(__global uint *data, ulong offset, ulong count, uint pattern)
{
    for (ulong i = get_global_id(0); i < count; i += get_global_size(0))
        data[offset + i] = pattern;
}

__kernel void tensor_fill_uniform_f32(__global float *data, ulong offset, ulong count, ulong key,
                                      float lo, float hi)
{
    const float width = hi - lo;
    for (ulong i = get_global_id(0); i < count; i += get_global_size(0)) {
        float v = lo + width * clt_uniform01(key, i);
        /* Rounding can land on hi itself; the contract is [lo, hi). */
        data[offset + i] = v < hi ? v : nextafter(hi, lo);
    }
}
