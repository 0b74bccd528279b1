/* Every stage of a pass of batched 1-D transforms in one launch, on GPUs: a work-group takes FFT_T
 * transforms of length FFT_N: the first stage reads its butterflies' inputs from global memory, the
 * stages between pass through two local buffers and the last writes global memory, so a pass
 * reads and writes global memory once (fft_stockham.cl's stage kernels stream the whole batch through memory once per
 * stage: 4-5 times for lengths like 1000 = 4 2 5 5 5). The stage arithmetic is fft_stockham.cl's:
 * stage s (span ns, radix R) twists butterfly j's inputs x[j + r n / R] by w^(r k), k = j mod ns,
 * w = exp(dir 2 pi i / (ns R)), takes their R-point DFT (common/fft_stages.h: closed forms for 2, 4 and 8,
 * odd radices by conjugate pairs) and puts output q at (j / ns) ns R + k + q ns. Twiddles: the
 * host's table of n-th roots (common/fft_io.h's root()); radices 8 first, then 4, 2, odd primes.
 *
 * Every length of the plan is compiled into the program (the radices and the span of each stage
 * are constants, so the divisions become multiplies and the butterflies' registers are indexed by
 * constants): one program per length, built at plan time and kept by the program cache, as VkFFT
 * generates its kernels. An in-place pass is safe: a group's first stage reads all of its
 * transforms before its last stage writes any of them (barriers between; a one-stage pass writes
 * local memory and copies out after a barrier). The stages touch registers with constant indices
 * only: an earlier form whose loops were unrolled by pragmas kept them in scratch on gfx902.
 *
 * -D contract (src/ops/fft/fft_ours.c local_options): FFT_N the length, FFT_T transforms per group
 * (2 FFT_T FFT_N complex values of local memory), FFT_STAGES (1..FFT_MAX_STAGES) and radices
 * FFT_R0 .. FFT_R11 (1 past the last stage), FFT_MAXR the largest, LWG the exact group size,
 * FFT_IDX (common/fft_io.h).
 * Measured and dropped (H200, 512 MiB batched, us, 2 runs each): the group's transforms copied into
 * local memory before the first stage (85 495 -> 808, 1000 364 -> 425, 256 277 -> 290) or the last
 * stage's results copied out of it (85 495 -> 493, 1000 -> 440, 256 -> 313).
 */
#include "common/fft_io.h"
#include "common/fft_stages.h"

#define FFT_MAX_STAGES 12
/* Local index of element i: even lengths put one pad slot after every 16 complex values, so a
 * stage's strided writes (output q of butterfly j at j R + q when ns = 1: R = 8 puts a half-warp's
 * 16 values in 2 of the 16 8-byte bank pairs) spread over all of them; odd radices already stride
 * by an odd count. H100: batched 64-2048 11-17 % faster, 1536 21 %; 85 (radices 5, 17) 12 % slower
 * with it, hence even lengths only. */
#define FFT_PAD (FFT_N % 2 == 0)
#define PADI(i) (FFT_PAD ? (i) + ((i) >> 4) : (i))
#define LOCAL_SIZE (PADI(FFT_T * FFT_N) + 1)
#if !defined(FFT_N) || !defined(FFT_T) || !defined(FFT_STAGES) || !defined(FFT_MAXR) || !defined(LWG)
#error "fft_local.cl needs FFT_N, FFT_T, FFT_STAGES, FFT_MAXR and LWG"
#endif
#if FFT_STAGES < 1 || FFT_STAGES > FFT_MAX_STAGES
#error "FFT_STAGES must be 1 .. 12"
#endif

/* One stage for the group's T transforms, local buffer `in` to local buffer `out`. R and ns are
 * constants after inlining. Odd R > 2 by common/fft_stages.h's DFT_ODD, its outputs going to local
 * (or, in the last stage, global) memory as they are made. */
