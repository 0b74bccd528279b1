/* Losses (include/cltensor_loss.h): cross-entropy fused with log-softmax, and the elementwise losses
 * (BCE with logits, L1, smooth L1), each with its gradient in the same pass.
 *
 * Work split: NG work-groups of WG items (the host picks NG <= the rows / elements). ce_rows: group
 * g takes rows g, g + NG, ... one at a time; its items stream the row with an online softmax (max
 * and rescaled sum of exp) plus the plain sums the smoothed / probability targets need, merged by a
 * tree in local memory; then, with a gradient, a second pass writes dz = scale * (softmax - q).
 * pointwise_loss: a grid-stride loop over elements.
 *
 * Scalar reductions: each group sums its values in a fixed order (item partials, then the tree),
 * writes its partial to ws, bumps the counter at ws[0]; the group that brings it to NG adds the NG
 * partials in group order, writes the loss and resets the counter for the next launch. No float
 * atomics, so the result is deterministic for a given NG and WG.
 *
 * ws: uint counter, 3 uints of padding, then NG floats. Offsets in elements.
 * -D contract: WG, a power of two, the exact local size.
 */
#ifndef WG
#define WG 256
#endif
#if (WG & (WG - 1)) != 0 || WG < 1
#error "WG must be a power of two"
#endif

#include "common/cpu_lanes.h"
#include "common/group_sum.h"

#define F_PROB 1u    /* ce: probability targets */
#define F_GRAD 2u    /* write the gradient */
#define F_SCALAR 4u  /* reduce to one value (mean or sum) */
#define F_MEAN 8u    /* mean (with F_SCALAR) */
#define F_POSW 16u   /* pointwise: pos_weight given */

#define MODE_BCE 0u
#define MODE_L1 1u
#define MODE_SMOOTH_L1 2u

#define WS_HEAD 4 /* uints before the partials */

/* The last group to finish adds the NG partials in order; returns 1 in that group (to every item),
 * with the total in *total. Must be called by every item of every group. */
static inline int last_group_total(__global uint *ws, __local float *buf, __local int *last,
                                   float group_value, uint lid, float *total)
{
    const uint NG = get_num_groups(0);
    __global volatile float *partials = (__global volatile float *)(ws + WS_HEAD);
    if (lid == 0)
        partials[get_group_id(0)] = group_value;
    mem_fence(CLK_GLOBAL_MEM_FENCE);
    barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
    if (lid == 0)
        *last = atomic_inc(&ws[0]) == NG - 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (!*last)
        return 0;
    mem_fence(CLK_GLOBAL_MEM_FENCE);
    float s = 0.0f;
    for (uint g = lid; g < NG; g += WG)
        s += partials[g];
    *total = group_sum1(buf, s, lid);
    if (lid == 0)
        atomic_xchg(&ws[0], 0u); /* ready for the next launch */
    return 1;
}

typedef struct ce_acc {
    float m, s;     /* running max and sum of exp(z - m) */
    float sz, spz, sp; /* sum z, sum p z, sum p (probability targets) */
} ce_acc;

static inline ce_acc ce_merge(ce_acc a, ce_acc b)
{
    if (b.m == -INFINITY) {
        a.sz += b.sz, a.spz += b.spz, a.sp += b.sp;
        return a;
    }
    if (a.m == -INFINITY) {
        b.sz += a.sz, b.spz += a.spz, b.sp += a.sp;
        return b;
    }
    float m = fmax(a.m, b.m);
    ce_acc r;
    r.m = m;
    r.s = a.s * exp(a.m - m) + b.s * exp(b.m - m);
    r.sz = a.sz + b.sz, r.spz = a.spz + b.spz, r.sp = a.sp + b.sp;
    return r;
}

#if WG == 1
/* CPU devices (WG 1: one work item per row): the row in float8 lanes, so that exp reaches SLEEF's
 * vector form (POCL leaves exp scalar in a per-element loop: cross_entropy/4096x32000 spent ~1.6 s
 * there). Two passes instead of the online softmax (one exp per element, not two): the max, then
 * the sum of exp(z - max) and the plain sums; a scalar tail of K % 8. NaN logits give a NaN loss
 * as in the online form. */
