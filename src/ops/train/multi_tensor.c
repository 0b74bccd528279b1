/* SGD, the multi-tensor optimiser steps and clip_grad_norm (include/cltensor_train.h): checks, the
 * grouping of tensors into segments, then launches of cl_kernels/train/multi_tensor.cl (its banner
 * explains why segments and not a pointer table). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "memory/memory.h"
#include "ops/common/f32_args.h"
#include "ops/common/launch.h"
#include "ops/train/train_internal.h"
#include "program/program.h"

#define MT_FAMILY "multi_tensor"
#define SLOTS 8
#define ROLES 4
#define OP_ADAM 0u
#define OP_SGD 1u
#define OP_SCALE 2u
#define MT_WG 256u
#define WS_SLOT 5 /* shared with the loss family: same layout (counter, 3 pad, partials) */
#define WS_HEAD 4
#define GROUPS_PER_CU 4u

static const char *const role_names[ROLES] = {"param", "grad", "m", "v"};

/* One segment: a contiguous range of `count` elements in each used role. */
typedef struct mt_seg {
    const clt_tensor *t[ROLES]; /* the first tensor of the range, per role (NULL: unused role) */
    cl_ulong off[ROLES];
    uint64_t count;
} mt_seg;

void clt_sgd_params_init(clt_sgd_params *p)
{
    if (!p)
        return;
    p->lr = 1e-3f;
    p->momentum = 0.0f;
    p->dampening = 0.0f;
    p->weight_decay = 0.0f;
    p->nesterov = 0;
}

/* lists[r][i] for r < roles (a NULL list: role unused). Checks every tensor (not NULL, one context,
 * f32, the shape of lists[0][i]) and the aliasing rule (written roles overlap nothing; role 1, the
 * grads, may overlap grads). written_grads: clip_grad_norm writes its grads, so they overlap nothing. */
static clt_status mt_check(const char *who, int count, const clt_tensor *const *const *lists,
                           int written_grads, clt_context **ctx_out)
{
    *ctx_out = NULL;
    if (count < 0)
        return clt__fail(NULL, CLT_ERR_INVALID_ARGUMENT, "%s: count %d < 0", who, count);
    if (count == 0)
        return CLT_SUCCESS;
    for (int r = 0; r < ROLES; r++)
        if (lists[r] == NULL && r <= 1) /* param and grad lists are required */
            return clt__fail(NULL, CLT_ERR_INVALID_ARGUMENT, "%s: the %s list is NULL", who, role_names[r]);
    clt_context *ctx = NULL;
    for (int r = 0; r < ROLES && !ctx; r++)
        for (int i = 0; lists[r] && i < count && !ctx; i++)
            if (lists[r][i])
                ctx = lists[r][i]->ctx;
    for (int r = 0; r < ROLES; r++)
        for (int i = 0; lists[r] && i < count; i++) {
            const clt_tensor *t = lists[r][i];
            if (!t)
                return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: %s[%d] is NULL", who, role_names[r], i);
            if (t->ctx != ctx)
                return clt__fail(ctx, CLT_ERR_CONTEXT_MISMATCH, "%s: %s[%d] belongs to another context", who,
                                 role_names[r], i);
            if (t->dtype != CLT_F32)
                return clt__fail(ctx, CLT_ERR_INVALID_DTYPE, "%s: %s[%d] is %s, expected f32", who,
                                 role_names[r], i, clt_dtype_name(t->dtype));
            if (r > 0 && !clt__f32_same_dims(t, lists[0][i]))
                return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: %s[%d]'s shape differs from %s[%d]'s", who,
                                 role_names[r], i, role_names[0], i);
        }
    /* aliasing: every pair of (role, index), except read-only grads with grads */
    for (int r = 0; r < ROLES; r++)
        for (int i = 0; lists[r] && i < count; i++)
            for (int q = r; q < ROLES; q++)
                for (int j = (q == r ? i + 1 : 0); lists[q] && j < count; j++) {
                    if (r == 1 && q == 1 && !written_grads)
                        continue;
                    if (clt__tensors_overlap(lists[r][i], lists[q][j]))
                        return clt__fail(ctx, CLT_ERR_ALIASING, "%s: %s[%d] overlaps %s[%d]", who,
                                         role_names[r], i, role_names[q], j);
                }
    *ctx_out = ctx;
    return CLT_SUCCESS;
}

