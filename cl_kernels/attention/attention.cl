/* Scaled-dot-product attention, flash-style: forward, and the two backward kernels.
 *
 * Layout: Q, O, dO, dQ [B, H, Sq, D]; K, V, dK, dV [B, H, Sk, D]; lse [B, H, Sq]; f32, rows of D
 * contiguous, each tensor a buffer plus an element offset. key_len (i32 [B], optional) hides keys
 * j >= key_len[b] (clamped to [0, Sk] here, so a bad value never reads outside K or V); causal
 * hides keys j > i. The grid's dimension 1 is b * H + h.
 *
 * Scores are kept in base 2: q is multiplied once by scale * log2(e), so p = exp2(s - m); the
 * stored lse is natural-log (lse2 * ln 2), as the header promises.
 *
 * attention_fwd: a work-group of ATT_BM items owns ATT_BM query rows (one row per item: its q and
 *   its output accumulator live in registers). Key/value tiles of ATT_BN rows are loaded by the whole
 *   group into local memory and read by every item at the same address (a broadcast); the item
 *   keeps the online softmax state (m, l) and rescales its accumulator when m grows. Causal groups
 *   stop at the last key their last row sees. A row that sees no key writes 0 and lse = -inf.
 * attention_bwd_dq: the same split (ATT_BM query rows per group, K/V tiles of ATT_BN rows):
 *   D_i = dO_i . O_i from the item's own rows, then for each key p = exp2(s - lse2),
 *   dp = dO_i . v_j, ds = p (dp - D_i), dq += ds k_j; dq is scaled by `scale` at the end.
 * attention_bwd_dkdv: a group of ATT_BN items owns ATT_BN key rows (their k and v rows sit in
 *   local memory, padded so items read distinct banks; the dk and dv accumulators in registers).
 *   Query tiles of ATT_BM rows (q, dO, lse2 and D_i, computed here from O and dO) go to local memory
 *   and are read as broadcasts: dv += p dO_i, dk += ds q_i. Causal groups start at the first query
 *   tile that sees their first key. Keys that no query sees write zeros.
 * Every sum has a fixed order, no atomics: the results are deterministic.
 *
 * Loads are float4 (vload4: any element offset works; ATT_ALIGNED=1 when every offset is a
 * multiple of 4, so plain float4 pointers can be used).
 *
 * ATT_UNROLL=0 (CPU devices) keeps every loop rolled: POCL compiles the unrolled
 * bodies for minutes and runs them no faster.
 *
 * ATT_CPU=1 (the CPU device class only) adds attention_fwd_cpu, attention_bwd_dq_cpu and
 * attention_bwd_dkdv_cpu at the end of this file: the same three passes without local memory or
 * barriers, one row per item in float16 vectors (described there). GPU classes never build them.
 *
 * -D contract: ATT_D (32, 64 or 128), ATT_BM and ATT_BN (the group sizes named above; the host
 * checks them against CL_KERNEL_WORK_GROUP_SIZE and the local memory budget: fwd and dq use
 * 2 * ATT_BN * ATT_D floats, dkdv 2 * ATT_BM * ATT_D + 2 * ATT_BN * (ATT_D + 4) + 2 * ATT_BM).
 */

#ifndef ATT_D
#define ATT_D 64 // head dimension
#endif
#ifndef ATT_BM
#define ATT_BM 64 // query rows per tile
#endif
#ifndef ATT_BN
#define ATT_BN 32 // key rows per tile
#endif
#ifndef ATT_UNROLL
#define ATT_UNROLL 1 // unroll loops (GPU: private arrays in registers; CPU: 0, compile time).
#endif
/* Before each loop over head-dim chunks or tile rows: unrolled, or kept rolled. _Pragma is taken by
 * every front end we build for (POCL's clang, NVIDIA's, clang for the AMD ISA check). */
#if ATT_UNROLL
#define ATT_LOOP _Pragma("unroll")
#else
#define ATT_LOOP _Pragma("unroll 1")
#endif
#ifndef ATT_ALIGNED
#define ATT_ALIGNED 0 // every tensor offset is a multiple of 4 floats
#endif

