/* Counter-based random numbers: element i of a stream with key k is mix(k + (i + 1) * GOLDEN), the
 * splitmix64 output function. Integer-only, so every device produces the same bits. */
#ifndef CLT_COMMON_RANDOM_H
#define CLT_COMMON_RANDOM_H

#define CLT_GOLDEN_GAMMA 0x9E3779B97F4A7C15UL

static inline ulong clt_mix64(ulong z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9UL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBUL;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1) with 24 random bits: exactly representable as a float. */
static inline float clt_uniform01(ulong key, ulong i)
{
    ulong z = clt_mix64(key + (i + 1UL) * CLT_GOLDEN_GAMMA);
    return (float)(uint)(z >> 40) * (1.0f / 16777216.0f);
}

#endif
