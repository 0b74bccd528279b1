/* Row normalisations (include/cltensor_norm.h): layer norm, RMS norm and group norm share these
 * kernels. A "row" is one normalised set of L contiguous elements: a last-axis row (layer / RMS
 * norm: R = numel / D rows of L = D) or one (n, group) block of group norm (L = C / G * HW). The
 * affine parameter of element i of row r is p = (r % G) * (L / S) + i / S: S = 1, G = 1 for layer
 * norm (p = i), S = HW and G = groups for group norm (p = the channel).
 *
 * rownorm_forward: one work-group of WG items per row; pass 1 sums x (mean; skipped for RMS),
 *   pass 2 sums (x - mean)^2 (the centred variance: no cancellation), pass 3 writes y. Rows of up
 *   to RN_REG * WG values stay in registers (read once); longer rows are read three times.
 * rownorm_backward_dx: one group per row: g = dy * gamma, a = mean(g), b = mean(g * xhat),
 *   dx = rstd * (g - a - xhat * b) (RMS: a = 0).
 * rownorm_dparams_cols (S == 1): one item per column p, a loop over rows in order (adjacent items
 *   read adjacent columns): dgamma[p] = sum dy * xhat, dbeta[p] = sum dy.
 * rownorm_dparams_segs (S > 1, group norm): one group per channel over its N * HW elements.
 * rownorm_dparams_split (S == 1, GPUs, WG >= 64): the column sums of rownorm_dparams_cols spread
 *   over strips x blocks work-groups: group (strip s, block b) sums rows [b * rb, + rb) of the
 *   SPLIT_TC columns of strip s, SPLIT_TC adjacent items per row (coalesced) and WG / SPLIT_TC
 *   rows at a time, merges its row lanes in local memory and, with more than one block, writes
 *   the float2 (dgamma, dbeta) partial to ws and counts in at the strip's counter; the last block
 *   of the strip merges the partials in block order (common/last_group.h). One item per column
 *   over 4096 rows (rownorm_dparams_cols) took ~800 us at 4096 x 1024 on an H200: 16 groups.
 *   ws: uint counters[NORM_COUNTERS], then float2 partials[blocks][L]; rb: rows per block.
 *
 * Offsets off = (x, gamma, beta, y, mean, rstd, -, -) for the forward and (dy, x, gamma, mean,
 * rstd, dx, dgamma, dbeta) for the backward kernels, in elements. dims = (R, L, S, G).
 * flags: bit 0 RMS (no mean), bit 1 gamma given, bit 2 beta given (forward) / dbeta wanted
 * (dparams), bit 3 save rstd (forward) / dgamma wanted (dparams), bit 4 save mean (forward), bit
 * 5 float4 rows (forward: S = G = 1, L % 4 == 0, x, y, gamma and beta at offsets of 4 elements).
 *
 * -D contract: WG (a power of two, the exact local size of the row kernels; any local size for
 * rownorm_dparams_cols, whose grid must cover L items), NORM_COUNTERS (counters at the head of the
 * workspace; must match norm_internal.h).
 */
#ifndef WG
#define WG 256
#endif
#if (WG & (WG - 1)) != 0 || WG < 1
#error "WG must be a power of two"
#endif

#ifndef NORM_COUNTERS
#define NORM_COUNTERS 1024
#endif

#include "common/cpu_lanes.h"
#include "common/group_sum.h"
#include "common/last_group.h"

#define F_RMS 1u
#define F_GAMMA 2u
#define F_BETA 4u
#define F_SAVE 8u
#define F_SAVE_MEAN 16u
#define F_VEC4 32u /* forward, layer / RMS norm: L % 4 == 0 and x, y, gamma, beta 16-byte aligned */

static inline ulong param_index(ulong r, ulong i, ulong4 dims)
{
    return dims.s2 == 1 && dims.s3 == 1 ? i : (r % dims.s3) * (dims.s1 / dims.s2) + i / dims.s2;
}

