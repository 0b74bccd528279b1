/* Scaled-dot-product attention with register micro-tiles: forward, dQ and dK/dV (issue 20, speed).
 * Same arguments, layout, masks and results as attention.cl (read its banner: base-2 scores, q or k
 * pre-scaled by scale * log2 e, lse stored natural-log, fixed-order sums, no atomics); the host picks
 * this program or that one (CLT_ATTENTION_IMPL=tiled|rows).
 *
 * Why: attention.cl gives each item one whole row and reads the other operand from local memory at
 * every FMA, so it runs at local-memory speed (and its dK/dV kernel reads a different local row per
 * item). Here every product is a small GEMM: an item owns ATT_TR "own" rows x ATT_TC "stream" rows of
 * the score tile and, per float4 step along D, loads ATT_TR + ATT_TC float4s from local memory for
 * 4 * ATT_TR * ATT_TC FMAs (8 FMAs per load at 4x4); the P.V (or P^T.dO, dS^T.Q, dS.K) products read,
 * per 4 stream rows, one float4 of P per own row and one float4 of V per stream row and column chunk
 * (at 4 rows x 2 chunks: 12 loads for 128 FMAs). Counted in clang's PTX of the d64 forward (an
 * approximation of NVIDIA's compiler): 384 FMAs for 56 ld.shared.v4, of which 16 are reductions.
 *
 * Geometry, the same in all three kernels: a group owns ATT_BR "own" rows (query rows in fwd and dq,
 * key rows in dkdv) and streams tiles of ATT_BC rows of the other side. RY = BR/TR by CX = BC/TC
 * items; item (ty, tx) = (lid / CX, lid % CX) owns rows ty + RY r (r < TR) and, in the score tile,
 * stream rows tx + CX n (n < TC): adjacent items read adjacent (padded) local rows, so a warp's float4
 * loads hit distinct banks, and items of one ty read the same own row (a broadcast). In the
 * accumulation products the item owns the same rows x the float4 column chunks tx + CX w (w < D4/CX).
 * Local rows are padded by one float4 (D4 + 1) so that rows ty, ty+1.. start in different banks.
 *
 * attention_tiled_fwd (FlashAttention-2 order): Q tile in local memory for the group's life; per key
 *   tile: K to local; S = Q K^T micro-tile; row max over the CX items of a row through local memory
 *   (float4 reads, fixed order, every item of the row computes the same max); P = exp2(S - m) to
 *   local; the item's partial row sum l and its accumulator columns are rescaled by exp2(m_old - m);
 *   V is loaded into K's buffer (the barrier before P is read also ends every read of K), then
 *   O += P V. At the end the CX partial sums of l are added in a fixed order.
 * attention_tiled_bwd_dq: Q and dO tiles stay in local memory; D_i = dO_i . O_i from the item's
 *   columns, reduced like l, and written to delta_out[bh * sq + i] for the dK/dV kernel; per key
 *   tile: K and V to local, S and dP = dO V^T micro-tiles, dS = P (dP - D_i) to local, dQ += dS K.
 * attention_tiled_bwd_dkdv (enqueued after dq): K (pre-scaled) and V own tiles stay in local
 *   memory; per query tile: Q, dO, lse2 and D_i (dq's delta_out, the same values dq used) to local;
 *   S^T = K Q^T and dP^T = V dO^T micro-tiles, P^T and dS^T to local, dV += P^T dO, dK += dS^T Q.
 *   Why D_i comes from dq: computed here, every group re-read a query tile's O and dO rows from
 *   global memory (L2) with a third of its items, once per key group: at b8h8s1024d64, 32 key
 *   groups per head, 1 GB of extra L2 reads and a serial chain of loads before each tile.
 * attention_tiled_bwd_dkdv with ATT_DQ_FUSED=1 (the GPU default where BR == BC) also adds dQ: per
 *   query tile, dQ_tile += dS K_own (a fifth product, reading dS^T transposed from local memory), a
 *   read-modify-write of the tile in global memory. The key groups of a head add their parts to a
 *   query tile in a fixed order, descending key groups, so the sum's order is fixed (same bits
 *   every run, no float atomics): tickets[1 + tile] counts the parts added, and a group waits until
 *   it reads its position; the highest adder stores instead of adding. Descending, because under a
 *   causal mask key group kb covers query tiles kb.. in order and reaches tile t one step after
 *   group kb + 1 did: the groups run in lock step instead of waiting. Deadlock freedom: a group
 *   takes its (head, key group) from a launch counter (tickets[0]; CUB's single-pass scans do the
 *   same), in an order where every group it waits on took its number earlier, so has started and
 *   is running; the highest key group waits on nobody. The row deltas come from
 *   attention_tiled_bwd_delta (ATT_KERNEL 3), run first, which also zeroes the tickets. Why: the
 *   separate dQ kernel recomputes S and dP, 7 products in all against 5 here; on the H200
 *   (b8h8s1024d64) it took 1000 of the backward's 2252 us, the dK/dV kernel 1252 (stop 17's trace).
 * Without ATT_DQ_FUSED, dQ is its own kernel, recomputing S and dP, rather than partial dQ per key block reduced later.
 *   Estimate at b8h8s1024d64 (one GEMM-shaped product = 2 B H S^2 D = 8.6 GFLOP): recompute = 7
 *   products (60 GFLOP; dq's 3 cost ~0.8 ms at 33 TFLOP/s); partials = 5 products (43 GFLOP) plus a
 *   dS.K product in dkdv with a poor load ratio, a [Sk/BR, B, H, Sq, D] workspace (537 MB at BR 32:
 *   written once, read once by a fixed-order reduction, ~0.25 ms at 4 TB/s). Net gain ~0.2 ms of
 *   ~1.8, against a half-GB workspace that can fail for memory and a second kernel; the recompute
 *   needs nothing, so it came first. Revisit with the H200's numbers.
 * Loops over D and over tile rows are unrolled on GPUs (ATT_UNROLL=1) so that the micro-tiles stay in
 * registers; CPU devices (POCL) keep them rolled, as in attention.cl.
 *
 * -D contract: ATT_D (32, 64, 128), ATT_BR, ATT_BC, ATT_TR, ATT_TC with BR % TR == 0, BC % TC == 0,
 * CX = BC/TC a multiple of 4 dividing D/4, BC % 4 == 0; the group is (BR/TR)*(BC/TC) items. Local
 * memory (floats): fwd (BR+BC)(D+4) + BR(BC+4) + BR CX; dq 2(BR+BC)(D+4) + BR(BC+4) + BR CX;
 * dkdv 2(BR+BC)(D+4) + 2 BR(BC+4) + 2 BC (attention_tiled_params.c checks them against the budget).
 * ATT_ALIGNED, ATT_UNROLL as in attention.cl; ATT_KUNROLL, the unroll of the loops over D and tile
 * rows (2: ptxas gives the same 128 registers at 1, 2 and 4 for the d64 forward; the host passes
 * CLT_ATTENTION_TILED_OPTS through for sweeps). Tile loads stay rolled loops (one global round trip
 * per float4 an item loads, 4 per K tile): unrolled with selects they took 152-168 registers in
 * ptxas (3 groups per SM instead of 4); which wins needs the H200. ATT_KERNEL (0 fwd, 1 dq, 2 dkdv, 3 the fused backward's deltas) picks the one kernel
 * a build holds: each takes its own tiles, and the others' local arrays would not fit under them
 * (a program whose other kernel exceeds 48 KiB fails to build on NVIDIA).
 */

