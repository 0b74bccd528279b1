/* Softmax and log-softmax over the last axis, forward and backward: validation, the choice of
 * work split (cl_kernels/softmax/softmax.cl explains the kernels), one launch per call. */
#include <stdio.h>

#include "cltensor_ops.h"
#include "ops/common/launch.h"
#include "program/program.h"
#include "tensor/tensor.h"
#include "tune/dispatch_common.h"

#define SOFTMAX_FAMILY "softmax"
#define PREFERRED_GROUP 256 /* items per group for most shapes */
#define LONG_ROW_GROUP 1024 /* streaming rows: one big group per row */
/* AMD (the gfx902 profile too): at most 8 registers per item, longer rows stream. The kernel ISA
 * check on gfx902 (tests/isa): SM_K 16 took 65-67 VGPRs (3 waves per SIMD), 32 took 103-130 (1-2);
 * 8 takes 31-35 (7-8 waves), and a memory-bound kernel wants the waves. */
#define AMD_MAX_REGISTER_ELEMENTS 8
#define REGISTER_ELEMENTS 8 /* elements per item in the register variant, raised to 16 or 32 for
                               rows of one group: few (team, K) pairs keep the programs few */

/* The backward holds y and dy (two registers per element): at 1024 items x 32 the H200 leaves 64
 * registers per item and ptxas spilled 64 B (softmax_bwd) and 92 B (log_softmax_bwd), so the
 * backward keeps at most this many elements of a row in a group's registers (1024 x 16; longer
 * rows stream). softmax.cl builds no backward kernel past it. */
#define BWD_MAX_GROUP_ELEMENTS 16384

#define CPU_GROUP_ELEMS 16384 /* CPU kernel: elements per work-group before another group pays */
#define CPU_GROUPS_PER_CU 4   /* CPU kernel: at most this many groups per compute unit */

typedef struct sm_plan {
    unsigned wg, team, k;
} sm_plan;

/* A launch: the kernel and its sizes. */
typedef struct sm_launch {
    cl_kernel k;
    size_t local, global;
} sm_launch;

static uint64_t floor_pow2(uint64_t v)
{
    uint64_t p = 1;
    while (p * 2 <= v)
        p *= 2;
    return p;
}

/* Team and register count for rows of n under a group of wg items (a power of two): teams of 1,
 * 8, 64 or the whole group with 8 elements per item, or the whole group with 16 or 32 (up to
 * k_cap); longer rows stream (k = 0). */
static void plan_team(sm_plan *p, uint64_t n, unsigned wg, unsigned k_cap)
{
    p->wg = wg;
    p->k = REGISTER_ELEMENTS;
    static const unsigned teams[] = {1, 8, 64};
    for (size_t i = 0; i < sizeof teams / sizeof teams[0]; i++)
        if (teams[i] < wg && n <= (uint64_t)teams[i] * REGISTER_ELEMENTS) {
            p->team = teams[i];
            return;
        }
    p->team = wg;
    while (p->k <= k_cap && n > (uint64_t)p->k * wg)
        p->k *= 2;
    if (p->k > k_cap)
        p->k = 0;
}

/* The most registers per item for a group of wg items; bwd: the backward's cap. */
static unsigned max_k(const clt_context *ctx, unsigned wg, int bwd)
{
    unsigned k = clt__device_class_of(ctx) == CLT__CLASS_AMD ? AMD_MAX_REGISTER_ELEMENTS : 32;
    while (bwd && k > REGISTER_ELEMENTS && (uint64_t)wg * k > BWD_MAX_GROUP_ELEMENTS)
        k /= 2;
    return k;
}

/* The first plan for a shape: group size from the context's limits (a power of two, so teams
 * divide it), the local memory need (two floats per item) within the budget. */
