/* Training ops (include/cltensor_train.h): fused Adam step, MSE loss, Fourier features.
 *
 * Layout: every tensor is a flat f32 range starting `off.sN` elements into its buffer (64-bit
 * offsets and counts). Offsets come packed in one ulong4 to keep the argument count low.
 *
 * adam_step: one element per work item (a grid-stride loop where the host caps the grid), the
 *   update of param, m and v from grad in registers; s = (lr / bias correction 1, beta1, beta2, eps,
 *   weight decay, sqrt(bias correction 2)). Same operation order as torch.optim.Adam.
 * mse_loss: ONE work-group of WG items: item i sums the squared differences of elements
 *   i, i + WG, ... into a float, then a tree in local memory; item 0 writes sum * inv_count. The
 *   order is fixed, so the result is deterministic.
 * fourier_features: one item per output element (n, j) of out [N, 2F]: column c = j mod F,
 *   p = scale * sum_k x[n, k] B[k, c]; sin(p) for j < F, cos(p) otherwise.
 *
 * -D contract: WG (mse_loss only: a power of two, the exact local size of its launch).
 */
#ifndef WG
#define WG 256
#endif
#if (WG & (WG - 1)) != 0 || WG < 1
#error "WG must be a power of two"
#endif

/* off = (param, grad, m, v) */
__kernel void adam_step(__global float *param, __global const float *grad, __global float *m,
                        __global float *v, ulong4 off, ulong count, float8 s)
{
    const float beta1 = s.s1, beta2 = s.s2;
    for (ulong i = get_global_id(0); i < count; i += get_global_size(0)) {
        float p = param[off.s0 + i];
        float g = grad[off.s1 + i] + s.s4 * p;
        float mi = beta1 * m[off.s2 + i] + (1.0f - beta1) * g;
        float vi = beta2 * v[off.s3 + i] + (1.0f - beta2) * g * g;
        m[off.s2 + i] = mi;
        v[off.s3 + i] = vi;
        float denom = sqrt(vi) / s.s5 + s.s3;
        param[off.s0 + i] = p - s.s0 * (mi / denom);
    }
}

/* off = (pred, target, out, -) */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
mse_loss(__global const float *pred, __global const float *target, __global float *out, ulong4 off,
         ulong count, float inv_count)
{
    __local float part[WG];
    const uint lid = get_local_id(0);
    float acc = 0.0f;
    for (ulong i = lid; i < count; i += WG) {
        float d = pred[off.s0 + i] - target[off.s1 + i];
        acc += d * d;
    }
    part[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint w = WG / 2; w > 0; w >>= 1) {
        if (lid < w)
            part[lid] += part[lid + w];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        out[off.s2] = part[0] * inv_count;
}

/* off = (x, B, out, -); dims = (N, d, F, -) */
__kernel void fourier_features(__global const float *x, __global const float *B, __global float *out,
                               ulong4 off, ulong4 dims, float scale)
{
    const ulong d = dims.s1, F = dims.s2, width = 2 * dims.s2;
    const ulong count = dims.s0 * width;
    for (ulong i = get_global_id(0); i < count; i += get_global_size(0)) {
        ulong n = i / width, j = i - n * width;
        ulong c = j < F ? j : j - F;
        float dot = 0.0f;
        for (ulong k = 0; k < d; k++)
            dot += x[off.s0 + n * d + k] * B[off.s1 + k * F + c];
        float p = scale * dot;
        out[off.s2 + i] = j < F ? sin(p) : cos(p);
    }
}
