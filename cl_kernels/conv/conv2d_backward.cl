/* Conv2D backward, NCHW f32: grad-input (dx) and grad-weight (dw), GPU-style tiles and CPU-style
 * direct kernels. The forward is out[n, co, oy, ox] = sum x[n, g*Cig+ci, oy*sh-pt+ky*dh,
 * ox*sw-pl+kx*dw] * w[co, ci, ky, kx] over (ci, ky, kx), g = co / Cog.
 *
 * conv_bwd_input_tiled: implicit GEMM per group, dx[ci][(n,h,w)] = sum_k W[ci][k] * DY[k][(n,h,w)]
 *   with k = (kyi, kxi, co). The columns are split by stride phase (ph, pw) = (h % sh, w % sw), one
 *   phase per grid slice (dim 2): inside a phase, only taps ky = ky0 + kyi*kstep (kstep = sh /
 *   gcd(sh, dh)) reach an output row, and oy = i + oy0 - kyi*dyk for h = ph + sh*i, so no work is
 *   spent on taps that hit between output positions and dy loads along a row are contiguous. A
 *   group of MDIM x NDIM items owns a TM x TN tile (RM x RN per item, strided by MDIM / NDIM so
 *   local reads are conflict-free), K walked TK at a time through local memory. Every dx element is
 *   written once (a phase with no taps writes zeros): no atomics, no pre-zeroing.
 *   Grid: (col tiles * WG, row tiles * groups, sh * sw); local (WG, 1, 1).
 * conv_bwd_weight_tiled: dw[co][(ci,ky,kx)] = sum_k DY[co][k] * X[k][(ci,ky,kx)], k = (n, oy, ox),
 *   split over S chunks of K (grid dim 2 = groups * S). With S > 1 each group stores its partial
 *   tile in the workspace, fences and bumps its tile's counter; the last group of a tile adds the S
 *   partials in chunk order (deterministic) and writes dw, then resets the counter to 0.
 *   Grid: (col tiles * WG, row tiles, groups * S).
 * conv_bwd_input_direct / conv_bwd_weight_direct: one item per output element, plain loops
 *   (POCL: no local memory, no barriers; also depthwise / few channels on GPUs). 1-D grid.
 *
 * Arguments: geometry int16 G = (n, ci, h, w, co, kh, kw, ho, wo, sh, sw, pt, pl, dh, dw, groups),
 * element offsets ulong4 OFF = (dy, w or x, dx or dw, S).
 * -D: TM TN TK RM RN (tiles, tiled kernels only), MAX_COUNTERS (workspace counter slots).
 */
#ifndef RM
#define RM 4
#endif
#ifndef RN
#define RN 8
#endif
#ifndef TM
#define TM 64
#endif
#ifndef TN
#define TN 128
#endif
#ifndef TK
#define TK 16
#endif
#ifndef MAX_COUNTERS
#define MAX_COUNTERS 1024
#endif

#define MDIM (TM / RM)
#define NDIM (TN / RN)
#define WG (MDIM * NDIM)
#if TM % RM || TN % RN || WG % TN || WG % TM || WG % TK || (TK * TN) % WG || (TK * TM) % WG
#error "tile constraints: RM | TM, RN | TN, TM, TN and TK divide WG, WG divides TK*TM and TK*TN"
#endif
#define LA (TK * TM / WG) /* A elements each item stages per K step */
#define LB (TK * TN / WG)

#define NB G.s0
#define CI G.s1
#define H G.s2
#define W G.s3
#define CO G.s4
#define KH G.s5
#define KW G.s6
#define HO G.s7
#define WO G.s8
#define SH G.s9
#define SW G.sa
#define PT G.sb
#define PL G.sc
#define DH G.sd
#define DW G.se
#define GROUPS G.sf