#ifndef ATT_D
#define ATT_D 64 // head dimension
#endif
#ifndef ATT_BR
#define ATT_BR 64 // own rows per group
#endif
#ifndef ATT_BC
#define ATT_BC 32 // stream rows per tile
#endif
#ifndef ATT_TR
#define ATT_TR 4 // own rows per item
#endif
#ifndef ATT_TC
#define ATT_TC 4 // stream rows per item in the score tile
#endif
#ifndef ATT_KERNEL
#define ATT_KERNEL 0 // which kernel the program holds: 0 fwd, 1 bwd_dq, 2 bwd_dkdv
#endif
#ifndef ATT_UNROLL
#define ATT_UNROLL 1 // unroll (GPU: micro-tiles in registers; CPU: 0, compile time)
#endif
#ifndef ATT_ALIGNED
#define ATT_ALIGNED 0 // every tensor offset is a multiple of 4 floats
#endif
#ifndef ATT_DQ_FUSED
#define ATT_DQ_FUSED 0 // the dK/dV kernel also adds dQ in key-group order (banner)
#endif
#ifndef ATT_KUNROLL
#define ATT_KUNROLL 2 // unroll of the loops over D and over tile rows (registers vs scheduling)
#endif
#define ATT_STR_(x) #x
#define ATT_PRAGMA_UNROLL_(n) _Pragma(ATT_STR_(unroll n))
#if ATT_UNROLL
#define ATT_LOOP _Pragma("unroll")
#define ATT_KLOOP ATT_PRAGMA_UNROLL_(ATT_KUNROLL)
#else
#define ATT_LOOP _Pragma("unroll 1")
#define ATT_KLOOP _Pragma("unroll 1")
#endif

#define D4 (ATT_D / 4)
#define DP (D4 + 1)               /* float4s per padded local row */
#define RY (ATT_BR / ATT_TR)      /* items along own rows */
#define CX (ATT_BC / ATT_TC)      /* items along stream rows */
#define NT (RY * CX)              /* group size */
#define CW (D4 / CX)              /* float4 column chunks per item in the accumulation products */
#define PS4 (ATT_BC / 4 + 1)      /* float4s per padded row of a P / dS tile */