/* y[i] of row r from its normalised value t: times gamma, plus beta, as flags say. */
static inline void rn_store(__global float *yr, ulong i, float t, ulong r, ulong4 dims,
                            __global const float *gamma, __global const float *beta, ulong8 off,
                            uint flags)
{
    if (flags & (F_GAMMA | F_BETA)) {
        const ulong p = param_index(r, i, dims);
        if (flags & F_GAMMA)
            t *= gamma[off.s1 + p];
        if (flags & F_BETA)
            t += beta[off.s2 + p];
    }
    yr[i] = t;
}

/* Item 0 saves row r's mean and rstd, as flags say. */
static inline void rn_save(__global float *mean_out, __global float *rstd_out, ulong8 off, ulong r,
                           float mean, float rstd, uint flags, uint lid)
{
    if (lid == 0 && (flags & F_SAVE_MEAN))
        mean_out[off.s4 + r] = mean;
    if (lid == 0 && (flags & F_SAVE))
        rstd_out[off.s5 + r] = rstd;
}

#if WG == 1
/* CPU devices (WG 1: one work item per row), layer and RMS norm (S = G = 1: the parameter of
 * element i is i): the row in float8 lanes with a scalar tail of L % 8, because POCL leaves one
 * item's loop scalar. Group norm keeps the scalar loops below. */

/* The sum over the row of x (sq 0) or of (x - mean)^2 (sq 1). */
static inline float rn_sum_cpu(__global const float *xr, ulong L, float mean, int sq)
{
    float8 a8 = 0.0f;
    float a = 0.0f;
    lanes_sum_run(xr, L, mean, sq, &a8, &a);
    return lanes_hsum8(a8) + a;
}
#endif

#if WG > 1
/* rownorm_forward for rows of L <= RN_REG * WG: item lid holds values lid, lid + WG, ... of the
 * row in registers (a private array indexed only by unrolled constants), so the row is read from
 * memory once and each item's loads are issued together; the three loops over the row each read
 * it again from cache and waited out one load at a time (H200: layer_norm 4096 x 1024 20.8 us of
 * kernel time, PyTorch 15.2). The sums run in the same order as the general loops: the same bits. */
#define RN_REG 8
static inline void rownorm_forward_regs(__global const float *xr, __global const float *gamma,
                                        __global const float *beta, __global float *yr,
                                        __global float *mean_out, __global float *rstd_out,
                                        ulong8 off, ulong4 dims, float eps, uint flags,
                                        __local float *buf, uint lid, ulong r)
{
    const ulong L = dims.s1;
    float v[RN_REG];
    float s = 0.0f, mean = 0.0f, q = 0.0f;
#pragma unroll
    for (int k = 0; k < RN_REG; k++) {
        const ulong i = lid + (ulong)k * WG;
        v[k] = i < L ? xr[i] : 0.0f;
        s += v[k]; /* zeros past the row add nothing, exactly */
    }
    if (!(flags & F_RMS))
        mean = group_sum1(buf, s, lid) / (float)L;
#pragma unroll
    for (int k = 0; k < RN_REG; k++) {
        const float d = v[k] - mean;
        q += lid + (ulong)k * WG < L ? d * d : 0.0f;
    }
    const float rstd = rsqrt(group_sum1(buf, q, lid) / (float)L + eps);
#pragma unroll
    for (int k = 0; k < RN_REG; k++) {
        const ulong i = lid + (ulong)k * WG;
        if (i < L)
            rn_store(yr, i, (v[k] - mean) * rstd, r, dims, gamma, beta, off, flags);
    }
    rn_save(mean_out, rstd_out, off, r, mean, rstd, flags, lid);
}

/* rownorm_forward_regs in float4s (flags & F_VEC4; layer / RMS norm, so parameter p = i): item
 * lid holds float4s lid, lid + WG, ... of the row. A warp's 16-byte loads move 512 bytes per
 * instruction, four times the scalar form's, so fewer requests keep the same bytes in flight. */
