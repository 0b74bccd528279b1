/* Indexing kernels: embedding lookup and backward, gather / scatter(-add) along an axis (also
 * index_select / index_add), masked_fill, one_hot, and the row selection behind argmax / topk.
 *
 * Data: f32 (moved as uint where nothing is computed), i32 indices. Every index is 64-bit (but
 * in index_masked_fill_x4: 16-byte units, 32 bits, where the host finds that they fit). An
 * index outside [0, dim) is never used to address memory: lookups write 0, scatters skip it.
 * Every kernel but the row selection is a 1-D grid-stride loop over s.count items.
 * The index description (common/strided.h) maps each item to offsets in the two operands (a, b)
 * and in the index tensor (strides d, offset c[0]); other extras are named per kernel.
 *
 * Float atomics: OpenCL 1.2 has none, so an add is a compare-and-swap loop on the bits.
 *
 * -D contract: TK_WG (power of two, the row selection's local size; default 256); TK_CAP (power
 * of two, index_topk_radix's sort capacity and largest k; default 2048); TK_KMAX (the CPU row
 * selection's candidate capacity, >= k; index_topk_rows exists only when it is defined).
 */
#include "common/strided.h"

#ifndef TK_WG
#define TK_WG 256
#endif
#if (TK_WG & (TK_WG - 1)) != 0
#error "TK_WG must be a power of two"
#endif

static inline void atomic_add_f32(volatile __global float *p, float v)
{
    volatile __global uint *u = (volatile __global uint *)p;
    uint old = *u, seen;
    do {
        seen = old;
        old = atomic_cmpxchg(u, seen, as_uint(as_float(seen) + v));
    } while (old != seen);
}

/* Offsets of item i in A, B and the index tensor (strides d, base c[0]). */
static inline void offsets3(const clt_sd *s, long i, long *ao, long *bo, long *io)
{
    long a = s->a_off, b = s->b_off, x = s->c[0];
    const int nd = (int)s->ndim;
#pragma unroll
    for (int d = CLT_SD_MAX - 1; d >= 0; d--) {
        if (d >= nd)
            continue;
        long n = s->shape[d], q = i / n, c = i - q * n;
        a += c * s->a[d];
        b += c * s->b[d];
        x += c * s->d[d];
        i = q;
    }
    *ao = a;
    *bo = b;
    *io = x;
}

/* Embedding: count = tokens * D; e0 = D, e1 = V; a_off weight, b_off out, c[0] ids offset. */
__kernel void index_embedding(__global float *out, __global const float *weight, clt_sd s,
                              __global const int *ids)
{
    for (long i = get_global_id(0); i < s.count; i += get_global_size(0)) {
        long t = i / s.e0, d = i - t * s.e0;
        long id = ids[s.c[0] + t];
        out[s.b_off + i] = (id >= 0 && id < s.e1) ? weight[s.a_off + id * s.e0 + d] : 0.0f;
    }
}

/* The same for CPUs: one item per token (count = tokens), its row copied in 16-wide chunks (the
 * per-element form, a division each, stays scalar on POCL). The description's fields are copied
 * to locals first: POCL reloads the argument block after every store to out (they might alias). */
__kernel void index_embedding_rows(__global float *out, __global const float *weight, clt_sd s,
                                   __global const int *ids)
{
    const long dim = s.e0, dim16 = dim & ~15L, vocab = s.e1, a_off = s.a_off, b_off = s.b_off;
    __global const int *tid = ids + s.c[0];
    for (long t = get_global_id(0); t < s.count; t += get_global_size(0)) {
        const long id = tid[t];
        __global float *o = out + b_off + t * dim;
        if (id >= 0 && id < vocab) {
            __global const float *w = weight + a_off + id * dim;
            for (long d = 0; d < dim16; d += 16)
                vstore16(vload16(0, w + d), 0, o + d);
            for (long d = dim16; d < dim; d++)
                o[d] = w[d];
        } else {
            for (long d = 0; d < dim; d++)
                o[d] = 0.0f;
        }
    }
}

/* Embedding backward, atomics: count = tokens * D; a_off dy, b_off dweight. */
__kernel void index_embedding_bwd_atomic(__global float *dw, __global const float *dy, clt_sd s,
                                         __global const int *ids)
{
    for (long i = get_global_id(0); i < s.count; i += get_global_size(0)) {
        long t = i / s.e0, d = i - t * s.e0;
        long id = ids[s.c[0] + t];
        if (id >= 0 && id < s.e1)
            atomic_add_f32(dw + s.b_off + id * s.e0 + d, dy[s.a_off + i]);
    }
}

