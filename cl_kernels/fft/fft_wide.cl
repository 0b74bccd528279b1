/* One pass of batched 1-D transforms too long for fft_local.cl's two local buffers (4096, 8192):
 * a work-group takes one transform and its items keep its values in registers between stages,
 * each item its butterflies' values in one array x[FFT_E]; a stage exchanges them through one
 * local buffer. With FFT_SPLIT the buffer holds one float per value and the exchange runs in two
 * rounds, real parts then imaginary parts, which fits 8192 complex values (64 KiB) through 34 KiB
 * of local memory. One array serves both sides of the exchange: round h writes component h of
 * every output before the barrier and reads component h of every input after it, so a read never
 * overwrites a component still to be written. The first stage reads global memory and the last
 * writes it, as in fft_local.cl, whose stage arithmetic, twists and padding this is.
 *
 * Registers are indexed by constants only (the loops' trip counts are constants once inlined):
 * item lid's butterflies at stage s are g = lid + b LWG, b < BPI(R_s), their values at
 * x[b R_s .. b R_s + R_s - 1].
 *
 * A group loops over transforms t, t + groups, ..; the item index the stages see depends on t
 * (lid plus an opaque zero, LOOP_ZERO) so that the compiler keeps each stage's local and global
 * addresses in the loop instead of hoisting all of them out of it: hoisted, 4096 took 106
 * registers an item (one 512-item group per SM on an H100), in the loop 32 (batched 4096:
 * 663 -> 414 us with the compile-time flat layout below, 370 with radix-16 stages).
 *
 * -D contract (src/ops/fft/fft_ours.c wide_shape): FFT_N, FFT_STAGES (2..12), radices
 * FFT_R0 .. FFT_R11 (2, 4, 8, 16 or odd), FFT_MAXR the largest, LWG the exact group size, FFT_E
 * the values an item holds (the largest BPI(R) R over the stages), FFT_SPLIT (0 or 1), FFT_FLAT
 * (1: both sides are contiguous complex transforms, in_lay / out_lay serve their offsets only),
 * FFT_IDX; FFT_T must be 1.
 */
#include "common/fft_io.h"
#include "common/fft_stages.h"

#if !defined(FFT_N) || !defined(FFT_T) || !defined(FFT_STAGES) || !defined(FFT_MAXR) ||          \
    !defined(LWG) || !defined(FFT_E) || !defined(FFT_SPLIT)
#error "fft_wide.cl needs FFT_N, FFT_T, FFT_STAGES, FFT_MAXR, LWG, FFT_E and FFT_SPLIT"
#endif
#ifndef FFT_FLAT
#define FFT_FLAT 0
#endif
#if FFT_STAGES < 2 || FFT_STAGES > 12 || FFT_T != 1
#error "fft_wide.cl: FFT_STAGES must be 2 .. 12 and FFT_T 1"
#endif

/* one pad slot after every 16 slots, as in fft_local.cl (its measurements) */
#define PADI(i) ((i) + ((i) >> 4))
#define BPI(R) ((FFT_N / (R) + LWG - 1) / LWG) /* butterflies per item at radix R */
#if FFT_SPLIT
#define ROUNDS 2
typedef float slot_t;
#define PUT(v, h) ((h) ? (v).y : (v).x)
#define TAKE(to, h, from)                                                                          \
    do {                                                                                           \
        if (h)                                                                                     \
            (to).y = (from);                                                                       \
        else                                                                                       \
            (to).x = (from);                                                                       \
    } while (0)
#else
#define ROUNDS 1
typedef float2 slot_t;
#define PUT(v, h) (v)
#define TAKE(to, h, from) ((to) = (from))
#endif

/* Stage (R, ns): gather its inputs (global memory for the first stage, else the previous stage's
 * outputs, radix Rp and span nsp, through buf), twist, transform in x, and leave the outputs in x
 * or, for the last stage, in global memory. */
