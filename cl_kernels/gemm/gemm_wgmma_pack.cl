/* The operands of the wgmma GEMM kernels (gemm_wgmma.cl, gemm_wgmma_bulk.cl; src/ops/gemm/gemm_wgmma.c)
 * packed ahead of the product: an operand into a K-contiguous, zero-padded copy, f32 rounded to TF32
 * (nearest, ties away, as cuBLAS's TF32 mode), 16-bit values copied as they are: P[r][k] = op(X)[r][k] for
 * r < rows, k < K, else 0; rows_p a multiple of the tile, Kp of 32 (and of BK). A becomes [Mp][Kp], B (as
 * op(B)^T) [Np][Kp]. wgmma reads TF32 operands only K-major, so a transpose is needed for half the layouts
 * anyway; done here once, with the rounding and the padding, it leaves the main loop nothing to check and
 * nothing to convert (16-bit operands take the same path). Two kernels: gemm_wgmma_pack transposes through
 * local memory (any layout), gemm_wgmma_pack_rows copies 16-byte chunks of operands already K-contiguous.
 * A program of its own: no wgmma instruction here, so it builds as any OpenCL program (not through
 * src/program/sm90a_build.c), once per operand type and layout instead of once per GEMM variant.
 * -D contract: IN16 (0: f32, else 16-bit values), PACK_TILED (gemm_wgmma_bulk.cl's slice order) with BK
 * (elements a slice row). */
#ifndef IN16
#define IN16 0
#endif
#ifndef PACK_TILED
#define PACK_TILED 0
#endif

#if IN16
typedef ushort pack_t; /* 16-bit values are copied as bits */
typedef uint4 chunk_t; /* 16 bytes, moved as 32-bit words (one 16-byte access) */
#define PACK_VALUE(x, lo) (x)
#define CHUNK_LOAD(p) as_uint4(vload8(0, p))
#else
typedef float pack_t;
typedef float4 chunk_t;
#define PACK_VALUE(x, lo) ((lo) ? wgmma_tf32_rest(x) : wgmma_tf32(x))
#define CHUNK_LOAD(p) vload4(0, p)
/* Round to TF32, nearest, ties away from zero (cuBLAS's TF32 rounding): add half a TF32 unit and clear the
 * 13 dropped bits; Inf and NaN (exponent all ones) pass unchanged. */
static inline float wgmma_tf32(float x)
{
    uint u = as_uint(x);
    uint finite = (u & 0x7f800000u) ^ 0x7f800000u;
    return finite ? as_float((u + 0x1000u) & 0xffffe000u) : x;
}

/* 3xTF32's residual x - tf32(x), exact in f32 (fed as it is: the tensor cores truncate it, 2^-22 of x, as
 * gemm_mma.cl's split); 0 for Inf and NaN, whose high part carries them. */
static inline float wgmma_tf32_rest(float x)
{
    uint finite = (as_uint(x) & 0x7f800000u) ^ 0x7f800000u;
    return finite ? x - wgmma_tf32(x) : 0.0f;
}
#endif

#define ESZ (IN16 ? 2 : 4)
#define CHUNK (16 / ESZ) /* elements in 16 bytes */

/* A chunk's elements to and from private scalars (no union: with one, 16-bit values went through the
 * stack on NVIDIA, by clang + ptxas) */
#if IN16
static inline chunk_t chunk_join(const pack_t *e)
{
    return (uint4)(e[0] | (uint)e[1] << 16, e[2] | (uint)e[3] << 16, e[4] | (uint)e[5] << 16, e[6] | (uint)e[7] << 16);
}

static inline void chunk_split(chunk_t v, pack_t *e)
{
    e[0] = (ushort)v.x, e[1] = (ushort)(v.x >> 16), e[2] = (ushort)v.y, e[3] = (ushort)(v.y >> 16);
    e[4] = (ushort)v.z, e[5] = (ushort)(v.z >> 16), e[6] = (ushort)v.w, e[7] = (ushort)(v.w >> 16);
}
#else
static inline chunk_t chunk_join(const pack_t *e)
{
    return (float4)(e[0], e[1], e[2], e[3]);
}