/* Embedding backward, deterministic: one group of EB_WG items per (row v, block of EB_WG columns)
 * (groups = V * ceil(D / EB_WG); s.count = groups * EB_WG), each item one dweight element; tokens
 * added in ascending order, starting from 0 or dweight (c[2] = accumulate), c[1] = tokens. The
 * group reads the ids EB_CHUNK at a time (EB_CHUNK / EB_WG each, coalesced) and marks the tokens of
 * row v in a bit mask in local memory; then every item walks the mask's set bits in order. Before,
 * each of the V * D items compared every id itself (V * D * tokens id reads: 44.5 us at 512 x 128
 * x 1024 on the H200). Three masks in turn, so one barrier per chunk suffices: the mask zeroed
 * during chunk c was last read during chunk c - 2, which every item left before chunk c - 1's
 * barrier. */
#ifndef EB_WG
#define EB_WG 64 /* one AMD wave, two NVIDIA warps: small D wastes little */
#endif
#define EB_CHUNK (4 * EB_WG) /* tokens per mask */
#define EB_WORDS (EB_CHUNK / 32)
#if EB_WG % 32 != 0
#error "EB_WG must be a multiple of 32"
#endif

__kernel __attribute__((reqd_work_group_size(EB_WG, 1, 1))) void
index_embedding_bwd_owner(__global float *dw, __global const float *dy, clt_sd s,
                          __global const int *ids)
{
    __local uint marks[3][EB_WORDS];
    const int lid = (int)get_local_id(0);
    const long dim = s.e0, tokens = s.c[1], blocks = (dim + EB_WG - 1) / EB_WG;
    const long v = get_group_id(0) / blocks, d = (get_group_id(0) % blocks) * EB_WG + lid;
    const int mine = d < dim;
    __global const int *tid = ids + s.c[0];
    __global const float *col = dy + s.a_off + d;
    float acc = mine && s.c[2] ? dw[s.b_off + v * dim + d] : 0.0f;
    if (lid < EB_WORDS) {
        marks[0][lid] = 0;
        marks[1][lid] = 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    int cur = 0;
    for (long t0 = 0; t0 < tokens; t0 += EB_CHUNK) {
#pragma unroll
        for (int i = 0; i < EB_CHUNK / EB_WG; i++) {
            const int at = i * EB_WG + lid;
            if (t0 + at < tokens && tid[t0 + at] == v)
                atomic_or(&marks[cur][at >> 5], 1u << (at & 31));
        }
        const int next = cur == 2 ? 0 : cur + 1;
        if (lid < EB_WORDS)
            marks[next][lid] = 0;
        barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
        for (int w = 0; w < EB_WORDS; w++) {
            uint m = marks[cur][w];
            while (m) {
                const uint low = m & (0u - m); /* the lowest set bit: tokens in ascending order */
                const long t = t0 + w * 32 + (31 - clz(low));
                if (mine)
                    acc += col[t * dim];
                m ^= low;
            }
        }
        cur = next;
    }
    if (mine)
        dw[s.b_off + v * dim + d] = acc;
}

/* The same sums for CPUs: one item per dweight row v (count = V), tokens in ascending order, so
 * the ids are read once per row instead of once per element (same order, same bits); the row in
 * 16-wide chunks. Also the CPUs' atomic mode (embedding.c): one launch, no fill, no atomics. */
__kernel void index_embedding_bwd_owner_rows(__global float *dw, __global const float *dy,
                                             clt_sd s, __global const int *ids)
{
    /* the description's fields in locals: see index_embedding_rows */
    const long dim = s.e0, dim16 = dim & ~15L, tokens = s.c[1], a_off = s.a_off, b_off = s.b_off;
    const int accumulate = s.c[2] != 0;
    __global const int *tid = ids + s.c[0];
    for (long v = get_global_id(0); v < s.count; v += get_global_size(0)) {
        __global float *row = dw + b_off + v * dim;
        if (!accumulate) {
            for (long d = 0; d < dim16; d += 16)
                vstore16((float16)(0.0f), 0, row + d);
            for (long d = dim16; d < dim; d++)
                row[d] = 0.0f;
        }
        if (v > INT_MAX) /* no int32 id can name this row */
            continue;
        /* the ids 16 at a time: a scalar scan (a compare and a branch per token) was most of the
         * time at 512 x 128 tokens; matching tokens are added in ascending order as before */
        const int16 vv = (int16)((int)v);
        for (long t0 = 0; t0 < tokens; t0 += 16) {
            if (t0 + 16 <= tokens && !any(vload16(0, tid + t0) == vv))
                continue;
            for (long t = t0; t < t0 + 16 && t < tokens; t++)
                if (tid[t] == v) {
                    __global const float *src = dy + a_off + t * dim;
                    for (long d = 0; d < dim16; d += 16)
                        vstore16(vload16(0, row + d) + vload16(0, src + d), 0, row + d);
                    for (long d = dim16; d < dim; d++)
                        row[d] += src[d];
                }
        }
    }
}

/* Gather / index_select: the box is out's; a = x strides with the axis' stride 0, b = out's,
 * d = index strides; c[1] = x's stride along the axis, c[2] = x's dim along it. */
__kernel void index_gather(__global uint *out, __global const uint *x, clt_sd s,
                           __global const int *index)
{
    for (long i = get_global_id(0); i < s.count; i += get_global_size(0)) {
        long ao, bo, io;
        offsets3(&s, i, &ao, &bo, &io);
        long id = index[io];
        out[bo] = (id >= 0 && id < s.c[2]) ? x[ao + id * s.c[1]] : 0u;
    }
}

/* Scatter-add / index_add: the box is src's; a = src strides, b = out strides with the axis'
 * stride 0, d = index strides; c[1] = out's stride along the axis, c[2] = out's dim along it. */
__kernel void index_scatter_add(__global float *out, __global const float *src, clt_sd s,
                                __global const int *index)
{
    for (long i = get_global_id(0); i < s.count; i += get_global_size(0)) {
        long ao, bo, io;
        offsets3(&s, i, &ao, &bo, &io);
        long id = index[io];
        if (id >= 0 && id < s.c[2])
            atomic_add_f32(out + bo + id * s.c[1], src[ao]);
    }
}

/* Scatter (assignment): as index_scatter_add, a plain store. */
__kernel void index_scatter(__global uint *out, __global const uint *src, clt_sd s,
                            __global const int *index)
{
    for (long i = get_global_id(0); i < s.count; i += get_global_size(0)) {
        long ao, bo, io;
        offsets3(&s, i, &ao, &bo, &io);
        long id = index[io];
        if (id >= 0 && id < s.c[2])
            out[bo + id * s.c[1]] = src[ao];
    }
}

/* Masked fill: the box is x's; a = x strides, b = out's, d = mask strides (0 where broadcast);
 * c[0] mask offset; e0 = 1 when the mask is f32 (nonzero: any bit but the sign), e1 = the value's
 * bits. */
__kernel void index_masked_fill(__global uint *out, __global const uint *x, clt_sd s,
                                __global const uint *mask)
{
    for (long i = get_global_id(0); i < s.count; i += get_global_size(0)) {
        long ao, bo, mo;
        offsets3(&s, i, &ao, &bo, &mo);
        uint m = mask[mo];
        int set = s.e0 ? (m & 0x7fffffffu) != 0u : m != 0u;
        out[bo] = set ? (uint)s.e1 : x[ao];
    }
}

/* Masked fill on GPUs in 16-byte units with 32-bit indices (index_masked_fill divides in 64 bits
 * per element and axis: masked_fill_causal/64x512 ran at 1.8x PyTorch's time). x and out are
 * contiguous from a_off and b_off; the box (axes merged where the mask's strides d allow) has a
 * last extent that is a multiple of 4, so a unit never straddles two rows. c[0] = the mask's
 * offset; c[1] = 1: the mask is read 16 bytes at a time too (d[last] == 1, its offset and strides
 * multiples of 4), 0: one mask element per unit (d[last] == 0, broadcast along the last axis).
 * e0, e1 as index_masked_fill. */
__kernel void index_masked_fill_x4(__global uint *out, __global const uint *x, clt_sd s,
                                   __global const uint *mask)
{
    const int last = (int)s.ndim - 1;
    const uint count4 = (uint)s.count / 4u, x4 = (uint)s.a_off / 4u, o4 = (uint)s.b_off / 4u;
    const uint4 fill = (uint4)((uint)s.e1);
    for (uint i = get_global_id(0); i < count4; i += get_global_size(0)) {
        uint r = i * 4u, m = (uint)s.c[0];
#pragma unroll
        for (int d = CLT_SD_MAX - 1; d >= 1; d--) {
            if (d > last)
                continue;
            uint n = (uint)s.shape[d], q = r / n;
            m += (r - q * n) * (uint)s.d[d];
            r = q;
        }
        m += r * (uint)s.d[0];
        uint4 mv = s.c[1] ? ((__global const uint4 *)mask)[m / 4u] : (uint4)(mask[m]);
        /* all ones where the mask is set (the relational's true is -1), then a bitwise blend */
        uint4 set = as_uint4(s.e0 ? (mv & (uint4)(0x7fffffffu)) != (uint4)(0u) : mv != (uint4)(0u));
        uint4 v = ((__global const uint4 *)x)[x4 + i];
        ((__global uint4 *)out)[o4 + i] = (fill & set) | (v & ~set);
    }
}

/* Masked fill for CPUs: one item per row of the last axis (count / shape[last] rows); the outer
 * coordinates are found once per row. */
__kernel void index_masked_fill_rows(__global uint *out, __global const uint *x, clt_sd s,
                                     __global const uint *mask)
{
    const int last = (int)s.ndim - 1;
    const long n = CLT_SD_PICK(s.shape, last), rows = s.count / n;
    const long sa = CLT_SD_PICK(s.a, last), sb = CLT_SD_PICK(s.b, last);
    const long sm = CLT_SD_PICK(s.d, last);
    for (long r = get_global_id(0); r < rows; r += get_global_size(0)) {
        long a = s.a_off, b = s.b_off, m = s.c[0], q = r;
#pragma unroll
        for (int d = CLT_SD_MAX - 2; d >= 0; d--) {
            if (d >= last)
                continue;
            long len = s.shape[d], t = q / len, c = q - t * len;
            a += c * s.a[d];
            b += c * s.b[d];
            m += c * s.d[d];
            q = t;
        }
        for (long j = 0; j < n; j++) {
            uint mv = mask[m + j * sm];
            int set = s.e0 ? (mv & 0x7fffffffu) != 0u : mv != 0u;
            out[b + j * sb] = set ? (uint)s.e1 : x[a + j * sa];
        }
    }
}

/* One-hot: count = tokens * C; e0 = C; b_off out, c[0] ids offset. */
__kernel void index_one_hot(__global float *out, __global const float *unused, clt_sd s,
                            __global const int *ids)
{
    (void)unused;
    for (long i = get_global_id(0); i < s.count; i += get_global_size(0)) {
        long t = i / s.e0, c = i - t * s.e0;
        out[s.b_off + i] = ids[s.c[0] + t] == c ? 1.0f : 0.0f;
    }
}

/* A float's rank as an unsigned key: larger floats give larger keys, NaN the largest, -0 == +0. */
static inline uint order_key(float v)
{
    if (isnan(v))
        return 0xffffffffu;
    uint u = v == 0.0f ? 0u : as_uint(v);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

/* Row selection (argmax, topk): one group of TK_WG items per row (group id = row; count rows).
 * e0 = n (row length), e1 = k; a_off x, b_off values, c[0] indices offset, c[1] write values,
 * c[2] write indices. Candidate = (key << 32) | ~index, so the largest candidate is the largest
 * value, then the smallest index. Round r picks the largest candidate below round r-1's: k passes
 * over the row, each a tree reduction in local memory. */
__kernel __attribute__((reqd_work_group_size(TK_WG, 1, 1))) void
index_topk(__global float *values, __global const float *x, clt_sd s, __global int *indices)
{
    __local ulong best[TK_WG];
    const long row = get_group_id(0);
    const int lid = (int)get_local_id(0);
    const long n = s.e0;
    __global const float *xr = x + s.a_off + row * n;
    ulong prev = 0;
    for (long r = 0; r < s.e1; r++) {
        ulong mine = 0;
        int found = 0;
        for (long j = lid; j < n; j += TK_WG) {
            ulong cand = ((ulong)order_key(xr[j]) << 32) | (ulong)(~(uint)j);
            if ((r == 0 || cand < prev) && (!found || cand > mine)) {
                mine = cand;
                found = 1;
            }
        }
        best[lid] = mine; /* 0 is below every real candidate of a row of n < 2^32 */
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int h = TK_WG / 2; h > 0; h >>= 1) {
            if (lid < h && best[lid + h] > best[lid])
                best[lid] = best[lid + h];
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        prev = best[0];
        if (lid == 0) {
            uint j = ~(uint)(prev & 0xffffffffu);
            long o = row * s.e1 + r;
            if (s.c[1])
                values[s.b_off + o] = xr[j];
            if (s.c[2])
                indices[s.c[0] + o] = (int)j;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

/* Row selection by radix select (topk with k <= TK_CAP): the same candidates, order and output as
 * index_topk, in a few passes over the row instead of k. Pass d counts, among the candidates whose
 * top 4 d bits equal the prefix found so far, how many have each value of the next 4 bits, and
 * extends the prefix by the digit holding the k-th largest candidate. Counting is per item (16
 * counters in a column of local memory owned by the item: no atomics, no conflicts), then summed
 * per digit. Passes stop once the candidates at or above the prefix (at least k of them) are few
 * (TK_STOP); those are gathered into local memory, sorted (bitonic, descending) and the first k
 * written. Candidates are distinct, so ties of value cost only extra passes over the index bits
 * (at most 16 passes in all, e.g. for a constant row). */
#ifndef TK_CAP
#define TK_CAP 2048 /* most candidates sorted in local memory (16 KiB: the bytes of the counters) */
#endif
#if (TK_CAP & (TK_CAP - 1)) != 0
#error "TK_CAP must be a power of two"
#endif
#define TK_DIGITS 16                           /* 4-bit digits */
#define TK_POOL (TK_CAP > TK_DIGITS * TK_WG / 2 ? TK_CAP : TK_DIGITS * TK_WG / 2) /* ulongs */
#define TK_STOP(k) min((uint)TK_CAP, max(2u * (k), 512u)) /* gather when this few remain */

#if TK_WG >= TK_DIGITS
static inline ulong topk_candidate(__global const float *xr, long j)
{
    return ((ulong)order_key(xr[j]) << 32) | (ulong)(~(uint)j);
}

/* One candidate's top bits c: counted in the item's column when they extend the prefix. */
static inline void topk_count(__local uint *cnt, ulong c, ulong prefix, int lid)
{
    if ((c >> 4) == prefix)
        cnt[(uint)(c & 15) * TK_WG + lid]++;
}

/* Sorts pool[0, m2) into descending order (m2 a power of two); all items call it. */
static inline void topk_bitonic_desc(__local ulong *pool, uint m2, int lid)
{
    for (uint size = 2; size <= m2; size <<= 1) {
        for (uint stride = size >> 1; stride > 0; stride >>= 1) {
            for (uint t = (uint)lid; t < m2 / 2; t += TK_WG) {
                uint i = 2 * t - (t & (stride - 1)), j = i + stride;
                ulong a = pool[i], b = pool[j];
                if ((a < b) == ((i & size) == 0)) {
                    pool[i] = b;
                    pool[j] = a;
                }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    }
}

__kernel __attribute__((reqd_work_group_size(TK_WG, 1, 1))) void
index_topk_radix(__global float *values, __global const float *x, clt_sd s, __global int *indices)
{
    __local ulong pool[TK_POOL]; /* the counters during the passes, then the gathered candidates */
    __local uint part[TK_WG], bins[TK_DIGITS], state[4];
    __local uint *cnt = (__local uint *)pool; /* cnt[digit * TK_WG + item] */
    const long row = get_group_id(0);
    const int lid = (int)get_local_id(0);
    const long n = s.e0;
    const uint k = (uint)s.e1;
    __global const float *xr = x + s.a_off + row * n;
    ulong prefix = 0;        /* the top 64 - shift bits of the k-th largest candidate */
    uint above = 0;          /* candidates whose top bits exceed the prefix (< k) */
    uint equal = (uint)n;    /* candidates whose top bits equal it */
    int shift = 64;
    while (above + equal > TK_STOP(k)) { /* the same values in every item: a uniform loop */
        shift -= 4;
#pragma unroll
        for (int d = 0; d < TK_DIGITS; d++)
            cnt[d * TK_WG + lid] = 0;
        /* four loads in flight per item (one group per row leaves few warps per SM) */
        long j = lid;
        for (; j + 3 * TK_WG < n; j += 4 * TK_WG) {
            ulong c0 = topk_candidate(xr, j), c1 = topk_candidate(xr, j + TK_WG);
            ulong c2 = topk_candidate(xr, j + 2 * TK_WG), c3 = topk_candidate(xr, j + 3 * TK_WG);
            topk_count(cnt, c0 >> shift, prefix, lid);
            topk_count(cnt, c1 >> shift, prefix, lid);
            topk_count(cnt, c2 >> shift, prefix, lid);
            topk_count(cnt, c3 >> shift, prefix, lid);
        }
        for (; j < n; j += TK_WG)
            topk_count(cnt, topk_candidate(xr, j) >> shift, prefix, lid);
        barrier(CLK_LOCAL_MEM_FENCE);
        {   /* item p * 16 + d sums 16 of digit d's columns, then item d sums digit d's parts */
            const int d = lid % TK_DIGITS, p = lid / TK_DIGITS, parts = TK_WG / TK_DIGITS;
            uint t = 0;
#pragma unroll
            for (int i = 0; i < TK_DIGITS; i++)
                t += cnt[d * TK_WG + p + parts * i];
            part[lid] = t;
            barrier(CLK_LOCAL_MEM_FENCE);
            if (lid < TK_DIGITS) {
                uint e = 0;
                for (int q = 0; q < parts; q++)
                    e += part[q * TK_DIGITS + lid];
                bins[lid] = e;
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (lid == 0) { /* the digit where the count from the top first reaches k */
            uint acc = above;
            for (int d = TK_DIGITS - 1; d >= 0; d--) {
                if (acc + bins[d] >= k || d == 0) {
                    state[0] = (uint)d;
                    state[1] = acc;
                    state[2] = bins[d];
                    break;
                }
                acc += bins[d];
            }
            state[3] = 0;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        prefix = (prefix << 4) | state[0];
        above = state[1];
        equal = state[2];
    }
    if (shift == 64 && lid == 0) /* no pass ran */
        state[3] = 0;
    barrier(CLK_LOCAL_MEM_FENCE); /* every item has read state; cnt is no longer read */
    for (long j = lid; j < n; j += TK_WG) {
        ulong c = topk_candidate(xr, j);
        if (shift == 64 || (c >> shift) >= prefix)
            pool[atomic_inc(&state[3])] = c;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint m = state[3]; /* above + equal: k .. TK_STOP(k) */
    uint m2 = 1;
    while (m2 < m)
        m2 <<= 1;
    for (uint i = m + (uint)lid; i < m2; i += TK_WG)
        pool[i] = 0; /* below every candidate */
    barrier(CLK_LOCAL_MEM_FENCE);
    topk_bitonic_desc(pool, m2, lid);
    for (uint r = (uint)lid; r < k; r += TK_WG) {
        uint j = ~(uint)(pool[r] & 0xffffffffu);
        long o = row * s.e1 + r;
        if (s.c[1])
            values[s.b_off + o] = xr[j];
        if (s.c[2])
            indices[s.c[0] + o] = (int)j;
    }
}
#endif /* TK_WG >= TK_DIGITS */

/* Only built when the host asks for it (-DTK_KMAX): its candidate array lives in private memory,
 * which is scratch on a GPU, so GPU programs leave it out. */
#ifdef TK_KMAX

/* CPU variant of the row selection (POCL runs a group as a loop and pays for every barrier): one
 * item per row keeps the best k candidates seen so far, sorted, in a private array of TK_KMAX
 * (>= k); a candidate enters by insertion only when it beats the k-th, so a pass costs about one
 * compare per element. Same candidates and order as index_topk. */
__kernel void index_topk_rows(__global float *values, __global const float *x, clt_sd s,
                              __global int *indices)
{
    const long n = s.e0;
    const int k = (int)s.e1;
    for (long row = get_global_id(0); row < s.count; row += get_global_size(0)) {
        __global const float *xr = x + s.a_off + row * n;
        ulong best[TK_KMAX];
        int m = 0;
        for (long j = 0; j < n; j++) {
            ulong cand = ((ulong)order_key(xr[j]) << 32) | (ulong)(~(uint)j);
            if (m == k && cand <= best[k - 1])
                continue;
            int at = m < k ? m++ : k - 1;
            while (at > 0 && best[at - 1] < cand) {
                best[at] = best[at - 1];
                at--;
            }
            best[at] = cand;
        }
        for (int r = 0; r < k; r++) {
            uint j = ~(uint)(best[r] & 0xffffffffu);
            long o = row * k + r;
            if (s.c[1])
                values[s.b_off + o] = xr[j];
            if (s.c[2])
                indices[s.c[0] + o] = (int)j;
        }
    }
}
#endif /* TK_KMAX */
