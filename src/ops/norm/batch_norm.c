/* Batch norm forward and backward (include/cltensor_norm.h): checks, then one launch of
 * cl_kernels/norm/batch_norm.cl each (one work-group per channel), or on GPUs with too few channels
 * to fill the device, two: the split statistics (several groups per channel) and the elementwise
 * pass. */
#include <math.h>

#include "cltensor_norm.h"
#include "ops/common/launch.h"
#include "ops/norm/norm_internal.h"

#define F_TRAIN 1u
#define F_GAMMA 2u
#define F_BETA 4u
#define F_RUNNING 8u
#define F_SAVE 16u
#define F_APPLY_BWD 32u
#define F_APPLY_VEC4 64u /* batchnorm_apply in float4s */
#define F_STATS_VEC4 128u /* batchnorm_stats_split in float4s */
#define SPLIT_MIN_PER_ITEM 16u /* values each item of a chunk group sums at least */
#define APPLY_PER 4u           /* elements per item of batchnorm_apply (batch_norm.cl APPLY_PER) */

void clt_batch_norm_params_init(clt_batch_norm_params *p)
{
    if (!p)
        return;
    p->training = 1;
    p->momentum = 0.1f;
    p->eps = 1e-5f;
}

/* x [N, C, *]: N, C and the flattened trailing dims. */
static clt_status bn_dims(const clt_tensor *x, const char *who, cl_ulong4 *dims)
{
    if (x->ndim < 2)
        return clt__fail(x->ctx, CLT_ERR_INVALID_SHAPE, "%s: x has %d dims, need [N, C] or [N, C, *]",
                         who, x->ndim);
    uint64_t hw = 1;
    for (int d = 2; d < x->ndim; d++)
        hw *= (uint64_t)x->shape[d];
    *dims = (cl_ulong4){{(cl_ulong)x->shape[0], (cl_ulong)x->shape[1], hw, 0}};
    return CLT_SUCCESS;
}

static clt_status per_channel(const clt_tensor *t, const char *name, uint64_t C, const char *who)
{
    if (t && (uint64_t)t->numel != C)
        return clt__fail(t->ctx, CLT_ERR_INVALID_SHAPE, "%s: %s has %lld elements, expected C = %llu",
                         who, name, (long long)t->numel, (unsigned long long)C);
    return CLT_SUCCESS;
}

/* Any output (mask bit set) overlapping any other tensor, except dx being exactly dy (in place). */
static clt_status outputs_apart(clt_context *ctx, int n, const clt_tensor *const *t,
                                const char *const *names, unsigned out_mask, int inplace_out,
                                int inplace_in, const char *who)
{
    for (int o = 0; o < n; o++) {
        if (!(out_mask & (1u << o)) || !t[o])
            continue;
        for (int a = 0; a < n; a++) {
            if (a == o || !t[a] || !clt__tensors_overlap(t[o], t[a]))
                continue;
            if (o == inplace_out && a == inplace_in && t[o]->storage == t[a]->storage &&
                t[o]->offset == t[a]->offset)
                continue;
            return clt__fail(ctx, CLT_ERR_ALIASING, "%s: %s overlaps %s", who, names[o], names[a]);
        }
    }
    return CLT_SUCCESS;
}

/* Chunks per channel for the split kernels (values per chunk in *cl), or 1: the one-group-per-
 * channel kernel. GPUs only, while C groups leave the device short and every item of a chunk group
 * still sums SPLIT_MIN_PER_ITEM values. quads: chunk lengths a multiple of 4 (the float4 statistics). */
static uint64_t split_chunks(clt_context *ctx, uint64_t C, uint64_t M, size_t wg, int quads,
                             uint64_t *cl)
{
    uint64_t target = clt__norm_split_target(ctx);
    if (clt__cpu_style(ctx) || wg < 64 || C >= target || C > NORM_COUNTERS)
        return 1;
    uint64_t k = (target + C - 1) / C, most = M / ((uint64_t)wg * SPLIT_MIN_PER_ITEM);
    if (k > most)
        k = most;
    if (k > wg) /* the last group gathers the partials one per item */
        k = wg;
    if (k < 2)
        return 1;
    *cl = (M + k - 1) / k;
    if (quads) /* whole float4s per chunk (M is a multiple of 4 then) */
        *cl = (*cl + 3) & ~(uint64_t)3;
    return (M + *cl - 1) / *cl; /* no empty chunk */
}

