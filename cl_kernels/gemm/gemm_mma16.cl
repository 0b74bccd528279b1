/* GEMM on NVIDIA tensor cores with 16-bit operands: C = act(alpha * op(A) op(B) + beta * C + bias) +
 * residual, A and B f16 (-DBF16=0) or bf16 (-DBF16=1) storage, C f32 or the operands' 16-bit type
 * (OUT16 of common/gemm_common.h, rounded to nearest even once, after the epilogue), bias and residual
 * f32, products exact and accumulated in f32 (mma.sync.m16n8k16). NVIDIA only (compute capability >= 8.0).
 *
 * The frame is gemm_mma.cl's (common/mma_pipeline.h: 128 x 128 or 64 x 128 tiles of 64 x 64 warps,
 * cp.async ring, fused epilogue); a k slice is 32 halves. Fragments: lane (g, q) is given physical k
 * 8q..8q+7 of the slice, step s of the two k16 steps taking 8q + 4s + {0, 1} as the mma's k pair
 * {2q, 2q + 1} and 8q + 4s + {2, 3} as {2q + 8, 2q + 9}. For a k-contiguous operand each fragment
 * register is then one 32-bit word of a 128-bit local load, as the mma wants it (lower k in the low
 * half). For a k-major operand the pair lies in two rows: the lane loads its 8 neighbouring columns
 * (n-tile j's column g is physical column 8g + j, as in gemm_mma.cl) of 4 rows per step and packs
 * halves of two rows into each register.
 *
 * -D contract: BF16 (0/1), WARPS_M, WARPS_N, STAGES, plus IDX64, ACT and OUT16 of common/gemm_common.h.
 * A/B + offset, ld and batch stride must be multiples of 8 elements (16-byte copies; the host
 * checks). */
#ifndef BF16
#define BF16 1
#endif
#ifndef WARPS_M
#define WARPS_M 2
#endif
#ifndef WARPS_N
#define WARPS_N 2
#endif
#ifndef STAGES
#define STAGES 3
#endif

#define CPW 8
#define WG (32 * WARPS_M * WARPS_N)
#define BM (64 * WARPS_M)
#define BN (64 * WARPS_N)
#define BK 32
#define MI 4
#define NJ 8
#define MMA_ET ushort
#define MMA_EPC 8
#include "common/mma_pipeline.h"

#define GEMM16_ARGS                                                                                \
    __global const ushort *A, __global const ushort *B, __global gemm_out_t *C,                   \
        __global const float *bias, __global const float *R, ulong4 offs, ulong4 strides,         \
        long4 lds, int4 dims, float4 sc

static inline __attribute__((always_inline)) void mma_16816(float *c, uint a0, uint a1, uint a2, uint a3, uint b0,
                                                            uint b1)
{
#if BF16
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                 "{%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
#else
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                 "{%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
#endif
}

/* Half h (0..7) of v, the halves of rows lo and hi packed: lo's in bits 0-15. */
static inline __attribute__((always_inline)) uint mma_pack(uint4 lo, uint4 hi, int h)
{
    uint wl[4] = {lo.x, lo.y, lo.z, lo.w}, wh[4] = {hi.x, hi.y, hi.z, hi.w};
    uint a = wl[h >> 1], b = wh[h >> 1];
    return (h & 1) ? (a >> 16) | (b & 0xffff0000u) : (a & 0xffffu) | (b << 16);
}

/* The lane's 8 columns (16 bytes) of row k of a k-major [BK][ROWS] tile, from column c0 on. */
static inline __attribute__((always_inline)) uint4 mma_kmajor8(__local const ushort *t, int ROWS, int k, int c0)
{
    return *(__local const uint4 *)(t + k * ROWS + (((c0 >> 3) ^ mma_swz(k)) << 3));
}

