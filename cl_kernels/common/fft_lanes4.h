/* fft_rows.cl's four-transform lanes (lanes4): gather four transforms into a scratch row, run every stage
 * there, scatter them back; the R2C / C2R pairs eight rows at a time; the batch bases of four transforms.
 * Included after common/fft_io.h and common/fft_x4.h. */
#ifndef CLT_COMMON_FFT_LANES4_H
#define CLT_COMMON_FFT_LANES4_H

/* Four transforms in float4 lanes (lane l: the transform whose element t is complex element
 * ib[l] + t in_stride of src, written to ob[l] + t out_stride of dst): gathered as planar float8 elements
 * (re of the 4 transforms, then im) into scratch row xa, every stage from one scratch row to the other
 * with each butterfly's twiddles shared by the 4 lanes, then scattered to dst. Neighbouring columns
 * (ib[l] = ib[0] + l) come in one 32-byte load per element; other transforms (rows, columns across a
 * plane's edge) a complex value per lane. A transform taken alone (fft_rows.cl's row path) runs a
 * stage's arithmetic one complex value, or four butterflies of one row, at a time: the row path
 * deinterleaves, reinterleaves and loads 4 twiddles per 4 butterflies; here nothing is shuffled
 * inside the stages and one twiddle serves 4 butterflies. R2C rows come in pairs per lane
 * (lanes4_gather_pairs / lanes4_scatter_pairs: 8 real rows as 4 complex ones, as the row path pairs
 * them). */
/* Measured and dropped (POCL, fastest of 5 alternated runs): lanes4 scratch rows as two planes (the 4 real
 * parts of every element, then the 4 imaginary ones, 4 n floats apart) instead of a float8 (re, im) per
 * element, to save the extract / insert around each access: batched 4096 7.4 -> 11.2 ms, 1536 7.3 -> 9.1,
 * 1000 7.2 -> 8.4, irfft2/16x512x512 8.3 -> 9.5. */
/* Whether four transforms start at neighbouring elements (one load or store serves all lanes). */
static inline int neighbours4(idx4_t b)
{
    return b.y == b.x + 1 && b.z == b.x + 2 && b.w == b.x + 3;
}

static void lanes4_gather(global const float *src, idx4_t ib, idx_t in_stride, global float *xa, idx_t n)
{
    if (neighbours4(ib))
        for (idx_t t = 0; t < n; t++) {
            float8 v = vload8(0, src + 2 * (ib.x + t * in_stride));
            vstore8((float8)(v.even, v.odd), t, xa);
        }
    else {
        idx_t t = 0;
        if (in_stride == 1) /* rows: 4 elements of each row a step, transposed into 4 planar elements */
            for (; t + 4 <= n; t += 4) {
                float8 a = vload8(0, src + 2 * (ib.x + t)), b = vload8(0, src + 2 * (ib.y + t)),
                       c = vload8(0, src + 2 * (ib.z + t)), d = vload8(0, src + 2 * (ib.w + t));
                vstore8((float8)(a.s0, b.s0, c.s0, d.s0, a.s1, b.s1, c.s1, d.s1), t, xa);
                vstore8((float8)(a.s2, b.s2, c.s2, d.s2, a.s3, b.s3, c.s3, d.s3), t + 1, xa);
                vstore8((float8)(a.s4, b.s4, c.s4, d.s4, a.s5, b.s5, c.s5, d.s5), t + 2, xa);
                vstore8((float8)(a.s6, b.s6, c.s6, d.s6, a.s7, b.s7, c.s7, d.s7), t + 3, xa);
            }
        for (; t < n; t++) {
            idx_t o = t * in_stride;
            float2 a = vload2(ib.x + o, src), b = vload2(ib.y + o, src), c = vload2(ib.z + o, src),
                   d = vload2(ib.w + o, src);
            vstore8((float8)(a.x, b.x, c.x, d.x, a.y, b.y, c.y, d.y), t, xa);
        }
    }
}

