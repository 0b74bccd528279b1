/* 2-D pooling for CPU devices (POCL), NCHW f32: the kernels of pool2d.cl with the same arguments,
 * semantics and results (bit for bit), shaped for a CPU instead of one item per element.
 *
 * Forward (pool2d_max_cpu, pool2d_avg_cpu): one work item per output row (plane, oh), o.s0 = rows.
 *   The window rows are clipped once for the whole row. Outputs whose windows lie inside the
 *   input row go 8 at a time as float8 (one unaligned float8 load per window tap at stride 1, the
 *   even lanes of a float16 at stride 2, else 8 loads): the max keeps a float8 of values and an
 *   int8 of indices, updated in row-major window order with the scalar rule (NaN wins, first on
 *   ties); the average sums in the same order as pool2d.cl. The last run of a row ends at the
 *   last inside window (overlapping the run before: the same values are stored twice); outputs
 *   whose windows cross the row's ends go one at a time.
 * Backward (pool2d_max_backward_indices_cpu, pool2d_max_backward_x_cpu, pool2d_avg_backward_cpu):
 *   one work item per plane, o.s0 = planes: zero the dx plane (float8 stores), then walk the
 *   outputs in row-major order adding each one's gradient to its window (max: its winner). Every
 *   dx element thus receives its terms in the order pool2d.cl's gather adds them (same bits), a
 *   plane is private to its item (no atomics), and the work per output is a few scalar adds
 *   instead of a search over the windows that contain each input element.
 *
 * Global average (pool2d_global_avg_cpu): one item per plane, o = {planes, x offset, out offset,
 *   area}: a float8 sum along the plane (8 partial sums, then pairwise), for areas up to 256
 *   (host) so the error stays that of a short sum; larger planes take the reduction kernel.
 *
 * Arguments: as pool2d.cl (int16 g = {H, W, Ho, Wo, KH, KW, SH, SW, PT, PL, FLAG, ...}, ulong4 o =
 * {items, buffer offsets}). Items past o.s0 return. Plane sizes fit in int (host check).
 * -D contract: none.
 */
#include "common/pool_window.h"

#define GEOMETRY                                                                                   \
    const int H = g.s0, W = g.s1, HO = g.s2, WO = g.s3, KH = g.s4, KW = g.s5, SH = g.s6, SW = g.s7, \
              PT = g.s8, PL = g.s9, FLAG = g.sa

/* Elements q[0], q[SW], ..., q[7 * SW]; room = how many elements from q on are in the row. */
static inline float8 load_run(__global const float *q, int SW, int room)
{
    if (SW == 1)
        return vload8(0, q);
    if (SW == 2 && room >= 16)
        return vload16(0, q).even;
    return (float8)(q[0], q[SW], q[2 * SW], q[3 * SW], q[4 * SW], q[5 * SW], q[6 * SW], q[7 * SW]);
}

/* Outputs [*a, *b) of a row have windows inside the input row: ow * SW - PL >= 0 and
 * ow * SW - PL + KW <= W. */
static inline void interior(int W, int WO, int KW, int SW, int PL, int *a, int *b)
{
    *a = min((PL + SW - 1) / SW, WO);
    int last = W + PL - KW; /* ow * SW <= last */
    *b = last < 0 ? *a : max(min(last / SW + 1, WO), *a);
}

__kernel void pool2d_max_cpu(__global const float *x, __global float *out, __global int *indices,
                             int16 g, ulong4 o)
{
    GEOMETRY;
    const ulong r = get_global_id(0);
    if (r >= o.s0)
        return;
    const ulong plane = r / (ulong)HO;
    const int oh = (int)(r - plane * (ulong)HO);
    __global const float *p = x + o.s1 + plane * (ulong)(H * W);
    __global float *op = out + o.s2 + r * (ulong)WO;
    __global int *ip = indices + o.s3 + r * (ulong)WO;
    const int hs = oh * SH - PT, h0 = max(hs, 0), h1 = min(hs + KH, H);
    const int8 lane = (int8)(0, 1, 2, 3, 4, 5, 6, 7) * SW;
    int a, b;
    interior(W, WO, KW, SW, PL, &a, &b);
    for (int ow = 0; ow < WO; ow++) {
        if (ow >= a && ow < b && b - a >= 8) {
            const int o8 = min(ow, b - 8); /* the last run overlaps the one before */
            const int base = o8 * SW - PL;
            float8 best = load_run(p + h0 * W + base, SW, W - base);
            int8 at = (int8)(h0 * W + base) + lane;
            for (int h = h0; h < h1; h++)
                for (int kw = (h == h0); kw < KW; kw++) {
                    const int s = h * W + base + kw;
                    const float8 v = load_run(p + s, SW, W - base - kw);
                    const int8 c = isgreater(v, best) | (isnan(v) & ~isnan(best));
                    best = select(best, v, c);
                    at = select(at, (int8)s + lane, c);
                }
            vstore8(best, 0, op + o8);
            if (FLAG)
                vstore8(at, 0, ip + o8);
            ow = o8 + 7;
            continue;
        }
        const int ws = ow * SW - PL;
        const int at = window_argmax(p, W, h0, h1, max(ws, 0), min(ws + KW, W));
        op[ow] = p[at];
        if (FLAG)
            ip[ow] = at;
    }
}