static inline void chunk_split(chunk_t v, pack_t *e)
{
    e[0] = v.x, e[1] = v.y, e[2] = v.z, e[3] = v.w;
}
#endif

/* e = the avail (<= CHUNK; 0 when the chunk lies outside) first elements of x, the rest 0: one 16-byte load
 * for a whole chunk where aligned says x allows it. x is dereferenced only where avail > 0. */
static inline void chunk_read(__global const pack_t *x, long avail, int aligned, pack_t *e)
{
    for (int j = 0; j < CHUNK; j++)
        e[j] = (pack_t)0;
    if (avail >= CHUNK)
        chunk_split(aligned ? *(__global const chunk_t *)x : CHUNK_LOAD(x), e);
    else
        for (int j = 0; j < CHUNK; j++) /* constant indices: e stays in registers */
            if (j < avail)
                e[j] = x[j];
}

#if PACK_TILED
#define ROWB (BK * ESZ)
#include "common/wgmma_layout.h"

/* The layout gemm_wgmma_bulk.cl copies whole slices of: block (r / 128, k / BK) holds rows r & ~127 ..
 * + 127 x BK elements as one 128 x ROWB local tile (swizzled), at ((r / 128) KS + k / BK) 128 BK elements
 * (KS = ldp / BK slices a row block); rows_p a multiple of 128, ldp of BK. */
static inline ulong pack_at(long r, long k, long ldp)
{
    const long rr = r & 127, e = k % BK;
    return ((ulong)((r >> 7) * (ldp / BK) + k / BK) * 128 + (ulong)rr) * BK +
           (ulong)(wgmma_chunk((int)(e / EPC), (int)rr) * EPC + e % EPC);
}
#else
static inline ulong pack_at(long r, long k, long ldp)
{
    return (ulong)(r * ldp + k);
}
#endif

/* P[p_off + ...][b][r][s Kp + k] (rows_p x segs Kp per batch, batch stride rows_p segs Kp) = X(r, k) inside
 * rows x K, else 0, for each segment s < segs: f32 rounded to TF32, or (bit s of lo_mask) the residual
 * that rounding left; X(r, k) = trans ? X[k * ld + r] : X[r * ld + k] after off + b * stride. Segments
 * make 3xTF32 one TF32 product over 3 Kp: [A_lo | A_hi | A_hi] times [B_hi ; B_lo ; B_hi] is
 * A_lo B_hi + A_hi B_lo + A_hi B_hi, small terms first as gemm_mma.cl sums them. 32 x 32 tiles through
 * local memory, so both sides stay coalesced for either layout. Grid (segs Kp, rows_p / 4, batch), local
 * (32, 8, 1); Kp a multiple of 32. PACK_TILED: the same values in pack_at's tiled order. */
