/* GEMM on NVIDIA tensor cores through inline PTX: C = act(alpha * op(A) op(B) + beta * C + bias) +
 * residual, f32 in and out, TF32 products (mma.sync.m16n8k8) with f32 accumulation. NVIDIA only
 * (the host builds it when the device reports compute capability >= 8.0).
 *
 * Algorithm: a work-group of WARPS_M x WARPS_N warps computes a BM x BN tile of C (each warp a 16 MI x 64
 * block: MI x 8 mma tiles of 16 x 8). K is walked in slices of 16, staged global -> local by cp.async
 * (no registers in between) in a STAGES-deep ring: slice t + STAGES - 1 is in flight while slice t is
 * multiplied; one barrier per slice.
 *
 * The arithmetic (TF32 rounding, 3xTF32 split, the fragments of a slice): common/mma_tf32.h.
 *
 * Edges: out-of-range rows/columns/k are zero-filled by cp.async's source size and never stored, so
 * any m, n, k works. CPW (copy width) 4 needs A/B + offset, ld and batch stride multiples of 4
 * elements (16-byte cp.async); CPW 1 copies single elements (any alignment).
 *
 * Grid: (n tiles * WG, m tiles, batch), local (WG, 1, 1), WG = 32 * WARPS_M * WARPS_N.
 * -D contract: WARPS_M, WARPS_N, STAGES, ROUND, CPW, MI, plus IDX64 and ACT of common/gemm_common.h. */

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

#ifndef MI
#define MI 4 /* m16 tiles per warp: warp tiles of 64 x 64 (4), or 32 x 64 (2: twice the warps for a thin A) */
#endif
#if MI != 4 && MI != 2
#error "MI is 4 or 2"
#endif

#define WG (32 * WARPS_M * WARPS_N)
#define BM (16 * MI * WARPS_M)
#define BN (64 * WARPS_N)
#define BK 16
#define NJ 8 /* n8 tiles per warp */
#define MMA_ET float
#define MMA_EPC 4
#include "common/mma_pipeline.h"
#include "common/mma_tf32.h"

static inline __attribute__((always_inline)) void
gemm_mma_body(GEMM_ARGS, const int TA, const int TB, __local float *As, __local float *Bs)
{
    GEMM_SETUP(get_group_id(2));
    MMA_WARP_SETUP();
    for (int t = 0; t < slices; t++) {
        MMA_NEXT_SLICE(t);
        mma_tf32_slice(acc, As + (t % STAGES) * BM * BK, Bs + (t % STAGES) * BN * BK, a_kc, b_kc, wm0, wn0,
                       g, q);
    }
    mma_drain();
    mma_store_acc(C, ldc, &epi, acc, M, N, m0 + wm0, n0 + wn0, a_kc, b_kc, g, q);
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
