/* Multi-tensor optimiser steps and clip_grad_norm (include/cltensor_train.h): ONE launch updates up
 * to SLOTS segments, each a contiguous range of up to four f32 roles (a param, b grad, c first
 * moment / momentum buffer, d second moment).
 *
 * Why segments and not a pointer table: OpenCL 1.2 has no pointers inside buffers, so every buffer
 * a launch touches is a kernel argument. The host merges adjacent tensors whose ranges abut in the
 * same buffer for every role (the flat "parameter arena" layout of bench/bench_pinn.c then becomes
 * one segment however many tensors it holds), then launches once per SLOTS segments. Segment j
 * covers the flattened items [ends[j-1], ends[j]); unused slots have ends = the total.
 *
 * mt_apply: one item per element over a full grid. op 0 Adam / AdamW: s = (lr / bias correction 1,
 *   beta1, beta2, eps, L2 weight decay, sqrt(bias correction 2), decoupled decay factor
 *   1 - lr * weight_decay (1 for Adam), -), as cl_kernels/train/train.cl's adam_step. op 1 SGD:
 *   s = (lr, momentum, dampening, weight decay, nesterov, first step, -, -), as torch.optim.SGD.
 *   op 2 scale: a *= min(1, s.s0 / (norm + 1e-6)) with norm = c0[offc.s0] (clip_grad_norm).
 * mt_sumsq: a grid-stride sum of a^2 over the segments; each group writes its partial at
 *   part_base + group; the group that brings the counter ws[0] to total_groups (across the launches
 *   of one clip) adds every partial in order and writes sqrt(sum) to out[out_off].
 *
 * -D contract: WG (mt_sumsq's exact local size, a power of two). mt_apply needs a grid of at least
 * ends.s7 items. MT_CPU (1, CPU devices) adds mt_apply_cpu (16 elements per item).
 */
#ifndef WG
#define WG 256
#endif
#if (WG & (WG - 1)) != 0 || WG < 1
#error "WG must be a power of two"
#endif

#include "common/group_sum.h"

#define WS_HEAD 4

#define SLOT_ARGS(j) __global float *a##j, __global float *b##j, __global float *c##j, __global float *d##j
#define PICK(j, prev)                                                                              \
    if (i >= ends.s##prev) {                                                                       \
        A = a##j + offa.s##j, B = b##j + offb.s##j, Cm = c##j + offc.s##j, D = d##j + offd.s##j;   \
        start = ends.s##prev;                                                                      \
    }

/* The three updates of element(s) e of the picked segment, for T = float (LD / ST one element) and
 * T = float16 (16 elements, mt_apply_cpu): one text, so both kernels compute the same formulas. */
#define MT_OPS(T, LD, ST)                                                                          \
    if (op == 0) {                                                                                 \
        const float beta1 = s.s1, beta2 = s.s2;                                                    \
        T p = LD(A);                                                                               \
        T g = LD(B) + s.s4 * p;                                                                    \
        T mi = beta1 * LD(Cm) + (1.0f - beta1) * g;                                                \
        T vi = beta2 * LD(D) + (1.0f - beta2) * g * g;                                             \
        ST(Cm, mi);                                                                                \
        ST(D, vi);                                                                                 \
        T denom = sqrt(vi) / s.s5 + s.s3;                                                          \
        ST(A, p * s.s6 - s.s0 * (mi / denom));                                                     \
    } else if (op == 1) {                                                                          \
        const float lr = s.s0, momentum = s.s1, dampening = s.s2, wd = s.s3;                       \
        T p = LD(A);                                                                               \
        T g = LD(B) + wd * p;                                                                      \
        if (momentum != 0.0f) {                                                                    \
            T buf = s.s5 != 0.0f ? g : momentum * LD(Cm) + (1.0f - dampening) * g;                \
            ST(Cm, buf);                                                                           \
            g = s.s4 != 0.0f ? g + momentum * buf : buf;                                           \
        }                                                                                          \
        ST(A, p - lr * g);                                                                         \
    } else {                                                                                       \
        const float norm = c0[offc.s0];                                                            \
        const float coef = fmin(1.0f, s.s0 / (norm + 1e-6f));                                      \
        ST(A, LD(A) * coef);                                                                       \
    }
#define MT_LD1(P) (P)[e]
#define MT_ST1(P, v) ((P)[e] = (v))

__kernel void mt_apply(SLOT_ARGS(0), SLOT_ARGS(1), SLOT_ARGS(2), SLOT_ARGS(3), SLOT_ARGS(4),
                       SLOT_ARGS(5), SLOT_ARGS(6), SLOT_ARGS(7), ulong8 offa, ulong8 offb,
                       ulong8 offc, ulong8 offd, ulong8 ends, float8 s, uint op)
{
    const ulong i = get_global_id(0);
    if (i >= ends.s7)
        return;
    __global float *A = a0 + offa.s0, *B = b0 + offb.s0, *Cm = c0 + offc.s0, *D = d0 + offd.s0;
    ulong start = 0;
    PICK(1, 0) PICK(2, 1) PICK(3, 2) PICK(4, 3) PICK(5, 4) PICK(6, 5) PICK(7, 6)
    const ulong e = i - start;
    MT_OPS(float, MT_LD1, MT_ST1)
}

