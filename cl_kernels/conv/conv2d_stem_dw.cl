/* Conv2D grad-weight for few input channels, NCHW f32 (src/ops/conv/conv2d_backward_stem.c): the
 * backward twin of conv2d_stem.cl (Ci = 1 .. 4, one group).
 *
 *   dw[co][kc] = sum over images and output pixels p of dy[n][co][p] * x[n][ci][window(p, tap)],
 *   kc = ci * Kh*Kw + ky * Kw + kx (dw's own layout)
 *
 * is a GEMM of Co x Ci*Kh*Kw over N*Ho*Wo pixels whose B operand is a window gather. The column path
 * writes those windows out (8 x 3 x 224^2, 7x7 stride 2: 59 MB) and reads them back; here a group stages
 * one output tile's dy (TW x TH pixels x COG channels, [pixel][channel], TW a multiple of 8) and the input patch those
 * pixels read (all CI planes) in local memory, then item (cb, kb) accumulates COI channels x KCI columns
 * over the tile's pixels: per pixel COI/4 float4 dy loads and KCI patch loads feed COI x KCI
 * multiply-adds; its KCI patch offsets are fixed for the whole kernel.
 *
 * A group walks tiles t = slot, slot + SLOTS, ... of all images (its channel block fixed), so each
 * group writes one partial dw block: conv2d_stem_dw_sum adds the SLOTS partials (or, SLOTS == 1,
 * the group writes dw itself). Pixels past the image have dy = 0; the patch has zeros outside x.
 *
 * Grid: SLOTS * ceil(Co / COG) groups of COB * KCB items (COB = COG / COI, KCB = ceil(CI*Kh*Kw / KCI)).
 * Arguments: dy, x, out (dw, or the partials [SLOTS][ceil(Co/COG)][COG][KCP]), geometry g16 (as
 * conv2d_backward.cl), offsets (dy, x, dw, partials).
 * -D: KH KW SH SW DH DW CI, TW TH COI KCI COB KCB, SLOTS, STEM_UNROLL (as conv2d_stem.cl). */

