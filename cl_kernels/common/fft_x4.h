/* fft_rows.cl's arithmetic on four butterflies at once in float4 lanes (planar re / im): the complex
 * multiply, the constant-root radix 3 / 5 / 8 butterflies, the root loads and the generic odd and direct-sum
 * DFTs. CPU devices only (POCL vectorises the explicit lanes, not one work item's loops).
 * Included after common/fft_io.h (idx_t, root). */
#ifndef CLT_COMMON_FFT_X4_H
#define CLT_COMMON_FFT_X4_H

#define ROW_REGS 32 /* fft_rows keeps a butterfly's inputs in registers up to this radix */

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

#endif