__kernel __attribute__((reqd_work_group_size(32, 8, 1))) void
gemm_wgmma_pack(__global const pack_t *X, ulong off, ulong stride, long ld, int trans, int rows, int K,
                __global pack_t *P, ulong p_off, int Kp, int rows_p, int segs, int lo_mask)
{
    __local pack_t t[32][33];
    const int tx = get_local_id(0), ty = get_local_id(1);
    const int seg = (int)(get_group_id(0) * 32 / (size_t)Kp), lo = (lo_mask >> seg) & 1;
    const long r0 = (long)get_group_id(1) * 32, k0 = (long)get_group_id(0) * 32 - (long)seg * Kp;
    const long ldp = (long)segs * Kp;
    const ulong b = get_group_id(2);
    X += off + b * stride;
    P += p_off + b * (ulong)rows_p * (ulong)ldp;
    for (int i = ty; i < 32; i += 8) {
        if (trans) { /* tile row i is k, column tx is r: reads along r */
            long k = k0 + i, r = r0 + tx;
            t[tx][i] = k < K && r < rows ? X[k * ld + r] : (pack_t)0;
        } else {
            long r = r0 + i, k = k0 + tx;
            t[i][tx] = k < K && r < rows ? X[r * ld + k] : (pack_t)0;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = ty; i < 32; i += 8)
        P[pack_at(r0 + i, (long)seg * Kp + k0 + tx, ldp)] = PACK_VALUE(t[i][tx], lo);
}

/* The same result for an operand that is already K-contiguous (trans 0), in 16-byte chunks: no local
 * memory, each item reads one chunk of a row (one 16-byte load where aligned says the source allows it:
 * off, ld and stride multiples of CHUNK) and writes it whole, since the tiled order keeps 16-byte
 * chunks together (its swizzle moves whole chunks). Grid (segs Kp / CHUNK, rows_p, batch), local (4, 64, 1): a
 * warp covers 8 rows x 64 bytes, whole 32-byte sectors on both sides. */
__kernel __attribute__((reqd_work_group_size(4, 64, 1))) void
gemm_wgmma_pack_rows(__global const pack_t *X, ulong off, ulong stride, long ld, int aligned, int rows, int K,
                     __global pack_t *P, ulong p_off, int Kp, int rows_p, int segs, int lo_mask)
{
    const int kc = (int)get_global_id(0) * CHUNK, seg = kc / Kp, lo = (lo_mask >> seg) & 1;
    const long r = (long)get_global_id(1), k = kc - (long)seg * Kp;
    const long ldp = (long)segs * Kp;
    const ulong b = get_global_id(2);
    P += p_off + b * (ulong)rows_p * (ulong)ldp;
    pack_t e[CHUNK];
    /* X + ... is formed only for rows it has (a pointer outside the buffer is undefined) */
    chunk_read(r < rows ? X + off + b * stride + r * ld + k : X, r < rows ? K - k : 0, aligned, e);
    for (int j = 0; j < CHUNK; j++)
        e[j] = PACK_VALUE(e[j], lo);
    *(__global chunk_t *)(P + pack_at(r, kc, ldp)) = chunk_join(e);
}

/* The same result for an operand stored transposed (trans 1: X(r, k) = X[k ld + r]), moved in 16-byte
 * chunks on both sides: each of 256 items loads CHUNK consecutive r of one k (one 16-byte load where
 * aligned says the source allows it), the tile turns in local memory, and each item stores CHUNK
 * consecutive k of one row as one 16-byte chunk. A tile is 32 k x TR rows (TR = 8 CHUNK: 32 for f32, 64
 * for 16-bit values); the local rows are padded by one word (f32: no bank conflicts either way). Grid
 * (segs Kp / 32 x 256, rows_p / TR, batch), local (256, 1, 1). */
#define TR (8 * CHUNK)
__kernel __attribute__((reqd_work_group_size(256, 1, 1))) void
gemm_wgmma_pack_trans(__global const pack_t *X, ulong off, ulong stride, long ld, int aligned, int rows, int K,
                      __global pack_t *P, ulong p_off, int Kp, int rows_p, int segs, int lo_mask)
{
    __local pack_t t[32][TR + 4 / ESZ];
    const int tid = (int)get_local_id(0);
    const int seg = (int)(get_group_id(0) * 32 / (size_t)Kp), lo = (lo_mask >> seg) & 1;
    const long k0 = (long)get_group_id(0) * 32 - (long)seg * Kp, r0 = (long)get_group_id(1) * TR;
    const long ldp = (long)segs * Kp;
    const ulong b = get_group_id(2);
    P += p_off + b * (ulong)rows_p * (ulong)ldp;
    pack_t e[CHUNK];
    { /* load: item (kq, rc) takes rows r0 + rc CHUNK ... of k0 + kq */
        const int kq = tid / (TR / CHUNK), rc = tid % (TR / CHUNK) * CHUNK;
        const long k = k0 + kq, r = r0 + rc;
        /* X + ... is formed only for k it has */
        chunk_read(k < K ? X + off + b * stride + k * ld + r : X, k < K ? rows - r : 0, aligned, e);
        for (int j = 0; j < CHUNK; j++)
            t[kq][rc + j] = e[j];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    { /* store: item (r, kc) writes k0 + kc CHUNK ... of row r0 + r */
        const int r = tid / (32 / CHUNK), kc = tid % (32 / CHUNK) * CHUNK;
        for (int j = 0; j < CHUNK; j++)
            e[j] = PACK_VALUE(t[kc + j][r], lo);
        *(__global chunk_t *)(P + pack_at(r0 + r, (long)seg * Kp + k0 + kc, ldp)) = chunk_join(e);
    }
}
