/* CPU devices (POCL): a whole 1-D transform per work item (src/ops/fft/fft_ours.c launch_rows), where
 * GPUs run one launch per stage (fft_stockham.cl) or per pass (fft_local.cl). GPU builds never take
 * this program: each item's rows would live in scratch memory there. The stage arithmetic is
 * fft_stockham.cl's (same twiddle table, same butterfly order); element access: common/fft_io.h.
 * FFT_IDX is the index type (int when every index of the launch fits). */

#include "common/fft_io.h"

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
#define ROW_REGS 32 /* fft_rows keeps a butterfly's inputs in registers up to this radix */
#define QUAD_ROWS_MIN 512 /* contiguous rows of these lengths run 4 at a time in lanes (lanes4) */
#define QUAD_ODD_ROWS_MIN 64 /* ... and from this length when a radix is odd */
#define QUAD_ROWS_MAX 8192

/* (re, im) of x + i y = (a + i b)(c + i s), four lanes */
#define CMUL4(re, im, c, s)                                                                          \
    do {                                                                                             \
        float4 t_ = re * c - im * s;                                                                 \
        im = re * s + im * c;                                                                        \
        re = t_;                                                                                     \
    } while (0)

static inline float8 join4(float4 re, float4 im)
{
    return (float8)(re.s0, im.s0, re.s1, im.s1, re.s2, im.s2, re.s3, im.s3);
}

/* Radix 3, 5 and 8 in place on four butterflies in lanes (planar re / im), with the roots of unity as
 * constants rather than loads from the twiddle table: the generic odd path (dft_odd_x4) and the
 * even direct sums index private arrays by a radix known only at run time, which keeps them in
 * memory. W = exp(dir 2 pi i / R); output q = sum_r v_r W^(r q), natural order. */
#define SIN_3 0.866025403784438647f  /* sin(2 pi / 3) */
#define COS_5A 0.309016994374947424f /* cos(2 pi / 5) */
#define COS_5B -0.809016994374947424f /* cos(4 pi / 5) */
#define SIN_5A 0.951056516295153572f /* sin(2 pi / 5) */
#define SIN_5B 0.587785252292473129f /* sin(4 pi / 5) */
#define HALF_SQRT2 0.707106781186547524f

static inline void dft3_x4(float4 *r, float4 *i, float dir)
{
    float4 sr = r[1] + r[2], si = i[1] + i[2];
    float4 dr = (dir * SIN_3) * (r[1] - r[2]), di = (dir * SIN_3) * (i[1] - i[2]);
    float4 ar = r[0] - 0.5f * sr, ai = i[0] - 0.5f * si;
    r[0] += sr;
    i[0] += si;
    r[1] = ar - di; /* a + i d */
    i[1] = ai + dr;
    r[2] = ar + di;
    i[2] = ai - dr;
}

static inline void dft5_x4(float4 *r, float4 *i, float dir)
{
    float4 s1r = r[1] + r[4], s1i = i[1] + i[4], d1r = r[1] - r[4], d1i = i[1] - i[4];
    float4 s2r = r[2] + r[3], s2i = i[2] + i[3], d2r = r[2] - r[3], d2i = i[2] - i[3];
    float4 a1r = r[0] + COS_5A * s1r + COS_5B * s2r, a1i = i[0] + COS_5A * s1i + COS_5B * s2i;
    float4 a2r = r[0] + COS_5B * s1r + COS_5A * s2r, a2i = i[0] + COS_5B * s1i + COS_5A * s2i;
    float4 b1r = dir * (SIN_5A * d1r + SIN_5B * d2r), b1i = dir * (SIN_5A * d1i + SIN_5B * d2i);
    float4 b2r = dir * (SIN_5B * d1r - SIN_5A * d2r), b2i = dir * (SIN_5B * d1i - SIN_5A * d2i);
    r[0] += s1r + s2r;
    i[0] += s1i + s2i;
    r[1] = a1r - b1i; /* outputs 1 and 4: a1 +- i b1; 2 and 3: a2 +- i b2 */
    i[1] = a1i + b1r;
    r[4] = a1r + b1i;
    i[4] = a1i - b1r;
    r[2] = a2r - b2i;
    i[2] = a2i + b2r;
    r[3] = a2r + b2i;
    i[3] = a2i - b2r;
}

