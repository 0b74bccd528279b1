/* Reductions (sum, mean, max, min, variance, L2 norm, argmax, argmin) in ONE launch.
 *
 * Algorithm. The host reduces any axis set to O outputs, each a reduction of R elements. A work-group
 * of WG items serves OPG = WG / S outputs with S "lanes" per output; each lane folds a strided part of
 * its output's elements into an accumulator, then the S lanes merge theirs with a tree in local
 * memory. When there are few outputs and long reductions, each output's R elements are also split
 * into C chunks handled by C different work-groups ("chunk groups"): each writes its partial
 * accumulators to the workspace, fences, and bumps the atomic counter of its output group; the group
 * that brings the counter to C merges the C partials of every output (same lane/tree code), writes
 * the results and sets the counter back to 0 for the next launch. No float atomics: the merge order
 * is fixed, so results are deterministic.
 *
 * Accumulators. SUM/MEAN/L2NORM: a float sum (of x or x*x). MAX/MIN: a float, NaN sticks.
 * VAR: (count, shift, mean, M2): Welford's update per element on x - shift (shift = the lane's first
 * element) and Chan's merge of partials (never a sum of squares minus a squared sum). ARGMAX/ARGMIN: (value, index), first index on ties, NaN wins.
 *
 * Layout (-DLAYOUT). Element (o, r) of output o, reduction index r < R, is read at
 *   0 rows:    x[xoff + o*R + r]                       (reduced axes last: inner = 1)
 *   1 cols:    x[xoff + (o/inner)*R*inner + o%inner + r*inner]   (inner > 1)
 *   2, 3 general: o and r are split over up to 4 kept / 4 reduced dims with their strides.
 * Layouts 0 and 2 put lanes on adjacent work-items (reads run along r); 1 and 3 put outputs on
 * adjacent work-items (reads run along o).
 *
 * Arguments: x, out (float, or int for arg ops), ws (uint counters[MAX_COUNTERS], then float4
 * partials[C * O], chunk-major), p = (O, R, inner, xoff, outoff, S, C, chunk length), and for layouts 2, 3
 * g = (kept dims[4], kept strides[4], reduced dims[4], reduced strides[4]), innermost first.
 *
 * CPU variant (-DCPU_ROWS=1, layout 0 only, on CPU devices such as POCL, which runs a work-group as a
 * loop over its items and pays for every barrier): no local memory and no barriers. Item i serves
 * output o = i / C, chunk c = i % C, and streams that contiguous chunk with float16 vector
 * accumulators (SUM, MEAN, L2NORM, MAX, MIN; the others fold scalars). With C > 1 each item
 * publishes its partial and bumps the counter of its output; the item that brings it to C merges
 * the C partials in chunk order and resets the counter. Any local size works (the host picks it).
 *
 * -D contract: RED_OP (0..6 = clt_reduce_op, 7 argmax, 8 argmin), LAYOUT (0..3), WG (power of two,
 * the exact local size), MAX_COUNTERS (counters at the head of the workspace), CONTIG (0 / 1),
 * CPU_ROWS (0 / 1; 1 needs LAYOUT 0 and O <= MAX_COUNTERS when C > 1), VEC4 (0 / 1; 1 needs
 * LAYOUT 0, CONTIG 0, xoff and R multiples of 4, chunk length a multiple of 4 S).
 */
#ifndef RED_OP
#define RED_OP 0
#endif
#ifndef LAYOUT
#define LAYOUT 0
#endif
#ifndef WG
#define WG 256 // work-group size: a power of two, equal to the launch's local size
#endif
#ifndef CONTIG
#define CONTIG 0 // 1: each lane reads a contiguous slice (CPU devices); 0: lanes interleave (GPU)
#endif
#ifndef MAX_COUNTERS
#define MAX_COUNTERS 1024
#endif
#ifndef CPU_ROWS
#define CPU_ROWS 0 // 1: the barrier-free CPU kernel (layout 0)
#endif
#ifndef VEC4
#define VEC4 0 // 1: float4 loads (layout 0, CONTIG 0, xoff and R multiples of 4)
#endif
#ifndef VEC_UNROLL
#if defined(__AMDGCN__) && (RED_OP == 4 || RED_OP == 5 || RED_OP >= 7)
#define VEC_UNROLL 4 // AMD, variance and arg ops (two or three values per lane): 8 loads in flight
                     // took 80 VGPRs (3 waves per SIMD on gfx902), 4 take 54-60 (4 waves)