#define RN_REG4 (RN_REG / 4)
static inline void rownorm_forward_regs4(__global const float *xr, __global const float *gamma,
                                         __global const float *beta, __global float *yr,
                                         __global float *mean_out, __global float *rstd_out,
                                         ulong8 off, ulong4 dims, float eps, uint flags,
                                         __local float *buf, uint lid, ulong r)
{
    const ulong L = dims.s1, L4 = L / 4;
    __global const float4 *x4 = (__global const float4 *)xr;
    float4 v[RN_REG4];
    float s = 0.0f, mean = 0.0f, q = 0.0f;
#pragma unroll
    for (int k = 0; k < RN_REG4; k++) {
        const ulong i = lid + (ulong)k * WG;
        v[k] = i < L4 ? x4[i] : (float4)(0.0f);
        s += (v[k].x + v[k].y) + (v[k].z + v[k].w);
    }
    if (!(flags & F_RMS))
        mean = group_sum1(buf, s, lid) / (float)L;
#pragma unroll
    for (int k = 0; k < RN_REG4; k++) {
        const float4 d = v[k] - mean;
        const float4 d2 = d * d;
        q += lid + (ulong)k * WG < L4 ? (d2.x + d2.y) + (d2.z + d2.w) : 0.0f;
    }
    const float rstd = rsqrt(group_sum1(buf, q, lid) / (float)L + eps);
    __global const float4 *g4 = (__global const float4 *)(gamma + off.s1);
    __global const float4 *b4 = (__global const float4 *)(beta + off.s2);
    __global float4 *y4 = (__global float4 *)yr;
#pragma unroll
    for (int k = 0; k < RN_REG4; k++) {
        const ulong i = lid + (ulong)k * WG;
        if (i < L4) {
            float4 t = (v[k] - mean) * rstd;
            if (flags & F_GAMMA)
                t *= g4[i];
            if (flags & F_BETA)
                t += b4[i];
            y4[i] = t;
        }
    }
    rn_save(mean_out, rstd_out, off, r, mean, rstd, flags, lid);
}
#endif

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
rownorm_forward(__global const float *x, __global const float *gamma, __global const float *beta,
                __global float *y, __global float *mean_out, __global float *rstd_out, ulong8 off,
                ulong4 dims, float eps, uint flags)
{
    __local float buf[WG];
    const uint lid = get_local_id(0);
    const ulong r = get_group_id(0), L = dims.s1;
    __global const float *xr = x + off.s0 + r * L;
    __global float *yr = y + off.s3 + r * L;
    float mean = 0.0f;
#if WG > 1
    if (L <= RN_REG * WG) { /* the row in registers: read once, its loads in flight together */
        if (flags & F_VEC4) {
            rownorm_forward_regs4(xr, gamma, beta, yr, mean_out, rstd_out, off, dims, eps, flags,
                                  buf, lid, r);
            return;
        }
        rownorm_forward_regs(xr, gamma, beta, yr, mean_out, rstd_out, off, dims, eps, flags, buf,
                             lid, r);
        return;
    }
#endif
#if WG == 1
    const int cols = dims.s2 == 1 && dims.s3 == 1;
    if (cols) {
        if (!(flags & F_RMS))
            mean = rn_sum_cpu(xr, L, 0.0f, 0) / (float)L;
    } else
#endif
    if (!(flags & F_RMS)) {
        float s = 0.0f;
        for (ulong i = lid; i < L; i += WG)
            s += xr[i];
        mean = group_sum1(buf, s, lid) / (float)L;
    }
    float q = 0.0f;
#if WG == 1
    if (cols)
        q = rn_sum_cpu(xr, L, mean, 1);
    else
#endif
    for (ulong i = lid; i < L; i += WG) {
        float d = xr[i] - mean;
        q += d * d;
    }
#if WG == 1
    const float rstd = rsqrt(q / (float)L + eps);
    ulong i0 = 0;
    if (cols) {
        __global const float *gm = gamma + off.s1, *bt = beta + off.s2;
        for (i0 = 0; i0 + 8 <= L; i0 += 8) {
            float8 v = (vload8(0, xr + i0) - mean) * rstd;
            if (flags & F_GAMMA)
                v *= vload8(0, gm + i0);
            if (flags & F_BETA)
                v += vload8(0, bt + i0);
            vstore8(v, 0, yr + i0);
        }
    }
#else
    const float rstd = rsqrt(group_sum1(buf, q, lid) / (float)L + eps);
    const ulong i0 = lid;
#endif
    for (ulong i = i0; i < L; i += WG)
        rn_store(yr, i, (xr[i] - mean) * rstd, r, dims, gamma, beta, off, flags);
    rn_save(mean_out, rstd_out, off, r, mean, rstd, flags, lid);
}

