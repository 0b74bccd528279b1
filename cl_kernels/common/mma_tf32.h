/* The TF32 tensor-core arithmetic of the mma.sync kernels (gemm/gemm_mma.cl, conv/conv2d_mma.cl): the
 * rounding of f32 operands to TF32 (or their 3xTF32 split), the m16n8k8 mma, and the products of one
 * staged k slice of 16 into a warp's 64 x 64 accumulators, read from the local tiles that
 * common/mma_pipeline.h's layout describes.
 *
 * Why the fragments are cheap to read: the mma's sum over k does not care in which order the 16 k of
 * a slice are fed, nor does C care which physical column an mma column holds, as long as A, B and
 * the store agree. So lane (g = lane / 4, q = lane % 4) is given physical k 4q..4q+3 of the slice
 * (step s of the two k8 steps takes 4q + 2s as the mma's k = q and 4q + 2s + 1 as k = q + 4), and,
 * for an operand stored m- or n-contiguous, the 8 rows/columns it needs across the warp's tiles are
 * made physically adjacent (n-tile j's mma column g is physical column 8g + j). Every fragment is then
 * read with 128-bit local loads: 16 loads feed 64 mma per warp and slice. Local tiles stored
 * k-major ([16][BM] or [16][BN]) XOR-swizzle their 16-byte chunks by row so the 8 lanes of a load
 * phase hit 8 different banks; k-contiguous tiles ([BM][16]) need no swizzle.
 *
 * Rounding (-DROUND), measured on the H200 at 8192^3 (NN, 128 x 128 tiles):
 *   0 feeds f32 bits: the hardware ignores the low 13 mantissa bits (truncation, 2.8x cuBLAS TF32's
 *     error); diagnostics only.
 *   1 rounds every operand to TF32, nearest, ties away, with cvt.rna (what cuBLAS's TF32 mode does):
 *     97 TFLOP/s.
 *   4 the same bits with integer ops (mma_tf32_add): 117-122 TFLOP/s; the TF32 default. (A bare
 *     integer add without the Inf/NaN guard ran 138 but turns Inf into NaN; rounding each element
 *     once in local memory instead of per fragment ran 88: both rejected.)
 *   3 / 5 are 3xTF32: each operand split into a TF32 high part and a residual, three mma per
 *     product (lo*hi + hi*lo + hi*hi, small terms first): fp32-level accuracy on tensor cores;
 *     3 splits with cvt.rna, 5 with integer ops (61 TFLOP/s; the 3xTF32 default).
 *
 * The includer defines ROUND and includes common/mma_pipeline.h first (MI, NJ, BK, mma_swz). */
#ifndef CLT_MMA_TF32_H
#define CLT_MMA_TF32_H

static inline __attribute__((always_inline)) uint mma_tf32(float x)
{
    uint r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
    return r;
}

/* Round to TF32, nearest, ties away from zero, in integer ops: adding half a TF32 unit (bit 12) to the
 * bit pattern carries into bit 13 exactly when the dropped bits are at least half; the hardware then
 * ignores bits 0-12. Inf and NaN (exponent all ones) are left alone, so they stay Inf and NaN. */
static inline __attribute__((always_inline)) uint mma_tf32_add(float x)
{
    uint u = as_uint(x);
    uint finite = (u & 0x7f800000u) ^ 0x7f800000u; /* 0 for Inf/NaN, >= 2^23 otherwise */
    return u + min(finite, 0x1000u);
}

/* 3xTF32 split: x = hi + lo with hi a TF32 value (rounded as above) and lo = x - hi exactly; lo is fed
 * unrounded (the hardware's truncation of lo costs 2^-22 relative to x). Inf/NaN: hi = x, lo = 0. */
static inline __attribute__((always_inline)) void mma_split(float x, uint *hi, uint *lo)
{
    uint u = as_uint(x);
    uint finite = (u & 0x7f800000u) ^ 0x7f800000u;
    uint h = (u + min(finite, 0x1000u)) & 0xffffe000u;
    *hi = h;
    *lo = finite ? as_uint(x - as_float(h)) : 0u;
}

