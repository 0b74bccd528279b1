/* Batch norm (include/cltensor_norm.h) over x [N, C, HW] (HW = 1 for [N, C]): one work-group of WG
 * items per channel c, whose M = N * HW values sit at n * C * HW + c * HW + j.
 *
 * batchnorm_forward: training: pass 1 the mean, pass 2 the centred (biased) variance, item 0
 *   updates the running stats (running_var with the unbiased variance, var * M / (M - 1)) and saves
 *   mean and rstd; inference: mean and rstd from the running stats. Then y in one more pass.
 * batchnorm_backward: one pass for db = sum dy, dg = sum dy * xhat; then dx = gamma * rstd *
 *   (dy - db / M - xhat * dg / M) (training) or gamma * rstd * dy (inference), and item 0 writes
 *   dgamma = dg, dbeta = db. dx may be dy itself: each element is read before its own write.
 *
 * Split kernels (GPUs, WG > 1; the host takes them when there are too few channels to fill the
 * device: 64 channels on 132 SMs took ~290 us for n32c64h56 on an H200). Channel c's M values, in
 * (n, j) order, are cut into K chunks of `cl` values; group g = c * K + q sums chunk q and writes a
 * float4 partial to ws, and the last chunk group of the channel (common/last_group.h) merges the
 * K <= WG partials in chunk order and writes the channel's results, plus the float4 coefficients of the
 * elementwise pass, batchnorm_apply, to ws:
 * batchnorm_stats_split: training forward statistics: the chunk's mean and centred sum of squares
 *   (count, mean, M2), merged with Chan's pairwise update (no sum of squares minus squared sum);
 *   running stats and saved mean / rstd as batchnorm_forward; coefficients (scale, shift).
 * batchnorm_grad_split: backward sums (db, dg) per chunk; dbeta, dgamma as batchnorm_backward;
 *   coefficients (gamma * rstd, db / M, mean, rstd * dg / M) (training) or (gamma * rstd, 0, mean, 0).
 * batchnorm_apply: APPLY_PER elements per item, bit 5 of flags clear: y = x * k.x + k.y (forward), set:
 *   dx = k.x * (dy - k.y - (x - k.z) * k.w) (backward, the formula of batchnorm_backward); bit 6:
 *   APPLY_PER float4s per item instead (HW and every offset multiples of 4: a float4 never spans two
 *   channels, one channel lookup and one 16-byte access per buffer for four values).
 * batchnorm_stats_split with bit 7 of flags: the chunks in float4s (CHUNK_LOOP_Q).
 * ws: uint counters[NORM_COUNTERS] (one per channel), float4 partials[C * K], float4 coeffs[C].
 *
 * off: forward (x, gamma, beta, y, running_mean, running_var, save_mean, save_rstd); backward (dy,
 * x, gamma, mean, rstd, dx, dgamma, dbeta). dims = (N, C, HW, -).
 * flags: bit 0 training, bit 1 gamma, bit 2 beta (forward) / dbeta wanted (backward), bit 3 update
 * running stats (forward) / dgamma wanted (backward), bit 4 save mean and rstd (forward) / dx wanted.
 *
 * -D contract: WG, a power of two, the exact local size; NORM_COUNTERS (counters at the head of
 * the split workspace; must match norm_internal.h).
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

#define F_TRAIN 1u
#define F_GAMMA 2u
#define F_BETA 4u
#define F_RUNNING 8u
#define F_SAVE 16u
#define F_APPLY_BWD 32u
#define F_APPLY_VEC4 64u
#define F_STATS_VEC4 128u

/* FOR_CHANNEL(e) body: every element index e of channel c that this item owns (k = lid, lid + WG,
 * ... < M as (n, j) = (k / HW, k % HW)), stepping (n, j) by (WG / HW, WG % HW) with one carry
 * instead of a division per element (a CPU runs one item per channel; the division dominated).
 * Needs dn = WG / HW and dj = WG % HW in scope. */
#define FOR_CHANNEL(e)                                                                             \
    for (ulong n_ = lid / dims.s2, j_ = lid % dims.s2, e = 0;                                      \
         n_ < dims.s0 && ((e = (n_ * dims.s1 + c) * dims.s2 + j_), 1);                           \
         j_ += dj, n_ += dn, (j_ >= dims.s2 ? (j_ -= dims.s2, n_++) : 0))