#else
#define VEC_UNROLL 8 // float4 loads in flight per item with VEC4: 4 or 8 (H200 sum/16M: 21.19 us
                     // at 4, 20.52 at 8; 2 groups per CU 23.1, 8 groups 22.1, WG 512 21.2)
#endif
#endif
#ifndef NV_LOAD
#define NV_LOAD 0 // NVIDIA only (inline PTX) for the float4 loads of x: 1 ld.global.cs (evict first:
                  // the host's NVIDIA default), 2 ld.global.L2::256B, 3 ld.global.nc.L1::no_allocate.L2::256B
#endif
#if VEC_UNROLL != 4 && VEC_UNROLL != 8
#error "VEC_UNROLL must be 4 or 8"
#endif
#if VEC4 && (LAYOUT != 0 || CONTIG || CPU_ROWS)
#error "VEC4 needs LAYOUT 0, CONTIG 0 and CPU_ROWS 0"
#endif
#if CPU_ROWS && LAYOUT != 0
#error "CPU_ROWS needs LAYOUT 0"
#endif
#if (WG & (WG - 1)) != 0 || WG < 1
#error "WG must be a power of two"
#endif
#if RED_OP < 0 || RED_OP > 8 || LAYOUT < 0 || LAYOUT > 3
#error "bad RED_OP or LAYOUT"
#endif

#define OP_SUM 0
#define OP_MEAN 1
#define OP_MAX 2
#define OP_MIN 3
#define OP_VAR 4
#define OP_VARU 5
#define OP_L2 6
#define OP_ARGMAX 7
#define OP_ARGMIN 8

/* ------------------------------------------------------------ accumulators */
#if RED_OP == OP_VAR || RED_OP == OP_VARU
/* Welford on y = x - k, k = the first element seen: the running mean of y is of the size of the
 * spread, not of the mean, so float keeps its digits when |mean| >> std. */