/* The split kernel `name` into *k, when the device runs it in groups of wg too (K <= wg partials
 * are gathered one per item); else *K = 1 and *k stays (the one-group-per-channel kernel). */
static clt_status split_kernel(clt_context *ctx, const char *name, cl_kernel *k, size_t wg, uint64_t *K)
{
    cl_kernel ks;
    clt_status st = clt__norm_kernel_at(ctx, "batch_norm", name, wg, &ks);
    if (st == CLT_SUCCESS && ks)
        *k = ks;
    else if (st == CLT_SUCCESS)
        *K = 1;
    return st;
}

/* The split statistics kernel `name` (arguments 0 .. n - 1 already set) on C * K groups, then
 * batchnorm_apply on every element: u, v (NULL: not read), out at element offsets uvo. */
static clt_status split_run(clt_context *ctx, cl_kernel ks, cl_uint n, size_t wg, cl_ulong4 dims,
                            uint64_t K, uint64_t cl, const clt_tensor *u, const clt_tensor *v,
                            clt_tensor *out, cl_uint flags, const char *who)
{
    uint64_t C = dims.s[1];
    cl_mem ws;
    cl_kernel ka = NULL;
    size_t wga = 1; /* batchnorm_apply from the same build (-DWG), any local size */
    clt_status st = clt__norm_workspace(ctx, (size_t)((C * K + C) * 4 * sizeof(float)), who, &ws);
    if (st || (out && (st = clt__norm_kernel(ctx, "batch_norm", "batchnorm_apply", &ka, &wga))))
        return st;
    cl_ulong clv = cl;
    if ((st = clt__set_arg(ctx, ks, n, sizeof ws, &ws, who)) ||
        (st = clt__set_arg(ctx, ks, n + 1, sizeof clv, &clv, who)) ||
        (st = clt__norm_launch_groups(ctx, ks, C * K, wg, who)) || !out)
        return st;
    cl_ulong4 uvo = {{clt__f32_off(u), v ? clt__f32_off(v) : 0, clt__f32_off(out), 0}};
    dims.s[3] = C * K; /* the coefficients follow the partials */
    if ((st = clt__f32_set_buffer(ctx, ka, 0, u, who)) ||
        (st = clt__f32_set_buffer(ctx, ka, 1, v ? v : u, who)) ||
        (st = clt__f32_set_buffer(ctx, ka, 2, out, who)) ||
        (st = clt__set_arg(ctx, ka, 3, sizeof ws, &ws, who)) ||
        (st = clt__set_arg(ctx, ka, 4, sizeof uvo, &uvo, who)) ||
        (st = clt__set_arg(ctx, ka, 5, sizeof dims, &dims, who)))
        return st;
    /* float4s when no float4 spans two channels and every access is 16-byte aligned */
    uint64_t per = 1;
    if (dims.s[2] % 4 == 0 && ((uvo.s[0] | uvo.s[1] | uvo.s[2]) & 3) == 0) {
        flags |= F_APPLY_VEC4;
        per = 4;
    }
    if ((st = clt__set_arg(ctx, ka, 6, sizeof flags, &flags, who)))
        return st;
    uint64_t items = (dims.s[0] * dims.s[1] * dims.s[2] / per + APPLY_PER - 1) / APPLY_PER;
    return clt__norm_launch_groups(ctx, ka, (items + wga - 1) / wga, wga, who);
}