#if ATT_D != 32 && ATT_D != 64 && ATT_D != 128
#error "ATT_D must be 32, 64 or 128"
#endif
#if ATT_BR % ATT_TR != 0 || ATT_BC % ATT_TC != 0 || ATT_BC % 4 != 0
#error "ATT_BR must be a multiple of ATT_TR, ATT_BC of ATT_TC and of 4"
#endif
#if CX % 4 != 0 || D4 % CX != 0
#error "ATT_BC / ATT_TC must be a multiple of 4 that divides ATT_D / 4"
#endif

#include "common/attention_io.h"
#include "common/fixed_group.h"

/* Component u (a constant after unrolling) of a float4. */
#define COMP(v, u) ((u) == 0 ? (v).x : (u) == 1 ? (v).y : (u) == 2 ? (v).z : (v).w)
/* a . b added to s, in a fixed order. */
#define DOT4_ACC(s, a, b) fma((a).w, (b).w, fma((a).z, (b).z, fma((a).y, (b).y, fma((a).x, (b).x, (s)))))

/* Rows row0 .. row0+nrows-1 of a [.., D] tensor (base in float4s) times mul into a padded local
 * tile; rows at or past `limit` become zeros. Consecutive items read consecutive float4s. */
static inline void load_rows(__local float4 *dst, __global const float *src, ulong off, ulong base,
                             uint row0, uint nrows, uint limit, float mul, uint lid)
{
    for (uint e = lid; e < nrows * D4; e += NT) {
        uint r = e / D4, c = e % D4, row = row0 + r;
        float4 x = (float4)(0.0f);
        if (row < limit)
            x = LOAD4(src, off, base + (ulong)row * D4 + c) * mul;
        dst[r * DP + c] = x;
    }
}

/* s[r][n] += a_own[r] . b_stream[n] over D, the item's micro-tile. */
#define MICRO_DOT(s, own, stream)                                                                  \
    ATT_KLOOP for (int c = 0; c < D4; c++)                                                         \
    {                                                                                              \
        float4 a_[ATT_TR], b_[ATT_TC];                                                             \
        ATT_LOOP for (int r = 0; r < ATT_TR; r++) a_[r] = (own)[(ty + RY * r) * DP + c];           \
        ATT_LOOP for (int n = 0; n < ATT_TC; n++) b_[n] = (stream)[(tx + CX * n) * DP + c];        \
        ATT_LOOP for (int r = 0; r < ATT_TR; r++) ATT_LOOP for (int n = 0; n < ATT_TC; n++)         \
            s[r][n] = DOT4_ACC(s[r][n], a_[r], b_[n]);                                             \
    }

/* acc[r][w] += sum over stream rows kk of P[own row r][kk] * src[kk][column chunk w]. */
#define MICRO_AXPY(acc, pt, src)                                                                   \
    ATT_KLOOP for (int kk = 0; kk < ATT_BC; kk += 4)                                               \
    {                                                                                              \
        float4 p_[ATT_TR];                                                                         \
        ATT_LOOP for (int r = 0; r < ATT_TR; r++) p_[r] = (pt)[(ty + RY * r) * PS4 + kk / 4];      \
        ATT_LOOP for (int u = 0; u < 4; u++) ATT_LOOP for (int w = 0; w < CW; w++)                 \
        {                                                                                          \
            float4 x_ = (src)[(kk + u) * DP + tx + CX * w];                                        \
            ATT_LOOP for (int r = 0; r < ATT_TR; r++) acc[r][w] =                                  \
                fma((float4)(COMP(p_[r], u)), x_, acc[r][w]);                                      \
        }                                                                                          \
    }

/* acc[r][w] += sum over own rows j of dS^T[j][stream row r] * src[j][column chunk w]: the dQ
 * product of the fused dK/dV kernel, whose dS tile is stored own-row major; the item's stream rows
 * are ty + RY r (BR == BC), so the 4 rows read per own row are one bank-friendly broadcast. */
/* Two [ATT_TR][CW] float4 accumulators set to zero. */
#define ZERO_ACC2(a, b)                                                                            \
    ATT_LOOP for (int r = 0; r < ATT_TR; r++) ATT_LOOP for (int w = 0; w < CW; w++)                \
        a[r][w] = b[r][w] = (float4)(0.0f);

/* A float4 of dQ read past every cache that could hold an older copy (another group's adds). */
#if ATT_ALIGNED
#define VOLATILE_LOAD4(p, off, idx) (((__global volatile const float4 *)((p) + (off)))[idx])
#else
#define VOLATILE_LOAD4(p, off, idx)                                                                \
    ((float4)(((__global volatile const float *)((p) + (off)))[4 * (idx)],                         \
              ((__global volatile const float *)((p) + (off)))[4 * (idx) + 1],                     \
              ((__global volatile const float *)((p) + (off)))[4 * (idx) + 2],                     \
              ((__global volatile const float *)((p) + (off)))[4 * (idx) + 3]))