/* dx may be dy itself (in place): each element's dy is read for the sums, then read again and
 * overwritten by the same item, after the sums (barriers) completed. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
rownorm_backward_dx(__global float *dy, __global const float *x, __global const float *gamma,
                    __global const float *mean_in, __global const float *rstd_in, __global float *dx,
                    ulong8 off, ulong4 dims, uint flags)
{
    __local float2 buf[WG];
    const uint lid = get_local_id(0);
    const ulong r = get_group_id(0), L = dims.s1;
    __global const float *xr = x + off.s1 + r * L;
    __global float *dyr = dy + off.s0 + r * L;
    __global float *dxr = dx + off.s5 + r * L;
    const float mean = (flags & F_RMS) ? 0.0f : mean_in[off.s3 + r];
    const float rstd = rstd_in[off.s4 + r];
    float2 s = (float2)(0.0f, 0.0f);
    ulong i0 = lid;
#if WG == 1
    const int cols = dims.s2 == 1 && dims.s3 == 1;
    __global const float *gm = gamma + off.s2;
    if (cols) {
        float8 a8 = 0.0f, b8 = 0.0f;
        for (i0 = 0; i0 + 8 <= L; i0 += 8) {
            float8 g = vload8(0, dyr + i0);
            if (flags & F_GAMMA)
                g *= vload8(0, gm + i0);
            a8 += g;
            b8 += g * (vload8(0, xr + i0) - mean) * rstd;
        }
        s = (float2)(lanes_hsum8(a8), lanes_hsum8(b8));
    }
#endif
    for (ulong i = i0; i < L; i += WG) {
        float g = dyr[i];
        if (flags & F_GAMMA)
            g *= gamma[off.s2 + param_index(r, i, dims)];
        s += (float2)(g, g * (xr[i] - mean) * rstd);
    }
#if WG == 1
    s /= (float)L;
    i0 = 0;
    if (cols) {
        for (; i0 + 8 <= L; i0 += 8) {
            float8 g = vload8(0, dyr + i0);
            if (flags & F_GAMMA)
                g *= vload8(0, gm + i0);
            float8 xhat = (vload8(0, xr + i0) - mean) * rstd;
            vstore8(rstd * (g - ((flags & F_RMS) ? 0.0f : s.x) - xhat * s.y), 0, dxr + i0);
        }
    }
#else
    s = group_sum2(buf, s, lid) / (float)L;
    i0 = lid;
#endif
    const float a = (flags & F_RMS) ? 0.0f : s.x;
    for (ulong i = i0; i < L; i += WG) {
        float g = dyr[i];
        if (flags & F_GAMMA)
            g *= gamma[off.s2 + param_index(r, i, dims)];
        float xhat = (xr[i] - mean) * rstd;
        dxr[i] = rstd * (g - a - xhat * s.y);
    }
}

/* flags: F_RMS, F_BETA (dbeta wanted), F_SAVE (dgamma wanted). */
__kernel void rownorm_dparams_cols(__global const float *dy, __global const float *x,
                                   __global const float *mean_in, __global const float *rstd_in,
                                   __global float *dgamma, __global float *dbeta, ulong8 off,
                                   ulong4 dims, uint flags)
{
    const ulong p = get_global_id(0), R = dims.s0, L = dims.s1;
    if (p >= L)
        return;
    float dg = 0.0f, db = 0.0f;
    for (ulong r = 0; r < R; r++) {
        float mean = (flags & F_RMS) ? 0.0f : mean_in[off.s3 + r];
        float d = dy[off.s0 + r * L + p];
        dg += d * (x[off.s1 + r * L + p] - mean) * rstd_in[off.s4 + r];
        db += d;
    }
    if (flags & F_SAVE)
        dgamma[off.s6 + p] = dg;
    if (flags & F_BETA)
        dbeta[off.s7 + p] = db;
}

