/* The FNO spectral channel mix on the rfft2 spectrum and its gradients (src/ops/fft/spectral_mix.c).
 * Complex values are float2. x [B,I,H,Wf], w [2,I,O,m1,m2], out [B,O,H,Wf]; rows h < m1 use corner
 * 0, rows h >= H - m1 corner 1; columns k < m2. One work item per output element. Offsets in
 * elements from each buffer's start (tensors may be views). */

static inline float2 c_mul(float2 a, float2 b)
{
    return (float2)(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

/* a * conj(b) */
static inline float2 c_mul_conj(float2 a, float2 b)
{
    return (float2)(a.x * b.x + a.y * b.y, a.y * b.x - a.x * b.y);
}

/* Weight row of h in its corner, or -1 outside the corners; *corner set when inside. */
static inline long corner_row(long h, long H, long m1, long *corner)
{
    if (h < m1) {
        *corner = 0;
        return h;
    }
    if (h >= H - m1) {
        *corner = 1;
        return h - (H - m1);
    }
    return -1;
}

__kernel void spectral_mix(global const float2 *x, long x_off, global const float2 *w, long w_off,
                         global float2 *out, long out_off, long B, long I, long O, long H, long Wf,
                         long m1, long m2)
{
    x += x_off;
    w += w_off;
    out += out_off;
    ulong items = (ulong)(B * O * H * Wf);
    for (ulong g = get_global_id(0); g < items; g += get_global_size(0)) {
        long k = (long)(g % (ulong)Wf);
        long rest = (long)(g / (ulong)Wf);
        long h = rest % H;
        rest /= H;
        long o = rest % O, b = rest / O;
        long c = 0, hm = corner_row(h, H, m1, &c);
        float2 acc = (float2)(0.0f, 0.0f);
        if (hm >= 0 && k < m2)
            for (long i = 0; i < I; i++)
                acc += c_mul(x[((b * I + i) * H + h) * Wf + k], w[(((c * I + i) * O + o) * m1 + hm) * m2 + k]);
        out[g] = acc;
    }
}

/* The same on CPU devices (src/ops/fft/spectral_mix.c takes it there): one work item per output row
 * (b, o, h), so the index arithmetic (four 64-bit divisions per element above) is paid once a row; a
 * corner row sums over i four k at a time in float4 lanes (x's and w's rows are contiguous in k), the
 * rest of the row is zeros. POCL, fno_spectral_conv/8x32x64x64m16: the element kernel took 6.8 ms of
 * its 11. Items: B * O * H. */
__kernel void spectral_mix_rows(global const float2 *x, long x_off, global const float2 *w, long w_off,
                              global float2 *out, long out_off, long B, long I, long O, long H, long Wf,
                              long m1, long m2)
{
    x += x_off;
    w += w_off;
    out += out_off;
    ulong rows = (ulong)(B * O * H);
    for (ulong r = get_global_id(0); r < rows; r += get_global_size(0)) {
        long h = (long)(r % (ulong)H), bo = (long)(r / (ulong)H);
        long o = bo % O, b = bo / O;
        long c = 0, hm = corner_row(h, H, m1, &c);
        global float2 *orow = out + (long)r * Wf;
        long k = 0;
        if (hm >= 0) {
            global const float2 *xr = x + (b * I * H + h) * Wf;            /* x[b, 0, h, :] */
            global const float2 *wr = w + ((c * I * O + o) * m1 + hm) * m2; /* w[c, 0, o, hm, :] */
            const long xs = H * Wf, ws = O * m1 * m2;                        /* steps of i */
            long kend = min(m2, Wf);
            for (; k + 4 <= kend; k += 4) {
                float4 ar = (float4)(0.0f), ai = (float4)(0.0f);
                for (long i = 0; i < I; i++) {
                    float8 xv = vload8(0, (global const float *)(xr + i * xs + k));
                    float8 wv = vload8(0, (global const float *)(wr + i * ws + k));
                    ar += xv.even * wv.even - xv.odd * wv.odd;
                    ai += xv.even * wv.odd + xv.odd * wv.even;
                }
                vstore8((float8)(ar.s0, ai.s0, ar.s1, ai.s1, ar.s2, ai.s2, ar.s3, ai.s3), 0, (global float *)(orow + k));
            }
            for (; k < kend; k++) {
                float2 acc = (float2)(0.0f, 0.0f);
                for (long i = 0; i < I; i++)
                    acc += c_mul(xr[i * xs + k], wr[i * ws + k]);
                orow[k] = acc;
            }
        }
        for (; k < Wf; k++)
            orow[k] = (float2)(0.0f, 0.0f);
    }
}

/* dx[b,i,h,k] = sum_o dout[b,o,h,k] conj(w[c,i,o,hm,k]) */
__kernel void spectral_mix_dx(global const float2 *w, long w_off, global const float2 *dout, long g_off,
                            global float2 *dx, long dx_off, long B, long I, long O, long H, long Wf,
                            long m1, long m2)
{
    w += w_off;
    dout += g_off;
    dx += dx_off;
    ulong items = (ulong)(B * I * H * Wf);
    for (ulong g = get_global_id(0); g < items; g += get_global_size(0)) {
        long k = (long)(g % (ulong)Wf);
        long rest = (long)(g / (ulong)Wf);
        long h = rest % H;
        rest /= H;
        long i = rest % I, b = rest / I;
        long c = 0, hm = corner_row(h, H, m1, &c);
        float2 acc = (float2)(0.0f, 0.0f);
        if (hm >= 0 && k < m2)
            for (long o = 0; o < O; o++)
                acc += c_mul_conj(dout[((b * O + o) * H + h) * Wf + k],
                                  w[(((c * I + i) * O + o) * m1 + hm) * m2 + k]);
        dx[g] = acc;
    }
}

/* dw[c,i,o,hm,k] = sum_b conj(x[b,i,h,k]) dout[b,o,h,k] */
__kernel void spectral_mix_dw(global const float2 *x, long x_off, global const float2 *dout, long g_off,
                            global float2 *dw, long dw_off, long B, long I, long O, long H, long Wf,
                            long m1, long m2)
{
    x += x_off;
    dout += g_off;
    dw += dw_off;
    ulong items = (ulong)(2 * I * O * m1 * m2);
    for (ulong g = get_global_id(0); g < items; g += get_global_size(0)) {
        long k = (long)(g % (ulong)m2);
        long rest = (long)(g / (ulong)m2);
        long hm = rest % m1;
        rest /= m1;
        long o = rest % O;
        rest /= O;
        long i = rest % I, c = rest / I;
        long h = c == 0 ? hm : H - m1 + hm;
        float2 acc = (float2)(0.0f, 0.0f);
        for (long b = 0; b < B; b++)
            acc += c_mul_conj(dout[((b * O + o) * H + h) * Wf + k], x[((b * I + i) * H + h) * Wf + k]);
        dw[g] = acc;
    }
}