#endif

#define MICRO_AXPY_T(acc, pt, src)                                                                 \
    ATT_KLOOP for (int j = 0; j < ATT_BR; j++)                                                     \
    {                                                                                              \
        float p_[ATT_TR];                                                                          \
        ATT_LOOP for (int r = 0; r < ATT_TR; r++) p_[r] = (pt)[j * (PS4 * 4) + ty + RY * r];       \
        ATT_LOOP for (int w = 0; w < CW; w++)                                                      \
        {                                                                                          \
            float4 x_ = (src)[j * DP + tx + CX * w];                                               \
            ATT_LOOP for (int r = 0; r < ATT_TR; r++) acc[r][w] =                                  \
                fma((float4)(p_[r]), x_, acc[r][w]);                                               \
        }                                                                                          \
    }

/* The fixed-order sum (or max) over the CX items of each own row of their values v[r]: written to
 * red, a barrier, read back as float4s. Every item of a row gets the same result. The caller
 * makes sure nobody still reads red. */
#define ROW_REDUCE(out, v, red, OP)                                                                \
    {                                                                                              \
        __local float *redf_ = (__local float *)(red);                                             \
        ATT_LOOP for (int r = 0; r < ATT_TR; r++) redf_[(ty + RY * r) * CX + tx] = v[r];           \
        barrier(CLK_LOCAL_MEM_FENCE);                                                              \
        ATT_LOOP for (int r = 0; r < ATT_TR; r++)                                                  \
        {                                                                                          \
            float4 t_ = (red)[(ty + RY * r) * (CX / 4)];                                           \
            float a_ = OP(OP(t_.x, t_.y), OP(t_.z, t_.w));                                         \
            ATT_LOOP for (int x = 1; x < CX / 4; x++)                                              \
            {                                                                                      \
                t_ = (red)[(ty + RY * r) * (CX / 4) + x];                                          \
                a_ = OP(a_, OP(OP(t_.x, t_.y), OP(t_.z, t_.w)));                                   \
            }                                                                                      \
            out[r] = a_;                                                                           \
        }                                                                                          \
    }
#define OP_ADD(a, b) ((a) + (b))

