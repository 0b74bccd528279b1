/* Conv2D forward helpers without a GEMM tile, NCHW f32:
 *
 * conv2d_depthwise: one input channel per group (Ci_g == 1; depthwise when Co == Ci == groups).
 *   One work item per output element sums its Kh x Kw window directly (K is at most a few dozen:
 *   a GEMM tile would be mostly padding). Out-of-image taps read a clamped in-range element and
 *   multiply it by zero, so neighbouring items never diverge (POCL runs a group as one vector loop).
 *   Grid: (Ho*Wo rounded up to the local size, N * Co), any local size. Arguments as conv2d.cl.
 *
 * conv2d_im2col: the CLBlast path's gather. For images img0 .. img0 + nimg - 1 it writes
 *   col[i][(ci*Kh + ky)*Kw + kx][oy*Wo + ox] = x[img0 + i][ci][oy*sh - pt + ky*dh][ox*sw - pl + kx*dw]
 *   (0 outside the image): per image a (Ci*Kh*Kw) x (Ho*Wo) matrix, group g's rows contiguous, so
 *   the GEMM is W_g (Co_g x Ci_g*Kh*Kw) * col_g per image and group. Supports asymmetric padding,
 *   which CLBlastSim2col does not. Grid: (Ho*Wo rounded up, Ci*Kh*Kw, nimg).
 *   Arguments: x, col, offs = (x offset, unused, img0, unused), ga, gb (as conv2d.cl).
 *
 * conv2d_im2col_cpu: the same columns for CPU devices (POCL), where one item per element with
 *   per-item index divisions runs at ~0.3 GB/s: one item per (image, column row), walking the
 *   Ho x Wo plane itself in runs of 8 pixels (one unaligned float8 load at stride 1, a float16
 *   load's even lanes at stride 2, both when the run lies inside the input row; else per pixel
 *   with zeros outside), so no division varies across items and every store is a float8.
 *   Grid: (Ci*Kh*Kw rounded up to the local size, nimg). Arguments as conv2d_im2col.
 *
 * -D contract: none; the activation is flags >> 8 (common/conv_act.h).
 */
#include "common/conv_act.h"


__kernel void conv2d_depthwise(__global const float *x, __global const float *w,
                               __global const float *bias, __global float *out, ulong4 offs,
                               int8 ga, int8 gb, int4 gc, float act_alpha)
{
    const int Ci = ga.s0, H = ga.s1, W = ga.s2, Co = ga.s3, Ho = ga.s4, Wo = ga.s5, Kh = ga.s6,
              Kw = ga.s7;
    const int sh = gb.s0, sw = gb.s1, pt = gb.s2, pl = gb.s3, dh = gb.s4, dw = gb.s5;
    const int Co_g = gb.s7, FLAGS = gc.y, ACT_OP = FLAGS >> 8;
    const int HoWo = Ho * Wo, pix = get_global_id(0);
    if (pix >= HoWo)
        return;
    const int nc = get_global_id(1), img = nc / Co, co = nc - img * Co, g = co / Co_g;
    const int oy = pix / Wo, ox = pix - oy * Wo;
    __global const float *xb = x + offs.x + ((size_t)img * Ci + g) * (size_t)(H * W);
    __global const float *wr = w + offs.y + (size_t)co * Kh * Kw;
    float s = 0.0f;
    for (int ky = 0; ky < Kh; ky++) {
        const int iy = oy * sh - pt + ky * dh;
        const int yin = iy >= 0 && iy < H;
        __global const float *row = xb + clamp(iy, 0, H - 1) * W;
        for (int kx = 0; kx < Kw; kx++) {
            const int ix = ox * sw - pl + kx * dw;
            const float v = row[clamp(ix, 0, W - 1)];
            s += (yin && ix >= 0 && ix < W ? v : 0.0f) * wr[ky * Kw + kx];
        }
    }
    if (FLAGS & 1)
        s += bias[offs.z + co];
    out[offs.w + (size_t)nc * HoWo + pix] = conv_act(s, ACT_OP, act_alpha);
}

__kernel void conv2d_im2col(__global const float *x, __global float *col, ulong4 offs, int8 ga,
                            int8 gb)
{
    const int Ci = ga.s0, H = ga.s1, W = ga.s2, Ho = ga.s4, Wo = ga.s5, Kh = ga.s6, Kw = ga.s7;
    const int sh = gb.s0, sw = gb.s1, pt = gb.s2, pl = gb.s3, dh = gb.s4, dw = gb.s5;
    const int HoWo = Ho * Wo, pix = get_global_id(0);
    if (pix >= HoWo)
        return;
    const int row = get_global_id(1), i = get_global_id(2), KHW = Kh * Kw;
    const int ci = row / KHW, r = row - ci * KHW, ky = r / Kw, kx = r - ky * Kw;
    const int oy = pix / Wo, ox = pix - oy * Wo;
    const int iy = oy * sh - pt + ky * dh, ix = ox * sw - pl + kx * dw;
    const size_t img = offs.z + (size_t)i;
    float v = 0.0f;
    if (iy >= 0 && iy < H && ix >= 0 && ix < W)
        v = x[offs.x + ((img * Ci + ci) * H + iy) * (size_t)W + ix];
    col[((size_t)i * Ci * KHW + row) * HoWo + pix] = v;
}

__kernel void conv2d_im2col_cpu(__global const float *x, __global float *col, ulong4 offs, int8 ga,
                                int8 gb)
{
    const int Ci = ga.s0, H = ga.s1, W = ga.s2, Ho = ga.s4, Wo = ga.s5, Kh = ga.s6, Kw = ga.s7;
    const int sh = gb.s0, sw = gb.s1, pt = gb.s2, pl = gb.s3, dh = gb.s4, dw = gb.s5;
    const int KHW = Kh * Kw, row = get_global_id(0), i = get_global_id(1);
    if (row >= Ci * KHW)
        return;
    const int ci = row / KHW, r = row - ci * KHW, ky = r / Kw, kx = r - ky * Kw;
    const size_t img = offs.z + (size_t)i;
    __global const float *xp = x + offs.x + (img * Ci + ci) * (size_t)H * W;
    __global float *cp = col + ((size_t)i * Ci * KHW + row) * (size_t)(Ho * Wo);
    const int wo8 = Wo & ~7;
    for (int oy = 0; oy < Ho; oy++, cp += Wo) {
        const int iy = oy * sh - pt + ky * dh;
        if (iy < 0 || iy >= H) {
            int ox = 0;
            for (; ox < wo8; ox += 8)
                vstore8((float8)(0.0f), 0, cp + ox);
            for (; ox < Wo; ox++)
                cp[ox] = 0.0f;
            continue;
        }
        __global const float *rp = xp + (size_t)iy * W;
        int ox = 0;
        for (; ox < wo8; ox += 8) {
            const int ix = ox * sw - pl + kx * dw;
            float8 v;
            if (sw == 1 && ix >= 0 && ix + 8 <= W) {
                v = vload8(0, rp + ix);
            } else if (sw == 2 && ix >= 0 && ix + 16 <= W) {
                v = vload16(0, rp + ix).even;
            } else {
                float t[8];
                for (int e = 0; e < 8; e++) {
                    const int j = ix + e * sw;
                    t[e] = j >= 0 && j < W ? rp[j] : 0.0f;
                }
                v = vload8(0, t);
            }
            vstore8(v, 0, cp + ox);
        }
        for (; ox < Wo; ox++) {
            const int j = ox * sw - pl + kx * dw;
            cp[ox] = j >= 0 && j < W ? rp[j] : 0.0f;
        }
    }
}
