/* Shared by every GEMM kernel family (gemm.cl, gemm_tiled.cl, gemm_cpu.cl): the argument list, the
 * index type, and the fused epilogue C = act(alpha * acc + beta * C + bias) + residual, or with a
 * dact code in flag bits 7-8: C = (alpha * acc + beta * C + bias) * dact'(y), y read through the
 * residual slot (R, r_off, ldr) and never combined with an activation or a residual (host checks).
 *
 * Arguments (one signature for all variants, so the host sets them in one place):
 *   A, B, C, bias, R (bias / R: any buffer when unused; the flags say whether they are read)
 *   offs    = (a_off, b_off, c_off, r_off)       elements
 *   strides = (a_stride, b_stride, c_stride, bias_off)   batch strides in elements; R uses c_stride
 *   lds     = (lda, ldb, ldc, ldr)
 *   dims    = (m, n, k, flags)
 *   sc      = (alpha, beta, act_alpha, unused)
 * beta == 0: C is not read (NaN in C is overwritten).
 *
 * -D contract: IDX64 (0/1, default 0): 64-bit element indices inside one matrix; the host sets it
 * when any matrix spans 2^31 elements or more (batch offsets are always 64-bit). ACT: the
 * activation function name (clt_act_relu, ...); absent means identity. IN16 / OUT16 (default 0:
 * f32): the storage of A and B / of C, 1 f16, 2 bf16; values are converted to f32 on load and C
 * rounded (nearest even) on store. gemm_tiled.cl takes both; gemm_mma16.cl OUT16 (its operands are
 * 16-bit by definition) and gemm_wgmma.cl both; the other families are f32 only. */
#ifndef CLT_GEMM_COMMON_H
#define CLT_GEMM_COMMON_H

#include "common/activations.h"

#ifndef IN16
#define IN16 0
#endif
#ifndef OUT16
#define OUT16 0
#endif
#if IN16 || OUT16
#include "common/half_bf16.h"
#endif
#if IN16 == 0
typedef float gemm_in_t;
#define GEMM_LOAD_IN(p, i) ((p)[i])
#elif IN16 == 1
typedef half gemm_in_t;
#define GEMM_LOAD_IN(p, i) vload_half((i), (p))
#else
typedef ushort gemm_in_t;
#define GEMM_LOAD_IN(p, i) clt_bf16_to_f32((p)[i])
#endif
#if OUT16 == 0
typedef float gemm_out_t;
#define GEMM_LOAD_OUT(p) (*(p))
#define GEMM_STORE_OUT(v, p) (*(p) = (v))
#elif OUT16 == 1
typedef half gemm_out_t;
#define GEMM_LOAD_OUT(p) vload_half(0, (p))
#define GEMM_STORE_OUT(v, p) vstore_half_rte((v), 0, (p))
#else
typedef ushort gemm_out_t;
#define GEMM_LOAD_OUT(p) clt_bf16_to_f32(*(p))
#define GEMM_STORE_OUT(v, p) (*(p) = clt_f32_to_bf16(v))
#endif

#ifndef IDX64
#define IDX64 0
#endif
#if IDX64
typedef long idx_t;
#else
typedef int idx_t;
#endif

#define GEMM_F_VEC_A 1    /* A + a_off, lda and a_stride are multiples of 4 elements */
#define GEMM_F_VEC_B 2
#define GEMM_F_VEC_C 4    /* the same for C (and for R when there is one) */
#define GEMM_F_BIAS_COL 8 /* bias[j] */
#define GEMM_F_BIAS_ROW 16 /* bias[i] */
#define GEMM_F_RESIDUAL 32
#define GEMM_F_CONTIG_K 64 /* gemv: the matrix operand is contiguous along k */
#define GEMM_F_DACT_SHIFT 7 /* bits 7-8: 1 tanh, 2 sigmoid, 3 relu (src/ops/gemm/gemm.h CLT__GEMM_DACT_*) */
#define GEMM_F_DACT (3 << GEMM_F_DACT_SHIFT)

/* The derivative of the forward activation written from its output y; run-time selected (a
 * uniform branch: no program variant per derivative). */
static inline float gemm_dact(int flags, float y)
{
    switch ((flags >> GEMM_F_DACT_SHIFT) & 3) {
    case 1: return clt_dact_tanh(y, 0.0f);
    case 2: return clt_dact_sigmoid(y, 0.0f);
    default: return clt_dact_relu(y, 0.0f);
    }
}

#define GEMM_ARGS                                                                                  \
    __global const gemm_in_t *A, __global const gemm_in_t *B, __global gemm_out_t *C,              \
        __global const float *bias, __global const float *R, ulong4 offs, ulong4 strides,         \
        long4 lds, int4 dims, float4 sc

