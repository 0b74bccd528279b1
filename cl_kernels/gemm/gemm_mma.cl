/* GEMM on NVIDIA tensor cores through inline PTX: C = act(alpha * op(A) op(B) + beta * C + bias) +
 * residual, f32 in and out, TF32 products (mma.sync.m16n8k8) with f32 accumulation. NVIDIA only
 * (the host builds it when the device reports compute capability >= 8.0).
 *
 * Algorithm: a work-group of WARPS_M x WARPS_N warps computes a BM x BN tile of C (each warp a 64 x 64
 * block: 4 x 8 mma tiles of 16 x 8). K is walked in slices of 16, staged global -> local by cp.async
 * (no registers in between) in a STAGES-deep ring: slice t + STAGES - 1 is in flight while slice t is
 * multiplied; one barrier per slice.
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
 * Edges: out-of-range rows/columns/k are zero-filled by cp.async's source size and never stored, so
 * any m, n, k works. CPW (copy width) 4 needs A/B + offset, ld and batch stride multiples of 4
 * elements (16-byte cp.async); CPW 1 copies single elements (any alignment).
 *
 * Grid: (n tiles * WG, m tiles, batch), local (WG, 1, 1), WG = 32 * WARPS_M * WARPS_N.
 * -D contract: WARPS_M, WARPS_N, STAGES, ROUND, CPW, plus IDX64 and ACT of common/gemm_common.h. */
#include "common/gemm_common.h"

#ifndef WARPS_M
#define WARPS_M 2
#endif
#ifndef WARPS_N
#define WARPS_N 2
#endif
#ifndef STAGES
#define STAGES 3
#endif
#ifndef ROUND
#define ROUND 4
#endif
#ifndef CPW
#define CPW 4
#endif

#define WG (32 * WARPS_M * WARPS_N)
#define BM (64 * WARPS_M)
#define BN (64 * WARPS_N)
#define BK 16
#define MI 4 /* m16 tiles per warp */
#define NJ 8 /* n8 tiles per warp */

/* A 16-byte chunk index of row k of a k-major tile, swizzled: bits 0 and 2 flipped by (k >> 2) & 3. */
static inline __attribute__((always_inline)) int mma_swz(int k)
{
    int x = (k >> 2) & 3;
    return (x & 1) | ((x & 2) << 1);
}

static inline __attribute__((always_inline)) uint mma_local_addr(__local const float *p)
{
    return (uint)(size_t)p;
}

/* Copy `bytes` (0..16, rest zero-filled) from global src to local dst: a 16-byte cp.async. */
static inline __attribute__((always_inline)) void mma_cp16(__local float *dst, __global const float *src, uint bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(mma_local_addr(dst)), "l"(src),
                 "r"(bytes)
                 : "memory");
}

/* The same for a chunk known to lie inside the matrix: no source size to compute. */
static inline __attribute__((always_inline)) void mma_cp16_full(__local float *dst, __global const float *src)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(mma_local_addr(dst)), "l"(src)
                 : "memory");
}

static inline __attribute__((always_inline)) void mma_cp4(__local float *dst, __global const float *src, uint bytes)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(mma_local_addr(dst)), "l"(src),
                 "r"(bytes)
                 : "memory");
}

static inline __attribute__((always_inline)) void mma_commit(void)
{
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}

/* Wait until at most STAGES - 2 copy groups are pending (the oldest slice has landed). */
#if STAGES == 2
#define MMA_WAIT_OLDEST "cp.async.wait_group 0;\n"
#elif STAGES == 3
#define MMA_WAIT_OLDEST "cp.async.wait_group 1;\n"
#elif STAGES == 4
#define MMA_WAIT_OLDEST "cp.async.wait_group 2;\n"
#else
#error "STAGES must be 2, 3 or 4"
#endif
static inline __attribute__((always_inline)) void mma_wait_oldest(void)
{
    asm volatile(MMA_WAIT_OLDEST ::: "memory");
}

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

/* Staging one k slice of an operand into local memory, split in a part computed once per work-item
 * (which chunks it copies, from where to where, which are inside the matrix) and a per-slice part
 * (a pointer add and the k-edge test), so the main loop spends few instructions on copies.
 * Kcontig (operand stored k-contiguous: A untransposed, B transposed): tile [ROWS][16], element (r, k)
 * from X[(r0 + r) * ld + k0 + k]. Else tile [16][ROWS], chunks swizzled by row, element (k, r) from
 * X[(k0 + k) * ld + r0 + r]. `rows` = M or N. Each item copies ROWS * 4 / WG chunks of 4 elements. */
#define MMA_U(ROWS) ((ROWS) * BK / 4 / WG)

typedef struct mma_copy {
    idx_t off; /* element offset in X at k0 = 0 */
    int lc;    /* local element offset in a stage */
    int kk;    /* the chunk's k within the slice (first element) */
    int room;  /* elements of the chunk inside the matrix along the non-k dimension (0..4; 4 when kcontig) */
} mma_copy;

