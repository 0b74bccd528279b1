/* Layer norm, RMS norm and group norm (include/cltensor_norm.h): checks, then the row kernels of
 * cl_kernels/norm/norm.cl (its banner explains rows, segments and the parameter index). */
#include <stdlib.h>
#include <string.h>

#include "cltensor_norm.h"
#include "ops/common/launch.h"
#include "ops/norm/norm_internal.h"

#define F_RMS 1u
#define F_GAMMA 2u
#define F_BETA 4u
#define F_SAVE 8u
#define F_SAVE_MEAN 16u
#define F_VEC4 32u

/* The geometry of one call: R rows of L elements, parameter index by segments of S, G groups. */
#define LAST_AXIS INT64_MIN /* the groups value of layer and RMS norm */

typedef struct row_geom {
    uint64_t R, L, S, G, P; /* P: the number of affine parameters (D, or C) */
} row_geom;

/* Layer / RMS norm: rows of the last dim. */
static clt_status last_axis_geom(const clt_tensor *x, const char *who, row_geom *g)
{
    if (x->ndim < 1)
        return clt__fail(x->ctx, CLT_ERR_INVALID_SHAPE, "%s: x is a scalar, need at least one dim", who);
    g->L = (uint64_t)x->shape[x->ndim - 1];
    g->R = g->L ? (uint64_t)x->numel / g->L : 0;
    g->S = g->G = 1;
    g->P = g->L;
    return CLT_SUCCESS;
}

/* Group norm: x [N, C, *], rows (n, group) of C / groups * HW. */
static clt_status group_geom(const clt_tensor *x, int64_t groups, const char *who, row_geom *g)
{
    if (x->ndim < 2)
        return clt__fail(x->ctx, CLT_ERR_INVALID_SHAPE, "%s: x has %d dims, need [N, C, *]", who,
                         x->ndim);
    int64_t N = x->shape[0], C = x->shape[1];
    if (groups < 1 || C % groups != 0)
        return clt__fail(x->ctx, CLT_ERR_INVALID_ARGUMENT,
                         "%s: groups %lld must be >= 1 and divide C = %lld", who, (long long)groups,
                         (long long)C);
    uint64_t hw = 1;
    for (int d = 2; d < x->ndim; d++)
        hw *= (uint64_t)x->shape[d];
    g->G = (uint64_t)groups;
    g->R = (uint64_t)N * g->G;
    g->S = hw;
    g->L = (uint64_t)(C / groups) * hw;
    g->P = (uint64_t)C;
    return CLT_SUCCESS;
}

/* groups == LAST_AXIS: layer / RMS norm rows; else group norm. */
static clt_status geometry(const clt_tensor *x, int64_t groups, const char *who, row_geom *g)
{
    return groups == LAST_AXIS ? last_axis_geom(x, who, g) : group_geom(x, groups, who, g);
}

/* A tensor of exactly n elements (any shape), or NULL. */
static clt_status check_numel(const clt_tensor *t, const char *name, uint64_t n, const char *who)
{
    if (t && (uint64_t)t->numel != n)
        return clt__fail(t->ctx, CLT_ERR_INVALID_SHAPE, "%s: %s has %lld elements, expected %llu",
                         who, name, (long long)t->numel, (unsigned long long)n);
    return CLT_SUCCESS;
}

static clt_status check_same(const clt_tensor *t, const char *name, const clt_tensor *x, const char *who)
{
    if (t && !clt__f32_same_dims(t, x))
        return clt__fail(t->ctx, CLT_ERR_INVALID_SHAPE, "%s: %s's shape differs from x's", who, name);
    return CLT_SUCCESS;
}