/* One group per channel c: the rows r = n * G + c / Cg (n < R / G), elements [(c % Cg) * S, + S). */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
rownorm_dparams_segs(__global const float *dy, __global const float *x,
                     __global const float *mean_in, __global const float *rstd_in,
                     __global float *dgamma, __global float *dbeta, ulong8 off, ulong4 dims,
                     uint flags)
{
    __local float2 buf[WG];
    const uint lid = get_local_id(0);
    const ulong c = get_group_id(0), L = dims.s1, S = dims.s2, G = dims.s3;
    /* S == 0 (empty planes): no element to visit; Cg is never used, but must not divide by zero */
    const ulong Cg = S ? L / S : 1, per_n = S, count = (dims.s0 / G) * S;
    float2 s = (float2)(0.0f, 0.0f);
    for (ulong k = lid; k < count; k += WG) {
        ulong n = k / per_n, j = k - n * per_n;
        ulong r = n * G + c / Cg;
        ulong e = r * L + (c % Cg) * S + j;
        float mean = (flags & F_RMS) ? 0.0f : mean_in[off.s3 + r];
        float d = dy[off.s0 + e];
        s += (float2)(d * (x[off.s1 + e] - mean) * rstd_in[off.s4 + r], d);
    }
    s = group_sum2(buf, s, lid);
    if (lid == 0) {
        if (flags & F_SAVE)
            dgamma[off.s6 + c] = s.x;
        if (flags & F_BETA)
            dbeta[off.s7 + c] = s.y;
    }
}

#if WG >= 64
#define SPLIT_TC 64            // columns per strip: a row's strip is two 128-byte lines
#define SPLIT_TR (WG / SPLIT_TC) // rows in flight per group

/* The float2 of each column summed over the SPLIT_TR row lanes (fixed order), returned to the
 * items of row lane 0. */
