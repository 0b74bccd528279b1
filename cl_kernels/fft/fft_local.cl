/* Every stage of a pass of batched 1-D transforms in one launch, on GPUs: a work-group loads FFT_T
 * transforms of length FFT_N from global memory in its first stage, runs the middle stages between
 * two local buffers and writes the result in its last stage, so a pass reads and writes global
 * memory once (fft_stockham.cl's stage kernels stream the whole batch through memory once per
 * stage: 4-5 times for lengths like 1000 = 4 2 5 5 5). The stage arithmetic is fft_stockham.cl's:
 * stage s (span ns, radix R) twists butterfly j's inputs x[j + r n / R] by w^(r k), k = j mod ns,
 * w = exp(dir 2 pi i / (ns R)), takes their R-point DFT (dft() below: closed forms for 2, 4 and 8,
 * odd radices by conjugate pairs) and puts output q at (j / ns) ns R + k + q ns. Twiddles: the
 * host's table of n-th roots (common/fft_io.h's root()); radices 8 first, then 4, 2, odd primes.
 *
 * Every length of the plan is compiled into the program (the radices and the span of each stage
 * are constants, so the divisions become multiplies and the butterflies' registers are indexed by
 * constants): one program per length, built at plan time and kept by the program cache, as VkFFT
 * generates its kernels. An in-place pass is safe: a group reads all of its transforms into local
 * memory before its last stage writes any of them (the host gives a one-stage length an identity
 * stage, radix 1, so that there always is a local stage between).
 *
 * -D contract (src/ops/fft/fft_ours.c local_options): FFT_N the length, FFT_T transforms per group
 * (2 FFT_T FFT_N complex values of local memory), FFT_STAGES (2..FFT_MAX_STAGES) and radices
 * FFT_R0 .. FFT_R11 (1 past the last stage), FFT_MAXR the largest, LWG the exact group size,
 * FFT_IDX (common/fft_io.h).
 */
#include "common/fft_io.h"

#define FFT_MAX_STAGES 12
#if !defined(FFT_N) || !defined(FFT_T) || !defined(FFT_STAGES) || !defined(FFT_MAXR) || !defined(LWG)
#error "fft_local.cl needs FFT_N, FFT_T, FFT_STAGES, FFT_MAXR and LWG"
#endif
#if FFT_STAGES < 2 || FFT_STAGES > FFT_MAX_STAGES
#error "FFT_STAGES must be 2 .. 12"
#endif

/* Multiply by dir * i (a quarter turn in the transform's direction). */
static inline float2 quarter(float2 a, float dir) { return (float2)(-dir * a.y, dir * a.x); }

/* The R-point DFT of v in place. w[e] = W^e, W = exp(dir 2 pi i / R) (odd R only). Closed forms for
 * 1, 2, 4 and 8 (two radix-4 halves joined by the 8th roots); odd R pairs inputs r and R - r, whose
 * roots are conjugate: with s = v_r + v_(R-r), d = v_r - v_(R-r), output q is
 * v_0 + sum s Re(W^rq) + i sum d Im(W^rq), and output R - q the same with - i (a quarter of the
 * direct sum's multiplications). */
static inline __attribute__((always_inline)) void dft(const int R, float2 *v, const float2 *w, float dir)
{
    if (R == 2) {
        const float2 a = v[0];
        v[0] = a + v[1];
        v[1] = a - v[1];
    } else if (R == 4 || R == 8) {
        float2 o[8];
#pragma unroll
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
#pragma unroll
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
    } else if (R > 2) { /* odd */
        float2 sum[FFT_MAXR / 2 + 1], dif[FFT_MAXR / 2 + 1];
        float2 x0 = v[0];
#pragma unroll
        for (int r = 1; r <= R / 2; r++) {
            sum[r] = v[r] + v[R - r];
            dif[r] = v[r] - v[R - r];
            x0 += sum[r];
        }
#pragma unroll
        for (int q = 1; q <= R / 2; q++) {
            float2 a = v[0], b = (float2)(0.0f, 0.0f);
#pragma unroll
            for (int r = 1; r <= R / 2; r++) {
                const float2 wr = w[(r * q) % R];
                a += sum[r] * wr.x;
                b += dif[r] * wr.y;
            }
            const float2 ib = (float2)(-b.y, b.x); /* i b (w already carries dir) */
            v[q] = a + ib;
            v[R - q] = a - ib;
        }
        v[0] = x0;
    }
}