/* Tensors i and i + 1 lie back to back in one buffer for every used role. */
static int abuts(const mt_seg *s, const clt_tensor *const *const *lists, int i)
{
    for (int r = 0; r < ROLES; r++) {
        if (!lists[r])
            continue;
        const clt_tensor *a = lists[r][i], *b = lists[r][i + 1];
        if (a->storage != b->storage || clt__f32_off(b) != s->off[r] + s->count)
            return 0;
    }
    return 1;
}

/* The segments of the lists (empty tensors skipped); *segs is heap memory (free it). */
static clt_status mt_segments(clt_context *ctx, int count, const clt_tensor *const *const *lists,
                              mt_seg **segs, int *nsegs, const char *who)
{
    *segs = malloc(sizeof(mt_seg) * (size_t)(count ? count : 1));
    *nsegs = 0;
    if (!*segs)
        return clt__fail(ctx, CLT_ERR_OUT_OF_HOST_MEMORY, "%s: no host memory for %d segments", who, count);
    mt_seg *cur = NULL;
    for (int i = 0; i < count; i++) {
        if (lists[0][i]->numel == 0)
            continue;
        if (cur && i > 0 && lists[0][i - 1]->numel > 0 && abuts(cur, lists, i - 1)) {
            cur->count += (uint64_t)lists[0][i]->numel;
            continue;
        }
        cur = &(*segs)[(*nsegs)++];
        for (int r = 0; r < ROLES; r++) {
            cur->t[r] = lists[r] ? lists[r][i] : NULL;
            cur->off[r] = lists[r] ? clt__f32_off(lists[r][i]) : 0;
        }
        cur->count = (uint64_t)lists[0][i]->numel;
    }
    return CLT_SUCCESS;
}

static clt_status mt_kernel(clt_context *ctx, const char *name, cl_kernel *k, size_t *wg_out)
{
    size_t wg = MT_WG;
    while (wg > ctx->limits.max_work_group_size && wg > 1)
        wg >>= 1;
    while (wg > 1 && wg * sizeof(float) > ctx->limits.local_mem_budget)
        wg >>= 1;
    for (;;) {
        char options[48]; /* CPU-style devices add mt_apply_cpu (kernel_variants.c lists the same) */
        snprintf(options, sizeof options, "-DWG=%zu%s", wg, clt__cpu_style(ctx) ? " -DMT_CPU=1" : "");
        clt_status st = clt__kernel_get(ctx, MT_FAMILY, options, name, k);
        if (st != CLT_SUCCESS)
            return st;
        if (clt__kernel_work_group_limit(ctx, *k) >= wg || wg == 1) {
            if (wg_out)
                *wg_out = wg;
            return CLT_SUCCESS;
        }
        wg >>= 1;
    }
}

/* Launches of mt_apply over the segments, SLOTS at a time. norm: the clip's norm buffer (OP_SCALE). */
static clt_status mt_apply(clt_context *ctx, const mt_seg *segs, int nsegs, cl_uint op, cl_float8 s,
                           cl_mem norm, cl_ulong norm_off, const char *who)
{
    /* CPU-style devices: mt_apply_cpu, 16 elements of a segment per item (multi_tensor.cl) */
    const int cpu = clt__cpu_style(ctx);
    cl_kernel k;
    clt_status st = mt_kernel(ctx, cpu ? "mt_apply_cpu" : "mt_apply", &k, NULL);
    if (st != CLT_SUCCESS)
        return st;
    cl_mem empty;
    if ((st = clt__pool_empty_mem(ctx, &empty)) != CLT_SUCCESS)
        return st;
    for (int first = 0; first < nsegs; first += SLOTS) {
        int n = nsegs - first < SLOTS ? nsegs - first : SLOTS;
        cl_ulong8 off[ROLES], ends;
        cl_ulong total = 0, items = 0;
        for (int j = 0; j < SLOTS; j++) {
            const mt_seg *g = j < n ? &segs[first + j] : NULL;
            if (g) {
                total += g->count;
                items += cpu ? (g->count + 15) / 16 : g->count;
            }
            ends.s[j] = total;
            for (int r = 0; r < ROLES; r++) {
                cl_mem mem = g && g->t[r] ? g->t[r]->storage->mem : empty;
                off[r].s[j] = g ? g->off[r] : 0;
                if (op == OP_SCALE && r == 2 && j == 0) {
                    mem = norm;
                    off[r].s[j] = norm_off;
                }
                if ((st = clt__set_arg(ctx, k, (cl_uint)(j * ROLES + r), sizeof mem, &mem, who)))
                    return st;
            }
        }
        cl_uint a = SLOTS * ROLES;
        for (int r = 0; r < ROLES; r++)
            if ((st = clt__set_arg(ctx, k, a++, sizeof off[r], &off[r], who)))
                return st;
        if ((st = clt__set_arg(ctx, k, a++, sizeof ends, &ends, who)) ||
            (st = clt__set_arg(ctx, k, a++, sizeof s, &s, who)) ||
            (st = clt__set_arg(ctx, k, a++, sizeof op, &op, who)))
            return st;
        size_t local = clt__fit_local(ctx, k, 256);
        size_t global = (size_t)((items + local - 1) / local) * local;
        if ((st = clt__enqueue_kernel(ctx, k, 1, &global, &local, who)) != CLT_SUCCESS)
            return st;
    }
    return CLT_SUCCESS;
}

