/* Column buffers for the CLBlast path of Conv2D backward (any padding per side, dilation, groups,
 * the whole batch in one launch; CLBlast's own im2col/col2im take one image and symmetric padding).
 *
 * Layout: col[((n * Ci + c) * Kh * Kw + ky * Kw + kx) * Ho * Wo + oy * Wo + ox], c = g * Cig + ci,
 * i.e. per (image, group) a [Cig * Kh * Kw, Ho * Wo] row-major matrix: the B operand of the weight
 * gradient GEMM (transposed) and the C result of the input gradient GEMM.
 *
 * conv_im2col: one item per col element, = x at the tap or 0 in the padding.
 * conv_col2im: one item per dx element, gathers the col entries whose tap lands on it (every dx
 *   element written, no atomics).
 * conv_col2im_cpu: conv_col2im for CPU devices (POCL): one item per dx plane (image, channel): it
 *   zeroes the plane, then adds every tap's column rows into it (runs of outputs whose input column
 *   is inside the row: no per-element test). Planes are private to their item (no atomics); the
 *   terms arrive in tap order rather than conv_col2im's, which the tolerance of a sum allows.
 *   Grid: N * Ci items.
 * conv_flip_weights: one item per (co, ci) row of w, wf[g][ci][co][Kh-1-ky][Kw-1-kx] = w[g][co][ci][ky][kx]
 *   (per group, channels swapped and taps reversed): the weights of the stride-1 input gradient
 *   as a forward convolution of dy (CPU devices, conv2d_backward_cpu.c).
 * Arguments: geometry int16 G as in conv2d_backward.cl, element offsets ulong2 OFF = (src, dst).
 * 1-D grid over the outputs; items past the end return.
 *
 * conv_dw_columns: the operands of the one-GEMM grad-weight (conv2d_backward_wgemm.c) for a
 *   chunk of NB = G.s0 images (offsets already at the chunk's first image), k = n * Ho * Wo + p
 *   along rows of LDK = OFF.s3 elements (a multiple of 4; [NB*Ho*Wo, LDK) is left unwritten):
 *     col[(c * Kh + ky) * Kw + kx][k] = x at the tap or 0, from ws[0];
 *     dyT[co][k] = dy[n][co][p], from ws[OFF.s2] (the host launches these only for NB > 1; for
 *     one image it points the GEMM at dy).
 *   Per group g, col rows g*Cig*Kh*Kw.. and dyT rows g*Cog.. are contiguous blocks (the GEMM's
 *   batch strides). Grid (p rounded up to the group, Ci [+ Co], NB), local (L, 1, 1): an item
 *   writes the Kh*Kw taps of its pixel and channel (one division per item, not per element: on
 *   NVIDIA an integer division is ~20 instructions), or one dy element when dim 1 >= Ci (a whole
 *   group takes that branch); consecutive items write consecutive k (coalesced).
 *   The host keeps NB * Ho * Wo < 2^31. OFF = (x offset, dy offset, dyT start in ws, LDK).
 */
#define NB G.s0
#define CI G.s1
#define H G.s2
#define W G.s3
#define KH G.s5
#define KW G.s6
#define HO G.s7
#define WO G.s8
#define SH G.s9
#define SW G.sa
#define PT G.sb
#define PL G.sc
#define DH G.sd
#define DW G.se

__kernel void conv_im2col(__global const float *x, __global float *col, int16 G, ulong2 OFF)
{
    const ulong e = get_global_id(0);
    const ulong hw = (ulong)HO * WO, kk = (ulong)KH * KW;
    if (e >= (ulong)NB * CI * kk * hw)
        return;
    const int ox = (int)(e % WO), oy = (int)(e / WO % HO);
    const ulong row = e / hw; /* (n * Ci + c) * kk + tap */
    const int tap = (int)(row % kk), ky = tap / KW, kx = tap % KW;
    const ulong nc = row / kk;
    const int iy = oy * SH - PT + ky * DH, ix = ox * SW - PL + kx * DW;
    float v = 0.0f;
    if (iy >= 0 && iy < H && ix >= 0 && ix < W)
        v = x[OFF.s0 + (nc * H + iy) * W + ix];
    col[OFF.s1 + e] = v;
}