static int gcd_int(int a, int b)
{
    while (b) {
        int t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* First tap k0 whose offset (base - k*dil) is a multiple of s, tap step, tap count, and the
 * output-index shift per tap step; *o0 = (base - k0*dil) / s. */
static int phase_taps(int base, int K, int dil, int s, int *k0, int *kstep, int *o0, int *dstep)
{
    *kstep = s / gcd_int(s, dil);
    *dstep = *kstep * dil / s;
    *k0 = 0;
    *o0 = 0;
    for (int k = 0; k < *kstep && k < K; k++) {
        int t = base - k * dil;
        if (((t % s) + s) % s == 0) {
            *k0 = k;
            *o0 = t / s; /* exact: t is a multiple of s */
            return (K - 1 - k) / *kstep + 1;
        }
    }
    return 0;
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
conv_bwd_input_tiled(__global const float *dy, __global const float *wt, __global float *dx, int16 G,
                     ulong4 OFF)
{
    __local float As[TK][TM];
    __local float Bs[TK][TN];
    const int lid = get_local_id(0);
    const int cig = CI / GROUPS, cog = CO / GROUPS;
    const int rtiles = (cig + TM - 1) / TM;
    const int grp = get_group_id(1) / rtiles, m0 = (get_group_id(1) % rtiles) * TM;
    const int ph = get_group_id(2) / SW, pw = get_group_id(2) % SW;
    const int hp = ph < H ? (H - ph + SH - 1) / SH : 0, wp = pw < W ? (W - pw + SW - 1) / SW : 0;
    const long ncols = (long)NB * hp * wp;
    const long c0 = (long)get_group_id(0) * TN;
    if (c0 >= ncols)
        return; /* whole group: this phase has fewer columns */
    int ky0, kys, oy0, dyk, kx0, kxs, ox0, dxk;
    const int nky = phase_taps(ph + PT, KH, DH, SH, &ky0, &kys, &oy0, &dyk);
    const int nkx = phase_taps(pw + PL, KW, DW, SW, &kx0, &kxs, &ox0, &dxk);
    const int K = cog * nky * nkx;
    const long hw = (long)HO * WO;

    /* the column this item stages for B, fixed over the K loop */
    const int bcol = lid % TN, brow = lid / TN;
    const long bc = c0 + bcol;
    int bi = 0, bj = 0, bok = bc < ncols;
    ulong dyb = OFF.s0;
    if (bok) {
        long n = bc / ((long)hp * wp);
        int r = (int)(bc - n * hp * wp);
        bi = r / wp, bj = r % wp;
        dyb += ((ulong)n * CO + (ulong)grp * cog) * hw;
    }
    const int acol = lid % TM, arow = lid / TM;
    const int am = m0 + acol;
    const ulong wb = OFF.s1 + ((ulong)grp * cog * cig + am) * KH * KW;

    float acc[RM][RN];
    for (int a = 0; a < RM; a++)
        for (int b = 0; b < RN; b++)
            acc[a][b] = 0.0f;
    const int tm = lid / NDIM, tn = lid % NDIM;

    for (int k0 = 0; k0 < K; k0 += TK) {
        for (int t = 0; t < LA; t++) {
            int kr = arow + t * (WG / TM), k = k0 + kr;
            float v = 0.0f;
            if (k < K && am < cig) {
                int co = k % cog, r = k / cog;
                int ky = ky0 + (r / nkx) * kys, kx = kx0 + (r % nkx) * kxs;
                v = wt[wb + (ulong)co * cig * KH * KW + ky * KW + kx];
            }
            As[kr][acol] = v;
        }
        for (int t = 0; t < LB; t++) {
            int kr = brow + t * (WG / TN), k = k0 + kr;
            float v = 0.0f;
            if (k < K && bok) {
                int co = k % cog, r = k / cog;
                int oy = bi + oy0 - (r / nkx) * dyk, ox = bj + ox0 - (r % nkx) * dxk;
                if (oy >= 0 && oy < HO && ox >= 0 && ox < WO)
                    v = dy[dyb + (ulong)co * hw + (ulong)oy * WO + ox];
            }
            Bs[kr][bcol] = v;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int kk = 0; kk < TK; kk++) {
            float a[RM], b[RN];
            for (int i = 0; i < RM; i++)
                a[i] = As[kk][tm + i * MDIM];
            for (int j = 0; j < RN; j++)
                b[j] = Bs[kk][tn + j * NDIM];
            for (int i = 0; i < RM; i++)
                for (int j = 0; j < RN; j++)
                    acc[i][j] = fma(a[i], b[j], acc[i][j]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    for (int j = 0; j < RN; j++) {
        long c = c0 + tn + j * NDIM;
        if (c >= ncols)
            continue;
        long n = c / ((long)hp * wp);
        int r = (int)(c - n * hp * wp);
        int h = ph + SH * (r / wp), w = pw + SW * (r % wp);
        ulong base = OFF.s2 + ((ulong)n * CI + (ulong)grp * cig) * H * W + (ulong)h * W + w;
        for (int i = 0; i < RM; i++) {
            int m = m0 + tm + i * MDIM;
            if (m < cig)
                dx[base + (ulong)m * H * W] = acc[i][j];
        }
    }
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
conv_bwd_weight_tiled(__global const float *dy, __global const float *x, __global float *dwt,
                      __global uint *ws, int16 G, ulong4 OFF)
{
    __local float As[TK][TM];
    __local float Bs[TK][TN];
    __local int last;
    const int lid = get_local_id(0);
    const int cig = CI / GROUPS, cog = CO / GROUPS, kk2 = KH * KW, ncols = cig * kk2;
    const int S = (int)OFF.s3;
    const int grp = get_group_id(2) / S, split = get_group_id(2) % S;
    const int m0 = get_group_id(1) * TM, c0 = get_group_id(0) * TN;
    const long hw = (long)HO * WO, K = (long)NB * hw;
    const long chunk = ((K + S - 1) / S + TK - 1) / TK * TK;
    const long kbeg = split * chunk, kend = min(K, kbeg + chunk);

    /* A = dy rows: lanes run along k (contiguous); B = x gathers: the staged columns are fixed */
    const int akr = lid % TK, am = lid / TK;
    const int bkr = lid % TK, bcl = lid / TK;
    ulong xb[LB];
    int iy0[LB], ix0[LB], bok[LB];
    for (int t = 0; t < LB; t++) {
        int c = c0 + bcl + t * (WG / TK);
        bok[t] = c < ncols;
        int ci = bok[t] ? c / kk2 : 0, r = c - ci * kk2;
        xb[t] = (ulong)(grp * cig + ci) * H * W;
        iy0[t] = (r / KW) * DH - PT;
        ix0[t] = (r % KW) * DW - PL;
    }

    float acc[RM][RN];
    for (int a = 0; a < RM; a++)
        for (int b = 0; b < RN; b++)
            acc[a][b] = 0.0f;
    const int tm = lid / NDIM, tn = lid % NDIM;

    /* This item's k = (n, oy, ox) advances by TK per step: divisions once here, then increments
     * (64-bit divisions per step cost more instructions than the step's multiply-adds). */
    long ka = kbeg + akr;
    int n = (int)(min(ka, K - 1) / hw), oy, ox;
    {
        const int r0 = (int)(min(ka, K - 1) - (long)n * hw);
        oy = r0 / WO;
        ox = r0 - oy * WO;
    }
    for (long k0 = kbeg; k0 < kend; k0 += TK, ka += TK) {
        const int ok = ka < kend, r = oy * WO + ox;
        ulong dyb = OFF.s0 + ((ulong)n * CO + (ulong)grp * cog) * hw + r;
        for (int t = 0; t < LA; t++) {
            int m = m0 + am + t * (WG / TK);
            As[akr][am + t * (WG / TK)] = ok && m < cog ? dy[dyb + (ulong)m * hw] : 0.0f;
        }
        ulong xn = OFF.s1 + (ulong)n * CI * H * W;
        for (int t = 0; t < LB; t++) {
            int iy = oy * SH + iy0[t], ix = ox * SW + ix0[t];
            float v = 0.0f;
            if (ok && bok[t] && iy >= 0 && iy < H && ix >= 0 && ix < W)
                v = x[xn + xb[t] + (ulong)iy * W + ix];
            Bs[bkr][bcl + t * (WG / TK)] = v;
        }
        for (ox += TK; ox >= WO;) { /* next k: TK further */
            ox -= WO;
            if (++oy == HO) {
                oy = 0;
                n++;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int kk = 0; kk < TK; kk++) {
            float a[RM], b[RN];
            for (int i = 0; i < RM; i++)
                a[i] = As[kk][tm + i * MDIM];
            for (int j = 0; j < RN; j++)
                b[j] = Bs[kk][tn + j * NDIM];
            for (int i = 0; i < RM; i++)
                for (int j = 0; j < RN; j++)
                    acc[i][j] = fma(a[i], b[j], acc[i][j]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    if (S > 1) {
        const int tile = (grp * get_num_groups(1) + get_group_id(1)) * get_num_groups(0) +
                         get_group_id(0);
        __global volatile float *part =
            (__global volatile float *)(ws + MAX_COUNTERS) + (ulong)tile * S * (TM * TN);
        for (int i = 0; i < RM; i++)
            for (int j = 0; j < RN; j++)
                part[(ulong)split * TM * TN + (i * RN + j) * WG + lid] = acc[i][j];
        mem_fence(CLK_GLOBAL_MEM_FENCE);
        barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
        if (lid == 0)
            last = atomic_inc(&ws[tile]) == (uint)(S - 1);
        barrier(CLK_LOCAL_MEM_FENCE);
        if (!last)
            return; /* uniform across the group */
        mem_fence(CLK_GLOBAL_MEM_FENCE);
        /* chunk-outer: all of the item's values of one chunk at once (one L2 round trip per
         * chunk; volatile loads keep program order, so the compiler cannot reorder a value-outer
         * loop); additions in chunk order per value */
        for (int i = 0; i < RM; i++)
            for (int j = 0; j < RN; j++)
                acc[i][j] = 0.0f;
        for (int c = 0; c < S; c++)
            for (int i = 0; i < RM; i++)
                for (int j = 0; j < RN; j++)
                    acc[i][j] += part[(ulong)c * TM * TN + (i * RN + j) * WG + lid];
        if (lid == 0)
            atomic_xchg(&ws[tile], 0u); /* ready for the next launch */
    }
    for (int i = 0; i < RM; i++) {
        int m = m0 + tm + i * MDIM;
        if (m >= cog)
            continue;
        ulong base = OFF.s2 + (ulong)(grp * cog + m) * ncols;
        for (int j = 0; j < RN; j++) {
            int c = c0 + tn + j * NDIM;
            if (c < ncols)
                dwt[base + c] = acc[i][j];
        }
    }
}

/* One item per dx element: sum over the taps that reach an output position, then over co. */
__kernel void conv_bwd_input_direct(__global const float *dy, __global const float *wt,
                                    __global float *dx, int16 G, ulong4 OFF)
{
    const ulong e = get_global_id(0);
    const ulong total = (ulong)NB * CI * H * W;
    if (e >= total)
        return;
    const int w = (int)(e % W), h = (int)(e / W % H);
    const ulong nc = e / ((ulong)H * W);
    const int c = (int)(nc % CI);
    const ulong n = nc / CI;
    const int cig = CI / GROUPS, cog = CO / GROUPS, grp = c / cig, ci = c % cig;
    const ulong hw = (ulong)HO * WO;
    const ulong dyb = OFF.s0 + (n * CO + (ulong)grp * cog) * hw;
    const ulong wb = OFF.s1 + ((ulong)grp * cog * cig + ci) * KH * KW;
    float s = 0.0f;
    for (int ky = 0; ky < KH; ky++) {
        int ty = h + PT - ky * DH;
        if (ty < 0 || ty % SH || ty / SH >= HO)
            continue;
        for (int kx = 0; kx < KW; kx++) {
            int tx = w + PL - kx * DW;
            if (tx < 0 || tx % SW || tx / SW >= WO)
                continue;
            ulong o = dyb + (ulong)(ty / SH) * WO + tx / SW;
            ulong q = wb + ky * KW + kx;
            for (int co = 0; co < cog; co++)
                s = fma(dy[o + co * hw], wt[q + (ulong)co * cig * KH * KW], s);
        }
    }
    dx[OFF.s2 + e] = s;
}

/* One item per dw element: the sum over the batch and every output position. */
__kernel void conv_bwd_weight_direct(__global const float *dy, __global const float *x,
                                     __global float *dwt, int16 G, ulong4 OFF)
{
    const ulong e = get_global_id(0);
    const int cig = CI / GROUPS, cog = CO / GROUPS;
    const ulong total = (ulong)CO * cig * KH * KW;
    if (e >= total)
        return;
    const int kx = (int)(e % KW), ky = (int)(e / KW % KH);
    const int ci = (int)(e / ((ulong)KH * KW) % cig), co = (int)(e / ((ulong)KH * KW * cig));
    const int grp = co / cog;
    const ulong hw = (ulong)HO * WO;
    /* output rows / columns whose tap lands inside x */
    const int oy_lo = max(0, (PT - ky * DH + SH - 1) / SH);
    const int oy_hi = min(HO, (H - 1 + PT - ky * DH) >= 0 ? (H - 1 + PT - ky * DH) / SH + 1 : 0);
    const int ox_lo = max(0, (PL - kx * DW + SW - 1) / SW);
    const int ox_hi = min(WO, (W - 1 + PL - kx * DW) >= 0 ? (W - 1 + PL - kx * DW) / SW + 1 : 0);
    float s = 0.0f;
    for (int n = 0; n < NB; n++) {
        ulong dyb = OFF.s0 + ((ulong)n * CO + co) * hw;
        ulong xb = OFF.s1 + ((ulong)n * CI + grp * cig + ci) * H * W;
        for (int oy = oy_lo; oy < oy_hi; oy++) {
            ulong xr = xb + (ulong)(oy * SH - PT + ky * DH) * W;
            ulong dr = dyb + (ulong)oy * WO;
            for (int ox = ox_lo; ox < ox_hi; ox++)
                s = fma(dy[dr + ox], x[xr + ox * SW - PL + kx * DW], s);
        }
    }
    dwt[OFF.s2 + e] = s;
}