typedef struct { float n, k, mean, m2; } acc_t;
static inline acc_t acc_init(void) { acc_t a; a.n = 0.0f; a.k = 0.0f; a.mean = 0.0f; a.m2 = 0.0f; return a; }
static inline acc_t acc_add(acc_t a, float x, ulong r)
{
    (void)r;
    if (a.n == 0.0f)
        a.k = x;
    float y = x - a.k;
    a.n += 1.0f;
    float d = y - a.mean;
    a.mean += d / a.n;
    a.m2 += d * (y - a.mean);
    return a;
}
/* Chan et al.: combine two (n, mean, M2) summaries; b's mean is moved to a's shift first. */
static inline acc_t acc_merge(acc_t a, acc_t b)
{
    if (b.n == 0.0f)
        return a;
    if (a.n == 0.0f)
        return b;
    float n = a.n + b.n, d = (b.k - a.k) + (b.mean - a.mean), fb = b.n / n;
    a.mean += d * fb;
    a.m2 += b.m2 + d * d * a.n * fb;
    a.n = n;
    return a;
}
static inline float4 acc_pack(acc_t a) { return (float4)(a.n, a.k, a.mean, a.m2); }
static inline acc_t acc_unpack(float4 v)
{
    acc_t a;
    a.n = v.x;
    a.k = v.y;
    a.mean = v.z;
    a.m2 = v.w;
    return a;
}
#elif RED_OP == OP_ARGMAX || RED_OP == OP_ARGMIN
typedef struct { float v; int i; } acc_t;
#if RED_OP == OP_ARGMAX
static inline acc_t acc_init(void) { acc_t a; a.v = -INFINITY; a.i = INT_MAX; return a; }
#define BEATS(b, a) ((b) > (a))
#else
static inline acc_t acc_init(void) { acc_t a; a.v = INFINITY; a.i = INT_MAX; return a; }
#define BEATS(b, a) ((b) < (a))
#endif
/* b replaces a: NaN beats numbers, a better value beats, equal values go to the lower index. */
static inline int acc_better(acc_t b, acc_t a)
{
    if (isnan(a.v))
        return isnan(b.v) && b.i < a.i;
    if (isnan(b.v))
        return 1;
    return BEATS(b.v, a.v) || (b.v == a.v && b.i < a.i);
}
static inline acc_t acc_add(acc_t a, float x, ulong r)
{
    /* elements arrive in increasing r within a lane: strict comparison keeps the first */
    if (!isnan(a.v) && (isnan(x) || BEATS(x, a.v) || a.i == INT_MAX)) {
        a.v = x;
        a.i = (int)r;
    }
    return a;
}
static inline acc_t acc_merge(acc_t a, acc_t b) { return acc_better(b, a) ? b : a; }
static inline float4 acc_pack(acc_t a) { return (float4)(a.v, as_float(a.i), 0.0f, 0.0f); }
static inline acc_t acc_unpack(float4 v) { acc_t a; a.v = v.x; a.i = as_int(v.y); return a; }
#else
typedef float acc_t;
#if RED_OP == OP_MAX
static inline acc_t acc_init(void) { return -INFINITY; }
static inline acc_t acc_add(acc_t a, float x, ulong r) { (void)r; return (isnan(x) || x > a) ? x : a; }
#elif RED_OP == OP_MIN
static inline acc_t acc_init(void) { return INFINITY; }
static inline acc_t acc_add(acc_t a, float x, ulong r) { (void)r; return (isnan(x) || x < a) ? x : a; }
#elif RED_OP == OP_L2
static inline acc_t acc_init(void) { return 0.0f; }
static inline acc_t acc_add(acc_t a, float x, ulong r) { (void)r; return a + x * x; }
#else
static inline acc_t acc_init(void) { return 0.0f; }
static inline acc_t acc_add(acc_t a, float x, ulong r) { (void)r; return a + x; }
#endif
#if RED_OP == OP_MAX || RED_OP == OP_MIN
static inline acc_t acc_merge(acc_t a, acc_t b) { return acc_add(a, b, 0); }
#else
static inline acc_t acc_merge(acc_t a, acc_t b) { return a + b; }
#endif
static inline float4 acc_pack(acc_t a) { return (float4)(a, 0.0f, 0.0f, 0.0f); }
static inline acc_t acc_unpack(float4 v) { return v.x; }
#endif

#if RED_OP == OP_ARGMAX || RED_OP == OP_ARGMIN
typedef int out_t;
static inline out_t acc_final(acc_t a, ulong R) { (void)R; return a.i; }
#else
typedef float out_t;
static inline out_t acc_final(acc_t a, ulong R)
{
#if RED_OP == OP_MEAN
    return a / (float)R; /* 0 / 0 = NaN for an empty reduction */
#elif RED_OP == OP_VAR
    return a.n > 0.0f ? a.m2 / a.n : NAN;
#elif RED_OP == OP_VARU
    return a.n > 1.0f ? a.m2 / (a.n - 1.0f) : NAN;
#elif RED_OP == OP_L2
    return sqrt(a);
#else
    (void)R;
    return a;
#endif
}
#endif