__kernel void conv_col2im(__global const float *col, __global float *dx, int16 G, ulong2 OFF)
{
    const ulong e = get_global_id(0);
    if (e >= (ulong)NB * CI * H * W)
        return;
    const int w = (int)(e % W), h = (int)(e / W % H);
    const ulong nc = e / ((ulong)H * W);
    const ulong hw = (ulong)HO * WO;
    const ulong base = OFF.s0 + nc * KH * KW * hw;
    float s = 0.0f;
    for (int ky = 0; ky < KH; ky++) {
        int ty = h + PT - ky * DH;
        if (ty < 0 || ty % SH || ty / SH >= HO)
            continue;
        for (int kx = 0; kx < KW; kx++) {
            int tx = w + PL - kx * DW;
            if (tx < 0 || tx % SW || tx / SW >= WO)
                continue;
            s += col[base + (ulong)(ky * KW + kx) * hw + (ulong)(ty / SH) * WO + tx / SW];
        }
    }
    dx[OFF.s1 + e] = s;
}

__kernel void conv_col2im_cpu(__global const float *col, __global float *dx, int16 G, ulong2 OFF)
{
    const ulong nc = get_global_id(0);
    if (nc >= (ulong)NB * CI)
        return;
    const int hw = HO * WO;
    __global const float *cp = col + OFF.s0 + nc * KH * KW * (ulong)hw;
    __global float *d = dx + OFF.s1 + nc * (ulong)(H * W);
    for (int i = 0; i < H * W; i++)
        d[i] = 0.0f;
    for (int ky = 0; ky < KH; ky++)
        for (int kx = 0; kx < KW; kx++, cp += hw) {
            const int xs = kx * DW - PL; /* ix = ox * SW + xs */
            const int lo = xs >= 0 ? 0 : (-xs + SW - 1) / SW;
            const int hi = W - 1 - xs < 0 ? 0 : min(WO, (W - 1 - xs) / SW + 1);
            for (int oy = 0; oy < HO; oy++) {
                const int iy = oy * SH - PT + ky * DH;
                if (iy < 0 || iy >= H)
                    continue;
                __global float *dr = d + iy * W;
                __global const float *cr = cp + oy * WO;
                for (int ox = lo; ox < hi; ox++)
                    dr[ox * SW + xs] += cr[ox];
            }
        }
}

__kernel void conv_flip_weights(__global const float *w, __global float *wf, int16 G, ulong2 OFF)
{
    /* one item per (co, ci) row of taps: the divisions once per row, not per element */
    const int r = get_global_id(0);
    const int cig = CI / G.sf, cog = G.s4 / G.sf, kk = KH * KW;
    if (r >= G.s4 * cig)
        return;
    const int cof = r / cig, ci = r - cof * cig, g = cof / cog, co = cof - g * cog;
    __global const float *src = w + OFF.s0 + (ulong)r * kk;
    __global float *dst = wf + OFF.s1 + ((ulong)(g * cig + ci) * cog + co) * kk + kk - 1;
    for (int t = 0; t < kk; t++)
        dst[-t] = src[t];
}

__kernel void conv_dw_columns(__global const float *x, __global const float *dy, __global float *ws,
                              int16 G, ulong4 OFF)
{
    const int p = get_global_id(0), c = get_global_id(1), n = get_global_id(2), hw = HO * WO;
    if (p >= hw)
        return;
    const ulong k = (ulong)n * hw + p;
    if (c >= CI) { /* the dy copy */
        const int co = c - CI;
        ws[OFF.s2 + (ulong)co * OFF.s3 + k] = dy[OFF.s1 + ((ulong)n * G.s4 + co) * hw + p];
        return;
    }
    const int oy = p / WO, ox = p - oy * WO, iy0 = oy * SH - PT, ix0 = ox * SW - PL;
    __global const float *xp = x + OFF.s0 + ((ulong)n * CI + c) * H * W;
    __global float *out = ws + (ulong)c * (KH * KW) * OFF.s3 + k;
    for (int ky = 0; ky < KH; ky++) {
        const int iy = iy0 + ky * DH;
        const int row_in = iy >= 0 && iy < H;
        for (int kx = 0; kx < KW; kx++, out += OFF.s3) {
            const int ix = ix0 + kx * DW;
            *out = row_in && ix >= 0 && ix < W ? xp[(ulong)iy * W + ix] : 0.0f;
        }
    }
}
