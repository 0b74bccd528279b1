/* Conv2D forward for few input channels, NCHW f32, exact fp32 (src/ops/conv/conv2d_stem.c): a
 * network's first layer on images (Ci = 1 .. 4, one group; ResNet's 7x7 stride-2 stem on RGB).
 *
 * Why not the implicit GEMM: its k extent is Ci*Kh*Kw = 147, so every k slice gathers a 7x7
 * window scattered over three planes from global memory; 8 x 3 x 224^2 -> 64 x 112^2 took 145 us on
 * the H200 (cuDNN 116 fp32, 108 TF32) for 1.9 GFLOP, a quarter of the fp32 peak. Here a group stages
 * the input patch its output tile reads (one plane at a time) and that plane's weights in local
 * memory once, then every item runs the Kh x Kw taps on registers: per tap PXT input loads and
 * COT/4 broadcast float4 weight loads feed PXT x COT multiply-adds.
 *
 * A group: an output tile of TW columns x TR*PXT rows of one image, for COT*CB output channels.
 * Item (tx, ty, cb): column tx, rows ty + j*TR (j < PXT), channels cb*COT .. cb*COT + COT - 1.
 * Patch layout: row r of the patch at r*PITCH, its columns split by phase modulo SW (column c at
 * (c % SW)*PCS + c / SW), so the items of one row read consecutive words at every tap whatever the
 * stride; the host picks PITCH so that rows ty and ty+1 fall in disjoint banks (SH*PITCH = TW mod 32).
 * Weights: wl[tap][channel], the COT channels of an item contiguous (float4 loads, one address
 * across a warp). Zeros outside the image and past Co, so no tap branches.
 *
 * Grid: (tiles_x * tiles_y * N * ceil(Co / (COT*CB))) groups of TW*TR*CB items, dimension 0 only.
 * Arguments as conv2d.cl (common/conv_act.h's activation in flags >> 8).
 * -D: KH KW SH SW DH DW (the geometry: every tap offset is a constant), TW TR PXT COT CB, PCS PITCH,
 * STEM_UNROLL (1: every loop but the channel one unrolled, GPUs: acc in registers; 0: all rolled, CPU
 * devices, where POCL compiled the unrolled body for 45 s a program and ran it 10x slower). */
#include "common/conv_act.h"

#define TH (TR * PXT)
#define NPIX (TW * TR)
#define WG (NPIX * CB)
#define COG (COT * CB)
#define TAPS (KH * KW)
#define PR ((TH - 1) * SH + (KH - 1) * DH + 1)
#define PC ((TW - 1) * SW + (KW - 1) * DW + 1)

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
conv2d_stem(__global const float *x, __global const float *w, __global const float *bias,
            __global float *out, ulong4 offs, int8 ga, int8 gb, int4 gc, float act_alpha)
{
    __local float patch[PR * PITCH];
    __local float4 wl4[TAPS * COG / 4];
    __local float *wl = (__local float *)wl4;
    const int Ci = ga.s0, H = ga.s1, W = ga.s2, Co = ga.s3, Ho = ga.s4, Wo = ga.s5;
    const int pt = gb.s2, pl = gb.s3, FLAGS = gc.y, ACT_OP = FLAGS >> 8;
    const int tiles_x = (Wo + TW - 1) / TW, tiles = tiles_x * ((Ho + TH - 1) / TH);
    const int cogs = (Co + COG - 1) / COG;
    const int grp = get_group_id(0), tile = grp % tiles, nz = grp / tiles;
    const int img = nz / cogs, co0 = (nz - img * cogs) * COG;
    const int oy0 = tile / tiles_x * TH, ox0 = tile % tiles_x * TW;
    const int lid = get_local_id(0), cb = lid / NPIX, pix = lid - cb * NPIX;
    const int tx = pix % TW, ty = pix / TW;
    const int iy0 = oy0 * SH - pt, ix0 = ox0 * SW - pl;

    float acc[PXT][COT];
#if STEM_UNROLL
#pragma unroll
#endif
    for (int j = 0; j < PXT; j++)
#if STEM_UNROLL
#pragma unroll
#endif
        for (int c = 0; c < COT; c++)
            acc[j][c] = 0.0f;

    for (int ci = 0; ci < Ci; ci++) {
        if (ci > 0)
            barrier(CLK_LOCAL_MEM_FENCE); /* the last plane's taps are done */
        __global const float *xp = x + offs.x + ((size_t)img * Ci + ci) * (size_t)H * W;
        for (int e = lid; e < PR * PC; e += WG) {
            const int r = e / PC, c = e - r * PC, iy = iy0 + r, ix = ix0 + c;
            float v = 0.0f;
            if (iy >= 0 && iy < H && ix >= 0 && ix < W)
                v = xp[(size_t)iy * W + ix];
            patch[r * PITCH + (c % SW) * PCS + c / SW] = v;
        }
        /* channel fastest: consecutive local words (the global reads hit cache: w is small) */
        for (int e = lid; e < TAPS * COG; e += WG) {
            const int t = e / COG, co = co0 + (e - t * COG);
            wl[e] = co < Co ? w[offs.y + ((size_t)co * Ci + ci) * TAPS + t] : 0.0f;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        __local const float *pb = patch + ty * SH * PITCH + tx;
        __local const float4 *wb = wl4 + cb * (COT / 4);
#if STEM_UNROLL
#pragma unroll
#endif
        for (int ky = 0; ky < KH; ky++)
#if STEM_UNROLL
#pragma unroll
#endif
            for (int kx = 0; kx < KW; kx++) {
                const int off = ky * DH * PITCH + ((kx * DW) % SW) * PCS + (kx * DW) / SW;
                float v[PXT];
#if STEM_UNROLL
#pragma unroll
#endif
                for (int j = 0; j < PXT; j++)
                    v[j] = pb[j * TR * SH * PITCH + off];
#if STEM_UNROLL
#pragma unroll
#endif
                for (int q = 0; q < COT / 4; q++) {
                    const float4 w4 = wb[(ky * KW + kx) * (COG / 4) + q];
#if STEM_UNROLL
#pragma unroll
#endif
                    for (int j = 0; j < PXT; j++) {
                        acc[j][4 * q + 0] += v[j] * w4.x;
                        acc[j][4 * q + 1] += v[j] * w4.y;
                        acc[j][4 * q + 2] += v[j] * w4.z;
                        acc[j][4 * q + 3] += v[j] * w4.w;
                    }
                }
            }
    }

    const int ox = ox0 + tx;
    if (ox >= Wo)
        return;
    const size_t plane = (size_t)Ho * Wo;
#if STEM_UNROLL
#pragma unroll
#endif
    for (int c = 0; c < COT; c++) {
        const int co = co0 + cb * COT + c;
        if (co >= Co)
            break;
        const float b = (FLAGS & 1) ? bias[offs.z + co] : 0.0f;
        __global float *op = out + offs.w + ((size_t)img * Co + co) * plane + ox;
#if STEM_UNROLL
#pragma unroll
#endif
        for (int j = 0; j < PXT; j++) {
            const int oy = oy0 + ty + j * TR;
            if (oy < Ho)
                op[(size_t)oy * Wo] = conv_act(acc[j][c] + b, ACT_OP, act_alpha);
        }
    }
}
