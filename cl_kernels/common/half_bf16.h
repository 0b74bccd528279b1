/* 16-bit storage types for kernels that compute in f32: f16 (IEEE binary16) through the core
 * vload_half / vstore_half_rte (no cl_khr_fp16 needed) and bf16 (the top half of an f32) through bit
 * shifts. Conversions to 16 bits round to nearest, ties to even; a NaN stays a NaN (bf16: quiet,
 * sign kept, so a NaN whose payload sits in the low 16 bits never becomes an infinity). */
#ifndef CLT_HALF_BF16_H
#define CLT_HALF_BF16_H

static inline float clt_bf16_to_f32(ushort b) { return as_float((uint)b << 16); }

static inline ushort clt_f32_to_bf16(float f)
{
    uint u = as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (ushort)((u >> 16) | 0x0040u);
    u += 0x7fffu + ((u >> 16) & 1u); /* ties to even; overflow carries into inf correctly */
    return (ushort)(u >> 16);
}

#endif