static inline void ce_row_stats_cpu(__global const float *zr, __global const float *pr, ulong K,
                                    uint prob, float *lse, float *sz, float *spz, float *sp)
{
    const ulong K8 = K & ~(ulong)7;
    float8 mx = (float8)(-INFINITY);
    for (ulong k = 0; k < K8; k += 8)
        mx = fmax(mx, vload8(0, zr + k));
    float4 m4 = fmax(mx.lo, mx.hi);
    float m = fmax(fmax(m4.x, m4.y), fmax(m4.z, m4.w));
    for (ulong k = K8; k < K; k++)
        m = fmax(m, zr[k]);
    float8 s8 = 0.0f, z8 = 0.0f, pz8 = 0.0f, p8 = 0.0f;
    for (ulong k = 0; k < K8; k += 8) {
        float8 v = vload8(0, zr + k);
        s8 += exp(v - m);
        z8 += v;
        if (prob) {
            float8 p = vload8(0, pr + k);
            pz8 += p * v;
            p8 += p;
        }
    }
    float s = lanes_hsum8(s8), a = lanes_hsum8(z8), b = lanes_hsum8(pz8), c = lanes_hsum8(p8);
    for (ulong k = K8; k < K; k++) {
        float v = zr[k];
        s += exp(v - m);
        a += v;
        if (prob) {
            b += pr[k] * v;
            c += pr[k];
        }
    }
    *lse = m + log(s);
    *sz = a;
    *spz = b;
    *sp = c;
}
#endif