/* rownorm_forward's group on GPU-style devices (wg: the family's size, 256 where the device allows
 * it): the smallest power of two from NORM_ROW_MIN_WG whose items hold a row of L in registers
 * (NORM_RN_REG each), at most wg. Smaller groups, more of them per SM, keep more rows' loads in
 * flight: H200, layer_norm 4096 x 1024 17.9 us in groups of 256, 12.0 in 128 (PyTorch 15.2);
 * rms_norm 14.8 -> 10.5 (bench/RESULTS.md). 64 items holding 16 values each measured 14.9. Rows
 * of 512 < L <= 1024 take 128 items; shorter ones and longer ones the family's size.
 * CLT_NORM_ROW_WG=<power of two from 64 up to wg> forces a size (A/B runs). */
#define NORM_ROW_MIN_WG 128u
static size_t row_group(size_t wg, uint64_t L)
{
    const char *env = getenv("CLT_NORM_ROW_WG");
    if (env && *env) {
        size_t forced = (size_t)strtoul(env, NULL, 10);
        if (forced >= 64 && forced <= wg && !(forced & (forced - 1)))
            return forced;
    }
    /* rows that NORM_ROW_MIN_WG items would hold at half their registers or less keep wg:
     * layer_norm 1024 x 128 measured 6.5-7.0 us in 256-item groups, 8.7-9.4 in 128 */
    if (L * 2 <= (uint64_t)NORM_ROW_MIN_WG * NORM_RN_REG)
        return wg;
    size_t fit = NORM_ROW_MIN_WG;
    while (fit < wg && fit * NORM_RN_REG < L)
        fit *= 2;
    return fit < wg ? fit : wg;
}

/* CLT_NORM_VEC4=0: the scalar register path everywhere (A/B runs). */
static int vec4_off(void)
{
    const char *env = getenv("CLT_NORM_VEC4");
    return env && !strcmp(env, "0");
}

/* t[0..5] = x, gamma, beta, y, mean, rstd. */
static clt_status forward(const char *who, const clt_tensor *const *t, int64_t groups, float eps,
                          unsigned rms)
{
    static const char *const names[6] = {"x", "gamma", "beta", "y", "mean", "rstd"};
    clt_status st = clt__f32_check(who, 6, t, names, 0x36u, 0);
    if (st != CLT_SUCCESS)
        return st;
    clt_context *ctx = t[0]->ctx;
    row_geom geom = {0, 0, 0, 0, 0}, *g = &geom;
    if ((st = geometry(t[0], groups, who, g)) != CLT_SUCCESS)
        return st;
    if ((st = clt__norm_check_eps(ctx, eps, who)) || (st = check_same(t[3], "y", t[0], who)) ||
        (st = check_numel(t[1], "gamma", g->P, who)) || (st = check_numel(t[2], "beta", g->P, who)) ||
        (st = check_numel(t[4], "mean", g->R, who)) || (st = check_numel(t[5], "rstd", g->R, who)))
        return st;
    int i, j;
    if (clt__f32_first_overlap(6, t, 0x07u, &i, &j))
        return clt__fail(ctx, CLT_ERR_ALIASING, "%s: %s overlaps %s", who, names[i], names[j]);
    if (g->R == 0 || g->L == 0)
        return CLT_SUCCESS;
    cl_kernel k;
    size_t wg;
    if ((st = clt__norm_kernel(ctx, "norm", "rownorm_forward", &k, &wg)) != CLT_SUCCESS)
        return st;
    if (wg > 1) { /* GPU-style: the group the row needs (row_group) */
        size_t fit = row_group(wg, g->L);
        cl_kernel kf = NULL;
        if (fit < wg && (st = clt__norm_kernel_at(ctx, "norm", "rownorm_forward", fit, &kf)))
            return st;
        if (kf) {
            k = kf;
            wg = fit;
        }
    }
    cl_ulong8 off = {{0}};
    for (int a = 0; a < 6; a++)
        off.s[a] = clt__f32_off(t[a]);
    cl_ulong4 dims = {{g->R, g->L, g->S, g->G}};
    cl_uint flags = rms | (t[1] ? F_GAMMA : 0) | (t[2] ? F_BETA : 0) | (t[5] ? F_SAVE : 0) |
                    (t[4] ? F_SAVE_MEAN : 0);
    /* GPU-style, layer / RMS norm: float4 rows where every row and parameter starts on 16 bytes
     * (H200 rms_norm 4096 x 1024: see row_group) */
    if (wg > 1 && g->S == 1 && g->G == 1 && g->L % 4 == 0 && off.s[0] % 4 == 0 &&
        off.s[3] % 4 == 0 && (!t[1] || off.s[1] % 4 == 0) && (!t[2] || off.s[2] % 4 == 0) &&
        !vec4_off())
        flags |= F_VEC4;
    if ((st = clt__f32_set_buffers(ctx, k, t, NULL, 6, who)) ||
        (st = clt__set_arg(ctx, k, 6, sizeof off, &off, who)) ||
        (st = clt__set_arg(ctx, k, 7, sizeof dims, &dims, who)) ||
        (st = clt__set_arg(ctx, k, 8, sizeof eps, &eps, who)) ||
        (st = clt__set_arg(ctx, k, 9, sizeof flags, &flags, who)))
        return st;
    return clt__norm_launch_groups(ctx, k, g->R, wg, who);
}