/* One stage for the group's T transforms: from global memory (first) or local buffer `in`, to
 * global memory (final) or local buffer `out`. R, ns, first and final are constants after
 * inlining. */
static inline __attribute__((always_inline)) void
local_stage(const int R, const int ns, const int first, const int final, local const float2 *in,
            local float2 *out, global const float *src, long8 in_lay, global float *dst, long8 out_lay,
            global const float2 *tw, idx_t b0, int T, float dir, float scale, int lid)
{
    const int m = FFT_N / R, step = FFT_N / (ns * R), unit = FFT_N / R;
    float2 w[FFT_MAXR]; /* the R-th roots, for odd R: loaded once per stage */
#pragma unroll
    for (int e = 0; e < R; e++)
        w[e] = (R & 1) && R > 2 ? root(tw, (idx_t)(e * unit), dir) : (float2)(1.0f, 0.0f);
    for (int g = lid; g < T * m; g += LWG) {
        const int tb = g / m, j = g - tb * m, k = j % ns;
        const idx_t gin = first ? batch_base(in_lay, b0 + tb) : 0;
        float2 v[FFT_MAXR];
#pragma unroll
        for (int r = 0; r < R; r++) {
            v[r] = first ? load_elem(src, in_lay, gin, FFT_N, j + r * m) : in[tb * FFT_N + j + r * m];
            if (r > 0 && ns > 1)
                v[r] = c_mul(v[r], root(tw, (idx_t)(r * k * step), dir));
        }
        dft(R, v, w, dir);
        const int idx = (j / ns) * ns * R + k;
        const idx_t gout = final ? batch_base(out_lay, b0 + tb) : 0;
#pragma unroll
        for (int q = 0; q < R; q++) {
            if (final)
                store_elem(dst, out_lay, gout, FFT_N, idx + q * ns, v[q] * scale);
            else
                out[tb * FFT_N + idx + q * ns] = v[q];
        }
    }
}

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

/* stage S reads buffer (S - 1) % 2 (a for even, b for odd) and writes buffer S % 2 */
#define STAGE(S)                                                                                   \
    if (S < FFT_STAGES) {                                                                          \
        local_stage(FFT_R##S, NS##S, S == 0, S == FFT_STAGES - 1, (S % 2) ? bufa : bufb,           \
                    (S % 2) ? bufb : bufa, src, in_lay, dst, out_lay, tw, b0, T, dir, scale, lid);  \
        barrier(CLK_LOCAL_MEM_FENCE);                                                              \
    }

__kernel __attribute__((reqd_work_group_size(LWG, 1, 1))) void
fft_local(global const float *src, long8 in_lay, global float *dst, long8 out_lay,
          global const float2 *tw, long batch, float dir, float scale)
{
    local float2 bufa[FFT_T * FFT_N], bufb[FFT_T * FFT_N];
    const int lid = (int)get_local_id(0);
    for (idx_t b0 = (idx_t)get_group_id(0) * FFT_T; b0 < (idx_t)batch;
         b0 += (idx_t)get_num_groups(0) * FFT_T) {
        const int T = (int)min((idx_t)FFT_T, (idx_t)batch - b0);
        STAGE(0)
        STAGE(1)
        STAGE(2)
        STAGE(3)
        STAGE(4)
        STAGE(5)
        STAGE(6)
        STAGE(7)
        STAGE(8)
        STAGE(9)
        STAGE(10)
        STAGE(11)
    }
}