static inline __attribute__((always_inline)) void
wide_stage(const int R, const int ns, const int first, const int last, const int Rp, const int nsp,
           float2 *x, local slot_t *buf, global const float *src, long8 in_lay, int flat,
           global float *dst, long8 out_lay, float scale, idx_t t, global const float2 *tw,
           float dir, int lid)
{
    const int m = FFT_N / R, step = FFT_N / (ns * R), unit = FFT_N / R, odd = (R & 1) && R > 2;
    if (first) {
        const idx_t gin = FFT_FLAT || flat ? (idx_t)in_lay.s0 + t * FFT_N : batch_base(in_lay, t);
        for (int b = 0; b < BPI(R); b++) {
            const int j = lid + b * LWG;
            if (j < m)
                for (int r = 0; r < R; r++)
                    x[b * R + r] = FFT_FLAT || flat ? vload2(gin + j + r * m, src)
                                        : load_elem(src, in_lay, gin, FFT_N, j + r * m);
        }
    } else {
        const int mp = FFT_N / Rp;
        for (int h = 0; h < ROUNDS; h++) {
            /* the buffer's last readers (a round, a stage, or the previous transform) are done */
            barrier(CLK_LOCAL_MEM_FENCE);
            for (int b = 0; b < BPI(Rp); b++) {
                const int j = lid + b * LWG;
                if (j < mp) {
                    const int base = (j / nsp) * nsp * Rp + j % nsp;
                    for (int q = 0; q < Rp; q++)
                        buf[PADI(base + q * nsp)] = PUT(x[b * Rp + q], h);
                }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            for (int b = 0; b < BPI(R); b++) {
                const int j = lid + b * LWG;
                if (j < m)
                    for (int r = 0; r < R; r++)
                        TAKE(x[b * R + r], h, buf[PADI(j + r * m)]);
            }
        }
    }
    float2 w[FFT_MAXR / 2 + 1]; /* W^e, e <= R / 2, for odd R */
    for (int e = 0; e <= R / 2; e++)
        w[e] = odd ? root(tw, (idx_t)(e * unit), dir) : (float2)(1.0f, 0.0f);
    for (int b = 0; b < BPI(R); b++) {
        const int j = lid + b * LWG;
        if (j < m) {
            const int k = j % ns;
            float2 *v = x + b * R;
            /* twists w^(r k), as in fft_local.cl: powers of two loaded, the rest products of two */
            float2 wk[FFT_MAXR];
            for (int r = 1; r < R && ns > 1; r++) {
                int hb = 1;
                while (2 * hb <= r)
                    hb *= 2;
                wk[r] = hb == r ? root(tw, (idx_t)(r * k * step), dir) : c_mul(wk[hb], wk[r - hb]);
                v[r] = c_mul(v[r], wk[r]);
            }
            if (odd) {
                float2 y[FFT_MAXR];
#define TO_Y(q, val) (y[q] = (val))
                DFT_ODD(R, v, w, TO_Y);
#undef TO_Y
                for (int q = 0; q < R; q++)
                    v[q] = y[q];
            } else {
                dft_even(R, v, dir);
            }
            if (last) { /* output q at k + q ns (j < ns here): adjacent items, adjacent elements */
                const idx_t ob = FFT_FLAT ? (idx_t)out_lay.s0 + t * FFT_N : batch_base(out_lay, t);
                for (int q = 0; q < R; q++) {
                    if (FFT_FLAT)
                        vstore2(v[q] * scale, ob + k + q * ns, dst);
                    else
                        store_elem(dst, out_lay, ob, FFT_N, k + q * ns, v[q] * scale);
                }
            }
        }
    }
}

#define WIDE(S, P)                                                                                 \
    if (S < FFT_STAGES)                                                                            \
        wide_stage(FFT_R##S, NS##S, S == 0, S == FFT_STAGES - 1, FFT_R##P, NS##P, x, buf, src,     \
                   in_lay, flat, dst, out_lay, scale, t, tw, dir, lidt);

__kernel __attribute__((reqd_work_group_size(LWG, 1, 1))) void
fft_wide(global const float *src, long8 in_lay, global float *dst, long8 out_lay,
         global const float2 *tw, long batch, float dir, float scale)
{
    local slot_t buf[PADI(FFT_N) + 1];
    float2 x[FFT_E];
    const int flat = in_lay.s7 == 0 && in_lay.s1 == 1 && in_lay.s2 == FFT_N && in_lay.s5 == 1 && in_lay.s6 == 1;
    const int lid = (int)get_local_id(0);
    /* in place is safe: the first stage reads all of transform t before a barrier that precedes
     * the last stage's writes */
    for (idx_t t = (idx_t)get_group_id(0); t < (idx_t)batch; t += (idx_t)get_num_groups(0)) {
        const int lidt = lid + LOOP_ZERO(t, in_lay);
        WIDE(0, 0)
        WIDE(1, 0)
        WIDE(2, 1)
        WIDE(3, 2)
        WIDE(4, 3)
        WIDE(5, 4)
        WIDE(6, 5)
        WIDE(7, 6)
        WIDE(8, 7)
        WIDE(9, 8)
        WIDE(10, 9)
        WIDE(11, 10)
    }
}
