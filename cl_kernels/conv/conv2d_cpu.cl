/* Conv2D forward, CPU style (POCL): direct convolution with explicit SIMD vectors, NCHW f32.
 *
 * Algorithm: each work item owns RPI output channels x NV consecutive output pixels of one output
 * row (n, oy, ox0 .. ox0 + NV) and walks all of K = (ci, ky, kx) itself: per window position it
 * gathers the NV input pixels as one floatNV (a single unaligned vector load at stride 1 when the
 * run lies inside the row, else a clamped gather with zeros) and adds weight * vector into RPI
 * accumulators ("axpy" form, as gemm_cpu.cl). No local memory, no barriers: POCL runs a group's
 * items as a loop, and the items of a group take consecutive channel blocks of the SAME pixels, so
 * the gathered rows stay in cache. Input rows outside the image are skipped for the whole group
 * (same pixels: no divergence). Accumulators are named variables (POCL keeps private arrays of
 * vectors on the stack).
 *
 * Arguments: as conv2d.cl (x, w, bias, out, offs, ga, gb, gc, act_alpha); gc.w = the number of
 * pixel blocks per output row (ceil(Wo / NV)).
 * Grid: (ceil(Co_g / RPI) rounded up to the local size, Ho * blocks, N * groups), any local size.
 *
 * -D contract: RPI (1..8), NV (8 or 16); the activation is flags >> 8 (common/conv_act.h).
 */
#include "common/conv_act.h"

#ifndef RPI
#define RPI 4 /* output channels per work item */
#endif
#ifndef NV
#define NV 16 /* output pixels per work item: 8 or 16 */
#endif
#include "common/cpu_rows.h"

#define W_PTR(r) __global const float *w##r = wg + (size_t)min(co0 + r, Co_g - 1) * K;
#define ACC_DECL(r) floatn acc##r = (floatn)(0.0f);
#define ACC_STEP(r) acc##r += w##r[kidx] * v;
#define ACC_STORE(r)                                                                               \
    if (co0 + r < Co_g) {                                                                          \
        const float bi = (FLAGS & 1) ? bias[offs.z + g * Co_g + co0 + r] : 0.0f;                   \
        VSTOREN(acc##r + bi, 0, vals);                                                             \
        __global float *o = ob + (size_t)(co0 + r) * HoWo;                                         \
        for (int e = 0; e < cnt; e++)                                                              \
            o[e] = conv_act(vals[e], ACT_OP, act_alpha);                                                   \
    }

__kernel void conv2d_cpu(__global const float *x, __global const float *w,
                         __global const float *bias, __global float *out, ulong4 offs, int8 ga,
                         int8 gb, int4 gc, float act_alpha)
{
    const int Ci = ga.s0, H = ga.s1, W = ga.s2, Co = ga.s3, Ho = ga.s4, Wo = ga.s5, Kh = ga.s6,
              Kw = ga.s7;
    const int sh = gb.s0, sw = gb.s1, pt = gb.s2, pl = gb.s3, dh = gb.s4, dw = gb.s5;
    const int Ci_g = gb.s6, Co_g = gb.s7, FLAGS = gc.y, K = gc.z, XB = gc.w, ACT_OP = FLAGS >> 8;
    const int groups = Co / Co_g, HW = H * W, HoWo = Ho * Wo;
    const int co0 = get_global_id(0) * RPI;
    if (co0 >= Co_g)
        return;
    const int oy = get_global_id(1) / XB, ox0 = (get_global_id(1) - oy * XB) * NV;
    const int img = get_global_id(2) / groups, g = get_global_id(2) - img * groups;
    __global const float *xb = x + offs.x + ((size_t)img * Ci + (size_t)g * Ci_g) * HW;
    __global const float *wg = w + offs.y + (size_t)g * Co_g * K;
    FOR_ROWS(W_PTR)
    FOR_ROWS(ACC_DECL)
    const int ixs0 = ox0 * sw - pl;
    /* Interior blocks at stride 1 (most of them): every window position is one vector load, and
     * the loop carries no per-tap test. */
    const int interior = sw == 1 && ixs0 >= 0 && ixs0 + (Kw - 1) * dw + NV <= W;
    for (int ci = 0; ci < Ci_g; ci++) {
        for (int ky = 0; ky < Kh; ky++) {
            const int iy = oy * sh - pt + ky * dh;
            if (iy < 0 || iy >= H)
                continue;
            __global const float *row = xb + (size_t)ci * HW + (size_t)iy * W;
            int kidx = (ci * Kh + ky) * Kw;
            if (interior) {
                __global const float *rp = row + ixs0;
                for (int kx = 0; kx < Kw; kx++, kidx++, rp += dw) {
                    const floatn v = VLOADN(0, rp);
                    FOR_ROWS(ACC_STEP)
                }
                continue;
            }
            for (int kx = 0; kx < Kw; kx++, kidx++) {
                const int ixs = ixs0 + kx * dw;
                floatn v;
                if (sw == 1 && ixs >= 0 && ixs + NV <= W) {
                    v = VLOADN(0, row + ixs);
                } else {
                    float t[NV];
                    for (int e = 0; e < NV; e++) {
                        const int ix = ixs + e * sw;
                        t[e] = ix >= 0 && ix < W ? row[ix] : 0.0f;
                    }
                    v = VLOADN(0, t);
                }
                FOR_ROWS(ACC_STEP)
            }
        }
    }
    const int cnt = min(NV, Wo - ox0);
    __global float *ob = out + offs.w + ((size_t)img * Co + (size_t)g * Co_g) * HoWo +
                         (size_t)oy * Wo + ox0;
    float vals[NV];
    FOR_ROWS(ACC_STORE)
}