#define TAPS (KH * KW)
#define KC (CI * TAPS)
#define KCP (KCB * KCI)
#define COG (COB * COI)
#define COGP (COG + 4)
#define WG (COB * KCB)
#define TPIX (TW * TH)
#define PR ((TH - 1) * SH + (KH - 1) * DH + 1)
#define PC ((TW - 1) * SW + (KW - 1) * DW + 1)

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
conv2d_stem_dw(__global const float *dy, __global const float *x, __global float *out, int16 g16,
               ulong4 offs)
{
    __local float4 dyl4[TPIX * COGP / 4];
    __local float patch[CI * PR * PC];
    __local float *dyl = (__local float *)dyl4;
    const int N = g16.s0, H = g16.s2, W = g16.s3, Co = g16.s4, Ho = g16.s7, Wo = g16.s8;
    const int pt = g16.sb, pl = g16.sc;
    const int tiles_x = (Wo + TW - 1) / TW, tiles = tiles_x * ((Ho + TH - 1) / TH), total = tiles * N;
    const int grp = get_group_id(0), slot = grp % SLOTS, cgi = grp / SLOTS, co0 = cgi * COG;
    const int cgs = (Co + COG - 1) / COG;
    const int lid = get_local_id(0), cb = lid / KCB, kb = lid - cb * KCB;

    int koff[KCI];
#if STEM_UNROLL
#pragma unroll
#endif
    for (int i = 0; i < KCI; i++) {
        const int kc = kb * KCI + i, ci = kc / TAPS, t = kc - ci * TAPS, ky = t / KW, kx = t - ky * KW;
        koff[i] = kc < KC ? (ci * PR + ky * DH) * PC + kx * DW : 0;
    }
    float acc[COI][KCI];
#if STEM_UNROLL
#pragma unroll
#endif
    for (int c = 0; c < COI; c++)
#if STEM_UNROLL
#pragma unroll
#endif
        for (int i = 0; i < KCI; i++)
            acc[c][i] = 0.0f;

    for (int tt = slot; tt < total; tt += SLOTS) {
        const int img = tt / tiles, tile = tt - img * tiles;
        const int oy0 = tile / tiles_x * TH, ox0 = tile % tiles_x * TW;
        const int iy0 = oy0 * SH - pt, ix0 = ox0 * SW - pl;
        barrier(CLK_LOCAL_MEM_FENCE); /* the last tile's products are done */
        for (int e = lid; e < CI * PR * PC; e += WG) {
            const int ci = e / (PR * PC), r0 = e - ci * (PR * PC), r = r0 / PC, c = r0 - r * PC;
            const int iy = iy0 + r, ix = ix0 + c;
            float v = 0.0f;
            if (iy >= 0 && iy < H && ix >= 0 && ix < W)
                v = x[offs.y + (((size_t)img * CI + ci) * H + iy) * (size_t)W + ix];
            patch[e] = v;
        }
        /* runs of 8 pixels of 4 channels a warp: 32-byte global segments, and rows of COGP = COG + 4 words
         * put the 32 stores in 32 banks (float4-aligned rows) */
        for (int e = lid; e < COG * TPIX; e += WG) {
            const int r = e / 8, co = r % COG, px = (r / COG) * 8 + e % 8;
            const int oy = oy0 + px / TW, ox = ox0 + px % TW;
            float v = 0.0f;
            if (co0 + co < Co && oy < Ho && ox < Wo)
                v = dy[offs.x + (((size_t)img * Co + co0 + co) * Ho + oy) * (size_t)Wo + ox];
            dyl[px * COGP + co] = v;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int py = 0; py < TH; py++)
#if STEM_UNROLL
#pragma unroll
#endif
            for (int pxx = 0; pxx < TW; pxx++) {
                const int base = py * SH * PC + pxx * SW, px = py * TW + pxx;
                float xv[KCI];
#if STEM_UNROLL
#pragma unroll
#endif
                for (int i = 0; i < KCI; i++)
                    xv[i] = patch[koff[i] + base];
#if STEM_UNROLL
#pragma unroll
#endif
                for (int q = 0; q < COI / 4; q++) {
                    const float4 d = dyl4[px * (COGP / 4) + cb * (COI / 4) + q];
#if STEM_UNROLL
#pragma unroll
#endif
                    for (int i = 0; i < KCI; i++) {
                        acc[4 * q + 0][i] += d.x * xv[i];
                        acc[4 * q + 1][i] += d.y * xv[i];
                        acc[4 * q + 2][i] += d.z * xv[i];
                        acc[4 * q + 3][i] += d.w * xv[i];
                    }
                }
            }
    }
#if STEM_UNROLL
#pragma unroll
#endif
    for (int c = 0; c < COI; c++) {
        const int co = cb * COI + c;
#if STEM_UNROLL
#pragma unroll
#endif
        for (int i = 0; i < KCI; i++) {
            const int kc = kb * KCI + i;
#if SLOTS == 1
            if (co0 + co < Co && kc < KC)
                out[offs.z + (size_t)(co0 + co) * KC + kc] = acc[c][i];
#else
            out[offs.w + ((size_t)slot * cgs + cgi) * (COG * KCP) + co * KCP + kc] = acc[c][i];
#endif
        }
    }
}

/* dw[co][kc] = the sum of the SLOTS partial blocks, one item per (co, kc) of dw. Grid: Co * KC items
 * rounded up to the group size (any). Arguments: partials, dw, Co, offsets (partials, dw). */
__kernel void conv2d_stem_dw_sum(__global const float *part, __global float *dw, int Co, ulong2 offs)
{
    const int e = get_global_id(0);
    if (e >= Co * KC)
        return;
    const int co = e / KC, kc = e - co * KC, cgi = co / COG, cgs = (Co + COG - 1) / COG;
    const size_t at = offs.x + (size_t)cgi * (COG * KCP) + (size_t)(co - cgi * COG) * KCP + kc;
    const size_t step = (size_t)cgs * (COG * KCP);
    float s = 0.0f;
    for (int k = 0; k < SLOTS; k++)
        s += part[at + (size_t)k * step];
    dw[offs.y + e] = s;
}
