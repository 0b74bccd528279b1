/* Fused MLP, CPU-shaped (POCL; include/cltensor_mlp.h, path "fused-cpu"): the whole network of a
 * tile of TP points in one work item, with explicit 16-wide vectors across the tile's points.
 *
 * Why this shape: POCL runs a work-group on one core and vectorises only across work items, so the
 * GPU-shaped fused kernels (mlp_fused.cl: 256-item groups, barriers, local tiles) measured 2-7x
 * slower than the per-layer GEMMs there. Here a group is ONE item (no barriers, no local memory:
 * POCL's local memory is ordinary memory anyway, and groups above ~40 KiB of it gave racy results)
 * that owns a whole core; the SIMD lanes are 16 consecutive points of the tile (float16 = two AVX
 * registers) and the register block is RPI output rows x 16 points, fed by one vector load and
 * RPI scalar broadcasts per step of the sum (the axpy form of gemm_cpu.cl).
 *
 * Layout: activations are kept feature-major in the group's global scratch (hot in its core's
 * caches): act[l] is [width_l][ldp], point p of feature c at c * ldp + p, so every width works
 * without padding and the vector dimension is always the tile. One micro-kernel shape serves the
 * three products of a layer (l: K inputs, O outputs, W [K][O] row-major):
 *   forward   z^T[j][p]  = sum_k W[k][j] act^T[k][p]     rows j, broadcasts W[k][j0 + r]
 *   input grad d^T[k][p] = sum_j W[k][j] dz^T[j][p]      rows k, broadcasts W[k0 + r][j]
 *   weight grad dW[k][j] = sum_p act^T[k][p] dz[p][j]    rows k, vectors along j of dz transposed
 *                                                        into row-major [tp][LDS] once per layer
 * Rows past a width are clamped for loading (always in bounds) and not stored; points past n are
 * the last point repeated (finite) and their output gradient is 0, so they add nothing.
 *
 * mlp_cpu_forward: group g takes tiles g, g + G, ...: encoding, every layer, the output rows.
 * mlp_cpu_train:   launch 1 of a step, the same tile order: forward (every act[l] kept), the MSE
 *   loss and its gradient, the backward through every layer; the tile's weight and bias gradients
 *   go to the group's slice of `partial` ([G][NPARAMS]; the group's first tile writes, later tiles
 *   add: a fixed order, no atomics), its squared-error sum to loss_part[g]. Launch 2 is
 *   mlp_cpu_update (below): mlp_update.cl's sum of the partials and optimizer, CPU-shaped.
 *
 * Scratch of one group (floats, from its base; ldp the launch's point stride): rows MLP_AROW[l] of
 * act[l] (l = 0..NL; act[0] the encoding, or x^T for the identity encoding), MLP_ZROW[l] of the
 * pre-activation of silu layers (-1: none), G0ROW / G1ROW two gradient buffers of MAXW rows,
 * XTROW x^T [IN_DIM] (Fourier), each row ldp floats; then at ROWS * ldp the row-major dz
 * [tp][LDS]. The host sizes it for its largest tile (mlp_cpu.c).
 *
 * -D contract: NL, IN_DIM, ENC (0 identity, 1 Fourier: width 0 = 2F, B [IN_DIM][F]), MLP_W (NL + 1
 * widths), MLP_ACT (NL codes: 0 identity, 1 tanh, 2 relu, 3 sigmoid, 4 silu), MLP_POFF (NL
 * parameter offsets), MLP_AROW, MLP_ZROW, G0ROW, G1ROW, XTROW, ROWS, LDS (a multiple of 16 >= every
 * width), NPARAMS, RPI (1..8, rows per register block). Kernels take tp (a multiple of 16) and ldp
 * (>= tp, a multiple of 16) at run time. A CPU-device kernel: its private arrays are small and may
 * live on the stack (the AMD register rules of cl_kernels/README.md do not apply; AMD profiles
 * never select it).
 */
