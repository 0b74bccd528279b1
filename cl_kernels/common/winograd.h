/* Winograd F(4x4, 3x3) pieces shared by conv2d_winograd.cl (GPU classes),
 * conv2d_winograd_cpu.cl (CPU class) and conv2d_winograd_dw.cl (grad-weight): the transform
 * matrices as macros (they take scalars or vectors alike: the CPU kernels run them on float8 lanes
 * of 8 blocks), the GPU input transform of one block and the weight transform of one (k, c) into U
 * (layout and arguments: conv2d_winograd.cl's banner). */
#ifndef CLT_WINOGRAD_H
#define CLT_WINOGRAD_H

/* -DWINO_FLIP=1: w holds the weights of the transposed convolution, w[c][k][2 - ky][2 - kx] for this
 * one's (k, c, ky, kx) (stride-1 grad-input reads the forward weights in place). */
#ifndef WINO_FLIP
#define WINO_FLIP 0
#endif
#define WINO_TAP(t) (WINO_FLIP ? 8 - (t) : (t))

/* o = B^T d for one column of six values (stride-free: a..f in, o0..o5 out). */
#define WINO_BT(a, b, c, d, e, f, o0, o1, o2, o3, o4, o5)                                         \
    do {                                                                                          \
        o0 = 4.0f * (a) - 5.0f * (c) + (e);                                                       \
        o1 = -4.0f * ((b) + (c)) + (d) + (e);                                                     \
        o2 = 4.0f * ((b) - (c)) - (d) + (e);                                                      \
        o3 = 2.0f * ((d) - (b)) - (c) + (e);                                                      \
        o4 = 2.0f * ((b) - (d)) - (c) + (e);                                                      \
        o5 = 4.0f * (b) - 5.0f * (d) + (f);                                                       \
    } while (0)

/* o = G g for three values. */
#define WINO_G(a, b, c, o0, o1, o2, o3, o4, o5)                                                   \
    do {                                                                                          \
        o0 = 0.25f * (a);                                                                         \
        o1 = (-1.0f / 6.0f) * ((a) + (b) + (c));                                                  \
        o2 = (-1.0f / 6.0f) * ((a) - (b) + (c));                                                  \
        o3 = (1.0f / 24.0f) * (a) + (1.0f / 12.0f) * (b) + (1.0f / 6.0f) * (c);                   \
        o4 = (1.0f / 24.0f) * (a) - (1.0f / 12.0f) * (b) + (1.0f / 6.0f) * (c);                   \
        o5 = (c);                                                                                 \
    } while (0)

/* o = A^T m for six values. */
#define WINO_AT(a, b, c, d, e, f, o0, o1, o2, o3)                                                 \
    do {                                                                                          \
        o0 = (a) + (b) + (c) + (d) + (e);                                                         \
        o1 = ((b) - (c)) + 2.0f * ((d) - (e));                                                    \
        o2 = ((b) + (c)) + 4.0f * ((d) + (e));                                                    \
        o3 = ((b) - (c)) + 8.0f * ((d) - (e)) + (f);                                              \
    } while (0)

/* o = A m for four values (A = the transpose of A^T above; grad-weight's dy transform). */
#define WINO_A(a, b, c, d, o0, o1, o2, o3, o4, o5)                                                \
    do {                                                                                          \
        o0 = (a);                                                                                 \
        o1 = ((a) + (c)) + ((b) + (d));                                                           \
        o2 = ((a) + (c)) - ((b) + (d));                                                           \
        o3 = ((a) + 4.0f * (c)) + 2.0f * ((b) + 4.0f * (d));                                      \
        o4 = ((a) + 4.0f * (c)) - 2.0f * ((b) + 4.0f * (d));                                      \
        o5 = (d);                                                                                 \
    } while (0)

/* o = G^T m for six values (grad-weight's output transform). */
#define WINO_GT(a, b, c, d, e, f, o0, o1, o2)                                                     \
    do {                                                                                          \
        o0 = 0.25f * (a) - (1.0f / 6.0f) * ((b) + (c)) + (1.0f / 24.0f) * ((d) + (e));            \
        o1 = (1.0f / 6.0f) * ((c) - (b)) + (1.0f / 12.0f) * ((d) - (e));                          \
        o2 = (1.0f / 6.0f) * (((d) + (e)) - ((b) + (c))) + (f);                                   \
    } while (0)