#if CPU_ROWS
/* ------------------------------------------------------------ CPU variant */
#if RED_OP <= OP_MIN || RED_OP == OP_L2
/* Vector accumulators: 16 lanes fold every 16th element; merged lane by lane at the end. */
#if RED_OP == OP_MAX
#define V_INIT ((float16)(-INFINITY))
#define V_ADD(a, v) select((a), (v), isnan(v) | ((v) > (a)))
#define V_MERGE V_ADD
#elif RED_OP == OP_MIN
#define V_INIT ((float16)(INFINITY))
#define V_ADD(a, v) select((a), (v), isnan(v) | ((v) < (a)))
#define V_MERGE V_ADD
#elif RED_OP == OP_L2
#define V_INIT ((float16)(0.0f))
#define V_ADD(a, v) ((a) + (v) * (v))
#define V_MERGE(a, b) ((a) + (b))
#else
#define V_INIT ((float16)(0.0f))
#define V_ADD(a, v) ((a) + (v))
#define V_MERGE(a, b) ((a) + (b))
#endif
static inline acc_t fold(__global const float *row, ulong r, ulong end)
{
    /* Four streams (the quarters of the range, whole 16-vectors each) walked side by side: one
     * sequential stream per thread leaves DRAM bandwidth unused on the CI machine (a plain C loop
     * over 64 MB: 3.8 ms with one stream, 2.6 ms with four, one thread). */
    const ulong q = (end - r) / 64 * 16;
    float16 v0 = V_INIT, v1 = V_INIT, v2 = V_INIT, v3 = V_INIT;
    for (ulong i = r; i < r + q; i += 16) {
        v0 = V_ADD(v0, vload16(0, row + i));
        v1 = V_ADD(v1, vload16(0, row + i + q));
        v2 = V_ADD(v2, vload16(0, row + i + 2 * q));
        v3 = V_ADD(v3, vload16(0, row + i + 3 * q));
    }
    for (r += 4 * q; r + 16 <= end; r += 16)
        v0 = V_ADD(v0, vload16(0, row + r));
    float16 v = V_MERGE(V_MERGE(v0, v1), V_MERGE(v2, v3));
    float lanes[16];
    vstore16(v, 0, lanes);
    acc_t a = acc_init();
    for (; r < end; r++)
        a = acc_add(a, row[r], r);
    for (int i = 0; i < 16; i++)
        a = acc_merge(a, lanes[i]);
    return a;
}
#else
static inline acc_t fold(__global const float *row, ulong r, ulong end)
{
    acc_t a = acc_init(), a1 = acc_init(), a2 = acc_init(), a3 = acc_init();
    ulong q = r + (end - r) / 4; /* four contiguous quarters: each keeps increasing r */
    ulong len = q - r;
    for (ulong i = 0; i < len; i++) {
        a = acc_add(a, row[r + i], r + i);
        a1 = acc_add(a1, row[r + len + i], r + len + i);
        a2 = acc_add(a2, row[r + 2 * len + i], r + 2 * len + i);
        a3 = acc_add(a3, row[r + 3 * len + i], r + 3 * len + i);
    }
    for (ulong i = r + 4 * len; i < end; i++)
        a3 = acc_add(a3, row[i], i);
    return acc_merge(acc_merge(a, a1), acc_merge(a2, a3));
}
#endif

__kernel void reduce_run(__global const float *x, __global out_t *out, __global uint *ws, ulong8 p)
{
    const ulong O = p.s0, R = p.s1, xoff = p.s3, outoff = p.s4;
    const uint C = (uint)p.s6;
    const ulong chunk_len = p.s7;
    const ulong id = get_global_id(0);
    if (id >= O * C)
        return;
    const ulong o = id / C;
    const uint c = (uint)(id % C);
    const ulong r = (ulong)c * chunk_len;
    acc_t a = fold(x + xoff + o * R, r, min(R, r + chunk_len));
    if (C > 1) {
        __global volatile float4 *partials = (__global volatile float4 *)(ws + MAX_COUNTERS);
        partials[(ulong)c * O + o] = acc_pack(a);
        mem_fence(CLK_GLOBAL_MEM_FENCE);
        if (atomic_inc(&ws[o]) != C - 1)
            return;
        mem_fence(CLK_GLOBAL_MEM_FENCE);
        a = acc_init();
        for (uint k = 0; k < C; k++)
            a = acc_merge(a, acc_unpack(partials[(ulong)k * O + o]));
        atomic_xchg(&ws[o], 0u); /* ready for the next launch */
    }
    out[outoff + o] = acc_final(a, R);
}

