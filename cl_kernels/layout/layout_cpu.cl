/* Layout kernels for CPU devices only (POCL), in a program of their own: their vector accumulators
 * would not fit a GPU's register budget, and a GPU never selects them.
 *
 * layout_sum_leading_cpu64: the bias gradient of layout_sum_leading_cpu (layout.cl) with 64
 *   adjacent columns per work item: dy is [e1 rows, count columns] contiguous from a_off, dx
 *   [count] from b_off. Four float16 accumulators, rows in order (the same order as
 *   layout_sum_broadcast and layout_sum_leading_cpu, so the same bits). Each row gives an item four
 *   64-byte lines instead of one: the strided sweep down the rows streams better (bias_grad/8192x512
 *   on POCL: 0.91 ms with 16 columns per item, see src/ops/layout/layout_ops.c). A partial last
 *   block goes 16 columns at a time, then one by one.
 * layout_pad_rows: pad with 8 consecutive rows of out's last axis per item (below). It lives here
 *   rather than in layout.cl since it joined the stepped rows: gfx902's ISA check judges every kernel
 *   of layout.cl, and the stepping state cost it a wave there (3 < 4), for a kernel GPUs never run.
 *
 * -D contract: none.
 */
#include "common/strided.h"

/* rows per item of layout_copy_rows and layout_pad_rows: layout_internal.h's LT_ROWS_PER_ITEM */
#define LT_ROWS_PER_ITEM 8

#define SUM_ACC(q) float16 acc##q = (float16)(0.0f);
#define SUM_ROW(q) acc##q += vload16(q, row);
#define SUM_STORE(q) vstore16(acc##q, q, out);

__kernel void layout_sum_leading_cpu64(__global float *dst, __global const float *src, clt_sd s)
{
    /* the description's fields in locals: POCL reloads the argument block after stores to dst */
    const long cols = s.count, rows = s.e1, a_off = s.a_off, b_off = s.b_off;
    const long chunks = (cols + 63) / 64;
    for (long c = get_global_id(0); c < chunks; c += get_global_size(0)) {
        long c0 = c * 64;
        if (c0 + 64 <= cols) {
            SUM_ACC(0) SUM_ACC(1) SUM_ACC(2) SUM_ACC(3)
            for (long r = 0; r < rows; r++) {
                __global const float *row = src + a_off + r * cols + c0;
                SUM_ROW(0) SUM_ROW(1) SUM_ROW(2) SUM_ROW(3)
            }
            __global float *out = dst + b_off + c0;
            SUM_STORE(0) SUM_STORE(1) SUM_STORE(2) SUM_STORE(3)
            continue;
        }
        for (; c0 + 16 <= cols; c0 += 16) {
            SUM_ACC(0)
            for (long r = 0; r < rows; r++) {
                __global const float *row = src + a_off + r * cols + c0;
                SUM_ROW(0)
            }
            __global float *out = dst + b_off + c0;
            SUM_STORE(0)
        }
        for (long j = c0; j < cols; j++) {
            float acc = 0.0f;
            for (long r = 0; r < rows; r++)
                acc += src[a_off + r * cols + j];
            dst[b_off + j] = acc;
        }
    }
}

/* layout_copy_rows, the strided copy for CPUs: one item per LT_ROWS_PER_ITEM consecutive rows of the last axis (rows = count /
 * shape[last]; the host launches ceil(rows / LT_ROWS_PER_ITEM) items). The first row's coordinates
 * come from divisions, the next rows step along the axis before the last (one division chain per
 * row was most of permute_0213/8x1024x8x64's time: 64-element rows); each row is a strided loop,
 * in 16-wide chunks when both sides have unit stride along it. */
