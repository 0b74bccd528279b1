/* Layout kernels: copies between strided boxes (permute, slice, concat, stack, broadcast, strided
 * views), a tiled transpose, slice backward, pad and the summing backward passes.
 *
 * Data: 4-byte elements moved as uint (f32 and i32 alike); the summing kernels are f32. Every
 * index is 64-bit but in the *_x4 kernels (16-byte units, 32-bit indices, chosen by the host when
 * sizes and alignment allow). Every kernel but the transpose and layout_pad_planes (3-D grids) is
 * a 1-D grid-stride loop over s.count items (or count / 4 units), so any global size works. The
 * index description (common/strided.h) says where each element lives; each kernel's comment says
 * what it keeps in the extras c, d, e, e0, e1.
 *
 * -D contract: LT_IDX32 (0 / 1): layout_copy indexes in 32 bits (the host sets it only when the
 * count and every offset reached are below 2^31; 64-bit division costs several times more). The
 * transpose tile is fixed at 32 with groups of 32 x 8 items. LT_JOIN_ILP (1, 2, 4, 8): 16-byte
 * units per item and grid pass of layout_join4_x4 (layout_concat.c).
 */
#include "common/strided.h"

#ifndef LT_JOIN_ILP
#define LT_JOIN_ILP 1
#endif
#ifndef LT_IDX32
#define LT_IDX32 0
#endif

/* dst[B(i)] = src[A(i)] for every i of the box. */
__kernel void layout_copy(__global uint *dst, __global const uint *src, clt_sd s)
{
#if LT_IDX32
    const uint count = (uint)s.count, nd = (uint)s.ndim;
    for (uint i = get_global_id(0); i < count; i += get_global_size(0)) {
        uint a = (uint)s.a_off, b = (uint)s.b_off, r = i;
#pragma unroll
        for (int d = CLT_SD_MAX - 1; d >= 0; d--) {
            if (d >= (int)nd)
                continue;
            uint n = (uint)s.shape[d], q = r / n, c = r - q * n;
            a += c * (uint)s.a[d];
            b += c * (uint)s.b[d];
            r = q;
        }
        dst[b] = src[a];
    }
#else
    for (long i = get_global_id(0); i < s.count; i += get_global_size(0)) {
        long ao, bo;
        clt_sd_offsets(&s, i, &ao, &bo);
        dst[bo] = src[ao];
    }
#endif
}

/* Offsets in A and B (32 bits) of the start of row r of the box's leading axes (all but the
 * last). The outermost axis needs no division: r is below its extent there. */
static inline void row_offsets32(const clt_sd *s, int last, uint r, uint *ao, uint *bo)
{
    uint a = (uint)s->a_off, b = (uint)s->b_off;
#pragma unroll
    for (int d = CLT_SD_MAX - 2; d >= 1; d--) {
        if (d >= last)
            continue;
        uint n = (uint)s->shape[d], q = r / n, c = r - q * n;
        a += c * (uint)s->a[d];
        b += c * (uint)s->b[d];
        r = q;
    }
    *ao = a + (last > 0 ? r * (uint)s->a[0] : 0u);
    *bo = b + (last > 0 ? r * (uint)s->b[0] : 0u);
}

/* GPU copy of a box whose last axis is contiguous in dst, 4 elements per item and one 16-byte
 * store (the scalar layout_copy moved 4 bytes per item and divided per element: permute_0213 /
 * 8x1024x8x64 ran at half of PyTorch). The host checks: shape[last] % 4 == 0, b[last] == 1, b_off
 * and the other b strides multiples of 4, every offset reached below 2^31. e0 = 1: a[last] == 1
 * and a_off, the other a strides multiples of 4 too (one 16-byte load); 2: a[last] == 2, aligned
 * alike, and src's buffer holds the element after the last one used (a step-2 slice: two 16-byte
 * loads, even lanes kept; the odd ones share their sectors anyway); 0: four loads with stride
 * a[last]. */
