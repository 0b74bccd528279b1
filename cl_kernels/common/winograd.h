/* Winograd F(4x4, 3x3) pieces shared by conv2d_winograd.cl (GPU classes) and
 * conv2d_winograd_cpu.cl (CPU class): the transform matrices as macros (they take scalars or
 * vectors alike: the CPU kernels run them on float8 lanes of 8 blocks) and the weight transform of
 * one (k, c) into U (layout and arguments: conv2d_winograd.cl's banner). */
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

inline void wino_weight_transform(__global const float *w, __global float *ws, ulong4 offs, int8 ga,
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
