/* GEMM, CPU style (POCL): C = act(alpha * op(A) op(B) + beta * C + bias) + residual, row-major f32.
 *
 * Algorithm: each work item owns RPI rows x NV consecutive columns of C and walks all of K itself,
 * with explicit vectors that map onto the CPU's SIMD registers (accumulators are named variables:
 * POCL keeps private arrays of vectors on the stack):
 *  - op(B) contiguous along n (gemm_cpu_?n): "axpy" form, RPI accumulators of floatNV;
 *    acc[r] += op(A)[i0 + r][p] * op(B)[p][j0 .. j0 + NV). The items of a group take consecutive
 *    row blocks of the same columns and stage KB rows of that B panel in local memory (a contiguous
 *    copy, two barriers per KB rows): streaming B straight from global memory with a power-of-two
 *    ldb aliases every row into the same cache sets (1024^3 ran at 15-24 GFLOP/s that way, ~37 now).
 *  - op(B) contiguous along k (gemm_cpu_?t): "dot" form, float8 partial sums along k for RPI rows
 *    x 2 columns at a time, summed across lanes at the end, the k tail done in scalars.
 * Rows and columns past the edge are clamped to the last valid one for loading (always in bounds)
 * and simply not stored, so the inner loops carry no guards.
 *
 * Layout: as gemm_tiled.cl (op(A) m x k, op(B) k x n, leading dimensions in elements).
 * Grid: (ceil(m / RPI) rounded up to the local size, ceil(n / NV), batch), local (L, 1, 1), any L.
 *
 * -D contract: RPI, NV, KB (below), plus IDX64 and ACT of common/gemm_common.h.
 */
#include "common/gemm_common.h"

#ifndef RPI
#define RPI 4 /* rows of C per work item */
#endif
#ifndef KB
#define KB 256 /* axpy form: rows of the B panel a work-group stages per step */
#endif
#ifndef NV
#define NV 16 /* columns of C per work item: 8 or 16 (the vector width of the axpy form) */
#endif

#include "common/cpu_rows.h"

static inline void gemm_cpu_store(__global float *C, idx_t ldc, const gemm_epi *e, const float *vals, int i,
                           int j0, int cnt)
{
    int e4 = 0;
    for (; e4 + 4 <= cnt; e4 += 4)
        gemm_store4(C, ldc, e, vload4(0, vals + e4), i, j0 + e4);
    for (; e4 < cnt; e4++)
        gemm_store1(C, ldc, e, vals[e4], i, j0 + e4);
}

/* Row r's base pointer: op(A)[row][p] is a_r[p * astep]. */
#define CPU_ROW_PTR(r)                                                                             \
    __global const float *a##r = A + (ta ? (idx_t)min(i0 + r, M - 1)                               \
                                         : (idx_t)min(i0 + r, M - 1) * lda);