#define SPLIT_TC 64u     /* columns per strip of rownorm_dparams_split (norm.cl SPLIT_TC) */
#define SPLIT_MIN_ROWS 8u /* rows each row lane of a block sums at least */

/* Row blocks for rownorm_dparams_split: enough groups (strips * blocks) for the device, each row
 * lane (tr per group) still summing SPLIT_MIN_ROWS rows; rb a multiple of tr. */
static void split_blocks(const clt_context *ctx, uint64_t R, uint64_t strips, uint64_t tr,
                         uint64_t *blocks, uint64_t *rb)
{
    uint64_t target = clt__norm_split_target(ctx), want = (target + strips - 1) / strips;
    uint64_t most = R / (tr * SPLIT_MIN_ROWS);
    if (want > most)
        want = most;
    if (want < 1)
        want = 1;
    uint64_t step = tr;
    *rb = R ? ((R + want - 1) / want + step - 1) / step * step : 0;
    *blocks = *rb ? (R + *rb - 1) / *rb : 1;
}

/* t[0..7] = dy, x, gamma, mean, rstd, dx, dgamma, dbeta (gamma, dx, dgamma, dbeta optional; mean
 * NULL for RMS). dparams first: dx may be dy's memory, and the dparams kernel reads dy. */
static clt_status backward(const char *who, const clt_tensor *const *t, int64_t groups, unsigned rms)
{
    static const char *const names[8] = {"dy", "x", "gamma", "mean", "rstd", "dx", "dgamma", "dbeta"};
    clt_status st = clt__f32_check(who, 8, t, names, 0xE4u | (rms ? 0x08u : 0), 0);
    if (st != CLT_SUCCESS)
        return st;
    clt_context *ctx = t[0]->ctx;
    row_geom geom = {0, 0, 0, 0, 0}, *g = &geom;
    if ((st = geometry(t[1], groups, who, g)) != CLT_SUCCESS)
        return st;
    if ((st = check_same(t[0], "dy", t[1], who)) || (st = check_same(t[5], "dx", t[1], who)) ||
        (st = check_numel(t[2], "gamma", g->P, who)) || (st = check_numel(t[3], "mean", g->R, who)) ||
        (st = check_numel(t[4], "rstd", g->R, who)) || (st = check_numel(t[6], "dgamma", g->P, who)) ||
        (st = check_numel(t[7], "dbeta", g->P, who)))
        return st;
    /* an output (5..7) overlaps nothing else, except dx being exactly dy's memory (in place) */
    for (int o = 5; o < 8; o++)
        for (int a = 0; a < 8; a++) {
            if (a == o || !t[o] || !t[a] || !clt__tensors_overlap(t[o], t[a]))
                continue;
            if (o == 5 && a == 0 && t[0]->storage == t[5]->storage && t[0]->offset == t[5]->offset)
                continue;
            return clt__fail(ctx, CLT_ERR_ALIASING, "%s: %s overlaps %s", who, names[o], names[a]);
        }
    cl_ulong8 off = {{0}};
    for (int a = 0; a < 8; a++)
        off.s[a] = clt__f32_off(t[a]);
    cl_ulong4 dims = {{g->R, g->L, g->S, g->G}};
    /* both kernels are built before either is enqueued: a build failure enqueues nothing */
    int want_params = (t[6] || t[7]) && g->P > 0, want_dx = t[5] && g->R > 0 && g->L > 0;
    int segs = g->S > 1 || g->G > 1, cpu = clt__cpu_style(ctx);
    cl_kernel kp = NULL, kd = NULL;
    size_t wgp = 1, wgd = 1;
    /* CPU column blocks: 64 columns per item while that leaves 4 items per compute unit, else 16 */
    uint64_t cb = cpu && !segs && g->P >= 256 * (uint64_t)ctx->dev->entry->info.compute_units ? 64 : 16;
    const char *pname = segs  ? "rownorm_dparams_segs"
                        : cpu ? (cb == 64 ? "rownorm_dparams_cols64" : "rownorm_dparams_cols16")
                              : "rownorm_dparams_cols";
    if ((want_params && (st = clt__norm_kernel(ctx, "norm", pname, &kp, &wgp)) != CLT_SUCCESS) ||
        (want_dx && (st = clt__norm_kernel(ctx, "norm", "rownorm_backward_dx", &kd, &wgd)) != CLT_SUCCESS))
        return st;
    /* GPUs: the column sums split over strips x row blocks (norm.cl rownorm_dparams_split), which
     * exists in builds of WG >= 64 */
    uint64_t strips = (g->P + SPLIT_TC - 1) / SPLIT_TC, blocks = 1, rb = g->R;
    cl_mem ws = t[1]->storage->mem; /* never touched by the kernel with one block */
    int split = want_params && !segs && !cpu && wgp >= SPLIT_TC && strips <= NORM_COUNTERS;
    if (split) {
        /* the same group size as kp's; a device that runs fewer items of the split kernel per
         * group keeps the one-item-per-column kernel */
        cl_kernel ks;
        if ((st = clt__norm_kernel_at(ctx, "norm", "rownorm_dparams_split", wgp, &ks)) != CLT_SUCCESS)
            return st;
        split = ks != NULL;
        if (split)
            kp = ks;
    }
    if (split) {
        split_blocks(ctx, g->R, strips, wgp / SPLIT_TC, &blocks, &rb);
        if (blocks > 1 && (st = clt__norm_workspace(ctx, (size_t)(blocks * g->P * 2 * sizeof(float)),
                                                    who, &ws)) != CLT_SUCCESS)
            return st;
    }
    if (want_params) {
        cl_uint flags = rms | (t[7] ? F_BETA : 0) | (t[6] ? F_SAVE : 0);
        static const int order[6] = {0, 1, 3, 4, 6, 7};
        if ((st = clt__f32_set_buffers(ctx, kp, t, order, 6, who)) ||
            (st = clt__set_arg(ctx, kp, 6, sizeof off, &off, who)) ||
            (st = clt__set_arg(ctx, kp, 7, sizeof dims, &dims, who)) ||
            (st = clt__set_arg(ctx, kp, 8, sizeof flags, &flags, who)))
            return st;
        if (split) {
            cl_ulong rbl = rb;
            if ((st = clt__set_arg(ctx, kp, 9, sizeof ws, &ws, who)) ||
                (st = clt__set_arg(ctx, kp, 10, sizeof rbl, &rbl, who)))
                return st;
            st = clt__norm_launch_groups(ctx, kp, strips * blocks, wgp, who);
        } else if (segs)
            st = clt__norm_launch_groups(ctx, kp, g->P, wgp, who);
        else {
            uint64_t items = cpu ? (g->P + cb - 1) / cb : g->P; /* colsCB: CB columns each */
            size_t local = clt__fit_local(ctx, kp, cpu ? 1 : 64);
            size_t global = (size_t)((items + local - 1) / local) * local;
            st = clt__enqueue_kernel(ctx, kp, 1, &global, &local, who);
        }
        if (st != CLT_SUCCESS)
            return st;
    }
    if (!want_dx)
        return CLT_SUCCESS;
    cl_uint flags = rms | (t[2] ? F_GAMMA : 0);
    if ((st = clt__f32_set_buffers(ctx, kd, t, NULL, 6, who)) ||
        (st = clt__set_arg(ctx, kd, 6, sizeof off, &off, who)) ||
        (st = clt__set_arg(ctx, kd, 7, sizeof dims, &dims, who)) ||
        (st = clt__set_arg(ctx, kd, 8, sizeof flags, &flags, who)))
        return st;
    return clt__norm_launch_groups(ctx, kd, g->R, wgd, who);
}

