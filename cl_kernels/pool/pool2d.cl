/* 2-D pooling, NCHW f32: max and average pooling forward, their backward by gathering, and the
 * broadcast that is global average pooling's backward (its forward is the reduction kernel).
 *
 * Layout: x / dx are [planes = N * C, H, W], out / dy / indices [planes, Ho, Wo], each contiguous
 * from an element offset. Output (oh, ow) pools rows oh * SH - PT .. + KH - 1 and columns
 * ow * SW - PL .. + KW - 1, clipped to the input: padding never takes part (count_include_pad only
 * changes the divisor to KH * KW). The host guarantees PT < KH and PL < KW (and the same for the far
 * side), so every window holds at least one input element.
 *
 * Forward: one work item per output element. Backward: one work item per dx element, which loops
 * over the windows containing it, oh in [ceil((ih + PT - KH + 1) / SH), floor((ih + PT) / SH)]
 * (clipped to [0, Ho)), and sums what they send it: no atomics and no zero-fill pass, and
 * overlapping windows (stride < kernel) need nothing special. Max pooling's winner is the first
 * maximum in row-major window order; a NaN beats every number (the first NaN wins); the index is
 * h * W + w inside the plane. Max backward either compares the stored index or recomputes each
 * window's winner from x with the same rule.
 *
 * Arguments: two or three buffers, then int16 g = {H, W, Ho, Wo, KH, KW, SH, SW, PT, PL, FLAG,
 * magic numbers of the division by the columns and by the rows of the items' index space (Wo, Ho
 * forward; W, H backward)} (FLAG: max forward = write indices, average = count_include_pad) and
 * ulong4 o = {items, offsets of the buffers in argument order}. Each kernel is a grid-stride loop, so any global size works (GPU
 * hosts cap the grid; CPU hosts launch one item per element). Plane sizes fit in int (host check).
 *
 * -D contract: none. Geometry is a run-time argument, so one build serves every shape.
 * CPU devices run pool2d_cpu.cl instead (same arguments, rows or planes per item).
 */
#include "common/pool_window.h"

/* n / d for every 32-bit n from d's magic numbers (m, shifts = s1 | s2 << 8; pool2d_check.c): a
 * multiply-high and shifts, which vectorise, where an integer division would not (and costs tens of
 * cycles on CPUs and GPUs alike). */
static inline uint fast_div(uint n, uint m, uint shifts)
{
    uint t = mul_hi(n, m);
    return (t + ((n - t) >> (shifts & 0xFF))) >> (shifts >> 8);
}

/* Item i of [planes, rows, cols] -> (plane, row, col). magic: cols' then rows' magic numbers. */
static inline ulong split_index(ulong i, ulong items, int rows, int cols, int4 magic, int *r, int *c)
{
    if (items <= 0xFFFFFFFFul) {
        uint j = (uint)i;
        uint line = fast_div(j, (uint)magic.s0, (uint)magic.s1);
        uint plane = fast_div(line, (uint)magic.s2, (uint)magic.s3);
        *c = (int)(j - line * (uint)cols);
        *r = (int)(line - plane * (uint)rows);
        return plane;
    }
    ulong line = i / (ulong)cols, plane = line / (ulong)rows;
    *c = (int)(i - line * (ulong)cols);
    *r = (int)(line - plane * (ulong)rows);
    return plane;
}

/* Output rows (or columns) whose windows contain input row i: [*lo, *hi]. */
static inline void windows_over(int i, int pad, int k, int stride, int outs, int *lo, int *hi)
{
    int a = i + pad - k + 1;
    *lo = a <= 0 ? 0 : (a + stride - 1) / stride;
    *hi = min((i + pad) / stride, outs - 1);
}

#define GEOMETRY                                                                                   \
    const int H = g.s0, W = g.s1, HO = g.s2, WO = g.s3, KH = g.s4, KW = g.s5, SH = g.s6, SW = g.s7, \
              PT = g.s8, PL = g.s9, FLAG = g.sa

__kernel void pool2d_max(__global const float *x, __global float *out, __global int *indices,
                         int16 g, ulong4 o)
{
    GEOMETRY;
    for (ulong i = get_global_id(0); i < o.s0; i += get_global_size(0)) {
        int oh, ow;
        ulong plane = split_index(i, o.s0, HO, WO, g.sbcde, &oh, &ow);
        __global const float *p = x + o.s1 + plane * (ulong)(H * W);
        int h0 = oh * SH - PT, w0 = ow * SW - PL;
        int at = window_argmax(p, W, max(h0, 0), min(h0 + KH, H), max(w0, 0), min(w0 + KW, W));
        out[o.s2 + i] = p[at];
        if (FLAG)
            indices[o.s3 + i] = at;
    }
}