#if ATT_KERNEL == 0
__kernel CLT_FIXED_GROUP(NT) void
attention_tiled_fwd(__global const float *q, ulong q_off, __global const float *k, ulong k_off,
                    __global const float *v, ulong v_off, __global float *out, ulong out_off,
                    __global float *lse, ulong lse_off, int write_lse, __global const int *key_len,
                    ulong key_len_off, int has_len, uint heads, uint sq, uint sk, float scale_log2,
                    int causal)
{
    __local float4 qs[ATT_BR * DP];
    __local float4 kvs[ATT_BC * DP];
    __local float4 ps[ATT_BR * PS4];
    __local float4 red[ATT_BR * CX / 4];
    const uint lid = get_local_id(0), tx = lid % CX, ty = lid / CX;
    const uint bh = get_group_id(1);
    const uint row0 = get_group_id(0) * ATT_BR;
    uint kend = visible_keys(key_len, key_len_off, has_len, bh / heads, sk);
    if (causal && row0 + ATT_BR < kend)
        kend = row0 + ATT_BR;
    const ulong qbase = (ulong)bh * sq * D4, kbase = (ulong)bh * sk * D4;
    load_rows(qs, q, q_off, qbase, row0, ATT_BR, sq, scale_log2, lid);

    float4 acc[ATT_TR][CW];
    float m[ATT_TR], l[ATT_TR];
    ATT_LOOP
    for (int r = 0; r < ATT_TR; r++) {
        m[r] = -INFINITY;
        l[r] = 0.0f;
        ATT_LOOP
        for (int w = 0; w < CW; w++)
            acc[r][w] = (float4)(0.0f);
    }

    for (uint j0 = 0; j0 < kend; j0 += ATT_BC) {
        barrier(CLK_LOCAL_MEM_FENCE); /* the previous tile's P V is done with kvs and ps */
        load_rows(kvs, k, k_off, kbase, j0, ATT_BC, kend, 1.0f, lid);
        barrier(CLK_LOCAL_MEM_FENCE);
        float s[ATT_TR][ATT_TC];
        ATT_LOOP
        for (int r = 0; r < ATT_TR; r++)
            ATT_LOOP
            for (int n = 0; n < ATT_TC; n++)
                s[r][n] = 0.0f;
        MICRO_DOT(s, qs, kvs)
        float tmax[ATT_TR], rmax[ATT_TR];
        ATT_LOOP
        for (int r = 0; r < ATT_TR; r++) {
            uint i = row0 + ty + RY * r;
            tmax[r] = -INFINITY;
            ATT_LOOP
            for (int n = 0; n < ATT_TC; n++) {
                uint j = j0 + tx + CX * n;
                if (j >= kend || (causal && j > i))
                    s[r][n] = -INFINITY;
                tmax[r] = fmax(tmax[r], s[r][n]);
            }
        }
        /* The barrier inside also ends every read of K: V may replace it below. */
        ROW_REDUCE(rmax, tmax, red, fmax)
        __local float *psf = (__local float *)ps;
        ATT_LOOP
        for (int r = 0; r < ATT_TR; r++) {
            float m_new = fmax(m[r], rmax[r]);
            float alpha = m_new == -INFINITY ? 1.0f : exp2(m[r] - m_new);
            float part = 0.0f;
            ATT_LOOP
            for (int n = 0; n < ATT_TC; n++) {
                float p = m_new == -INFINITY ? 0.0f : exp2(s[r][n] - m_new);
                part += p;
                psf[(ty + RY * r) * (PS4 * 4) + tx + CX * n] = p;
            }
            l[r] = fma(l[r], alpha, part);
            m[r] = m_new;
            ATT_LOOP
            for (int w = 0; w < CW; w++)
                acc[r][w] *= alpha;
        }
        load_rows(kvs, v, v_off, kbase, j0, ATT_BC, kend, 1.0f, lid);
        barrier(CLK_LOCAL_MEM_FENCE);
        MICRO_AXPY(acc, ps, kvs)
    }
    /* Every read of red happened before the last barrier of the loop (or there was no loop). */
    float lt[ATT_TR];
    ROW_REDUCE(lt, l, red, OP_ADD)
    ATT_LOOP
    for (int r = 0; r < ATT_TR; r++) {
        uint i = row0 + ty + RY * r;
        if (i >= sq)
            continue;
        float inv = lt[r] > 0.0f ? 1.0f / lt[r] : 0.0f;
        ulong orow = qbase + (ulong)i * D4;
        ATT_LOOP
        for (int w = 0; w < CW; w++)
            STORE4(acc[r][w] * inv, out, out_off, orow + tx + CX * w);
        if (write_lse && tx == 0)
            lse[lse_off + (ulong)bh * sq + i] = lt[r] > 0.0f ? (m[r] + log2(lt[r])) * LN2 : -INFINITY;
    }
}

#endif