static sm_plan first_plan(const clt_context *ctx, uint64_t n, int bwd)
{
    uint64_t limit = ctx->limits.max_work_group_size;
    uint64_t by_local = ctx->limits.local_mem_budget / (2 * sizeof(float));
    if (by_local < limit)
        limit = by_local;
    limit = floor_pow2(limit ? limit : 1);
    sm_plan p;
    unsigned wg = (unsigned)(limit < PREFERRED_GROUP ? limit : PREFERRED_GROUP);
    plan_team(&p, n, wg, max_k(ctx, wg, bwd));
    if (p.k == 0 && limit > PREFERRED_GROUP) {
        wg = (unsigned)(limit < LONG_ROW_GROUP ? limit : LONG_ROW_GROUP);
        plan_team(&p, n, wg, max_k(ctx, wg, bwd));
    }
    return p;
}

/* The kernel for a plan, shrinking the group until the built kernel accepts its size. */
static clt_status get_kernel(clt_context *ctx, const char *name, uint64_t n, int bwd, sm_plan *p,
                             cl_kernel *k, const char *who)
{
    for (;;) {
        char options[96];
        snprintf(options, sizeof options, "-DSM_WG=%u -DSM_TEAM=%u -DSM_K=%u", p->wg, p->team,
                 p->k);
        clt_status st = clt__kernel_get(ctx, SOFTMAX_FAMILY, options, name, k);
        if (st != CLT_SUCCESS)
            return st;
        size_t kernel_max = clt__kernel_work_group_limit(ctx, *k); /* cached; 1 if unknown */
        if (kernel_max >= p->wg)
            return CLT_SUCCESS;
        if (p->wg == 1)
            return clt__fail(ctx, CLT_ERR_UNSUPPORTED, "%s: kernel %s accepts no work-group size",
                             who, name);
        unsigned wg = (unsigned)floor_pow2(kernel_max > 0 ? kernel_max : 1);
        plan_team(p, n, wg, max_k(ctx, wg, bwd));
    }
}


/* One item per row; few, large work-groups (a group is a loop on one thread, each costs a
 * dispatch): about one group per CPU_GROUP_ELEMS elements, at most CPU_GROUPS_PER_CU per unit. */
static clt_status plan_cpu(clt_context *ctx, const char *name, uint64_t rows, uint64_t n,
                           sm_launch *l)
{
    clt_status st = clt__kernel_get(ctx, SOFTMAX_FAMILY, "-DSM_CPU=1", name, &l->k);
    if (st != CLT_SUCCESS)
        return st;
    size_t kmax = clt__kernel_work_group_limit(ctx, l->k); /* cached; 1 if unknown */
    uint64_t cus = ctx->dev->entry->info.compute_units ? ctx->dev->entry->info.compute_units : 1;
    uint64_t groups = rows * n / CPU_GROUP_ELEMS;
    if (groups > cus * CPU_GROUPS_PER_CU)
        groups = cus * CPU_GROUPS_PER_CU;
    if (groups > rows)
        groups = rows;
    if (groups < 1)
        groups = 1;
    uint64_t local = 1;
    while (local * groups < rows)
        local *= 2;
    while (local > kmax && local > 1)
        local >>= 1;
    l->local = (size_t)local;
    l->global = (size_t)((rows + local - 1) / local * local);
    return CLT_SUCCESS;
}

/* The GPU-style plan: teams of items per row, a local-memory tree. */
static clt_status plan_gpu(clt_context *ctx, const char *name, uint64_t rows, uint64_t n, int bwd,
                           sm_launch *l, const char *who)
{
    sm_plan p = first_plan(ctx, n, bwd);
    clt_status st = get_kernel(ctx, name, n, bwd, &p, &l->k, who);
    if (st != CLT_SUCCESS)
        return st;
    uint64_t per_group = p.wg / p.team;
    uint64_t groups = (rows + per_group - 1) / per_group;
    l->local = p.wg;
    l->global = (size_t)(groups * p.wg);
    return CLT_SUCCESS;
}

static clt_status plan(clt_context *ctx, const char *name, uint64_t rows, uint64_t n, int bwd,
                       sm_launch *l, const char *who)
{
    return clt__cpu_style(ctx) ? plan_cpu(ctx, name, rows, n, l)
                          : plan_gpu(ctx, name, rows, n, bwd, l, who);
}