#ifdef MT_CPU
/* CPU devices (-DMT_CPU=1): 16 elements of one segment per work item as float16 (POCL leaves the
 * one-element form scalar: the per-item segment pick and bounds check defeat its vectoriser, so
 * sqrt and the division ran one lane at a time). Segment j has ceil(count_j / 16) chunks; a
 * segment's last chunk may be partial (element by element). Grid: at least the total chunks. */
#define MT_LD16(P) vload16(0, (P) + e)
#define MT_ST16(P, v) vstore16((v), 0, (P) + e)
#define PICK_CHUNK(j, prev)                                                                        \
    if (q >= ce.s##prev) {                                                                         \
        A = a##j + offa.s##j, B = b##j + offb.s##j, Cm = c##j + offc.s##j, D = d##j + offd.s##j;   \
        cstart = ce.s##prev;                                                                       \
        n = ends.s##j - ends.s##prev;                                                              \
    }
#define CHUNK_END(j, prev) ce.s##j = ce.s##prev + (ends.s##j - ends.s##prev + 15) / 16;

__kernel void mt_apply_cpu(SLOT_ARGS(0), SLOT_ARGS(1), SLOT_ARGS(2), SLOT_ARGS(3), SLOT_ARGS(4),
                           SLOT_ARGS(5), SLOT_ARGS(6), SLOT_ARGS(7), ulong8 offa, ulong8 offb,
                           ulong8 offc, ulong8 offd, ulong8 ends, float8 s, uint op)
{
    const ulong q = get_global_id(0);
    ulong8 ce;
    ce.s0 = (ends.s0 + 15) / 16;
    CHUNK_END(1, 0) CHUNK_END(2, 1) CHUNK_END(3, 2) CHUNK_END(4, 3) CHUNK_END(5, 4) CHUNK_END(6, 5)
    CHUNK_END(7, 6)
    if (q >= ce.s7)
        return;
    __global float *A = a0 + offa.s0, *B = b0 + offb.s0, *Cm = c0 + offc.s0, *D = d0 + offd.s0;
    ulong cstart = 0, n = ends.s0;
    PICK_CHUNK(1, 0) PICK_CHUNK(2, 1) PICK_CHUNK(3, 2) PICK_CHUNK(4, 3) PICK_CHUNK(5, 4)
    PICK_CHUNK(6, 5) PICK_CHUNK(7, 6)
    const ulong e0 = (q - cstart) * 16;
    if (e0 + 16 <= n) {
        const ulong e = e0;
        MT_OPS(float16, MT_LD16, MT_ST16)
    } else {
        for (ulong e = e0; e < n; e++) {
            MT_OPS(float, MT_LD1, MT_ST1)
        }
    }
}
#endif

#define SLOT_A(j) __global const float *a##j
#define PICK_A(j, prev)                                                                            \
    if (i >= ends.s##prev) {                                                                       \
        A = a##j + offa.s##j;                                                                      \
        start = ends.s##prev;                                                                      \
    }

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
mt_sumsq(SLOT_A(0), SLOT_A(1), SLOT_A(2), SLOT_A(3), SLOT_A(4), SLOT_A(5), SLOT_A(6), SLOT_A(7),
         ulong8 offa, ulong8 ends, __global uint *ws, __global float *out, ulong out_off,
         uint part_base, uint total_groups)
{
    __local float buf[WG];
    __local int last;
    const uint lid = get_local_id(0);
    float acc = 0.0f;
    for (ulong i = get_global_id(0); i < ends.s7; i += get_global_size(0)) {
        __global const float *A = a0 + offa.s0;
        ulong start = 0;
        PICK_A(1, 0) PICK_A(2, 1) PICK_A(3, 2) PICK_A(4, 3) PICK_A(5, 4) PICK_A(6, 5) PICK_A(7, 6)
        float v = A[i - start];
        acc += v * v;
    }
    const float group_total = group_sum1(buf, acc, lid);
    __global volatile float *partials = (__global volatile float *)(ws + WS_HEAD);
    if (lid == 0)
        partials[part_base + get_group_id(0)] = group_total;
    mem_fence(CLK_GLOBAL_MEM_FENCE);
    barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
    if (lid == 0)
        last = atomic_inc(&ws[0]) == total_groups - 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (!last)
        return;
    mem_fence(CLK_GLOBAL_MEM_FENCE);
    float s = 0.0f;
    for (uint g = lid; g < total_groups; g += WG)
        s += partials[g];
    s = group_sum1(buf, s, lid);
    if (lid == 0) {
        out[out_off] = sqrt(s);
        atomic_xchg(&ws[0], 0u);
    }
}