/* Lane l: z[t] = x_(ie[l])[t] + i x_(io[l])[t], two contiguous real rows (float offsets ie, io). */
static void lanes4_gather_pairs(global const float *src, idx4_t ie, idx4_t io, global float *xa, idx_t n)
{
    idx_t t = 0;
    for (; t + 4 <= n; t += 4) {
        float4 e0 = vload4(0, src + ie.x + t), e1 = vload4(0, src + ie.y + t), e2 = vload4(0, src + ie.z + t),
               e3 = vload4(0, src + ie.w + t);
        float4 o0 = vload4(0, src + io.x + t), o1 = vload4(0, src + io.y + t), o2 = vload4(0, src + io.z + t),
               o3 = vload4(0, src + io.w + t);
        vstore8((float8)(e0.s0, e1.s0, e2.s0, e3.s0, o0.s0, o1.s0, o2.s0, o3.s0), t, xa);
        vstore8((float8)(e0.s1, e1.s1, e2.s1, e3.s1, o0.s1, o1.s1, o2.s1, o3.s1), t + 1, xa);
        vstore8((float8)(e0.s2, e1.s2, e2.s2, e3.s2, o0.s2, o1.s2, o2.s2, o3.s2), t + 2, xa);
        vstore8((float8)(e0.s3, e1.s3, e2.s3, e3.s3, o0.s3, o1.s3, o2.s3, o3.s3), t + 3, xa);
    }
    for (; t < n; t++)
        vstore8((float8)(src[ie.x + t], src[ie.y + t], src[ie.z + t], src[ie.w + t], src[io.x + t], src[io.y + t],
                         src[io.z + t], src[io.w + t]),
                t, xa);
}

/* The R inputs j + r m of one butterfly (k) on four transforms in lanes, split into real and imaginary
 * lanes and twisted by the shared roots tw[r k step]. Inlined and unrolled, as row_twisted_x4 (without the
 * pragma, batched 1000 on POCL ran 0.89x as fast). */
static inline __attribute__((always_inline)) void lanes4_twisted(global const float *xa, global const float2 *tw,
                                                                 idx_t j, idx_t m, idx_t k, idx_t step, float dir,
                                                                 const int R, float4 *vr, float4 *vi)
{
#pragma unroll
    for (int r = 0; r < R; r++) {
        float8 v = vload8(j + r * m, xa);
        vr[r] = v.lo;
        vi[r] = v.hi;
        if (r > 0) {
            float2 w = root(tw, r * k * step, dir);
            CMUL4(vr[r], vi[r], w.x, w.y);
        }
    }
}

/* One butterfly of a small radix R (3, 5, 8) on four transforms in lanes: elements j + r m of xa (a
 * float8 (re, im) each), one twiddle per input shared by the lanes, outputs out0 + q ns of xb. */
static inline __attribute__((always_inline)) void
lanes4_small(global const float *xa, global float *xb, global const float2 *tw, idx_t j, idx_t m, idx_t k,
             idx_t step, idx_t out0, idx_t ns, float dir, float sc, const int R)
{
    float4 vr[8], vi[8];
    lanes4_twisted(xa, tw, j, m, k, step, dir, R, vr, vi);
    dft_small_x4(vr, vi, R, dir);
#pragma unroll
    for (int q = 0; q < R; q++)
        vstore8((float8)(vr[q], vi[q]) * sc, out0 + q * ns, xb);
}

