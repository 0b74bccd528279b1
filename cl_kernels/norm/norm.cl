/* Row normalisations (include/cltensor_norm.h): layer norm, RMS norm and group norm share these
 * kernels. A "row" is one normalised set of L contiguous elements: a last-axis row (layer / RMS
 * norm: R = numel / D rows of L = D) or one (n, group) block of group norm (L = C / G * HW). The
 * affine parameter of element i of row r is p = (r % G) * (L / S) + i / S: S = 1, G = 1 for layer
 * norm (p = i), S = HW and G = groups for group norm (p = the channel).
 *
 * rownorm_forward: one work-group of WG items per row; pass 1 sums x (mean; skipped for RMS),
 *   pass 2 sums (x - mean)^2 (the centred variance: no cancellation), pass 3 writes y. The row is
 *   read three times; rows are short enough to stay in cache.
 * rownorm_backward_dx: one group per row: g = dy * gamma, a = mean(g), b = mean(g * xhat),
 *   dx = rstd * (g - a - xhat * b) (RMS: a = 0).
 * rownorm_dparams_cols (S == 1): one item per column p, a loop over rows in order (adjacent items
 *   read adjacent columns): dgamma[p] = sum dy * xhat, dbeta[p] = sum dy.
 * rownorm_dparams_segs (S > 1, group norm): one group per channel over its N * HW elements.
 *
 * Offsets off = (x, gamma, beta, y, mean, rstd, -, -) for the forward and (dy, x, gamma, mean,
 * rstd, dx, dgamma, dbeta) for the backward kernels, in elements. dims = (R, L, S, G).
 * flags: bit 0 RMS (no mean), bit 1 gamma given, bit 2 beta given (forward) / dbeta wanted
 * (dparams), bit 3 save rstd (forward) / dgamma wanted (dparams), bit 4 save mean (forward).
 *
 * -D contract: WG (a power of two, the exact local size of the row kernels; any local size for
 * rownorm_dparams_cols, whose grid must cover L items).
 */
#ifndef WG
#define WG 256
#endif
#if (WG & (WG - 1)) != 0 || WG < 1
#error "WG must be a power of two"
#endif

#include "common/group_sum.h"

#define F_RMS 1u
#define F_GAMMA 2u
#define F_BETA 4u
#define F_SAVE 8u
#define F_SAVE_MEAN 16u

static inline ulong param_index(ulong r, ulong i, ulong4 dims)
{
    return dims.s2 == 1 && dims.s3 == 1 ? i : (r % dims.s3) * (dims.s1 / dims.s2) + i / dims.s2;
}

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
    if (!(flags & F_RMS)) {
        float s = 0.0f;
        for (ulong i = lid; i < L; i += WG)
            s += xr[i];
        mean = group_sum1(buf, s, lid) / (float)L;
    }
    float q = 0.0f;
    for (ulong i = lid; i < L; i += WG) {
        float d = xr[i] - mean;
        q += d * d;
    }
    const float rstd = rsqrt(group_sum1(buf, q, lid) / (float)L + eps);
    for (ulong i = lid; i < L; i += WG) {
        float v = (xr[i] - mean) * rstd;
        if (flags & (F_GAMMA | F_BETA)) {
            ulong p = param_index(r, i, dims);
            if (flags & F_GAMMA)
                v *= gamma[off.s1 + p];
            if (flags & F_BETA)
                v += beta[off.s2 + p];
        }
        yr[i] = v;
    }
    if (lid == 0 && (flags & F_SAVE_MEAN))
        mean_out[off.s4 + r] = mean;
    if (lid == 0 && (flags & F_SAVE))
        rstd_out[off.s5 + r] = rstd;
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
    for (ulong i = lid; i < L; i += WG) {
        float g = dyr[i];
        if (flags & F_GAMMA)
            g *= gamma[off.s2 + param_index(r, i, dims)];
        s += (float2)(g, g * (xr[i] - mean) * rstd);
    }
    s = group_sum2(buf, s, lid) / (float)L;
    const float a = (flags & F_RMS) ? 0.0f : s.x;
    for (ulong i = lid; i < L; i += WG) {
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

/* CPU devices (S == 1): one item per block of 16 adjacent columns, float16 accumulators, rows in
 * order; each row's block is one 64-byte line, so the sweep down the rows streams instead of
 * touching a new line per column (one item per column measured 10x slower on POCL). The last block
 * may be partial (scalar loop). Same flags and results (in the same order) as rownorm_dparams_cols. */
__kernel void rownorm_dparams_cols16(__global const float *dy, __global const float *x,
                                     __global const float *mean_in, __global const float *rstd_in,
                                     __global float *dgamma, __global float *dbeta, ulong8 off,
                                     ulong4 dims, uint flags)
{
    const ulong b = get_global_id(0), R = dims.s0, L = dims.s1, p0 = b * 16;
    if (p0 >= L)
        return;
    const int rms = (flags & F_RMS) != 0;
    if (p0 + 16 <= L) {
        float16 dg = (float16)(0.0f), db = (float16)(0.0f);
        for (ulong r = 0; r < R; r++) {
            const float mean = rms ? 0.0f : mean_in[off.s3 + r], rstd = rstd_in[off.s4 + r];
            float16 d = vload16(0, dy + off.s0 + r * L + p0);
            float16 xv = vload16(0, x + off.s1 + r * L + p0);
            dg += d * ((xv - mean) * rstd);
            db += d;
        }
        if (flags & F_SAVE)
            vstore16(dg, 0, dgamma + off.s6 + p0);
        if (flags & F_BETA)
            vstore16(db, 0, dbeta + off.s7 + p0);
        return;
    }
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