__kernel void pool2d_avg(__global const float *x, __global float *out, int16 g, ulong4 o)
{
    GEOMETRY;
    for (ulong i = get_global_id(0); i < o.s0; i += get_global_size(0)) {
        int oh, ow;
        ulong plane = split_index(i, o.s0, HO, WO, g.sbcde, &oh, &ow);
        __global const float *p = x + o.s1 + plane * (ulong)(H * W);
        int h0 = oh * SH - PT, w0 = ow * SW - PL;
        int h1 = min(h0 + KH, H), w1 = min(w0 + KW, W);
        h0 = max(h0, 0);
        w0 = max(w0, 0);
        float s = 0.0f;
        for (int h = h0; h < h1; h++)
            for (int w = w0; w < w1; w++)
                s += p[h * W + w];
        int count = FLAG ? KH * KW : (h1 - h0) * (w1 - w0);
        out[o.s2 + i] = s / (float)count;
    }
}

/* dx of max pooling from the indices of the forward pass: buffers (indices, dy, dx). */
__kernel void pool2d_max_backward_indices(__global const int *indices, __global const float *dy,
                                          __global float *dx, int16 g, ulong4 o)
{
    GEOMETRY;
    for (ulong i = get_global_id(0); i < o.s0; i += get_global_size(0)) {
        int ih, iw, oh0, oh1, ow0, ow1;
        ulong plane = split_index(i, o.s0, H, W, g.sbcde, &ih, &iw);
        windows_over(ih, PT, KH, SH, HO, &oh0, &oh1);
        windows_over(iw, PL, KW, SW, WO, &ow0, &ow1);
        ulong base = plane * (ulong)(HO * WO);
        __global const int *ip = indices + o.s1 + base;
        __global const float *gp = dy + o.s2 + base;
        const int me = ih * W + iw;
        float s = 0.0f;
        for (int oh = oh0; oh <= oh1; oh++)
            for (int ow = ow0; ow <= ow1; ow++)
                if (ip[oh * WO + ow] == me)
                    s += gp[oh * WO + ow];
        dx[o.s3 + i] = s;
    }
}

/* dx of max pooling, recomputing each window's winner from x: buffers (x, dy, dx). */
__kernel void pool2d_max_backward_x(__global const float *x, __global const float *dy,
                                    __global float *dx, int16 g, ulong4 o)
{
    GEOMETRY;
    for (ulong i = get_global_id(0); i < o.s0; i += get_global_size(0)) {
        int ih, iw, oh0, oh1, ow0, ow1;
        ulong plane = split_index(i, o.s0, H, W, g.sbcde, &ih, &iw);
        windows_over(ih, PT, KH, SH, HO, &oh0, &oh1);
        windows_over(iw, PL, KW, SW, WO, &ow0, &ow1);
        __global const float *p = x + o.s1 + plane * (ulong)(H * W);
        __global const float *gp = dy + o.s2 + plane * (ulong)(HO * WO);
        const int me = ih * W + iw;
        float s = 0.0f;
        for (int oh = oh0; oh <= oh1; oh++) {
            int h0 = oh * SH - PT;
            for (int ow = ow0; ow <= ow1; ow++) {
                int w0 = ow * SW - PL;
                int at = window_argmax(p, W, max(h0, 0), min(h0 + KH, H), max(w0, 0),
                                       min(w0 + KW, W));
                if (at == me)
                    s += gp[oh * WO + ow];
            }
        }
        dx[o.s3 + i] = s;
    }
}

/* dx of average pooling: buffers (dy, dx). */
__kernel void pool2d_avg_backward(__global const float *dy, __global float *dx, int16 g, ulong4 o)
{
    GEOMETRY;
    for (ulong i = get_global_id(0); i < o.s0; i += get_global_size(0)) {
        int ih, iw, oh0, oh1, ow0, ow1;
        ulong plane = split_index(i, o.s0, H, W, g.sbcde, &ih, &iw);
        windows_over(ih, PT, KH, SH, HO, &oh0, &oh1);
        windows_over(iw, PL, KW, SW, WO, &ow0, &ow1);
        __global const float *gp = dy + o.s1 + plane * (ulong)(HO * WO);
        float s = 0.0f;
        for (int oh = oh0; oh <= oh1; oh++) {
            int h0 = oh * SH - PT;
            int rows = FLAG ? KH : min(h0 + KH, H) - max(h0, 0);
            for (int ow = ow0; ow <= ow1; ow++) {
                int w0 = ow * SW - PL;
                int cols = FLAG ? KW : min(w0 + KW, W) - max(w0, 0);
                s += gp[oh * WO + ow] / (float)(rows * cols);
            }
        }
        dx[o.s2 + i] = s;
    }
}

/* dx [planes, area] = dy [planes] / area: g = {area, 0 x 10, area's and 1's magic numbers}
 * (32-bit ranges), o = {items, dy offset, dx offset, area}. */
__kernel void pool2d_global_avg_backward(__global const float *dy, __global float *dx, int16 g,
                                         ulong4 o)
{
    const float area = (float)o.s3;
    for (ulong i = get_global_id(0); i < o.s0; i += get_global_size(0)) {
        int r, c;
        ulong plane = split_index(i, o.s0, 1, g.s0, g.sbcde, &r, &c);
        dx[o.s2 + i] = dy[o.s1 + plane] / area;
    }
}