clt_status clt_batch_norm(const clt_tensor *x, const clt_tensor *gamma, const clt_tensor *beta,
                          clt_tensor *running_mean, clt_tensor *running_var,
                          const clt_batch_norm_params *p, clt_tensor *y, clt_tensor *save_mean,
                          clt_tensor *save_rstd)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_batch_norm";
    static const char *const names[8] = {"x",           "gamma",     "beta",     "y",
                                         "running_mean", "running_var", "save_mean", "save_rstd"};
    const clt_tensor *t[8] = {x, gamma, beta, y, running_mean, running_var, save_mean, save_rstd};
    clt_status st = clt__f32_check(who, 8, t, names, 0xF6u, 0);
    if (st != CLT_SUCCESS)
        return st;
    clt_context *ctx = x->ctx;
    if (!p)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: p is NULL", who);
    if ((st = clt__norm_check_eps(ctx, p->eps, who)) != CLT_SUCCESS)
        return st;
    if (!(p->momentum >= 0.0f && p->momentum <= 1.0f))
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: momentum %g outside [0, 1]", who,
                         (double)p->momentum);
    if (!p->training && (!running_mean || !running_var))
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT,
                         "%s: inference (training 0) needs running_mean and running_var", who);
    if ((running_mean != NULL) != (running_var != NULL))
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT,
                         "%s: running_mean and running_var are given together or not at all", who);
    if ((save_mean != NULL) != (save_rstd != NULL))
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT,
                         "%s: save_mean and save_rstd are given together or not at all", who);
    cl_ulong4 dims;
    if ((st = bn_dims(x, who, &dims)) != CLT_SUCCESS)
        return st;
    if (!clt__f32_same_dims(y, x))
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: y's shape differs from x's", who);
    for (int a = 1; a < 8; a++)
        if (a != 3 && (st = per_channel(t[a], names[a], dims.s[1], who)) != CLT_SUCCESS)
            return st;
    uint64_t M = dims.s[0] * dims.s[2];
    if (p->training && M == 1)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE,
                         "%s: training needs more than 1 value per channel (N * HW = 1)", who);
    if ((st = outputs_apart(ctx, 8, t, names, p->training ? 0xF8u : 0xC8u, -1, -1, who)))
        return st;
    if (dims.s[1] == 0 || M == 0) /* nothing to normalise: the running stats stay */
        return CLT_SUCCESS;
    cl_kernel k;
    size_t wg;
    if ((st = clt__norm_kernel(ctx, "batch_norm", "batchnorm_forward", &k, &wg)) != CLT_SUCCESS)
        return st;
    /* float4 statistics: planes and x's offset in whole float4s */
    const int quads = dims.s[2] % 4 == 0 && clt__f32_off(x) % 4 == 0;
    uint64_t cl = 0, K = p->training ? split_chunks(ctx, dims.s[1], M, wg, quads, &cl) : 1;
    if (K > 1 && (st = split_kernel(ctx, "batchnorm_stats_split", &k, wg, &K)))
        return st;
    cl_ulong8 off;
    for (int a = 0; a < 8; a++)
        off.s[a] = clt__f32_off(t[a]);
    cl_uint flags = (p->training ? F_TRAIN : 0) | (gamma ? F_GAMMA : 0) | (beta ? F_BETA : 0) |
                    (p->training && running_mean ? F_RUNNING : 0) | (save_mean ? F_SAVE : 0) |
                    (K > 1 && quads ? F_STATS_VEC4 : 0);
    if (K > 1) { /* batchnorm_stats_split: the arguments of batchnorm_forward without y */
        static const int order[7] = {0, 1, 2, 4, 5, 6, 7};
        if ((st = clt__f32_set_buffers(ctx, k, t, order, 7, who)) ||
            (st = clt__set_arg(ctx, k, 7, sizeof off, &off, who)) ||
            (st = clt__set_arg(ctx, k, 8, sizeof dims, &dims, who)) ||
            (st = clt__set_arg(ctx, k, 9, sizeof p->eps, &p->eps, who)) ||
            (st = clt__set_arg(ctx, k, 10, sizeof p->momentum, &p->momentum, who)) ||
            (st = clt__set_arg(ctx, k, 11, sizeof flags, &flags, who)))
            return st;
        return split_run(ctx, k, 12, wg, dims, K, cl, x, NULL, y, 0, who);
    }
    if ((st = clt__f32_set_buffers(ctx, k, t, NULL, 8, who)) ||
        (st = clt__set_arg(ctx, k, 8, sizeof off, &off, who)) ||
        (st = clt__set_arg(ctx, k, 9, sizeof dims, &dims, who)) ||
        (st = clt__set_arg(ctx, k, 10, sizeof p->eps, &p->eps, who)) ||
        (st = clt__set_arg(ctx, k, 11, sizeof p->momentum, &p->momentum, who)) ||
        (st = clt__set_arg(ctx, k, 12, sizeof flags, &flags, who)))
        return st;
    return clt__norm_launch_groups(ctx, k, dims.s[1], wg, who);
}