/* Offsets of row r (a, b) and its coordinate along axis last - 1 (*c1; 0 when last == 0). */
static inline void copy_row_start(const clt_sd *s, int last, long r, long *a, long *b, long *c1)
{
    long q = r, ao = s->a_off, bo = s->b_off;
    *c1 = 0;
#pragma unroll
    for (int d = CLT_SD_MAX - 2; d >= 0; d--) {
        if (d >= last)
            continue;
        long m = s->shape[d], t = q / m, c = q - t * m;
        ao += c * s->a[d];
        bo += c * s->b[d];
        if (d == last - 1)
            *c1 = c;
        q = t;
    }
    *a = ao;
    *b = bo;
}

__kernel void layout_copy_rows(__global uint *dst, __global const uint *src, clt_sd s)
{
    const int last = (int)s.ndim - 1;
    const long n = CLT_SD_PICK(s.shape, last), rows = s.count / n;
    const long sa = CLT_SD_PICK(s.a, last), sb = CLT_SD_PICK(s.b, last);
    const int prev = last > 0 ? last - 1 : 0;
    const long n1 = last > 0 ? CLT_SD_PICK(s.shape, prev) : 1;
    const long a1 = CLT_SD_PICK(s.a, prev), b1 = CLT_SD_PICK(s.b, prev);
    const long groups = (rows + LT_ROWS_PER_ITEM - 1) / LT_ROWS_PER_ITEM;
    for (long g = get_global_id(0); g < groups; g += get_global_size(0)) {
        long r = g * LT_ROWS_PER_ITEM, a, b, c1;
        const long rend = min(r + LT_ROWS_PER_ITEM, rows);
        copy_row_start(&s, last, r, &a, &b, &c1);
        for (;;) {
            long j = 0;
            if (sa == 1 && sb == 1)
                for (; j + 16 <= n; j += 16)
                    vstore16(vload16(0, src + a + j), 0, dst + b + j);
            if (sa == 2 && sb == 1) /* a step-2 slice: 32 loaded, the even 16 kept; the last
                                     * chunk's odd element stays inside the row (j + 17 <= n) */
                for (; j + 17 <= n; j += 16)
                    vstore16(shuffle2(vload16(0, src + a + 2 * j), vload16(0, src + a + 2 * j + 16),
                                      (uint16)(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26,
                                               28, 30)),
                             0, dst + b + j);
            for (; j < n; j++)
                dst[b + j * sb] = src[a + j * sa];
            if (++r >= rend)
                break;
            if (++c1 < n1) {
                a += a1;
                b += b1;
            } else {
                copy_row_start(&s, last, r, &a, &b, &c1);
            }
        }
    }
}

/* Out element j of a row of layout_pad_rows (source row at ao, out row at bo). */
static inline void pad_elem(__global uint *dst, __global const uint *src, long bo, long ao, long j,
                            long before, long len, long sa, long sb, int inside, int reflect,
                            uint fill)
{
    long x = j - before;
    if (reflect) {
        x = x < 0 ? -x : x;
        x = x >= len ? 2 * (len - 1) - x : x;
    }
    int in = inside && x >= 0 && x < len;
    dst[bo + j * sb] = in ? src[ao + x * sa] : fill;
}

/* Source coordinate along an axis for out coordinate o (before, len: the axis' pad and source
 * extent; reflect or not); outside [0, len) means fill. */
static inline long pad_src(long o, long before, long len, int reflect)
{
    long x = o - before;
    if (reflect) {
        x = x < 0 ? -x : x;
        x = x >= len ? 2 * (len - 1) - x : x;
    }
    return x;
}

/* layout_pad_rows' outer part of row group q (q = row / shape[last - 1]): offsets in out and x of
 * the axes before last - 1, and whether they all map inside x. */