/* radix 4 of (v0, v1, v2, v3) into outputs o, o + 2, o + 4, o + 6 of (r, i) (stride 2: radix 8's halves) */
static inline void dft4_into_x4(float4 v0r, float4 v0i, float4 v1r, float4 v1i, float4 v2r, float4 v2i, float4 v3r,
                                float4 v3i, float dir, float4 *r, float4 *i)
{
    float4 pr = v0r + v2r, pi = v0i + v2i, qr = v0r - v2r, qi = v0i - v2i;
    float4 sr = v1r + v3r, si = v1i + v3i, tr = -dir * (v1i - v3i), ti = dir * (v1r - v3r);
    r[0] = pr + sr;
    i[0] = pi + si;
    r[2] = qr + tr;
    i[2] = qi + ti;
    r[4] = pr - sr;
    i[4] = pi - si;
    r[6] = qr - tr;
    i[6] = qi - ti;
}

/* radix 8 as 2 x 4: a_r = v_r + v_(r+4) gives the even outputs, (v_r - v_(r+4)) W^r the odd ones */
static inline void dft8_x4(float4 *r, float4 *i, float dir)
{
    float4 a0r = r[0] + r[4], a0i = i[0] + i[4], a1r = r[1] + r[5], a1i = i[1] + i[5];
    float4 a2r = r[2] + r[6], a2i = i[2] + i[6], a3r = r[3] + r[7], a3i = i[3] + i[7];
    float4 b0r = r[0] - r[4], b0i = i[0] - i[4];
    float4 xr = r[1] - r[5], xi = i[1] - i[5];
    float4 b1r = HALF_SQRT2 * (xr - dir * xi), b1i = HALF_SQRT2 * (dir * xr + xi); /* x W */
    xr = r[2] - r[6];
    xi = i[2] - i[6];
    float4 b2r = -dir * xi, b2i = dir * xr; /* x W^2 = x dir i */
    xr = r[3] - r[7];
    xi = i[3] - i[7];
    float4 b3r = -HALF_SQRT2 * (xr + dir * xi), b3i = HALF_SQRT2 * (dir * xr - xi); /* x W^3 */
    dft4_into_x4(a0r, a0i, a1r, a1i, a2r, a2i, a3r, a3i, dir, r, i);
    dft4_into_x4(b0r, b0i, b1r, b1i, b2r, b2i, b3r, b3i, dir, r + 1, i + 1);
}

/* Whether fft_rows has a constant-root butterfly for radix (fft_ours.c's CPU factorisation takes 8s) */
#define SMALL_RADIX(radix) ((radix) == 3 || (radix) == 5 || (radix) == 8)
/* f(args..., R) with R the literal 8, 5 or 3 that radix equals (SMALL_RADIX holds): a constant radix per
 * call, so the small-radix helper's loops unroll and its arrays stay in registers */
#define CALL_SMALL_RADIX(radix, f, ...)                                                             \
    do {                                                                                           \
        if ((radix) == 8)                                                                          \
            f(__VA_ARGS__, 8);                                                                     \
        else if ((radix) == 5)                                                                     \
            f(__VA_ARGS__, 5);                                                                     \
        else                                                                                       \
            f(__VA_ARGS__, 3);                                                                     \
    } while (0)

/* The butterfly of a small radix R (a constant after inlining, so the arrays stay in registers) */
static inline __attribute__((always_inline)) void dft_small_x4(float4 *r, float4 *i, const int R, float dir)
{
    if (R == 3)
        dft3_x4(r, i, dir);
    else if (R == 5)
        dft5_x4(r, i, dir);
    else
        dft8_x4(r, i, dir);
}