/* The stages, from scratch row xa through xb and back; returns the row holding the result. */
static global float *lanes4_stages(global float *xa, global float *xb, global const float2 *tw,
                                   global const int *radices, int stages, idx_t n, float dir, float scale)
{
    idx_t ns = 1;
    for (int s = 0; s < stages; s++) {
        const idx_t radix = radices[s], m = n / radix, span = ns * radix, step = n / span;
        const float sc = s == stages - 1 ? scale : 1.0f;
        for (idx_t blk = 0; blk < m; blk += ns)
            for (idx_t k = 0; k < ns; k++) {
                const idx_t j = blk + k, out0 = blk * radix + k;
                if (radix == 2) {
                    float8 a0 = vload8(j, xa), a1 = vload8(j + m, xa);
                    float2 w = root(tw, k * step, dir);
                    float4 r1 = a1.lo, i1 = a1.hi;
                    CMUL4(r1, i1, w.x, w.y);
                    vstore8((float8)(a0.lo + r1, a0.hi + i1) * sc, out0, xb);
                    vstore8((float8)(a0.lo - r1, a0.hi - i1) * sc, out0 + ns, xb);
                } else if (radix == 4) {
                    float8 a0 = vload8(j, xa), a1 = vload8(j + m, xa), a2 = vload8(j + 2 * m, xa),
                           a3 = vload8(j + 3 * m, xa);
                    float2 w1 = root(tw, k * step, dir), w2 = root(tw, 2 * k * step, dir),
                           w3 = root(tw, 3 * k * step, dir);
                    float4 r1 = a1.lo, i1 = a1.hi, r2 = a2.lo, i2 = a2.hi, r3 = a3.lo, i3 = a3.hi;
                    CMUL4(r1, i1, w1.x, w1.y);
                    CMUL4(r2, i2, w2.x, w2.y);
                    CMUL4(r3, i3, w3.x, w3.y);
                    float4 pr = a0.lo + r2, pi = a0.hi + i2, qr = a0.lo - r2, qi = a0.hi - i2;
                    float4 rr = r1 + r3, ri = i1 + i3, tr = -dir * (i1 - i3), ti = dir * (r1 - r3);
                    vstore8((float8)(pr + rr, pi + ri) * sc, out0, xb);
                    vstore8((float8)(qr + tr, qi + ti) * sc, out0 + ns, xb);
                    vstore8((float8)(pr - rr, pi - ri) * sc, out0 + 2 * ns, xb);
                    vstore8((float8)(qr - tr, qi - ti) * sc, out0 + 3 * ns, xb);
                } else if (SMALL_RADIX(radix)) {
                    CALL_SMALL_RADIX(radix, lanes4_small, xa, xb, tw, j, m, k, step, out0, ns, dir, sc);
                } else if ((radix & 1) && radix <= ROW_REGS) {
                    /* odd radices (primes): the inputs twisted once into registers, then the DFT by
                     * conjugate-symmetric pairs (dft_odd_x4, as the row path) */
                    float4 vr[ROW_REGS], vi[ROW_REGS], outr[ROW_REGS], outi[ROW_REGS];
                    lanes4_twisted(xa, tw, j, m, k, step, dir, (int)radix, vr, vi);
                    dft_odd_x4(vr, vi, (int)radix, tw, n / radix, dir, outr, outi);
                    for (idx_t q = 0; q < radix; q++)
                        vstore8((float8)(outr[q], outi[q]) * sc, out0 + q * ns, xb);
                } else {
                    /* any radix: each output the direct sum of its R twisted terms */
                    for (idx_t q = 0; q < radix; q++) {
                        idx_t e = k + q * ns, ang = 0;
                        float4 accr = (float4)(0.0f), acci = (float4)(0.0f);
                        for (idx_t r = 0; r < radix; r++) {
                            float8 v = vload8(j + r * m, xa);
                            float2 w = root(tw, ang * step, dir);
                            accr += v.lo * w.x - v.hi * w.y;
                            acci += v.lo * w.y + v.hi * w.x;
                            ang += e;
                            if (ang >= span)
                                ang -= span;
                        }
                        vstore8((float8)(accr, acci) * sc, out0 + q * ns, xb);
                    }
                }
            }
        ns = span;
        global float *x = xa;
        xa = xb;
        xb = x;
    }
    return xa;
}