#if ATT_D != 32 && ATT_D != 64 && ATT_D != 128
#error "ATT_D must be 32, 64 or 128"
#endif
#if ATT_BM < 1 || ATT_BN < 1
#error "ATT_BM and ATT_BN must be positive"
#endif

#define D4 (ATT_D / 4)
#define OWN_STRIDE (D4 + 1) /* float4s per padded own row in local memory */

#include "common/attention_io.h"

static inline float hsum4(float4 a) { return (a.x + a.y) + (a.z + a.w); }

__kernel __attribute__((reqd_work_group_size(ATT_BM, 1, 1))) void
attention_fwd(__global const float *q, ulong q_off, __global const float *k, ulong k_off,
              __global const float *v, ulong v_off, __global float *out, ulong out_off,
              __global float *lse, ulong lse_off, int write_lse, __global const int *key_len,
              ulong key_len_off, int has_len, uint heads, uint sq, uint sk, float scale_log2,
              int causal)
{
    __local float4 ks[ATT_BN * D4];
    __local float4 vs[ATT_BN * D4];
    const uint t = get_local_id(0);
    const uint bh = get_group_id(1);
    const uint row0 = get_group_id(0) * ATT_BM;
    const uint i = row0 + t;
    const int live = i < sq;
    const uint kvis = visible_keys(key_len, key_len_off, has_len, bh / heads, sk);
    uint kend = kvis;
    if (causal && row0 + ATT_BM < kend)
        kend = row0 + ATT_BM;
    const ulong qrow = ((ulong)bh * sq + (live ? i : 0)) * D4;
    const ulong kbase = (ulong)bh * sk * D4;

    float4 qr[D4], acc[D4];
    ATT_LOOP
    for (int c = 0; c < D4; c++) {
        qr[c] = live ? LOAD4(q, q_off, qrow + c) * scale_log2 : (float4)(0.0f);
        acc[c] = (float4)(0.0f);
    }
    float m = -INFINITY, l = 0.0f;

    for (uint j0 = 0; j0 < kend; j0 += ATT_BN) {
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint e = t; e < ATT_BN * D4; e += ATT_BM) {
            uint r = e / D4, c = e % D4, j = j0 + r;
            float4 kv = (float4)(0.0f), vv = (float4)(0.0f);
            if (j < kend) {
                kv = LOAD4(k, k_off, kbase + (ulong)j * D4 + c);
                vv = LOAD4(v, v_off, kbase + (ulong)j * D4 + c);
            }
            ks[e] = kv;
            vs[e] = vv;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        float s[ATT_BN];
        float tile_max = -INFINITY;
        ATT_LOOP
        for (int jj = 0; jj < ATT_BN; jj++) {
            float4 a = (float4)(0.0f);
            ATT_LOOP
            for (int c = 0; c < D4; c++)
                a = fma(qr[c], ks[jj * D4 + c], a);
            uint j = j0 + jj;
            int visible = j < kend && (!causal || j <= i);
            s[jj] = visible ? hsum4(a) : -INFINITY;
            tile_max = fmax(tile_max, s[jj]);
        }
        float m_new = fmax(m, tile_max);
        if (m_new == -INFINITY)
            continue; /* nothing visible yet: the state stays empty */
        float alpha = exp2(m - m_new);
        l *= alpha;
        ATT_LOOP
        for (int c = 0; c < D4; c++)
            acc[c] *= alpha;
        ATT_LOOP
        for (int jj = 0; jj < ATT_BN; jj++) {
            float p = exp2(s[jj] - m_new);
            l += p;
            ATT_LOOP
            for (int c = 0; c < D4; c++)
                acc[c] = fma((float4)(p), vs[jj * D4 + c], acc[c]);
        }
        m = m_new;
    }
    if (!live)
        return;
    float inv = l > 0.0f ? 1.0f / l : 0.0f;
    ATT_LOOP
    for (int c = 0; c < D4; c++)
        STORE4(acc[c] * inv, out, out_off, qrow + c);
    if (write_lse)
        lse[lse_off + (ulong)bh * sq + i] = l > 0.0f ? (m + log2(l)) * LN2 : -INFINITY;
}

