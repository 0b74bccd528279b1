/* Conv2D forward, GPU style: implicit GEMM (no im2col buffer), NCHW f32.
 *
 * Per group g the convolution is a GEMM: C (Co_g x P) = A (Co_g x K) * B (K x P), where
 *   A = the group's weights w[g*Co_g + m][k], k = (ci, ky, kx) flattened (K = Ci_g*Kh*Kw),
 *   B = the input gathered on the fly: B[k][p] = x[n][g*Ci_g + ci][oy*sh - pt + ky*dh][ox*sw - pl + kx*dw]
 *       (zero outside the image), p = (n, oy, ox) flattened over the whole batch (P = N*Ho*Wo),
 *   C[m][p] goes to out[n][g*Co_g + m][oy][ox] after bias[m] and the activation.
 * A work-group of MDIMC x NDIMC items computes an MWG x NWG tile of C, walking K in slices of KWG:
 * each slice of A and B is staged k-major in local memory (As[k][m], Bs[k][p]), double-buffered
 * (the next slice is fetched into registers before the current one is multiplied: one barrier per
 * slice). Each item owns a (MWG/MDIMC) x (NWG/NDIMC) register tile in float4 chunks 4*MDIMC
 * (4*NDIMC) apart, so local reads are float4 and conflict-free. The B gather keeps each item on ONE
 * column p for the whole kernel: (n, oy, ox) and the image base pointer are decoded once.
 * K order:
 *   CHMAJOR 0: k flattened as (ci, ky, kx); each gathered element decodes its k (two divisions).
 *   CHMAJOR 1: K walked as (ky, kx) outer, KWG channels inner (needs Ci_g % KWG == 0, host
 *              checks): one window position per slice, so the gather is one add per element and
 *              the bounds test is once per slice. A is then read with stride Kh*Kw (cached).
 * Out-of-range rows, columns and k load zeros and are never stored: any shape works.
 * Groups: grid dimension 2.
 *
 * Arguments: x, w, bias (any buffer when flags bit 0 is clear), out,
 *   offs = (x, w, bias, out) element offsets,
 *   ga = (Ci, H, W, Co, Ho, Wo, Kh, Kw), gb = (sh, sw, pt, pl, dh, dw, Ci_g, Co_g),
 *   gc = (P, flags, K, unused), act_alpha.
 * flags: 1 = bias, 2 = out is float4-aligned along p (Ho*Wo and the out offset multiples of 4),
 *   bits 8.. = the activation (a clt_unary_op, common/conv_act.h).
 * Grid: (ceil(P / NWG) * WG, ceil(Co_g / MWG), groups), local (WG, 1, 1).
 * Indices are int inside one image / weight tensor (host checks); image bases are 64-bit.
 *
 * -D contract: MWG, NWG, KWG, MDIMC, NDIMC, CHMAJOR (below; the host reserves
 * 2*KWG*(MWG+4 + NWG) floats of local memory, the padded A rows included). The activation is an
 * argument (flags >> 8, common/conv_act.h), not a -D: one program for all seven.
 */
#include "common/conv_act.h"

#ifndef MWG
#define MWG 64 /* tile rows (output channels) */
#endif
#ifndef NWG
#define NWG 64 /* tile columns (output pixels) */
#endif
#ifndef KWG
#define KWG 16 /* k slice staged per step */
#endif
#ifndef MDIMC
#define MDIMC 16 /* items along m */
#endif
#ifndef NDIMC
#define NDIMC 16 /* items along n */
#endif
#ifndef CHMAJOR
#define CHMAJOR 0
#endif

#define WG (MDIMC * NDIMC)
#define WPTM (MWG / MDIMC)
#define WPTN (NWG / NDIMC)
#define A_LPT (MWG * KWG / WG)
#define B_LPT (NWG * KWG / WG)
#define B_KSTEP (WG / NWG) /* k rows one pass of the group covers in the B gather */

#if MWG % (MDIMC * 4) || NWG % (NDIMC * 4)
#error "MWG (NWG) must be a multiple of 4 * MDIMC (4 * NDIMC)"
#endif
#if (MWG * KWG) % WG || WG % NWG || KWG % B_KSTEP
#error "the group must load whole slices: WG divides MWG*KWG, NWG divides WG, WG/NWG divides KWG"
#endif

/* Which (row r, k kk) of the A slice load c (0 <= c < MWG*KWG) fetches, and As's row stride:
 * runs of A_RUN consecutive items read A_RUN consecutive k of one weight row (contiguous in w when
 * CHMAJOR is 0), the next run the next row: a warp reads 32/A_RUN rows of A_RUN floats (4 sectors)
 * instead of 32 rows of one float (32 sectors). The transposed store As[kk][r] then puts a warp at
 * banks 4*kq + r with rows padded to MWG + 4: conflict-free, and the rows stay float4-aligned for
 * the inner loop. H200, vs consecutive items along m: n8c64h56o64k3s1 126.5 -> 92.2 us,
 * n32c128h28o128k3s1 473.7 -> 386.6 us, n1c16h64o32k3s1 13.9 -> 11.3 us. */
