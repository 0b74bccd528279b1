/* Element access shared by the FFT kernels (fft_stockham.cl, fft_local.cl, fft_rows.cl).
 *
 * Layouts (long8, elements of the side's dtype): s0 offset, s1 stride along the axis, s2..s4 the
 * strides of batch dims 0..2, s5/s6 the sizes of batch dims 1/2 (dim 0 takes the rest), s7 mode:
 *   read:  0 complex, 1 real (imaginary 0), 2 Hermitian half (x[t] = conj(x[n - t]) for t > n/2)
 *   write: 0 complex, 1 real part only, 2 Hermitian half (only t <= n/2)
 * -D contract: FFT_IDX, the index type (int when every index of a launch fits, else long).
 */
#ifndef CLT_COMMON_FFT_IO_H
#define CLT_COMMON_FFT_IO_H

#ifndef FFT_IDX
#define FFT_IDX long
#endif
typedef FFT_IDX idx_t;
#define FFT_CAT2(a, b) a##b
#define FFT_CAT(a, b) FFT_CAT2(a, b)
typedef FFT_CAT(FFT_IDX, 4) idx4_t; /* four indices (fft_rows's four-transform lanes) */

/* 0, in a form the compiler cannot fold: the mode field s7 of a layout (0..2) shifted out, masked
 * with a loop's transform index t. Added to an item index inside a loop over transforms, it keeps
 * the addresses made from it in the loop (kernels whose groups loop over transforms, see
 * fft_wide.cl, otherwise hoist every stage's addresses out of the loop into registers). */
#define LOOP_ZERO(t, lay) ((int)((t) & (idx_t)((lay).s7 >> 8)))

static inline float2 c_mul(float2 a, float2 b)
{
    return (float2)(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

/* exp(dir 2 pi i m / n) for 0 <= m < n */
static inline float2 root(global const float2 *tw, idx_t m, float dir)
{
    float2 v = tw[m];
    return (float2)(v.x, dir * v.y);
}

static inline idx_t batch_base(long8 L, idx_t b)
{
    if (L.s5 == 1 && L.s6 == 1) /* one batch dim: no division */
        return (idx_t)L.s0 + b * (idx_t)L.s2;
    idx_t b2 = b % (idx_t)L.s6;
    idx_t q = b / (idx_t)L.s6;
    idx_t b1 = q % (idx_t)L.s5;
    idx_t b0 = q / (idx_t)L.s5;
    return (idx_t)L.s0 + b0 * (idx_t)L.s2 + b1 * (idx_t)L.s3 + b2 * (idx_t)L.s4;
}

static inline float2 load_elem(global const float *src, long8 L, idx_t base, idx_t n, idx_t t)
{
    if (L.s7 == 1)
        return (float2)(src[base + t * (idx_t)L.s1], 0.0f);
    if (L.s7 == 2 && 2 * t > n) {
        float2 v = vload2(base + (n - t) * (idx_t)L.s1, src);
        return (float2)(v.x, -v.y);
    }
    return vload2(base + t * (idx_t)L.s1, src);
}

static inline void store_elem(global float *dst, long8 L, idx_t base, idx_t n, idx_t t, float2 v)
{
    if (L.s7 == 1)
        dst[base + t * (idx_t)L.s1] = v.x;
    else if (L.s7 == 0 || 2 * t <= n)
        vstore2(v, base + t * (idx_t)L.s1, dst);
}

#endif
