/* Conv2D forward, Winograd F(4x4, 3x3), CPU style (POCL): the two transform kernels of
 * conv2d_winograd.cl for the CPU class, same algorithm, same workspace layout (U, V, M; see that
 * banner) except that consecutive planes lie `pad` floats further apart (36 planes a multiple of
 * 4 KiB apart share one L1 set; the items here touch all 36 at once), same batched GEMM between
 * them; only the work split differs.
 *
 * A work item owns 8 horizontally neighbouring blocks of one block row (tw0 .. tw0 + 7 of row th)
 * of one channel and image, and carries them as the 8 lanes of float8 vectors: the transforms are
 * the same per block, so every add of the matrices is one SIMD add over 8 blocks, and V[xi][c][p]
 * and M[xi][k][p] (contiguous along p = the blocks) are stored and loaded as whole vectors.
 *  - conv2d_winograd_cpu_transform: per input row of the 6-row strip, the 34 floats that 8 blocks
 *    read (block e starts at 4e) are loaded as two float16 + one float2 (zeros selected outside the
 *    image, see WINO_ROW), and the six columns j = 0..5 of the 8 blocks are picked out
 *    by swizzles (lane e = element 4e + j). The row transform (d B) runs as each row arrives, the
 *    column transform (B^T .) once all six are in, then 36 vector stores. Items past the input
 *    ones transform the weights, 8 input channels of one output channel each (lanes = c).
 *  - conv2d_winograd_cpu_output: 36 vector loads of M, A^T M A on the lanes, bias and activation,
 *    then each output row of the 8 blocks (32 floats) is interleaved into two float16 stores.
 * Partial blocks at the right edge (tilesW not a multiple of 8) store only their valid lanes; their
 * loads of M may run up to 7 floats past P (the host leaves slack at the end of the workspace).
 * No local memory, no barriers; a group's items walk neighbouring block strips of one plane.
 *
 * conv2d_winograd_cpu_transform: 1-D grid of at least nin + ceil(nw) items, nin = chunk images *
 *   Ci * tilesH * bpr (bpr = ceil(tilesW / 8)); any local size. Item q < nin: (img, c, th, strip)
 *   with the strip fastest. Item q >= nin: weight strip j = q - nin (j < nw = Co * ceil(Ci / 8) on
 *   the first chunk, 0 after it) = (k, c0 = 8 * (j % ceil(Ci / 8))).
 *   Arguments: x, w, ws, offs = (x, w, v_base, u_base), ga = (Ci, H, W, Co, tilesW, tilesH*tilesW,
 *   pt, pl), gb = (img0, nin, ldp, ldu, nw, bpr, tilesH, N = images in x), pad.
 * conv2d_winograd_cpu_output: 1-D grid of at least chunk images * Co * tilesH * bpr items.
 *   Arguments: ws, bias, out, offs = (m_base, bias, out, -), ga = (Co, Ho, Wo, tilesW,
 *   tilesH*tilesW, img0, nout, ldp), gb = (bpr, tilesH, flags, -) with flags = bias | activation
 *   << 8 (common/conv_act.h), act_alpha, pad.
 * -D contract: none.
 */
#include "common/conv_act.h"
#include "common/winograd.h"

/* Lanes e < cnt of v to p[e]: at most three stores (4 + 2 + 1) for a partial strip. */
static inline void wino_store_lanes(__global float *p, float8 v, int cnt)
{
    if (cnt >= 8) {
        vstore8(v, 0, p);
        return;
    }
    float4 r = v.lo;
    if (cnt & 4) {
        vstore4(r, 0, p);
        r = v.hi, p += 4;
    }
    if (cnt & 2) {
        vstore2(r.lo, 0, p);
        r.lo = r.hi, p += 2;
    }
    if (cnt & 1)
        p[0] = r.x;
}

/* Row strip: r0..r5 = (d B) of one input row for the 8 blocks, d read from row[ixb .. ixb + 34).
 * The 34 floats are loaded whole even where the span leaves the row (padding at the left or right
 * edge, where most strips of a small image lie): the neighbouring row's floats are in the tensor,
 * and the masks (ma, mb, mz) select zeros for them. Only a span that leaves the tensor itself (its
 * first or last row) is read element by element. */