static inline __attribute__((always_inline)) void
gemm_mma16_body(GEMM16_ARGS, const int TA, const int TB, __local ushort *As, __local ushort *Bs)
{
    GEMM_SETUP(get_group_id(2));
    MMA_WARP_SETUP();
    for (int t = 0; t < slices; t++) {
        MMA_NEXT_SLICE(t);
        __local const ushort *as = As + (t % STAGES) * BM * BK;
        __local const ushort *bs = Bs + (t % STAGES) * BN * BK;

        /* fa[i][0..3]: mma row g of m-tile i, words 2s / 2s + 1 = step s's a0 / a2; fa[i][4..7]:
         * row g + 8 (a1 / a3). */
        uint fa[MI][8];
        if (a_kc) {
#pragma unroll
            for (int i = 0; i < MI; i++) {
                uint4 lo = *(__local const uint4 *)(as + (wm0 + i * 16 + g) * BK + q * 8);
                uint4 hi = *(__local const uint4 *)(as + (wm0 + i * 16 + g + 8) * BK + q * 8);
                fa[i][0] = lo.x; fa[i][1] = lo.y; fa[i][2] = lo.z; fa[i][3] = lo.w;
                fa[i][4] = hi.x; fa[i][5] = hi.y; fa[i][6] = hi.z; fa[i][7] = hi.w;
            }
        } else {
            /* m-contiguous: m-tile i's row g is physical m wm0 + 8g + 2i, row g + 8 is + 1 */
#pragma unroll
            for (int s = 0; s < 2; s++) {
                uint4 r0 = mma_kmajor8(as, BM, 8 * q + 4 * s, wm0 + 8 * g);
                uint4 r1 = mma_kmajor8(as, BM, 8 * q + 4 * s + 1, wm0 + 8 * g);
                uint4 r2 = mma_kmajor8(as, BM, 8 * q + 4 * s + 2, wm0 + 8 * g);
                uint4 r3 = mma_kmajor8(as, BM, 8 * q + 4 * s + 3, wm0 + 8 * g);
#pragma unroll
                for (int i = 0; i < MI; i++) {
                    fa[i][2 * s] = mma_pack(r0, r1, 2 * i);
                    fa[i][4 + 2 * s] = mma_pack(r0, r1, 2 * i + 1);
                    fa[i][2 * s + 1] = mma_pack(r2, r3, 2 * i);
                    fa[i][4 + 2 * s + 1] = mma_pack(r2, r3, 2 * i + 1);
                }
            }
        }
        /* fb[j][2s] / fb[j][2s + 1]: step s's b0 / b1 of n-tile j (mma column g). */
        uint fb[NJ][4];
        if (b_kc) {
#pragma unroll
            for (int j = 0; j < NJ; j++) {
                uint4 v = *(__local const uint4 *)(bs + (wn0 + j * 8 + g) * BK + q * 8);
                fb[j][0] = v.x; fb[j][1] = v.y; fb[j][2] = v.z; fb[j][3] = v.w;
            }
        } else {
#pragma unroll
            for (int s = 0; s < 2; s++) {
                uint4 r0 = mma_kmajor8(bs, BN, 8 * q + 4 * s, wn0 + 8 * g);
                uint4 r1 = mma_kmajor8(bs, BN, 8 * q + 4 * s + 1, wn0 + 8 * g);
                uint4 r2 = mma_kmajor8(bs, BN, 8 * q + 4 * s + 2, wn0 + 8 * g);
                uint4 r3 = mma_kmajor8(bs, BN, 8 * q + 4 * s + 3, wn0 + 8 * g);
#pragma unroll
                for (int j = 0; j < NJ; j++) {
                    fb[j][2 * s] = mma_pack(r0, r1, j);
                    fb[j][2 * s + 1] = mma_pack(r2, r3, j);
                }
            }
        }

#pragma unroll
        for (int s = 0; s < 2; s++)
#pragma unroll
            for (int i = 0; i < MI; i++)
#pragma unroll
                for (int j = 0; j < NJ; j++)
                    mma_16816(acc[i][j], fa[i][2 * s], fa[i][4 + 2 * s], fa[i][2 * s + 1],
                              fa[i][4 + 2 * s + 1], fb[j][2 * s], fb[j][2 * s + 1]);
    }
    mma_drain();
    mma_store_acc(C, ldc, &epi, acc, M, N, m0 + wm0, n0 + wn0, a_kc, b_kc, g, q);
}

#define GEMM_MMA16_KERNEL(name, ta, tb)                                                            \
    __kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void name(GEMM16_ARGS)                \
    {                                                                                              \
        __local ushort As[STAGES * BM * BK] __attribute__((aligned(16)));                          \
        __local ushort Bs[STAGES * BN * BK] __attribute__((aligned(16)));                          \
        gemm_mma16_body(A, B, C, bias, R, offs, strides, lds, dims, sc, ta, tb, As, Bs);           \
    }

GEMM_MMA16_KERNEL(gemm_mma16_nn, 0, 0)
GEMM_MMA16_KERNEL(gemm_mma16_nt, 0, 1)
GEMM_MMA16_KERNEL(gemm_mma16_tn, 1, 0)
GEMM_MMA16_KERNEL(gemm_mma16_tt, 1, 1)
