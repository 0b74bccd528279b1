/* CPU devices (POCL): a whole 1-D transform per work item (src/ops/fft/fft_ours.c launch_rows), where
 * GPUs run one launch per stage (fft_stockham.cl) or per pass (fft_local.cl). GPU builds never take
 * this program: each item's rows would live in scratch memory there. The stage arithmetic is
 * fft_stockham.cl's (same twiddle table, same butterfly order); element access: common/fft_io.h.
 * FFT_IDX is the index type (int when every index of the launch fits). */

#include "common/fft_io.h"
#include "common/fft_x4.h"
#include "common/fft_lanes4.h"

/* CPU devices: one work item runs every stage of one transform (batch item b) in turn, for each b
 * of its contiguous share of the batch, the middle stages through its own rows of the two scratch
 * buffers (tmp + g n and tmp + scratch + g n for item g, complex elements from tmp_off). The rows
 * stay in the core's cache from stage to stage and from transform to transform (the host launches a
 * few items per core), where fft_stockham.cl's stage kernels stream the whole batch through memory once per
 * stage. A contiguous share: POCL runs a group's items one after another, and strided axes
 * (columns) share cache lines between neighbouring transforms. Same stage arithmetic. Butterflies
 * run block by block (j = blk + k, k < ns), so no division per butterfly. POCL vectorises only
 * straight-line code across work items, and the items here are whole rows (loops), so stages with
 * ns a multiple of 4 and a radix up to ROW_REGS on contiguous complex rows (every middle stage)
 * carry four butterflies k..k+3 in explicit float4 lanes, real and imaginary parts apart; an odd
 * length's spans are odd, so its later stages take four at a time while four remain and the last ns
 * mod 4 one by one (batched 85 = 5 x 17 on POCL ran its radix-17 stage at ns = 5 all one by one:
 * 48-58 ms, 16-17 with four of five in lanes; the multiple-of-4 loop is kept apart: one loop for
 * both measured 15-20 % slower on power-of-two rows there); a contiguous first stage (ns = 1),
 * complex or real, carries butterflies j..j+3, the rest of m / 4 one by one. A side those lanes
 * cannot take (a strided axis such as the columns of a 2-D transform, a Hermitian-half read, a half
 * or real-part write) is first gathered into, or last scattered from, the item's scratch row as
 * contiguous complex, so that every stage runs in lanes: the scalar first and last stages made the
 * column pass of rfft2/64x256x256 on POCL 16.5 ms and its R2C row pass (half write) 20 ms, where a
 * contiguous batched C2C of the same size takes ~5. */
/* contiguous rows of these lengths run 4 at a time in lanes (common/fft_lanes4.h); fft_ours.c's
 * ROWS_LANES_FROM must agree (it picks each path's radices) */
#define QUAD_ROWS_MIN 512
#define QUAD_ODD_ROWS_MIN 64 /* ... and from this length when a radix is odd */
#define QUAD_ROWS_MAX 8192

/* Four radix-4 butterflies k..k+3 of block blk, contiguous complex rows a (from pa) and c (from pc). */
static inline void row_radix4_x4(global const float *pa, global float *pc, global const float2 *tw, idx_t m,
                                 idx_t ns, idx_t k, idx_t step, float dir, float sc)
{
    float8 x0 = vload8(0, pa), x1 = vload8(0, pa + 2 * m), x2 = vload8(0, pa + 4 * m),
           x3 = vload8(0, pa + 6 * m);
    float4 r0 = x0.even, i0 = x0.odd, r1 = x1.even, i1 = x1.odd;
    float4 r2 = x2.even, i2 = x2.odd, r3 = x3.even, i3 = x3.odd;
    float4 c, s;
    roots4(tw, k * step, step, dir, &c, &s);
    CMUL4(r1, i1, c, s);
    roots4(tw, 2 * k * step, 2 * step, dir, &c, &s);
    CMUL4(r2, i2, c, s);
    roots4(tw, 3 * k * step, 3 * step, dir, &c, &s);
    CMUL4(r3, i3, c, s);
    float4 pr = r0 + r2, pi = i0 + i2, qr = r0 - r2, qi = i0 - i2;
    float4 sr = r1 + r3, si = i1 + i3;
    float4 tr = -dir * (i1 - i3), ti = dir * (r1 - r3); /* (v1 - v3) times dir i */
    vstore8(join4(pr + sr, pi + si) * sc, 0, pc);
    vstore8(join4(qr + tr, qi + ti) * sc, 0, pc + 2 * ns);
    vstore8(join4(pr - sr, pi - si) * sc, 0, pc + 4 * ns);
    vstore8(join4(qr - tr, qi - ti) * sc, 0, pc + 6 * ns);
}

