/* The staging pipeline of the tensor-core GEMM kernels (gemm/gemm_mma.cl: f32 operands, TF32 math;
 * gemm/gemm_mma16.cl: f16/bf16 operands): cp.async copies of k slices of A and B into a STAGES-deep
 * ring of local tiles, and the fused epilogue of a warp's 16 MI x 64 accumulators.
 *
 * A k slice is BK elements: 16 f32 or 32 halves, so every tile row is four 16-byte chunks of MMA_EPC
 * elements. Operands stored k-contiguous (A untransposed, B transposed) are staged as [ROWS][BK];
 * the others as [BK][ROWS] ("k-major"), their 16-byte chunks XOR-swizzled by row so that the 8 lanes
 * of a 128-bit load phase (q = 0..3 reading rows q-apart, g = 0..1 reading neighbouring chunks) hit
 * 8 different banks.
 *
 * The includer defines: MMA_ET (element type: float or ushort), MMA_EPC (elements per 16-byte chunk:
 * 4 or 8), BK (= 4 * MMA_EPC), WG, STAGES, CPW (copy width in elements: MMA_EPC for 16-byte copies,
 * which need A/B + offset, ld and batch stride multiples of MMA_EPC elements; 1 for f32 element
 * copies), and the accumulator shape MI (4: warp tiles of 64 x 64; 2: 32 x 64), NJ = 8; plus IDX64/ACT of
 * common/gemm_common.h. */
#ifndef CLT_MMA_PIPELINE_H
#define CLT_MMA_PIPELINE_H

#include "common/gemm_common.h"

/* The swizzled 16-byte chunk of row k of a k-major tile: a bijection of the chunks of each aligned
 * group of 8, chosen so the 4 rows one load instruction reads land on distinct bank groups. f32: rows
 * 4q + r, chunk bits 0 and 2 flipped by q; halves: rows 8q + r, bits 1-2 set to q. */
static inline __attribute__((always_inline)) int mma_swz(int k)
{
#if MMA_EPC == 4
    int x = (k >> 2) & 3;
    return (x & 1) | ((x & 2) << 1);
#else
    return ((k >> 3) & 3) << 1;
#endif
}

static inline __attribute__((always_inline)) uint mma_local_addr(__local const MMA_ET *p)
{
    return (uint)(size_t)p;
}

/* Copy `bytes` (0..16, rest zero-filled) from global src to local dst: a 16-byte cp.async. */
static inline __attribute__((always_inline)) void mma_cp16(__local MMA_ET *dst, __global const MMA_ET *src, uint bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(mma_local_addr(dst)), "l"(src),
                 "r"(bytes)
                 : "memory");
}

/* The same for a chunk known to lie inside the matrix: no source size to compute. */
static inline __attribute__((always_inline)) void mma_cp16_full(__local MMA_ET *dst, __global const MMA_ET *src)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(mma_local_addr(dst)), "l"(src)
                 : "memory");
}

static inline __attribute__((always_inline)) void mma_cp4(__local MMA_ET *dst, __global const MMA_ET *src, uint bytes)
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

/* Staging one k slice of an operand into local memory, split in a part computed once per work-item
 * (which chunks it copies, from where to where, which are inside the matrix) and a per-slice part
 * (a pointer add and the k-edge test), so the main loop spends few instructions on copies.
 * Kcontig: tile [ROWS][BK], element (r, k) from X[(r0 + r) * ld + k0 + k]. Else tile [BK][ROWS],
 * chunks swizzled by row, element (k, r) from X[(k0 + k) * ld + r0 + r]. `rows` = M or N. Each item
 * copies ROWS * BK / MMA_EPC / WG chunks. */
#define MMA_U(ROWS) ((ROWS) * BK / MMA_EPC / WG)

typedef struct mma_copy {
    idx_t off; /* element offset in X at k0 = 0 */
    int lc;    /* local element offset in a stage */
    int kk;    /* the chunk's k within the slice (first element) */
    int room;  /* elements of the chunk inside the matrix along the non-k dimension (0..MMA_EPC) */
} mma_copy;