static inline float2 split_rows_sum(__local float2 *buf, float2 v, uint lid)
{
    buf[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint w = SPLIT_TR / 2; w > 0; w >>= 1) {
        if (lid < w * SPLIT_TC)
            buf[lid] += buf[lid + w * SPLIT_TC];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    float2 total = buf[lid % SPLIT_TC];
    barrier(CLK_LOCAL_MEM_FENCE);
    return total;
}

/* flags as rownorm_dparams_cols; grid: strips * blocks groups of WG, strip-major within a block. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
rownorm_dparams_split(__global const float *dy, __global const float *x,
                      __global const float *mean_in, __global const float *rstd_in,
                      __global float *dgamma, __global float *dbeta, ulong8 off, ulong4 dims,
                      uint flags, __global uint *ws, ulong rb)
{
    __local float2 buf[WG];
    __local volatile int last;
    const uint lid = get_local_id(0), ty = lid / SPLIT_TC;
    const ulong R = dims.s0, L = dims.s1;
    const uint strips = (uint)((L + SPLIT_TC - 1) / SPLIT_TC);
    const uint blocks = get_num_groups(0) / strips;
    const uint s = get_group_id(0) % strips, b = get_group_id(0) / strips;
    const ulong p = (ulong)s * SPLIT_TC + lid % SPLIT_TC;
    float2 acc = (float2)(0.0f, 0.0f);
    if (p < L) {
        const ulong r1 = min(R, (b + 1) * rb);
        __global const float *dyp = dy + off.s0 + p, *xp = x + off.s1 + p;
        __global const float *mp = mean_in + off.s3, *sp = rstd_in + off.s4;
        float4 g4 = (float4)(0.0f), b4 = (float4)(0.0f);
        ulong r = b * rb + ty;
        /* four rows per step with no exit test between them: their loads are in flight together
         * (a plain loop left one row's loads per item outstanding) */
        for (; r + 3 * SPLIT_TR < r1; r += 4 * SPLIT_TR) {
            const ulong r2 = r + 2 * SPLIT_TR;
            const float4 d = (float4)(dyp[r * L], dyp[(r + SPLIT_TR) * L], dyp[r2 * L],
                                      dyp[(r2 + SPLIT_TR) * L]);
            const float4 xv = (float4)(xp[r * L], xp[(r + SPLIT_TR) * L], xp[r2 * L],
                                       xp[(r2 + SPLIT_TR) * L]);
            const float4 rs = (float4)(sp[r], sp[r + SPLIT_TR], sp[r2], sp[r2 + SPLIT_TR]);
            const float4 mu = (flags & F_RMS) ? (float4)(0.0f)
                                              : (float4)(mp[r], mp[r + SPLIT_TR], mp[r2],
                                                         mp[r2 + SPLIT_TR]);
            g4 += d * ((xv - mu) * rs);
            b4 += d;
        }
        for (; r < r1; r += SPLIT_TR) {
            const float mean = (flags & F_RMS) ? 0.0f : mp[r], d = dyp[r * L];
            g4.x += d * ((xp[r * L] - mean) * sp[r]);
            b4.x += d;
        }
        acc = (float2)((g4.x + g4.y) + (g4.z + g4.w), (b4.x + b4.y) + (b4.z + b4.w));
    }
    acc = split_rows_sum(buf, acc, lid);
    if (blocks > 1) {
        __global volatile float2 *part = (__global volatile float2 *)(ws + NORM_COUNTERS);
        if (ty == 0 && p < L)
            part[(ulong)b * L + p] = acc;
        if (!last_group_arrives(ws + s, blocks, &last, lid))
            return; /* uniform across the group */
        acc = (float2)(0.0f, 0.0f);
        if (p < L) {
            /* four partials loaded before any is added (one volatile load at a time waits out
             * the L2 latency each) */
            uint c = ty;
            for (; c + 3 * SPLIT_TR < blocks; c += 4 * SPLIT_TR) {
                float2 q0 = part[(ulong)c * L + p], q1 = part[(ulong)(c + SPLIT_TR) * L + p];
                float2 q2 = part[(ulong)(c + 2 * SPLIT_TR) * L + p];
                float2 q3 = part[(ulong)(c + 3 * SPLIT_TR) * L + p];
                acc += ((q0 + q1) + (q2 + q3));
            }
            for (; c < blocks; c += SPLIT_TR)
                acc += part[(ulong)c * L + p];
        }
        acc = split_rows_sum(buf, acc, lid);
        last_group_reset(ws + s, lid);
    }
    if (ty == 0 && p < L) {
        if (flags & F_SAVE)
            dgamma[off.s6 + p] = acc.x;
        if (flags & F_BETA)
            dbeta[off.s7 + p] = acc.y;
    }
}
#endif

