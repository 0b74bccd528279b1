/* Conv2D forward on Hopper's tensor cores through wgmma, TF32 math (src/ops/conv/conv2d_wgmma.c): the implicit
 * GEMM C (Co x P) = A (Co x K) * B (K x P) of conv2d.cl with k = (ky, kx, ci) and p = (n, oy, ox), on
 * channels-last copies of both operands that gemm_wgmma_pack.cl made (TF32-rounded, zero-padded):
 *   x -> xt[n][pix][c]: image stride IS, pixel stride KP (channels Ci .. KP - 1 zero),
 *   w -> wt[co][tap][c]: row stride WROW, tap stride KP (channels Ci .. KP - 1 zero),
 * so K = Kh Kw KP (the zero channels add nothing) and a k slice of BK = 16 elements is 16 channels of one
 * tap: 64 contiguous bytes of one pixel, staged by 16-byte cp.async (source size 0 outside the image or
 * past P / Co: zero fill) into wgmma's 64B-swizzled K-major tiles (common/wgmma_layout.h), A rows = output
 * channels, B rows = output pixels. The ring, the barrier per slice and the asynchronous wgmma steps are
 * gemm_wgmma.cl's; only the copies differ: each item keeps the image base and window origin of its B
 * rows, and the tap and channel offset of the next slice are the same for the whole group (stepped
 * without division).
 * NVIDIA sm_90 only: the wgmma lines are "//SM90A " asm comments (src/program/sm90a_build.c).
 *
 * Arguments as conv2d.cl (x, w, bias (any buffer when flags bit 0 is clear), out, offs = (x, w, bias,
 * out) element offsets, ga = (Ci, H, W, Co, Ho, Wo, Kh, Kw), gb = (sh, sw, pt, pl, dh, dw, -, -),
 * gc = (P, flags, -, -), act_alpha; flags: 1 bias, bits 8.. the activation), then ls = (IS, WROW, KP, -).
 * Grid: (ceil(P / BN) * WG, ceil(Co / BM), 1), local (WG, 1, 1), WG = 128 WGS, BM = 64 WGS.
 * -D contract: WGS (1 / 2), BN (128 / 64: m64n128 or m64n64 steps), STAGES, WAITN (as gemm_wgmma.cl),
 * IDX64 (xt or out spans 2^31 elements). */
#ifndef WGS
#define WGS 2
#endif
#ifndef STAGES
#define STAGES 3
#endif
#ifndef WAITN
#define WAITN 0
#endif
#ifndef BN
#define BN 128 /* output pixels a tile: 128 or 64 (twice the groups, for grids short of two an SM) */
#endif

#define IN16 0
#define ESZ 4
#define BK 16
#define ROWB 64 /* bytes per tile row: BK f32 */
#define WG (128 * WGS)
#define BM (64 * WGS)
#include "common/wgmma.h"
#include "common/conv_act.h"
#include "common/conv_nhwc.h"

#define A_BYTES (BM * ROWB)
#define STAGE_BYTES ((BM + BN) * ROWB)
#define PD (STAGES - 1 - WAITN) /* slices in flight ahead of the one multiplied */
#define AU (BM * KC / WG)       /* A chunks per item and slice */
#define BU (BN * KC / WG)       /* B chunks per item and slice */
#define FAR (-(1 << 29))        /* a window origin outside every image */

#if BN != 128 && BN != 64
#error "BN is 128 or 64"
#endif
#if STAGE_BYTES * STAGES > 49152
#error "the ring must fit NVIDIA's 48 KiB of local memory per group"
#endif
#if PD < 1
#error "STAGES - 1 - WAITN must be at least 1"
#endif
#if PD == 1
#define CONV_COPIES_PENDING "0"
#elif PD == 2
#define CONV_COPIES_PENDING "1"
#elif PD == 3
#define CONV_COPIES_PENDING "2"
#elif PD == 4
#define CONV_COPIES_PENDING "3"
#else
#error "STAGES too deep"
#endif