/* off = (logits, target, loss, dlogits); dims = (R, K); hp = (label_smoothing, -, -, -). */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
ce_rows(__global const float *z, __global const int *tidx, __global const float *tprob,
        __global float *loss, __global float *dz, __global uint *ws, ulong4 off, ulong2 dims,
        float smoothing, int ignore_index, uint flags)
{
    __local float m_buf[WG], s_buf[WG], z_buf[WG], pz_buf[WG], p_buf[WG];
    __local float buf[WG];
    __local int last;
    const uint lid = get_local_id(0);
    const ulong R = dims.s0, K = dims.s1;
    const float inv_k = 1.0f / (float)K;
    /* mean over class targets: the number of rows not ignored, counted by every group */
    float count = (float)R;
    if ((flags & F_MEAN) && !(flags & F_PROB)) {
        float c = 0.0f;
        for (ulong r = lid; r < R; r += WG)
            c += tidx[off.s1 + r] != ignore_index ? 1.0f : 0.0f;
        count = group_sum1(buf, c, lid);
    }
    const float gscale = (flags & F_MEAN) ? 1.0f / count : 1.0f;
    float group_loss = 0.0f;
    for (ulong r = get_group_id(0); r < R; r += get_num_groups(0)) {
        __global const float *zr = z + off.s0 + r * K;
        __global const float *pr = tprob + off.s1 + r * K;
        float lse, sz, spz, sp;
#if WG == 1
        ce_row_stats_cpu(zr, pr, K, flags & F_PROB, &lse, &sz, &spz, &sp);
#else
        ce_acc a = {-INFINITY, 0.0f, 0.0f, 0.0f, 0.0f};
        for (ulong k = lid; k < K; k += WG) {
            float v = zr[k];
            if (v > a.m) {
                a.s = a.s * exp(a.m - v) + 1.0f;
                a.m = v;
            } else {
                a.s += exp(v - a.m);
            }
            a.sz += v;
            if (flags & F_PROB) {
                float p = pr[k];
                a.spz += p * v;
                a.sp += p;
            }
        }
        m_buf[lid] = a.m, s_buf[lid] = a.s, z_buf[lid] = a.sz, pz_buf[lid] = a.spz, p_buf[lid] = a.sp;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint w = WG / 2; w > 0; w >>= 1) {
            if (lid < w) {
                ce_acc b = {m_buf[lid + w], s_buf[lid + w], z_buf[lid + w], pz_buf[lid + w], p_buf[lid + w]};
                ce_acc c = {m_buf[lid], s_buf[lid], z_buf[lid], pz_buf[lid], p_buf[lid]};
                c = ce_merge(c, b);
                m_buf[lid] = c.m, s_buf[lid] = c.s, z_buf[lid] = c.sz, pz_buf[lid] = c.spz, p_buf[lid] = c.sp;
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        lse = m_buf[0] + log(s_buf[0]);
        sz = z_buf[0], spz = pz_buf[0], sp = p_buf[0];
        barrier(CLK_LOCAL_MEM_FENCE); /* the buffers are reused by the next row */
#endif
        float row_loss;
        int t = 0, ignored = 0, bad = 0;
        if (flags & F_PROB) {
            /* q = (1 - e) p + e / K: sum q (lse - z) = lse * sum q - sum q z */
            float sq = (1.0f - smoothing) * sp + smoothing;
            float sqz = (1.0f - smoothing) * spz + smoothing * inv_k * sz;
            row_loss = lse * sq - sqz;
        } else {
            t = tidx[off.s1 + r];
            ignored = t == ignore_index;
            bad = !ignored && (t < 0 || (ulong)t >= K);
            if (ignored)
                row_loss = 0.0f;
            else if (bad)
                row_loss = NAN;
            else
                row_loss = lse - (1.0f - smoothing) * zr[t] - smoothing * inv_k * sz;
        }
        if (lid == 0) {
            if (flags & F_SCALAR)
                group_loss += row_loss;
            else
                loss[off.s2 + r] = row_loss;
        }
        if (flags & F_GRAD) {
            __global float *dr = dz + off.s3 + r * K;
            ulong k0 = lid;
#if WG == 1
            /* class targets, all but the target's own element: q = e / K (the target's is
             * rewritten below); probability targets: q from p */
            const ulong K8 = K & ~(ulong)7;
            for (; k0 < K8; k0 += 8) {
                float8 q = (flags & F_PROB) ? (1.0f - smoothing) * vload8(0, pr + k0) + smoothing * inv_k
                                            : (float8)(0.0f + smoothing * inv_k);
                float8 g = ignored ? (float8)(0.0f) : bad ? (float8)(NAN) : gscale * (exp(vload8(0, zr + k0) - lse) - q);
                vstore8(g, 0, dr + k0);
            }
            if (!(flags & F_PROB) && !ignored && !bad && (ulong)t < K8)
                dr[t] = gscale * (exp(zr[t] - lse) - ((1.0f - smoothing) + smoothing * inv_k));
#endif
            for (ulong k = k0; k < K; k += WG) {
                float g;
                if (ignored)
                    g = 0.0f;
                else if (bad)
                    g = NAN;
                else {
                    float q = (flags & F_PROB) ? (1.0f - smoothing) * pr[k] + smoothing * inv_k
                                               : ((ulong)t == k ? 1.0f - smoothing : 0.0f) + smoothing * inv_k;
                    g = gscale * (exp(zr[k] - lse) - q);
                }
                dr[k] = g;
            }
        }
    }
    if (!(flags & F_SCALAR))
        return;
    float total;
    if (last_group_total(ws, buf, &last, group_loss, lid, &total) && lid == 0)
        loss[off.s2] = (flags & F_MEAN) ? total / count : total;
}

static inline float softplus_f(float v)
{
    /* log(1 + exp(v)) without overflow: max(v, 0) + log1p(exp(-|v|)) */
    return fmax(v, 0.0f) + log1p(exp(-fabs(v)));
}

/* off = (x, y, pos_weight, loss, dx, -, -, -); dims = (n, D); sc = (beta, grad scale, loss scale). */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
pointwise_loss(__global const float *x, __global const float *y, __global const float *posw,
               __global float *loss, __global float *dx, __global uint *ws, ulong8 off, ulong2 dims,
               float4 sc, uint mode, uint flags)
{
    __local float buf[WG];
    __local int last;
    const uint lid = get_local_id(0);
    const ulong n = dims.s0, D = dims.s1;
    const float beta = sc.s0, gscale = sc.s1;
    float acc = 0.0f;
    for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) {
        float xv = x[off.s0 + i], yv = y[off.s1 + i], l, g;
        if (mode == MODE_BCE) {
            float pw = (flags & F_POSW) ? posw[off.s2 + i % D] : 1.0f;
            l = pw * yv * softplus_f(-xv) + (1.0f - yv) * softplus_f(xv);
            float sig = 1.0f / (1.0f + exp(-xv));
            g = sig * (pw * yv + 1.0f - yv) - pw * yv;
        } else {
            float d = xv - yv, ad = fabs(d);
            float sgn = d > 0.0f ? 1.0f : (d < 0.0f ? -1.0f : 0.0f);
            if (mode == MODE_SMOOTH_L1 && ad < beta) {
                l = 0.5f * d * d / beta;
                g = d / beta;
            } else {
                l = mode == MODE_SMOOTH_L1 ? ad - 0.5f * beta : ad;
                g = sgn;
            }
        }
        if (flags & F_SCALAR)
            acc += l;
        else
            loss[off.s3 + i] = l;
        if (flags & F_GRAD)
            dx[off.s4 + i] = gscale * g;
    }
    if (!(flags & F_SCALAR))
        return;
    float group_total = group_sum1(buf, acc, lid), total;
    if (last_group_total(ws, buf, &last, group_total, lid, &total) && lid == 0)
        loss[off.s3] = total * sc.s2;
}
