/* Softmax family over the last axis: softmax, log-softmax and their backward passes.
 *
 * Layout: `rows` contiguous f32 rows of length n. Each tensor is a buffer plus an element offset
 * (64-bit). Outputs may be the very same memory as an input (in place): every element is read and
 * written by the same work item, and all reads of the reduction pass finish before a barrier.
 *
 * Work split: a work-group of SM_WG items is cut into teams of SM_TEAM items (a power of two); a
 * team owns one row, so a group covers SM_WG / SM_TEAM rows. SM_TEAM = 1 is one item per row
 * (short rows), SM_TEAM = SM_WG one group per row (long rows). Item t of a team handles elements
 * t, t + SM_TEAM, t + 2 SM_TEAM, ... (adjacent items read adjacent addresses).
 *
 * Algorithm (forward): each item forms a pair (m, s): the max of its elements and the sum of
 * exp(x - m). Pairs combine as m = max(m1, m2), s = s1 exp(m1 - m) + s2 exp(m2 - m) in one
 * local-memory tree per team, giving the row's max M and sum S; then softmax = exp(x - M) / S and
 * log-softmax = (x - M) - log S. Nothing overflows: every exponent is <= 0.
 *   SM_K > 0: each item keeps its <= SM_K elements in registers (the row is read from global memory
 *     once; exp(x - m) is kept too, so softmax costs one exp per element).
 *   SM_K = 0: streaming for long rows: m and s are updated online (s is rescaled when m grows) and
 *     the output pass reads the row again (from cache).
 * Backward: one tree sum per team (of dy * y for softmax, of dy for log-softmax), then
 *   softmax: dx = y (dy - sum), log-softmax: dx = dy - exp(y) sum.
 * Special values follow the plain formula: a NaN makes its row NaN; -inf entries give 0 (and -inf
 * in log-softmax); a row that is all -inf, or holds +inf, gives NaN.
 *
 * CPU variant (-DSM_CPU=1, for CPU devices such as POCL, which runs a group as a loop over its items
 * and pays for every barrier): one item per row, no local memory, no barriers, contiguous passes
 * over the row (it stays in cache) with float16 vectors: softmax: max, then e = exp(x - M) stored
 * to out while summed, then out *= 1 / S; log-softmax: max, sum of exp, out = (x - M) - log S;
 * backward: the sum, then dx. Any local size works (the host picks it).
 *
 * -D contract: SM_WG (the launch's local size), SM_TEAM (a power of two dividing SM_WG), SM_K (0,
 * or a bound with n <= SM_K * SM_TEAM). The host checks SM_WG against CL_KERNEL_WORK_GROUP_SIZE
 * and 2 * SM_WG * 4 bytes of local memory against the context's budget. SM_CPU (0 / 1) ignores
 * the other three.
 */

#ifndef SM_WG
#define SM_WG 256 // work-group size
#endif
#ifndef SM_TEAM
#define SM_TEAM 256 // items per row
#endif
#ifndef SM_K
#define SM_K 0 // elements per item held in registers; 0 = stream
#endif
#ifndef SM_CPU
#define SM_CPU 0 // 1: the barrier-free CPU kernels (one item per row)
#endif

/* No native_exp: results must hold the same bounds on every device. CPU kernels: the precise
 * built-in exp (POCL vectorises it; measured faster there than the alternatives). GPU kernels:
 * exp(d) = exp2(d log2 e) with the precise exp2, cheaper than exp on NVIDIA; rounding d log2 e
 * adds <= 2^-18 absolute to the exponent for |d| < 128, i.e. <= 3e-6 relative (softmax's tolerance
 * is 2e-5; the row sum is unaffected: every term is divided by the sum of the same terms). */
#if SM_CPU
#define sm_exp exp
#else
#define sm_exp(v) exp2((v) * 1.44269504088896341f)
#endif

/* exp(v - m) for an element v of a pair whose max is m; -inf contributes 0 even when m is -inf. */
static inline float sm_term(float v, float m)
{
    return v == -INFINITY ? 0.0f : sm_exp(v - m);
}

#if SM_CPU
/* ------------------------------------------------ CPU: one item per row */

/* Largest element of the row (NaN sticks, so a NaN row stays NaN). */
static inline float cpu_row_max(__global const float *xr, ulong n)
{
    float16 v = (float16)(-INFINITY);
    ulong i = 0;
    for (; i + 16 <= n; i += 16) {
        float16 t = vload16(0, xr + i);
        v = select(v, t, isnan(t) | (t > v));
    }
    float8 h = select(v.lo, v.hi, isnan(v.hi) | (v.hi > v.lo));
    float4 q = select(h.lo, h.hi, isnan(h.hi) | (h.hi > h.lo));
    float2 d = select(q.lo, q.hi, isnan(q.hi) | (q.hi > q.lo));
    float m = (isnan(d.y) || d.y > d.x) ? d.y : d.x;
    for (; i < n; i++)
        m = (isnan(xr[i]) || xr[i] > m) ? xr[i] : m;
    return m;
}