__kernel __attribute__((reqd_work_group_size(ATT_BM, 1, 1))) void
attention_bwd_dq(__global const float *q, ulong q_off, __global const float *k, ulong k_off,
                 __global const float *v, ulong v_off, __global const float *o, ulong o_off,
                 __global const float *lse, ulong lse_off, __global const float *d_o, ulong do_off,
                 __global float *dq, ulong dq_off, __global const int *key_len, ulong key_len_off,
                 int has_len, uint heads, uint sq, uint sk, float scale_log2, float scale,
                 int causal)
{
    __local float4 ks[ATT_BN * D4];
    __local float4 vs[ATT_BN * D4];
    const uint t = get_local_id(0);
    const uint bh = get_group_id(1);
    const uint row0 = get_group_id(0) * ATT_BM;
    const uint i = row0 + t;
    const int live = i < sq;
    const uint kvis = visible_keys(key_len, key_len_off, has_len, bh / heads, sk);
    uint kend = kvis;
    if (causal && row0 + ATT_BM < kend)
        kend = row0 + ATT_BM;
    const ulong qrow = ((ulong)bh * sq + (live ? i : 0)) * D4;
    const ulong kbase = (ulong)bh * sk * D4;

    float4 qr[D4], dor[D4], acc[D4];
    float4 delta4 = (float4)(0.0f);
    ATT_LOOP
    for (int c = 0; c < D4; c++) {
        qr[c] = live ? LOAD4(q, q_off, qrow + c) * scale_log2 : (float4)(0.0f);
        dor[c] = live ? LOAD4(d_o, do_off, qrow + c) : (float4)(0.0f);
        if (live)
            delta4 = fma(dor[c], LOAD4(o, o_off, qrow + c), delta4);
        acc[c] = (float4)(0.0f);
    }
    const float delta = hsum4(delta4);
    float lse2 = live ? lse[lse_off + (ulong)bh * sq + i] * LOG2E : -INFINITY;
    const int any = lse2 != -INFINITY; /* a row that saw no key has no gradient */

    for (uint j0 = 0; j0 < kend; j0 += ATT_BN) {
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint e = t; e < ATT_BN * D4; e += ATT_BM) {
            uint r = e / D4, c = e % D4, j = j0 + r;
            float4 kv = (float4)(0.0f), vv = (float4)(0.0f);
            if (j < kend) {
                kv = LOAD4(k, k_off, kbase + (ulong)j * D4 + c);
                vv = LOAD4(v, v_off, kbase + (ulong)j * D4 + c);
            }
            ks[e] = kv;
            vs[e] = vv;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        ATT_LOOP
        for (int jj = 0; jj < ATT_BN; jj++) {
            float4 a = (float4)(0.0f), b = (float4)(0.0f);
            ATT_LOOP
            for (int c = 0; c < D4; c++) {
                a = fma(qr[c], ks[jj * D4 + c], a);
                b = fma(dor[c], vs[jj * D4 + c], b);
            }
            uint j = j0 + jj;
            int visible = any && j < kend && (!causal || j <= i);
            float p = visible ? exp2(hsum4(a) - lse2) : 0.0f;
            float ds = p * (hsum4(b) - delta);
            ATT_LOOP
            for (int c = 0; c < D4; c++)
                acc[c] = fma((float4)(ds), ks[jj * D4 + c], acc[c]);
        }
    }
    if (!live)
        return;
    ATT_LOOP
    for (int c = 0; c < D4; c++)
        STORE4(acc[c] * scale, dq, dq_off, qrow + c);
}