/* --------------------------------------------------------------------------------- Adam(W) */

static clt_status adam_multi(const char *who, int decoupled, int count, clt_tensor *const *param,
                             const clt_tensor *const *grad, clt_tensor *const *m, clt_tensor *const *v,
                             const clt_adam_params *p, int64_t step)
{
    const clt_tensor *const *lists[ROLES] = {(const clt_tensor *const *)param, grad,
                                             (const clt_tensor *const *)m, (const clt_tensor *const *)v};
    if (count > 0 && (!m || !v))
        return clt__fail(NULL, CLT_ERR_INVALID_ARGUMENT, "%s: the %s list is NULL", who, !m ? "m" : "v");
    clt_context *ctx;
    clt_status st = mt_check(who, count, lists, 0, &ctx);
    if (st != CLT_SUCCESS || count == 0)
        return st;
    if ((st = clt__adam_check(ctx, p, step, who)) != CLT_SUCCESS)
        return st;
    mt_seg *segs;
    int nsegs;
    if ((st = mt_segments(ctx, count, lists, &segs, &nsegs, who)) != CLT_SUCCESS)
        return st;
    st = mt_apply(ctx, segs, nsegs, OP_ADAM, clt__adam_scalars(p, step, decoupled), NULL, 0, who);
    free(segs);
    return st;
}

clt_status clt_adam_step_multi(int count, clt_tensor *const *param, const clt_tensor *const *grad,
                               clt_tensor *const *m, clt_tensor *const *v, const clt_adam_params *p,
                               int64_t step)
{
    CLT_PUBLIC_CALL();
    return adam_multi("clt_adam_step_multi", 0, count, param, grad, m, v, p, step);
}

clt_status clt_adamw_step_multi(int count, clt_tensor *const *param, const clt_tensor *const *grad,
                                clt_tensor *const *m, clt_tensor *const *v, const clt_adam_params *p,
                                int64_t step)
{
    CLT_PUBLIC_CALL();
    return adam_multi("clt_adamw_step_multi", 1, count, param, grad, m, v, p, step);
}

/* ------------------------------------------------------------------------------------- SGD */

static clt_status sgd_check(clt_context *ctx, const clt_sgd_params *p, int64_t step, int has_buf,
                            const char *who)
{
    if (!p)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: p is NULL", who);
    if (step < 1)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: step %lld (the first update is step 1)", who,
                         (long long)step);
    if (!(p->lr >= 0.0f && isfinite(p->lr)) || !(p->momentum >= 0.0f && isfinite(p->momentum)) ||
        !(p->dampening >= 0.0f && p->dampening <= 1.0f) ||
        !(p->weight_decay >= 0.0f && isfinite(p->weight_decay)))
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT,
                         "%s: lr %g, momentum %g, dampening %g, weight_decay %g: need finite lr, momentum, "
                         "weight_decay >= 0 and dampening in [0, 1]",
                         who, (double)p->lr, (double)p->momentum, (double)p->dampening, (double)p->weight_decay);
    if (p->nesterov && (p->momentum <= 0.0f || p->dampening != 0.0f))
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT,
                         "%s: Nesterov momentum requires momentum > 0 and dampening 0", who);
    if (p->momentum > 0.0f && !has_buf)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: momentum %g needs momentum_buf", who,
                         (double)p->momentum);
    return CLT_SUCCESS;
}