/* the roots tw[m0 + l dm] (l < 4), the sine turned by dir */
static inline void roots4(global const float2 *tw, idx_t m0, idx_t dm, float dir, float4 *c, float4 *s)
{
    float2 a = tw[m0], b = tw[m0 + dm], e = tw[m0 + 2 * dm], d = tw[m0 + 3 * dm];
    *c = (float4)(a.x, b.x, e.x, d.x);
    *s = dir * (float4)(a.y, b.y, e.y, d.y);
}

/* Four radix-4 butterflies k..k+3 of block blk, contiguous complex rows a (from pa) and c (from pc). */
/* Output q of a radix-R DFT by the direct sum, four butterflies in lanes: the R-th roots are
 * tw[(r q mod R) unit], unit = n / R. */
static inline void dft_output_x4(const float4 *vr, const float4 *vi, int radix, int q,
                                 global const float2 *tw, idx_t unit, float dir, float4 *ar,
                                 float4 *ai)
{
    float4 sr = vr[0], si = vi[0];
    int e = 0; /* r q mod radix */
    for (int r = 1; r < radix; r++) {
        e += q;
        if (e >= radix)
            e -= radix;
        float2 w = root(tw, e * unit, dir);
        sr += vr[r] * w.x - vi[r] * w.y;
        si += vr[r] * w.y + vi[r] * w.x;
    }
    *ar = sr;
    *ai = si;
}

/* All R outputs of an odd radix-R DFT, four butterflies in lanes, into (outr, outi): inputs r and R - r
 * have conjugate roots, so with s = v_r + v_(R-r), d = v_r - v_(R-r) output q is
 * v_0 + sum s Re(W^rq) + i sum d Im(W^rq) and output R - q the same with - i: a quarter of
 * dft_output_x4's multiplications and half its root loads (W = tw[unit], W^e = tw[e unit]). */
static inline void dft_odd_x4(const float4 *vr, const float4 *vi, int radix, global const float2 *tw,
                              idx_t unit, float dir, float4 *outr, float4 *outi)
{
    float4 sr[ROW_REGS / 2 + 1], si[ROW_REGS / 2 + 1], dr[ROW_REGS / 2 + 1], di[ROW_REGS / 2 + 1];
    float4 xr = vr[0], xi = vi[0];
    const int h = radix / 2;
    for (int r = 1; r <= h; r++) {
        sr[r] = vr[r] + vr[radix - r];
        si[r] = vi[r] + vi[radix - r];
        dr[r] = vr[r] - vr[radix - r];
        di[r] = vi[r] - vi[radix - r];
        xr += sr[r];
        xi += si[r];
    }
    outr[0] = xr;
    outi[0] = xi;
    for (int q = 1; q <= h; q++) {
        float4 ar = vr[0], ai = vi[0], br = (float4)(0.0f), bi = (float4)(0.0f);
        int e = 0; /* r q mod radix */
        for (int r = 1; r <= h; r++) {
            e += q;
            if (e >= radix)
                e -= radix;
            const float2 w = root(tw, e * unit, dir);
            ar += sr[r] * w.x;
            ai += si[r] * w.x;
            br += dr[r] * w.y;
            bi += di[r] * w.y;
        }
        /* i b = (-bi, br) */
        outr[q] = ar - bi;
        outi[q] = ai + br;
        outr[radix - q] = ar + bi;
        outi[radix - q] = ai - br;
    }
}

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

/* Four transforms in float4 lanes (lane l: the transform whose element t is complex element
 * ib[l] + t in_stride of src, written to ob[l] + t out_stride of dst): gathered as planar float8 elements
 * (re of the 4 transforms, then im) into scratch row xa, every stage from one scratch row to the other
 * with each butterfly's twiddles shared by the 4 lanes, then scattered to dst. Neighbouring columns
 * (ib[l] = ib[0] + l) come in one 32-byte load per element; other transforms (rows, columns across a
 * plane's edge) a complex value per lane. A transform taken alone (fft_rows's path below) runs a
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