__kernel __attribute__((reqd_work_group_size(ATT_BN, 1, 1))) void
attention_bwd_dkdv(__global const float *q, ulong q_off, __global const float *k, ulong k_off,
                   __global const float *v, ulong v_off, __global const float *o, ulong o_off,
                   __global const float *lse, ulong lse_off, __global const float *d_o,
                   ulong do_off, __global float *dk, ulong dk_off, __global float *dv,
                   ulong dv_off, __global const int *key_len, ulong key_len_off, int has_len,
                   uint heads, uint sq, uint sk, float scale_log2, float scale, int causal)
{
    __local float4 qs[ATT_BM * D4];
    __local float4 dos[ATT_BM * D4];
    __local float4 kown[ATT_BN * OWN_STRIDE];
    __local float4 vown[ATT_BN * OWN_STRIDE];
    __local float lse2s[ATT_BM];
    __local float deltas[ATT_BM];
    const uint t = get_local_id(0);
    const uint bh = get_group_id(1);
    const uint key0 = get_group_id(0) * ATT_BN;
    const uint j = key0 + t;
    const int live = j < sk;
    const uint kvis = visible_keys(key_len, key_len_off, has_len, bh / heads, sk);
    const int seen = j < kvis; /* keys past the length get zero gradients */
    const ulong krow = ((ulong)bh * sk + (live ? j : 0)) * D4;
    const ulong qbase = (ulong)bh * sq * D4;

    float4 dka[D4], dva[D4];
    ATT_LOOP
    for (int c = 0; c < D4; c++) {
        /* k is pre-scaled like q in the forward pass: s = (scale log2 e) q . k */
        kown[t * OWN_STRIDE + c] = seen ? LOAD4(k, k_off, krow + c) * scale_log2 : (float4)(0.0f);
        vown[t * OWN_STRIDE + c] = seen ? LOAD4(v, v_off, krow + c) : (float4)(0.0f);
        dka[c] = (float4)(0.0f);
        dva[c] = (float4)(0.0f);
    }
    /* Query tiles that can see a key of this group: causal ones start at the tile holding query
     * key0; none when the group lies past the visible keys. */
    uint i_begin = causal ? key0 / ATT_BM * ATT_BM : 0;
    uint i_end = key0 < kvis ? sq : 0;

    for (uint i0 = i_begin; i0 < i_end; i0 += ATT_BM) {
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint e = t; e < ATT_BM * D4; e += ATT_BN) {
            uint r = e / D4, c = e % D4, i = i0 + r;
            float4 qv = (float4)(0.0f), dov = (float4)(0.0f);
            if (i < sq) {
                qv = LOAD4(q, q_off, qbase + (ulong)i * D4 + c);
                dov = LOAD4(d_o, do_off, qbase + (ulong)i * D4 + c);
            }
            qs[e] = qv;
            dos[e] = dov;
        }
        for (uint r = t; r < ATT_BM; r += ATT_BN) {
            uint i = i0 + r;
            float l2 = -INFINITY, dl = 0.0f;
            if (i < sq) {
                float4 a = (float4)(0.0f);
                for (int c = 0; c < D4; c++)
                    a = fma(LOAD4(d_o, do_off, qbase + (ulong)i * D4 + c),
                            LOAD4(o, o_off, qbase + (ulong)i * D4 + c), a);
                dl = hsum4(a);
                l2 = lse[lse_off + (ulong)bh * sq + i] * LOG2E;
            }
            lse2s[r] = l2;
            deltas[r] = dl;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (!seen)
            continue;
#if ATT_UNROLL
#pragma unroll 4
#else
#pragma unroll 1
#endif
        for (int ii = 0; ii < ATT_BM; ii++) {
            float4 a = (float4)(0.0f), b = (float4)(0.0f);
            ATT_LOOP
            for (int c = 0; c < D4; c++) {
                a = fma(qs[ii * D4 + c], kown[t * OWN_STRIDE + c], a);
                b = fma(dos[ii * D4 + c], vown[t * OWN_STRIDE + c], b);
            }
            uint i = i0 + ii;
            float l2 = lse2s[ii];
            int visible = i < sq && l2 != -INFINITY && (!causal || j <= i);
            float p = visible ? exp2(hsum4(a) - l2) : 0.0f;
            float ds = p * (hsum4(b) - deltas[ii]);
            ATT_LOOP
            for (int c = 0; c < D4; c++) {
                dva[c] = fma((float4)(p), dos[ii * D4 + c], dva[c]);
                dka[c] = fma((float4)(ds), qs[ii * D4 + c], dka[c]);
            }
        }
    }
    if (!live)
        return;
    ATT_LOOP
    for (int c = 0; c < D4; c++) {
        STORE4(dka[c] * scale, dk, dk_off, krow + c);
        STORE4(dva[c], dv, dv_off, krow + c);
    }
}