static inline float cpu_hsum(float16 v)
{
    float8 h = v.lo + v.hi;
    float4 q = h.lo + h.hi;
    float2 d = q.lo + q.hi;
    return d.x + d.y;
}

/* exp(v - m), with -inf giving 0 even when m is -inf (then nothing is finite: the row is NaN
 * through 1 / 0 * 0 anyway, as the plain formula gives). */
#define CPU_TERM(v, m) select(sm_exp((v) - (m)), (float16)(0.0f), isinf(v) & ((v) < 0.0f))

__kernel void softmax_fwd(__global const float *x, ulong x_off, __global float *out, ulong out_off,
                          ulong rows, ulong n)
{
    const ulong row = get_global_id(0);
    if (row >= rows)
        return;
    __global const float *xr = x + x_off + row * n;
    __global float *yr = out + out_off + row * n;
    const float m = cpu_row_max(xr, n);
    float16 s16 = (float16)(0.0f);
    ulong i = 0;
    for (; i + 16 <= n; i += 16) {
        float16 e = CPU_TERM(vload16(0, xr + i), m);
        vstore16(e, 0, yr + i);
        s16 += e;
    }
    float s = cpu_hsum(s16);
    for (; i < n; i++) {
        float e = sm_term(xr[i], m);
        yr[i] = e;
        s += e;
    }
    const float inv = 1.0f / s;
    for (i = 0; i + 16 <= n; i += 16)
        vstore16(vload16(0, yr + i) * inv, 0, yr + i);
    for (; i < n; i++)
        yr[i] *= inv;
}

__kernel void log_softmax_fwd(__global const float *x, ulong x_off, __global float *out,
                              ulong out_off, ulong rows, ulong n)
{
    const ulong row = get_global_id(0);
    if (row >= rows)
        return;
    __global const float *xr = x + x_off + row * n;
    __global float *yr = out + out_off + row * n;
    const float m = cpu_row_max(xr, n);
    float16 s16 = (float16)(0.0f);
    ulong i = 0;
    for (; i + 16 <= n; i += 16)
        s16 += CPU_TERM(vload16(0, xr + i), m);
    float s = cpu_hsum(s16);
    for (; i < n; i++)
        s += sm_term(xr[i], m);
    const float lse = log(s);
    for (i = 0; i + 16 <= n; i += 16)
        vstore16((vload16(0, xr + i) - m) - lse, 0, yr + i);
    for (; i < n; i++)
        yr[i] = (xr[i] - m) - lse;
}

/* LOG = 0: dx = y (dy - sum(dy y)); 1: dx = dy - exp(y) sum(dy). dx may be y or dy exactly. */
static inline __attribute__((always_inline)) void cpu_backward(__global const float *y, ulong y_off, __global const float *dy,
                         ulong dy_off, __global float *dx, ulong dx_off, ulong rows, ulong n,
                         int LOG)
{
    const ulong row = get_global_id(0);
    if (row >= rows)
        return;
    __global const float *yr = y + y_off + row * n;
    __global const float *gr = dy + dy_off + row * n;
    __global float *dr = dx + dx_off + row * n;
    float16 s16 = (float16)(0.0f);
    ulong i = 0;
    for (; i + 16 <= n; i += 16) {
        float16 g = vload16(0, gr + i);
        s16 += LOG ? g : g * vload16(0, yr + i);
    }
    float sum = cpu_hsum(s16);
    for (; i < n; i++)
        sum += LOG ? gr[i] : gr[i] * yr[i];
    for (i = 0; i + 16 <= n; i += 16) {
        float16 yv = vload16(0, yr + i), g = vload16(0, gr + i);
        vstore16(LOG ? g - sm_exp(yv) * sum : yv * (g - sum), 0, dr + i);
    }
    for (; i < n; i++) {
        float yv = yr[i], g = gr[i];
        dr[i] = LOG ? g - sm_exp(yv) * sum : yv * (g - sum);
    }
}

__kernel void softmax_bwd(__global const float *y, ulong y_off, __global const float *dy,
                          ulong dy_off, __global float *dx, ulong dx_off, ulong rows, ulong n)
{
    cpu_backward(y, y_off, dy, dy_off, dx, dx_off, rows, n, 0);
}

__kernel void log_softmax_bwd(__global const float *y, ulong y_off, __global const float *dy,
                              ulong dy_off, __global float *dx, ulong dx_off, ulong rows, ulong n)
{
    cpu_backward(y, y_off, dy, dy_off, dx, dx_off, rows, n, 1);
}

#else /* GPU variant */