static inline int pad_outer(const clt_sd *s, int last, long q, long *ao, long *bo, int reflect)
{
    long a = s->a_off, b = s->b_off;
    int inside = 1;
#pragma unroll
    for (int d = CLT_SD_MAX - 3; d >= 0; d--) {
        if (d >= last - 1)
            continue;
        long m = s->shape[d], t = q / m, o = q - t * m;
        q = t;
        b += o * s->b[d];
        long x = pad_src(o, s->c[d], s->e[d], reflect);
        inside = inside && x >= 0 && x < s->e[d];
        a += (inside ? x : 0) * s->a[d];
    }
    *ao = a;
    *bo = b;
    return inside;
}

/* Pad for CPUs (layout_pad's description): one item per LT_ROWS_PER_ITEM consecutive rows of out's last axis (the host
 * launches ceil(rows / LT_ROWS_PER_ITEM) items; same description as layout_pad). The axes before
 * last - 1 are mapped by divisions once per item and again only when the axis before the last
 * wraps; that axis is stepped (a division chain per 58-element row dominated). */
__kernel void layout_pad_rows(__global uint *dst, __global const uint *src, clt_sd s)
{
    const int last = (int)s.ndim - 1;
    const long n = CLT_SD_PICK(s.shape, last), rows = s.count / n;
    const long len = CLT_SD_PICK(s.e, last), before = CLT_SD_PICK(s.c, last);
    const long sa = CLT_SD_PICK(s.a, last), sb = CLT_SD_PICK(s.b, last);
    /* the axis before the last (absent for 1-D: one row, coordinate 0 of an extent-1 axis) */
    const int prev = last > 0 ? last - 1 : 0;
    const long n1 = last > 0 ? CLT_SD_PICK(s.shape, prev) : 1;
    const long len1 = last > 0 ? CLT_SD_PICK(s.e, prev) : 1;
    const long before1 = last > 0 ? CLT_SD_PICK(s.c, prev) : 0;
    const long a1 = last > 0 ? CLT_SD_PICK(s.a, prev) : 0, b1 = last > 0 ? CLT_SD_PICK(s.b, prev) : 0;
    const uint fill = (uint)s.e1;
    /* fields read inside the row loop are copied first: POCL reloads the argument block after every
     * store to dst (they might alias), which also kept the row loop scalar */
    const int reflect = s.e0 == 1;
    const int whole = sa == 1 && sb == 1 && before >= 0 && before + len <= n;
    const long groups = (rows + LT_ROWS_PER_ITEM - 1) / LT_ROWS_PER_ITEM;
    for (long g = get_global_id(0); g < groups; g += get_global_size(0)) {
        long r = g * LT_ROWS_PER_ITEM;
        const long rend = min(r + LT_ROWS_PER_ITEM, rows);
        long q = r / n1, o1 = r - q * n1, ao0, bo0;
        int inside0 = pad_outer(&s, last, q, &ao0, &bo0, reflect);
        for (; r < rend; r++) {
            if (o1 == n1) { /* the axis before the last wrapped: next outer group */
                o1 = 0;
                inside0 = pad_outer(&s, last, ++q, &ao0, &bo0, reflect);
            }
            long x1 = pad_src(o1, before1, len1, reflect);
            int inside = inside0 && x1 >= 0 && x1 < len1;
            long ao = ao0 + (inside ? x1 : 0) * a1, bo = bo0 + o1 * b1;
            o1++;
            long j = 0;
            if (inside && whole) {
                /* unit strides, the whole source row inside: the edges one by one, the middle
                 * (out j = before .. before + len - 1 is src 0 .. len - 1) in float16 chunks */
                for (; j < before; j++)
                    pad_elem(dst, src, bo, ao, j, before, len, 1, 1, 1, reflect, fill);
                long m = 0;
                for (; m + 16 <= len; m += 16)
                    vstore16(vload16(0, src + ao + m), 0, dst + bo + before + m);
                for (; m < len; m++)
                    dst[bo + before + m] = src[ao + m];
                j = before + len;
            }
            for (; j < n; j++)
                pad_elem(dst, src, bo, ao, j, before, len, sa, sb, inside, reflect, fill);
        }
    }
}