static inline __attribute__((always_inline)) void
local_stage(const int R, const int ns, const int first, const int last, local const float2 *in,
            local float2 *out, global const float *src, long8 in_lay, int flat, global float *dst,
            long8 out_lay, float scale, idx_t b0, global const float2 *tw, int T, float dir, int lid)
{
    const int m = FFT_N / R, step = FFT_N / (ns * R), unit = FFT_N / R, odd = (R & 1) && R > 2;
    float2 w[FFT_MAXR / 2 + 1]; /* W^e, e <= R / 2, for odd R: loaded once per stage */
    for (int e = 0; e <= R / 2; e++)
        w[e] = odd ? root(tw, (idx_t)(e * unit), dir) : (float2)(1.0f, 0.0f);
    for (int g = lid; g < T * m; g += LWG) {
        const int tb = g / m, j = g - tb * m, k = j % ns;
        float2 v[FFT_MAXR];
        /* twists w^(r k): loaded for r a power of two, the rest as products of two of those
         * (w^(r k) = w^(h k) w^((r - h) k), h r's highest bit): log2 R loads instead of R - 1,
         * which took 1024-2048 from 1.2-1.35x to 1.06-1.1x of the copy time on an H100 */
        float2 wk[FFT_MAXR];
        /* the first stage reads its inputs from global memory (adjacent items, adjacent elements:
         * coalesced), the last writes its outputs there (element k + q ns: again adjacent) */
        const idx_t gin = !first ? 0 : flat ? (idx_t)in_lay.s0 + (b0 + tb) * FFT_N : batch_base(in_lay, b0 + tb);
        const idx_t ob = last ? batch_base(out_lay, b0 + tb) : 0;
        for (int r = 0; r < R; r++) {
            if (first)
                v[r] = flat ? vload2(gin + j + r * m, src) : load_elem(src, in_lay, gin, FFT_N, j + r * m);
            else
                v[r] = in[PADI(tb * FFT_N + j + r * m)];
            if (r > 0 && ns > 1) {
                int h = 1;
                while (2 * h <= r)
                    h *= 2;
                wk[r] = h == r ? root(tw, (idx_t)(r * k * step), dir) : c_mul(wk[h], wk[r - h]);
                v[r] = c_mul(v[r], wk[r]);
            }
        }
        const int idx = tb * FFT_N + (j / ns) * ns * R + k;
#define PUT(q, val)                                                                                \
    do {                                                                                           \
        if (last)                                                                                  \
            store_elem(dst, out_lay, ob, FFT_N, idx - tb * FFT_N + (q) * ns, (val) * scale);      \
        else                                                                                       \
            out[PADI(idx + (q) * ns)] = (val);                                                     \
    } while (0)
        if (odd) {
            DFT_ODD(R, v, w, PUT);
        } else {
            dft_even(R, v, dir);
            for (int q = 0; q < R; q++)
                PUT(q, v[q]);
        }
    }
}
#undef PUT

/* Stage S reads buffer S % 2 (b for even, a for odd) and writes the other; stage 0 reads global
 * memory instead, and the last writes it (not when it is also the first: in place, an item would
 * overwrite elements another item has yet to read). */
#define FUSED_LAST (FFT_STAGES > 1)
#define STAGE(S)                                                                                   \
    if (S < FFT_STAGES) {                                                                          \
        local_stage(FFT_R##S, NS##S, S == 0, FUSED_LAST && S == FFT_STAGES - 1, (S % 2) ? bufa : bufb, \
                    (S % 2) ? bufb : bufa, src, in_lay, flat, dst, out_lay, scale, b0, tw, T, dir, lid); \
        barrier(CLK_LOCAL_MEM_FENCE);                                                              \
    }

__kernel __attribute__((reqd_work_group_size(LWG, 1, 1))) void
fft_local(global const float *src, long8 in_lay, global float *dst, long8 out_lay,
          global const float2 *tw, long batch, float dir, float scale)
{
    local float2 bufa[LOCAL_SIZE], bufb[LOCAL_SIZE];
    /* complex transforms one after another (a contiguous batch): the first stage reads them
     * without batch_base's divisions */
    const int flat = in_lay.s7 == 0 && in_lay.s1 == 1 && in_lay.s2 == FFT_N && in_lay.s5 == 1 && in_lay.s6 == 1;
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
#if !FUSED_LAST
        /* one stage: its output (buffer a) copied out, scaled */
        for (int t = lid; t < T * FFT_N; t += LWG) {
            const int tb = t / FFT_N, e = t - tb * FFT_N;
            store_elem(dst, out_lay, batch_base(out_lay, b0 + tb), FFT_N, e, bufa[PADI(t)] * scale);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
#endif
    }
}
