/* Fully fused MLP (include/cltensor_mlp.h): the whole network of one tile of TP points inside one
 * work-group, activations in local memory, weights read through the caches (L1/L2).
 *
 * mlp_forward: one launch, one group per tile: encoding, every layer, the output rows.
 * mlp_train:   launch 1 of a training step. A persistent grid of G groups; group g takes tiles
 *   g, g + G, ... in that order: forward (each layer's input kept in the group's global scratch),
 *   the MSE loss and its gradient, the backward through every layer, and the tile's weight and
 *   bias gradients added into the group's own slice of `partial` ([G][PSTRIDE]; the first tile
 *   writes, later tiles add: no atomics, a fixed order). The group's sum of squared errors goes to
 *   loss_part[g].
 * Launch 2 of the step is mlp_update (mlp_update.cl): the fixed-order sum of the partials fused
 *   with the optimizer.
 *
 * Work split inside a group (WG = COLS * NR items): item (r, j), j = lid % COLS the output column,
 * r = lid / COLS; it owns the PPI points r, r + NR, ... of the tile (TP = NR * PPI), so the
 * accumulators are a private array indexed by unrolled constants and a column of W is read once
 * per k for PPI points (W row-major [in][out]: consecutive items read consecutive words; KC rows
 * per chunk in registers, the next chunk in flight), the activations 4 at a time (one float4
 * local read feeds 4 FMAs). The backward's input gradient reads rows of W through local chunks
 * of BWC columns; its weight gradient gives each item 4 x 4 blocks of dW (layer_bwd).
 *
 * -D contract: WG, COLS (>= every width, a power of two), PPI, NL (layers), IN_DIM (input
 * coordinates), ENC (0 identity, 1 Fourier: width 0 = 2F, B [IN_DIM][F]), MLP_W (NL + 1 widths,
 * comma list), MLP_ACT (NL activation codes: 0 identity, 1 tanh, 2 relu, 3 sigmoid, 4 silu),
 * MLP_POFF (NL parameter offsets: layer l's W [in][out] then b [out]), MLP_SOFF (NL + 1 scratch
 * offsets per tile, in floats, of each layer's input block y and, for silu layers, z), SCRATCH
 * (floats of scratch per group), PSTRIDE (floats between groups' partial slices, a multiple of 32),
 * KC (weight rows per forward chunk), BWC (weight columns per backward chunk), RESIDENT (1: every
 * layer's input stays in local memory through the step, 0: two local tiles and the inputs saved
 * to scratch); CLT_REQD (common/fixed_group.h).
 */
#ifndef WG /* defaults: the PINN of BENCHMARKS.md, so the file also builds on its own */
#define WG 256
#define COLS 128
#define PPI 16
#define NL 4
#define IN_DIM 2
#define ENC 1
#define MLP_W 128, 128, 128, 128, 2
#define MLP_ACT 1, 1, 1, 0
#define MLP_POFF 0, 16512, 33024, 49536
#define MLP_SOFF 0, 4096, 8192, 12288, 16384
#define SCRATCH (16384 + 4 * 32 * 128)
#define PSTRIDE 49824
#define KC 32
#define BWC 16
#define RESIDENT 0
#endif
/* On NVIDIA the host rebuilds a variant without the attribute (-DCLT_REQD=0) when ptxas spilled
 * with it (common/fixed_group.h, src/program/fixed_group_build.c): with it ptxas lowers mlp_train
 * to 40-48 registers to fit a fifth group per SM, spilling 12-64 B (bench/results/h200/
 * nv_spills.md); without it 64 registers, no spill, pinn_train_step within 1% (94.5 vs 95.4 us at
 * 200 points, equal at 1000 and 10000). 11 of the H200's 21 variants are rebuilt so. */
#include "common/fixed_group.h"
#include "common/mlp_net.h"
#define MLP_GROUP CLT_FIXED_GROUP(WG)
#define TP (NR * PPI)
#define NR (WG / COLS)
#define LDA (COLS + 4) /* local row stride: float4-aligned rows; the weight gradient's 4-wide
                          blocks read up to 3 columns past a width */
