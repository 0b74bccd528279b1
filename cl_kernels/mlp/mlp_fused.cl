/* Fully fused MLP (include/cltensor_mlp.h): the whole network of one tile of TP points inside one
 * work-group, activations in local memory, weights read through the caches (L1/L2).
 *
 * mlp_forward: one launch, one group per tile: encoding, every layer, the output rows.
 * mlp_train:   launch 1 of a training step. A persistent grid of G groups; group g takes tiles
 *   g, g + G, ... in that order: forward (each layer's input kept in the group's global scratch),
 *   the MSE loss and its gradient, the backward through every layer, and the tile's weight and
 *   bias gradients added into the group's own slice of `partial` ([G][PSTRIDE]; the first tile
 *   writes, later tiles add: no atomics, a fixed order). The group's sum of squared errors goes to
 *   loss_part[g], and the last group to finish adds them into the loss (a fixed order).
 * Launch 2 of the step is mlp_update (mlp_update.cl): the fixed-order sum of the partials fused
 *   with the optimizer. The loss's read goes between the two launches.
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
 * to scratch), RT (1: the register-tiled layers, 4 columns x PPI points per item, for big
 * tiles); CLT_REQD (common/fixed_group.h).
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
#ifndef RT
#define RT 0
#endif
/* On NVIDIA the host rebuilds a variant without the attribute (-DCLT_REQD=0) when ptxas spilled
 * with it (common/fixed_group.h, src/program/fixed_group_build.c): with it ptxas lowers mlp_train
 * to 40-48 registers to fit a fifth group per SM, spilling 12-64 B (bench/results/h200/
 * nv_spills.md); without it 64 registers, no spill, pinn_train_step within 1% (94.5 vs 95.4 us at
 * 200 points, equal at 1000 and 10000). 11 of the H200's 21 variants are rebuilt so. */
#include "common/fixed_group.h"
#include "common/last_group.h"
#include "common/mlp_net.h"
#define MLP_GROUP CLT_FIXED_GROUP(WG)
#define TP (NR * PPI)
#if RT
#define RQ (COLS / 4) /* items across a row: 4 columns each */
#define NR (WG / RQ)
#else
#define NR (WG / COLS)
#endif
#define LDA (COLS + 4) /* local row stride: float4-aligned rows; the weight gradient's 4-wide
                          blocks read up to 3 columns past a width */
#define LDW (BWC + 1)  /* the staged weight chunk's row stride: conflict-free row reads */
/* Layer l's input tile [TP][LDA] in the group's local activations: its own with RESIDENT, else
 * one of two alternating (layer l + 1's input overwrites layer l - 1's) */
#define ACT(base, l, resident) ((base) + ((resident) ? (l) : ((l) & 1)) * (TP * LDA))

#if KC % 4 != 0 || BWC % 4 != 0 || BWC > COLS
#error "KC and BWC must be multiples of 4, BWC at most COLS"
#endif

#if WG % (RT ? COLS / 4 : COLS) != 0
#error "WG must be a multiple of the items across a row"
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

/* Silu layers keep z (the pre-activation) of layer l's output for the backward in the group's
 * scratch: its place for point p, column c of the tile */
#define ZAT(l, p, c) (soff[NL] + (l) * TP * COLS + (p) * COLS + (c))

/* Output (p, col) of layer l with pre-activation z: act(z) into the next tile, and z into the
 * scratch for a silu layer when training (scr given) */
static inline void put_out(int l, int a, __local float *nxt, __global float *scr, int p, int col,
                           float z)
{
    nxt[p * LDA + col] = act_fwd(a, z);
    if (scr && a == 4)
        scr[ZAT(l, p, col)] = z;
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
        for (int i = 0; i < PPI; i++)
            put_out(l, a, nxt, scr, r + i * NR, j, acc[i]);
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
}

#if RT
/* row[j .. j + 3] of a weight row (zeros at and past lim; vec: every row float4-aligned and
 * j + 3 < lim) */
static inline float4 w4(__global const float *row, int j, int lim, int vec)
{
    if (vec)
        return *(__global const float4 *)(row + j);
    return (float4)(j < lim ? row[j] : 0.0f, j + 1 < lim ? row[j + 1] : 0.0f,
                    j + 2 < lim ? row[j + 2] : 0.0f, j + 3 < lim ? row[j + 3] : 0.0f);
}

/* A layer of at most 4 outputs (the PINN's last) in RT: one column quad would leave one item per
 * row with all of K (as long as a 128-wide layer), so item (r, lane) sums its k = lane,
 * lane + RQ, .. for the row's points (narrow_part, into nxt, which holds TP * COLS floats) and the
 * RQ partial sums of each output are added in order lane = 0.. (narrow_sum: a fixed order). Was
 * 8 of the 70 us of pinn_forward/10000 on the H200 before this split. */