#ifndef ATT_CPU
#define ATT_CPU 0
#endif
#if ATT_CPU
/* attention_fwd_cpu (CPU devices only, -DATT_CPU=1): the forward pass with one query row per item
 * and no local memory or barriers. POCL runs a group as a loop over its items; across a barrier
 * every item's q and accumulator (2 * ATT_D floats) round-trip through memory, and the staged key
 * tile buys nothing on a CPU whose caches already hold K and V. Here each item streams its keys
 * straight from K and V in blocks of 16 (the block's scores, then its exponentials as one float16,
 * one rescale per block; ATT_BN is not used), with its q and accumulator as float16 vectors that
 * the unrolled head-dim loops keep in registers. A causal row stops at its own last key. Same per-row order every run: deterministic. */
#define D16 (ATT_D / 16)

static inline float hsum16(float16 a)
{
    float8 b = a.lo + a.hi;
    float4 c = b.lo + b.hi;
    return (c.x + c.y) + (c.z + c.w);
}

/* acc += w[jj] * row (j0 + jj) of `rows` ([.., ATT_D]) for jj < n, in key order: the forward's
 * P.V and dQ's dS.K of one 16-key block. */
static inline void add_weighted_rows(float16 *acc, const float *w, __global const float *rows,
                                     uint j0, uint n)
{
#pragma unroll 1
    for (uint jj = 0; jj < n; jj++) {
        __global const float *r = rows + (ulong)(j0 + jj) * ATT_D;
#pragma unroll
        for (int c = 0; c < D16; c++)
            acc[c] = fma((float16)(w[jj]), vload16(c, r), acc[c]);
    }
}

__kernel __attribute__((reqd_work_group_size(ATT_BM, 1, 1))) void
attention_fwd_cpu(__global const float *q, ulong q_off, __global const float *k, ulong k_off,
                  __global const float *v, ulong v_off, __global float *out, ulong out_off,
                  __global float *lse, ulong lse_off, int write_lse, __global const int *key_len,
                  ulong key_len_off, int has_len, uint heads, uint sq, uint sk, float scale_log2,
                  int causal)
{
    const uint bh = get_group_id(1);
    const uint i = get_global_id(0);
    if (i >= sq)
        return; /* no barriers: a row past the end simply leaves */
    uint kend = visible_keys(key_len, key_len_off, has_len, bh / heads, sk);
    if (causal && i + 1 < kend)
        kend = i + 1;
    __global const float *qp = q + q_off + ((ulong)bh * sq + i) * ATT_D;
    __global const float *kp = k + k_off + (ulong)bh * sk * ATT_D;
    __global const float *vp = v + v_off + (ulong)bh * sk * ATT_D;

    float16 qr[D16], acc[D16];
#pragma unroll
    for (int c = 0; c < D16; c++) {
        qr[c] = vload16(c, qp) * scale_log2;
        acc[c] = (float16)(0.0f);
    }
    float m = -INFINITY, l = 0.0f;
    for (uint j0 = 0; j0 < kend; j0 += 16) {
        const uint n = kend - j0 < 16 ? kend - j0 : 16;
        float s[16];
#pragma unroll 1
        for (uint jj = 0; jj < 16; jj++) {
            __global const float *kr = kp + (ulong)(j0 + (jj < n ? jj : 0)) * ATT_D;
            float16 a = qr[0] * vload16(0, kr);
#pragma unroll
            for (int c = 1; c < D16; c++)
                a = fma(qr[c], vload16(c, kr), a);
            s[jj] = jj < n ? hsum16(a) : -INFINITY;
        }
        float16 sv = vload16(0, s);
        float8 t8 = fmax(sv.lo, sv.hi);
        float4 t4 = fmax(t8.lo, t8.hi);
        float m_new = fmax(m, fmax(fmax(t4.x, t4.y), fmax(t4.z, t4.w)));
        if (m_new == -INFINITY)
            continue; /* nothing finite yet: the state stays empty */
        float alpha = exp2(m - m_new);
        /* the block's 16 exponentials as one vector: a scalar exp2 per key cost as much as the
         * key's two dot products */
        float16 pv = exp2(sv - m_new);
        l = fma(l, alpha, hsum16(pv));
        vstore16(pv, 0, s);
#pragma unroll
        for (int c = 0; c < D16; c++)
            acc[c] *= alpha;
        add_weighted_rows(acc, s, vp, j0, n);
        m = m_new;
    }
    float inv = l > 0.0f ? 1.0f / l : 0.0f;
    __global float *op = out + out_off + ((ulong)bh * sq + i) * ATT_D;
#pragma unroll
    for (int c = 0; c < D16; c++)
        vstore16(acc[c] * inv, c, op);
    if (write_lse)
        lse[lse_off + (ulong)bh * sq + i] = l > 0.0f ? (m + log2(l)) * LN2 : -INFINITY;
}