#define LDW (BWC + 1)  /* the staged weight chunk's row stride: conflict-free row reads */
/* Layer l's input tile [TP][LDA] in the group's local activations: its own with RESIDENT, else
 * one of two alternating (layer l + 1's input overwrites layer l - 1's) */
#define ACT(base, l, resident) ((base) + ((resident) ? (l) : ((l) & 1)) * (TP * LDA))

#if KC % 4 != 0 || BWC % 4 != 0 || BWC > COLS
#error "KC and BWC must be multiples of 4, BWC at most COLS"
#endif

#if WG % COLS != 0
#error "WG must be a multiple of COLS"
#endif

__constant int soff[NL + 1] = {MLP_SOFF};

static inline float act_fwd(int a, float z)
{
    if (a == 1)
        return tanh(z);
    if (a == 2)
        return fmax(z, 0.0f);
    if (a == 3)
        return 1.0f / (1.0f + exp(-z));
    if (a == 4)
        return z / (1.0f + exp(-z));
    return z;
}

/* The encoded input of the tile's points (rows past n are zeros) into cur [TP][LDA]. */
static inline void encode_tile(__global const float *x, __global const float *B, float scale,
                               long first, long n, __local float *cur)
{
    const int w0 = widths[0];
    for (int q = get_local_id(0); q < TP * w0; q += WG) {
        const int p = q / w0, c = q - p * w0;
        const long pt = first + p;
        float v = 0.0f;
        if (pt < n) {
            __global const float *xr = x + pt * IN_DIM;
#if ENC == 1
            const int f = w0 / 2, cc = c < f ? c : c - f;
            float dot = 0.0f;
            for (int d = 0; d < IN_DIM; d++)
                dot += xr[d] * B[d * f + cc];
            v = c < f ? sin(scale * dot) : cos(scale * dot);
#else
            v = xr[c];
#endif
        }
        cur[p * LDA + c] = v;
    }
}

/* Layer l of the tile: nxt = act(cur W_l + b_l). With a scratch pointer the layer's input block
 * is saved there first when `save` (the backward's A_l, unless RESIDENT keeps it in local memory)
 * and, for silu layers, z of the output.
 * Item (r, j) reads column j of W in chunks of KC rows: all KC loads of a chunk are issued at once
 * and the next chunk's are in flight while this one's FMAs run. One load per k (as before this
 * change) left a group waiting for L2 once per 4 rows: 32 round trips per 128-wide layer, which
 * made a small tile's step latency-bound (issue 19). */