static clt_status sgd_run(const char *who, int count, clt_tensor *const *param, const clt_tensor *const *grad,
                          clt_tensor *const *buf, const clt_sgd_params *p, int64_t step)
{
    int use_buf = buf && p && p->momentum > 0.0f;
    const clt_tensor *const *lists[ROLES] = {(const clt_tensor *const *)param, grad,
                                             use_buf ? (const clt_tensor *const *)buf : NULL, NULL};
    clt_context *ctx;
    clt_status st = mt_check(who, count, lists, 0, &ctx);
    if (st != CLT_SUCCESS || count == 0)
        return st;
    if ((st = sgd_check(ctx, p, step, buf != NULL, who)) != CLT_SUCCESS)
        return st;
    mt_seg *segs;
    int nsegs;
    if ((st = mt_segments(ctx, count, lists, &segs, &nsegs, who)) != CLT_SUCCESS)
        return st;
    cl_float8 s = {{p->lr, p->momentum, p->dampening, p->weight_decay, p->nesterov ? 1.0f : 0.0f,
                    step == 1 ? 1.0f : 0.0f, 0.0f, 0.0f}};
    st = mt_apply(ctx, segs, nsegs, OP_SGD, s, NULL, 0, who);
    free(segs);
    return st;
}

clt_status clt_sgd_step(clt_tensor *param, const clt_tensor *grad, clt_tensor *momentum_buf,
                        const clt_sgd_params *p, int64_t step)
{
    CLT_PUBLIC_CALL();
    clt_tensor *const pl[1] = {param};
    const clt_tensor *const gl[1] = {grad};
    clt_tensor *const bl[1] = {momentum_buf};
    return sgd_run("clt_sgd_step", 1, pl, gl, momentum_buf ? bl : NULL, p, step);
}

clt_status clt_sgd_step_multi(int count, clt_tensor *const *param, const clt_tensor *const *grad,
                              clt_tensor *const *momentum_buf, const clt_sgd_params *p, int64_t step)
{
    CLT_PUBLIC_CALL();
    return sgd_run("clt_sgd_step_multi", count, param, grad, momentum_buf, p, step);
}

/* --------------------------------------------------------------------------- clip_grad_norm */