static inline __attribute__((always_inline)) mma_copy mma_copy_plan(int c, idx_t ld, int r0, int rows,
                                                                    int kcontig, int ROWS)
{
    mma_copy p;
    if (kcontig) {
        int r = c >> 2;
        p.kk = (c & 3) * MMA_EPC;
        p.lc = c * MMA_EPC;
        p.room = r0 + r < rows ? MMA_EPC : 0;
        p.off = p.room ? (idx_t)(r0 + r) * ld + p.kk : 0;
    } else {
        int k = c / (ROWS / MMA_EPC), ch = c % (ROWS / MMA_EPC);
        p.kk = k;
        p.lc = (k * (ROWS / MMA_EPC) + (ch ^ mma_swz(k))) * MMA_EPC;
        int n = rows - (r0 + ch * MMA_EPC);
        p.room = n < 0 ? 0 : (n > MMA_EPC ? MMA_EPC : n);
        p.off = p.room ? (idx_t)k * ld + r0 + ch * MMA_EPC : 0;
    }
    return p;
}

static inline __attribute__((always_inline)) void mma_copy_slice(__local MMA_ET *T, __global const MMA_ET *X,
                                                                 const mma_copy *p, idx_t ld, int k0,
                                                                 int kdim, int kcontig)
{
    int n; /* elements of the chunk inside the matrix */
    __global const MMA_ET *src;
    if (kcontig) {
        n = kdim - (k0 + p->kk);
        n = n > MMA_EPC ? MMA_EPC : n;
        n = p->room ? n : 0;
        src = X + p->off + k0;
    } else {
        n = k0 + p->kk < kdim ? p->room : 0;
        src = X + p->off + (idx_t)k0 * ld;
    }
    n = n < 0 ? 0 : n;
#if CPW == MMA_EPC
    mma_cp16(T + p->lc, n ? src : X, (uint)n * (uint)sizeof(MMA_ET));
#else
    for (int e = 0; e < MMA_EPC; e++)
        mma_cp4(T + p->lc + e, e < n ? src + e : X, e < n ? 4u : 0u);
#endif
}

/* The copy of a slice wholly inside the matrix (interior tile, k0 + BK <= K): no edge tests, one
 * offset per operand per slice. kofs = k0 for k-contiguous operands, k0 * ld otherwise. */
static inline __attribute__((always_inline)) void mma_copy_full(__local MMA_ET *T, __global const MMA_ET *X,
                                                                const mma_copy *p, idx_t kofs)
{
    __global const MMA_ET *src = X + p->off + kofs;
#if CPW == MMA_EPC
    mma_cp16_full(T + p->lc, src);
#else
    for (int e = 0; e < MMA_EPC; e++)
        mma_cp4(T + p->lc + e, src + e, 4u);
#endif
}

/* Stage the k slice starting at k0 into ring slot `stage`. Expects in scope: As, Bs (local rings),
 * A, B, lda, ldb, K, a_kc, b_kc (which operand is k-contiguous), pa[MMA_U(BM)], pb[MMA_U(BN)] (the
 * item's copy plans) and `interior` (the tile lies inside M x N): MMA_COPY_ANY then copies slices
 * wholly inside the matrix without edge tests. */
#define MMA_COPY(stage, k0)                                                                        \
    do {                                                                                           \
        _Pragma("unroll") for (int u = 0; u < MMA_U(BM); u++)                                      \
            mma_copy_slice(As + (stage) * BM * BK, A, &pa[u], lda, (k0), K, a_kc);                 \
        _Pragma("unroll") for (int u = 0; u < MMA_U(BN); u++)                                      \
            mma_copy_slice(Bs + (stage) * BN * BK, B, &pb[u], ldb, (k0), K, b_kc);                 \
    } while (0)
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


/* The common frame of both kernels' bodies. MMA_WARP_SETUP declares the item's position (lid, warp,
 * g = lane / 4, q = lane % 4, the warp's wm0/wn0 and the group's m0/n0), the zeroed accumulators
 * acc[MI][NJ][4], the copy plans, `interior` and `slices`, and stages the first STAGES - 1 slices.
 * Expects TA/TB, A, B, lda, ldb, M, N, K, As, Bs in scope (after GEMM_SETUP). MMA_NEXT_SLICE(t) waits
 * for slice t (the item's own copies, then the barrier for everyone's) and starts slice
 * t + STAGES - 1 into the slot slice t - 1 used, which every item has finished reading. */