clt_status clt_batch_norm_backward(const clt_tensor *dy, const clt_tensor *x, const clt_tensor *gamma,
                                   const clt_tensor *save_mean, const clt_tensor *save_rstd,
                                   int training, clt_tensor *dx, clt_tensor *dgamma, clt_tensor *dbeta)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_batch_norm_backward";
    static const char *const names[8] = {"dy", "x", "gamma", "save_mean", "save_rstd",
                                         "dx", "dgamma", "dbeta"};
    const clt_tensor *t[8] = {dy, x, gamma, save_mean, save_rstd, dx, dgamma, dbeta};
    clt_status st = clt__f32_check(who, 8, t, names, 0xE4u, 0);
    if (st != CLT_SUCCESS)
        return st;
    clt_context *ctx = x->ctx;
    cl_ulong4 dims;
    if ((st = bn_dims(x, who, &dims)) != CLT_SUCCESS)
        return st;
    if (!clt__f32_same_dims(dy, x) || (dx && !clt__f32_same_dims(dx, x)))
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: %s's shape differs from x's", who,
                         !clt__f32_same_dims(dy, x) ? "dy" : "dx");
    for (int a = 2; a < 8; a++)
        if (a != 5 && (st = per_channel(t[a], names[a], dims.s[1], who)) != CLT_SUCCESS)
            return st;
    if ((st = outputs_apart(ctx, 8, t, names, 0xE0u, 5, 0, who)) != CLT_SUCCESS)
        return st;
    if (dims.s[1] == 0 || (!dx && !dgamma && !dbeta))
        return CLT_SUCCESS;
    cl_kernel k;
    size_t wg;
    if ((st = clt__norm_kernel(ctx, "batch_norm", "batchnorm_backward", &k, &wg)) != CLT_SUCCESS)
        return st;
    uint64_t cl = 0, K = split_chunks(ctx, dims.s[1], dims.s[0] * dims.s[2], wg, 0, &cl);
    if (K > 1 && (st = split_kernel(ctx, "batchnorm_grad_split", &k, wg, &K)))
        return st;
    cl_ulong8 off;
    for (int a = 0; a < 8; a++)
        off.s[a] = clt__f32_off(t[a]);
    cl_uint flags = (training ? F_TRAIN : 0) | (gamma ? F_GAMMA : 0) | (dbeta ? F_BETA : 0) |
                    (dgamma ? F_RUNNING : 0) | (dx ? F_SAVE : 0);
    if (K > 1) { /* batchnorm_grad_split: the arguments of batchnorm_backward without dx */
        static const int order[7] = {0, 1, 2, 3, 4, 6, 7};
        if ((st = clt__f32_set_buffers(ctx, k, t, order, 7, who)) ||
            (st = clt__set_arg(ctx, k, 7, sizeof off, &off, who)) ||
            (st = clt__set_arg(ctx, k, 8, sizeof dims, &dims, who)) ||
            (st = clt__set_arg(ctx, k, 9, sizeof flags, &flags, who)))
            return st;
        return split_run(ctx, k, 10, wg, dims, K, cl, dy, x, dx, F_APPLY_BWD, who);
    }
    if ((st = clt__f32_set_buffers(ctx, k, t, NULL, 8, who)) ||
        (st = clt__set_arg(ctx, k, 8, sizeof off, &off, who)) ||
        (st = clt__set_arg(ctx, k, 9, sizeof dims, &dims, who)) ||
        (st = clt__set_arg(ctx, k, 10, sizeof flags, &flags, who)))
        return st;
    return clt__norm_launch_groups(ctx, k, dims.s[1], wg, who);
}
