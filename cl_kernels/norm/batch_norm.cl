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
 * off: forward (x, gamma, beta, y, running_mean, running_var, save_mean, save_rstd); backward (dy,
 * x, gamma, mean, rstd, dx, dgamma, dbeta). dims = (N, C, HW, -).
 * flags: bit 0 training, bit 1 gamma, bit 2 beta (forward) / dbeta wanted (backward), bit 3 update
 * running stats (forward) / dgamma wanted (backward), bit 4 save mean and rstd (forward) / dx wanted.
 *
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

#define F_TRAIN 1u
#define F_GAMMA 2u
#define F_BETA 4u
#define F_RUNNING 8u
#define F_SAVE 16u

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