static void lanes4_scatter(global const float *xr, global float *dst, idx4_t ob, idx_t out_stride, idx_t n)
{
    if (neighbours4(ob))
        for (idx_t t = 0; t < n; t++) {
            float8 v = vload8(t, xr);
            vstore8(join4(v.lo, v.hi), 0, dst + 2 * (ob.x + t * out_stride));
        }
    else {
        idx_t t = 0;
        if (out_stride == 1) /* rows: 4 planar elements transposed into 4 elements of each row */
            for (; t + 4 <= n; t += 4) {
                float8 a = vload8(t, xr), b = vload8(t + 1, xr), c = vload8(t + 2, xr), d = vload8(t + 3, xr);
                vstore8((float8)(a.s04, b.s04, c.s04, d.s04), 0, dst + 2 * (ob.x + t));
                vstore8((float8)(a.s15, b.s15, c.s15, d.s15), 0, dst + 2 * (ob.y + t));
                vstore8((float8)(a.s26, b.s26, c.s26, d.s26), 0, dst + 2 * (ob.z + t));
                vstore8((float8)(a.s37, b.s37, c.s37, d.s37), 0, dst + 2 * (ob.w + t));
            }
        for (; t < n; t++) {
            float8 v = vload8(t, xr);
            idx_t o = t * out_stride;
            vstore2(v.s04, ob.x + o, dst);
            vstore2(v.s15, ob.y + o, dst);
            vstore2(v.s26, ob.z + o, dst);
            vstore2(v.s37, ob.w + o, dst);
        }
    }
}

/* The Hermitian halves (k <= n / 2) of the pairs: lane l's Z = X_e + i X_o gives X_e[k] = (Z[k] +
 * conj Z[n - k]) / 2 at oe[l] + k and X_o[k] = (Z[k] - conj Z[n - k]) / 2i at oo[l] + k (complex
 * offsets), as the row path splits one pair. */
static void lanes4_scatter_pairs(global const float *xr, global float *dst, idx4_t oe, idx4_t oo, idx_t n)
{
    for (idx_t k = 0; k <= n / 2; k++) {
        float8 z = vload8(k, xr), r = vload8(k == 0 ? 0 : n - k, xr);
        float4 er = (z.lo + r.lo) * 0.5f, ei = (z.hi - r.hi) * 0.5f;
        float4 orr = (z.hi + r.hi) * 0.5f, oi = (r.lo - z.lo) * 0.5f;
        vstore2((float2)(er.x, ei.x), oe.x + k, dst);
        vstore2((float2)(er.y, ei.y), oe.y + k, dst);
        vstore2((float2)(er.z, ei.z), oe.z + k, dst);
        vstore2((float2)(er.w, ei.w), oe.w + k, dst);
        vstore2((float2)(orr.x, oi.x), oo.x + k, dst);
        vstore2((float2)(orr.y, oi.y), oo.y + k, dst);
        vstore2((float2)(orr.z, oi.z), oo.z + k, dst);
        vstore2((float2)(orr.w, oi.w), oo.w + k, dst);
    }
}

/* Lane l: Z[t] = X_(ie[l])[t] + i X_(io[l])[t] of two contiguous half rows (complex offsets ie, io; t > n / 2
 * from the conjugate mirror; the imaginary parts of X[0] and X[n / 2] dropped, as the row path's cpairs do). */
