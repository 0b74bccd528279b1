/* GEMM, GPU style: C = act(alpha * op(A) op(B) + beta * C + bias) + residual, row-major f32.
 *
 * Algorithm: a work-group of MDIMC x NDIMC items computes an MWG x NWG tile of C. K is walked in
 * steps of KWG: each step the group stages an MWG x KWG slice of op(A) and a KWG x NWG slice of
 * op(B) in local memory, both stored k-major (As[k][m], Bs[k][n]) so the inner loop reads vectors
 * along m and n. Global loads go through registers: the next slice is fetched before the current
 * one is multiplied, and with DB = 1 written into the other of two local buffers, so one barrier
 * per step suffices. Each item owns a (MWG/MDIMC) x (NWG/NDIMC) register tile, spread in chunks of
 * VW consecutive rows/columns VW*MDIMC (VW*NDIMC) apart: local reads are VW-wide and conflict-free
 * (the 16 items along n read 16 consecutive float4s), and C is written VW-wide. Out-of-range rows,
 * columns and k are loaded as zeros and never stored, so any m, n, k works.
 *
 * Layout: op(A) is m x k: A[i * lda + p] (gemm_tiled_n?) or A[p * lda + i] (gemm_tiled_t?); op(B) is
 * k x n: B[p * ldb + j] (gemm_tiled_?n) or B[j * ldb + p] (?t). The flags say when A/B/C are
 * VW-aligned (then whole vectors are loaded with one instruction). Grid: (n tiles * WG, m tiles,
 * batch), local (WG, 1, 1) with WG = MDIMC * NDIMC.
 *
 * Split K (-DSPLITK=1, for grids too small to fill the device): grid dimension 2 is batch * pieces;
 * split = (pieces, chunk, ppseg, kseg, ashift, -, -, -): piece q multiplies k in [q * chunk,
 * (q + 1) * chunk) (chunk a multiple of KWG); with ppseg > 0, A's k runs in segments of kseg (the
 * images of a grad-weight product, A = dy), ppseg pieces per segment, segment s's elements
 * s * ashift further than one run would put them, and piece q covers [s * kseg + (q % ppseg) *
 * chunk, ..) within segment s = q / ppseg. Each piece writes
 * its register tile to the workspace ws (coalesced: element (i, j) of item lid at (i*WPTN + j)*WG +
 * lid), fences, and bumps its tile's counter; the group that brings it to `pieces` adds the pieces
 * in piece order (deterministic: the same sum whoever finishes last), runs the epilogue and resets
 * the counter for the next launch. ws = uint counters[SPLIT_COUNTERS], then float partials.
 *
 * -D contract (tunables below), SPLITK (0/1), plus IDX64, ACT, IN16 and OUT16 of
 * common/gemm_common.h.
 */
#include "common/fixed_group.h"
#include "common/gemm_common.h"

#ifndef MWG
#define MWG 64 /* tile rows */
#endif
#ifndef NWG
#define NWG 64 /* tile columns */
#endif
#ifndef KWG
#define KWG 16 /* k slice staged per step */
#endif
#ifndef MDIMC
#define MDIMC 16 /* items along m */
#endif
#ifndef NDIMC
#define NDIMC 16 /* items along n */
#endif
#ifndef VW
#define VW 4 /* vector width of loads, local reads and stores: 1, 2 or 4 */
#endif
#ifndef DB
#define DB 1 /* two local buffers (one barrier per step) */
#endif
#ifndef TXW
#define TXW NDIMC /* items along n inside one 32-item warp: NDIMC = rows of items, smaller = 2-D warp tiles */
#endif
#ifndef ROWS_FIRST
#define ROWS_FIRST 0 /* k-contiguous operands: 1 = neighbouring items fetch neighbouring rows (no bank
                        conflicts in the transposing stash), 0 = neighbouring k (whole sectors) */
#endif

#ifndef SPLITK
#define SPLITK 0
#endif
#define SPLIT_COUNTERS 4096 /* tiles * batch of a split launch: the host keeps to it */

#define WG (MDIMC * NDIMC)
#define WPTM (MWG / MDIMC)
#define WPTN (NWG / NDIMC)
#define A_LPT (MWG * KWG / VW / WG) /* VW-vectors of A each item loads per step */
#define B_LPT (NWG * KWG / VW / WG)
#define NBUF (DB ? 2 : 1)

