/* The stage arithmetic shared by fft_local.cl and fft_wide.cl: the even butterflies, the odd one
 * by conjugate pairs (each output handed on as it is made), and the spans of a plan's stages from
 * its -D radices FFT_R0 .. FFT_R11 (1 past the last stage).
 * Included after common/fft_io.h. */
#ifndef CLT_COMMON_FFT_STAGES_H
#define CLT_COMMON_FFT_STAGES_H

/* Multiply by dir * i (a quarter turn in the transform's direction). */
static inline float2 quarter(float2 a, float dir) { return (float2)(-dir * a.y, dir * a.x); }

/* W16^e = exp(dir 2 pi i e / 16) for a constant 0 <= e <= 9 (folded once inlined) */
static inline __attribute__((always_inline)) float2 root16(const int e, float dir)
{
    const float c1 = 0.92387953251128676f, c2 = 0.70710678118654752f, c3 = 0.38268343236508977f;
    const float re = e == 0 ? 1.0f : e == 1 ? c1 : e == 2 ? c2 : e == 3 ? c3 : e == 4 ? 0.0f
                   : e == 6 ? -c2 : -c1; /* e = 6, 9 */
    const float im = e == 0 ? 0.0f : e == 1 ? c3 : e == 2 ? c2 : e == 3 ? c1 : e == 4 ? 1.0f
                   : e == 6 ? c2 : -c3;
    return (float2)(re, dir * im);
}

/* W32^k = exp(dir 2 pi i k / 32) for a constant 0 <= k < 16 (folded once inlined) */
static inline __attribute__((always_inline)) float2 root32(const int k, float dir)
{
    const float c[16] = {1.0f, 0.98078528040323044f, 0.92387953251128676f, 0.83146961230254524f,
                         0.70710678118654752f, 0.55557023301960218f, 0.38268343236508977f,
                         0.19509032201612826f, 0.0f, -0.19509032201612826f, -0.38268343236508977f,
                         -0.55557023301960218f, -0.70710678118654752f, -0.83146961230254524f,
                         -0.92387953251128676f, -0.98078528040323044f};
    return (float2)(c[k], dir * c[k < 8 ? 8 - k : k - 8]); /* sin(x) = cos(x - pi / 2) */
}

/* The 16-point DFT of v in place: 4 x 4, DFT-4s of the inputs h, h + 4, .., twists W16^(h k),
 * DFT-4s. */
static inline __attribute__((always_inline)) void dft16(float2 *v, float dir)
{
    float2 o[16];
    for (int h = 0; h < 4; h++) {
        const float2 a = v[h] + v[h + 8], cc = v[h] - v[h + 8];
        const float2 b = v[h + 4] + v[h + 12], d = quarter(v[h + 4] - v[h + 12], dir);
        o[4 * h] = a + b;
        o[4 * h + 1] = cc + d;
        o[4 * h + 2] = a - b;
        o[4 * h + 3] = cc - d;
        for (int k = 1; k < 4; k++) /* h = 0: W^0 = 1 */
            o[4 * h + k] = c_mul(o[4 * h + k], root16(h * k, dir));
    }
    for (int k = 0; k < 4; k++) {
        const float2 a = o[k] + o[8 + k], cc = o[k] - o[8 + k];
        const float2 b = o[4 + k] + o[12 + k], d = quarter(o[4 + k] - o[12 + k], dir);
        v[k] = a + b;
        v[k + 4] = cc + d;
        v[k + 8] = a - b;
        v[k + 12] = cc - d;
    }
}

/* The R-point DFT of v in place for R = 2, 4, 8 (two radix-4 halves joined by the 8th roots) and
 * 16 (fft_wide: four DFT-4s, twists, four DFT-4s) and 32 (two 16s).
 * No unroll pragmas here or in local_stage: R is a constant only once they are inlined, and a
 * pragma'd loop optimised before that (runtime-unrolled, then marked done) kept v in scratch
 * memory on gfx902; after inlining the loops have constant trip counts and unroll by themselves. */