#define MMA_WARP_SETUP()                                                                           \
    const int lid = get_local_id(0);                                                               \
    const int warp = lid >> 5, lane = lid & 31;                                                    \
    const int g = lane >> 2, q = lane & 3;                                                         \
    const int wm0 = (warp / WARPS_N) * 16 * MI, wn0 = (warp % WARPS_N) * 64;                       \
    const int m0 = get_group_id(1) * BM, n0 = get_group_id(0) * BN;                                \
    const int a_kc = !TA, b_kc = TB; /* which operands are k-contiguous */                         \
    float acc[MI][NJ][4];                                                                          \
    _Pragma("unroll") for (int i = 0; i < MI; i++)                                                 \
        _Pragma("unroll") for (int j = 0; j < NJ; j++)                                             \
            _Pragma("unroll") for (int e = 0; e < 4; e++) acc[i][j][e] = 0.0f;                     \
    mma_copy pa[MMA_U(BM)], pb[MMA_U(BN)];                                                         \
    _Pragma("unroll") for (int u = 0; u < MMA_U(BM); u++)                                          \
        pa[u] = mma_copy_plan(lid + u * WG, lda, m0, M, a_kc, BM);                                 \
    _Pragma("unroll") for (int u = 0; u < MMA_U(BN); u++)                                          \
        pb[u] = mma_copy_plan(lid + u * WG, ldb, n0, N, b_kc, BN);                                 \
    /* Most slices of most tiles are inside the matrix: copied without edge tests. */              \
    const int interior = m0 + BM <= M && n0 + BN <= N;                                             \
    const int slices = (K + BK - 1) / BK;                                                          \
    _Pragma("unroll") for (int s = 0; s < STAGES - 1; s++) {                                       \
        if (s < slices)                                                                            \
            MMA_COPY_ANY(s, s * BK);                                                               \
        mma_commit();                                                                              \
    }

#define MMA_NEXT_SLICE(t)                                                                          \
    do {                                                                                           \
        mma_wait_oldest();                                                                         \
        barrier(CLK_LOCAL_MEM_FENCE);                                                              \
        int tn_ = (t) + STAGES - 1;                                                                \
        if (tn_ < slices)                                                                          \
            MMA_COPY_ANY(tn_ % STAGES, tn_ * BK);                                                  \
        mma_commit();                                                                              \
    } while (0)

/* No copy may still be in flight when the kernel ends (the last slots were never waited for). */
static inline __attribute__((always_inline)) void mma_drain(void)
{
    asm volatile("cp.async.wait_all;\n" ::: "memory");
}

/* The fused epilogue of a warp's accumulators. acc[i][j][e]: m-tile i, n-tile j, mma C element e
 * (0/1: mma row g, columns 2q, 2q + 1; 2/3: row g + 8). Rows: for a k-contiguous A, m-tile i is rows
 * 16i.. of the warp (mma row g = 16i + g); otherwise the kernel made rows 2 MI g + 2i (mma row g) and
 * 2 MI g + 2i + 1 (g + 8) its own. Columns: for a k-contiguous B, n-tile j is columns 8j.. (mma column
 * c = 8j + c); otherwise column c of n-tile j is 8c + j, so a lane's 16 columns 16q..16q+15 are
 * contiguous and stored as float4s. */
static inline __attribute__((always_inline)) void mma_store_acc(__global gemm_out_t *C, idx_t ldc, const gemm_epi *epi,
                                                                float acc[MI][NJ][4], int M, int N, int m0,
                                                                int n0, int a_kc, int b_kc, int g, int q)
{
#pragma unroll
    for (int i = 0; i < MI; i++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            int row = m0 + (a_kc ? i * 16 + g + 8 * h : 2 * MI * g + 2 * i + h);
            if (row >= M)
                continue;
            if (!b_kc) {
                /* columns n0 + 16q + (0..7: c0 of tiles 0..7, 8..15: c1 of tiles 0..7) */
#pragma unroll
                for (int e = 0; e < 2; e++)
#pragma unroll
                    for (int v = 0; v < 2; v++) {
                        int col = n0 + 16 * q + 8 * e + 4 * v;
                        float4 x = (float4)(acc[i][4 * v][2 * h + e], acc[i][4 * v + 1][2 * h + e],
                                            acc[i][4 * v + 2][2 * h + e], acc[i][4 * v + 3][2 * h + e]);
                        if (col + 4 <= N) {
                            gemm_store4(C, ldc, epi, x, row, col);
                        } else {
                            if (col < N) gemm_store1(C, ldc, epi, x.x, row, col);
                            if (col + 1 < N) gemm_store1(C, ldc, epi, x.y, row, col + 1);
                            if (col + 2 < N) gemm_store1(C, ldc, epi, x.z, row, col + 2);
                        }
                    }
            } else {
#pragma unroll
                for (int j = 0; j < NJ; j++)
#pragma unroll
                    for (int e = 0; e < 2; e++) {
                        int col = n0 + j * 8 + 2 * q + e;
                        if (col < N)
                            gemm_store1(C, ldc, epi, acc[i][j][2 * h + e], row, col);
                    }
            }
        }
}

#endif
