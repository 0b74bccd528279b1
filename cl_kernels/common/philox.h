/* Philox 4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011): a
 * counter-based generator. A 128-bit counter and a 64-bit key give four 32-bit words; the same
 * (counter, key) gives the same words on every device, so results do not depend on the grid.
 * Integer-only. */
#ifndef CLT_COMMON_PHILOX_H
#define CLT_COMMON_PHILOX_H

#define CLT_PHILOX_M0 0xD2511F53u
#define CLT_PHILOX_M1 0xCD9E8D57u
#define CLT_PHILOX_W0 0x9E3779B9u
#define CLT_PHILOX_W1 0xBB67AE85u

static inline uint4 clt_philox_round(uint4 c, uint2 k)
{
    /* A 32 x 32 -> 64-bit product rather than mul_hi: POCL's vectoriser turns it into SIMD
     * multiplies, while mul_hi stayed a scalar builtin call (uniform 16M on 2 cores: 1.14 s -> 0.39 s). */
    ulong p0 = (ulong)CLT_PHILOX_M0 * c.x, p1 = (ulong)CLT_PHILOX_M1 * c.z;
    return (uint4)((uint)(p1 >> 32) ^ c.y ^ k.x, (uint)p1, (uint)(p0 >> 32) ^ c.w ^ k.y, (uint)p0);
}

static inline uint4 clt_philox4x32_10(uint4 c, uint2 k)
{
    c = clt_philox_round(c, k);
#pragma unroll
    for (int r = 1; r < 10; r++) {
        k += (uint2)(CLT_PHILOX_W0, CLT_PHILOX_W1);
        c = clt_philox_round(c, k);
    }
    return c;
}

/* The four words of block `block` of the stream (seed, offset): counter = (block, offset) as two
 * 64-bit halves, low word first; key = seed. */
static inline uint4 clt_philox_block(ulong seed, ulong offset, ulong block)
{
    uint4 c = (uint4)((uint)block, (uint)(block >> 32), (uint)offset, (uint)(offset >> 32));
    return clt_philox4x32_10(c, (uint2)((uint)seed, (uint)(seed >> 32)));
}

/* Philox of 8 consecutive blocks block0 .. block0 + 7 of the stream (seed, offset) at once, lane l
 * of *x .. *w holding the words of block block0 + l: the same words as clt_philox_block, computed
 * lane-parallel so that a CPU compiler turns the rounds into SIMD (POCL does not vectorise the
 * scalar form across work items when the kernel around it has a loop or a bounds check). */
static inline void clt_philox_blocks8(ulong seed, ulong offset, ulong block0, uint8 *x, uint8 *y,
                                      uint8 *z, uint8 *w)
{
    const ulong8 b = (ulong8)(block0) + (ulong8)(0, 1, 2, 3, 4, 5, 6, 7);
    uint8 c0 = convert_uint8(b), c1 = convert_uint8(b >> 32);
    uint8 c2 = (uint8)((uint)offset), c3 = (uint8)((uint)(offset >> 32));
    uint2 k = (uint2)((uint)seed, (uint)(seed >> 32));
#pragma unroll
    for (int r = 0; r < 10; r++) {
        if (r > 0)
            k += (uint2)(CLT_PHILOX_W0, CLT_PHILOX_W1);
        /* clt_philox_round, lane by lane */
        ulong8 p0 = (ulong8)(CLT_PHILOX_M0) * convert_ulong8(c0);
        ulong8 p1 = (ulong8)(CLT_PHILOX_M1) * convert_ulong8(c2);
        uint8 n0 = convert_uint8(p1 >> 32) ^ c1 ^ (uint8)(k.x);
        uint8 n2 = convert_uint8(p0 >> 32) ^ c3 ^ (uint8)(k.y);
        c1 = convert_uint8(p1);
        c3 = convert_uint8(p0);
        c0 = n0;
        c2 = n2;
    }
    *x = c0;
    *y = c1;
    *z = c2;
    *w = c3;
}

/* The top 24 bits of a word as a float in [0, 1) (exact). */
static inline float clt_philox_u01(uint w) { return (float)(w >> 8) * (1.0f / 16777216.0f); }

#endif