static inline __attribute__((always_inline)) mma_copy mma_copy_plan(int c, idx_t ld, int r0, int rows,
                                                                    int kcontig, int ROWS)
{
    mma_copy p;
    if (kcontig) {
        int r = c >> 2;
        p.kk = (c & 3) * 4;
        p.lc = c * 4;
        p.room = r0 + r < rows ? 4 : 0;
        p.off = p.room ? (idx_t)(r0 + r) * ld + p.kk : 0;
    } else {
        int k = c / (ROWS / 4), ch = c % (ROWS / 4);
        p.kk = k;
        p.lc = (k * (ROWS / 4) + (ch ^ mma_swz(k))) * 4;
        int n = rows - (r0 + ch * 4);
        p.room = n < 0 ? 0 : (n > 4 ? 4 : n);
        p.off = p.room ? (idx_t)k * ld + r0 + ch * 4 : 0;
    }
    return p;
}

static inline __attribute__((always_inline)) void mma_copy_slice(__local float *T, __global const float *X,
                                                                 const mma_copy *p, idx_t ld, int k0,
                                                                 int kdim, int kcontig)
{
    int n; /* elements of the chunk inside the matrix */
    __global const float *src;
    if (kcontig) {
        n = kdim - (k0 + p->kk);
        n = n > 4 ? 4 : n;
        n = p->room ? n : 0;
        src = X + p->off + k0;
    } else {
        n = k0 + p->kk < kdim ? p->room : 0;
        src = X + p->off + (idx_t)k0 * ld;
    }
    n = n < 0 ? 0 : n;
#if CPW == 4
    mma_cp16(T + p->lc, n ? src : X, (uint)n * 4u);
#else
    for (int e = 0; e < 4; e++)
        mma_cp4(T + p->lc + e, e < n ? src + e : X, e < n ? 4u : 0u);
#endif
}

/* The copy of a slice wholly inside the matrix (interior tile, k0 + 16 <= K): no edge tests, one
 * offset per operand per slice. kofs = k0 for k-contiguous operands, k0 * ld otherwise. */
static inline __attribute__((always_inline)) void mma_copy_full(__local float *T, __global const float *X,
                                                                const mma_copy *p, idx_t kofs)
{
    __global const float *src = X + p->off + kofs;
#if CPW == 4
    mma_cp16_full(T + p->lc, src);
#else
    for (int e = 0; e < 4; e++)
        mma_cp4(T + p->lc + e, src + e, 4u);
#endif
}

/* Split a fragment value for the rounding mode: hi (and lo for 3xTF32). */
#if ROUND == 0
#define MMA_HI(x) as_uint(x)
#elif ROUND == 4
#define MMA_HI(x) mma_tf32_add(x)
#else
#define MMA_HI(x) mma_tf32(x)
#endif