static void lanes4_gather_cpairs(global const float *src, idx4_t ie, idx4_t io, global float *xa, idx_t n)
{
    const idx_t h = n / 2 + 1;
    for (idx_t t = 0; t < n; t++) {
        const idx_t u = t < h ? t : n - t;
        const float s = t < h ? 1.0f : -1.0f, keep = t == 0 || 2 * t == n ? 0.0f : 1.0f;
        float2 e0 = vload2(ie.x + u, src), e1 = vload2(ie.y + u, src), e2 = vload2(ie.z + u, src),
               e3 = vload2(ie.w + u, src), o0 = vload2(io.x + u, src), o1 = vload2(io.y + u, src),
               o2 = vload2(io.z + u, src), o3 = vload2(io.w + u, src);
        float4 er = (float4)(e0.x, e1.x, e2.x, e3.x), ei = (s * keep) * (float4)(e0.y, e1.y, e2.y, e3.y);
        float4 orr = (float4)(o0.x, o1.x, o2.x, o3.x), oi = (s * keep) * (float4)(o0.y, o1.y, o2.y, o3.y);
        vstore8((float8)(er - oi, ei + orr), t, xa);
    }
}

/* Lane l's Z = x_(oe[l]) + i x_(oo[l]): the real parts to row oe[l], the imaginary ones to row oo[l] (float
 * offsets), four elements a step. */
static void lanes4_scatter_cpairs(global const float *xr, global float *dst, idx4_t oe, idx4_t oo, idx_t n)
{
    idx_t t = 0;
    for (; t + 4 <= n; t += 4) {
        float8 a = vload8(t, xr), b = vload8(t + 1, xr), c = vload8(t + 2, xr), d = vload8(t + 3, xr);
        vstore4((float4)(a.s0, b.s0, c.s0, d.s0), 0, dst + oe.x + t);
        vstore4((float4)(a.s1, b.s1, c.s1, d.s1), 0, dst + oe.y + t);
        vstore4((float4)(a.s2, b.s2, c.s2, d.s2), 0, dst + oe.z + t);
        vstore4((float4)(a.s3, b.s3, c.s3, d.s3), 0, dst + oe.w + t);
        vstore4((float4)(a.s4, b.s4, c.s4, d.s4), 0, dst + oo.x + t);
        vstore4((float4)(a.s5, b.s5, c.s5, d.s5), 0, dst + oo.y + t);
        vstore4((float4)(a.s6, b.s6, c.s6, d.s6), 0, dst + oo.z + t);
        vstore4((float4)(a.s7, b.s7, c.s7, d.s7), 0, dst + oo.w + t);
    }
    for (; t < n; t++) {
        float8 z = vload8(t, xr);
        dst[oe.x + t] = z.s0;
        dst[oe.y + t] = z.s1;
        dst[oe.z + t] = z.s2;
        dst[oe.w + t] = z.s3;
        dst[oo.x + t] = z.s4;
        dst[oo.y + t] = z.s5;
        dst[oo.z + t] = z.s6;
        dst[oo.w + t] = z.s7;
    }
}

/* The first elements of transforms b..b+3: neighbours when the fourth is 3 past the first (no more
 * batch_base divisions then: 4 per call, a tenth of a 4-lane 128-point transform's time on POCL). */
static inline idx4_t quad_bases(long8 lay, idx_t b)
{
    idx_t first = batch_base(lay, b), last = batch_base(lay, b + 3);
    if (last == first + 3)
        return (idx4_t)(first, first + 1, first + 2, last);
    return (idx4_t)(first, batch_base(lay, b + 1), batch_base(lay, b + 2), last);
}

/* The first elements of rows b + 2l + parity, l < 4 (a pair group of 8 rows): evenly spaced when the
 * last is 7 steps of the first's spacing past the first (3 batch_base calls instead of 4). */
static inline idx4_t pair_bases(long8 lay, idx_t b, int parity)
{
    idx_t first = batch_base(lay, b), d = batch_base(lay, b + 1) - first, last = batch_base(lay, b + 7);
    if (last == first + 7 * d)
        return (idx4_t)(first + parity * d, first + (2 + parity) * d, first + (4 + parity) * d,
                        first + (6 + parity) * d);
    return (idx4_t)(batch_base(lay, b + parity), batch_base(lay, b + 2 + parity), batch_base(lay, b + 4 + parity),
                    batch_base(lay, b + 6 + parity));
}

#endif