static inline void layer_fwd(int l, __global const float *params, __local const float *cur,
                             __local float *nxt, __global float *scr, int save)
{
    const int K = widths[l], O = widths[l + 1], a = acts[l];
    const int lid = get_local_id(0), j = lid % COLS, r = lid / COLS;
    __global const float *W = params + poff[l];
    if (scr && save)
        for (int q = lid; q < TP * K; q += WG)
            scr[soff[l] + q] = cur[(q / K) * LDA + q % K];
    if (j < O) {
        float acc[PPI];
        const float b = W[K * O + j];
#pragma unroll
        for (int i = 0; i < PPI; i++)
            acc[i] = b;
        const int full = K / KC * KC;
        float wn[KC];
        if (full > 0)
#pragma unroll
            for (int t = 0; t < KC; t++)
                wn[t] = W[t * O + j];
        for (int k0 = 0; k0 < full; k0 += KC) {
            float w[KC];
#pragma unroll
            for (int t = 0; t < KC; t++)
                w[t] = wn[t];
            if (k0 + KC < full)
#pragma unroll
                for (int t = 0; t < KC; t++)
                    wn[t] = W[(k0 + KC + t) * O + j];
#pragma unroll
            for (int t = 0; t < KC; t += 4)
#pragma unroll
                for (int i = 0; i < PPI; i++) {
                    const float4 av = *(__local const float4 *)(cur + (r + i * NR) * LDA + k0 + t);
                    acc[i] = fma(av.x, w[t], acc[i]);
                    acc[i] = fma(av.y, w[t + 1], acc[i]);
                    acc[i] = fma(av.z, w[t + 2], acc[i]);
                    acc[i] = fma(av.w, w[t + 3], acc[i]);
                }
        }
        int k = full;
        for (; k + 4 <= K; k += 4) {
            const float w0 = W[k * O + j], w1 = W[(k + 1) * O + j], w2 = W[(k + 2) * O + j],
                        w3 = W[(k + 3) * O + j];
#pragma unroll
            for (int i = 0; i < PPI; i++) {
                const float4 av = *(__local const float4 *)(cur + (r + i * NR) * LDA + k);
                acc[i] = fma(av.x, w0, acc[i]);
                acc[i] = fma(av.y, w1, acc[i]);
                acc[i] = fma(av.z, w2, acc[i]);
                acc[i] = fma(av.w, w3, acc[i]);
            }
        }
        for (; k < K; k++) {
            const float w = W[k * O + j];
#pragma unroll
            for (int i = 0; i < PPI; i++)
                acc[i] = fma(cur[(r + i * NR) * LDA + k], w, acc[i]);
        }
#pragma unroll
        for (int i = 0; i < PPI; i++) {
            const int p = r + i * NR;
            nxt[p * LDA + j] = act_fwd(a, acc[i]);
            if (scr && a == 4)
                scr[soff[NL] + l * TP * COLS + p * COLS + j] = acc[i];
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
}

/* Forward of all layers, layer l's input in ACT(base, l, resident); returns the output's tile
 * ACT(base, NL, resident). Forced inline:
 * it has two callers, so LLVM's AMDGPU inliner kept it a real call, whose saved registers cost
 * 8 B/lane of scratch and ~18 VGPRs in both kernels on gfx902 (55 -> 43 forward, 79 -> 61 train:
 * 3 -> 4 waves/SIMD). */
static inline __attribute__((always_inline)) __local float *
forward_tile(__global const float *x, __global const float *B, float scale,
             __global const float *params, long first, long n, __local float *base,
             __global float *scr, int resident)
{
    encode_tile(x, B, scale, first, n, base);
    barrier(CLK_LOCAL_MEM_FENCE);
    /* rolled: unrolled, AMD's compiler overlapped the layers' loads, 39 -> 166 VGPRs in mlp_forward
     * and 80 -> 198 in mlp_train on gfx902 (1 wave per SIMD) */
#pragma unroll 1
    for (int l = 0; l < NL; l++)
        layer_fwd(l, params, ACT(base, l, resident), ACT(base, l + 1, resident), scr, !resident);
    return ACT(base, NL, resident);
}

__kernel MLP_GROUP void
mlp_forward(__global const float *x, __global const float *B, __global const float *params,
            __global float *y, long n, float scale, ulong2 off)
{
    x += off.s0; /* element offsets of the caller's x and y */
    y += off.s1;
    __local float4 lb[2 * (TP * LDA / 4)]; /* float4: 16-byte aligned rows */
    const long first = (long)get_group_id(0) * TP;
    __local float *out = forward_tile(x, B, scale, params, first, n, (__local float *)lb, 0, 0);
    const int O = widths[NL];
    for (int q = get_local_id(0); q < TP * O; q += WG) {
        const int p = q / O, c = q - p * O;
        if (first + p < n)
            y[(first + p) * O + c] = out[p * LDA + c];
    }
}

/* The staged weights of one backward chunk: item lid's share of W_l[:, o0 .. o0 + BWC) (k-major,
 * zeros past K or O), as registers, so that the next chunk's loads are in flight while the
 * current one is used. */
#define SPI ((COLS * BWC + WG - 1) / WG)
static inline void chunk_load(__global const float *W, int K, int O, int o0, float *v)
{
    const int lid = get_local_id(0);
#pragma unroll
    for (int s = 0; s < SPI; s++) {
        const int e = lid + s * WG, k = e / BWC, o = o0 + e % BWC;
        v[s] = e < COLS * BWC && k < K && o < O ? W[k * O + o] : 0.0f;
    }
}

static inline void chunk_store(__local float *wl, const float *v)
{
    const int lid = get_local_id(0);
#pragma unroll
    for (int s = 0; s < SPI; s++) {
        const int e = lid + s * WG;
        if (e < COLS * BWC)
            wl[(e / BWC) * LDW + e % BWC] = v[s];
    }
}

/* Backward of layer l for the tile: G [TP][LDA] (dL/dz of the layer's output; columns O .. COLS - 1
 * zero) in g, the layer's input A_l in a (RESIDENT) or staged into a from the forward's scratch
 * copy; adds the weight and bias gradients into the group's partial slice (set = the first tile:
 * write), then for l > 0 the input gradient dL/dz of layer l - 1 into a (zeros past its width).
 * The weight gradient: item e owns a 4 x 4 block of dW (rows 4 kq.., columns 4 oq..): per point one
 * float4 of A and one of G feed 16 FMAs; its rows go out as float4 when the layer's rows allow (a
 * warp's store is then 512 contiguous bytes; 4 scalar stores at a 16-byte stride touched 4x the
 * sectors, and the partial slices are the step's largest traffic). The input gradient reads W_l
 * row-wise, which the row-major layout does not coalesce: chunks of BWC columns are staged through
 * local memory (wl, stride LDW = BWC + 1: item j's row reads are conflict-free) with the next
 * chunk's loads in flight. */
static inline void layer_bwd(int l, __global const float *params, __local float *g,
                             __local float *a, __local float *wl, __global const float *scr,
                             __global float *part, int set)
{
    const int K = widths[l], O = widths[l + 1];
    const int lid = get_local_id(0), j = lid % COLS, r = lid / COLS;
    __global const float *W = params + poff[l];
    float pre[SPI];
    if (l > 0) /* the first chunk's loads overlap the weight gradient */
        chunk_load(W, K, O, 0, pre);
    if (!RESIDENT)
        for (int q = lid; q < TP * K; q += WG) {
            const int p = q / K, c = q - p * K;
            a[p * LDA + c] = scr[soff[l] + q];
        }
    barrier(CLK_LOCAL_MEM_FENCE);
    __global float *dW = part + poff[l];
    const int vec = (O & 3) == 0 && (poff[l] & 3) == 0; /* every row float4-aligned */
    const int KQ = (K + 3) / 4, OQ = (O + 3) / 4;
    for (int e = lid; e < KQ * OQ; e += WG) {
        const int kq = e / OQ, oq = e - kq * OQ;
        float4 s0 = (float4)(0.0f), s1 = s0, s2 = s0, s3 = s0;
        /* 4 points per pass: unrolled fully, AMD's compiler hoisted all TP points' loads (256
         * VGPRs and scratch on gfx902) */
#pragma unroll 4
        for (int p = 0; p < TP; p++) {
            const float4 av = *(__local const float4 *)(a + p * LDA + 4 * kq);
            const float4 gv = *(__local const float4 *)(g + p * LDA + 4 * oq);
            s0 = fma((float4)(av.x), gv, s0);
            s1 = fma((float4)(av.y), gv, s1);
            s2 = fma((float4)(av.z), gv, s2);
            s3 = fma((float4)(av.w), gv, s3);
        }
        const float4 rows[4] = {s0, s1, s2, s3};
#pragma unroll
        for (int r4 = 0; r4 < 4; r4++) {
            const int k = 4 * kq + r4;
            if (k >= K)
                break;
            __global float *d = dW + k * O + 4 * oq;
            if (vec) {
                __global float4 *d4 = (__global float4 *)d;
                *d4 = set ? rows[r4] : *d4 + rows[r4];
                continue;
            }
            const float sv[4] = {rows[r4].x, rows[r4].y, rows[r4].z, rows[r4].w};
#pragma unroll
            for (int c = 0; c < 4; c++)
                if (4 * oq + c < O)
                    d[c] = set ? sv[c] : d[c] + sv[c];
        }
    }
    for (int o = lid; o < O; o += WG) { /* the bias: the flat layout's row K */
        float s = 0.0f;
        for (int p = 0; p < TP; p++)
            s += g[p * LDA + o];
        dW[K * O + o] = set ? s : dW[K * O + o] + s;
    }
    if (l == 0)
        return;
    /* input gradient: item (r, k = j) */
    const int ap = acts[l - 1];
    float acc[PPI];
#pragma unroll
    for (int i = 0; i < PPI; i++)
        acc[i] = 0.0f;
    for (int o0 = 0; o0 < O; o0 += BWC) {
        chunk_store(wl, pre);
        barrier(CLK_LOCAL_MEM_FENCE);
        if (o0 + BWC < O)
            chunk_load(W, K, O, o0 + BWC, pre);
        if (j < K) {
            __local const float *wr = wl + j * LDW;
#pragma unroll
            for (int t = 0; t < BWC; t += 4) {
                const float w0 = wr[t], w1 = wr[t + 1], w2 = wr[t + 2], w3 = wr[t + 3];
#pragma unroll
                for (int i = 0; i < PPI; i++) {
                    const float4 gv = *(__local const float4 *)(g + (r + i * NR) * LDA + o0 + t);
                    acc[i] = fma(gv.x, w0, acc[i]);
                    acc[i] = fma(gv.y, w1, acc[i]);
                    acc[i] = fma(gv.z, w2, acc[i]);
                    acc[i] = fma(gv.w, w3, acc[i]);
                }
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (j < K)
#pragma unroll
        for (int i = 0; i < PPI; i++) {
            const int p = r + i * NR;
            const float z = ap == 4 ? scr[soff[NL] + (l - 1) * TP * COLS + p * COLS + j] : 0.0f;
            acc[i] *= mlp_act_grad(ap, a[p * LDA + j], z);
        }
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (int i = 0; i < PPI; i++) /* every column: zeros past K for the next layer's chunks */
        a[(r + i * NR) * LDA + j] = acc[i];
    barrier(CLK_LOCAL_MEM_FENCE);
}

/* sc = (Fourier scale, 2 / (n * outputs): the MSE gradient's factor) */
__kernel MLP_GROUP void
mlp_train(__global const float *x, __global const float *B, __global const float *params,
          __global const float *target, __global float *scratch, __global float *partial,
          __global float *loss_part, long n, float2 sc, ulong2 off)
{
    x += off.s0; /* element offsets of the caller's x and target */
    target += off.s1;
    /* the activation tiles (NL + 1 or 2), then the staged W chunk */
    __local float4 lb[(RESIDENT ? NL + 1 : 2) * (TP * LDA / 4) + (COLS * LDW + 3) / 4];
    __local float *base = (__local float *)lb, *wl = base + (RESIDENT ? NL + 1 : 2) * TP * LDA;
    const int lid = get_local_id(0), O = widths[NL], aout = acts[NL - 1];
    const long G = get_num_groups(0), g = get_group_id(0);
    __global float *scr = scratch + g * SCRATCH;
    __global float *part = partial + g * PSTRIDE;
    float sq = 0.0f;
    for (long t = g; t * TP < n; t += G) {
        const long first = t * TP;
        __local float *out = forward_tile(x, B, sc.x, params, first, n, base, scr, RESIDENT);
        /* dL/dz of the output layer, in place; padding rows and columns past O give 0 */
        for (int q = lid; q < TP * COLS; q += WG) {
            const int p = q / COLS, c = q - p * COLS;
            float d = 0.0f;
            if (c < O && first + p < n) {
                const float yv = out[p * LDA + c];
                const float e = yv - target[(first + p) * O + c];
                const float z = aout == 4 ? scr[soff[NL] + (NL - 1) * TP * COLS + p * COLS + c] : 0.0f;
                sq = fma(e, e, sq);
                d = sc.y * e * mlp_act_grad(aout, yv, z);
            }
            out[p * LDA + c] = d;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int l = NL - 1; l >= 0; l--) /* dL/dz of layer l's output in layer l + 1's tile */
            layer_bwd(l, params, ACT(base, l + 1, RESIDENT), ACT(base, l, RESIDENT), wl, scr, part,
                      t == g);
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    }
    /* the group's squared-error sum: a fixed tree */
    base[lid] = sq;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int w = WG / 2; w > 0; w >>= 1) {
        if (lid < w)
            base[lid] += base[lid + w];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        loss_part[g] = base[0];
}