#ifndef NL /* defaults: the PINN of BENCHMARKS.md, so the file also builds on its own */
#define NL 4
#define IN_DIM 2
#define ENC 1
#define MLP_W 128, 128, 128, 128, 2
#define MLP_ACT 1, 1, 1, 0
#define MLP_POFF 0, 16512, 33024, 49536
#define MLP_AROW 0, 128, 256, 384, 512
#define MLP_ZROW -1, -1, -1, -1
#define G0ROW 514
#define G1ROW 642
#define XTROW 770
#define ROWS 772
#define LDS 144
#define NPARAMS 49794
#endif
#ifndef RPI
#define RPI 6 /* 6 x 2 accumulator registers + 2 for the vector + 1 broadcast: AVX2's 16 */
#endif
#define NV 16
#include "common/cpu_rows.h"
#include "common/mlp_net.h"

#if LDS % NV != 0
#error "LDS must be a multiple of 16"
#endif

__constant int arow[NL + 1] = {MLP_AROW};
__constant int zrow[NL] = {MLP_ZROW};

static inline floatn sigmoid_n(floatn z)
{
    /* exp of a non-positive argument only: no overflow */
    const floatn e = exp(-fabs(z)), r = 1.0f / (1.0f + e);
    return select(e * r, r, isgreaterequal(z, (floatn)0.0f));
}

/* tanh of 16 lanes as a 13/6 rational minimax in x on [-7.905, 7.905] (the coefficients of Eigen's
 * fast float tanh; clamped outside, where tanh is 1 to 3e-7): 11 FMAs and one division, no exp.
 * Max relative error 3.2e-7 (~3 ulp) against double tanh on a 1e-4 grid over [-10, 10]; POCL's
 * tanh built-in took ~25% of the PINN's forward, the exp form (clt_tanhf) ~15%. NaN propagates. */
static inline floatn tanh_n(floatn x)
{
    const floatn c = clamp(x, -7.90531110763549805f, 7.90531110763549805f), x2 = c * c;
    floatn p = x2 * -2.76076847742355e-16f + 2.00018790482477e-13f;
    p = p * x2 - 8.60467152213735e-11f;
    p = p * x2 + 5.12229709037114e-08f;
    p = p * x2 + 1.48572235717979e-05f;
    p = p * x2 + 6.37261928875436e-04f;
    p = p * x2 + 4.89352455891786e-03f;
    floatn q = x2 * 1.19825839466702e-06f + 1.18534705686654e-04f;
    q = q * x2 + 2.26843463243900e-03f;
    q = q * x2 + 4.89352518554385e-03f;
    return select(c * p / q, x, isnan(x));
}

static inline floatn act_fwd(int a, floatn z)
{
    if (a == 1)
        return tanh_n(z);
    if (a == 2)
        return select(z, (floatn)0.0f, isless(z, (floatn)0.0f));
    if (a == 3)
        return sigmoid_n(z);
    if (a == 4)
        return z * sigmoid_n(z);
    return z;
}

/* act'(z) from y = act(z) (and z itself for silu) */
static inline floatn act_grad(int a, floatn y, floatn z)
{
    if (a == 1)
        return 1.0f - y * y;
    if (a == 2)
        return select((floatn)0.0f, (floatn)1.0f, isgreater(y, (floatn)0.0f));
    if (a == 3)
        return y * (1.0f - y);
    if (a == 4) {
        const floatn s = sigmoid_n(z);
        return s * (1.0f + z * (1.0f - s));
    }
    return (floatn)1.0f;
}

static inline float hsum16(float16 v)
{
    float8 h = v.lo + v.hi;
    float4 q = h.lo + h.hi;
    return (q.x + q.z) + (q.y + q.w);
}

/* The register block: acc_r = sum_{q < cnt} s_r[q * qs] * v[q * vs .. + 16), r < RPI, with
 * s_r = s + min(r, rows - 1) * rs (rows past the block's end load the last one; not stored). */
#define MK_PTR(r) __global const float *s##r = s + min(r, rows - 1) * rs;
#define MK_DECL(r) floatn acc##r = (floatn)(0.0f);
#define MK_STEP(r) acc##r += s##r[q * qs] * vv;
#define MK_LOOP(cnt, vs)                                                                           \
    FOR_ROWS(MK_PTR)                                                                               \
    FOR_ROWS(MK_DECL)                                                                              \
    for (int q = 0; q < (cnt); q++) {                                                              \
        const floatn vv = VLOADN(0, v + q * (vs));                                                 \
        FOR_ROWS(MK_STEP)                                                                          \
    }