/* The input transform V = B^T d B of block p of channel c (layout and arguments:
 * conv2d_winograd.cl's banner; grad-weight passes the same ga and gb.s0, gb.s2). */
/* Column j (transform positions i * 6 + j, i = 0..5) of one (row, column) of the 36 M planes. */
static inline void wino_plane_column(__global const float *m, ulong plane, int j, float c6[6])
{
    #pragma unroll
    for (int i = 0; i < 6; i++)
        c6[i] = m[(ulong)(i * 6 + j) * plane];
}

static inline void wino_input_transform(__global const float *x, __global float *ws, ulong4 offs, int8 ga,
                                 int8 gb, int c, int p)
{
    const int Ci = ga.s0, H = ga.s1, W = ga.s2, tilesW = ga.s4, tpi = ga.s5, pt = ga.s6,
              pl = ga.s7;
    const int img0 = gb.s0, ldp = gb.s2;
    const int img = p / tpi, t = p - img * tpi, th = t / tilesW, tw = t - th * tilesW;
    const int iy0 = 4 * th - pt, ix0 = 4 * tw - pl;
    __global const float *xc =
        x + offs.x + ((ulong)(img0 + img) * (ulong)Ci + (ulong)c) * (ulong)H * (ulong)W;
    /* Out-of-image taps read a clamped element times zero: no divergent loads (POCL, GPUs). */
    int cx[6];
    float mx[6];
    #pragma unroll
    for (int j = 0; j < 6; j++) {
        const int ix = ix0 + j;
        cx[j] = clamp(ix, 0, W - 1);
        mx[j] = ix >= 0 && ix < W ? 1.0f : 0.0f;
    }
    float d[6][6];
    #pragma unroll
    for (int i = 0; i < 6; i++) {
        const int iy = iy0 + i;
        __global const float *row = xc + clamp(iy, 0, H - 1) * W;
        const float my = iy >= 0 && iy < H ? 1.0f : 0.0f;
        #pragma unroll
        for (int j = 0; j < 6; j++)
            d[i][j] = row[cx[j]] * (mx[j] * my);
    }
    float t6[6][6]; /* B^T d, column by column */
    #pragma unroll
    for (int j = 0; j < 6; j++)
        WINO_BT(d[0][j], d[1][j], d[2][j], d[3][j], d[4][j], d[5][j], t6[0][j], t6[1][j],
                t6[2][j], t6[3][j], t6[4][j], t6[5][j]);
    const ulong plane = (ulong)Ci * (ulong)ldp;
    __global float *v = ws + offs.z + (ulong)c * (ulong)ldp + (ulong)p;
    #pragma unroll
    for (int i = 0; i < 6; i++) { /* (B^T d) B, row by row */
        float o[6];
        WINO_BT(t6[i][0], t6[i][1], t6[i][2], t6[i][3], t6[i][4], t6[i][5], o[0], o[1], o[2],
                o[3], o[4], o[5]);
        #pragma unroll
        for (int j = 0; j < 6; j++)
            v[(ulong)(i * 6 + j) * plane] = o[j];
    }
}

static inline void wino_weight_transform(__global const float *w, __global float *ws, ulong4 offs, int8 ga,
                                  int8 gb, int j)
{
    const int Ci = ga.s0, Co = ga.s3, ldu = gb.s3;
    const int k = j / Ci, c = j - k * Ci;
    __global const float *g = w + offs.y + (WINO_FLIP ? ((ulong)c * Co + k) * 9 : (ulong)j * 9);
    float t6[6][3]; /* G g, column by column */
    #pragma unroll
    for (int col = 0; col < 3; col++)
        WINO_G(g[WINO_TAP(col)], g[WINO_TAP(3 + col)], g[WINO_TAP(6 + col)], t6[0][col], t6[1][col],
               t6[2][col], t6[3][col], t6[4][col], t6[5][col]);
    const ulong plane = (ulong)Co * (ulong)ldu;
    __global float *u = ws + offs.w + (ulong)k * (ulong)ldu + (ulong)c;
    #pragma unroll
    for (int i = 0; i < 6; i++) { /* (G g) G^T, row by row */
        float o[6];
        WINO_G(t6[i][0], t6[i][1], t6[i][2], o[0], o[1], o[2], o[3], o[4], o[5]);
        #pragma unroll
        for (int q = 0; q < 6; q++)
            u[(ulong)(i * 6 + q) * plane] = o[q];
    }
}

#endif
