/* CPU-device (WG 1) kernels of the norm and loss programs keep a row in explicit float8 lanes with
 * a scalar tail, because POCL leaves one work item's loop scalar. What they share: the lane sum in
 * a fixed order, and the sum of a run of n values (or of their squared distance to mean) added to
 * the caller's lane and tail accumulators. */
#ifndef CLT_COMMON_CPU_LANES_H
#define CLT_COMMON_CPU_LANES_H

static inline float lanes_hsum8(float8 v)
{
    float4 h = v.lo + v.hi;
    return (h.x + h.z) + (h.y + h.w);
}

/* a8 += the float8 blocks of r[0 .. n), a += the tail n % 8; of (v - mean)^2 when sq. */
static inline void lanes_sum_run(__global const float *r, ulong n, float mean, int sq, float8 *a8,
                                 float *a)
{
    const ulong n8 = n & ~(ulong)7;
    for (ulong j = 0; j < n8; j += 8) {
        float8 v = vload8(0, r + j);
        *a8 += sq ? (v - mean) * (v - mean) : v;
    }
    for (ulong j = n8; j < n; j++) {
        float v = r[j];
        *a += sq ? (v - mean) * (v - mean) : v;
    }
}

#endif