#else
/* ------------------------------------------------------------ addressing */
#if VEC4 && NV_LOAD
#if NV_LOAD == 1
#define NV_LD "ld.global.cs.v4.f32"
#elif NV_LOAD == 2
#define NV_LD "ld.global.L2::256B.v4.f32"
#else
#define NV_LD "ld.global.nc.L1::no_allocate.L2::256B.v4.f32"
#endif
static inline float4 x_load4(__global const float4 *p)
{
    float a, b, c, d;
    asm volatile(NV_LD " {%0, %1, %2, %3}, [%4];" : "=f"(a), "=f"(b), "=f"(c), "=f"(d) : "l"(p));
    return (float4)(a, b, c, d);
}
#define LOAD4(p) x_load4(p)
#else
#define LOAD4(p) (*(p))
#endif
#if VEC4
static inline acc_t acc_add4(acc_t a, float4 v, ulong r)
{
    return acc_add(acc_add(acc_add(acc_add(a, v.x, r), v.y, r + 1), v.z, r + 2), v.w, r + 3);
}
#endif
#if LAYOUT >= 2
static inline ulong split4(ulong i, ulong4 dims, ulong4 strides)
{
    ulong off = (i % dims.s0) * strides.s0;
    i /= dims.s0;
    off += (i % dims.s1) * strides.s1;
    i /= dims.s1;
    off += (i % dims.s2) * strides.s2;
    i /= dims.s2;
    return off + i * strides.s3;
}
#define GEOM_ARG , ulong16 g
#define BASE(o) split4((o), g.s0123, g.s4567)
#define ELEM(r) split4((r), g.s89ab, g.scdef)
#elif LAYOUT == 1
#define GEOM_ARG
#define BASE(o) (((o) / inner) * R * inner + (o) % inner)
#define ELEM(r) ((r) * inner)
#else
#define GEOM_ARG
#define BASE(o) ((o) * R)
#define ELEM(r) (r)
#endif

#if LAYOUT == 0 || LAYOUT == 2
#define LANE_OF(lid) ((lid) % S)
#define SLOT_OF(lid) ((lid) / S)
#define LOC(slot, lane) ((slot) * S + (lane))
#else
#define LANE_OF(lid) ((lid) / opg)
#define SLOT_OF(lid) ((lid) % opg)
#define LOC(slot, lane) ((lane) * opg + (slot))
#endif

/* Merge the S lanes of every slot into lane 0 (all work-items call this: it has barriers). */
static inline acc_t tree(__local acc_t *loc, acc_t a, uint lid, uint S, uint opg)
{
    uint lane = LANE_OF(lid), slot = SLOT_OF(lid);
    loc[lid] = a;
    for (uint s = S >> 1; s > 0; s >>= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lane < s) {
            a = acc_merge(a, loc[LOC(slot, lane + s)]);
            loc[lid] = a;
        }
    }
    return a;
}

