/* One radix stage of a Stockham (self-sorting) FFT, out of place, for a batch of 1-D transforms of
 * length n along one axis (src/ops/fft/fft_ours.c plans the stages and passes).
 *
 * Stage with span ns (the product of the radices already applied) and radix R: butterfly j in
 * [0, n/R) reads x[j + r n/R] (r < R), twists term r by w^(r k) with k = j mod ns and
 * w = exp(dir 2 pi i / (ns R)), takes the R-point DFT and writes output q to
 * (j / ns) ns R + k + q ns. After the last stage the sequence is in natural order.
 *
 * Twiddles come from a table of the n-th roots of unity, tw[m] = (cos, sin)(2 pi m / n), computed in
 * double on the host (exact to float rounding, and no sin/cos per butterfly: the stage's root of
 * order L = ns R is tw[m n / L]); dir (-1 forward, +1 inverse) flips the sine.
 *
 * Layouts and element access: common/fft_io.h.
 * FFT_IDX is the index type: int when every index of the launch fits (cheaper division), else long. */

#ifndef FFT_RADIX
#define FFT_RADIX 0 /* 0: any radix, one work item per output; else one per butterfly */
#endif
#include "common/fft_io.h"

#if FFT_RADIX == 0

/* Any radix: item (b, j, q) computes output q of butterfly j as one sum of R twisted terms;
 * term r carries w^(r k) exp(dir 2 pi i r q / R) = exp(dir 2 pi i r (k + q ns) / (ns R)). */
__kernel void fft_stage(global const float *src, long8 in_lay, global float *dst, long8 out_lay,
                      global const float2 *tw, long n_, long ns_, long radix_, long batch, float dir,
                      float scale)
{
    idx_t n = (idx_t)n_, ns = (idx_t)ns_, radix = (idx_t)radix_;
    idx_t m = n / radix, span = ns * radix, step = n / span;
    idx_t items = (idx_t)batch * n;
    for (idx_t g = (idx_t)get_global_id(0); g < items; g += (idx_t)get_global_size(0)) {
        idx_t b = g / n;
        idx_t rest = g - b * n;
        idx_t q = rest / m, j = rest - q * m;
        idx_t k = j % ns;
        idx_t in_base = batch_base(in_lay, b);
        idx_t e = k + q * ns;
        float2 acc = (float2)(0.0f, 0.0f);
        idx_t ang = 0; /* r e mod span, advanced by e each term */
        for (idx_t r = 0; r < radix; r++) {
            float2 v = load_elem(src, in_lay, in_base, n, j + r * m);
            acc += c_mul(v, root(tw, ang * step, dir));
            ang += e;
            if (ang >= span)
                ang -= span;
        }
        store_elem(dst, out_lay, batch_base(out_lay, b), n, (j / ns) * span + k + q * ns, acc * scale);
    }
}

#else

/* Multiply by dir * i (a quarter turn in the transform's direction). */
static inline float2 turn(float2 a, float dir) { return (float2)(-dir * a.y, dir * a.x); }

__kernel void fft_stage(global const float *src, long8 in_lay, global float *dst, long8 out_lay,
                      global const float2 *tw, long n_, long ns_, long radix_, long batch, float dir,
                      float scale)
{
    (void)radix_;
    idx_t n = (idx_t)n_, ns = (idx_t)ns_;
    idx_t m = n / FFT_RADIX, step = n / (ns * FFT_RADIX);
    idx_t items = (idx_t)batch * m;
    for (idx_t g = (idx_t)get_global_id(0); g < items; g += (idx_t)get_global_size(0)) {
        idx_t b = g / m;
        idx_t j = g - b * m;
        idx_t k = j % ns;
        idx_t in_base = batch_base(in_lay, b);
        float2 v[FFT_RADIX];
        for (int r = 0; r < FFT_RADIX; r++) {
            v[r] = load_elem(src, in_lay, in_base, n, j + r * m);
            if (r > 0)
                v[r] = c_mul(v[r], root(tw, (idx_t)r * k * step, dir));
        }
        idx_t out_base = batch_base(out_lay, b);
        idx_t idx = (j / ns) * ns * FFT_RADIX + k;
#if FFT_RADIX == 2 || FFT_RADIX == 4
        float2 o[FFT_RADIX];
#endif
#if FFT_RADIX == 2
        o[0] = v[0] + v[1];
        o[1] = v[0] - v[1];
#elif FFT_RADIX == 4
        float2 a = v[0] + v[2], c = v[0] - v[2];
        float2 bb = v[1] + v[3], d = turn(v[1] - v[3], dir);
        o[0] = a + bb;
        o[2] = a - bb;
        o[1] = c + d;
        o[3] = c - d;
#else
        /* small odd radices: the direct sum; the R-th roots are tw[r q n / R]. Each output is stored
         * as soon as it is summed: keeping all R of them live took radix 7 with 64-bit indices to
         * 72 VGPRs on gfx902 (3 waves per SIMD; the ISA check wants 4 for this memory-bound kernel). */
        for (int q = 0; q < FFT_RADIX; q++) {
            float2 acc = v[0];
            for (int r = 1; r < FFT_RADIX; r++)
                acc += c_mul(v[r], root(tw, (idx_t)((r * q) % FFT_RADIX) * (n / FFT_RADIX), dir));
            store_elem(dst, out_lay, out_base, n, idx + q * ns, acc * scale);
        }
#endif
#if FFT_RADIX == 2 || FFT_RADIX == 4
        for (int q = 0; q < FFT_RADIX; q++)
            store_elem(dst, out_lay, out_base, n, idx + q * ns, o[q] * scale);
#endif
    }
}

#endif