__kernel void layout_copy_x4(__global uint *dst, __global const uint *src, clt_sd s)
{
    const int last = (int)s.ndim - 1;
    const uint n4 = (uint)CLT_SD_PICK(s.shape, last) / 4u, count4 = (uint)s.count / 4u;
    const uint sa = (uint)CLT_SD_PICK(s.a, last);
    __global uint4 *dst4 = (__global uint4 *)dst;
    __global const uint4 *src4 = (__global const uint4 *)src;
    for (uint i = get_global_id(0); i < count4; i += get_global_size(0)) {
        uint r = i / n4, j = (i - r * n4) * 4u, a, b;
        row_offsets32(&s, last, r, &a, &b);
        a += j * sa;
        b += j;
        uint4 v;
        if (s.e0 == 1) {
            v = src4[a / 4u];
        } else if (s.e0 == 2) {
            uint4 lo = src4[a / 4u], hi = src4[a / 4u + 1u];
            v = (uint4)(lo.s0, lo.s2, hi.s0, hi.s2);
        } else {
            v = (uint4)(src[a], src[a + sa], src[a + 2u * sa], src[a + 3u * sa]);
        }
        dst4[b / 4u] = v;
    }
}

/* Transpose tiles of a box where the destination's last axis L (stride 1 in dst, stride e[1] in
 * src) and another axis P (stride 1 in src, stride e[3] in dst) swap roles: a group loads a 32 x 32
 * tile with items running along P (reads contiguous in src), and stores it with items running
 * along L (writes contiguous in dst). e[0] = extent of L, e[2] = extent of P. The rest of the box
 * (shape, a, b over ndim axes, count elements) is the grid's third dimension. */
#define LT_TILE 32
#define LT_ROWS 8
__kernel __attribute__((reqd_work_group_size(LT_TILE, LT_ROWS, 1))) void
layout_transpose(__global uint *dst, __global const uint *src, clt_sd s)
{
    __local uint tile[LT_TILE][LT_TILE + 1];
    long ao, bo;
    clt_sd_offsets(&s, (long)get_global_id(2), &ao, &bo);
    const long nl = s.e[0], sl = s.e[1], np = s.e[2], sp = s.e[3];
    const long l0 = (long)get_group_id(0) * LT_TILE, p0 = (long)get_group_id(1) * LT_TILE;
    const int tx = (int)get_local_id(0), ty = (int)get_local_id(1);
    for (int j = 0; j < LT_TILE; j += LT_ROWS) {
        long p = p0 + tx, l = l0 + ty + j;
        if (p < np && l < nl)
            tile[ty + j][tx] = src[ao + p + l * sl];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int j = 0; j < LT_TILE; j += LT_ROWS) {
        long p = p0 + ty + j, l = l0 + tx;
        if (p < np && l < nl)
            dst[bo + p * sp + l] = tile[tx][ty + j];
    }
}

/* Slice backward: the box is dx (strides b), dy has strides a; c = start, d = step, e = dy's
 * shape. dx[x] = dy[(x - start) / step] on the lattice, 0 elsewhere. */
__kernel void layout_slice_backward(__global uint *dst, __global const uint *src, clt_sd s)
{
    for (long i = get_global_id(0); i < s.count; i += get_global_size(0)) {
        long rem = i, bo = s.b_off, ao = s.a_off;
        int hit = 1;
#pragma unroll
        for (int d = CLT_SD_MAX - 1; d >= 0; d--) {
            if (d >= (int)s.ndim)
                continue;
            long n = s.shape[d], q = rem / n, x = rem - q * n;
            rem = q;
            bo += x * s.b[d];
            long rel = x - s.c[d];
            long k = rel >= 0 ? rel / s.d[d] : -1;
            hit = hit && rel >= 0 && k * s.d[d] == rel && k < s.e[d];
            ao += (hit ? k : 0) * s.a[d];
        }
        dst[bo] = hit ? src[ao] : 0u;
    }
}

/* Pad: the box is out (strides b), x has strides a; c = before, e = x's shape; e0 = mode
 * (0 constant, 1 reflect), e1 = the fill bits. */
__kernel void layout_pad(__global uint *dst, __global const uint *src, clt_sd s)
{
    for (long i = get_global_id(0); i < s.count; i += get_global_size(0)) {
        long rem = i, bo = s.b_off, ao = s.a_off;
        int inside = 1;
#pragma unroll
        for (int d = CLT_SD_MAX - 1; d >= 0; d--) {
            if (d >= (int)s.ndim)
                continue;
            long n = s.shape[d], q = rem / n, o = rem - q * n;
            rem = q;
            bo += o * s.b[d];
            long x = o - s.c[d], len = s.e[d];
            if (s.e0 == 1) {
                x = x < 0 ? -x : x;
                x = x >= len ? 2 * (len - 1) - x : x;
            }
            inside = inside && x >= 0 && x < len;
            ao += (inside ? x : 0) * s.a[d];
        }
        dst[bo] = inside ? src[ao] : (uint)s.e1;
    }
}