#if ATT_KERNEL == 1
__kernel CLT_FIXED_GROUP(NT) void
attention_tiled_bwd_dq(__global const float *q, ulong q_off, __global const float *k, ulong k_off,
                       __global const float *v, ulong v_off, __global const float *o, ulong o_off,
                       __global const float *lse, ulong lse_off, __global const float *d_o,
                       ulong do_off, __global float *dq, ulong dq_off, __global const int *key_len,
                       ulong key_len_off, int has_len, uint heads, uint sq, uint sk,
                       float scale_log2, float scale, int causal, __global float *delta_out)
{
    __local float4 qs[ATT_BR * DP];
    __local float4 dos[ATT_BR * DP];
    __local float4 ks[ATT_BC * DP];
    __local float4 vs[ATT_BC * DP];
    __local float4 ps[ATT_BR * PS4];
    __local float4 red[ATT_BR * CX / 4];
    const uint lid = get_local_id(0), tx = lid % CX, ty = lid / CX;
    const uint bh = get_group_id(1);
    const uint row0 = get_group_id(0) * ATT_BR;
    uint kend = visible_keys(key_len, key_len_off, has_len, bh / heads, sk);
    if (causal && row0 + ATT_BR < kend)
        kend = row0 + ATT_BR;
    const ulong qbase = (ulong)bh * sq * D4, kbase = (ulong)bh * sk * D4;
    load_rows(qs, q, q_off, qbase, row0, ATT_BR, sq, scale_log2, lid);
    load_rows(dos, d_o, do_off, qbase, row0, ATT_BR, sq, 1.0f, lid);
    barrier(CLK_LOCAL_MEM_FENCE);

    /* D_i = dO_i . O_i: the item's column chunks, then the row's fixed-order sum. */
    float4 acc[ATT_TR][CW];
    float part[ATT_TR], delta[ATT_TR], lse2[ATT_TR];
    ATT_LOOP
    for (int r = 0; r < ATT_TR; r++) {
        uint i = row0 + ty + RY * r;
        float4 a = (float4)(0.0f);
        ATT_LOOP
        for (int w = 0; w < CW; w++) {
            acc[r][w] = (float4)(0.0f);
            if (i < sq)
                a = fma(dos[(ty + RY * r) * DP + tx + CX * w],
                        LOAD4(o, o_off, qbase + (ulong)i * D4 + tx + CX * w), a);
        }
        part[r] = (a.x + a.y) + (a.z + a.w);
        lse2[r] = i < sq ? lse[lse_off + (ulong)bh * sq + i] * LOG2E : -INFINITY;
    }
    ROW_REDUCE(delta, part, red, OP_ADD)
    /* for attention_tiled_bwd_dkdv, which runs next (see its banner) */
    if (tx == 0) {
        ATT_LOOP
        for (int r = 0; r < ATT_TR; r++) {
            uint i = row0 + ty + RY * r;
            if (i < sq)
                delta_out[(ulong)bh * sq + i] = delta[r];
        }
    }

    for (uint j0 = 0; j0 < kend; j0 += ATT_BC) {
        barrier(CLK_LOCAL_MEM_FENCE); /* the previous tile's dS K is done with ks and ps */
        load_rows(ks, k, k_off, kbase, j0, ATT_BC, kend, 1.0f, lid);
        load_rows(vs, v, v_off, kbase, j0, ATT_BC, kend, 1.0f, lid);
        barrier(CLK_LOCAL_MEM_FENCE);
        float s[ATT_TR][ATT_TC], dp[ATT_TR][ATT_TC];
        ATT_LOOP
        for (int r = 0; r < ATT_TR; r++)
            ATT_LOOP
            for (int n = 0; n < ATT_TC; n++)
                s[r][n] = dp[r][n] = 0.0f;
        MICRO_DOT(s, qs, ks)
        MICRO_DOT(dp, dos, vs)
        __local float *psf = (__local float *)ps;
        ATT_LOOP
        for (int r = 0; r < ATT_TR; r++) {
            uint i = row0 + ty + RY * r;
            ATT_LOOP
            for (int n = 0; n < ATT_TC; n++) {
                uint j = j0 + tx + CX * n;
                int visible = lse2[r] != -INFINITY && j < kend && (!causal || j <= i);
                float p = visible ? exp2(s[r][n] - lse2[r]) : 0.0f;
                psf[(ty + RY * r) * (PS4 * 4) + tx + CX * n] = p * (dp[r][n] - delta[r]);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        MICRO_AXPY(acc, ps, ks)
    }
    ATT_LOOP
    for (int r = 0; r < ATT_TR; r++) {
        uint i = row0 + ty + RY * r;
        if (i >= sq)
            continue;
        ATT_LOOP
        for (int w = 0; w < CW; w++)
            STORE4(acc[r][w] * scale, dq, dq_off, qbase + (ulong)i * D4 + tx + CX * w);
    }
}

#endif

#if ATT_KERNEL == 2 && ATT_DQ_FUSED
/* With rotation (no causal mask; the host asks for it only where a head's key groups all fit on the
 * device at once) key group kb visits query tiles kb % nqt, kb % nqt + 1, .. wrapping, so it reaches
 * tile t at step a = (t - kb) mod nqt, one step after group kb + 1: the adders' order on tile t is
 * by (a, kb), and a group's position is its rank in it among the nkv adders: the groups of earlier
 * steps (residues t, t - 1, .., t - a + 1 mod nqt: nkv / nqt each, one more for residues below
 * nkv % nqt), then those of its own step with a lower kb (kb / nqt). */
static inline uint rotated_position(uint t, uint kb, uint nqt, uint nkv)
{
    const uint a = (t + nqt - kb % nqt) % nqt, q = nkv / nqt, rem = nkv % nqt;
    const int lo = (int)t - (int)a + 1;
    uint below; /* of the a residues t, t - 1, .., t - a + 1 (mod nqt), those under rem */
    if (lo >= 0)
        below = rem == 0 || (int)min(t, rem - 1) < lo ? 0u : min(t, rem - 1) - (uint)lo + 1;
    else
        below = min(t + 1, rem) + (rem > nqt + lo ? rem - (uint)((int)nqt + lo) : 0u);
    return a * q + below + kb / nqt;
}
#endif

#if ATT_KERNEL == 2
__kernel CLT_FIXED_GROUP(NT) void
attention_tiled_bwd_dkdv(__global const float *q, ulong q_off, __global const float *k,
                         ulong k_off, __global const float *v, ulong v_off,
                         __global const float *delta, ulong delta_off_unused,
                         __global const float *lse, ulong lse_off,
                         __global const float *d_o, ulong do_off, __global float *dk, ulong dk_off,
                         __global float *dv, ulong dv_off, __global const int *key_len,
                         ulong key_len_off, int has_len, uint heads, uint sq, uint sk,
                         float scale_log2, float scale, int causal
#if ATT_DQ_FUSED
                         , __global float *dq, ulong dq_off, __global volatile uint *tickets,
                         int rotate
#endif
                         )
{
    __local float4 kown[ATT_BR * DP];
    __local float4 vown[ATT_BR * DP];
    __local float4 qs[ATT_BC * DP];
    __local float4 dos[ATT_BC * DP];
    __local float4 ps[ATT_BR * PS4];
    __local float4 dss[ATT_BR * PS4];
    __local float lse2s[ATT_BC];
    __local float deltas[ATT_BC];
    const uint lid = get_local_id(0), tx = lid % CX, ty = lid / CX;
#if ATT_DQ_FUSED
    /* (head, key group) from the launch counter, key groups of a head in descending order (banner) */
    __local uint launch_number;
    if (lid == 0)
        launch_number = atomic_inc(tickets);
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint nkb = get_num_groups(0), bh = launch_number / nkb;
    const uint kb = nkb - 1 - launch_number % nkb;
#else
    const uint bh = get_group_id(1), kb = get_group_id(0);
#endif
    const uint key0 = kb * ATT_BR;
    const uint kvis = visible_keys(key_len, key_len_off, has_len, bh / heads, sk);
    const ulong qbase = (ulong)bh * sq * D4, kbase = (ulong)bh * sk * D4;
    /* k is pre-scaled like q in the forward pass; keys past the length are zeros (and masked). */
    load_rows(kown, k, k_off, kbase, key0, ATT_BR, kvis, scale_log2, lid);
    load_rows(vown, v, v_off, kbase, key0, ATT_BR, kvis, 1.0f, lid);

    float4 dka[ATT_TR][CW], dva[ATT_TR][CW];
    ZERO_ACC2(dka, dva)
    /* Query tiles that can see a key of this group: causal ones start at the tile holding query
     * key0; none when the group lies past the visible keys. */
    uint i_begin = causal ? key0 / ATT_BC * ATT_BC : 0;
    uint i_end = key0 < kvis ? sq : 0;
#if ATT_DQ_FUSED
#if ATT_BR != ATT_BC
#error "ATT_DQ_FUSED needs ATT_BR == ATT_BC"
#endif
    /* Group 0 covers every query tile even with no visible key, so that each dQ row gets a part
     * (here zero); a tile's adders are key groups 0 .. adders - 1. */
    const uint nqt = (sq + ATT_BC - 1) / ATT_BC;
    const uint nkv = kvis == 0 ? 1u : (kvis + ATT_BR - 1) / ATT_BR;
    if (kb == 0)
        i_end = sq;
    const float dq_mul = scale / scale_log2; /* kown holds K * scale_log2; dQ = scale dS K */
#endif
    /* The query tiles visited, in order: t_first, t_first + 1, .. (mod nqt when rotating) */
    const uint n_tiles = i_end > i_begin ? (i_end - i_begin + ATT_BC - 1) / ATT_BC : 0;
    uint t_first = i_begin / ATT_BC;
#if ATT_DQ_FUSED
    if (rotate)
        t_first = kb % nqt;
#endif

#if ATT_DQ_FUSED
    __global volatile uint *stored = 0; /* the count of the tile whose dQ rows were stored last */
#endif
    for (uint step = 0; step < n_tiles; step++) {
        uint t = t_first + step;
#if ATT_DQ_FUSED
        if (t >= nqt)
            t -= nqt;
#endif
        const uint i0 = t * ATT_BC;
        barrier(CLK_LOCAL_MEM_FENCE); /* the previous tile's products are done with the tiles */
        load_rows(qs, q, q_off, qbase, i0, ATT_BC, sq, 1.0f, lid);
        load_rows(dos, d_o, do_off, qbase, i0, ATT_BC, sq, 1.0f, lid);
        for (uint rr = lid; rr < ATT_BC; rr += NT) {
            uint i = i0 + rr;
            float l2 = -INFINITY, dl = 0.0f;
            if (i < sq) {
                dl = delta[(ulong)bh * sq + i];
                l2 = lse[lse_off + (ulong)bh * sq + i] * LOG2E;
            }
            lse2s[rr] = l2;
            deltas[rr] = dl;
        }
#if ATT_DQ_FUSED
        mem_fence(CLK_GLOBAL_MEM_FENCE); /* the previous tile's dQ rows, before its count */
        barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
        if (lid == 0 && stored)
            atomic_inc(stored);
#else
        barrier(CLK_LOCAL_MEM_FENCE);
#endif
        float s[ATT_TR][ATT_TC], dp[ATT_TR][ATT_TC];
        ATT_LOOP
        for (int r = 0; r < ATT_TR; r++)
            ATT_LOOP
            for (int n = 0; n < ATT_TC; n++)
                s[r][n] = dp[r][n] = 0.0f;
        MICRO_DOT(s, kown, qs)
        MICRO_DOT(dp, vown, dos)
        __local float *psf = (__local float *)ps, *dsf = (__local float *)dss;
        ATT_LOOP
        for (int r = 0; r < ATT_TR; r++) {
            uint j = key0 + ty + RY * r;
            ATT_LOOP
            for (int n = 0; n < ATT_TC; n++) {
                uint i = i0 + tx + CX * n;
                float l2 = lse2s[tx + CX * n];
                int visible = j < kvis && i < sq && l2 != -INFINITY && (!causal || j <= i);
                float p = visible ? exp2(s[r][n] - l2) : 0.0f;
                psf[(ty + RY * r) * (PS4 * 4) + tx + CX * n] = p;
                dsf[(ty + RY * r) * (PS4 * 4) + tx + CX * n] = p * (dp[r][n] - deltas[tx + CX * n]);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
#if ATT_DQ_FUSED
        /* dQ_tile += dS K_own, then this group's turn on the tile: the previous adder's rows are
         * read now and added after the dV and dK products (their latency hidden behind those);
         * the count is bumped after the next tile's loads, behind which the stores' fence hides. */
        float4 aq[ATT_TR][CW], old[ATT_TR][CW];
        ZERO_ACC2(aq, old)
        MICRO_AXPY_T(aq, dsf, kown)
        __global volatile uint *count = tickets + 1 + (ulong)bh * nqt + t;
        const uint position = rotate ? rotated_position(t, kb, nqt, nkv)
                                     : (causal ? min(t + 1, nkv) : nkv) - 1 - kb;
        while (*count != position)
            ;
        mem_fence(CLK_GLOBAL_MEM_FENCE); /* the previous adder's rows are read after its count */
        if (position != 0) {
            ATT_LOOP
            for (int r = 0; r < ATT_TR; r++) {
                uint i = i0 + ty + RY * r;
                ATT_LOOP
                for (int w = 0; w < CW; w++)
                    if (i < sq)
                        old[r][w] = VOLATILE_LOAD4(dq, dq_off, qbase + (ulong)i * D4 + tx + CX * w);
            }
        }
#endif
        MICRO_AXPY(dva, ps, dos)
        MICRO_AXPY(dka, dss, qs)
#if ATT_DQ_FUSED
        ATT_LOOP
        for (int r = 0; r < ATT_TR; r++) {
            uint i = i0 + ty + RY * r;
            ATT_LOOP
            for (int w = 0; w < CW; w++)
                if (i < sq)
                    STORE4(fma(aq[r][w], (float4)(dq_mul), old[r][w]), dq, dq_off,
                           qbase + (ulong)i * D4 + tx + CX * w);
        }
        stored = count;
#endif
    }
#if ATT_DQ_FUSED
    mem_fence(CLK_GLOBAL_MEM_FENCE); /* the last tile's rows are visible before its count */
    barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
    if (lid == 0 && stored)
        atomic_inc(stored);
#endif
    ATT_LOOP
    for (int r = 0; r < ATT_TR; r++) {
        uint j = key0 + ty + RY * r;
        if (j >= sk)
            continue;
        ulong krow = kbase + (ulong)j * D4;
        ATT_LOOP
        for (int w = 0; w < CW; w++) {
            STORE4(dka[r][w] * scale, dk, dk_off, krow + tx + CX * w);
            STORE4(dva[r][w], dv, dv_off, krow + tx + CX * w);
        }
    }
}
#endif

#if ATT_KERNEL == 3
/* D_i = dO_i . O_i for the fused backward (ATT_DQ_FUSED), and its tickets zeroed: 16 items per
 * row, each over the row's float4 columns c = lane, lane + 16, ..; the 16 parts summed in lane
 * order by lane 0. */
#define DELTA_LANES 16
#define DELTA_GROUP 256
__kernel CLT_FIXED_GROUP(DELTA_GROUP) void
attention_tiled_bwd_delta(__global const float *o, ulong o_off, __global const float *d_o,
                          ulong do_off, __global float *delta_out, ulong rows,
                          __global uint *tickets, ulong n_tickets)
{
    /* the dK/dV kernel's launch counter and tile counters start at zero (host: the grid covers them) */
    if (get_global_id(0) < n_tickets)
        tickets[get_global_id(0)] = 0u;
    __local float part[DELTA_GROUP];
    const uint lid = get_local_id(0), lane = lid % DELTA_LANES;
    const ulong row = get_group_id(0) * (ulong)(DELTA_GROUP / DELTA_LANES) + lid / DELTA_LANES;
    float4 a = (float4)(0.0f);
    if (row < rows)
        for (uint c = lane; c < D4; c += DELTA_LANES)
            a = fma(LOAD4(d_o, do_off, row * D4 + c), LOAD4(o, o_off, row * D4 + c), a);
    part[lid] = (a.x + a.y) + (a.z + a.w);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lane == 0 && row < rows) {
        float sum = part[lid];
        for (uint k = 1; k < DELTA_LANES; k++)
            sum += part[lid + k];
        delta_out[row] = sum;
    }
}
#endif