static inline void row_radix2_x4(global const float *pa, global float *pc, global const float2 *tw, idx_t m,
                                 idx_t ns, idx_t k, idx_t step, float dir, float sc)
{
    float8 x0 = vload8(0, pa), x1 = vload8(0, pa + 2 * m);
    float4 r0 = x0.even, i0 = x0.odd, r1 = x1.even, i1 = x1.odd;
    float4 c, s;
    roots4(tw, k * step, step, dir, &c, &s);
    CMUL4(r1, i1, c, s);
    vstore8(join4(r0 + r1, i0 + i1) * sc, 0, pc);
    vstore8(join4(r0 - r1, i0 - i1) * sc, 0, pc + 2 * ns);
}

/* The R inputs of four butterflies k..k+3 on contiguous rows (input r of butterfly k at pa + 2 r m), split
 * into real and imaginary lanes and twisted by the roots tw[r (k..k+3) step]. Inlined and unrolled: with a
 * constant R (the small radices) vr and vi stay in registers. */
static inline __attribute__((always_inline)) void row_twisted_x4(global const float *pa, global const float2 *tw,
                                                                 idx_t m, idx_t k, idx_t step, float dir, const int R,
                                                                 float4 *vr, float4 *vi)
{
#pragma unroll
    for (int r = 0; r < R; r++) {
        float8 x = vload8(0, pa + 2 * r * m);
        vr[r] = x.even;
        vi[r] = x.odd;
        if (r > 0) {
            float4 c, s;
            roots4(tw, r * k * step, r * step, dir, &c, &s);
            CMUL4(vr[r], vi[r], c, s);
        }
    }
}

/* Four butterflies k..k+3 of a small radix R (3, 5, 8; a constant after inlining) on contiguous rows. */
static inline __attribute__((always_inline)) void
row_small_x4(global const float *pa, global float *pc, global const float2 *tw, idx_t m, idx_t ns, idx_t k,
             idx_t step, float dir, float sc, const int R)
{
    float4 vr[8], vi[8];
    row_twisted_x4(pa, tw, m, k, step, dir, R, vr, vi);
    dft_small_x4(vr, vi, R, dir);
#pragma unroll
    for (int q = 0; q < R; q++)
        vstore8(join4(vr[q], vi[q]) * sc, 0, pc + 2 * q * ns);
}

/* Four butterflies k..k+3 of any radix up to ROW_REGS (the odd ones): the inputs twisted into
 * registers, then each output as the direct sum over the radix-th roots tw[(r q mod radix) n / radix]. */
static inline void row_any_x4(global const float *pa, global float *pc, global const float2 *tw, idx_t n,
                              idx_t m, idx_t ns, idx_t k, idx_t step, int radix, float dir, float sc)
{
    float4 vr[ROW_REGS], vi[ROW_REGS];
    row_twisted_x4(pa, tw, m, k, step, dir, radix, vr, vi);
    idx_t unit = n / radix;
    if (radix & 1) {
        float4 outr[ROW_REGS], outi[ROW_REGS];
        dft_odd_x4(vr, vi, radix, tw, unit, dir, outr, outi);
        for (int q = 0; q < radix; q++)
            vstore8(join4(outr[q], outi[q]) * sc, 0, pc + 2 * q * ns);
        return;
    }
    for (int q = 0; q < radix; q++) {
        float4 ar, ai;
        dft_output_x4(vr, vi, radix, q, tw, unit, dir, &ar, &ai);
        vstore8(join4(ar, ai) * sc, 0, pc + 2 * q * ns);
    }
}

