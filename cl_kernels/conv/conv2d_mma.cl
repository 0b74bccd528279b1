/* Conv2D forward on NVIDIA tensor cores (mma.sync m16n8k8, TF32 or 3xTF32 math; src/ops/conv/conv2d_mma.c):
 * conv2d.cl's implicit GEMM C (Co x P) = A (Co x K) * B (K x P) for one group, where
 *   A = w[co][k], k = (ci, ky, kx) flattened (K = Ci Kh Kw), k-contiguous,
 *   B[k][p] = x[n][ci][oy sh - pt + ky dh][ox sw - pl + kx dw] (zero outside the image), p = (n, oy, ox)
 *       over the whole batch (P = N Ho Wo),
 *   C[co][p] goes to out[n][co][oy][ox] after bias[co] and the activation.
 * No im2col buffer and no operand pack: the staging ring, the fragments and the rounding are
 * gemm_mma.cl's (common/mma_pipeline.h, common/mma_tf32.h); only the B copies differ.
 *
 * A's slices arrive by 16-byte cp.async (CPW 4: K and the weights' offset multiples of 4) or 4-byte ones
 * (CPW 1), as a k-contiguous [BM][16] tile. B's slices are gathered from x by 4-byte cp.async (source
 * size 0 outside the image: zero fill) into the k-major swizzled [16][BN] tile the fragments read.
 *
 * The gather: warp v copies k rows v, v + NW, ... of a slice and lane l the columns l + 32 j (j < BN / 32):
 * a warp reads 32 consecutive output pixels of one k row (contiguous input at stride 1). Each item
 * decodes its columns once (image base + oy sh - pt rows + ox sw - pl, and those two offsets for the
 * bounds). Lane i < BK / NW of warp v keeps the (ci, ky, kx) of the warp's row v + NW i, stepped from
 * slice to slice by 16 = KQ Kw + KR with adds and two carries (no division in the loop), and hands the
 * warp that row's (ci H W + ky dh W + kx dw, ky dh, kx dw) by shuffles: every lane of a warp works on
 * the same row at once (no divergence), and no local memory is spent (the 128 x 128 ring fills 48 KiB).
 * Rows past K carry shifts that fail every bounds test, so they load zeros.
 *
 * Arguments as conv2d.cl: x, w, bias (any buffer when flags bit 0 is clear), out,
 *   offs = (x, w, bias, out) element offsets, ga = (Ci, H, W, Co, Ho, Wo, Kh, Kw),
 *   gb = (sh, sw, pt, pl, dh, dw, Ci_g, Co_g) (one group: Ci_g = Ci, Co_g = Co), gc = (P, flags, K, -),
 *   act_alpha; flags: 1 bias, 2 out float4-aligned along p (Ho Wo and the out offset multiples of 4),
 *   bits 8.. the activation (common/conv_act.h).
 * The channels-last form (-DNHWC=1, kernel conv2d_mma_nhwc; Ci a multiple of 16): x is the input
 * transposed to [N][H][W][Ci] and w the weights to [Co][Kh][Kw][Ci] (conv2d_mma.c does both with the
 * layout family's copy into the workspace), so k = (ky, kx, ci) and a slice of 16 k is 16 channels of
 * one tap: 64 contiguous bytes of one pixel. B is then staged k-contiguous ([BN][16]) by 16-byte
 * cp.async, four per column (a quarter of the gather's copy instructions and none of its shuffles),
 * with one bounds test per column and slice; the tap (ky, kx) and channel offset are the same for
 * the whole group, stepped without division. Local row r of the tile holds column swap(r) (the
 * 3-bit fields of r mod 64 exchanged), so the fragments read rows 8 j + g and the epilogue sees the
 * same columns as the gather form's n-contiguous tile. K = Kh Kw Ci has no partial slice.
 * Grid: (ceil(P / BN) * WG, ceil(Co / BM), 1), local (WG, 1, 1), WG = 32 WARPS_M WARPS_N.
 * -D contract: MI (2 / 4), WARPS_M, WARPS_N, STAGES, ROUND (4 TF32, 5 3xTF32), CPW, NHWC (0 / 1), IDX64 (x or out
 * spans 2^31 elements or more; indices inside one image stay int). */
