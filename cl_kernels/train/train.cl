/* Training ops (include/cltensor_train.h): fused Adam step, MSE loss, Fourier features.
 *
 * Layout: every tensor is a flat f32 range starting `off.sN` elements into its buffer (64-bit
 * offsets and counts). Offsets come packed in one ulong4 to keep the argument count low.
 *
 * adam_step: one element per work item over a full grid (no stride loop), the update of param, m and v from grad in registers; s = (lr / bias correction 1, beta1, beta2, eps,
 *   L2 weight decay (Adam; 0 for AdamW), sqrt(bias correction 2), decoupled decay factor
 *   1 - lr * weight_decay (AdamW; 1 for Adam)). Same operation order as torch.optim.Adam / AdamW
 *   (AdamW scales param first, then subtracts the step).
 * mse_loss: ONE work-group of WG items: item i sums the squared differences of elements
 *   i, i + WG, ... into a float, then a tree in local memory; item 0 writes sum * inv_count. The
 *   order is fixed, so the result is deterministic. With sc.y != 0 (clt_mse_loss_with_grad) each
 *   item also writes dpred[i] = sc.y * (pred[i] - target[i]) for its elements (same launch; dpred
 *   may be pred or target itself: every element is read before its own write).
 * fourier_features: one item per (n, c), c < F, over a full grid: p = scale * sum_k x[n, k] B[k, c];
 *   out[n, c] = sin(p), out[n, F + c] = cos(p) (one sincos).
 *
 * -D contract: WG (mse_loss only: a power of two, the exact local size of its launch). adam_step and
 * fourier_features need a grid of at least count (resp. N * F) items.
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
    /* one element per item: the host's grid covers count (see the -D contract), no stride loop, so
     * POCL vectorises the work-group across items */
    const ulong i = get_global_id(0);
    if (i >= count)
        return;
    float p = param[off.s0 + i];
    float g = grad[off.s1 + i] + s.s4 * p;
    float mi = beta1 * m[off.s2 + i] + (1.0f - beta1) * g;
    float vi = beta2 * v[off.s3 + i] + (1.0f - beta2) * g * g;
    m[off.s2 + i] = mi;
    v[off.s3 + i] = vi;
    float denom = sqrt(vi) / s.s5 + s.s3;
    param[off.s0 + i] = p * s.s6 - s.s0 * (mi / denom);
}

/* off = (pred, target, out, dpred); sc = (1 / count, gradient scale or 0: no gradient). pred and
 * target are not const-qualified: dpred may be one of them. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
mse_loss(__global float *pred, __global float *target, __global float *out, __global float *dpred,
         ulong4 off, ulong count, float2 sc)
{
    __local float part[WG];
    const uint lid = get_local_id(0);
    const float inv_count = sc.x;
    float acc = 0.0f;
    for (ulong i = lid; i < count; i += WG) {
        float d = pred[off.s0 + i] - target[off.s1 + i];
        acc += d * d;
        if (sc.y != 0.0f)
            dpred[off.s3 + i] = sc.y * d;
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

/* off = (x, B, out, -); dims = (N, d, F, -). One item per (n, c): sin and cos of the same p. */
__kernel void fourier_features(__global const float *x, __global const float *B, __global float *out,
                               ulong4 off, ulong4 dims, float scale)
{
    const ulong d = dims.s1, F = dims.s2;
    const ulong i = get_global_id(0);
    if (i >= dims.s0 * F)
        return;
    const ulong n = i / F;
    const ulong c = i - n * F;
    __global const float *xr = x + off.s0 + n * d;
    float dot = 0.0f;
    for (ulong k = 0; k < d; k++)
        dot += xr[k] * B[off.s1 + k * F + c];
    float cs, sn = sincos(scale * dot, &cs);
    __global float *o = out + off.s2 + n * 2 * F + c;
    o[0] = sn;
    o[F] = cs;
}