/* attention_bwd_dq_cpu (CPU devices only, like attention_fwd_cpu and for the same reasons): one
 * query row per item, no local memory or barriers, K and V rows read as float16 from global. Per
 * block of 16 keys: the 16 scores q.k and dO.v, then p = exp2(s - lse2) and ds = p (dp - D_i) as
 * float16 vectors, then dq += ds k_j. A causal row stops at its own key. */
__kernel __attribute__((reqd_work_group_size(ATT_BM, 1, 1))) void
attention_bwd_dq_cpu(__global const float *q, ulong q_off, __global const float *k, ulong k_off,
                     __global const float *v, ulong v_off, __global const float *o, ulong o_off,
                     __global const float *lse, ulong lse_off, __global const float *d_o,
                     ulong do_off, __global float *dq, ulong dq_off, __global const int *key_len,
                     ulong key_len_off, int has_len, uint heads, uint sq, uint sk,
                     float scale_log2, float scale, int causal)
{
    const uint bh = get_group_id(1);
    const uint i = get_global_id(0);
    if (i >= sq)
        return;
    uint kend = visible_keys(key_len, key_len_off, has_len, bh / heads, sk);
    if (causal && i + 1 < kend)
        kend = i + 1;
    const ulong row = ((ulong)bh * sq + i) * ATT_D;
    __global const float *kp = k + k_off + (ulong)bh * sk * ATT_D;
    __global const float *vp = v + v_off + (ulong)bh * sk * ATT_D;
    const float lse2 = lse[lse_off + (ulong)bh * sq + i] * LOG2E;
    if (lse2 == -INFINITY) /* a row that saw no key has no gradient */
        kend = 0;

    float16 qr[D16], dor[D16], acc[D16];
    float16 d16 = (float16)(0.0f);
#pragma unroll
    for (int c = 0; c < D16; c++) {
        qr[c] = vload16(c, q + q_off + row) * scale_log2;
        dor[c] = vload16(c, d_o + do_off + row);
        d16 = fma(dor[c], vload16(c, o + o_off + row), d16);
        acc[c] = (float16)(0.0f);
    }
    const float delta = hsum16(d16);
    for (uint j0 = 0; j0 < kend; j0 += 16) {
        const uint n = kend - j0 < 16 ? kend - j0 : 16;
        float s[16], dp[16];
#pragma unroll 1
        for (uint jj = 0; jj < 16; jj++) {
            const ulong off = (ulong)(j0 + (jj < n ? jj : 0)) * ATT_D;
            float16 a = qr[0] * vload16(0, kp + off), b = dor[0] * vload16(0, vp + off);
#pragma unroll
            for (int c = 1; c < D16; c++) {
                a = fma(qr[c], vload16(c, kp + off), a);
                b = fma(dor[c], vload16(c, vp + off), b);
            }
            s[jj] = jj < n ? hsum16(a) : -INFINITY;
            dp[jj] = hsum16(b);
        }
        float16 pv = exp2(vload16(0, s) - lse2);
        vstore16(pv * (vload16(0, dp) - delta), 0, s);
        add_weighted_rows(acc, s, kp, j0, n);
    }
#pragma unroll
    for (int c = 0; c < D16; c++)
        vstore16(acc[c] * scale, c, dq + dq_off + row);
}