/* x restrict: out never overlaps it (the host checks) and ws is private, so the compiler may take
 * the read-only path for x (NVIDIA: ld.global.nc) */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void reduce_run(__global const float *restrict x, __global out_t *out, __global uint *ws,
                ulong8 p GEOM_ARG)
{
    const ulong O = p.s0, R = p.s1, inner = p.s2, xoff = p.s3, outoff = p.s4;
    const uint S = (uint)p.s5, C = (uint)p.s6;
    const ulong chunk_len = p.s7;
    const uint opg = WG / S;
    (void)inner;
    __local acc_t loc[WG];
    __local int last;

    const uint lid = get_local_id(0), lane = LANE_OF(lid), slot = SLOT_OF(lid);
    const ulong grp = get_group_id(0), og = grp / C;
    const uint chunk = (uint)(grp % C);
    const ulong o = og * opg + slot;

    /* Phase 1: this lane's elements of output o within this group's chunk: strided over the lanes
     * (GPU: neighbouring work-items read neighbouring elements) or a contiguous slice per lane
     * (CONTIG, CPU: each work-item streams its own range). Four accumulators keep four loads in
     * flight and four independent dependency chains; they merge in a fixed order. */
    acc_t a = acc_init(), a1 = acc_init(), a2 = acc_init(), a3 = acc_init();
    if (o < O) {
        __global const float *row = x + xoff + BASE(o);
        ulong r = (ulong)chunk * chunk_len;
        ulong end = min(R, r + chunk_len);
#if VEC4
        /* float4 loads (rows and chunk bounds are multiples of 4 elements, 16-byte aligned):
         * 64 bytes in flight per item; a lane's elements still arrive in increasing order */
        __global const float4 *row4 = (__global const float4 *)row;
        const ulong step = S;
        ulong r4 = r / 4 + lane;
        const ulong end4 = end / 4;
#if VEC_UNROLL == 8
        for (; r4 + 7 * step < end4; r4 += 8 * step) {
            float4 v0 = LOAD4(row4 + r4), v1 = LOAD4(row4 + r4 + step);
            float4 v2 = LOAD4(row4 + r4 + 2 * step), v3 = LOAD4(row4 + r4 + 3 * step);
            float4 v4 = LOAD4(row4 + r4 + 4 * step), v5 = LOAD4(row4 + r4 + 5 * step);
            float4 v6 = LOAD4(row4 + r4 + 6 * step), v7 = LOAD4(row4 + r4 + 7 * step);
            a = acc_add4(acc_add4(a, v0, 4 * r4), v4, 4 * (r4 + 4 * step));
            a1 = acc_add4(acc_add4(a1, v1, 4 * (r4 + step)), v5, 4 * (r4 + 5 * step));
            a2 = acc_add4(acc_add4(a2, v2, 4 * (r4 + 2 * step)), v6, 4 * (r4 + 6 * step));
            a3 = acc_add4(acc_add4(a3, v3, 4 * (r4 + 3 * step)), v7, 4 * (r4 + 7 * step));
        }
#endif
        for (; r4 + 3 * step < end4; r4 += 4 * step) {
            float4 v0 = LOAD4(row4 + r4), v1 = LOAD4(row4 + r4 + step);
            float4 v2 = LOAD4(row4 + r4 + 2 * step), v3 = LOAD4(row4 + r4 + 3 * step);
            a = acc_add4(a, v0, 4 * r4);
            a1 = acc_add4(a1, v1, 4 * (r4 + step));
            a2 = acc_add4(a2, v2, 4 * (r4 + 2 * step));
            a3 = acc_add4(a3, v3, 4 * (r4 + 3 * step));
        }
        for (; r4 < end4; r4 += step)
            a = acc_add4(a, LOAD4(row4 + r4), 4 * r4);
        r = end; /* nothing left for the scalar loops */
#elif CONTIG
        const ulong step = 1;
        ulong slice = (end > r ? end - r : 0) / S + 1;
        r += lane * slice;
        end = min(end, r + slice);
#else
        const ulong step = S;
        r += lane;
#endif
        for (; r + 3 * step < end; r += 4 * step) {
            float v0 = row[ELEM(r)], v1 = row[ELEM(r + step)];
            float v2 = row[ELEM(r + 2 * step)], v3 = row[ELEM(r + 3 * step)];
            a = acc_add(a, v0, r);
            a1 = acc_add(a1, v1, r + step);
            a2 = acc_add(a2, v2, r + 2 * step);
            a3 = acc_add(a3, v3, r + 3 * step);
        }
        for (; r < end; r += step)
            a = acc_add(a, row[ELEM(r)], r);
        a = acc_merge(acc_merge(a, a1), acc_merge(a2, a3));
    }
    a = tree(loc, a, lid, S, opg);

    if (C > 1) {
        /* Publish this chunk's partials; the last chunk group of og finishes. */
        __global volatile float4 *partials = (__global volatile float4 *)(ws + MAX_COUNTERS);
        if (lane == 0 && o < O)
            partials[(ulong)chunk * O + o] = acc_pack(a);
        mem_fence(CLK_GLOBAL_MEM_FENCE);
        barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
        if (lid == 0)
            last = atomic_inc(&ws[og]) == C - 1;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (!last)
            return; /* uniform across the group */
        mem_fence(CLK_GLOBAL_MEM_FENCE);
        a = acc_init();
        if (o < O) {
            /* four partials loaded before any is merged (one volatile load at a time serialised
             * the merge on L2 latency); the merge order is unchanged */
            uint c = lane;
            for (; c + 3 * S < C; c += 4 * S) {
                acc_t p0 = acc_unpack(partials[(ulong)c * O + o]);
                acc_t p1 = acc_unpack(partials[(ulong)(c + S) * O + o]);
                acc_t p2 = acc_unpack(partials[(ulong)(c + 2 * S) * O + o]);
                acc_t p3 = acc_unpack(partials[(ulong)(c + 3 * S) * O + o]);
                a = acc_merge(acc_merge(acc_merge(acc_merge(a, p0), p1), p2), p3);
            }
            for (; c < C; c += S)
                a = acc_merge(a, acc_unpack(partials[(ulong)c * O + o]));
        }
        a = tree(loc, a, lid, S, opg);
        if (lid == 0)
            atomic_xchg(&ws[og], 0u); /* ready for the next launch */
    }
    if (lane == 0 && o < O)
        out[outoff + o] = acc_final(a, R);
}
#endif /* CPU_ROWS */