static clt_status enqueue(clt_context *ctx, const sm_launch *l, const char *who)
{
    size_t local = l->local, global = l->global;
    return clt__enqueue_kernel(ctx, l->k, 1, &global, &local, who);
}

static int same_shape(const clt_tensor *a, const clt_tensor *b)
{
    if (a->ndim != b->ndim)
        return 0;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i])
            return 0;
    return 1;
}

static void shape_text(const clt_tensor *t, char *buf, size_t cap)
{
    size_t used = (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < t->ndim && used < cap; i++)
        used += (size_t)snprintf(buf + used, cap - used, i ? ", %lld" : "%lld", (long long)t->shape[i]);
    if (used < cap)
        snprintf(buf + used, cap - used, "]");
}

/* out must have ref's shape and be f32. */
static clt_status check_operand(const char *who, const clt_tensor *ref, const clt_tensor *t,
                                const char *name)
{
    if (t->dtype != CLT_F32)
        return clt__fail(ref->ctx, CLT_ERR_INVALID_DTYPE, "%s: %s is %s, expected f32", who, name,
                         clt_dtype_name(t->dtype));
    if (!same_shape(ref, t)) {
        char a[160], b[160];
        shape_text(ref, a, sizeof a);
        shape_text(t, b, sizeof b);
        return clt__fail(ref->ctx, CLT_ERR_INVALID_SHAPE, "%s: %s has shape %s, expected %s", who,
                         name, b, a);
    }
    return CLT_SUCCESS;
}

/* out may be exactly in (in place); any other overlap is an error. */
static clt_status check_overlap(const char *who, const clt_tensor *in, const char *in_name,
                                const clt_tensor *out, const char *out_name)
{
    if (!clt__tensors_overlap(in, out) || in->offset == out->offset)
        return CLT_SUCCESS;
    return clt__fail(out->ctx, CLT_ERR_ALIASING,
                     "%s: %s (byte offset %zu) partly overlaps %s (byte offset %zu) in one buffer",
                     who, out_name, out->offset, in_name, in->offset);
}

/* Shared checks of the first operand: non-NULL checked by the caller. */
static clt_status check_first(const char *who, const clt_tensor *x, const char *name)
{
    if (x->dtype != CLT_F32)
        return clt__fail(x->ctx, CLT_ERR_INVALID_DTYPE, "%s: %s is %s, expected f32", who, name,
                         clt_dtype_name(x->dtype));
    if (x->ndim < 1)
        return clt__fail(x->ctx, CLT_ERR_INVALID_SHAPE,
                         "%s: %s is 0-d; softmax needs at least one axis", who, name);
    return CLT_SUCCESS;
}

static clt_status forward(const char *who, const char *kernel, const clt_tensor *x,
                          clt_tensor *out)
{
    if (!x || !out)
        return clt__fail(x ? x->ctx : out ? out->ctx : NULL, CLT_ERR_INVALID_ARGUMENT,
                         "%s: %s is NULL", who, x ? "out" : "x");
    clt_context *ctx = x->ctx;
    if (out->ctx != ctx)
        return clt__fail(ctx, CLT_ERR_CONTEXT_MISMATCH, "%s: x and out belong to different contexts",
                         who);
    clt_status st;
    if ((st = check_first(who, x, "x")) || (st = check_operand(who, x, out, "out")) ||
        (st = check_overlap(who, x, "x", out, "out")))
        return st;
    uint64_t n = (uint64_t)x->shape[x->ndim - 1];
    if (x->numel == 0)
        return CLT_SUCCESS;
    uint64_t rows = (uint64_t)x->numel / n;
    sm_launch l;
    if ((st = plan(ctx, kernel, rows, n, 0, &l, who)))
        return st;
    cl_kernel k = l.k;
    cl_ulong x_off = x->offset / sizeof(float), out_off = out->offset / sizeof(float);
    cl_ulong r = rows, len = n;
    if ((st = clt__set_arg(ctx, k, 0, sizeof(cl_mem), &x->storage->mem, who)) ||
        (st = clt__set_arg(ctx, k, 1, sizeof x_off, &x_off, who)) ||
        (st = clt__set_arg(ctx, k, 2, sizeof(cl_mem), &out->storage->mem, who)) ||
        (st = clt__set_arg(ctx, k, 3, sizeof out_off, &out_off, who)) ||
        (st = clt__set_arg(ctx, k, 4, sizeof r, &r, who)) ||
        (st = clt__set_arg(ctx, k, 5, sizeof len, &len, who)))
        return st;
    return enqueue(ctx, &l, who);
}