/* forward epilogue: z = acc + b[j], y = act(z) into out row j (and z for silu) */
#define FWD_STORE(r)                                                                               \
    if (r < rows) {                                                                                \
        const floatn z = acc##r + bias[j0 + r];                                                    \
        if (zo)                                                                                    \
            VSTOREN(z, 0, zo + (j0 + r) * ldp + pb);                                               \
        VSTOREN(act_fwd(a, z), 0, out + (j0 + r) * ldp + pb);                                      \
    }

/* act[l + 1] = act(W_l^T act[l] + b_l) for the tile */
static inline __attribute__((always_inline)) void layer_fwd(int l, __global const float *params,
                                                            __global float *scr, int tp, int ldp)
{
    const int K = widths[l], O = widths[l + 1], a = acts[l];
    __global const float *W = params + poff[l], *bias = W + K * O;
    __global const float *in = scr + arow[l] * ldp;
    __global float *out = scr + arow[l + 1] * ldp;
    __global float *zo = zrow[l] >= 0 ? scr + zrow[l] * ldp : 0;
    const int rs = 1, qs = O;
    for (int pb = 0; pb < tp; pb += NV) { /* the 16-point column of act[l] stays in L1 */
        __global const float *v = in + pb;
        for (int j0 = 0; j0 < O; j0 += RPI) {
            const int rows = min(RPI, O - j0);
            __global const float *s = W + j0;
            MK_LOOP(K, ldp)
            FOR_ROWS(FWD_STORE)
        }
    }
}

/* sin and cos of 16 lanes (POCL's sincos built-in took ~25% of the PINN's forward): k = rint(x 2/pi),
 * r = x - k pi/2 by a 3-part Cody-Waite split with FMA (pi/2's first part has 8 bits: k * part 1
 * is exact for |k| < 2^16, |x| < ~1e5), then minimax polynomials on [-pi/4, pi/4] (Cephes' sinf /
 * cosf coefficients, ~1 ulp) and the quadrant k mod 4 picking and signing them. */
static inline floatn sincos_n(floatn x, floatn *c)
{
    const floatn k = rint(x * 0.636619772367581343f);
    floatn r = fma(-k, (floatn)1.5703125f, x);
    r = fma(-k, (floatn)4.837512969970703125e-4f, r);
    r = fma(-k, (floatn)7.54978995489188216e-8f, r);
    const floatn z = r * r;
    const floatn sp = ((-1.9515295891e-4f * z + 8.3321608736e-3f) * z - 1.6666654611e-1f) * z * r + r;
    const floatn cp = ((2.443315711809948e-5f * z - 1.388731625493765e-3f) * z +
                       4.166664568298827e-2f) * z * z - 0.5f * z + 1.0f;
    const int16 q = convert_int16(k);
    const int16 odd = (q & 1) != 0;
    const floatn s0 = select(sp, cp, odd), c0 = select(cp, sp, odd);
    *c = select(c0, -c0, ((q + 1) & 2) != 0);
    return select(s0, -s0, (q & 2) != 0);
}

/* The tile's points first .. first + tp - 1 (past n: the last point again) encoded into act[0]. */
static inline void encode_tile(__global const float *x, __global const float *B, float scale,
                               long first, int count, __global float *scr, int tp, int ldp)
{
    __global float *e = scr + arow[0] * ldp;
#if ENC
    __global float *xt = scr + XTROW * ldp;
#else
    __global float *xt = e;
#endif
    for (int p = 0; p < tp; p++) {
        __global const float *xp = x + (first + min(p, count - 1)) * IN_DIM;
        for (int i = 0; i < IN_DIM; i++)
            xt[i * ldp + p] = xp[i];
    }
#if ENC
    const int F = widths[0] / 2;
    for (int pb = 0; pb < tp; pb += NV)
        for (int c = 0; c < F; c++) {
            floatn ph = (floatn)0.0f;
            for (int i = 0; i < IN_DIM; i++)
                ph += VLOADN(0, xt + i * ldp + pb) * B[i * F + c];
            floatn cs, sn = sincos_n(scale * ph, &cs);
            VSTOREN(sn, 0, e + c * ldp + pb);
            VSTOREN(cs, 0, e + (F + c) * ldp + pb);
        }
#endif
}