/* ------------------------------------------------------------------------- public entry points */

clt_status clt_layer_norm(const clt_tensor *x, const clt_tensor *gamma, const clt_tensor *beta,
                          float eps, clt_tensor *y, clt_tensor *mean, clt_tensor *rstd)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_layer_norm";
    const clt_tensor *t[6] = {x, gamma, beta, y, mean, rstd};
    return forward(who, t, LAST_AXIS, eps, 0);
}

clt_status clt_rms_norm(const clt_tensor *x, const clt_tensor *gamma, float eps, clt_tensor *y,
                        clt_tensor *rstd)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_rms_norm";
    const clt_tensor *t[6] = {x, gamma, NULL, y, NULL, rstd};
    return forward(who, t, LAST_AXIS, eps, F_RMS);
}

clt_status clt_group_norm(const clt_tensor *x, int64_t groups, const clt_tensor *gamma,
                          const clt_tensor *beta, float eps, clt_tensor *y, clt_tensor *mean,
                          clt_tensor *rstd)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_group_norm";
    const clt_tensor *t[6] = {x, gamma, beta, y, mean, rstd};
    return forward(who, t, groups, eps, 0);
}

clt_status clt_layer_norm_backward(const clt_tensor *dy, const clt_tensor *x, const clt_tensor *gamma,
                                   const clt_tensor *mean, const clt_tensor *rstd, clt_tensor *dx,
                                   clt_tensor *dgamma, clt_tensor *dbeta)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_layer_norm_backward";
    const clt_tensor *t[8] = {dy, x, gamma, mean, rstd, dx, dgamma, dbeta};
    return backward(who, t, LAST_AXIS, 0);
}

clt_status clt_rms_norm_backward(const clt_tensor *dy, const clt_tensor *x, const clt_tensor *gamma,
                                 const clt_tensor *rstd, clt_tensor *dx, clt_tensor *dgamma)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_rms_norm_backward";
    const clt_tensor *t[8] = {dy, x, gamma, NULL, rstd, dx, dgamma, NULL};
    return backward(who, t, LAST_AXIS, F_RMS);
}

clt_status clt_group_norm_backward(const clt_tensor *dy, const clt_tensor *x, int64_t groups,
                                   const clt_tensor *gamma, const clt_tensor *mean,
                                   const clt_tensor *rstd, clt_tensor *dx, clt_tensor *dgamma,
                                   clt_tensor *dbeta)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_group_norm_backward";
    const clt_tensor *t[8] = {dy, x, gamma, mean, rstd, dx, dgamma, dbeta};
    return backward(who, t, groups, 0);
}