#ifndef WARPS_M
#define WARPS_M 2
#endif
#ifndef WARPS_N
#define WARPS_N 2
#endif
#ifndef STAGES
#define STAGES 3
#endif
#ifndef ROUND
#define ROUND 4
#endif
#ifndef CPW
#define CPW 4
#endif
#ifndef NHWC
#define NHWC 0
#endif

#ifndef MI
#define MI 4 /* m16 tiles a warp: warp tiles of 64 x 64 (4) or 32 x 64 (2) */
#endif

#define NW (WARPS_M * WARPS_N)
#define WG (32 * NW)
#define BM (16 * MI * WARPS_M)
#define BN (64 * WARPS_N)
#define BK 16
#define NJ 8
#define MMA_ET float
#define MMA_EPC 4
#include "common/mma_pipeline.h"
#include "common/mma_tf32.h"
#include "common/conv_act.h"
#include "common/conv_nhwc.h"

#define ROWS_PER_ITEM (BK / NW) /* k rows of a slice each item gathers */
#define COLS_PER_ITEM (BN / 32) /* columns of a slice each item gathers */
#define FAR (-(1 << 29))        /* an offset that puts a row or column outside every image */

#if BK % NW
#error "the warps must divide the 16 rows of a slice"
#endif
#if MI != 2 && MI != 4
#error "MI is 2 or 4"
#endif
#if (BM * BK / 4) % WG || (NHWC && (BN * BK / 4) % WG)
#error "every item copies whole 16-byte chunks of each tile"
#endif
#if NHWC
#define BU (BN * BK / 4 / WG) /* 16-byte B chunks each item copies per slice (channels-last) */
#define CONV_MMA_KERNEL conv2d_mma_nhwc
#else
#define CONV_MMA_KERNEL conv2d_mma
#endif

/* Row state of one k row: (ci, ky, kx) of k = t * 16 + row at slice t. */
typedef struct conv_row {
    int ci, ky, kx;
} conv_row;

/* What the gather needs of a row: its offset in the image, its dh and dw shifts (FAR past K). */
static inline int4 conv_row_entry(const conv_row *r, int Ci, int H, int W, int DH, int DW)
{
    if (r->ci >= Ci)
        return (int4)(0, FAR, FAR, 0);
    return (int4)((r->ci * H + r->ky * DH) * W + r->kx * DW, r->ky * DH, r->kx * DW, 0);
}

/* (ci, ky, kx) of k + 16, from (ci, ky, kx) of k: 16 = KQ Kw + KR, KQ = CQ Kh + RQ. */
static inline void conv_row_step(conv_row *r, int KH, int KW, int KR, int RQ, int CQ)
{
    r->kx += KR;
    const int carry = r->kx >= KW;
    r->kx -= carry ? KW : 0;
    r->ky += RQ + carry;
    r->ci += CQ;
    if (r->ky >= KH) {
        r->ky -= KH;
        r->ci++;
    }
}

