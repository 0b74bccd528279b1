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
 * -D contract (tunables below), plus IDX64 and ACT of common/gemm_common.h.
 */
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
inline void gemm_fetch(__global const float *X, idx_t ldx, int aligned, int contig_mn, int TILE,
                       int LPT, int lid, int r0, int R, int k0, int Kn, float *regs)
{
#pragma unroll
    for (int l = 0; l < LPT; l++) {
        int c = lid + l * WG;
        int r, kk; /* tile coordinates of the vector's first element */
        if (contig_mn) {
            kk = c / (TILE / VW);
            r = (c % (TILE / VW)) * VW;
        } else {
            r = c / (KWG / VW);
            kk = (c % (KWG / VW)) * VW;
        }
        int gr = r0 + r, gk = k0 + kk;
        idx_t at = contig_mn ? (idx_t)gk * ldx + gr : (idx_t)gr * ldx + gk;
        int full = contig_mn ? (gk < Kn && gr + VW <= R) : (gr < R && gk + VW <= Kn);
        if (full) {
            floatv v = aligned ? *(__global const floatv *)(X + at) : VLOAD(0, X + at);
            VSTORE(v, 0, regs + l * VW);
        } else {
#pragma unroll
            for (int e = 0; e < VW; e++) {
                int ok = contig_mn ? (gk < Kn && gr + e < R) : (gr < R && gk + e < Kn);
                regs[l * VW + e] = ok ? X[at + e] : 0.0f;
            }
        }
    }
}

/* Write fetched registers into a k-major local slice S[KWG][TILE]. */
inline void gemm_stash(__local float *S, int contig_mn, int TILE, int LPT, int lid, const float *regs)
{
#pragma unroll
    for (int l = 0; l < LPT; l++) {
        int c = lid + l * WG;
        if (contig_mn) {
            int kk = c / (TILE / VW), r = (c % (TILE / VW)) * VW;
            *(__local floatv *)(S + kk * TILE + r) = VLOAD(0, regs + l * VW);
        } else {
            int r = c / (KWG / VW), kk = (c % (KWG / VW)) * VW;
#pragma unroll
            for (int e = 0; e < VW; e++)
                S[(kk + e) * TILE + r] = regs[l * VW + e];
        }
    }
}

inline void gemm_tiled_body(GEMM_ARGS, const int ta, const int tb, __local float *As,
                            __local float *Bs)
{
    GEMM_SETUP(get_global_id(2));
    const int lid = get_local_id(0);
    const int tx = lid % NDIMC, ty = lid / NDIMC;
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
    const int steps = (K + KWG - 1) / KWG;
    if (steps > 0) {
        gemm_fetch(A, lda, va, a_mn, MWG, A_LPT, lid, m0, M, 0, K, ra);
        gemm_fetch(B, ldb, vb, b_mn, NWG, B_LPT, lid, n0, N, 0, K, rb);
        gemm_stash(As, a_mn, MWG, A_LPT, lid, ra);
        gemm_stash(Bs, b_mn, NWG, B_LPT, lid, rb);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = 0; s < steps; s++) {
        const int more = s + 1 < steps;
        if (more) {
            gemm_fetch(A, lda, va, a_mn, MWG, A_LPT, lid, m0, M, (s + 1) * KWG, K, ra);
            gemm_fetch(B, ldb, vb, b_mn, NWG, B_LPT, lid, n0, N, (s + 1) * KWG, K, rb);
        }
        __local const float *as = As + (DB ? (s & 1) : 0) * (KWG * MWG);
        __local const float *bs = Bs + (DB ? (s & 1) : 0) * (KWG * NWG);
#pragma unroll
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
    __kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void name(GEMM_ARGS)                  \
    {                                                                                              \
        __local float As[NBUF * KWG * MWG] __attribute__((aligned(16)));                           \
        __local float Bs[NBUF * KWG * NWG] __attribute__((aligned(16)));                           \
        gemm_tiled_body(A, B, C, bias, R, offs, strides, lds, dims, sc, ta, tb, As, Bs);           \
    }

GEMM_TILED_KERNEL(gemm_tiled_nn, 0, 0)
GEMM_TILED_KERNEL(gemm_tiled_nt, 0, 1)
GEMM_TILED_KERNEL(gemm_tiled_tn, 1, 0)
GEMM_TILED_KERNEL(gemm_tiled_tt, 1, 1)