/* Pad where only the last two axes are padded (NCHW images): the box is [planes, H, W] of out
 * (shape, strides b), x has strides a, c[1], c[2] = before, e[1], e[2] = x's H, W, e0 = mode, e1
 * = the fill bits (as layout_pad). A 3-D grid: W along x (exact coordinates, no division), H and
 * the planes along y and z, grid-stride loops there (NVIDIA caps those grid dimensions). Each
 * item moves PAD_PLANES planes (z, z + Z, ...), loads first: one element per item left an H200
 * waiting out one load at a time (pad_reflect/8x64x56x56: 17.7 us of kernel time for 13 MB). */
#define PAD_PLANES 4
static inline long pad_source(long o, long before, long len, int reflect)
{
    long x = o - before;
    if (reflect) {
        x = x < 0 ? -x : x;
        x = x >= len ? 2 * (len - 1) - x : x;
    }
    return x >= 0 && x < len ? x : -1;
}

__kernel void layout_pad_planes(__global uint *dst, __global const uint *src, clt_sd s)
{
    const long w = get_global_id(0);
    if (w >= s.shape[2])
        return;
    const int reflect = s.e0 == 1;
    const long xw = pad_source(w, s.c[2], s.e[2], reflect);
    for (long h = get_global_id(1); h < s.shape[1]; h += get_global_size(1)) {
        const long xh = pad_source(h, s.c[1], s.e[1], reflect);
        const int inside = xw >= 0 && xh >= 0;
        const long ao = s.a_off + (inside ? xh * s.a[1] + xw * s.a[2] : 0);
        const long bo = s.b_off + h * s.b[1] + w * s.b[2];
        const long Z = get_global_size(2);
        for (long p = get_global_id(2); p < s.shape[0]; p += PAD_PLANES * Z) {
            uint v[PAD_PLANES];
#pragma unroll
            for (int k = 0; k < PAD_PLANES; k++) {
                const long pk = p + k * Z;
                v[k] = inside && pk < s.shape[0] ? src[ao + pk * s.a[0]] : (uint)s.e1;
            }
#pragma unroll
            for (int k = 0; k < PAD_PLANES; k++)
                if (p + k * Z < s.shape[0])
                    dst[bo + (p + k * Z) * s.b[0]] = v[k];
        }
    }
}

/* Reflect-pad backward: the box is dx (strides b), dy has strides a; c = before, e = dy's shape.
 * Along an axis of length n, x was read by out positions before + x, before - x (when 1 <= x <=
 * before) and before + 2 (n - 1) - x (when it is < dy's length and x <= n - 2). dx sums the
 * product of those sets over the axes, walked as an odometer (3 choices per axis). */
__kernel void layout_pad_reflect_backward(__global float *dst, __global const float *src, clt_sd s)
{
    const int nd = (int)s.ndim;
    for (long i = get_global_id(0); i < s.count; i += get_global_size(0)) {
        uint coord[CLT_SD_MAX]; /* 32 bits (the host keeps dims below 2^31): 4 waves on gfx902 */
        long rem = i, bo = s.b_off;
#pragma unroll
        for (int d = CLT_SD_MAX - 1; d >= 0; d--) {
            coord[d] = 0;
            if (d >= nd)
                continue;
            long n = s.shape[d], q = rem / n;
            coord[d] = (uint)(rem - q * n);
            bo += (long)coord[d] * s.b[d];
            rem = q;
        }
        float acc = 0.0f;
        uint choice = 0; /* 2 bits per axis: which of the (up to 3) positions it takes */
        for (;;) {
            long ao = s.a_off;
            int valid = 1;
#pragma unroll
            for (int d = 0; d < CLT_SD_MAX; d++) {
                if (d >= nd)
                    continue;
                uint cd = (choice >> (2 * d)) & 3u;
                long x = (long)coord[d], n = s.shape[d], before = s.c[d], p;
                if (cd == 0)
                    p = before + x;
                else if (cd == 1)
                    p = (x >= 1 && x <= before) ? before - x : -1;
                else
                    p = (x > n - 2 || before + 2 * (n - 1) - x >= s.e[d]) ? -1 : before + 2 * (n - 1) - x;
                valid = valid && p >= 0;
                ao += (p >= 0 ? p : 0) * s.a[d];
            }
            if (valid)
                acc += src[ao];
            /* Next combination: an odometer over the axes, last fastest. Axes without padding
             * have a single choice (0), so they never advance. */
            int carry = 1;
#pragma unroll
            for (int d = CLT_SD_MAX - 1; d >= 0; d--) {
                if (!carry || d >= nd)
                    continue;
                uint choices = s.c[d] > 0 || s.e[d] > s.shape[d] ? 3u : 1u;
                uint cd = (choice >> (2 * d)) & 3u;
                choice &= ~(3u << (2 * d));
                if (cd + 1 < choices) {
                    choice |= (cd + 1) << (2 * d);
                    carry = 0;
                }
            }
            if (carry)
                break;
        }
        dst[bo] = acc;
    }
}

