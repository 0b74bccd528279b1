/* Pooling helpers shared by pool2d.cl and pool2d_cpu.cl. */
#ifndef CLT_POOL_WINDOW_H
#define CLT_POOL_WINDOW_H

/* First index of the window's maximum (NaN wins, the first on ties) in a plane p of width W. */
static inline int window_argmax(__global const float *p, int W, int h0, int h1, int w0, int w1)
{
    int at = h0 * W + w0;
    float best = p[at];
    for (int h = h0; h < h1; h++)
        for (int w = w0; w < w1; w++) {
            float v = p[h * W + w];
            if (v > best || (isnan(v) && !isnan(best))) {
                best = v;
                at = h * W + w;
            }
        }
    return at;
}

#endif