/* v of lane src, for every lane of the warp (all 32 take part). */
static inline __attribute__((always_inline)) int conv_shfl(int v, int src)
{
    int r;
    asm volatile("shfl.sync.idx.b32 %0, %1, %2, 31, -1;\n" : "=r"(r) : "r"(v), "r"(src));
    return r;
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
CONV_MMA_KERNEL(__global const float *x, __global const float *w, __global const float *bias, __global float *out,
           ulong4 offs, int8 ga, int8 gb, int4 gc, float act_alpha)
{
    __local float As[STAGES * BM * BK] __attribute__((aligned(16)));
    __local float Bs[STAGES * BN * BK] __attribute__((aligned(16)));

    const int Ci = ga.s0, H = ga.s1, W = ga.s2, Co = ga.s3, Ho = ga.s4, Wo = ga.s5, KH = ga.s6, KW = ga.s7;
    const int SH = gb.s0, SW = gb.s1, PT = gb.s2, PL = gb.s3, DH = gb.s4, DW = gb.s5;
    const int P = gc.s0, flags = gc.s1, K = gc.s2;
    x += offs.s0;
    w += offs.s1;
    bias += offs.s2;
    out += offs.s3;

    const int lid = get_local_id(0), warp = lid >> 5, lane = lid & 31;
    const int g = lane >> 2, q = lane & 3;
    const int wm0 = (warp / WARPS_N) * 16 * MI, wn0 = (warp % WARPS_N) * 64;
    const int m0 = get_group_id(1) * BM, n0 = get_group_id(0) * BN;
    const int hw = H * W, howo = Ho * Wo;

    float acc[MI][NJ][4];
#pragma unroll
    for (int i = 0; i < MI; i++)
#pragma unroll
        for (int j = 0; j < NJ; j++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                acc[i][j][e] = 0.0f;

    /* A: the weights' rows m0.., k-contiguous with row stride K */
    mma_copy pa[MMA_U(BM)];
#pragma unroll
    for (int u = 0; u < MMA_U(BM); u++)
        pa[u] = mma_copy_plan(lid + u * WG, K, m0, Co, 1, BM);

#if NHWC
    /* B: chunk u of this item fills local row r = (lid + u WG) / 4, channels 4 (lid % 4) .. + 3 of the
     * slice, from column swap(r): the image's base plus the window origin's pixel, and the origin */
    const int kq = (lid & 3) * 4;
    idx_t cbase[BU];
    int iy0[BU], ix0[BU];
#pragma unroll
    for (int u = 0; u < BU; u++) {
        const int r = (lid + u * WG) >> 2;
        const int p = n0 + ((r & ~63) | ((r & 7) << 3) | ((r >> 3) & 7));
        const int img = p / howo, pix = p - img * howo, oy = pix / Wo, ox = pix - oy * Wo;
        iy0[u] = p < P ? oy * SH - PT : FAR;
        ix0[u] = p < P ? ox * SW - PL : FAR;
        cbase[u] = p < P ? ((idx_t)img * hw + iy0[u] * W + ix0[u]) * Ci + kq : 0;
    }
    int tci = 0, tkx = 0, tky = 0; /* the next slice's channel offset and tap, the same for the group */
#else
    /* B: this item's columns (image base + window origin, and the origin for the bounds) */
    idx_t cbase[COLS_PER_ITEM];
    int iy0[COLS_PER_ITEM], ix0[COLS_PER_ITEM];
#pragma unroll
    for (int j = 0; j < COLS_PER_ITEM; j++) {
        const int p = n0 + lane + 32 * j;
        const int img = p / howo, pix = p - img * howo, oy = pix / Wo, ox = pix - oy * Wo;
        iy0[j] = p < P ? oy * SH - PT : FAR;
        ix0[j] = p < P ? ox * SW - PL : FAR;
        cbase[j] = p < P ? (idx_t)img * Ci * hw + iy0[j] * W + ix0[j] : 0;
    }

    /* lane i < ROWS_PER_ITEM: the state of the warp's row warp + NW i (the others hold a copy, unused) */
    const int KQ = BK / KW, KR = BK % KW, CQ = KQ / KH, RQ = KQ % KH;
    const int my_row = warp + NW * (lane % ROWS_PER_ITEM), khw = KH * KW, rr = my_row % khw;
    conv_row rs = {my_row / khw, rr / KW, rr % KW};
#endif

    const int slices = (K + BK - 1) / BK;
    /* Stage slice s into ring slot s % STAGES; then step the rows (the tap) to slice s + 1. */
#define CONV_STAGE(s)                                                                              \
    do {                                                                                           \
        const int st_ = (s) % STAGES, k0_ = (s) * BK;                                              \
        _Pragma("unroll") for (int u = 0; u < MMA_U(BM); u++)                                      \
            mma_copy_slice(As + st_ * BM * BK, w, &pa[u], K, k0_, K, 1);                           \
        CONV_STAGE_B(Bs + st_ * BN * BK);                                                          \
    } while (0)
#if NHWC
#define CONV_B_COPY(u, src, bytes) mma_cp16(btile_ + (lid + (u) * WG) * 4, src, bytes)
#define CONV_STAGE_B(bt_)                                                                          \
    do {                                                                                           \
        __local float *btile_ = (bt_);                                                             \
        CONV_NHWC_CHUNKS(BU, CONV_B_COPY, Ci);                                                     \
        CONV_NHWC_NEXT(Ci);                                                                        \
    } while (0)
#else
#define CONV_STAGE_B(bt_)                                                                          \
    do {                                                                                           \
        const int4 mine_ = conv_row_entry(&rs, Ci, H, W, DH, DW);                                  \
        _Pragma("unroll") for (int i = 0; i < ROWS_PER_ITEM; i++) {                                \
            const int kk = warp + NW * i;                                                          \
            const int off_ = conv_shfl(mine_.x, i), dy_ = conv_shfl(mine_.y, i),                   \
                      dx_ = conv_shfl(mine_.z, i);                                                 \
            const int sw_ = mma_swz(kk);                                                           \
            _Pragma("unroll") for (int j = 0; j < COLS_PER_ITEM; j++) {                            \
                const int iy = iy0[j] + dy_, ix = ix0[j] + dx_;                                    \
                const int in = (uint)iy < (uint)H && (uint)ix < (uint)W;                           \
                const int c_ = (lane >> 2) + 8 * j;                                                \
                mma_cp4((bt_) + kk * BN + ((c_ ^ sw_) << 2) + (lane & 3), in ? x + cbase[j] + off_ : x, \
                        in ? 4u : 0u);                                                             \
            }                                                                                      \
        }                                                                                          \
        conv_row_step(&rs, KH, KW, KR, RQ, CQ);                                                    \
    } while (0)
#endif

#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < slices)
            CONV_STAGE(s);
        mma_commit();
    }
    for (int t = 0; t < slices; t++) {
        mma_wait_oldest();
        barrier(CLK_LOCAL_MEM_FENCE);
        const int tn = t + STAGES - 1;
        if (tn < slices)
            CONV_STAGE(tn);
        mma_commit();
        mma_tf32_slice(acc, As + (t % STAGES) * BM * BK, Bs + (t % STAGES) * BN * BK, 1, NHWC, wm0, wn0, g, q);
    }
    mma_drain();

    /* The epilogue: m-tile i's rows 16 i + g (+ 8); a lane's columns n0 + wn0 + 16 q + 8 e + 4 v + (0..3)
     * hold n-tiles 4 v .. 4 v + 3, element e of the pair (the gather form's n-contiguous B, or the
     * channels-last tile's swapped rows, which put the same columns there). */
    const int act = flags >> 8, vec = flags & 2;
#pragma unroll
    for (int e = 0; e < 2; e++)
#pragma unroll
        for (int v = 0; v < 2; v++) {
            const int c0 = n0 + wn0 + 16 * q + 8 * e + 4 * v;
            if (c0 >= P)
                continue;
            const int img = c0 / howo, pix = c0 - img * howo;
            /* float4 when the four columns are one image's, in range and aligned */
            const int four = vec && c0 + 4 <= P;
#pragma unroll
            for (int i = 0; i < MI; i++)
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const int co = m0 + wm0 + 16 * i + g + 8 * h;
                    if (co >= Co)
                        continue;
                    const float b = flags & 1 ? bias[co] : 0.0f;
                    float r[4];
#pragma unroll
                    for (int c = 0; c < 4; c++)
                        r[c] = conv_act(acc[i][4 * v + c][2 * h + e] + b, act, act_alpha);
                    __global float *o = out + ((idx_t)img * Co + co) * howo + pix;
                    if (four) {
                        vstore4((float4)(r[0], r[1], r[2], r[3]), 0, o);
                    } else {
                        int im = img, px = pix;
                        for (int c = 0; c < 4 && c0 + c < P; c++) {
                            out[((idx_t)im * Co + co) * howo + px] = r[c];
                            if (++px == howo) {
                                px = 0;
                                im++;
                            }
                        }
                    }
                }
        }
}