static inline __attribute__((always_inline)) void
gemm_mma_body(GEMM_ARGS, const int TA, const int TB, __local float *As, __local float *Bs)
{
    GEMM_SETUP(get_group_id(2));
    const int lid = get_local_id(0);
    const int warp = lid >> 5, lane = lid & 31;
    const int g = lane >> 2, q = lane & 3;
    const int wm0 = (warp / WARPS_N) * 64, wn0 = (warp % WARPS_N) * 64;
    const int m0 = get_group_id(1) * BM, n0 = get_group_id(0) * BN;
    const int a_kc = !TA, b_kc = TB; /* which operands are k-contiguous */

    float acc[MI][NJ][4];
#pragma unroll
    for (int i = 0; i < MI; i++)
#pragma unroll
        for (int j = 0; j < NJ; j++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                acc[i][j][e] = 0.0f;

    mma_copy pa[MMA_U(BM)], pb[MMA_U(BN)];
#pragma unroll
    for (int u = 0; u < MMA_U(BM); u++)
        pa[u] = mma_copy_plan(lid + u * WG, lda, m0, M, a_kc, BM);
#pragma unroll
    for (int u = 0; u < MMA_U(BN); u++)
        pb[u] = mma_copy_plan(lid + u * WG, ldb, n0, N, b_kc, BN);
#define MMA_COPY(stage, k0)                                                                        \
    do {                                                                                           \
        _Pragma("unroll") for (int u = 0; u < MMA_U(BM); u++)                                      \
            mma_copy_slice(As + (stage) * BM * BK, A, &pa[u], lda, (k0), K, a_kc);                 \
        _Pragma("unroll") for (int u = 0; u < MMA_U(BN); u++)                                      \
            mma_copy_slice(Bs + (stage) * BN * BK, B, &pb[u], ldb, (k0), K, b_kc);                 \
    } while (0)
    /* Most slices of most tiles are inside the matrix: copy those without edge tests. */
    const int interior = m0 + BM <= M && n0 + BN <= N;
#define MMA_COPY_ANY(stage, k0)                                                                    \
    do {                                                                                           \
        if (interior && (k0) + BK <= K) {                                                          \
            idx_t ka = a_kc ? (idx_t)(k0) : (idx_t)(k0) * lda;                                     \
            idx_t kb = b_kc ? (idx_t)(k0) : (idx_t)(k0) * ldb;                                     \
            _Pragma("unroll") for (int u = 0; u < MMA_U(BM); u++)                                  \
                mma_copy_full(As + (stage) * BM * BK, A, &pa[u], ka);                              \
            _Pragma("unroll") for (int u = 0; u < MMA_U(BN); u++)                                  \
                mma_copy_full(Bs + (stage) * BN * BK, B, &pb[u], kb);                              \
        } else {                                                                                   \
            MMA_COPY(stage, k0);                                                                   \
        }                                                                                          \
    } while (0)

    const int slices = (K + BK - 1) / BK;
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < slices)
            MMA_COPY_ANY(s, s * BK);
        mma_commit();
    }

    for (int t = 0; t < slices; t++) {
        mma_wait_oldest();
        barrier(CLK_LOCAL_MEM_FENCE);
        {
            int tn = t + STAGES - 1, sn = tn % STAGES;
            if (tn < slices)
                MMA_COPY_ANY(sn, tn * BK);
            mma_commit();
        }
        __local const float *as = As + (t % STAGES) * BM * BK;
        __local const float *bs = Bs + (t % STAGES) * BN * BK;

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
            /* m-contiguous: m-tile i's row g is physical m wm0 + 8g + 2i, row g + 8 is + 1 */
            const int sw = mma_swz(4 * q);
#pragma unroll
            for (int r = 0; r < 4; r++) {
                __local const float *row = as + (4 * q + r) * BM;
                int c0 = (wm0 + 8 * g) / 4;
                float4 v0 = *(__local const float4 *)(row + ((c0 ^ sw) * 4));
                float4 v1 = *(__local const float4 *)(row + (((c0 + 1) ^ sw) * 4));
                float v[8] = {v0.x, v0.y, v0.z, v0.w, v1.x, v1.y, v1.z, v1.w};
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
    asm volatile("cp.async.wait_all;\n" ::: "memory");

    /* Epilogue. Rows: m-tile i's mma row g (c0, c1) and g + 8 (c2, c3). */
#pragma unroll
    for (int i = 0; i < MI; i++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            int row = m0 + wm0 + (a_kc ? i * 16 + g + 8 * h : 8 * g + 2 * i + h);
            if (row >= M)
                continue;
            if (!b_kc) {
                /* columns wn0 + 16q + (0..7: c0 of tiles 0..7, 8..15: c1 of tiles 0..7) */
#pragma unroll
                for (int e = 0; e < 2; e++)
#pragma unroll
                    for (int v = 0; v < 2; v++) {
                        int col = n0 + wn0 + 16 * q + 8 * e + 4 * v;
                        float4 x = (float4)(acc[i][4 * v][2 * h + e], acc[i][4 * v + 1][2 * h + e],
                                            acc[i][4 * v + 2][2 * h + e], acc[i][4 * v + 3][2 * h + e]);
                        if (col + 4 <= N) {
                            gemm_store4(C, ldc, &epi, x, row, col);
                        } else {
                            if (col < N) gemm_store1(C, ldc, &epi, x.x, row, col);
                            if (col + 1 < N) gemm_store1(C, ldc, &epi, x.y, row, col + 1);
                            if (col + 2 < N) gemm_store1(C, ldc, &epi, x.z, row, col + 2);
                        }
                    }
            } else {
#pragma unroll
                for (int j = 0; j < NJ; j++)
#pragma unroll
                    for (int e = 0; e < 2; e++) {
                        int col = n0 + wn0 + j * 8 + 2 * q + e;
                        if (col < N)
                            gemm_store1(C, ldc, &epi, acc[i][j][2 * h + e], row, col);
                    }
            }
        }
}

#define GEMM_MMA_KERNEL(name, ta, tb)                                                              \
    __kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void name(GEMM_ARGS)                  \
    {                                                                                              \
        __local float As[STAGES * BM * BK] __attribute__((aligned(16)));                           \
        __local float Bs[STAGES * BN * BK] __attribute__((aligned(16)));                           \
        gemm_mma_body(A, B, C, bias, R, offs, strides, lds, dims, sc, ta, tb, As, Bs);             \
    }

GEMM_MMA_KERNEL(gemm_mma_nn, 0, 0)
GEMM_MMA_KERNEL(gemm_mma_nt, 0, 1)
GEMM_MMA_KERNEL(gemm_mma_tn, 1, 0)
GEMM_MMA_KERNEL(gemm_mma_tt, 1, 1)