/* Output q of the four first-stage butterflies j..j+3 (ns = 1): element (j + l) radix + q of pc's row. */
static inline void store_first4(global float *pc, int radix, int q, float4 re, float4 im)
{
    vstore2((float2)(re.s0, im.s0), 0, pc + 2 * q);
    vstore2((float2)(re.s1, im.s1), 0, pc + 2 * (radix + q));
    vstore2((float2)(re.s2, im.s2), 0, pc + 2 * (2 * radix + q));
    vstore2((float2)(re.s3, im.s3), 0, pc + 2 * (3 * radix + q));
}

/* row_first_x4 for a small radix R (3, 5, 8; a constant after inlining: loops unrolled, registers) */
static inline __attribute__((always_inline)) void row_first_small_x4(global const float *pa, int real, global float *pc,
                                                                     idx_t m, float dir, float sc, const int R)
{
    float4 vr[8], vi[8];
#pragma unroll
    for (int r = 0; r < R; r++) {
        if (real) { /* real input (read mode 1): pa points at floats, the imaginary parts are 0 */
            vr[r] = vload4(0, pa + r * m);
            vi[r] = (float4)(0.0f);
        } else {
            float8 x = vload8(0, pa + 2 * r * m);
            vr[r] = x.even;
            vi[r] = x.odd;
        }
    }
    dft_small_x4(vr, vi, R, dir);
#pragma unroll
    for (int q = 0; q < R; q++)
        store_first4(pc, R, q, vr[q] * sc, vi[q] * sc);
}

/* The first stage (ns = 1: every twiddle 1, butterfly j writes j radix .. j radix + radix - 1) for
 * four butterflies j..j+3: contiguous loads in lanes, the outputs scattered by lane. */
static inline void row_first_x4(global const float *pa, int real, global float *pc, global const float2 *tw,
                                idx_t n, idx_t m, int radix, float dir, float sc)
{
    if (SMALL_RADIX(radix)) {
        CALL_SMALL_RADIX(radix, row_first_small_x4, pa, real, pc, m, dir, sc);
        return;
    }
    float4 vr[ROW_REGS], vi[ROW_REGS];
    for (int r = 0; r < radix; r++) {
        if (real) { /* real input (read mode 1): pa points at floats, the imaginary parts are 0 */
            vr[r] = vload4(0, pa + r * m);
            vi[r] = (float4)(0.0f);
            continue;
        }
        float8 x = vload8(0, pa + 2 * r * m);
        vr[r] = x.even;
        vi[r] = x.odd;
    }
    if (radix == 4) {
        float4 pr = vr[0] + vr[2], pi = vi[0] + vi[2], qr = vr[0] - vr[2], qi = vi[0] - vi[2];
        float4 sr = vr[1] + vr[3], si = vi[1] + vi[3];
        float4 tr = -dir * (vi[1] - vi[3]), ti = dir * (vr[1] - vr[3]);
        store_first4(pc, 4, 0, (pr + sr) * sc, (pi + si) * sc);
        store_first4(pc, 4, 1, (qr + tr) * sc, (qi + ti) * sc);
        store_first4(pc, 4, 2, (pr - sr) * sc, (pi - si) * sc);
        store_first4(pc, 4, 3, (qr - tr) * sc, (qi - ti) * sc);
        return;
    }
    idx_t unit = n / radix;
    if (radix & 1) {
        float4 outr[ROW_REGS], outi[ROW_REGS];
        dft_odd_x4(vr, vi, radix, tw, unit, dir, outr, outi);
        for (int q = 0; q < radix; q++)
            store_first4(pc, radix, q, outr[q] * sc, outi[q] * sc);
        return;
    }
    for (int q = 0; q < radix; q++) {
        float4 ar, ai;
        dft_output_x4(vr, vi, radix, q, tw, unit, dir, &ar, &ai);
        store_first4(pc, radix, q, ar * sc, ai * sc);
    }
}