#if SM_TEAM < 1 || SM_TEAM > SM_WG || (SM_TEAM & (SM_TEAM - 1)) != 0 || SM_WG % SM_TEAM != 0
#error "SM_TEAM must be a power of two dividing SM_WG"
#endif
#if SM_K < 0 || SM_K > 64
#error "SM_K must be in 0..64"
#endif

#define SM_ROWS_PER_GROUP (SM_WG / SM_TEAM)

/* This item's row (or `rows` when its team has none), its index in the team, and its row length:
 * 0 for teams past the last row, so they load nothing but still reach every barrier. */
#define SM_SETUP()                                                                                 \
    const uint lid = get_local_id(0);                                                              \
    const uint tl = lid & (SM_TEAM - 1);                                                           \
    const ulong row = (ulong)get_group_id(0) * SM_ROWS_PER_GROUP + lid / SM_TEAM;                  \
    const ulong len = row < rows ? n : 0;                                                          \
    const ulong base = row < rows ? row * n : 0


/* s rescaled from max m to max M >= m (exact when equal, also when both are -inf). */
static inline float sm_rescale(float s, float m, float M)
{
    return m == M ? s : s * sm_exp(m - M);
}

/* Combine every team's (m, s) pairs in lm/ls; each item gets its row's (M, S). */
static inline void sm_pair_reduce(__local float *lm, __local float *ls, uint lid, uint tl, float *m,
                           float *s)
{
    lm[lid] = *m;
    ls[lid] = *s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint h = SM_TEAM / 2; h > 0; h >>= 1) {
        if (tl < h) {
            float m1 = lm[lid], m2 = lm[lid + h];
            float M = m2 > m1 ? m2 : m1;
            ls[lid] = sm_rescale(ls[lid], m1, M) + sm_rescale(ls[lid + h], m2, M);
            lm[lid] = M;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    *m = lm[lid - tl];
    *s = ls[lid - tl];
}

/* Sum every team's values in ls; each item gets its row's total. */
static inline float sm_sum_reduce(__local float *ls, uint lid, uint tl, float v)
{
    ls[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint h = SM_TEAM / 2; h > 0; h >>= 1) {
        if (tl < h)
            ls[lid] += ls[lid + h];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    return ls[lid - tl];
}

#if SM_K > 0
/* ------------------------------------------------ row held in registers */

/* LOG = 0: softmax, 1: log-softmax. */
static inline __attribute__((always_inline)) void sm_forward_regs(__global const float *x, ulong x_off, __global float *out,
                            ulong out_off, ulong rows, ulong n, int LOG, __local float *lm,
                            __local float *ls)
{
    SM_SETUP();
    const uint cnt = (uint)len;
    __global const float *xr = x + x_off + base;
    float v[SM_K];
    float m = -INFINITY;
#pragma unroll
    for (uint k = 0; k < SM_K; k++) {
        uint i = tl + k * SM_TEAM;
        v[k] = i < cnt ? xr[i] : -INFINITY;
        m = v[k] > m ? v[k] : m;
    }
    float e[SM_K];
    float s = 0.0f;
#pragma unroll
    for (uint k = 0; k < SM_K; k++) {
        e[k] = sm_term(v[k], m);
        s += e[k];
    }
    const float m_item = m;
    sm_pair_reduce(lm, ls, lid, tl, &m, &s);
    __global float *yr = out + out_off + base;
    if (LOG) {
        const float lse = log(s);
#pragma unroll
        for (uint k = 0; k < SM_K; k++) {
            uint i = tl + k * SM_TEAM;
            if (i < cnt)
                yr[i] = (v[k] - m) - lse;
        }
    } else {
        /* exp(x - M) / S = exp(x - m_item) * (exp(m_item - M) / S): one exp per element. */
        const float scale = sm_rescale(1.0f, m_item, m) / s;
#pragma unroll
        for (uint k = 0; k < SM_K; k++) {
            uint i = tl + k * SM_TEAM;
            if (i < cnt)
                yr[i] = e[k] * scale;
        }
    }
}

static inline __attribute__((always_inline)) void sm_backward_regs(__global const float *y, ulong y_off, __global const float *dy,
                             ulong dy_off, __global float *dx, ulong dx_off, ulong rows, ulong n,
                             int LOG, __local float *ls)
{
    SM_SETUP();
    const uint cnt = (uint)len;
    __global const float *yr = y + y_off + base;
    __global const float *gr = dy + dy_off + base;
    float yv[SM_K], gv[SM_K];
    float part = 0.0f;
#pragma unroll
    for (uint k = 0; k < SM_K; k++) {
        uint i = tl + k * SM_TEAM;
        yv[k] = i < cnt ? yr[i] : 0.0f;
        gv[k] = i < cnt ? gr[i] : 0.0f;
        part += LOG ? gv[k] : gv[k] * yv[k];
    }
    const float sum = sm_sum_reduce(ls, lid, tl, part);
    __global float *dr = dx + dx_off + base;
#pragma unroll
    for (uint k = 0; k < SM_K; k++) {
        uint i = tl + k * SM_TEAM;
        if (i < cnt)
            dr[i] = LOG ? gv[k] - sm_exp(yv[k]) * sum : yv[k] * (gv[k] - sum);
    }
}

#define SM_FORWARD sm_forward_regs
#define SM_BACKWARD sm_backward_regs

#else
/* ------------------------------------------------ streaming (long rows) */

static inline __attribute__((always_inline)) void sm_forward_stream(__global const float *x, ulong x_off, __global float *out,
                              ulong out_off, ulong rows, ulong n, int LOG, __local float *lm,
                              __local float *ls)
{
    SM_SETUP();
    __global const float *xr = x + x_off + base;
    float m = -INFINITY, s = 0.0f;
    for (ulong i = tl; i < len; i += SM_TEAM) {
        float v = xr[i];
        if (v > m) {
            /* (v - v) + 1 is 1, or NaN for v = +inf, as exp(v - v) would be. */
            s = s * sm_exp(m - v) + ((v - v) + 1.0f);
            m = v;
        } else {
            s += sm_term(v, m);
        }
    }
    sm_pair_reduce(lm, ls, lid, tl, &m, &s);
    __global float *yr = out + out_off + base;
    if (LOG) {
        const float lse = log(s);
        for (ulong i = tl; i < len; i += SM_TEAM)
            yr[i] = (xr[i] - m) - lse;
    } else {
        const float inv = 1.0f / s;
        for (ulong i = tl; i < len; i += SM_TEAM)
            yr[i] = sm_exp(xr[i] - m) * inv;
    }
}

static inline __attribute__((always_inline)) void sm_backward_stream(__global const float *y, ulong y_off, __global const float *dy,
                               ulong dy_off, __global float *dx, ulong dx_off, ulong rows,
                               ulong n, int LOG, __local float *ls)
{
    SM_SETUP();
    __global const float *yr = y + y_off + base;
    __global const float *gr = dy + dy_off + base;
    float part = 0.0f;
    for (ulong i = tl; i < len; i += SM_TEAM)
        part += LOG ? gr[i] : gr[i] * yr[i];
    const float sum = sm_sum_reduce(ls, lid, tl, part);
    __global float *dr = dx + dx_off + base;
    for (ulong i = tl; i < len; i += SM_TEAM) {
        float yv = yr[i], gv = gr[i];
        dr[i] = LOG ? gv - sm_exp(yv) * sum : yv * (gv - sum);
    }
}

#define SM_FORWARD sm_forward_stream
#define SM_BACKWARD sm_backward_stream
#endif

/* ------------------------------------------------ entry points */

__kernel __attribute__((reqd_work_group_size(SM_WG, 1, 1))) void
softmax_fwd(__global const float *x, ulong x_off, __global float *out, ulong out_off, ulong rows,
            ulong n)
{
    __local float lm[SM_WG], ls[SM_WG];
    SM_FORWARD(x, x_off, out, out_off, rows, n, 0, lm, ls);
}

__kernel __attribute__((reqd_work_group_size(SM_WG, 1, 1))) void
log_softmax_fwd(__global const float *x, ulong x_off, __global float *out, ulong out_off,
                ulong rows, ulong n)
{
    __local float lm[SM_WG], ls[SM_WG];
    SM_FORWARD(x, x_off, out, out_off, rows, n, 1, lm, ls);
}

/* The backward holds two registers per element: past 16384 elements per group (1024 x 32) the
 * host streams instead (softmax.c BWD_MAX_GROUP_ELEMENTS; ptxas spilled them on the H200), so
 * that program's backward kernels are not built. */
#if SM_K == 0 || SM_WG * SM_K <= 16384
__kernel __attribute__((reqd_work_group_size(SM_WG, 1, 1))) void
softmax_bwd(__global const float *y, ulong y_off, __global const float *dy, ulong dy_off,
            __global float *dx, ulong dx_off, ulong rows, ulong n)
{
    __local float ls[SM_WG];
    SM_BACKWARD(y, y_off, dy, dy_off, dx, dx_off, rows, n, 0, ls);
}

__kernel __attribute__((reqd_work_group_size(SM_WG, 1, 1))) void
log_softmax_bwd(__global const float *y, ulong y_off, __global const float *dy, ulong dy_off,
                __global float *dx, ulong dx_off, ulong rows, ulong n)
{
    __local float ls[SM_WG];
    SM_BACKWARD(y, y_off, dy, dy_off, dx, dx_off, rows, n, 1, ls);
}
#endif /* SM_WG * SM_K */
#endif /* SM_CPU */
