/* Conv2D grad-weight, Winograd F(4x4, 3x3): 3x3 kernels, stride 1, dilation 1, one group, NCHW f32.
 *
 * The forward's identity y = A^T [(G g) .* (B^T d)] (y_i = sum_j g_j d_{i+j}) is trilinear, so for
 * any 4-vector w: sum_i w_i y_i = sum_k (A w)_k (G g)_k (B^T d)_k. With w = 4 taps of dy and
 * g = the unit vector e_u it gives the weight-gradient correlation
 *   z_u = sum_a dy_a d_{a+u} = [G^T ((A dy) .* (B^T d))]_u,
 * and in 2-D, for the 4x4 block Dy of dy at (y0, x0) (zeros past Ho, Wo) and the 6x6 patch D of x
 * at (y0 - pt, x0 - pl) (zeros outside the image):
 *   dW[co][ci] = sum over images and blocks of G^T [(A Dy_co A^T) .* (B^T D_ci B)] G.
 * The sum commutes with G^T . G, so per transform position xi (0..35) it is a GEMM over blocks,
 *   M[xi] (Co x Ci) = U[xi] (Co x T) * V[xi] (Ci x T)^T,  T = images x blocks,
 * which the host runs as ONE strided-batched NT GEMM (batch 36, beta 1 after the first chunk of
 * images) between the two kernels here:
 *   conv2d_winograd_dw_transform  V[xi][ci][p] = (B^T D B)[xi] (the forward's input transform:
 *                                 dy's block grid is the forward's output grid) and
 *                                 U[xi][co][p] = (A Dy A^T)[xi]
 *   conv2d_winograd_dw_output     dw[co][ci] = G^T M[.][co][ci] G, once after the last chunk.
 *
 * Layout in the workspace ws (element offsets from the host): U at u_base, row length ldp (P
 * rounded up to 4), plane stride Co*ldp; V at v_base, plane stride Ci*ldp (as the forward); M at
 * m_base, row length ldm (Ci rounded up to 4), plane stride Co*ldm. Blocks p of one chunk are
 * numbered p = (image - img0) * tilesH*tilesW + th * tilesW + tw (coalesced along p).
 *
 * conv2d_winograd_dw_transform: grid (ceil(P / L) * L, Ci + Co), any local (L, 1). Rows c < Ci:
 *   block gid0 of x's channel c into V; rows Ci + k: block gid0 of dy's channel k into U.
 *   Arguments: x, dy, ws, offs = (x, dy, v_base, u_base), ga = (Ci, H, W, Co, tilesW,
 *   tilesH*tilesW, pt, pl), gb = (img0, P, ldp, -, -, Ho, Wo, -).
 * conv2d_winograd_dw_output: grid (ceil(Ci / L) * L, Co), any local (L, 1).
 *   Arguments: ws, dw, offs = (m_base, dw, -, -), gc = (Ci, Co, ldm, -).
 * Per-plane indices fit int (host checks); buffer offsets are 64-bit.
 * -D contract: none.
 */
#include "common/winograd.h"

/* U = A Dy A^T of block p of dy's channel k; taps past Ho, Wo read a clamped element times zero
 * (no divergent loads). */
static void dy_transform(__global const float *dy, __global float *ws, ulong4 offs, int8 ga,
                         int8 gb, int k, int p)
{
    const int Co = ga.s3, tilesW = ga.s4, tpi = ga.s5;
    const int img0 = gb.s0, ldp = gb.s2, Ho = gb.s5, Wo = gb.s6;
    const int img = p / tpi, t = p - img * tpi, th = t / tilesW, tw = t - th * tilesW;
    const int oy0 = 4 * th, ox0 = 4 * tw;
    __global const float *yk =
        dy + offs.y + ((ulong)(img0 + img) * (ulong)Co + (ulong)k) * (ulong)Ho * (ulong)Wo;
    int cx[4];
    float mx[4];
    #pragma unroll
    for (int j = 0; j < 4; j++) {
        cx[j] = min(ox0 + j, Wo - 1);
        mx[j] = ox0 + j < Wo ? 1.0f : 0.0f;
    }
    float t6[6][4]; /* A Dy, column by column */
    #pragma unroll
    for (int j = 0; j < 4; j++) {
        float c4[4];
        #pragma unroll
        for (int i = 0; i < 4; i++)
            c4[i] = yk[min(oy0 + i, Ho - 1) * Wo + cx[j]] * (mx[j] * (oy0 + i < Ho ? 1.0f : 0.0f));
        WINO_A(c4[0], c4[1], c4[2], c4[3], t6[0][j], t6[1][j], t6[2][j], t6[3][j], t6[4][j],
               t6[5][j]);
    }
    const ulong plane = (ulong)Co * (ulong)ldp;
    __global float *u = ws + offs.w + (ulong)k * (ulong)ldp + (ulong)p;
    #pragma unroll
    for (int i = 0; i < 6; i++) { /* (A Dy) A^T, row by row */
        float o[6];
        WINO_A(t6[i][0], t6[i][1], t6[i][2], t6[i][3], o[0], o[1], o[2], o[3], o[4], o[5]);
        #pragma unroll
        for (int j = 0; j < 6; j++)
            u[(ulong)(i * 6 + j) * plane] = o[j];
    }
}

__kernel void conv2d_winograd_dw_transform(__global const float *x, __global const float *dy,
                                           __global float *ws, ulong4 offs, int8 ga, int8 gb)
{
    const int Ci = ga.s0, P = gb.s1;
    const int p = get_global_id(0), row = get_global_id(1);
    if (p >= P)
        return;
    if (row < Ci)
        wino_input_transform(x, ws, offs, ga, gb, row, p);
    else
        dy_transform(dy, ws, offs, ga, gb, row - Ci, p);
}

__kernel void conv2d_winograd_dw_output(__global const float *ws, __global float *dw, ulong4 offs,
                                        int4 gc)
{
    const int Ci = gc.s0, Co = gc.s1, ldm = gc.s2;
    const int c = get_global_id(0), k = get_global_id(1);
    if (c >= Ci)
        return;
    const ulong plane = (ulong)Co * (ulong)ldm;
    __global const float *m = ws + offs.x + (ulong)k * (ulong)ldm + (ulong)c;
    float t3[3][6]; /* G^T M, column by column */
    #pragma unroll
    for (int j = 0; j < 6; j++) {
        float c6[6];
        wino_plane_column(m, plane, j, c6);
        WINO_GT(c6[0], c6[1], c6[2], c6[3], c6[4], c6[5], t3[0][j], t3[1][j], t3[2][j]);
    }
    __global float *o = dw + offs.y + ((ulong)k * (ulong)Ci + (ulong)c) * 9;
    #pragma unroll
    for (int i = 0; i < 3; i++) { /* (G^T M) G, row by row */
        float z[3];
        WINO_GT(t3[i][0], t3[i][1], t3[i][2], t3[i][3], t3[i][4], t3[i][5], z[0], z[1], z[2]);
        #pragma unroll
        for (int j = 0; j < 3; j++)
            o[i * 3 + j] = z[j];
    }
}