__kernel void fft_rows(global const float *src, long8 in_lay, global float *dst, long8 out_lay,
                     global float *tmp, long tmp_off, long scratch, global const float2 *tw,
                     global const int *radices, int stages, long n_, long batch, float dir, float scale)
{
    idx_t n = (idx_t)n_;
    /* complex transforms 4 at a time in lanes (lanes4): every complex pass of columns, and of rows up to
     * QUAD_ROWS_MAX long made of radices up to ROW_REGS, from QUAD_ROWS_MIN, or from QUAD_ODD_ROWS_MIN
     * with an odd radix (POCL, alternated runs: batched 256-8192 and 1536 1.1-1.5x faster, 1000 and 85
     * 1.3-1.6x; powers of two of 64 and 128 1.2-2x slower, even with 4 elements of each row moved a
     * step, where the row path's first stage does most of the work; again with radix 8 in both paths,
     * 2026-12-08: batched 64 4.1 -> 7.9 ms in lanes, 128 6.0 -> 7.9; and 256 since the row path has radix
     * 8 (8 8 4): row path 1.05-1.24x faster than lanes (4 4 4 4, three runs), 512 as 8 8 8 0.73x, hence
     * QUAD_ROWS_MIN 512); each item's scratch rows are then 4 transforms long */
    int lane_radices = 1, odd_radix = 0;
    for (int s = 0; s < stages; s++) {
        lane_radices &= radices[s] <= ROW_REGS;
        odd_radix |= radices[s] & 1;
    }
    const int lanes_fit = (idx_t)get_global_size(0) * 4 * n <= (idx_t)scratch;
    const int lane_rows = lane_radices && n <= QUAD_ROWS_MAX && n >= QUAD_ROWS_MIN;
    const int odd_lane_rows = lane_radices && n <= QUAD_ROWS_MAX && odd_radix && n >= QUAD_ODD_ROWS_MIN;
    const int quad = in_lay.s7 == 0 && out_lay.s7 == 0 && lanes_fit &&
                     ((in_lay.s1 != 1 && out_lay.s1 != 1) || lane_rows || odd_lane_rows);
    const int gather = in_lay.s1 != 1 || in_lay.s7 == 2, scatter = out_lay.s1 != 1 || out_lay.s7 != 0;
    /* R2C of contiguous rows: two real rows b, b + 1 as one complex row z = x_b + i x_(b+1), one
     * transform for both, split at the end by the conjugate symmetry of a real row's transform */
    const int pairs = in_lay.s7 == 1 && in_lay.s1 == 1 && out_lay.s7 == 2 && out_lay.s1 == 1;
    /* C2R of contiguous rows, the same pairing backwards: two half rows X_b, X_(b+1) (each the spectrum of a
     * real row) as one complex row Z = X_b + i X_(b+1), whose inverse transform is x_b + i x_(b+1): one
     * transform for two rows (irfft2's row pass on POCL ran one per row) */
    const int cpairs = in_lay.s7 == 2 && in_lay.s1 == 1 && out_lay.s7 == 1 && out_lay.s1 == 1;
    /* and such pairs (either way), 8 rows as 4 complex ones in lanes, from QUAD_ROWS_MIN */
    const int quad_pairs = (pairs || cpairs) && lanes_fit && lane_rows;
    const long8 tl = (long8)(0, 1, quad || quad_pairs ? 4 * n_ : n_, 0, 0, 1, 1, 0); /* an item's scratch row */
    const idx_t row = (idx_t)get_global_id(0); /* this item's scratch rows */
    idx_t share = ((idx_t)batch + (idx_t)get_global_size(0) - 1) / (idx_t)get_global_size(0);
    if (quad || quad_pairs) /* shares of whole groups of 4 or 8 (groups aligned to the batch's start) */
        share = quad ? (share + 3) / 4 * 4 : (share + 7) / 8 * 8;
    const idx_t b_end = min((idx_t)batch, (row + 1) * share);
    idx_t b_step = 1;
    for (idx_t b = row * share; b < b_end; b += b_step) {
        if (quad && b + 4 <= b_end) {
            idx4_t ib = quad_bases(in_lay, b), ob = quad_bases(out_lay, b);
            global float *xa = tmp + 2 * (tmp_off + row * 4 * n);
            lanes4_gather(src, ib, (idx_t)in_lay.s1, xa, n);
            lanes4_scatter(lanes4_stages(xa, xa + 2 * (idx_t)scratch, tw, radices, stages, n, dir, scale), dst, ob,
                           (idx_t)out_lay.s1, n);
            b_step = 4;
            continue;
        }
        if (quad_pairs && b + 8 <= b_end) {
            idx4_t ie = pair_bases(in_lay, b, 0), io = pair_bases(in_lay, b, 1);
            idx4_t oe = pair_bases(out_lay, b, 0), oo = pair_bases(out_lay, b, 1);
            global float *xa = tmp + 2 * (tmp_off + row * 4 * n);
            if (cpairs)
                lanes4_gather_cpairs(src, ie, io, xa, n);
            else
                lanes4_gather_pairs(src, ie, io, xa, n);
            global float *xr = lanes4_stages(xa, xa + 2 * (idx_t)scratch, tw, radices, stages, n, dir, scale);
            if (cpairs)
                lanes4_scatter_cpairs(xr, dst, oe, oo, n);
            else
                lanes4_scatter_pairs(xr, dst, oe, oo, n);
            b_step = 8;
            continue;
        }
        const int pair = (pairs || cpairs) && b + 1 < b_end;
        const int gath = gather || pair, scat = scatter || pair;
        b_step = 1 + pair;
        idx_t ns = 1;
        long8 in_l = in_lay;
        global const float *in = src;
        if (gath) { /* into scratch buffer 1, which stage 0 reads (it writes buffer 0) */
            long8 g = tl;
            g.s0 = tmp_off + scratch;
            idx_t from = batch_base(in_lay, b), to = batch_base(g, row);
            idx_t t = 0;
            if (pair && pairs) { /* z[t] = x_b[t] + i x_(b+1)[t] */
                idx_t from2 = batch_base(in_lay, b + 1);
                for (; t + 4 <= n; t += 4)
                    vstore8(join4(vload4(0, src + from + t), vload4(0, src + from2 + t)), 0,
                            tmp + 2 * (to + t));
                for (; t < n; t++)
                    vstore2((float2)(src[from + t], src[from2 + t]), to + t, tmp);
            }
            if (pair && cpairs) { /* Z[t] = X_b[t] + i X_(b+1)[t], t >= h from the conjugate mirror */
                const idx_t h = n / 2 + 1, from2 = batch_base(in_lay, b + 1);
                for (; t + 4 <= h; t += 4) {
                    float8 x = vload8(0, src + 2 * (from + t)), y = vload8(0, src + 2 * (from2 + t));
                    vstore8(join4(x.even - y.odd, x.odd + y.even), 0, tmp + 2 * (to + t));
                }
                for (; t < h; t++) {
                    float2 x = vload2(from + t, src), y = vload2(from2 + t, src);
                    vstore2((float2)(x.x - y.y, x.y + y.x), to + t, tmp);
                }
                for (; t + 4 <= n; t += 4) { /* X[t] = conj X[n - t]: elements n - t - 3 .. n - t, reversed */
                    float8 x = vload8(0, src + 2 * (from + n - t - 3)), y = vload8(0, src + 2 * (from2 + n - t - 3));
                    float4 xr = x.s6420, xi = x.s7531, yr = y.s6420, yi = y.s7531;
                    vstore8(join4(xr + yi, yr - xi), 0, tmp + 2 * (to + t));
                }
                for (; t < n; t++) {
                    float2 x = vload2(from + n - t, src), y = vload2(from2 + n - t, src);
                    vstore2((float2)(x.x + y.y, y.x - x.y), to + t, tmp);
                }
                /* the imaginary parts of X[0] and X[n / 2] (n even) dropped: they would leak into the other
                 * row, and the one-row path's real-part write ignores them */
                vstore2((float2)(src[2 * from], src[2 * from2]), to, tmp);
                if (n % 2 == 0)
                    vstore2((float2)(src[2 * (from + n / 2)], src[2 * (from2 + n / 2)]), to + n / 2, tmp);
            } else if (in_lay.s1 == 1 && in_lay.s7 == 2) { /* a contiguous half row (C2R): four a step */
                const idx_t h = n / 2 + 1;       /* t < h: stored; t >= h: conj(x[n - t]) */
                for (; t + 4 <= h; t += 4)
                    vstore8(vload8(0, src + 2 * (from + t)), 0, tmp + 2 * (to + t));
                for (; t < h; t++)
                    vstore2(load_elem(src, in_lay, from, n, t), to + t, tmp);
                for (; t + 4 <= n; t += 4) { /* x[n - t - 3 .. n - t], reversed and conjugated */
                    float8 v = vload8(0, src + 2 * (from + n - t - 3));
                    vstore8((float8)(v.s6, -v.s7, v.s4, -v.s5, v.s2, -v.s3, v.s0, -v.s1), 0,
                            tmp + 2 * (to + t));
                }
            }
            for (; t < n; t++)
                vstore2(load_elem(src, in_lay, from, n, t), to + t, tmp);
            in_l = g;
            in = tmp;
        }
        for (int s = 0; s < stages; s++) {
            idx_t radix = radices[s];
            idx_t m = n / radix, span = ns * radix, step = n / span;
            long8 la = tl, lb = tl;
            la.s0 = tmp_off + ((s - 1) % 2) * scratch;
            lb.s0 = tmp_off + (s % 2) * scratch;
            const int to_dst = s == stages - 1 && !scat; /* else its scratch buffer, scattered below */
            global const float *a = s == 0 ? in : tmp;
            global float *c = to_dst ? dst : tmp;
            if (s == 0)
                la = in_l;
            if (to_dst)
                lb = out_lay;
            idx_t a_base = batch_base(la, s == 0 && !gath ? b : row);
            idx_t c_base = batch_base(lb, to_dst ? b : row);
            float sc = s == stages - 1 ? scale : 1.0f;
            int lanes = radix <= ROW_REGS && ns % 4 == 0 && la.s1 == 1 && la.s7 == 0 && lb.s1 == 1 &&
                        lb.s7 == 0;
            /* an odd span (odd lengths): butterflies k..k+3 in lanes while four remain, the last
             * ns mod 4 one by one below. The test repeats lanes' on purpose: one shared flag for
             * both measured 15 % slower on power-of-two rows on POCL (batched 64 and 128). */
            const int part = !lanes && radix <= ROW_REGS && ns > 4 && la.s1 == 1 && la.s7 == 0 &&
                             lb.s1 == 1 && lb.s7 == 0;
            idx_t blk0 = 0;
            if (ns == 1 && radix <= ROW_REGS && la.s1 == 1 && la.s7 <= 1 && lb.s1 == 1 && lb.s7 == 0) {
                int real = la.s7 == 1;
                for (; blk0 + 4 <= m; blk0 += 4)
                    row_first_x4(a + (2 - real) * (a_base + blk0), real, c + 2 * (c_base + blk0 * radix), tw,
                                 n, m, (int)radix, dir, sc);
            }
            idx_t out_blk = blk0 * radix; /* ns = 1 when blk0 > 0; the rest one by one */
            for (idx_t blk = blk0; blk < m; blk += ns, out_blk += span) {
                if (lanes) {
                    global const float *pa = a + 2 * (a_base + blk);
                    global float *pc = c + 2 * (c_base + out_blk);
                    if (radix == 4)
                        for (idx_t k = 0; k < ns; k += 4)
                            row_radix4_x4(pa + 2 * k, pc + 2 * k, tw, m, ns, k, step, dir, sc);
                    else if (radix == 2)
                        for (idx_t k = 0; k < ns; k += 4)
                            row_radix2_x4(pa + 2 * k, pc + 2 * k, tw, m, ns, k, step, dir, sc);
                    else if (SMALL_RADIX(radix))
                        for (idx_t k = 0; k < ns; k += 4)
                            CALL_SMALL_RADIX(radix, row_small_x4, pa + 2 * k, pc + 2 * k, tw, m, ns, k, step, dir,
                                             sc);
                    else
                        for (idx_t k = 0; k < ns; k += 4)
                            row_any_x4(pa + 2 * k, pc + 2 * k, tw, n, m, ns, k, step, (int)radix, dir, sc);
                    continue;
                }
                idx_t k0 = 0;
                if (part && SMALL_RADIX(radix))
                    for (; k0 + 4 <= ns; k0 += 4)
                        CALL_SMALL_RADIX(radix, row_small_x4, a + 2 * (a_base + blk + k0),
                                         c + 2 * (c_base + out_blk + k0), tw, m, ns, k0, step, dir, sc);
                else if (part)
                    for (; k0 + 4 <= ns; k0 += 4)
                        row_any_x4(a + 2 * (a_base + blk + k0), c + 2 * (c_base + out_blk + k0), tw, n,
                                   m, ns, k0, step, (int)radix, dir, sc);
                for (idx_t k = k0; k < ns; k++) {
                    idx_t j = blk + k, out0 = out_blk + k;
                    if (radix == 4) {
                        float2 v0 = load_elem(a, la, a_base, n, j);
                        float2 v1 = c_mul(load_elem(a, la, a_base, n, j + m), root(tw, k * step, dir));
                        float2 v2 = c_mul(load_elem(a, la, a_base, n, j + 2 * m), root(tw, 2 * k * step, dir));
                        float2 v3 = c_mul(load_elem(a, la, a_base, n, j + 3 * m), root(tw, 3 * k * step, dir));
                        float2 p = v0 + v2, q = v0 - v2, r = v1 + v3;
                        float2 t = v1 - v3;
                        t = (float2)(-dir * t.y, dir * t.x);
                        store_elem(c, lb, c_base, n, out0, (p + r) * sc);
                        store_elem(c, lb, c_base, n, out0 + ns, (q + t) * sc);
                        store_elem(c, lb, c_base, n, out0 + 2 * ns, (p - r) * sc);
                        store_elem(c, lb, c_base, n, out0 + 3 * ns, (q - t) * sc);
                    } else if (radix == 2) {
                        float2 v0 = load_elem(a, la, a_base, n, j);
                        float2 v1 = c_mul(load_elem(a, la, a_base, n, j + m), root(tw, k * step, dir));
                        store_elem(c, lb, c_base, n, out0, (v0 + v1) * sc);
                        store_elem(c, lb, c_base, n, out0 + ns, (v0 - v1) * sc);
                    } else if (radix <= ROW_REGS) {
                        /* odd radices up to ROW_REGS: the inputs once into registers, then the sums */
                        float2 v[ROW_REGS];
                        for (idx_t r = 0; r < radix; r++)
                            v[r] = load_elem(a, la, a_base, n, j + r * m);
                        for (idx_t q = 0; q < radix; q++) {
                            idx_t e = k + q * ns, ang = 0;
                            float2 acc = (float2)(0.0f, 0.0f);
                            for (idx_t r = 0; r < radix; r++) {
                                acc += c_mul(v[r], root(tw, ang * step, dir));
                                ang += e;
                                if (ang >= span)
                                    ang -= span;
                            }
                            store_elem(c, lb, c_base, n, out0 + q * ns, acc * sc);
                        }
                    } else {
                        for (idx_t q = 0; q < radix; q++) {
                            idx_t e = k + q * ns, ang = 0;
                            float2 acc = (float2)(0.0f, 0.0f);
                            for (idx_t r = 0; r < radix; r++) {
                                acc += c_mul(load_elem(a, la, a_base, n, j + r * m), root(tw, ang * step, dir));
                                ang += e;
                                if (ang >= span)
                                    ang -= span;
                            }
                            store_elem(c, lb, c_base, n, out0 + q * ns, acc * sc);
                        }
                    }
                }
            }
            ns = span;
        }
        if (scat) {
            long8 g = tl;
            g.s0 = tmp_off + ((stages - 1) % 2) * scratch;
            idx_t from = batch_base(g, row), to = batch_base(out_lay, b);
            const idx_t end = out_lay.s7 == 2 ? n / 2 + 1 : n; /* a half write stores t <= n / 2 */
            idx_t t = pair && pairs ? end : 0;
            if (pair && cpairs) { /* Z = x_b + i x_(b+1) */
                const idx_t to2 = batch_base(out_lay, b + 1);
                for (; t + 4 <= n; t += 4) {
                    float8 z = vload8(0, tmp + 2 * (from + t));
                    vstore4(z.even, 0, dst + to + t);
                    vstore4(z.odd, 0, dst + to2 + t);
                }
                for (; t < n; t++) {
                    float2 z = vload2(from + t, tmp);
                    dst[to + t] = z.x;
                    dst[to2 + t] = z.y;
                }
            }
            if (pair && pairs) {
                /* Z = X_b + i X_(b+1): X_b = (Z[k] + conj Z[n-k]) / 2, X_(b+1) = (Z[k] - conj Z[n-k]) / 2i */
                idx_t to2 = batch_base(out_lay, b + 1), k = 1;
                float2 z0 = vload2(from, tmp); /* k = 0 pairs with itself */
                vstore2((float2)(z0.x, 0.0f), to, dst);
                vstore2((float2)(z0.y, 0.0f), to2, dst);
                for (; k + 4 <= end; k += 4) { /* Z[k..k+3] and Z[n-k-3..n-k] read backwards */
                    float8 z = vload8(0, tmp + 2 * (from + k)), v = vload8(0, tmp + 2 * (from + n - k - 3));
                    float4 rr = (float4)(v.s6, v.s4, v.s2, v.s0), ri = (float4)(v.s7, v.s5, v.s3, v.s1);
                    vstore8(join4(z.even + rr, z.odd - ri) * 0.5f, 0, dst + 2 * (to + k));
                    vstore8(join4(z.odd + ri, rr - z.even) * 0.5f, 0, dst + 2 * (to2 + k));
                }
                for (; k < end; k++) {
                    float2 z = vload2(from + k, tmp), r = vload2(from + n - k, tmp);
                    vstore2((float2)(z.x + r.x, z.y - r.y) * 0.5f, to + k, dst);
                    vstore2((float2)(z.y + r.y, r.x - z.x) * 0.5f, to2 + k, dst);
                }
            }
            /* a contiguous row (R2C's half, C2R's real parts): four elements a step; element by
             * element through store_elem, the half write of rfft2/64x256x256's row pass on POCL
             * took more than the transforms */
            if (out_lay.s1 == 1 && out_lay.s7 == 2)
                for (; t + 4 <= end; t += 4)
                    vstore8(vload8(0, tmp + 2 * (from + t)), 0, dst + 2 * (to + t));
            else if (out_lay.s1 == 1 && out_lay.s7 == 1)
                for (; t + 4 <= end; t += 4)
                    vstore4(vload8(0, tmp + 2 * (from + t)).even, 0, dst + to + t);
            for (; t < end; t++)
                store_elem(dst, out_lay, to, n, t, vload2(from + t, tmp));
        }
    }
}