/* Broadcast backward: the box is dx's axes as they appear in dy (strides a into dy, b into dx);
 * the reduced axes have extents c[0 .. e0) and dy strides d[0 .. e0), e1 elements in all.
 * Each dx element sums its terms in row-major order of the reduced axes. */
__kernel void layout_sum_broadcast(__global float *dst, __global const float *src, clt_sd s)
{
    /* The innermost reduced axis is a plain strided loop; only the outer ones are decomposed. */
    const int nr = (int)s.e0;
    const long inner = nr > 0 ? CLT_SD_PICK(s.c, nr - 1) : 1;
    const long istride = nr > 0 ? CLT_SD_PICK(s.d, nr - 1) : 0;
    const long outer = inner > 0 ? s.e1 / inner : 0;
    for (long i = get_global_id(0); i < s.count; i += get_global_size(0)) {
        long ao, bo;
        clt_sd_offsets(&s, i, &ao, &bo);
        float acc = 0.0f;
        for (long r = 0; r < outer; r++) {
            long rem = r, off = ao;
#pragma unroll
            for (int d = CLT_SD_MAX - 2; d >= 0; d--) {
                if (d > nr - 2)
                    continue;
                long n = s.c[d], q = rem / n;
                off += (rem - q * n) * s.d[d];
                rem = q;
            }
            for (long j = 0; j < inner; j++)
                acc += src[off + j * istride];
        }
        dst[bo] = acc;
    }
}

/* Broadcast backward for CPUs when only leading axes are reduced (a bias gradient): dy is
 * [e1 rows, count columns] contiguous from a_off, dx [count] from b_off; each item sums 16
 * adjacent columns over all rows with one float16 accumulator, rows in order (the same order as
 * layout_sum_broadcast, so the same bits). */
__kernel void layout_sum_leading_cpu(__global float *dst, __global const float *src, clt_sd s)
{
    const long cols = s.count, rows = s.e1, chunks = (cols + 15) / 16;
    for (long c = get_global_id(0); c < chunks; c += get_global_size(0)) {
        const long c0 = c * 16;
        __global const float *p = src + s.a_off + c0;
        if (c0 + 16 <= cols) {
            float16 acc = (float16)(0.0f);
            for (long r = 0; r < rows; r++)
                acc += vload16(0, p + r * cols);
            vstore16(acc, 0, dst + s.b_off + c0);
        } else {
            for (long j = c0; j < cols; j++) {
                float acc = 0.0f;
                for (long r = 0; r < rows; r++)
                    acc += src[s.a_off + r * cols + j];
                dst[s.b_off + j] = acc;
            }
        }
    }
}

/* Concat / split of up to 4 contiguous pieces along one axis in one launch. The joined tensor is
 * viewed as [outer, total, inner] (total = e[4], its extent along the axis; inner = e1, the
 * elements after the axis); a launch covers the window [e[5], e[5] + e0) of the axis, where piece
 * p ([outer, d[p], inner], at element offset c[p] of its buffer) starts at window position e[p]
 * (ascending; unused slots start at e0, so they are never chosen). b_off: the joined tensor's
 * offset. One item per element of the window (count); a_off = 1 copies the pieces into the joined
 * tensor (concat, stack), 0 the other way (split, unstack). */
