/* GEMM for small and skinny shapes: C = act(alpha * op(A) op(B) + beta * C + bias) + residual,
 * row-major f32, where tiles of the big kernels would be mostly padding.
 *
 * gemm_small_<ta><tb>: one work item per element of C, a plain loop over k. Grid (n, m, batch) rounded
 *   up to the local size; items past the edge return. Items along dim 0 take consecutive columns, so
 *   loads of op(B) coalesce when B is not transposed and op(A) is a broadcast.
 * gemm_gemv_<ta><tb>: for m == 1 or n == 1 (any shape works: output o is (o / n, o % n)). A work-group
 *   of F x S items computes several outputs, splitting k among the items of each output and summing
 *   the partial sums in local memory. With flag CONTIG_K the matrix operand is contiguous along k and
 *   dim 0 (the fast, coalescing one) walks k (F lanes per output, S outputs per group); otherwise
 *   dim 0 walks the outputs (F outputs, S lanes each). Grid (groups * F, S, batch), local (F, S, 1).
 *
 * Layout: op(A) is m x k: A[i * lda + p] or A[p * lda + i] when transposed; op(B) is k x n:
 * B[p * ldb + j] or B[j * ldb + p].
 *
 * -D contract: GEMV_WG (default 256): the largest F * S the host will launch (sizes the local
 * buffer); plus IDX64 and ACT of common/gemm_common.h.
 */
#include "common/gemm_common.h"

#ifndef GEMV_WG
#define GEMV_WG 256
#endif
#if GEMV_WG < 1
#error "GEMV_WG must be positive"
#endif

static inline float gemm_op_a(__global const float *A, idx_t lda, int ta, idx_t i, idx_t p)
{
    return ta ? A[p * lda + i] : A[i * lda + p];
}

static inline float gemm_op_b(__global const float *B, idx_t ldb, int tb, idx_t p, idx_t j)
{
    return tb ? B[j * ldb + p] : B[p * ldb + j];
}

static inline __attribute__((always_inline)) void gemm_small_body(GEMM_ARGS, const int ta, const int tb)
{
    GEMM_SETUP(get_global_id(2));
    const int j = get_global_id(0), i = get_global_id(1);
    if (i >= M || j >= N)
        return;
    float acc = 0.0f;
    for (int p = 0; p < K; p++)
        acc = fma(gemm_op_a(A, lda, ta, i, p), gemm_op_b(B, ldb, tb, p, j), acc);
    gemm_store1(C, ldc, &epi, acc, i, j);
}

static inline __attribute__((always_inline)) void gemm_gemv_body(GEMM_ARGS, const int ta, const int tb, __local float *red)
{
    GEMM_SETUP(get_global_id(2));
    const int l0 = get_local_id(0), l1 = get_local_id(1);
    const int F = get_local_size(0), S = get_local_size(1);
    const int ck = FLAGS & GEMM_F_CONTIG_K;
    const int kl = ck ? l0 : l1, KL = ck ? F : S;
    const int ol = ck ? l1 : l0, OL = ck ? S : F;
    const long o = (long)get_group_id(0) * OL + ol;
    const int valid = o < (long)M * N;
    const idx_t i = valid ? (idx_t)(o / N) : 0, j = valid ? (idx_t)(o % N) : 0;
    float sum = 0.0f;
    if (valid)
        for (int p = kl; p < K; p += KL)
            sum = fma(gemm_op_a(A, lda, ta, i, p), gemm_op_b(B, ldb, tb, p, j), sum);
    red[l1 * F + l0] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (valid && kl == 0) {
        float total = 0.0f;
        for (int t = 0; t < KL; t++)
            total += ck ? red[l1 * F + t] : red[t * F + l0];
        gemm_store1(C, ldc, &epi, total, i, j);
    }
}

#define GEMM_SMALL_KERNELS(tag, ta, tb)                                                            \
    __kernel void gemm_small_##tag(GEMM_ARGS)                                                      \
    {                                                                                              \
        gemm_small_body(A, B, C, bias, R, offs, strides, lds, dims, sc, ta, tb);                   \
    }                                                                                              \
    __kernel void gemm_gemv_##tag(GEMM_ARGS)                                                       \
    {                                                                                              \
        __local float red[GEMV_WG];                                                                \
        gemm_gemv_body(A, B, C, bias, R, offs, strides, lds, dims, sc, ta, tb, red);               \
    }

GEMM_SMALL_KERNELS(nn, 0, 0)
GEMM_SMALL_KERNELS(nt, 0, 1)
GEMM_SMALL_KERNELS(tn, 1, 0)
GEMM_SMALL_KERNELS(tt, 1, 1)