#define WINO_ROW(i)                                                                                \
    float8 r##i##0, r##i##1, r##i##2, r##i##3, r##i##4, r##i##5;                                   \
    {                                                                                              \
        const int iy = iy0 + i;                                                                    \
        float16 a = (float16)(0.0f), b = (float16)(0.0f);                                          \
        float2 z = (float2)(0.0f);                                                                 \
        if (iy >= 0 && iy < H) {                                                                   \
            __global const float *row = xc + (size_t)iy * W;                                       \
            const long lin = pbase + (long)iy * W + ixb;                                           \
            if (lin >= 0 && lin + 34 <= xlen) {                                                    \
                a = select((float16)(0.0f), vload16(0, row + ixb), ma);                            \
                b = select((float16)(0.0f), vload16(0, row + ixb + 16), mb);                       \
                z = select((float2)(0.0f), vload2(0, row + ixb + 32), mz);                         \
            } else {                                                                               \
                float t[34];                                                                       \
                for (int q = 0; q < 34; q++)                                                       \
                    t[q] = (uint)(ixb + q) < (uint)W ? row[ixb + q] : 0.0f;                        \
                a = vload16(0, t), b = vload16(0, t + 16), z = vload2(0, t + 32);                  \
            }                                                                                      \
        }                                                                                          \
        const float8 d0 = (float8)(a.s048c, b.s048c), d1 = (float8)(a.s159d, b.s159d);             \
        const float8 d2 = (float8)(a.s26ae, b.s26ae), d3 = (float8)(a.s37bf, b.s37bf);             \
        const float8 d4 = (float8)(a.s48c, b.s048c, z.s0), d5 = (float8)(a.s59d, b.s159d, z.s1);   \
        WINO_BT(d0, d1, d2, d3, d4, d5, r##i##0, r##i##1, r##i##2, r##i##3, r##i##4, r##i##5);     \
    }

/* Column j of the six row results: B^T (d B), stored to V planes i*6 + j. */
#define WINO_COL(j)                                                                                \
    {                                                                                              \
        float8 o0, o1, o2, o3, o4, o5;                                                             \
        WINO_BT(r0##j, r1##j, r2##j, r3##j, r4##j, r5##j, o0, o1, o2, o3, o4, o5);                 \
        wino_store_lanes(v + (size_t)(0 + j) * plane, o0, cnt);                                    \
        wino_store_lanes(v + (size_t)(6 + j) * plane, o1, cnt);                                    \
        wino_store_lanes(v + (size_t)(12 + j) * plane, o2, cnt);                                   \
        wino_store_lanes(v + (size_t)(18 + j) * plane, o3, cnt);                                   \
        wino_store_lanes(v + (size_t)(24 + j) * plane, o4, cnt);                                   \
        wino_store_lanes(v + (size_t)(30 + j) * plane, o5, cnt);                                   \
    }

/* Weights (k, c0 .. c0 + 7) as the lanes: U = G g G^T, 36 vector stores along c (U[xi][k][c]).
 * Lanes past Ci load the last weight again and are not stored. */
static inline __attribute__((always_inline)) void wino_weight_strip(__global const float *w, __global float *ws, ulong4 offs, int Ci,
                              int Co, int ldu, int pad, int j)
{
    const int cs = (Ci + 7) / 8, k = j / cs, c0 = (j - k * cs) * 8, cnt = min(8, Ci - c0);
    __global const float *g =
        w + offs.y + (WINO_FLIP ? ((size_t)c0 * Co + k) * 9 : ((size_t)k * Ci + c0) * 9);
    const int8 e9 = min((int8)(0, 1, 2, 3, 4, 5, 6, 7), (int8)(cnt - 1)) * (WINO_FLIP ? Co * 9 : 9);
    float8 gv[9];
    for (int t = 0; t < 9; t++) {
        const int tap = WINO_TAP(t);
        gv[t] = (float8)(g[e9.s0 + tap], g[e9.s1 + tap], g[e9.s2 + tap], g[e9.s3 + tap],
                         g[e9.s4 + tap], g[e9.s5 + tap], g[e9.s6 + tap], g[e9.s7 + tap]);
    }
    float8 t6[6][3]; /* G g, column by column */
    for (int col = 0; col < 3; col++)
        WINO_G(gv[col], gv[3 + col], gv[6 + col], t6[0][col], t6[1][col], t6[2][col], t6[3][col],
               t6[4][col], t6[5][col]);
    const size_t plane = (size_t)Co * (size_t)ldu + pad;
    __global float *u = ws + offs.w + (size_t)k * (size_t)ldu + (size_t)c0;
    for (int i = 0; i < 6; i++) { /* (G g) G^T, row by row */
        float8 o0, o1, o2, o3, o4, o5;
        WINO_G(t6[i][0], t6[i][1], t6[i][2], o0, o1, o2, o3, o4, o5);
        wino_store_lanes(u + (size_t)(i * 6 + 0) * plane, o0, cnt);
        wino_store_lanes(u + (size_t)(i * 6 + 1) * plane, o1, cnt);
        wino_store_lanes(u + (size_t)(i * 6 + 2) * plane, o2, cnt);
        wino_store_lanes(u + (size_t)(i * 6 + 3) * plane, o3, cnt);
        wino_store_lanes(u + (size_t)(i * 6 + 4) * plane, o4, cnt);
        wino_store_lanes(u + (size_t)(i * 6 + 5) * plane, o5, cnt);
    }
}

__kernel void conv2d_winograd_cpu_transform(__global const float *x, __global const float *w,
                                            __global float *ws, ulong4 offs, int8 ga, int8 gb,
                                            int pad)
{
    const int Ci = ga.s0, H = ga.s1, W = ga.s2, tilesW = ga.s4, tpi = ga.s5, pt = ga.s6,
              pl = ga.s7;
    const int img0 = gb.s0, nin = gb.s1, ldp = gb.s2, nw = gb.s4, bpr = gb.s5, tilesH = gb.s6,
              N = gb.s7;
    const int q = get_global_id(0);
    if (q >= nin) {
        if (q - nin < nw)
            wino_weight_strip(w, ws, offs, Ci, ga.s3, gb.s3, pad, q - nin);
        return;
    }
    const int s = q % bpr, th = q / bpr % tilesH, cimg = q / bpr / tilesH;
    const int c = cimg % Ci, img = cimg / Ci;
    const int tw0 = s * 8, cnt = min(8, tilesW - tw0);
    const int iy0 = 4 * th - pt, ixb = 4 * tw0 - pl;
    /* columns of the strip inside the row (the same for its six rows) */
    const int16 iota = (int16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const int16 ma = convert_uint16(ixb + iota) < (uint16)W;
    const int16 mb = convert_uint16(ixb + 16 + iota) < (uint16)W;
    const int2 mz = convert_uint2(ixb + 32 + iota.s01) < (uint2)W;
    const long pbase = ((long)(img0 + img) * Ci + c) * H * W, xlen = (long)N * Ci * H * W;
    __global const float *xc = x + offs.x + pbase;
    WINO_ROW(0)
    WINO_ROW(1)
    WINO_ROW(2)
    WINO_ROW(3)
    WINO_ROW(4)
    WINO_ROW(5)
    const size_t plane = (size_t)Ci * (size_t)ldp + pad;
    __global float *v =
        ws + offs.z + (size_t)c * (size_t)ldp + (size_t)(img * tpi + th * tilesW + tw0);
    WINO_COL(0)
    WINO_COL(1)
    WINO_COL(2)
    WINO_COL(3)
    WINO_COL(4)
    WINO_COL(5)
}

/* Column j of M for the 8 blocks: t0..t3 = A^T M[:, j]. */
#define WINO_MCOL(j)                                                                              \
    float8 t0##j, t1##j, t2##j, t3##j;                                                            \
    WINO_AT(vload8(0, m + (size_t)(0 + j) * plane), vload8(0, m + (size_t)(6 + j) * plane),       \
            vload8(0, m + (size_t)(12 + j) * plane), vload8(0, m + (size_t)(18 + j) * plane),     \
            vload8(0, m + (size_t)(24 + j) * plane), vload8(0, m + (size_t)(30 + j) * plane),     \
            t0##j, t1##j, t2##j, t3##j);

/* Output row i of the 8 blocks: (A^T M) A, bias, activation, 32 interleaved floats. */
#define WINO_OROW(i)                                                                               \
    if (oy0 + i < Ho) {                                                                            \
        float8 y0, y1, y2, y3;                                                                     \
        WINO_AT(t##i##0, t##i##1, t##i##2, t##i##3, t##i##4, t##i##5, y0, y1, y2, y3);             \
        float16 lo = (float16)(y0.s0, y1.s0, y2.s0, y3.s0, y0.s1, y1.s1, y2.s1, y3.s1, y0.s2,      \
                               y1.s2, y2.s2, y3.s2, y0.s3, y1.s3, y2.s3, y3.s3) + b;               \
        float16 hi = (float16)(y0.s4, y1.s4, y2.s4, y3.s4, y0.s5, y1.s5, y2.s5, y3.s5, y0.s6,      \
                               y1.s6, y2.s6, y3.s6, y0.s7, y1.s7, y2.s7, y3.s7) + b;               \
        wino_store_row(o + (size_t)(oy0 + i) * Wo, lo, hi, ncol, act, act_alpha);                  \
    }

/* The first n (<= 32) of lo, hi to p, through the activation. */
static inline void wino_store_row(__global float *p, float16 lo, float16 hi, int n, int act, float alpha)
{
    if (act == 14) { /* relu: the common case stays in vectors */
        lo = fmax(lo, 0.0f), hi = fmax(hi, 0.0f);
    } else if (act != 0) {
        float t[32];
        vstore16(lo, 0, t), vstore16(hi, 0, t + 16);
        for (int e = 0; e < 32; e++)
            t[e] = conv_act(t[e], act, alpha);
        lo = vload16(0, t), hi = vload16(0, t + 16);
    }
    if (n >= 32) {
        vstore16(lo, 0, p), vstore16(hi, 0, p + 16);
        return;
    }
    float t[32];
    vstore16(lo, 0, t), vstore16(hi, 0, t + 16);
    for (int e = 0; e < n; e++)
        p[e] = t[e];
}

__kernel void conv2d_winograd_cpu_output(__global const float *ws, __global const float *bias,
                                         __global float *out, ulong4 offs, int8 ga, int4 gb,
                                         float act_alpha, int pad)
{
    const int Co = ga.s0, Ho = ga.s1, Wo = ga.s2, tilesW = ga.s3, tpi = ga.s4, img0 = ga.s5,
              nout = ga.s6, ldp = ga.s7;
    const int bpr = gb.s0, tilesH = gb.s1, flags = gb.s2, act = flags >> 8;
    const int q = get_global_id(0);
    if (q >= nout)
        return;
    const int s = q % bpr, th = q / bpr % tilesH, kimg = q / bpr / tilesH;
    const int k = kimg % Co, img = kimg / Co;
    const int tw0 = s * 8, oy0 = 4 * th, ncol = min(32, Wo - 4 * tw0);
    const size_t plane = (size_t)Co * (size_t)ldp + pad;
    __global const float *m =
        ws + offs.x + (size_t)k * (size_t)ldp + (size_t)(img * tpi + th * tilesW + tw0);
    WINO_MCOL(0)
    WINO_MCOL(1)
    WINO_MCOL(2)
    WINO_MCOL(3)
    WINO_MCOL(4)
    WINO_MCOL(5)
    const float b = (flags & 1) ? bias[offs.y + k] : 0.0f;
    __global float *o = out + offs.z +
                        ((size_t)(img0 + img) * (size_t)Co + (size_t)k) * (size_t)Ho * (size_t)Wo +
                        (size_t)(4 * tw0);
    WINO_OROW(0)
    WINO_OROW(1)
    WINO_OROW(2)
    WINO_OROW(3)
}