#if WG == 1
/* CPU devices (WG 1: one work item per channel): POCL does not vectorise one item's loop, so each
 * run of HW contiguous values of channel c, (n, c, 0 .. HW), goes in float8 lanes, with a scalar
 * tail of HW % 8 (HW < 8, e.g. [N, C] inputs: the tail only). FOR_RUNS(b): b = the run's offset. */
#define FOR_RUNS(b) for (ulong n_ = 0, b = c * dims.s2; n_ < dims.s0; n_++, b += dims.s1 * dims.s2)


/* The sum over channel c of x (sq 0) or of (x - mean)^2 (sq 1). */
static inline float bn_sum_cpu(__global const float *x, ulong c, ulong4 dims, float mean, int sq)
{
    float8 a8 = 0.0f;
    float a = 0.0f;
    FOR_RUNS(b)
        lanes_sum_run(x + b, dims.s2, mean, sq, &a8, &a);
    return lanes_hsum8(a8) + a;
}
#endif

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
batchnorm_forward(__global const float *x, __global const float *gamma, __global const float *beta,
                  __global float *y, __global float *run_mean, __global float *run_var,
                  __global float *save_mean, __global float *save_rstd, ulong8 off, ulong4 dims,
                  float eps, float mom, uint flags)
{
    __local float buf[WG];
    const uint lid = get_local_id(0);
    const ulong c = get_group_id(0), M = dims.s0 * dims.s2;
    const ulong dn = WG / dims.s2, dj = WG % dims.s2;
    float mean, rstd;
    /* The old running stats, read by every item before the first barrier: the update below is then
     * a pure function of values no item writes first, so it is idempotent (POCL was seen to run a
     * lid == 0 read-modify-write region more than once). */
    const float old_mean = (flags & F_RUNNING) ? run_mean[off.s4 + c] : 0.0f;
    const float old_var = (flags & F_RUNNING) ? run_var[off.s5 + c] : 0.0f;
    if (flags & F_TRAIN) {
#if WG == 1
        mean = bn_sum_cpu(x + off.s0, c, dims, 0.0f, 0) / (float)M;
        float var = bn_sum_cpu(x + off.s0, c, dims, mean, 1) / (float)M;
#else
        float s = 0.0f;
        FOR_CHANNEL(e)
        s += x[off.s0 + e];
        mean = group_sum1(buf, s, lid) / (float)M;
        float q = 0.0f;
        FOR_CHANNEL(e) {
            float d = x[off.s0 + e] - mean;
            q += d * d;
        }
        float var = group_sum1(buf, q, lid) / (float)M;
#endif
        rstd = rsqrt(var + eps);
        if (lid == 0 && (flags & F_RUNNING)) {
            run_mean[off.s4 + c] = (1.0f - mom) * old_mean + mom * mean;
            run_var[off.s5 + c] = (1.0f - mom) * old_var + mom * (var * (float)M / (float)(M - 1));
        }
    } else {
        mean = run_mean[off.s4 + c];
        rstd = rsqrt(run_var[off.s5 + c] + eps);
    }
    const float scale = (flags & F_GAMMA) ? gamma[off.s1 + c] * rstd : rstd;
    const float shift = ((flags & F_BETA) ? beta[off.s2 + c] : 0.0f) - mean * scale;
#if WG == 1
    const ulong HW8 = dims.s2 & ~(ulong)7;
    FOR_RUNS(b) {
        __global const float *xr = x + off.s0 + b;
        __global float *yr = y + off.s3 + b;
        for (ulong j = 0; j < HW8; j += 8)
            vstore8(vload8(0, xr + j) * scale + shift, 0, yr + j);
        for (ulong j = HW8; j < dims.s2; j++)
            yr[j] = xr[j] * scale + shift;
    }
#else
    FOR_CHANNEL(e)
    y[off.s3 + e] = x[off.s0 + e] * scale + shift;
#endif
    if (lid == 0 && (flags & F_SAVE)) {
        save_mean[off.s6 + c] = mean;
        save_rstd[off.s7 + c] = rstd;
    }
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
batchnorm_backward(__global float *dy, __global const float *x, __global const float *gamma,
                   __global const float *mean_in, __global const float *rstd_in, __global float *dx,
                   __global float *dgamma, __global float *dbeta, ulong8 off, ulong4 dims, uint flags)
{
    __local float2 buf[WG];
    const uint lid = get_local_id(0);
    const ulong c = get_group_id(0), M = dims.s0 * dims.s2;
    const ulong dn = WG / dims.s2, dj = WG % dims.s2;
    const float mean = mean_in[off.s3 + c], rstd = rstd_in[off.s4 + c];
#if WG == 1
    const ulong HW8 = dims.s2 & ~(ulong)7;
    float8 a8 = 0.0f, b8 = 0.0f;
    float2 s = (float2)(0.0f, 0.0f);
    FOR_RUNS(b) {
        __global const float *dyr = dy + off.s0 + b, *xr = x + off.s1 + b;
        for (ulong j = 0; j < HW8; j += 8) {
            float8 d = vload8(0, dyr + j);
            a8 += d;
            b8 += d * (vload8(0, xr + j) - mean) * rstd;
        }
        for (ulong j = HW8; j < dims.s2; j++) {
            float d = dyr[j];
            s += (float2)(d, d * (xr[j] - mean) * rstd);
        }
    }
    s += (float2)(lanes_hsum8(a8), lanes_hsum8(b8));
#else
    float2 s = (float2)(0.0f, 0.0f);
    FOR_CHANNEL(e) {
        float d = dy[off.s0 + e];
        s += (float2)(d, d * (x[off.s1 + e] - mean) * rstd);
    }
    s = group_sum2(buf, s, lid);
#endif
    if (lid == 0) {
        if (flags & F_BETA)
            dbeta[off.s7 + c] = s.x;
        if (flags & F_RUNNING)
            dgamma[off.s6 + c] = s.y;
    }
    if (!(flags & F_SAVE))
        return;
    const float gr = (flags & F_GAMMA) ? gamma[off.s2 + c] * rstd : rstd;
    const float a = (flags & F_TRAIN) ? s.x / (float)M : 0.0f;
    const float b = (flags & F_TRAIN) ? s.y / (float)M : 0.0f;
#if WG == 1
    FOR_RUNS(o) {
        __global const float *xr = x + off.s1 + o;
        __global float *dyr = dy + off.s0 + o, *dxr = dx + off.s5 + o;
        for (ulong j = 0; j < HW8; j += 8) {
            float8 xhat = (vload8(0, xr + j) - mean) * rstd;
            vstore8(gr * (vload8(0, dyr + j) - a - xhat * b), 0, dxr + j);
        }
        for (ulong j = HW8; j < dims.s2; j++) {
            float xhat = (xr[j] - mean) * rstd;
            dxr[j] = gr * (dyr[j] - a - xhat * b);
        }
    }
#else
    FOR_CHANNEL(e) {
        float xhat = (x[off.s1 + e] - mean) * rstd;
        dx[off.s5 + e] = gr * (dy[off.s0 + e] - a - xhat * b);
    }
#endif
}

#if WG > 1
/* Group g's channel c, chunk q of K = get_num_groups(0) / C, values [k0, k1). */
#define SPLIT_CHUNK                                                                                \
    const uint lid = get_local_id(0);                                                              \
    const ulong C = dims.s1, M = dims.s0 * dims.s2, K = get_num_groups(0) / C;                     \
    const ulong c = get_group_id(0) / K, q = get_group_id(0) % K;                                  \
    const ulong k0 = min(M, q * cl), k1 = min(M, k0 + cl);                                         \
    __global volatile float4 *part = (__global volatile float4 *)(ws + NORM_COUNTERS);             \
    __global float4 *coef = (__global float4 *)(ws + NORM_COUNTERS) + C * K;

/* The element offset of value (n, j) of channel c, then (n, j) advanced by dn planes and dj
 * values (one carry): the offsets come from register arithmetic alone, so CHUNK_LOOP can issue
 * its loads before it adds any of them. */
static inline ulong bn_step(ulong *n, ulong *j, ulong4 dims, ulong c, ulong dn, ulong dj)
{
    const ulong e = (*n * dims.s1 + c) * dims.s2 + *j;
    *j += dj;
    *n += dn;
    if (*j >= dims.s2) {
        *j -= dims.s2;
        *n += 1;
    }
    return e;
}

/* This item's runs of V consecutive values (V = 1, or 4: float4s) at k0 + V lid, + V WG, ... < k1
 * of channel c: FOUR with e0 .. e3, the element offsets of four runs (their loads in flight
 * together: one load per item at a time left an H200 latency-bound), then ONE with e0 for the
 * rest. V = 4 (CHUNK_LOOP_Q) needs HW, cl and x's offset multiples of 4 (F_STATS_VEC4), so that a
 * run is an aligned float4 of one plane: a quarter of the loads and offset steps (the scalar
 * statistics were most of batch_norm/n32c64h56's 54 us on an H200 for 26 MB read twice). */
#define CHUNK_LOOP_BY(V, FOUR, ONE)                                                                \
    {                                                                                              \
        const ulong dn = (V) * WG / dims.s2, dj = (V) * WG % dims.s2;                              \
        ulong k_ = k0 + (V) * lid, n_ = k_ / dims.s2, j_ = k_ % dims.s2;                           \
        for (; k_ + 3 * (V) * WG < k1; k_ += 4 * (V) * WG) {                                       \
            const ulong e0 = bn_step(&n_, &j_, dims, c, dn, dj);                                   \
            const ulong e1 = bn_step(&n_, &j_, dims, c, dn, dj);                                   \
            const ulong e2 = bn_step(&n_, &j_, dims, c, dn, dj);                                   \
            const ulong e3 = bn_step(&n_, &j_, dims, c, dn, dj);                                   \
            FOUR                                                                                   \
        }                                                                                          \
        for (; k_ < k1; k_ += (V) * WG) {                                                          \
            const ulong e0 = bn_step(&n_, &j_, dims, c, dn, dj);                                   \
            ONE                                                                                    \
        }                                                                                          \
    }
#define CHUNK_LOOP(FOUR, ONE) CHUNK_LOOP_BY(1, FOUR, ONE)
#define CHUNK_LOOP_Q(FOUR, ONE) CHUNK_LOOP_BY(4, FOUR, ONE)

/* The channel's K <= WG partials into local memory, one per item (their loads in flight together;
 * item 0 alone waited out one L2 round trip per partial), for item 0 to merge in chunk order. */
static inline void split_gather(__local float4 *pl, __global volatile float4 *part, ulong K, uint lid)
{
    if (lid < K)
        pl[lid] = part[lid];
    barrier(CLK_LOCAL_MEM_FENCE);
}

/* Training forward statistics; off and flags as batchnorm_forward (F_TRAIN implied). */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
batchnorm_stats_split(__global const float *x, __global const float *gamma,
                      __global const float *beta, __global float *run_mean, __global float *run_var,
                      __global float *save_mean, __global float *save_rstd, ulong8 off, ulong4 dims,
                      float eps, float mom, uint flags, __global uint *ws, ulong cl)
{
    __local float buf[WG];
    __local float4 pl[WG];
    __local volatile int last;
    SPLIT_CHUNK
    /* read before the first barrier, as batchnorm_forward does (an idempotent update) */
    const float old_mean = (flags & F_RUNNING) ? run_mean[off.s4 + c] : 0.0f;
    const float old_var = (flags & F_RUNNING) ? run_var[off.s5 + c] : 0.0f;
    const float n = (float)(k1 - k0);
    __global const float *xc = x + off.s0;
    float4 a4 = (float4)(0.0f);
    float s, m2;
    if (flags & F_STATS_VEC4) { /* float4s of one plane each (see CHUNK_LOOP_Q) */
        __global const float4 *x4 = (__global const float4 *)xc;
        CHUNK_LOOP_Q(
            {
                const float4 v0 = x4[e0 >> 2];
                const float4 v1 = x4[e1 >> 2];
                const float4 v2 = x4[e2 >> 2];
                const float4 v3 = x4[e3 >> 2];
                a4 += v0;
                a4 += v1;
                a4 += v2;
                a4 += v3;
            },
            a4 += x4[e0 >> 2];)
        s = (a4.x + a4.y) + (a4.z + a4.w);
    } else {
        CHUNK_LOOP(a4 += (float4)(xc[e0], xc[e1], xc[e2], xc[e3]);, a4.x += xc[e0];)
        s = (a4.x + a4.y) + (a4.z + a4.w);
    }
    const float cmean = k1 > k0 ? group_sum1(buf, s, lid) / n : group_sum1(buf, s, lid);
    a4 = (float4)(0.0f);
    if (flags & F_STATS_VEC4) { /* the chunk again, from cache: its centred sum of squares */
        __global const float4 *x4 = (__global const float4 *)xc;
        CHUNK_LOOP_Q(
            {
                const float4 d0 = x4[e0 >> 2] - cmean; /* no commas: a macro argument */
                const float4 d1 = x4[e1 >> 2] - cmean;
                const float4 d2 = x4[e2 >> 2] - cmean;
                const float4 d3 = x4[e3 >> 2] - cmean;
                a4 += d0 * d0;
                a4 += d1 * d1;
                a4 += d2 * d2;
                a4 += d3 * d3;
            },
            {
                const float4 d = x4[e0 >> 2] - cmean;
                a4 += d * d;
            })
    } else {
        CHUNK_LOOP( /* the chunk again, from cache: its centred sum of squares */
            {
                float4 d = (float4)(xc[e0], xc[e1], xc[e2], xc[e3]) - cmean;
                a4 += d * d;
            },
            {
                float d = xc[e0] - cmean;
                a4.x += d * d;
            })
    }
    m2 = group_sum1(buf, (a4.x + a4.y) + (a4.z + a4.w), lid);
    if (lid == 0)
        part[c * K + q] = (float4)(n, cmean, m2, 0.0f);
    if (!last_group_arrives(ws + c, (uint)K, &last, lid))
        return;
    split_gather(pl, part + c * K, K, lid);
    if (lid == 0) {
        float4 a = pl[0];
        for (ulong i = 1; i < K; i++) { /* Chan et al.: merge (count, mean, M2) pairs in order */
            float4 b = pl[i];
            float nab = a.x + b.x;
            if (b.x > 0.0f) {
                float delta = b.y - a.y;
                a.y += delta * (b.x / nab);
                a.z += b.z + delta * delta * (a.x * b.x / nab);
                a.x = nab;
            }
        }
        const float mean = a.y, var = a.z / (float)M, rstd = rsqrt(var + eps);
        if (flags & F_RUNNING) {
            run_mean[off.s4 + c] = (1.0f - mom) * old_mean + mom * mean;
            run_var[off.s5 + c] = (1.0f - mom) * old_var + mom * (var * (float)M / (float)(M - 1));
        }
        if (flags & F_SAVE) {
            save_mean[off.s6 + c] = mean;
            save_rstd[off.s7 + c] = rstd;
        }
        const float scale = (flags & F_GAMMA) ? gamma[off.s1 + c] * rstd : rstd;
        const float shift = ((flags & F_BETA) ? beta[off.s2 + c] : 0.0f) - mean * scale;
        coef[c] = (float4)(scale, shift, 0.0f, 0.0f);
    }
    last_group_reset(ws + c, lid);
}

/* Backward sums; off and flags as batchnorm_backward. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
batchnorm_grad_split(__global const float *dy, __global const float *x, __global const float *gamma,
                     __global const float *mean_in, __global const float *rstd_in,
                     __global float *dgamma, __global float *dbeta, ulong8 off, ulong4 dims,
                     uint flags, __global uint *ws, ulong cl)
{
    __local float2 buf[WG];
    __local float4 pl[WG];
    __local volatile int last;
    SPLIT_CHUNK
    const float mean = mean_in[off.s3 + c], rstd = rstd_in[off.s4 + c];
    __global const float *dyc = dy + off.s0, *xc = x + off.s1;
    float4 a4 = (float4)(0.0f), b4 = (float4)(0.0f);
    CHUNK_LOOP(
        {
            float4 d = (float4)(dyc[e0], dyc[e1], dyc[e2], dyc[e3]);
            a4 += d;
            b4 += d * ((float4)(xc[e0], xc[e1], xc[e2], xc[e3]) - mean) * rstd;
        },
        {
            float d = dyc[e0];
            a4.x += d;
            b4.x += d * (xc[e0] - mean) * rstd;
        })
    float2 s = (float2)((a4.x + a4.y) + (a4.z + a4.w), (b4.x + b4.y) + (b4.z + b4.w));
    s = group_sum2(buf, s, lid);
    if (lid == 0)
        part[c * K + q] = (float4)(s.x, s.y, 0.0f, 0.0f);
    if (!last_group_arrives(ws + c, (uint)K, &last, lid))
        return;
    split_gather(pl, part + c * K, K, lid);
    if (lid == 0) {
        float2 t = (float2)(0.0f, 0.0f);
        for (ulong i = 0; i < K; i++)
            t += pl[i].xy;
        if (flags & F_BETA)
            dbeta[off.s7 + c] = t.x;
        if (flags & F_RUNNING)
            dgamma[off.s6 + c] = t.y;
        const float gr = (flags & F_GAMMA) ? gamma[off.s2 + c] * rstd : rstd;
        const int train = (flags & F_TRAIN) != 0;
        coef[c] = (float4)(gr, train ? t.x / (float)M : 0.0f, mean,
                           train ? rstd * (t.y / (float)M) : 0.0f);
    }
    last_group_reset(ws + c, lid);
}

/* Element e of [N, C, HW] with coefficients k: u = x (forward) or dy (backward), v = x (backward). */
static inline void bn_apply1(__global const float *u, __global const float *v, __global float *out,
                             __global const float4 *coef, ulong4 uvo, ulong4 dims, uint flags,
                             ulong e, int narrow)
{
    /* the channel of e: 32-bit division where the sizes allow (64-bit is emulated on GPUs) */
    const ulong c = narrow ? (ulong)(((uint)e / (uint)dims.s2) % (uint)dims.s1) : (e / dims.s2) % dims.s1;
    const float4 k = coef[c];
    const float a = u[uvo.s0 + e];
    out[uvo.s2 + e] = (flags & F_APPLY_BWD) ? k.x * (a - k.y - (v[uvo.s1 + e] - k.z) * k.w)
                                            : a * k.x + k.y;
}

/* APPLY_PER elements per item, e = gid + i * (global size): coalesced, and their loads in flight
 * together; uoff, voff, ooff = uvo.s0 .. s2 element offsets; dims.s3: where the coefficients
 * start in ws's float4s after the counters. Any local size. */
#define APPLY_PER 4
__kernel void batchnorm_apply(__global const float *u, __global const float *v, __global float *out,
                              __global const uint *ws, ulong4 uvo, ulong4 dims, uint flags)
{
    const ulong g = get_global_id(0), G = get_global_size(0), total = dims.s0 * dims.s1 * dims.s2;
    __global const float4 *coef = (__global const float4 *)(ws + NORM_COUNTERS) + dims.s3;
    const int narrow = total <= 0xffffffffUL;
    if (flags & F_APPLY_VEC4) {
        __global const float4 *u4 = (__global const float4 *)(u + uvo.s0);
        __global const float4 *v4 = (__global const float4 *)(v + uvo.s1);
        __global float4 *o4 = (__global float4 *)(out + uvo.s2);
        const ulong quads = total >> 2;
#pragma unroll
        for (uint i = 0; i < APPLY_PER; i++) {
            const ulong q = g + i * G;
            if (q < quads) {
                const ulong e = q << 2;
                const ulong c = narrow ? (ulong)(((uint)e / (uint)dims.s2) % (uint)dims.s1)
                                       : (e / dims.s2) % dims.s1;
                const float4 k = coef[c], a = u4[q];
                o4[q] = (flags & F_APPLY_BWD) ? k.x * (a - k.y - (v4[q] - k.z) * k.w) : a * k.x + k.y;
            }
        }
        return;
    }
#pragma unroll
    for (uint i = 0; i < APPLY_PER; i++)
        if (g + i * G < total)
            bn_apply1(u, v, out, coef, uvo, dims, flags, g + i * G, narrow);
}
#endif
