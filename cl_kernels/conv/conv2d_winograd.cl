/* Conv2D forward, Winograd F(4x4, 3x3): 3x3 kernels, stride 1, dilation 1, one group, NCHW f32.
 *
 * Each 4x4 output block of an image and output channel k is
 *   Y = A^T [ sum_c (G g[k][c] G^T) .* (B^T d[c] B) ] A
 * where d[c] is the 6x6 input patch of channel c that the block reads (zeros outside the image) and
 * g[k][c] the 3x3 weight: 36 products per (k, c) and block instead of 144. The sum over c of the
 * element-wise products is, per transform position xi (0..35), a GEMM:
 *   M[xi] (Co x P) = U[xi] (Co x Ci) * V[xi] (Ci x P),   P = blocks (images x tilesH x tilesW)
 * which the host runs as ONE strided-batched GEMM (batch 36) between the two kernels here:
 *   conv2d_winograd_transform  V[xi][c][p] = (B^T d B)[xi] and U[xi][k][c] = (G g G^T)[xi]
 *   conv2d_winograd_output     out = act(A^T M A + bias), the in-range part of each 4x4 block
 * Interpolation points 0, +-1, +-2 and infinity (the usual F(4,3) matrices; the tests check the
 * result against a direct double reference, not the table).
 *
 * Layout in the workspace ws (element offsets from the host): U at u_base, row length ldu (Ci
 * rounded up to 4), plane stride Co*ldu; V at v_base, row length ldp (P rounded up to 4), plane
 * stride Ci*ldp; M at m_base, the same with Co rows. Blocks p of one chunk of images are numbered
 * p = (image - img0) * tilesH*tilesW + th * tilesW + tw, so neighbouring items touch neighbouring p:
 * V, M and the output blocks are read and written coalesced.
 *
 * conv2d_winograd_transform: grid (ceil(P / L) * L, Ci + wrows), any local (L, 1). Rows c < Ci:
 *   the input transform of block gid0 of channel c. Rows >= Ci: weight (k, c) number
 *   j = (row - Ci) * global_size(0) + gid0 (j < nw; nw = Co*Ci for the first chunk, 0 after it).
 *   Arguments: x, w, ws, offs = (x, w, v_base, u_base), ga = (Ci, H, W, Co, tilesW, tilesH*tilesW,
 *   pt, pl), gb = (img0, P, ldp, ldu, nw, -, -, -).
 * conv2d_winograd_output: grid (ceil(P / L) * L, Co), any local (L, 1).
 *   Arguments: ws, bias (any buffer when flags bit 0 is clear), out, offs = (m_base, bias, out, -),
 *   ga = (Co, Ho, Wo, tilesW, tilesH*tilesW, img0, P, ldp), flags = bias | activation << 8
 *   (common/conv_act.h), act_alpha.
 * Per-image and per-plane indices fit int (host checks); buffer offsets are 64-bit.
 * -D contract: none.
 */
#include "common/conv_act.h"
#include "common/winograd.h"

__kernel void conv2d_winograd_transform(__global const float *x, __global const float *w,
                                        __global float *ws, ulong4 offs, int8 ga, int8 gb)
{
    const int Ci = ga.s0, P = gb.s1, nw = gb.s4;
    const int p = get_global_id(0), row = get_global_id(1);
    if (row < Ci) {
        if (p < P)
            wino_input_transform(x, ws, offs, ga, gb, row, p);
        return;
    }
    const int j = (row - Ci) * (int)get_global_size(0) + p;
    if (j < nw)
        wino_weight_transform(w, ws, offs, ga, gb, j);
}

__kernel void conv2d_winograd_output(__global const float *ws, __global const float *bias,
                                     __global float *out, ulong4 offs, int8 ga, int flags,
                                     float act_alpha)
{
    const int Co = ga.s0, Ho = ga.s1, Wo = ga.s2, tilesW = ga.s3, tpi = ga.s4, img0 = ga.s5,
              P = ga.s6, ldp = ga.s7;
    const int p = get_global_id(0), k = get_global_id(1);
    if (p >= P)
        return;
    const ulong plane = (ulong)Co * (ulong)ldp;
    __global const float *m = ws + offs.x + (ulong)k * (ulong)ldp + (ulong)p;
    float t4[4][6]; /* A^T M, column by column */
    #pragma unroll
    for (int j = 0; j < 6; j++) {
        float c6[6];
        wino_plane_column(m, plane, j, c6);
        WINO_AT(c6[0], c6[1], c6[2], c6[3], c6[4], c6[5], t4[0][j], t4[1][j], t4[2][j], t4[3][j]);
    }
    const float b = (flags & 1) ? bias[offs.y + k] : 0.0f;
    const int act = flags >> 8;
    const int img = p / tpi, t = p - img * tpi, th = t / tilesW, tw = t - th * tilesW;
    const int oy0 = 4 * th, ox0 = 4 * tw;
    __global float *o =
        out + offs.z + ((ulong)(img0 + img) * (ulong)Co + (ulong)k) * (ulong)Ho * (ulong)Wo;
    #pragma unroll
    for (int i = 0; i < 4; i++) { /* (A^T M) A, row by row */
        float y[4];
        WINO_AT(t4[i][0], t4[i][1], t4[i][2], t4[i][3], t4[i][4], t4[i][5], y[0], y[1], y[2],
                y[3]);
        const int oy = oy0 + i;
        if (oy >= Ho)
            break;
        #pragma unroll
        for (int j = 0; j < 4; j++)
            if (ox0 + j < Wo)
                o[oy * Wo + ox0 + j] = conv_act(y[j] + b, act, act_alpha);
    }
}
