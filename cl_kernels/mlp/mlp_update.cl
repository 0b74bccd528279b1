/* Launch 2 of the fused MLP's training step (and the optimizer of its per-layer path): the G
 * partial gradients of each parameter are summed by USPLIT items, item q taking groups
 * q * ceil(G / USPLIT) .. in order, and item 0 adds the USPLIT sums in order q = 0.. (a fixed
 * order: deterministic); it writes grads, then takes the optimizer step. With G = 1 and
 * partial = grads (the per-layer path) it is the optimizer alone. The loss is not summed here:
 * mlp_train's last group does it (mlp_fused.cl), so the host can read it before this launch;
 * loss_part and loss are the arguments mlp_cpu_update (mlp_cpu.c's twin, which does sum it) shares.
 * Why the split: one item per parameter made a 50-group sum a chain of 4 batches of loads and the
 * whole launch 6.4 us of the H200's 46 us step at 200 points (issue 19); USPLIT items per
 * parameter put all of a small G's loads in flight at once.
 *
 * -D contract: UWG (a power of two, the launch's exact local size), USPLIT (a power of two
 * dividing UWG: items per parameter; a group covers UWG / USPLIT parameters).
 */
#ifndef UWG
#define UWG 256
#endif
#ifndef USPLIT
#define USPLIT 8
#endif
#if UWG % USPLIT != 0
#error "USPLIT must divide UWG"
#endif
#define UPG (UWG / USPLIT) /* parameters per group */

/* s = (lr or lr / bias correction 1, beta1 or momentum, beta2, eps, weight decay, sqrt(bias
 * correction 2), 1 / (n * outputs), dampening); mode 0 gradients only, 1 Adam, 2 SGD momentum
 * (torch.optim.SGD: buf = momentum * buf + (1 - dampening) * g, first step buf = g; p -= lr * buf).
 * ctl = (groups G, mode, want loss: mlp_cpu_update's only, first step); partial and grads may be the
 * same buffer (G = 1);
 * pstride: floats between the partial slices. */
__kernel __attribute__((reqd_work_group_size(UWG, 1, 1))) void
mlp_update(__global float *params, __global float *grads, __global float *m, __global float *v,
           __global const float *partial, __global const float *loss_part, __global float *loss,
           int4 ctl, float8 s, int nparams, int pstride)
{
    const int G = ctl.s0, mode = ctl.s1, lid = get_local_id(0);
    __local float red[UWG];
    /* item (q, c): parameter i = group * UPG + c (a warp's loads: consecutive parameters) */
    const int c = lid % UPG, q = lid / UPG, i = get_group_id(0) * UPG + c;
    const int per = (G + USPLIT - 1) / USPLIT, g1 = min(G, (q + 1) * per);
    float part = 0.0f;
    if (i < nparams) {
        /* 8 loads in flight (masked past g1: adding 0 is exact), summed in order */
        for (int g = q * per; g < g1; g += 8) {
            float t[8];
#pragma unroll
            for (int u = 0; u < 8; u++)
                t[u] = g + u < g1 ? partial[(long)(g + u) * pstride + i] : 0.0f;
#pragma unroll
            for (int u = 0; u < 8; u++)
                part += t[u];
        }
    }
    red[lid] = part;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (q != 0 || i >= nparams)
        return;
    float gsum = 0.0f;
#pragma unroll
    for (int u = 0; u < USPLIT; u++)
        gsum += red[u * UPG + c];
    grads[i] = gsum;
    if (mode == 0)
        return;
    const float p = params[i];
    const float gr = gsum + s.s4 * p;
    if (mode == 1) {
        const float mi = s.s1 * m[i] + (1.0f - s.s1) * gr;
        const float vi = s.s2 * v[i] + (1.0f - s.s2) * gr * gr;
        m[i] = mi;
        v[i] = vi;
        params[i] = p - s.s0 * (mi / (sqrt(vi) / s.s5 + s.s3));
    } else {
        const float b = ctl.s3 ? gr : s.s1 * m[i] + (1.0f - s.s7) * gr;
        m[i] = s.s1 != 0.0f ? b : 0.0f;
        params[i] = p - s.s0 * (s.s1 != 0.0f ? b : gr);
    }
}
