/* What the attention programs share (attention.cl, attention_tiled.cl): float4 row access to a
 * buffer plus an element offset (plain float4 pointers when ATT_ALIGNED says every offset is a
 * multiple of 4, else vload4/vstore4), the base-2 score constants, and the key-length clamp. */
#ifndef CLT_COMMON_ATTENTION_IO_H
#define CLT_COMMON_ATTENTION_IO_H

#if ATT_ALIGNED
#define LOAD4(p, off, idx) (((__global const float4 *)((p) + (off)))[idx])
#define STORE4(x, p, off, idx) (((__global float4 *)((p) + (off)))[idx] = (x))
#else
#define LOAD4(p, off, idx) vload4((idx), (p) + (off))
#define STORE4(x, p, off, idx) vstore4((x), (idx), (p) + (off))
#endif

#define LOG2E 1.4426950408889634f
#define LN2 0.6931471805599453f

/* Keys visible to batch b at all: key_len clamped to [0, sk], so a bad value never reads outside K
 * or V. */
static inline uint visible_keys(__global const int *key_len, ulong key_len_off, int has_len,
                                uint b, uint sk)
{
    if (!has_len)
        return sk;
    int n = key_len[key_len_off + b];
    return n < 0 ? 0u : (uint)n > sk ? sk : (uint)n;
}

#endif