/* attention_bwd_dkdv_cpu (CPU devices only, same scheme): one key row per item (group ATT_BN), no
 * local memory or barriers. Per block of 16 queries: q.k, dO.v and D_i = dO.O (each item forms
 * D_i itself: one more dot product per pair, sharing the dO loads, instead of a staged tile and
 * its barriers), then p and ds as float16 vectors, then dv += p dO_i, dk += ds q_i. A causal key
 * starts at its own query; keys past the visible length get zeros. */
__kernel __attribute__((reqd_work_group_size(ATT_BN, 1, 1))) void
attention_bwd_dkdv_cpu(__global const float *q, ulong q_off, __global const float *k, ulong k_off,
                       __global const float *v, ulong v_off, __global const float *o, ulong o_off,
                       __global const float *lse, ulong lse_off, __global const float *d_o,
                       ulong do_off, __global float *dk, ulong dk_off, __global float *dv,
                       ulong dv_off, __global const int *key_len, ulong key_len_off, int has_len,
                       uint heads, uint sq, uint sk, float scale_log2, float scale, int causal)
{
    const uint bh = get_group_id(1);
    const uint j = get_global_id(0);
    if (j >= sk)
        return;
    const uint kvis = visible_keys(key_len, key_len_off, has_len, bh / heads, sk);
    const ulong krow = ((ulong)bh * sk + j) * ATT_D;
    __global const float *qp = q + q_off + (ulong)bh * sq * ATT_D;
    __global const float *dop = d_o + do_off + (ulong)bh * sq * ATT_D;
    __global const float *opp = o + o_off + (ulong)bh * sq * ATT_D;
    __global const float *lp = lse + lse_off + (ulong)bh * sq;

    float16 kr[D16], vr[D16], dka[D16], dva[D16];
#pragma unroll
    for (int c = 0; c < D16; c++) {
        /* k is pre-scaled like q in the forward pass: s = (scale log2 e) q . k */
        kr[c] = vload16(c, k + k_off + krow) * scale_log2;
        vr[c] = vload16(c, v + v_off + krow);
        dka[c] = (float16)(0.0f);
        dva[c] = (float16)(0.0f);
    }
    const uint i_end = j < kvis ? sq : 0;
    for (uint i0 = causal ? j : 0; i0 < i_end; i0 += 16) {
        const uint n = i_end - i0 < 16 ? i_end - i0 : 16;
        float s[16], dp[16], dl[16], l2[16];
#pragma unroll 1
        for (uint ii = 0; ii < 16; ii++) {
            const uint i = i0 + (ii < n ? ii : 0);
            const ulong off = (ulong)i * ATT_D;
            float16 a = (float16)(0.0f), b = (float16)(0.0f), d = (float16)(0.0f);
#pragma unroll
            for (int c = 0; c < D16; c++) {
                float16 g = vload16(c, dop + off);
                a = fma(vload16(c, qp + off), kr[c], a);
                b = fma(g, vr[c], b);
                d = fma(g, vload16(c, opp + off), d);
            }
            s[ii] = hsum16(a);
            dp[ii] = hsum16(b);
            dl[ii] = hsum16(d);
            l2[ii] = ii < n ? lp[i] * LOG2E : -INFINITY;
        }
        float16 l2v = vload16(0, l2);
        /* rows that saw no key (lse = -inf) and the block's tail contribute nothing */
        float16 pv = select(exp2(vload16(0, s) - l2v), (float16)(0.0f), l2v == (float16)(-INFINITY));
        vstore16(pv, 0, s);
        vstore16(pv * (vload16(0, dp) - vload16(0, dl)), 0, dp);
#pragma unroll 1
        for (uint ii = 0; ii < n; ii++) {
            const ulong off = (ulong)(i0 + ii) * ATT_D;
            float p = s[ii], ds = dp[ii];
#pragma unroll
            for (int c = 0; c < D16; c++) {
                dva[c] = fma((float16)(p), vload16(c, dop + off), dva[c]);
                dka[c] = fma((float16)(ds), vload16(c, qp + off), dka[c]);
            }
        }
    }
#pragma unroll
    for (int c = 0; c < D16; c++) {
        vstore16(dka[c] * scale, c, dk + dk_off + krow);
        vstore16(dva[c], c, dv + dv_off + krow);
    }
}
#endif