#define A_RUN 8
#if KWG % A_RUN
#error "KWG must be a multiple of 8 (A_RUN)"
#endif
#define A_ROW(c) (((c) / A_RUN) % MWG)
#define A_KK(c) (((c) / (A_RUN * MWG)) * A_RUN + (c) % A_RUN)
#define AST (MWG + 4)


#define CONV_ARGS                                                                                  \
    __global const float *x, __global const float *w, __global const float *bias,                 \
        __global float *out, ulong4 offs, int8 ga, int8 gb, int4 gc, float act_alpha

/* What one item needs to gather its share of a K slice. */
typedef struct conv_gather {
    __global const float *xb; /* this column's image, group's first channel */
    __global const float *wg; /* this group's weights */
    int iy0, ix0, pvalid;     /* window origin of the column; column inside P */
    int H, W, HW, Kw, KHW, dh, dw, K, Co_g, m0, lid, bk0;
    int cb;                   /* CHMAJOR: channel blocks per window position */
} conv_gather;

/* Slice s of A (rows m0.., weights) and B (this item's column, k rows bk0 + l * B_KSTEP) into
 * registers. */
static inline void conv_fetch(const conv_gather *q, int s, float *ra, float *rb)
{
#if CHMAJOR
    const int rk = s / q->cb, ci0 = (s - rk * q->cb) * KWG;
    const int ky = rk / q->Kw, kx = rk - ky * q->Kw;
    const int iy = q->iy0 + ky * q->dh, ix = q->ix0 + kx * q->dw;
    const int inb = q->pvalid && iy >= 0 && iy < q->H && ix >= 0 && ix < q->W;
    __global const float *xs = q->xb + ci0 * q->HW + (inb ? iy * q->W + ix : 0);
#pragma unroll
    for (int l = 0; l < B_LPT; l++)
        rb[l] = inb ? xs[(q->bk0 + l * B_KSTEP) * q->HW] : 0.0f;
#pragma unroll
    for (int l = 0; l < A_LPT; l++) {
        const int c = q->lid + l * WG, r = A_ROW(c), kk = A_KK(c);
        ra[l] = q->m0 + r < q->Co_g ? q->wg[(q->m0 + r) * q->K + (ci0 + kk) * q->KHW + rk] : 0.0f;
    }
#else
    const int k0 = s * KWG;
#pragma unroll
    for (int l = 0; l < B_LPT; l++) {
        const int k = k0 + q->bk0 + l * B_KSTEP;
        const int ci = k / q->KHW, rr = k - ci * q->KHW, ky = rr / q->Kw, kx = rr - ky * q->Kw;
        const int iy = q->iy0 + ky * q->dh, ix = q->ix0 + kx * q->dw;
        const int ok = q->pvalid && k < q->K && iy >= 0 && iy < q->H && ix >= 0 && ix < q->W;
        rb[l] = ok ? q->xb[ci * q->HW + iy * q->W + ix] : 0.0f;
    }
#pragma unroll
    for (int l = 0; l < A_LPT; l++) {
        const int c = q->lid + l * WG, r = A_ROW(c), k = k0 + A_KK(c);
        ra[l] = q->m0 + r < q->Co_g && k < q->K ? q->wg[(q->m0 + r) * q->K + k] : 0.0f;
    }
#endif
}