static inline __attribute__((always_inline)) void mma_1688(float *c, uint a0, uint a1, uint a2, uint a3, uint b0, uint b1)
{
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                 "{%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

/* Split a fragment value for the rounding mode: hi (and lo for 3xTF32). */
#if ROUND == 0
#define MMA_HI(x) as_uint(x)
#elif ROUND == 4
#define MMA_HI(x) mma_tf32_add(x)
#else
#define MMA_HI(x) mma_tf32(x)
#endif

/* acc += the products of one k slice: A's tile as (BM x BK, k-contiguous when a_kc, else k-major), B's bs
 * (likewise), the warp's rows wm0.. and columns wn0.., lane (g, q). */
static inline __attribute__((always_inline)) void mma_tf32_slice(float acc[MI][NJ][4], __local const float *as,
                                                                 __local const float *bs, const int a_kc,
                                                                 const int b_kc, const int wm0, const int wn0,
                                                                 const int g, const int q)
{
    /* fa[i][0..3]: mma row g of m-tile i at physical k 4q..4q+3, fa[i][4..7]: row g + 8. */
    float fa[MI][8];
    if (a_kc) {
#pragma unroll
        for (int i = 0; i < MI; i++) {
            float4 lo = *(__local const float4 *)(as + (wm0 + i * 16 + g) * BK + q * 4);
            float4 hi = *(__local const float4 *)(as + (wm0 + i * 16 + g + 8) * BK + q * 4);
            fa[i][0] = lo.x; fa[i][1] = lo.y; fa[i][2] = lo.z; fa[i][3] = lo.w;
            fa[i][4] = hi.x; fa[i][5] = hi.y; fa[i][6] = hi.z; fa[i][7] = hi.w;
        }
    } else {
        /* m-contiguous: m-tile i's row g is physical m wm0 + 2 MI g + 2i, row g + 8 is + 1 (MI / 2 float4s
         * a lane and k row: 2 for 64-row warp tiles, 1 for 32) */
        const int sw = mma_swz(4 * q);
#pragma unroll
        for (int r = 0; r < 4; r++) {
            __local const float *row = as + (4 * q + r) * BM;
            int c0 = (wm0 + 2 * MI * g) / 4;
            float v[2 * MI];
#pragma unroll
            for (int c = 0; c < MI / 2; c++) {
                float4 x = *(__local const float4 *)(row + (((c0 + c) ^ sw) * 4));
                v[4 * c] = x.x, v[4 * c + 1] = x.y, v[4 * c + 2] = x.z, v[4 * c + 3] = x.w;
            }
#pragma unroll
            for (int i = 0; i < MI; i++) {
                fa[i][r] = v[2 * i];
                fa[i][4 + r] = v[2 * i + 1];
            }
        }
    }
    /* fb[j][0..3]: mma column g of n-tile j at physical k 4q..4q+3. */
    float fb[NJ][4];
    if (b_kc) {
#pragma unroll
        for (int j = 0; j < NJ; j++) {
            float4 v = *(__local const float4 *)(bs + (wn0 + j * 8 + g) * BK + q * 4);
            fb[j][0] = v.x; fb[j][1] = v.y; fb[j][2] = v.z; fb[j][3] = v.w;
        }
    } else {
        /* n-contiguous: n-tile j's column g is physical n wn0 + 8g + j */
        const int sw = mma_swz(4 * q);
#pragma unroll
        for (int r = 0; r < 4; r++) {
            __local const float *row = bs + (4 * q + r) * BN;
            int c0 = (wn0 + 8 * g) / 4;
            float4 v0 = *(__local const float4 *)(row + ((c0 ^ sw) * 4));
            float4 v1 = *(__local const float4 *)(row + (((c0 + 1) ^ sw) * 4));
            fb[0][r] = v0.x; fb[1][r] = v0.y; fb[2][r] = v0.z; fb[3][r] = v0.w;
            fb[4][r] = v1.x; fb[5][r] = v1.y; fb[6][r] = v1.z; fb[7][r] = v1.w;
        }
    }

#pragma unroll
    for (int s = 0; s < 2; s++) {
#if ROUND == 3 || ROUND == 5
        uint ah[MI][4], al[MI][4], bh[NJ][2], bl[NJ][2];
#pragma unroll
        for (int i = 0; i < MI; i++) {
            float x[4] = {fa[i][2 * s], fa[i][4 + 2 * s], fa[i][2 * s + 1], fa[i][4 + 2 * s + 1]};
#pragma unroll
            for (int e = 0; e < 4; e++) {
#if ROUND == 5
                mma_split(x[e], &ah[i][e], &al[i][e]);
#else
                ah[i][e] = mma_tf32(x[e]);
                al[i][e] = mma_tf32(x[e] - as_float(ah[i][e]));
#endif
            }
        }
#pragma unroll
        for (int j = 0; j < NJ; j++) {
            float x[2] = {fb[j][2 * s], fb[j][2 * s + 1]};
#pragma unroll
            for (int e = 0; e < 2; e++) {
#if ROUND == 5
                mma_split(x[e], &bh[j][e], &bl[j][e]);
#else
                bh[j][e] = mma_tf32(x[e]);
                bl[j][e] = mma_tf32(x[e] - as_float(bh[j][e]));
#endif
            }
        }
#pragma unroll
        for (int i = 0; i < MI; i++)
#pragma unroll
            for (int j = 0; j < NJ; j++) {
                mma_1688(acc[i][j], al[i][0], al[i][1], al[i][2], al[i][3], bh[j][0], bh[j][1]);
                mma_1688(acc[i][j], ah[i][0], ah[i][1], ah[i][2], ah[i][3], bl[j][0], bl[j][1]);
                mma_1688(acc[i][j], ah[i][0], ah[i][1], ah[i][2], ah[i][3], bh[j][0], bh[j][1]);
            }
#else
        uint a[MI][4], b[NJ][2];
#pragma unroll
        for (int i = 0; i < MI; i++) {
            a[i][0] = MMA_HI(fa[i][2 * s]);
            a[i][1] = MMA_HI(fa[i][4 + 2 * s]);
            a[i][2] = MMA_HI(fa[i][2 * s + 1]);
            a[i][3] = MMA_HI(fa[i][4 + 2 * s + 1]);
        }
#pragma unroll
        for (int j = 0; j < NJ; j++) {
            b[j][0] = MMA_HI(fb[j][2 * s]);
            b[j][1] = MMA_HI(fb[j][2 * s + 1]);
        }
#pragma unroll
        for (int i = 0; i < MI; i++)
#pragma unroll
            for (int j = 0; j < NJ; j++)
                mma_1688(acc[i][j], a[i][0], a[i][1], a[i][2], a[i][3], b[j][0], b[j][1]);
#endif
    }
}

#endif