#define AXPY_DECL(r) floatn acc##r = (floatn)(0.0f);
#define AXPY_STEP(r) acc##r += a##r[ap] * bv;
#define AXPY_STORE(r)                                                                              \
    if (i0 + r < M) {                                                                              \
        VSTOREN(acc##r, 0, vals);                                                                  \
        gemm_cpu_store(C, ldc, &epi, vals, i0 + r, j0, cnt);                                       \
    }

static inline __attribute__((always_inline)) void gemm_cpu_axpy(GEMM_ARGS, const int ta, __local float *Bs)
{
    GEMM_SETUP(get_global_id(2));
    /* No early return: every item takes part in the barriers. Rows past m are clamped. */
    const int i0 = get_global_id(0) * RPI, j0 = get_global_id(1) * NV;
    const int lid = get_local_id(0), L = get_local_size(0);
    const idx_t astep = ta ? lda : 1;
    const int full = j0 + NV <= N;
    FOR_ROWS(CPU_ROW_PTR)
    FOR_ROWS(AXPY_DECL)
    idx_t ap = 0;
    for (int k0 = 0; k0 < K; k0 += KB) {
        const int kn = min(KB, K - k0);
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int p = lid; p < kn; p += L) {
            __global const float *bp = B + (idx_t)(k0 + p) * ldb;
            if (full) {
                VSTOREN(VLOADN(0, bp + j0), p, Bs);
            } else {
                for (int e = 0; e < NV; e++)
                    Bs[p * NV + e] = bp[min(j0 + e, N - 1)];
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int p = 0; p < kn; p++, ap += astep) {
            floatn bv = VLOADN(p, Bs);
            FOR_ROWS(AXPY_STEP)
        }
    }
    const int cnt = min(NV, N - j0);
    float vals[NV];
    FOR_ROWS(AXPY_STORE)
}

static inline float gemm_hsum8(float8 v)
{
    float4 s = v.lo + v.hi;
    return (s.x + s.y) + (s.z + s.w);
}

#define DOT_DECL(r) float8 d0##r = (float8)(0.0f), d1##r = (float8)(0.0f);
#define DOT_STEP(r)                                                                                \
    {                                                                                              \
        float8 av;                                                                                 \
        if (ta) {                                                                                  \
            float t[8];                                                                            \
            for (int e = 0; e < 8; e++)                                                            \
                t[e] = a##r[(idx_t)(p + e) * lda];                                                 \
            av = vload8(0, t);                                                                     \
        } else {                                                                                   \
            av = vload8(0, a##r + p);                                                              \
        }                                                                                          \
        d0##r += av * v0;                                                                          \
        d1##r += av * v1;                                                                          \
    }
#define DOT_SUM(r) float s0##r = gemm_hsum8(d0##r), s1##r = gemm_hsum8(d1##r);
#define DOT_TAIL(r)                                                                                \
    {                                                                                              \
        float a = a##r[(idx_t)p * astep];                                                          \
        s0##r += a * b0[p];                                                                        \
        s1##r += a * b1[p];                                                                        \
    }
#define DOT_STORE(r)                                                                               \
    if (i0 + r < M) {                                                                              \
        gemm_store1(C, ldc, &epi, s0##r, i0 + r, c0);                                              \
        if (jc + 1 < cnt)                                                                          \
            gemm_store1(C, ldc, &epi, s1##r, i0 + r, c0 + 1);                                      \
    }

static inline __attribute__((always_inline)) void gemm_cpu_dot(GEMM_ARGS, const int ta)
{
    GEMM_SETUP(get_global_id(2));
    const int i0 = get_global_id(0) * RPI, j0 = get_global_id(1) * NV;
    if (j0 >= N || i0 >= M)
        return;
    const idx_t astep = ta ? lda : 1;
    FOR_ROWS(CPU_ROW_PTR)
    const int cnt = min(NV, N - j0);
    for (int jc = 0; jc < cnt; jc += 2) {
        const int c0 = j0 + jc, c1 = min(j0 + jc + 1, N - 1);
        __global const float *b0 = B + (idx_t)c0 * ldb, *b1 = B + (idx_t)c1 * ldb;
        FOR_ROWS(DOT_DECL)
        int p = 0;
        for (; p + 8 <= K; p += 8) {
            float8 v0 = vload8(0, b0 + p), v1 = vload8(0, b1 + p);
            FOR_ROWS(DOT_STEP)
        }
        FOR_ROWS(DOT_SUM)
        for (; p < K; p++) {
            FOR_ROWS(DOT_TAIL)
        }
        FOR_ROWS(DOT_STORE)
    }
}

__kernel void gemm_cpu_nn(GEMM_ARGS)
{
    __local float Bs[KB * NV];
    gemm_cpu_axpy(A, B, C, bias, R, offs, strides, lds, dims, sc, 0, Bs);
}
__kernel void gemm_cpu_tn(GEMM_ARGS)
{
    __local float Bs[KB * NV];
    gemm_cpu_axpy(A, B, C, bias, R, offs, strides, lds, dims, sc, 1, Bs);
}
__kernel void gemm_cpu_nt(GEMM_ARGS) { gemm_cpu_dot(A, B, C, bias, R, offs, strides, lds, dims, sc, 0); }
__kernel void gemm_cpu_tt(GEMM_ARGS) { gemm_cpu_dot(A, B, C, bias, R, offs, strides, lds, dims, sc, 1); }