#define NZ ((TP * 4 + WG - 1) / WG) /* outputs (point, column of 4) per item */
static inline void narrow_part(__global const float *W, int K, int O, __local const float *cur,
                               __local float *nxt)
{
    const int lid = get_local_id(0), lane = lid % RQ, r = lid / RQ;
    float4 acc[PPI];
#pragma unroll
    for (int i = 0; i < PPI; i++)
        acc[i] = (float4)(0.0f);
    for (int k = lane; k < K; k += RQ) {
        const float4 wk = w4(W + k * O, 0, O, 0);
#pragma unroll
        for (int i = 0; i < PPI; i++)
            acc[i] = fma((float4)(cur[(r + i * NR) * LDA + k]), wk, acc[i]);
    }
#pragma unroll
    for (int i = 0; i < PPI; i++) /* [r][lane][i] */
        ((__local float4 *)nxt)[(r * RQ + lane) * PPI + i] = acc[i];
}

/* z[u] of output q = lid + u WG (point p = q / 4 = r' + i' NR, column q % 4) */
static inline void narrow_sum(__global const float *W, int K, int O, __local const float *nxt,
                              float *z)
{
    const int lid = get_local_id(0);
#pragma unroll
    for (int u = 0; u < NZ; u++) {
        const int q = lid + u * WG, p = q / 4, c = q % 4;
        z[u] = 0.0f;
        if (q < TP * 4 && c < O) {
            __local const float *src = nxt + ((p % NR) * RQ * PPI + p / NR) * 4 + c;
            float t = W[K * O + c];
            for (int ln = 0; ln < RQ; ln++)
                t += src[ln * PPI * 4];
            z[u] = t;
        }
    }
}

/* The register-tiled layer (RT, big tiles): item (r, jq) computes columns 4 jq .. 4 jq + 3 of the
 * points r, r + NR, ..: per k one float4 of W (a warp reads 512 contiguous bytes; the group's
 * other rows hit L1) and one broadcast activation per point feed 4 * PPI FMAs. The one-column
 * items of layer_fwd spent one local load per 4 FMAs, which bounded the big tiles by the local
 * memory pipe; here it is PPI local loads per 16 PPI FMAs (H200, with narrow_part below:
 * pinn_forward/10000 82 -> 62 us, issue 19). KC rows of W per chunk, the next in flight.
 * Same contract as layer_fwd. */