#if VW != 1 && VW != 2 && VW != 4
#error "VW must be 1, 2 or 4"
#endif
#if MWG % (MDIMC * VW) || NWG % (NDIMC * VW)
#error "MWG (NWG) must be a multiple of MDIMC * VW (NDIMC * VW)"
#endif
#if KWG % VW || (MWG * KWG / VW) % WG || (NWG * KWG / VW) % WG
#error "each item must load whole vectors: KWG % VW == 0 and tile vectors a multiple of WG"
#endif

#if TXW != NDIMC && (NDIMC % TXW || 32 % TXW || MDIMC % (32 / TXW) || WG % 32)
#error "TXW must divide NDIMC and 32, and 32 / TXW must divide MDIMC"
#endif
#if VW == 4
typedef float4 floatv;
#define VLOAD vload4
#define VSTORE vstore4
#elif VW == 2
typedef float2 floatv;
#define VLOAD vload2
#define VSTORE vstore2
#else
typedef float floatv;
#define VLOAD(o, p) ((p)[o])
#define VSTORE(v, o, p) ((p)[o] = (v))
#endif

/* Fetch this item's share of one op(X) slice (rows/cols r0.. of the tile, k from k0) into regs.
 * CONTIG_MN: X is contiguous along the tile's m (n) axis; otherwise along k. */
static inline void gemm_fetch(__global const gemm_in_t *X, idx_t ldx, int aligned, int contig_mn, int TILE,
                       int LPT, int lid, int r0, int R, int k0, int Kn, float *regs)
{
#pragma unroll
    for (int l = 0; l < LPT; l++) {
        int c = lid + l * WG;
        int r, kk; /* tile coordinates of the vector's first element */
        if (contig_mn) {
            kk = c / (TILE / VW);
            r = (c % (TILE / VW)) * VW;
        } else if (ROWS_FIRST) {
            r = c % TILE;
            kk = (c / TILE) * VW;
        } else {
            r = c / (KWG / VW);
            kk = (c % (KWG / VW)) * VW;
        }
        int gr = r0 + r, gk = k0 + kk;
        idx_t at = contig_mn ? (idx_t)gk * ldx + gr : (idx_t)gr * ldx + gk;
        int full = contig_mn ? (gk < Kn && gr + VW <= R) : (gr < R && gk + VW <= Kn);
#if !IN16 /* 16-bit storage: element loads converting to f32 (the portable twin of tensor cores) */
        if (full) {
            floatv v = aligned ? *(__global const floatv *)(X + at) : VLOAD(0, X + at);
            VSTORE(v, 0, regs + l * VW);
        } else
#endif
        {
#pragma unroll
            for (int e = 0; e < VW; e++) {
                int ok = contig_mn ? (gk < Kn && gr + e < R) : (gr < R && gk + e < Kn);
                regs[l * VW + e] = ok ? GEMM_LOAD_IN(X, at + e) : 0.0f;
            }
        }
    }
}

/* Write fetched registers into a k-major local slice S[KWG][TILE]. */
static inline void gemm_stash(__local float *S, int contig_mn, int TILE, int LPT, int lid, const float *regs)
{
#pragma unroll
    for (int l = 0; l < LPT; l++) {
        int c = lid + l * WG;
        if (contig_mn) {
            int kk = c / (TILE / VW), r = (c % (TILE / VW)) * VW;
            *(__local floatv *)(S + kk * TILE + r) = VLOAD(0, regs + l * VW);
        } else {
            int r = ROWS_FIRST ? c % TILE : c / (KWG / VW);
            int kk = ROWS_FIRST ? (c / TILE) * VW : (c % (KWG / VW)) * VW;
#pragma unroll
            for (int e = 0; e < VW; e++)
                S[(kk + e) * TILE + r] = regs[l * VW + e];
        }
    }
}

#if SPLITK /* kernel arguments, body arguments (local memory lives at kernel scope), passing */
#define SPLIT_ARGS , __global uint *ws, int8 split
#define SPLIT_BODY_ARGS , __global uint *ws, int8 split, __local int *last
#define SPLIT_LOCAL __local int split_last;
#define SPLIT_PASS , ws, split, &split_last
#else
#define SPLIT_ARGS
#define SPLIT_BODY_ARGS
#define SPLIT_LOCAL
#define SPLIT_PASS
#endif