__kernel void layout_join4(__global uint *joined, __global uint *p0, __global uint *p1,
                           __global uint *p2, __global uint *p3, clt_sd s)
{
    const long win = s.e0, inner = s.e1, total = s.e[4], first = s.e[5];
    for (long i = get_global_id(0); i < s.count; i += get_global_size(0)) {
        long row = i / inner, in = i - row * inner;
        long outer = row / win, pos = row - outer * win;
        int p = (pos >= s.e[1]) + (pos >= s.e[2]) + (pos >= s.e[3]);
        long start = p == 0 ? s.e[0] : p == 1 ? s.e[1] : p == 2 ? s.e[2] : s.e[3];
        long ext = p == 0 ? s.d[0] : p == 1 ? s.d[1] : p == 2 ? s.d[2] : s.d[3];
        long off = p == 0 ? s.c[0] : p == 1 ? s.c[1] : p == 2 ? s.c[2] : s.c[3];
        __global uint *piece = p == 0 ? p0 : p == 1 ? p1 : p == 2 ? p2 : p3;
        long po = off + (outer * ext + (pos - start)) * inner + in;
        long jo = s.b_off + (outer * total + first + pos) * inner + in;
        if (s.a_off)
            joined[jo] = piece[po];
        else
            piece[po] = joined[jo];
    }
}

/* Unit i (16 bytes) of layout_join4_x4: its address in the piece and in the joined tensor. */
static inline void join_unit(uint i, const clt_sd *s, __global uint *p0, __global uint *p1,
                             __global uint *p2, __global uint *p3, __global uint *joined,
                             __global uint4 **piece_at, __global uint4 **joined_at)
{
    const uint inner = (uint)s->e1, wrow = (uint)s->e0 * inner, w4 = wrow / 4u;
    const uint jrow = (uint)s->e[4] * inner, first = (uint)s->e[5] * inner;
    const uint s1 = (uint)s->e[1] * inner, s2 = (uint)s->e[2] * inner, s3 = (uint)s->e[3] * inner;
    uint row = i / w4, col = (i - row * w4) * 4u; /* element of the window's row */
    int p = (col >= s1) + (col >= s2) + (col >= s3);
    uint start = p == 0 ? (uint)s->e[0] * inner : p == 1 ? s1 : p == 2 ? s2 : s3;
    uint ext = (uint)(p == 0 ? s->d[0] : p == 1 ? s->d[1] : p == 2 ? s->d[2] : s->d[3]) * inner;
    uint off = (uint)(p == 0 ? s->c[0] : p == 1 ? s->c[1] : p == 2 ? s->c[2] : s->c[3]);
    __global uint4 *piece = (__global uint4 *)(p == 0 ? p0 : p == 1 ? p1 : p == 2 ? p2 : p3);
    *piece_at = piece + (off + row * ext + col - start) / 4u;
    *joined_at = (__global uint4 *)joined + ((uint)s->b_off + row * jrow + first + col) / 4u;
}

/* layout_join4 in 16-byte units (one division per 4 elements, 32-bit indices): the same
 * description; the host checks that every piece's row (d[p] * inner), piece offset c[p], the
 * joined tensor's row (total * inner), window start (first * inner) and offset b_off are
 * multiples of 4 elements, so no 4-element unit straddles two pieces, and that every offset
 * reached is below 2^31. count: elements of the window (a multiple of 4). Each item moves
 * LT_JOIN_ILP units per grid pass (i, i + grid, ...), all loads before the stores, so that more
 * bytes are in flight per item. */
__kernel void layout_join4_x4(__global uint *joined, __global uint *p0, __global uint *p1,
                              __global uint *p2, __global uint *p3, clt_sd s)
{
    const uint count4 = (uint)s.count / 4u, grid = (uint)get_global_size(0);
    const int to_joined = s.a_off != 0;
    for (uint i0 = get_global_id(0); i0 < count4; i0 += grid * LT_JOIN_ILP) {
        uint4 v[LT_JOIN_ILP];
        __global uint4 *dst[LT_JOIN_ILP];
#pragma unroll
        for (int j = 0; j < LT_JOIN_ILP; j++) {
            const uint i = i0 + (uint)j * grid;
            if (i < count4) {
                __global uint4 *pa, *ja;
                join_unit(i, &s, p0, p1, p2, p3, joined, &pa, &ja);
                v[j] = to_joined ? *pa : *ja;
                dst[j] = to_joined ? ja : pa;
            }
        }
#pragma unroll
        for (int j = 0; j < LT_JOIN_ILP; j++)
            if (i0 + (uint)j * grid < count4)
                *dst[j] = v[j];
    }
}