static inline void layer_fwd_rt(int l, __global const float *params, __local const float *cur,
                                __local float *nxt, __global float *scr, int save)
{
    const int K = widths[l], O = widths[l + 1], a = acts[l];
    const int lid = get_local_id(0), j0 = 4 * (lid % RQ), r = lid / RQ;
    __global const float *W = params + poff[l];
    if (scr && save)
        for (int q = lid; q < TP * K; q += WG)
            scr[soff[l] + q] = cur[(q / K) * LDA + q % K];
    /* one column quad: split k across the row instead. Narrow and wide layers take the same
     * barriers: with narrow_part's barriers under `if (narrow)` POCL's forward came out wrong
     * (private values not kept across a conditional barrier; not root-caused in POCL) */
    const int narrow = O <= 4;
    float z[NZ];
    if (narrow)
        narrow_part(W, K, O, cur, nxt);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (narrow)
        narrow_sum(W, K, O, nxt, z);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (narrow)
#pragma unroll
        for (int u = 0; u < NZ; u++) {
            const int q = lid + u * WG, p = q / 4, c = q % 4;
            if (q < TP * 4 && c < O)
                put_out(l, a, nxt, scr, p, c, z[u]);
        }
    if (!narrow && j0 < O) {
        const int vec = (O & 3) == 0 && (poff[l] & 3) == 0;
        const float4 b = w4(W + K * O, j0, O, vec);
        float4 acc[PPI];
#pragma unroll
        for (int i = 0; i < PPI; i++)
            acc[i] = b;
        const int full = K / KC * KC;
        float4 wn[KC];
        if (full > 0)
#pragma unroll
            for (int t = 0; t < KC; t++)
                wn[t] = w4(W + t * O, j0, O, vec);
        for (int k0 = 0; k0 < full; k0 += KC) {
            float4 w[KC];
#pragma unroll
            for (int t = 0; t < KC; t++)
                w[t] = wn[t];
            if (k0 + KC < full)
#pragma unroll
                for (int t = 0; t < KC; t++)
                    wn[t] = w4(W + (k0 + KC + t) * O, j0, O, vec);
#pragma unroll
            for (int t = 0; t < KC; t += 4)
#pragma unroll
                for (int i = 0; i < PPI; i++) {
                    const float4 av = *(__local const float4 *)(cur + (r + i * NR) * LDA + k0 + t);
                    acc[i] = fma((float4)(av.x), w[t], acc[i]);
                    acc[i] = fma((float4)(av.y), w[t + 1], acc[i]);
                    acc[i] = fma((float4)(av.z), w[t + 2], acc[i]);
                    acc[i] = fma((float4)(av.w), w[t + 3], acc[i]);
                }
        }
        for (int k = full; k < K; k++) {
            const float4 wk = w4(W + k * O, j0, O, vec);
#pragma unroll
            for (int i = 0; i < PPI; i++)
                acc[i] = fma((float4)(cur[(r + i * NR) * LDA + k]), wk, acc[i]);
        }
#pragma unroll
        for (int i = 0; i < PPI; i++) {
            const float zc[4] = {acc[i].x, acc[i].y, acc[i].z, acc[i].w};
#pragma unroll
            for (int c = 0; c < 4; c++)
                if (j0 + c < O)
                    put_out(l, a, nxt, scr, r + i * NR, j0 + c, zc[c]);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
}
#define LAYER_FWD layer_fwd_rt
#else
#define LAYER_FWD layer_fwd
#endif

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
        LAYER_FWD(l, params, ACT(base, l, resident), ACT(base, l + 1, resident), scr, !resident);
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

#if RT
/* W_l[k][o .. o + 3] (zeros past K or O) */
static inline float4 wq(__global const float *W, int k, int o, int K, int O, int vec)
{
    return k < K ? w4(W + k * O, o, O, vec) : (float4)(0.0f);
}

/* The register-tiled input gradient (RT): dL/dz of layer l - 1 = (G W_l^T) * act'(A_l), item
 * (r, kq) computing inputs 4 kq .. 4 kq + 3 of the points r, r + NR, ..: per 4 outputs o one
 * float4 of each of its 4 rows of W (read straight from L1/L2: each lane's 16 bytes are half a
 * sector, whose other half is the next step's) and one broadcast float4 of G per point feed
 * 16 PPI FMAs, with no staging through local memory and no barrier inside. KC outputs per chunk,
 * the next chunk's loads in flight. Writes every column of a (zeros past K). */
static inline void input_grad_rt(int l, __global const float *W, int K, int O,
                                 __local const float *g, __local float *a, __global const float *scr)
{
    const int lid = get_local_id(0), k0 = 4 * (lid % RQ), r = lid / RQ, ap = acts[l - 1];
    const int vec = (O & 3) == 0 && (poff[l] & 3) == 0;
    float4 acc[PPI];
#pragma unroll
    for (int i = 0; i < PPI; i++)
        acc[i] = (float4)(0.0f);
    if (k0 < K) {
        const int full = O / KC * KC;
        float4 wn[KC]; /* [step t / 4][row c] of the chunk: rows k0 + c, outputs o0 + t .. + 3 */
        if (full > 0)
#pragma unroll
            for (int t = 0; t < KC; t += 4)
#pragma unroll
                for (int c = 0; c < 4; c++)
                    wn[t + c] = wq(W, k0 + c, t, K, O, vec);
        for (int o0 = 0; o0 < full; o0 += KC) {
            float4 w[KC];
#pragma unroll
            for (int t = 0; t < KC; t++)
                w[t] = wn[t];
            if (o0 + KC < full)
#pragma unroll
                for (int t = 0; t < KC; t += 4)
#pragma unroll
                    for (int c = 0; c < 4; c++)
                        wn[t + c] = wq(W, k0 + c, o0 + KC + t, K, O, vec);
#pragma unroll
            for (int t = 0; t < KC; t += 4) {
                /* the 4 x 4 block transposed: column e = W[k0 .. k0 + 3][o0 + t + e] */
                const float4 c0 = (float4)(w[t].x, w[t + 1].x, w[t + 2].x, w[t + 3].x);
                const float4 c1 = (float4)(w[t].y, w[t + 1].y, w[t + 2].y, w[t + 3].y);
                const float4 c2 = (float4)(w[t].z, w[t + 1].z, w[t + 2].z, w[t + 3].z);
                const float4 c3 = (float4)(w[t].w, w[t + 1].w, w[t + 2].w, w[t + 3].w);
#pragma unroll
                for (int i = 0; i < PPI; i++) {
                    const float4 gv = *(__local const float4 *)(g + (r + i * NR) * LDA + o0 + t);
                    acc[i] = fma((float4)(gv.x), c0, acc[i]);
                    acc[i] = fma((float4)(gv.y), c1, acc[i]);
                    acc[i] = fma((float4)(gv.z), c2, acc[i]);
                    acc[i] = fma((float4)(gv.w), c3, acc[i]);
                }
            }
        }
        for (int o = full; o < O; o++) { /* G's columns past O are zero, W's loads masked */
            const float4 cw = (float4)(k0 < K ? W[k0 * O + o] : 0.0f,
                                       k0 + 1 < K ? W[(k0 + 1) * O + o] : 0.0f,
                                       k0 + 2 < K ? W[(k0 + 2) * O + o] : 0.0f,
                                       k0 + 3 < K ? W[(k0 + 3) * O + o] : 0.0f);
#pragma unroll
            for (int i = 0; i < PPI; i++)
                acc[i] = fma((float4)(g[(r + i * NR) * LDA + o]), cw, acc[i]);
        }
#pragma unroll
        for (int i = 0; i < PPI; i++) {
            const int p = r + i * NR;
            float v[4] = {acc[i].x, acc[i].y, acc[i].z, acc[i].w};
#pragma unroll
            for (int c = 0; c < 4; c++) {
                const int k = k0 + c;
                const float z = ap == 4 && k < K ? scr[ZAT(l - 1, p, k)] : 0.0f;
                v[c] = k < K ? v[c] * mlp_act_grad(ap, a[p * LDA + k], z) : 0.0f;
            }
            acc[i] = (float4)(v[0], v[1], v[2], v[3]);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (int i = 0; i < PPI; i++) /* every column: zeros past K for the next layer */
        *(__local float4 *)(a + (r + i * NR) * LDA + k0) = acc[i];
    barrier(CLK_LOCAL_MEM_FENCE);
}
#endif

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
    const int lid = get_local_id(0);
    __global const float *W = params + poff[l];
#if !RT
    float pre[SPI];
    if (l > 0) /* the first chunk's loads overlap the weight gradient */
        chunk_load(W, K, O, 0, pre);
#endif
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
#if RT
    input_grad_rt(l, W, K, O, g, a, scr);
#else
    /* input gradient: item (r, k = j) */
    const int j = lid % COLS, r = lid / COLS, ap = acts[l - 1];
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
            const float z = ap == 4 ? scr[ZAT(l - 1, p, j)] : 0.0f;
            acc[i] *= mlp_act_grad(ap, a[p * LDA + j], z);
        }
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (int i = 0; i < PPI; i++) /* every column: zeros past K for the next layer's chunks */
        a[(r + i * NR) * LDA + j] = acc[i];
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
}

/* The sum of WG values v of the group's items, in a fixed tree (the result in red[0], every item
 * past the last barrier) */
static inline void group_tree(__local float *red, float v)
{
    const int lid = get_local_id(0);
    red[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int w = WG / 2; w > 0; w >>= 1) {
        if (lid < w)
            red[lid] += red[lid + w];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

/* sc = (Fourier scale, 2 / (n * outputs): the MSE gradient's factor). The last group to finish
 * (common/last_group.h) sums the groups' squared-error sums in a fixed order into loss[0] when
 * want_loss, so the loss can be read before mlp_update runs: the host then has the loss while
 * the update is still running (issue 19). counter: zero before the launch, zero after it. */
__kernel MLP_GROUP void
mlp_train(__global const float *x, __global const float *B, __global const float *params,
          __global const float *target, __global float *scratch, __global float *partial,
          __global float *loss_part, long n, float2 sc, ulong2 off, __global float *loss,
          __global volatile uint *counter, int want_loss)
{
    x += off.s0; /* element offsets of the caller's x and target */
    target += off.s1;
    /* the activation tiles (NL + 1 or 2), then the staged W chunk */
    __local float4 lb[(RESIDENT ? NL + 1 : 2) * (TP * LDA / 4) + (RT ? 1 : (COLS * LDW + 3) / 4)];
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
                const float z = aout == 4 ? scr[ZAT(NL - 1, p, c)] : 0.0f;
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
    group_tree(base, sq);
    __global volatile float *lp = (__global volatile float *)loss_part;
    if (lid == 0)
        lp[g] = base[0];
    /* every group takes the same barriers (no barrier under a uniform if: layer_fwd_rt) */
    __local volatile int last_flag;
    const int last = last_group_arrives(counter, (uint)G, &last_flag, (uint)lid);
    float acc = 0.0f;
    if (last && want_loss)
        for (long q = lid; q < G; q += WG)
            acc += lp[q];
    group_tree(base, acc);
    if (last && want_loss && lid == 0)
        loss[0] = base[0] * (0.5f * sc.y); /* 1 / (n * outputs), exactly */
    if (last)
        last_group_reset(counter, (uint)lid);
}