static clt_status backward(const char *who, const char *kernel, const clt_tensor *y,
                           const clt_tensor *dy, clt_tensor *dx)
{
    if (!y || !dy || !dx) {
        const clt_tensor *any = y ? y : dy ? dy : dx;
        return clt__fail(any ? any->ctx : NULL, CLT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", who,
                         !y ? "y" : !dy ? "dy" : "dx");
    }
    clt_context *ctx = y->ctx;
    if (dy->ctx != ctx || dx->ctx != ctx)
        return clt__fail(ctx, CLT_ERR_CONTEXT_MISMATCH,
                         "%s: y, dy and dx belong to different contexts", who);
    clt_status st;
    if ((st = check_first(who, y, "y")) || (st = check_operand(who, y, dy, "dy")) ||
        (st = check_operand(who, y, dx, "dx")) || (st = check_overlap(who, y, "y", dx, "dx")) ||
        (st = check_overlap(who, dy, "dy", dx, "dx")))
        return st;
    uint64_t n = (uint64_t)y->shape[y->ndim - 1];
    if (y->numel == 0)
        return CLT_SUCCESS;
    uint64_t rows = (uint64_t)y->numel / n;
    sm_launch l;
    if ((st = plan(ctx, kernel, rows, n, 1, &l, who)))
        return st;
    cl_kernel k = l.k;
    cl_ulong y_off = y->offset / sizeof(float), dy_off = dy->offset / sizeof(float);
    cl_ulong dx_off = dx->offset / sizeof(float), r = rows, len = n;
    if ((st = clt__set_arg(ctx, k, 0, sizeof(cl_mem), &y->storage->mem, who)) ||
        (st = clt__set_arg(ctx, k, 1, sizeof y_off, &y_off, who)) ||
        (st = clt__set_arg(ctx, k, 2, sizeof(cl_mem), &dy->storage->mem, who)) ||
        (st = clt__set_arg(ctx, k, 3, sizeof dy_off, &dy_off, who)) ||
        (st = clt__set_arg(ctx, k, 4, sizeof(cl_mem), &dx->storage->mem, who)) ||
        (st = clt__set_arg(ctx, k, 5, sizeof dx_off, &dx_off, who)) ||
        (st = clt__set_arg(ctx, k, 6, sizeof r, &r, who)) ||
        (st = clt__set_arg(ctx, k, 7, sizeof len, &len, who)))
        return st;
    return enqueue(ctx, &l, who);
}

clt_status clt_softmax(const clt_tensor *x, clt_tensor *out)
{
    CLT_PUBLIC_CALL();
    return forward("clt_softmax", "softmax_fwd", x, out);
}

clt_status clt_log_softmax(const clt_tensor *x, clt_tensor *out)
{
    CLT_PUBLIC_CALL();
    return forward("clt_log_softmax", "log_softmax_fwd", x, out);
}

clt_status clt_softmax_backward(const clt_tensor *y, const clt_tensor *dy, clt_tensor *dx)
{
    CLT_PUBLIC_CALL();
    return backward("clt_softmax_backward", "softmax_bwd", y, dy, dx);
}

clt_status clt_log_softmax_backward(const clt_tensor *y, const clt_tensor *dy, clt_tensor *dx)
{
    CLT_PUBLIC_CALL();
    return backward("clt_log_softmax_backward", "log_softmax_bwd", y, dy, dx);
}