static inline void forward_tile(__global const float *x, __global const float *B, float scale,
                                __global const float *params, long first, int count,
                                __global float *scr, int tp, int ldp)
{
    encode_tile(x, B, scale, first, count, scr, tp, ldp);
    for (int l = 0; l < NL; l++)
        layer_fwd(l, params, scr, tp, ldp);
}

/* y [n][O] = the network at x [n][IN_DIM]; off = element offsets of x and y */
__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void
mlp_cpu_forward(__global const float *x, __global const float *B, __global const float *params,
                __global float *y, __global float *scratch, long n, int tp, int ldp, long sstride,
                float scale, ulong2 off)
{
    x += off.s0;
    y += off.s1;
    const long G = get_num_groups(0), g = get_group_id(0);
    __global float *scr = scratch + g * sstride;
    const int O = widths[NL];
    __global const float *out = scr + arow[NL] * ldp;
    for (long t = g; t * tp < n; t += G) {
        const long first = t * tp;
        const int count = (int)min((long)tp, n - first);
        forward_tile(x, B, scale, params, first, count, scr, tp, ldp);
        for (int p = 0; p < count; p++)
            for (int j = 0; j < O; j++)
                y[(first + p) * O + j] = out[j * ldp + p];
    }
}

/* input-gradient epilogue: d_r = acc_r * act'_{l-1}(act[l] row k, z) */
#define BWD_STORE(r)                                                                               \
    if (r < rows) {                                                                                \
        const int k = k0 + r;                                                                      \
        const floatn yv = VLOADN(0, in + k * ldp + pb);                                            \
        const floatn zv = zp ? VLOADN(0, zp + k * ldp + pb) : (floatn)0.0f;                        \
        VSTOREN(acc##r * act_grad(ap, yv, zv), 0, dnext + k * ldp + pb);                           \
    }

/* weight-gradient epilogue: row k of dW (columns jb ..) written or added */
#define DW_STORE(r)                                                                                \
    if (r < rows) {                                                                                \
        __global float *d = dW + (k0 + r) * O + jb;                                                \
        if (jb + NV <= O) {                                                                        \
            VSTOREN(first_tile ? acc##r : VLOADN(0, d) + acc##r, 0, d);                            \
        } else {                                                                                   \
            float tmp[NV];                                                                         \
            VSTOREN(acc##r, 0, tmp);                                                               \
            for (int e = 0; e < O - jb; e++)                                                       \
                d[e] = first_tile ? tmp[e] : d[e] + tmp[e];                                        \
        }                                                                                          \
    }

/* 8 x 8 transpose in registers (unpack, pair shuffle, 128-bit halves: the AVX pattern LLVM lowers
 * to ~24 shuffles): the scalar loop it replaces took ~25% of a PINN training step. Rows past rows
 * read as zeros. src rows of stride ls, dst rows of stride ld. */
#define UNPACK_LO(a, b) (float8)(a.s0, b.s0, a.s1, b.s1, a.s4, b.s4, a.s5, b.s5)
#define UNPACK_HI(a, b) (float8)(a.s2, b.s2, a.s3, b.s3, a.s6, b.s6, a.s7, b.s7)
#define PAIR_LO(a, b) (float8)(a.s0, a.s1, b.s0, b.s1, a.s4, a.s5, b.s4, b.s5)
#define PAIR_HI(a, b) (float8)(a.s2, a.s3, b.s2, b.s3, a.s6, a.s7, b.s6, b.s7)
static inline void transpose8(__global const float *src, int ls, int rows, __global float *dst, int ld)
{
    const float8 z = (float8)0.0f;
    const float8 r0 = rows > 0 ? vload8(0, src) : z, r1 = rows > 1 ? vload8(0, src + ls) : z;
    const float8 r2 = rows > 2 ? vload8(0, src + 2 * ls) : z, r3 = rows > 3 ? vload8(0, src + 3 * ls) : z;
    const float8 r4 = rows > 4 ? vload8(0, src + 4 * ls) : z, r5 = rows > 5 ? vload8(0, src + 5 * ls) : z;
    const float8 r6 = rows > 6 ? vload8(0, src + 6 * ls) : z, r7 = rows > 7 ? vload8(0, src + 7 * ls) : z;
    const float8 t0 = UNPACK_LO(r0, r1), t1 = UNPACK_HI(r0, r1), t2 = UNPACK_LO(r2, r3);
    const float8 t3 = UNPACK_HI(r2, r3), t4 = UNPACK_LO(r4, r5), t5 = UNPACK_HI(r4, r5);
    const float8 t6 = UNPACK_LO(r6, r7), t7 = UNPACK_HI(r6, r7);
    const float8 u0 = PAIR_LO(t0, t2), u1 = PAIR_HI(t0, t2), u2 = PAIR_LO(t1, t3);
    const float8 u3 = PAIR_HI(t1, t3), u4 = PAIR_LO(t4, t6), u5 = PAIR_HI(t4, t6);
    const float8 u6 = PAIR_LO(t5, t7), u7 = PAIR_HI(t5, t7);
    vstore8((float8)(u0.lo, u4.lo), 0, dst);
    vstore8((float8)(u1.lo, u5.lo), 0, dst + ld);
    vstore8((float8)(u2.lo, u6.lo), 0, dst + 2 * ld);
    vstore8((float8)(u3.lo, u7.lo), 0, dst + 3 * ld);
    vstore8((float8)(u0.hi, u4.hi), 0, dst + 4 * ld);
    vstore8((float8)(u1.hi, u5.hi), 0, dst + 5 * ld);
    vstore8((float8)(u2.hi, u6.hi), 0, dst + 6 * ld);
    vstore8((float8)(u3.hi, u7.hi), 0, dst + 7 * ld);
}

/* Layer l's backward for the tile: dcur = dz^T [O][ldp] (act' applied); the weight and bias
 * gradients into part (written by the group's first tile, else added); for l > 0 the next dz^T
 * [K][ldp] into dnext. */
static inline __attribute__((always_inline)) void
layer_bwd(int l, __global const float *params, __global float *scr, int tp, int ldp,
          __global const float *dcur, __global float *dnext, __global float *part, int first_tile)
{
    const int K = widths[l], O = widths[l + 1], OP = (O + NV - 1) / NV * NV;
    __global const float *W = params + poff[l];
    __global float *dW = part + poff[l], *db = dW + K * O;
    __global const float *in = scr + arow[l] * ldp;
    __global float *dz = scr + ROWS * ldp; /* dz row-major [tp][LDS], zeros past O */
    for (int j0 = 0; j0 < OP; j0 += 8)
        for (int p0 = 0; p0 < tp; p0 += 8)
            transpose8(dcur + j0 * ldp + p0, ldp, O - j0, dz + p0 * LDS + j0, LDS);
    for (int j = 0; j < O; j++) {
        floatn acc = (floatn)0.0f;
        for (int pb = 0; pb < tp; pb += NV)
            acc += VLOADN(0, dcur + j * ldp + pb);
        const float s = hsum16(acc);
        db[j] = first_tile ? s : db[j] + s;
    }
    {
        const int rs = ldp, qs = 1;
        for (int jb = 0; jb < OP; jb += NV) { /* dz's 16 columns stay in L1 */
            __global const float *v = dz + jb;
            for (int k0 = 0; k0 < K; k0 += RPI) {
                const int rows = min(RPI, K - k0);
                __global const float *s = in + k0 * ldp;
                MK_LOOP(tp, LDS)
                FOR_ROWS(DW_STORE)
            }
        }
    }
    if (l == 0)
        return;
    const int ap = acts[l - 1];
    __global const float *zp = zrow[l - 1] >= 0 ? scr + zrow[l - 1] * ldp : 0;
    const int rs = O, qs = 1;
    for (int pb = 0; pb < tp; pb += NV) {
        __global const float *v = dcur + pb;
        for (int k0 = 0; k0 < K; k0 += RPI) {
            const int rows = min(RPI, K - k0);
            __global const float *s = W + k0 * O;
            MK_LOOP(O, ldp)
            FOR_ROWS(BWD_STORE)
        }
    }
}

/* sc = (Fourier scale, 2 / (n * outputs): the MSE gradient's factor); off = element offsets of x
 * and target */
__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void
mlp_cpu_train(__global const float *x, __global const float *B, __global const float *params,
              __global const float *target, __global float *scratch, __global float *partial,
              __global float *loss_part, long n, int tp, int ldp, long sstride, float2 sc,
              ulong2 off)
{
    x += off.s0;
    target += off.s1;
    const long G = get_num_groups(0), g = get_group_id(0);
    __global float *scr = scratch + g * sstride;
    __global float *part = partial + g * NPARAMS;
    const int O = widths[NL], aout = acts[NL - 1];
    __global const float *out = scr + arow[NL] * ldp;
    __global const float *zout = zrow[NL - 1] >= 0 ? scr + zrow[NL - 1] * ldp : 0;
    float sq = 0.0f;
    for (long t = g; t * tp < n; t += G) {
        const long first = t * tp;
        const int count = (int)min((long)tp, n - first);
        forward_tile(x, B, sc.x, params, first, count, scr, tp, ldp);
        /* dL/dz of the output layer; points past n give 0 */
        __global float *gcur = scr + G0ROW * ldp, *gnext = scr + G1ROW * ldp;
        for (int j = 0; j < O; j++)
            for (int p = 0; p < tp; p++) {
                float d = 0.0f;
                if (p < count) {
                    const float yv = out[j * ldp + p];
                    const float e = yv - target[(first + p) * O + j];
                    sq = fma(e, e, sq);
                    d = sc.y * e * mlp_act_grad(aout, yv, zout ? zout[j * ldp + p] : 0.0f);
                }
                gcur[j * ldp + p] = d;
            }
        for (int l = NL - 1; l >= 0; l--) {
            layer_bwd(l, params, scr, tp, ldp, gcur, gnext, part, t == g);
            __global float *tmp = gcur;
            gcur = gnext, gnext = tmp;
        }
    }
    loss_part[g] = sq;
}

/* Launch 2 of a step (mlp_update.cl's job and arguments, CPU-shaped): item g takes parameters
 * [g * chunk, (g + 1) * chunk) 16 at a time (explicit vectors: POCL left mlp_update's 256-item
 * groups, with a loss tree behind barriers in group 0, at ~250 us for the PINN's 50K parameters);
 * item 0 also sums the G loss parts in order 0..G-1. s and ctl as mlp_update. */
static inline floatn load_part(__global const float *p, int cnt)
{
    if (cnt == NV)
        return VLOADN(0, p);
    float t[NV];
    for (int e = 0; e < NV; e++)
        t[e] = e < cnt ? p[e] : 0.0f;
    return VLOADN(0, t);
}

static inline void store_part(floatn v, __global float *p, int cnt)
{
    if (cnt == NV) {
        VSTOREN(v, 0, p);
        return;
    }
    float t[NV];
    VSTOREN(v, 0, t);
    for (int e = 0; e < cnt; e++)
        p[e] = t[e];
}

__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void
mlp_cpu_update(__global float *params, __global float *grads, __global float *m, __global float *v,
               __global const float *partial, __global const float *loss_part, __global float *loss,
               int4 ctl, float8 s, int nparams, int chunk)
{
    const int G = ctl.s0, mode = ctl.s1, g = get_group_id(0);
    if (ctl.s2 && g == 0) {
        float acc = 0.0f;
        for (int q = 0; q < G; q++)
            acc += loss_part[q];
        loss[0] = acc * s.s6;
    }
    const int end = min(nparams, (g + 1) * chunk);
    for (int i = g * chunk; i < end; i += NV) {
        const int cnt = min(NV, end - i);
        floatn gsum = load_part(partial + i, cnt);
        for (int q = 1; q < G; q++)
            gsum += load_part(partial + (long)q * nparams + i, cnt);
        store_part(gsum, grads + i, cnt);
        if (mode == 0)
            continue;
        const floatn p = load_part(params + i, cnt);
        const floatn gr = gsum + s.s4 * p;
        if (mode == 1) {
            const floatn mi = s.s1 * load_part(m + i, cnt) + (1.0f - s.s1) * gr;
            const floatn vi = s.s2 * load_part(v + i, cnt) + (1.0f - s.s2) * gr * gr;
            store_part(mi, m + i, cnt);
            store_part(vi, v + i, cnt);
            store_part(p - s.s0 * (mi / (sqrt(vi) / s.s5 + s.s3)), params + i, cnt);
        } else {
            const floatn b = ctl.s3 ? gr : s.s1 * load_part(m + i, cnt) + (1.0f - s.s7) * gr;
            store_part(s.s1 != 0.0f ? b : (floatn)0.0f, m + i, cnt);
            store_part(p - s.s0 * (s.s1 != 0.0f ? b : gr), params + i, cnt);
        }
    }
}