/* Registers into the k-major local slices: A as As[kk][r] (row stride AST), B as Bs[k][column]. */
static inline void conv_stash(__local float *an, __local float *bn, int lid, int bk0, int bcol,
                       const float *ra, const float *rb)
{
#pragma unroll
    for (int l = 0; l < A_LPT; l++) {
        const int c = lid + l * WG;
        an[A_KK(c) * AST + A_ROW(c)] = ra[l];
    }
#pragma unroll
    for (int l = 0; l < B_LPT; l++)
        bn[(bk0 + l * B_KSTEP) * NWG + bcol] = rb[l];
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void conv2d_implicit(CONV_ARGS)
{
    __local float As[2 * KWG * AST] __attribute__((aligned(16)));
    __local float Bs[2 * KWG * NWG] __attribute__((aligned(16)));
    const int Ci = ga.s0, H = ga.s1, W = ga.s2, Co = ga.s3, Ho = ga.s4, Wo = ga.s5, Kw = ga.s7;
    const int sh = gb.s0, sw = gb.s1, pt = gb.s2, pl = gb.s3, dh = gb.s4, dw = gb.s5;
    const int Ci_g = gb.s6, Co_g = gb.s7, P = gc.x, FLAGS = gc.y, K = gc.z, ACT_OP = FLAGS >> 8;
    const int KHW = ga.s6 * Kw, HW = H * W, HoWo = Ho * Wo;
    const int g = get_group_id(2);
    const int lid = get_local_id(0), tx = lid % NDIMC, ty = lid / NDIMC;
    const int m0 = get_group_id(1) * MWG, n0 = get_group_id(0) * NWG;

    __global const float *wg = w + offs.y + (size_t)g * Co_g * K;

    /* This item's gather column, decoded once. */
    const int bcol = lid % NWG, bk0 = lid / NWG;
    const int p = n0 + bcol, pvalid = p < P;
    const int pc = pvalid ? p : 0;
    const int img = pc / HoWo, pix = pc - img * HoWo;
    const int oy = pix / Wo, ox = pix - oy * Wo;
    const int iy0 = oy * sh - pt, ix0 = ox * sw - pl;
    __global const float *xb = x + offs.x + ((ulong)img * Ci + (ulong)g * Ci_g) * HW;

    conv_gather gm = {xb, wg, iy0, ix0, pvalid, H, W, HW, Kw, KHW, dh, dw, K, Co_g, m0, lid, bk0,
                      CHMAJOR ? Ci_g / KWG : 1};
#if CHMAJOR
    const int steps = KHW * gm.cb;
#else
    const int steps = (K + KWG - 1) / KWG;
#endif

    float ra[A_LPT], rb[B_LPT];
    float acc[WPTM][WPTN];
#pragma unroll
    for (int i = 0; i < WPTM; i++)
#pragma unroll
        for (int j = 0; j < WPTN; j++)
            acc[i][j] = 0.0f;

    if (steps > 0) {
        conv_fetch(&gm, 0, ra, rb);
        conv_stash(As, Bs, lid, bk0, bcol, ra, rb);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = 0; s < steps; s++) {
        const int more = s + 1 < steps;
        if (more)
            conv_fetch(&gm, s + 1, ra, rb);
        __local const float *as = As + (s & 1) * (KWG * AST);
        __local const float *bs = Bs + (s & 1) * (KWG * NWG);
/* AMD's scheduler hoists every local read of a fully unrolled slice (170 VGPRs, 1 wave per SIMD
 * at 64x64 on gfx902); pairs of k keep it at 61 (4 waves). Other compilers: the full unroll. */
#ifdef __AMDGCN__
#pragma unroll 2
#else
#pragma unroll
#endif
        for (int kk = 0; kk < KWG; kk++) {
            float a[WPTM], b[WPTN];
#pragma unroll
            for (int v = 0; v < WPTM / 4; v++)
                vstore4(*(__local const float4 *)(as + kk * AST + v * MDIMC * 4 + ty * 4), 0,
                        a + v * 4);
#pragma unroll
            for (int v = 0; v < WPTN / 4; v++)
                vstore4(*(__local const float4 *)(bs + kk * NWG + v * NDIMC * 4 + tx * 4), 0,
                        b + v * 4);
#pragma unroll
            for (int i = 0; i < WPTM; i++)
#pragma unroll
                for (int j = 0; j < WPTN; j++)
                    acc[i][j] = fma(a[i], b[j], acc[i][j]);
        }
        if (more)
            conv_stash(As + ((s + 1) & 1) * (KWG * AST), Bs + ((s + 1) & 1) * (KWG * NWG), lid,
                       bk0, bcol, ra, rb);
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    /* Epilogue: row i = m0 + (wi / 4) * MDIMC * 4 + ty * 4 + wi % 4, columns likewise. */
    __global float *og = out + offs.w + (size_t)g * Co_g * HoWo;
    const size_t img_stride = (size_t)Co * HoWo;
#pragma unroll
    for (int wi = 0; wi < WPTM; wi++) {
        const int i = m0 + (wi / 4) * MDIMC * 4 + ty * 4 + wi % 4;
        if (i >= Co_g)
            continue;
        const float bi = (FLAGS & 1) ? bias[offs.z + g * Co_g + i] : 0.0f;
#pragma unroll
        for (int v = 0; v < WPTN / 4; v++) {
            const int j = n0 + v * NDIMC * 4 + tx * 4;
            if ((FLAGS & 2) && j + 4 <= P) {
                const int jn = j / HoWo, jp = j - jn * HoWo;
                float4 r = (float4)(acc[wi][v * 4], acc[wi][v * 4 + 1], acc[wi][v * 4 + 2],
                                    acc[wi][v * 4 + 3]) + bi;
                r.x = conv_act(r.x, ACT_OP, act_alpha);
                r.y = conv_act(r.y, ACT_OP, act_alpha);
                r.z = conv_act(r.z, ACT_OP, act_alpha);
                r.w = conv_act(r.w, ACT_OP, act_alpha);
                *(__global float4 *)(og + jn * img_stride + (size_t)i * HoWo + jp) = r;
                continue;
            }
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int je = j + e;
                if (je < P) {
                    const int jn = je / HoWo, jp = je - jn * HoWo;
                    og[jn * img_stride + (size_t)i * HoWo + jp] =
                        conv_act(acc[wi][v * 4 + e] + bi, ACT_OP, act_alpha);
                }
            }
        }
    }
}
