/* Launch 2 of the fused MLP's training step (and the optimizer of its per-layer path): one item per
 * parameter sums the G partial gradients in order 0..G-1 (deterministic), writes grads, then the
 * optimizer step; group 0 also sums the G per-group squared-error sums in a fixed tree order into
 * the loss when asked. With G = 1 and partial = grads (the per-layer path) it is the optimizer alone.
 *
 * -D contract: UWG (a power of two, the launch's exact local size).
 */
#ifndef UWG
#define UWG 256
#endif

/* s = (lr or lr / bias correction 1, beta1 or momentum, beta2, eps, weight decay, sqrt(bias
 * correction 2), 1 / (n * outputs), dampening); mode 0 gradients only, 1 Adam, 2 SGD momentum
 * (torch.optim.SGD: buf = momentum * buf + (1 - dampening) * g, first step buf = g; p -= lr * buf).
 * ctl = (groups G, mode, want loss, first step); partial and grads may be the same buffer (G = 1);
 * pstride: floats between the partial slices. */
__kernel __attribute__((reqd_work_group_size(UWG, 1, 1))) void
mlp_update(__global float *params, __global float *grads, __global float *m, __global float *v,
           __global const float *partial, __global const float *loss_part, __global float *loss,
           int4 ctl, float8 s, int nparams, int pstride)
{
    const int G = ctl.s0, mode = ctl.s1;
    __local float red[UWG];
    const int i = get_global_id(0);
    if (ctl.s2 && get_group_id(0) == 0) {
        const int lid = get_local_id(0);
        float acc = 0.0f;
        for (int q = lid; q < G; q += UWG)
            acc += loss_part[q];
        red[lid] = acc;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int w = UWG / 2; w > 0; w >>= 1) {
            if (lid < w)
                red[lid] += red[lid + w];
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (lid == 0)
            loss[0] = red[0] * s.s6;
    }
    if (i >= nparams)
        return;
    /* the sum in order 0..G-1, its loads 16 at a time: one load per step made a 50-group sum 50
     * L2 round trips long */
    float gsum = 0.0f;
    int q = 0;
    for (; q + 16 <= G; q += 16) {
        float t[16];
#pragma unroll
        for (int u = 0; u < 16; u++)
            t[u] = partial[(long)(q + u) * pstride + i];
#pragma unroll
        for (int u = 0; u < 16; u++)
            gsum += t[u];
    }
    for (; q < G; q++)
        gsum += partial[(long)q * pstride + i];
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
