/* One radix stage of a Stockham (self-sorting) FFT, out of place, for a batch of 1-D transforms of
 * length n along one axis (src/ops/fft/fft_ours.c plans the stages and passes).
 *
 * Stage with span ns (the product of the radices already applied) and radix R: butterfly j in
 * [0, n/R) reads x[j + r n/R] (r < R), twists term r by w^(r k) with k = j mod ns and
 * w = exp(dir 2 pi i / (ns R)), takes the R-point DFT and writes output q to
 * (j / ns) ns R + k + q ns. After the last stage the sequence is in natural order.
 *
 * Layouts (long8, elements of the side's dtype): s0 offset, s1 stride along the axis, s2..s4 the
 * strides of batch dims 0..2, s5/s6 the sizes of batch dims 1/2 (dim 0 takes the rest), s7 mode:
 *   read:  0 complex, 1 real (imaginary 0), 2 Hermitian half (x[t] = conj(x[n - t]) for t > n/2)
 *   write: 0 complex, 1 real part only, 2 Hermitian half (only t <= n/2)
 * Twiddles: exp(i pi x) with x = 2 m / d reduced to [-1, 1] in exact integer arithmetic, then
 * sinpi/cospi (not native_sin: their error grows with the angle and reaches 1e-6). */

#ifndef FFT_RADIX
#define FFT_RADIX 0 /* 0: any radix, one work item per output; else one per butterfly */
#endif

static inline float2 c_mul(float2 a, float2 b)
{
    return (float2)(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

/* exp(dir * 2 pi i m / d) */
static inline float2 twiddle(ulong m, ulong d, float dir)
{
    long r = (long)(m % d);
    if (2 * r > (long)d)
        r -= (long)d;
    float x = 2.0f * (float)r / (float)d;
    return (float2)(cospi(x), dir * sinpi(x));
}

static inline long batch_base(long8 L, long b)
{
    long b2 = b % L.s6;
    long q = b / L.s6;
    long b1 = q % L.s5;
    long b0 = q / L.s5;
    return L.s0 + b0 * L.s2 + b1 * L.s3 + b2 * L.s4;
}

static inline float2 load_elem(global const float *src, long8 L, long base, long n, long t)
{
    if (L.s7 == 1)
        return (float2)(src[base + t * L.s1], 0.0f);
    if (L.s7 == 2 && 2 * t > n) {
        float2 v = vload2(base + (n - t) * L.s1, src);
        return (float2)(v.x, -v.y);
    }
    return vload2(base + t * L.s1, src);
}

static inline void store_elem(global float *dst, long8 L, long base, long n, long t, float2 v)
{
    if (L.s7 == 1)
        dst[base + t * L.s1] = v.x;
    else if (L.s7 == 0 || 2 * t <= n)
        vstore2(v, base + t * L.s1, dst);
}

#if FFT_RADIX == 0

/* Any radix: item (b, j, q) computes output q of butterfly j as one sum of R twisted terms;
 * term r carries w^(r k) exp(dir 2 pi i r q / R) = exp(dir 2 pi i r (k + q ns) / (ns R)). */
kernel void fft_stage(global const float *src, long8 in_lay, global float *dst, long8 out_lay,
                      long n, long ns, long radix, long batch, float dir, float scale)
{
    long m = n / radix;
    ulong items = (ulong)batch * (ulong)n;
    for (ulong g = get_global_id(0); g < items; g += get_global_size(0)) {
        long b = (long)(g / (ulong)n);
        long rest = (long)(g % (ulong)n);
        long q = rest / m, j = rest % m;
        long k = j % ns;
        long in_base = batch_base(in_lay, b);
        ulong span = (ulong)(ns * radix), e = (ulong)(k + q * ns);
        float2 acc = (float2)(0.0f, 0.0f);
        for (long r = 0; r < radix; r++) {
            float2 v = load_elem(src, in_lay, in_base, n, j + r * m);
            acc += c_mul(v, twiddle((ulong)r * e, span, dir));
        }
        store_elem(dst, out_lay, batch_base(out_lay, b), n, (j / ns) * ns * radix + k + q * ns,
                   acc * scale);
    }
}

#else

/* Multiply by dir * i (a quarter turn in the transform's direction). */
static inline float2 turn(float2 a, float dir) { return (float2)(-dir * a.y, dir * a.x); }

kernel void fft_stage(global const float *src, long8 in_lay, global float *dst, long8 out_lay,
                      long n, long ns, long radix, long batch, float dir, float scale)
{
    (void)radix;
    long m = n / FFT_RADIX;
    ulong items = (ulong)batch * (ulong)m;
    for (ulong g = get_global_id(0); g < items; g += get_global_size(0)) {
        long b = (long)(g / (ulong)m);
        long j = (long)(g % (ulong)m);
        long k = j % ns;
        long in_base = batch_base(in_lay, b);
        float2 v[FFT_RADIX];
        for (int r = 0; r < FFT_RADIX; r++) {
            v[r] = load_elem(src, in_lay, in_base, n, j + r * m);
            if (r > 0 && k > 0)
                v[r] = c_mul(v[r], twiddle((ulong)(r * k), (ulong)(ns * FFT_RADIX), dir));
        }
        float2 o[FFT_RADIX];
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
        /* small odd radices: the direct sum with constant twiddles (unrolled by the compiler) */
        for (int q = 0; q < FFT_RADIX; q++) {
            float2 acc = v[0];
            for (int r = 1; r < FFT_RADIX; r++)
                acc += c_mul(v[r], twiddle((ulong)(r * q), FFT_RADIX, dir));
            o[q] = acc;
        }
#endif
        long out_base = batch_base(out_lay, b);
        long idx = (j / ns) * ns * FFT_RADIX + k;
        for (int q = 0; q < FFT_RADIX; q++)
            store_elem(dst, out_lay, out_base, n, idx + q * ns, o[q] * scale);
    }
}

#endif