clt_status clt_clip_grad_norm(int count, clt_tensor *const *grad, float max_norm, clt_tensor *total_norm)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_clip_grad_norm";
    if (count > 0 && !grad)
        return clt__fail(NULL, CLT_ERR_INVALID_ARGUMENT, "%s: the grad list is NULL", who);
    clt_context *ctx;
    clt_status st;
    if (count < 0)
        return clt__fail(total_norm ? total_norm->ctx : NULL, CLT_ERR_INVALID_ARGUMENT, "%s: count %d < 0",
                         who, count);
    ctx = NULL;
    for (int i = 0; i < count; i++) {
        if (!grad[i])
            return clt__fail(total_norm ? total_norm->ctx : NULL, CLT_ERR_INVALID_ARGUMENT, "%s: grad[%d] is NULL",
                             who, i);
        if (!ctx)
            ctx = grad[i]->ctx;
        if (grad[i]->ctx != ctx)
            return clt__fail(ctx, CLT_ERR_CONTEXT_MISMATCH, "%s: grad[%d] belongs to another context", who, i);
        if (grad[i]->dtype != CLT_F32)
            return clt__fail(ctx, CLT_ERR_INVALID_DTYPE, "%s: grad[%d] is %s, expected f32", who, i,
                             clt_dtype_name(grad[i]->dtype));
        for (int j = 0; j < i; j++)
            if (clt__tensors_overlap(grad[i], grad[j]))
                return clt__fail(ctx, CLT_ERR_ALIASING, "%s: grad[%d] overlaps grad[%d]", who, j, i);
    }
    if (total_norm) {
        if (ctx && total_norm->ctx != ctx)
            return clt__fail(ctx, CLT_ERR_CONTEXT_MISMATCH, "%s: total_norm belongs to another context", who);
        ctx = total_norm->ctx;
        if (total_norm->dtype != CLT_F32)
            return clt__fail(ctx, CLT_ERR_INVALID_DTYPE, "%s: total_norm is %s, expected f32", who,
                             clt_dtype_name(total_norm->dtype));
        if (total_norm->numel != 1)
            return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: total_norm has %lld elements, expected 1", who,
                             (long long)total_norm->numel);
        for (int i = 0; i < count; i++)
            if (clt__tensors_overlap(grad[i], total_norm))
                return clt__fail(ctx, CLT_ERR_ALIASING, "%s: grad[%d] overlaps total_norm", who, i);
    }
    if (!(max_norm >= 0.0f && isfinite(max_norm)))
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: max_norm %g must be finite and >= 0", who,
                         (double)max_norm);
    if (!ctx) /* nothing at all: count 0 and no total_norm */
        return CLT_SUCCESS;
    /* the grads take the param role (role 0): they are the written range of each segment */
    const clt_tensor *const *one_role[ROLES] = {(const clt_tensor *const *)grad, NULL, NULL, NULL};
    mt_seg *segs;
    int nsegs;
    if ((st = mt_segments(ctx, count, one_role, &segs, &nsegs, who)) != CLT_SUCCESS)
        return st;
    cl_kernel k, k_apply;
    size_t wg;
    /* the scaling kernel is built before the first sum launch: a build failure enqueues nothing */
    if ((st = mt_kernel(ctx, "mt_sumsq", &k, &wg)) != CLT_SUCCESS ||
        (st = mt_kernel(ctx, "mt_apply", &k_apply, NULL)) != CLT_SUCCESS) {
        free(segs);
        return st;
    }
    uint64_t all = 0;
    for (int i = 0; i < nsegs; i++)
        all += segs[i].count;
    int launches = nsegs ? (nsegs + SLOTS - 1) / SLOTS : 1; /* an empty list still writes the norm 0 */
    uint64_t cap = (uint64_t)ctx->dev->entry->info.compute_units * GROUPS_PER_CU;
    uint64_t per = (all / (uint64_t)launches + wg - 1) / wg;
    uint64_t groups = per < 1 ? 1 : per > cap ? (cap ? cap : 1) : per;
    cl_uint total_groups = (cl_uint)(groups * (uint64_t)launches);
    cl_mem ws, empty;
    st = clt__workspace_get_counted(ctx, WS_SLOT, WS_HEAD * sizeof(cl_uint),
                                    ((size_t)total_groups + 1) * sizeof(float), who, &ws);
    if (st == CLT_SUCCESS)
        st = clt__pool_empty_mem(ctx, &empty);
    if (st != CLT_SUCCESS) {
        free(segs);
        return st;
    }
    /* the norm goes to total_norm, or to the float after the partials */
    cl_mem norm = total_norm ? total_norm->storage->mem : ws;
    cl_ulong norm_off = total_norm ? clt__f32_off(total_norm) : WS_HEAD + total_groups;
    for (int l = 0; l < launches && st == CLT_SUCCESS; l++) {
        int first = l * SLOTS, n = nsegs - first < SLOTS ? nsegs - first : SLOTS;
        cl_ulong8 off, ends;
        cl_ulong total = 0;
        for (int j = 0; j < SLOTS && st == CLT_SUCCESS; j++) {
            const mt_seg *g = j < n ? &segs[first + j] : NULL;
            if (g)
                total += g->count;
            ends.s[j] = total;
            off.s[j] = g ? g->off[0] : 0;
            cl_mem mem = g ? g->t[0]->storage->mem : empty;
            st = clt__set_arg(ctx, k, (cl_uint)j, sizeof mem, &mem, who);
        }
        cl_uint part_base = (cl_uint)(l * groups);
        if (st || (st = clt__set_arg(ctx, k, 8, sizeof off, &off, who)) ||
            (st = clt__set_arg(ctx, k, 9, sizeof ends, &ends, who)) ||
            (st = clt__set_arg(ctx, k, 10, sizeof ws, &ws, who)) ||
            (st = clt__set_arg(ctx, k, 11, sizeof norm, &norm, who)) ||
            (st = clt__set_arg(ctx, k, 12, sizeof norm_off, &norm_off, who)) ||
            (st = clt__set_arg(ctx, k, 13, sizeof part_base, &part_base, who)) ||
            (st = clt__set_arg(ctx, k, 14, sizeof total_groups, &total_groups, who)))
            break;
        size_t global = (size_t)groups * wg;
        st = clt__enqueue_kernel(ctx, k, 1, &global, &wg, who);
    }
    if (st == CLT_SUCCESS && nsegs > 0) {
        cl_float8 s = {{max_norm, 0, 0, 0, 0, 0, 0, 0}};
        st = mt_apply(ctx, segs, nsegs, OP_SCALE, s, norm, norm_off, who);
    }
    free(segs);
    return st;
}