__kernel void pool2d_avg_cpu(__global const float *x, __global float *out, int16 g, ulong4 o)
{
    GEOMETRY;
    const ulong r = get_global_id(0);
    if (r >= o.s0)
        return;
    const ulong plane = r / (ulong)HO;
    const int oh = (int)(r - plane * (ulong)HO);
    __global const float *p = x + o.s1 + plane * (ulong)(H * W);
    __global float *op = out + o.s2 + r * (ulong)WO;
    const int hs = oh * SH - PT, h0 = max(hs, 0), h1 = min(hs + KH, H);
    int a, b;
    interior(W, WO, KW, SW, PL, &a, &b);
    for (int ow = 0; ow < WO; ow++) {
        if (ow >= a && ow < b && b - a >= 8) {
            const int o8 = min(ow, b - 8); /* the last run overlaps the one before */
            const int base = o8 * SW - PL;
            float8 s = (float8)(0.0f);
            for (int h = h0; h < h1; h++)
                for (int kw = 0; kw < KW; kw++)
                    s += load_run(p + h * W + base + kw, SW, W - base - kw);
            const int count = FLAG ? KH * KW : (h1 - h0) * KW;
            vstore8(s / (float)count, 0, op + o8);
            ow = o8 + 7;
            continue;
        }
        const int ws = ow * SW - PL, w0 = max(ws, 0), w1 = min(ws + KW, W);
        float s = 0.0f;
        for (int h = h0; h < h1; h++)
            for (int w = w0; w < w1; w++)
                s += p[h * W + w];
        const int count = FLAG ? KH * KW : (h1 - h0) * (w1 - w0);
        op[ow] = s / (float)count;
    }
}

/* Zero a plane of n floats. */
static inline void zero_plane(__global float *d, int n)
{
    int i = 0;
    for (; i + 8 <= n; i += 8)
        vstore8((float8)(0.0f), 0, d + i);
    for (; i < n; i++)
        d[i] = 0.0f;
}

__kernel void pool2d_max_backward_indices_cpu(__global const int *indices,
                                              __global const float *dy, __global float *dx,
                                              int16 g, ulong4 o)
{
    GEOMETRY;
    const ulong plane = get_global_id(0);
    if (plane >= o.s0)
        return;
    __global const int *ip = indices + o.s1 + plane * (ulong)(HO * WO);
    __global const float *gp = dy + o.s2 + plane * (ulong)(HO * WO);
    __global float *d = dx + o.s3 + plane * (ulong)(H * W);
    zero_plane(d, H * W);
    for (int i = 0; i < HO * WO; i++)
        d[ip[i]] += gp[i];
}

__kernel void pool2d_max_backward_x_cpu(__global const float *x, __global const float *dy,
                                        __global float *dx, int16 g, ulong4 o)
{
    GEOMETRY;
    const ulong plane = get_global_id(0);
    if (plane >= o.s0)
        return;
    __global const float *p = x + o.s1 + plane * (ulong)(H * W);
    __global const float *gp = dy + o.s2 + plane * (ulong)(HO * WO);
    __global float *d = dx + o.s3 + plane * (ulong)(H * W);
    zero_plane(d, H * W);
    for (int oh = 0; oh < HO; oh++) {
        const int hs = oh * SH - PT, h0 = max(hs, 0), h1 = min(hs + KH, H);
        for (int ow = 0; ow < WO; ow++) {
            const int ws = ow * SW - PL;
            d[window_argmax(p, W, h0, h1, max(ws, 0), min(ws + KW, W))] += gp[oh * WO + ow];
        }
    }
}

__kernel void pool2d_avg_backward_cpu(__global const float *dy, __global float *dx, int16 g,
                                      ulong4 o)
{
    GEOMETRY;
    const ulong plane = get_global_id(0);
    if (plane >= o.s0)
        return;
    __global const float *gp = dy + o.s1 + plane * (ulong)(HO * WO);
    __global float *d = dx + o.s2 + plane * (ulong)(H * W);
    zero_plane(d, H * W);
    for (int oh = 0; oh < HO; oh++) {
        const int hs = oh * SH - PT, h0 = max(hs, 0), h1 = min(hs + KH, H);
        const int rows = FLAG ? KH : h1 - h0;
        for (int ow = 0; ow < WO; ow++) {
            const int ws = ow * SW - PL, w0 = max(ws, 0), w1 = min(ws + KW, W);
            const float v = gp[oh * WO + ow] / (float)(rows * (FLAG ? KW : w1 - w0));
            for (int h = h0; h < h1; h++)
                for (int w = w0; w < w1; w++)
                    d[h * W + w] += v;
        }
    }
}

__kernel void pool2d_global_avg_cpu(__global const float *x, __global float *out, int16 g, ulong4 o)
{
    const ulong plane = get_global_id(0);
    if (plane >= o.s0)
        return;
    const int area = (int)o.s3;
    __global const float *p = x + o.s1 + plane * (ulong)area;
    float8 acc = (float8)(0.0f);
    int i = 0;
    for (; i + 8 <= area; i += 8)
        acc += vload8(0, p + i);
    const float4 s4 = acc.lo + acc.hi;
    float s = (s4.x + s4.y) + (s4.z + s4.w);
    for (; i < area; i++)
        s += p[i];
    out[o.s2 + plane] = s / (float)area;
}