/* Per-launch epilogue state, after the batch offsets are applied. */
typedef struct gemm_epi {
    float alpha, beta, act_alpha;
    int flags;
    __global const float *bias;
    __global const float *R;
    idx_t ldr;
} gemm_epi;

/* Base pointers of batch `b`; fills the epilogue state. */
#define GEMM_SETUP(b)                                                                              \
    const int M = dims.x, N = dims.y, K = dims.z, FLAGS = dims.w;                                  \
    const idx_t lda = (idx_t)lds.x, ldb = (idx_t)lds.y, ldc = (idx_t)lds.z;                        \
    A += offs.x + (ulong)(b) * strides.x;                                                          \
    B += offs.y + (ulong)(b) * strides.y;                                                          \
    C += offs.z + (ulong)(b) * strides.z;                                                          \
    gemm_epi epi;                                                                                  \
    epi.alpha = sc.x;                                                                              \
    epi.beta = sc.y;                                                                               \
    epi.act_alpha = sc.z;                                                                          \
    epi.flags = FLAGS;                                                                             \
    epi.bias = bias + strides.w;                                                                   \
    epi.R = R + offs.w + (ulong)(b) * strides.z;                                                   \
    epi.ldr = (idx_t)lds.w

#ifdef ACT
#define GEMM_ACT(v, a) ACT(v, a)
#else
#define GEMM_ACT(v, a) (v)
#endif

/* The epilogue of one element; `cold` is C's old value, read only when beta != 0. */
static inline float gemm_epi_value(const gemm_epi *e, float acc, float cold, idx_t i, idx_t j)
{
    float v = e->alpha * acc;
    if (e->beta != 0.0f)
        v += e->beta * cold;
    if (e->flags & GEMM_F_BIAS_COL)
        v += e->bias[j];
    else if (e->flags & GEMM_F_BIAS_ROW)
        v += e->bias[i];
    v = GEMM_ACT(v, e->act_alpha);
    if (e->flags & GEMM_F_RESIDUAL)
        v += e->R[i * e->ldr + j];
    if (e->flags & GEMM_F_DACT)
        v *= gemm_dact(e->flags, e->R[i * e->ldr + j]);
    return v;
}

/* Guarded scalar store of element (i, j) of C. */
static inline void gemm_store1(__global gemm_out_t *C, idx_t ldc, const gemm_epi *e, float acc, idx_t i, idx_t j)
{
    __global gemm_out_t *p = C + i * ldc + j;
    float cold = e->beta != 0.0f ? GEMM_LOAD_OUT(p) : 0.0f;
    GEMM_STORE_OUT(gemm_epi_value(e, acc, cold, i, j), p);
}

/* Four consecutive elements (i, j..j+3) of C, all inside; one float4 store when C is aligned. */
static inline void gemm_store4(__global gemm_out_t *C, idx_t ldc, const gemm_epi *e, float4 acc, idx_t i, idx_t j)
{
#if !OUT16
    __global float *p = C + i * ldc + j;
    if (e->flags & GEMM_F_VEC_C) {
        float4 cold = e->beta != 0.0f ? *(__global float4 *)p : (float4)(0.0f);
        float4 v = e->alpha * acc;
        if (e->beta != 0.0f)
            v += e->beta * cold;
        if (e->flags & GEMM_F_BIAS_COL)
            v += vload4(0, e->bias + j);
        else if (e->flags & GEMM_F_BIAS_ROW)
            v += e->bias[i];
        v.x = GEMM_ACT(v.x, e->act_alpha);
        v.y = GEMM_ACT(v.y, e->act_alpha);
        v.z = GEMM_ACT(v.z, e->act_alpha);
        v.w = GEMM_ACT(v.w, e->act_alpha);
        if (e->flags & GEMM_F_RESIDUAL)
            v += *(__global const float4 *)(e->R + i * e->ldr + j);
        if (e->flags & GEMM_F_DACT) {
            float4 y = *(__global const float4 *)(e->R + i * e->ldr + j);
            v *= (float4)(gemm_dact(e->flags, y.x), gemm_dact(e->flags, y.y),
                          gemm_dact(e->flags, y.z), gemm_dact(e->flags, y.w));
        }
        *(__global float4 *)p = v;
    } else
#endif
    {
        gemm_store1(C, ldc, e, acc.x, i, j);
        gemm_store1(C, ldc, e, acc.y, i, j + 1);
        gemm_store1(C, ldc, e, acc.z, i, j + 2);
        gemm_store1(C, ldc, e, acc.w, i, j + 3);
    }
}

#endif