/* 16-byte cp.async of `bytes` (16 or 0: zero fill) from src to local address dst. */
static inline __attribute__((always_inline)) void conv_cp16(uint dst, __global const float *src, uint bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes) : "memory");
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
conv2d_wgmma(__global const float *x, __global const float *w, __global const float *bias, __global float *out,
             ulong4 offs, int8 ga, int8 gb, int4 gc, float act_alpha, int4 ls)
{
    __local float4 ring[STAGES * STAGE_BYTES / 16] __attribute__((aligned(1024)));
    const int H = ga.s1, W = ga.s2, Co = ga.s3, Ho = ga.s4, Wo = ga.s5, KH = ga.s6, KW = ga.s7;
    const int SH = gb.s0, SW = gb.s1, PT = gb.s2, PL = gb.s3, DH = gb.s4, DW = gb.s5;
    const int P = gc.s0, flags = gc.s1;
    const int IS = ls.s0, WROW = ls.s1, KP = ls.s2;
    x += offs.s0;
    w += offs.s1;
    bias += offs.s2;
    out += offs.s3;

    const uint base = (uint)(size_t)ring;
    const int lid = get_local_id(0), wg = lid >> 7;
    const int m0 = get_group_id(1) * BM, n0 = get_group_id(0) * BN;
    const int howo = Ho * Wo;

    /* A: chunk u of this item is row r = (lid + u WG) / KC of the tile, chunk c = lid % KC of it */
    const int c = lid % KC;
    __global const float *arow[AU];
    uint abytes[AU], adst[AU];
#pragma unroll
    for (int u = 0; u < AU; u++) {
        const int r = (lid + u * WG) / KC, co = m0 + r;
        abytes[u] = co < Co ? 16u : 0u;
        arow[u] = co < Co ? w + (idx_t)co * WROW + c * 4 : w;
        adst[u] = r * ROWB + (wgmma_chunk(c, r) << 4);
    }
    /* B: chunk u is tile row (output pixel) r = (lid + u WG) / KC: the image base plus the window origin's
     * pixel (channel c's 4 floats), and the origin for the bounds */
    idx_t cbase[BU];
    int iy0[BU], ix0[BU];
    uint bdst[BU];
#pragma unroll
    for (int u = 0; u < BU; u++) {
        const int r = (lid + u * WG) / KC, p = n0 + r;
        const int img = p / howo, pix = p - img * howo, oy = pix / Wo, ox = pix - oy * Wo;
        iy0[u] = p < P ? oy * SH - PT : FAR;
        ix0[u] = p < P ? ox * SW - PL : FAR;
        cbase[u] = p < P ? (idx_t)img * IS + (idx_t)(iy0[u] * W + ix0[u]) * KP + c * 4 : 0;
        bdst[u] = A_BYTES + r * ROWB + (wgmma_chunk(c, r) << 4);
    }

    int tci = 0, tkx = 0, tky = 0; /* the next slice staged: channel offset and tap */
    const int slices = KH * KW * (KP / BK);
#define CONV_B_COPY(u, src, bytes) conv_cp16(st_ + bdst[u], src, bytes)
#define CONV_STAGE(slot)                                                                           \
    do {                                                                                           \
        const uint st_ = base + (slot) * STAGE_BYTES;                                              \
        const int ak_ = (tky * KW + tkx) * KP + tci;                                               \
        _Pragma("unroll") for (int u = 0; u < AU; u++) conv_cp16(st_ + adst[u], arow[u] + ak_, abytes[u]); \
        CONV_NHWC_CHUNKS(BU, CONV_B_COPY, KP);                                                     \
        CONV_NHWC_NEXT(KP);                                                                        \
    } while (0)

    float d[BN / 2];
#pragma unroll
    for (int i = 0; i < BN / 2; i++)
        d[i] = 0.0f;

    for (int s = 0; s < PD; s++) {
        if (s < slices)
            CONV_STAGE(s);
        asm volatile("cp.async.commit_group;\n" ::: "memory");
    }
    for (int t = 0; t < slices; t++) {
        asm volatile("cp.async.wait_group " CONV_COPIES_PENDING ";\n" ::: "memory");
        /* the copies are generic-proxy writes; wgmma reads through the async proxy */
        asm volatile("//SM90A fence.proxy.async.shared::cta;\n" ::: "memory");
        barrier(CLK_LOCAL_MEM_FENCE);
        /* the slot of slice t - 1 - WAITN: every item has waited for those products */
        const int tn = t + PD;
        if (tn < slices)
            CONV_STAGE(tn % STAGES);
        asm volatile("cp.async.commit_group;\n" ::: "memory");
        const uint st = base + (t % STAGES) * STAGE_BYTES;
        asm volatile("//SM90A wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
        for (int j = 0; j < ROWB / 32; j++) {
#if BN == 128
            wgmma_m64n128(d, wgmma_desc(st + wg * 64 * ROWB + j * 32), wgmma_desc(st + A_BYTES + j * 32));
#else
            wgmma_m64n64(d, wgmma_desc(st + wg * 64 * ROWB + j * 32), wgmma_desc(st + A_BYTES + j * 32));
#endif
        }
        asm volatile("//SM90A wgmma.commit_group.sync.aligned;\n" ::: "memory");
        asm volatile("//SM90A wgmma.wait_group.sync.aligned " WGMMA_STR(WAITN) ";\n" ::: "memory");
    }
    asm volatile("//SM90A wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    asm volatile("cp.async.wait_all;\n" ::: "memory");

    /* d[4 j + 2 h + e]: output channel m0 + 64 wg + 16 warp + lane / 4 + 8 h, pixel n0 + 8 j + 2 (lane % 4) + e */
    const int lane = lid & 31, warp = (lid >> 5) & 3, act = flags >> 8;
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int co = m0 + wg * 64 + warp * 16 + (lane >> 2) + 8 * h;
        if (co >= Co)
            continue;
        const float b = flags & 1 ? bias[co] : 0.0f;
#pragma unroll
        for (int j = 0; j < BN / 8; j++) {
            const int p0 = n0 + 8 * j + 2 * (lane & 3);
            if (p0 >= P)
                continue;
            int img = p0 / howo, pix = p0 - img * howo;
#pragma unroll
            for (int e = 0; e < 2; e++) {
                if (p0 + e < P)
                    out[((idx_t)img * Co + co) * howo + pix] = conv_act(d[4 * j + 2 * h + e] + b, act, act_alpha);
                if (++pix == howo) {
                    pix = 0;
                    img++;
                }
            }
        }
    }
}