/* CPU devices (S == 1): one item per block of CB (16 or 64, the kernel's suffix) adjacent columns,
 * float16 accumulators, rows in order; each row's block is one (16) or four (64) 64-byte lines, so
 * the sweep down the rows streams instead of touching a new line per column (one item per column
 * measured 10x slower on POCL, and 64 columns 2x faster than 16 at 4096 x 1024: more bytes per row
 * for the prefetcher). The host takes 64 when that still leaves enough items for the cores. The
 * last block may be partial: whole 16-column parts, then a scalar loop. Same flags and results
 * (in the same order) as rownorm_dparams_cols. */
#define DP_ACC(q) float16 dg##q = 0.0f, db##q = 0.0f;
#define DP_ROW(q)                                                                                  \
    {                                                                                              \
        float16 d = vload16(q, dp);                                                                \
        dg##q += d * ((vload16(q, xp) - mean) * rstd);                                             \
        db##q += d;                                                                                \
    }
#define DP_STORE(q)                                                                                \
    {                                                                                              \
        if (flags & F_SAVE)                                                                        \
            vstore16(dg##q, q, dgamma + off.s6 + p0);                                              \
        if (flags & F_BETA)                                                                        \
            vstore16(db##q, q, dbeta + off.s7 + p0);                                               \
    }
#define DP_BLOCK(X)                                                                                \
    {                                                                                              \
        X(DP_ACC)                                                                                  \
        for (ulong r = 0; r < R; r++) {                                                            \
            const float mean = rms ? 0.0f : mean_in[off.s3 + r], rstd = rstd_in[off.s4 + r];     \
            __global const float *dp = dy + off.s0 + r * L + p0, *xp = x + off.s1 + r * L + p0;    \
            X(DP_ROW)                                                                              \
        }                                                                                          \
        X(DP_STORE)                                                                                \
    }
#define DP_ONE(M) M(0)
#define DP_FOUR(M) M(0) M(1) M(2) M(3)

/* Columns p0 .. L - 1 (fewer than one block): 16 at a time, then one by one. */
static inline void dparams_tail(__global const float *dy, __global const float *x,
                                __global const float *mean_in, __global const float *rstd_in,
                                __global float *dgamma, __global float *dbeta, ulong8 off,
                                ulong R, ulong L, ulong p0, int rms, uint flags)
{
    for (; p0 + 16 <= L; p0 += 16)
        DP_BLOCK(DP_ONE)
    for (ulong p = p0; p < L; p++) {
        float dg = 0.0f, db = 0.0f;
        for (ulong r = 0; r < R; r++) {
            float mean = rms ? 0.0f : mean_in[off.s3 + r];
            float d = dy[off.s0 + r * L + p];
            dg += d * ((x[off.s1 + r * L + p] - mean) * rstd_in[off.s4 + r]);
            db += d;
        }
        if (flags & F_SAVE)
            dgamma[off.s6 + p] = dg;
        if (flags & F_BETA)
            dbeta[off.s7 + p] = db;
    }
}

#define DP_KERNEL(CB, X)                                                                           \
    __kernel void rownorm_dparams_cols##CB(__global const float *dy, __global const float *x,      \
                                           __global const float *mean_in,                          \
                                           __global const float *rstd_in, __global float *dgamma, \
                                           __global float *dbeta, ulong8 off, ulong4 dims,         \
                                           uint flags)                                             \
    {                                                                                              \
        const ulong R = dims.s0, L = dims.s1, p0 = get_global_id(0) * CB;                          \
        const int rms = (flags & F_RMS) != 0;                                                      \
        if (p0 + CB <= L)                                                                          \
            DP_BLOCK(X)                                                                            \
        else if (p0 < L)                                                                           \
            dparams_tail(dy, x, mean_in, rstd_in, dgamma, dbeta, off, R, L, p0, rms, flags);       \
    }
DP_KERNEL(16, DP_ONE)
#if WG == 1 /* CPU-style programs only: on a GPU its 128 accumulators would not fit in registers */
DP_KERNEL(64, DP_FOUR)
#endif