static inline __attribute__((always_inline)) void dft_even(const int R, float2 *v, float dir)
{
    if (R == 2) {
        const float2 a = v[0];
        v[0] = a + v[1];
        v[1] = a - v[1];
    } else if (R == 4 || R == 8) {
        float2 o[8];
        for (int h = 0; h < R / 4; h++) { /* DFT-4 of inputs h, h + R/4 .. (R = 8: the even, odd) */
            const int s = R / 4;
            const float2 a = v[h] + v[h + 2 * s], c = v[h] - v[h + 2 * s];
            const float2 b = v[h + s] + v[h + 3 * s], d = quarter(v[h + s] - v[h + 3 * s], dir);
            o[4 * h] = a + b;
            o[4 * h + 1] = c + d;
            o[4 * h + 2] = a - b;
            o[4 * h + 3] = c - d;
        }
        if (R == 4) {
            for (int q = 0; q < 4; q++)
                v[q] = o[q];
        } else {
            const float h = 0.70710678118654752f; /* the 8th roots: (1 + dir i) / sqrt 2, ... */
            const float2 t0 = o[4], t1 = h * (float2)(o[5].x - dir * o[5].y, o[5].y + dir * o[5].x);
            const float2 t2 = quarter(o[6], dir);
            const float2 t3 = h * (float2)(-o[7].x - dir * o[7].y, -o[7].y + dir * o[7].x);
            v[0] = o[0] + t0;
            v[4] = o[0] - t0;
            v[1] = o[1] + t1;
            v[5] = o[1] - t1;
            v[2] = o[2] + t2;
            v[6] = o[2] - t2;
            v[3] = o[3] + t3;
            v[7] = o[3] - t3;
        }
    } else if (R == 16) {
        dft16(v, dir);
    } else if (R == 32) { /* 2 x 16: DFT-16s of the even and odd inputs, joined by W32^k */
        float2 e[16], o[16];
        for (int r = 0; r < 16; r++) {
            e[r] = v[2 * r];
            o[r] = v[2 * r + 1];
        }
        dft16(e, dir);
        dft16(o, dir);
        for (int k = 0; k < 16; k++) {
            const float2 t = k ? c_mul(o[k], root32(k, dir)) : o[k];
            v[k] = e[k] + t;
            v[k + 16] = e[k] - t;
        }
    }
}

/* The R-point DFT of v for odd R > 2 (v is changed), each output q handed to EMIT(q, value) as it
 * is made: inputs r and R - r have conjugate roots, so with s = v_r + v_(R-r) and d = v_r - v_(R-r)
 * (kept in v's slots r and R - r), output q is v_0 + sum s Re(W^rq) + i sum d Im(W^rq) and output
 * R - q the same with - i: a quarter of the direct sum's multiplications. w: W^e for e <= R / 2,
 * with the transform's direction (W^(R - e) is their conjugate). A macro, not a function with an
 * output array, so that fft_local.cl can write each output to local memory as it is made: through
 * an array its 85 = 5 x 17 took 97 VGPRs on gfx902 instead of 88. */
#define DFT_ODD(R, v, w, EMIT)                                                                     \
    do {                                                                                           \
        float2 x0_ = (v)[0];                                                                       \
        for (int r_ = 1; r_ <= (R) / 2; r_++) {                                                    \
            const float2 a_ = (v)[r_], b_ = (v)[(R) - r_];                                         \
            (v)[r_] = a_ + b_;                                                                     \
            (v)[(R) - r_] = a_ - b_;                                                               \
            x0_ += (v)[r_];                                                                        \
        }                                                                                          \
        EMIT(0, x0_);                                                                              \
        for (int q_ = 1; q_ <= (R) / 2; q_++) {                                                    \
            float2 a_ = (v)[0], b_ = (float2)(0.0f, 0.0f);                                         \
            for (int r_ = 1; r_ <= (R) / 2; r_++) {                                                \
                const int e_ = (r_ * q_) % (R);                                                    \
                const float2 wr_ = e_ <= (R) / 2 ? (w)[e_] : (float2)((w)[(R) - e_].x, -(w)[(R) - e_].y); \
                a_ += (v)[r_] * wr_.x;                                                             \
                b_ += (v)[(R) - r_] * wr_.y;                                                       \
            }                                                                                      \
            const float2 ib_ = (float2)(-b_.y, b_.x); /* i b (w carries dir) */                    \
            EMIT(q_, a_ + ib_);                                                                    \
            EMIT((R) - q_, a_ - ib_);                                                              \
        }                                                                                          \
    } while (0)

#ifndef FFT_R1
#define FFT_R1 1
#endif
#ifndef FFT_R2
#define FFT_R2 1
#endif
#ifndef FFT_R3
#define FFT_R3 1
#endif
#ifndef FFT_R4
#define FFT_R4 1
#endif
#ifndef FFT_R5
#define FFT_R5 1
#endif
#ifndef FFT_R6
#define FFT_R6 1
#endif
#ifndef FFT_R7
#define FFT_R7 1
#endif
#ifndef FFT_R8
#define FFT_R8 1
#endif
#ifndef FFT_R9
#define FFT_R9 1
#endif
#ifndef FFT_R10
#define FFT_R10 1
#endif
#ifndef FFT_R11
#define FFT_R11 1
#endif

/* span of stage S: the product of the radices before it */
#define NS0 1
#define NS1 (NS0 * FFT_R0)
#define NS2 (NS1 * FFT_R1)
#define NS3 (NS2 * FFT_R2)
#define NS4 (NS3 * FFT_R3)
#define NS5 (NS4 * FFT_R4)
#define NS6 (NS5 * FFT_R5)
#define NS7 (NS6 * FFT_R6)
#define NS8 (NS7 * FFT_R7)
#define NS9 (NS8 * FFT_R8)
#define NS10 (NS9 * FFT_R9)
#define NS11 (NS10 * FFT_R10)

#endif