static inline __attribute__((always_inline)) void gemm_tiled_body(GEMM_ARGS, const int ta, const int tb, __local float *As,
                            __local float *Bs SPLIT_BODY_ARGS)
{
#if SPLITK
    const int pieces = split.s0, piece = get_global_id(2) % pieces;
    GEMM_SETUP(get_global_id(2) / pieces);
    int kbeg, kend;
    if (split.s2 > 0) { /* A in k segments: split.s2 pieces per segment of split.s3 values of k */
        const int seg = piece / split.s2;
        kbeg = seg * split.s3 + (piece - seg * split.s2) * split.s1;
        kend = min(min(K, (seg + 1) * split.s3), kbeg + split.s1);
        A += (ulong)seg * (ulong)split.s4; /* segment seg's elements, addressed by the global k */
    } else {
        kbeg = piece * split.s1;
        kend = min(K, kbeg + split.s1);
    }
#else
    const int kbeg = 0;
    GEMM_SETUP(get_global_id(2));
    const int kend = K;
#endif
    const int lid = get_local_id(0);
#if TXW == NDIMC
    const int tx = lid % NDIMC, ty = lid / NDIMC;
#else /* warp w covers a TXW x (32 / TXW) block of items */
    const int lane = lid % 32, warp = lid / 32;
    const int tx = (warp % (NDIMC / TXW)) * TXW + lane % TXW;
    const int ty = (warp / (NDIMC / TXW)) * (32 / TXW) + lane / TXW;
#endif
    const int m0 = get_group_id(1) * MWG, n0 = get_group_id(0) * NWG;
    const int va = FLAGS & GEMM_F_VEC_A, vb = FLAGS & GEMM_F_VEC_B;
    /* A is contiguous along m when transposed; B along n when not. */
    const int a_mn = ta, b_mn = !tb;

    float acc[WPTM][WPTN];
#pragma unroll
    for (int i = 0; i < WPTM; i++)
#pragma unroll
        for (int j = 0; j < WPTN; j++)
            acc[i][j] = 0.0f;

    float ra[A_LPT * VW], rb[B_LPT * VW];
    const int steps = kend > kbeg ? (kend - kbeg + KWG - 1) / KWG : 0;
    if (steps > 0) {
        gemm_fetch(A, lda, va, a_mn, MWG, A_LPT, lid, m0, M, kbeg, kend, ra);
        gemm_fetch(B, ldb, vb, b_mn, NWG, B_LPT, lid, n0, N, kbeg, kend, rb);
        gemm_stash(As, a_mn, MWG, A_LPT, lid, ra);
        gemm_stash(Bs, b_mn, NWG, B_LPT, lid, rb);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = 0; s < steps; s++) {
        const int more = s + 1 < steps;
        if (more) {
            gemm_fetch(A, lda, va, a_mn, MWG, A_LPT, lid, m0, M, kbeg + (s + 1) * KWG, kend, ra);
            gemm_fetch(B, ldb, vb, b_mn, NWG, B_LPT, lid, n0, N, kbeg + (s + 1) * KWG, kend, rb);
        }
        __local const float *as = As + (DB ? (s & 1) : 0) * (KWG * MWG);
        __local const float *bs = Bs + (DB ? (s & 1) : 0) * (KWG * NWG);
/* AMD's scheduler hoists every local read of a fully unrolled slice (174 VGPRs, 1 wave per SIMD
 * at 64x64 on gfx902, spills at 128x128); pairs of k keep the register budget. Other
 * compilers: the full unroll (measured on the H200). */
#ifdef __AMDGCN__
#pragma unroll 2
#else
#pragma unroll
#endif
        for (int kk = 0; kk < KWG; kk++) {
            float a[WPTM], b[WPTN];
#pragma unroll
            for (int v = 0; v < WPTM / VW; v++)
                VSTORE(*(__local const floatv *)(as + kk * MWG + v * MDIMC * VW + ty * VW), 0,
                       a + v * VW);
#pragma unroll
            for (int v = 0; v < WPTN / VW; v++)
                VSTORE(*(__local const floatv *)(bs + kk * NWG + v * NDIMC * VW + tx * VW), 0,
                       b + v * VW);
#pragma unroll
            for (int i = 0; i < WPTM; i++)
#pragma unroll
                for (int j = 0; j < WPTN; j++)
                    acc[i][j] = fma(a[i], b[j], acc[i][j]);
        }
        if (more) {
#if !DB
            barrier(CLK_LOCAL_MEM_FENCE);
#endif
            __local float *an = As + (DB ? ((s + 1) & 1) : 0) * (KWG * MWG);
            __local float *bn = Bs + (DB ? ((s + 1) & 1) : 0) * (KWG * NWG);
            gemm_stash(an, a_mn, MWG, A_LPT, lid, ra);
            gemm_stash(bn, b_mn, NWG, B_LPT, lid, rb);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }

#if SPLITK
    {
        const uint tile = ((uint)(get_global_id(2) / pieces) * get_num_groups(1) + get_group_id(1)) *
                              get_num_groups(0) + get_group_id(0);
        __global volatile float *part =
            (__global volatile float *)(ws + SPLIT_COUNTERS) + (ulong)tile * pieces * (MWG * NWG);
#pragma unroll
        for (int i = 0; i < WPTM; i++)
#pragma unroll
            for (int j = 0; j < WPTN; j++)
                part[(ulong)piece * (MWG * NWG) + (i * WPTN + j) * WG + lid] = acc[i][j];
        mem_fence(CLK_GLOBAL_MEM_FENCE);
        barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
        if (lid == 0)
            *last = atomic_inc(ws + tile) == (uint)(pieces - 1);
        barrier(CLK_LOCAL_MEM_FENCE);
        if (!*last)
            return;
        mem_fence(CLK_GLOBAL_MEM_FENCE);
        /* Piece by piece, all of the item's values at once: the loads of one piece are independent,
         * so a piece costs one round trip to L2, not one per value (volatile loads stay in program
         * order, which ruled out the compiler interchanging the loops). Additions in piece order
         * per value, whoever finishes last: deterministic. */
        float sum[WPTM][WPTN];
#pragma unroll
        for (int i = 0; i < WPTM; i++)
#pragma unroll
            for (int j = 0; j < WPTN; j++)
                sum[i][j] = 0.0f;
        for (int q = 0; q < pieces; q++) {
            __global volatile float *pq = part + (ulong)q * (MWG * NWG) + lid;
            if (q == piece) {
#pragma unroll
                for (int i = 0; i < WPTM; i++)
#pragma unroll
                    for (int j = 0; j < WPTN; j++)
                        sum[i][j] += acc[i][j];
            } else {
#pragma unroll
                for (int i = 0; i < WPTM; i++)
#pragma unroll
                    for (int j = 0; j < WPTN; j++)
                        sum[i][j] += pq[(i * WPTN + j) * WG];
            }
        }
#pragma unroll
        for (int i = 0; i < WPTM; i++)
#pragma unroll
            for (int j = 0; j < WPTN; j++)
                acc[i][j] = sum[i][j];
        if (lid == 0)
            atomic_xchg(ws + tile, 0u); /* ready for the next launch */
    }
#endif

    /* Epilogue: row i = m0 + (wi / VW) * MDIMC * VW + ty * VW + wi % VW, likewise columns. */
#pragma unroll
    for (int wi = 0; wi < WPTM; wi++) {
        int i = m0 + (wi / VW) * MDIMC * VW + ty * VW + wi % VW;
        if (i >= M)
            continue;
#pragma unroll
        for (int v = 0; v < WPTN / VW; v++) {
            int j = n0 + v * NDIMC * VW + tx * VW;
#if VW == 4
            if (j + 4 <= N) {
                gemm_store4(C, ldc, &epi,
                            (float4)(acc[wi][v * 4], acc[wi][v * 4 + 1], acc[wi][v * 4 + 2],
                                     acc[wi][v * 4 + 3]),
                            i, j);
                continue;
            }
#endif
#pragma unroll
            for (int e = 0; e < VW; e++)
                if (j + e < N)
                    gemm_store1(C, ldc, &epi, acc[wi][v * VW + e], i, j + e);
        }
    }
}

#define GEMM_TILED_KERNEL(name, ta, tb)                                                            \
    __kernel CLT_FIXED_GROUP(WG) void name(GEMM_ARGS SPLIT_ARGS)                                  \
    {                                                                                              \
        __local float As[NBUF * KWG * MWG] __attribute__((aligned(16)));                           \
        __local float Bs[NBUF * KWG * NWG] __attribute__((aligned(16)));                           \
        SPLIT_LOCAL                                                                                \
        gemm_tiled_body(A, B, C, bias, R, offs, strides, lds, dims, sc, ta, tb, As, Bs SPLIT_PASS); \
    }

GEMM_TILED_KERNEL(gemm_tiled_nn, 0, 0)
GEMM_TILED_KERNEL(gemm_tiled_nt, 0, 1)
GEMM_TILED_KERNEL(gemm_tiled_tn, 1, 0)
GEMM_TILED_KERNEL(gemm_tiled_tt, 1, 1)
