/* clt_attention_forward / clt_attention_backward: argument checks and the launches of
 * cl_kernels/attention/attention.cl or attention_tiled.cl (which explain the kernels; the
 * implementation is picked in attention_tiled_params.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cltensor_attention.h"
#include "ops/attention/attention_internal.h"
#include "ops/common/launch.h"
#include "program/program.h"
#include "tensor/tensor.h"
#include "tune/dispatch_common.h"

#define ATTENTION_FAMILY "attention"

static const char *const kernel_names[ATT_KERNELS] = {"attention_fwd", "attention_bwd_dq",
                                                      "attention_bwd_dkdv"};
/* CPU-class kernels of attention.cl (-DATT_CPU=1) */
static const char *const cpu_names[ATT_KERNELS] = {"attention_fwd_cpu", "attention_bwd_dq_cpu",
                                                   "attention_bwd_dkdv_cpu"};
static const char *const tiled_names[ATT_KERNELS] = {
    "attention_tiled_fwd", "attention_tiled_bwd_dq", "attention_tiled_bwd_dkdv"};

clt_attention_options clt_attention_options_default(void)
{
    clt_attention_options o = {0.0f, 0, NULL};
    return o;
}

/* A named operand of a call, for checks and messages. */
typedef struct att_arg {
    const clt_tensor *t;
    const char *name;
} att_arg;

/* The geometry every check compares with: from q and k. */
typedef struct att_geom {
    int64_t b, h, sq, sk, d;
} att_geom;

static void shape_text(const clt_tensor *t, char *buf, size_t cap)
{
    size_t used = (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < t->ndim && used < cap; i++)
        used += (size_t)snprintf(buf + used, cap - used, i ? ", %lld" : "%lld",
                                 (long long)t->shape[i]);
    if (used < cap)
        snprintf(buf + used, cap - used, "]");
}

static clt_status expect_shape(const char *who, const att_arg *a, int ndim, const int64_t *want)
{
    int ok = a->t->ndim == ndim;
    for (int i = 0; ok && i < ndim; i++)
        ok = a->t->shape[i] == want[i];
    if (ok)
        return CLT_SUCCESS;
    char got[160], exp[160] = "[";
    shape_text(a->t, got, sizeof got);
    size_t used = 1;
    for (int i = 0; i < ndim; i++)
        used += (size_t)snprintf(exp + used, sizeof exp - used, i ? ", %lld" : "%lld",
                                 (long long)want[i]);
    snprintf(exp + used, sizeof exp - used, "]");
    return clt__fail(a->t->ctx, CLT_ERR_INVALID_SHAPE, "%s: %s has shape %s, expected %s", who,
                     a->name, got, exp);
}

/* Everything but aliasing: NULLs, contexts, dtypes, shapes, head dim, options. args[0..2] are q,
 * k, v; the rest are [B,H,Sq,D] tensors except those named "lse" ([B,H,Sq]) and "dk"/"dv"
 * ([B,H,Sk,D]). */
static clt_status check_args(const char *who, const att_arg *args, int n,
                             const clt_attention_options *opts, att_geom *g)
{
    const clt_context *ctx = NULL;
    for (int i = 0; i < n && !ctx; i++)
        if (args[i].t)
            ctx = args[i].t->ctx;
    for (int i = 0; i < n; i++)
        if (!args[i].t)
            return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", who, args[i].name);
    const clt_tensor *kl = opts ? opts->key_lengths : NULL;
    for (int i = 0; i < n; i++)
        if (args[i].t->ctx != ctx)
            return clt__fail(ctx, CLT_ERR_CONTEXT_MISMATCH, "%s: %s belongs to another context",
                             who, args[i].name);
    if (kl && kl->ctx != ctx)
        return clt__fail(ctx, CLT_ERR_CONTEXT_MISMATCH,
                         "%s: key_lengths belongs to another context", who);
    for (int i = 0; i < n; i++)
        if (args[i].t->dtype != CLT_F32)
            return clt__fail(ctx, CLT_ERR_INVALID_DTYPE, "%s: %s is %s, expected f32", who,
                             args[i].name, clt_dtype_name(args[i].t->dtype));
    const clt_tensor *q = args[0].t, *k = args[1].t;
    if (q->ndim != 4)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE,
                         "%s: q has %d dimensions, expected 4 [batch, heads, seq, head_dim]", who,
                         q->ndim);
    if (k->ndim != 4)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE,
                         "%s: k has %d dimensions, expected 4 [batch, heads, seq, head_dim]", who,
                         k->ndim);
    g->b = q->shape[0];
    g->h = q->shape[1];
    g->sq = q->shape[2];
    g->d = q->shape[3];
    g->sk = k->shape[2];
    if (g->d != 32 && g->d != 64 && g->d != 128)
        return clt__fail(ctx, CLT_ERR_UNSUPPORTED,
                         "%s: head_dim (q's last dimension) is %lld; supported: 32, 64, 128", who,
                         (long long)g->d);
    if (g->sq > UINT32_MAX || g->sk > UINT32_MAX || g->h > UINT32_MAX ||
        g->b * g->h > UINT32_MAX)
        return clt__fail(ctx, CLT_ERR_UNSUPPORTED,
                         "%s: batch*heads and the sequence lengths must stay below 2^32", who);
    const int64_t qshape[4] = {g->b, g->h, g->sq, g->d}, kshape[4] = {g->b, g->h, g->sk, g->d};
    clt_status st;
    for (int i = 1; i < n; i++) {
        const char *nm = args[i].name;
        int key_side = i == 1 || i == 2 || strcmp(nm, "dk") == 0 || strcmp(nm, "dv") == 0;
        if (nm[0] == 'l')
            st = expect_shape(who, &args[i], 3, qshape);
        else
            st = expect_shape(who, &args[i], 4, key_side ? kshape : qshape);
        if (st)
            return st;
    }
    if (opts && !isfinite(opts->scale))
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: scale is %g, expected a finite value",
                         who, (double)opts->scale);
    if (kl) {
        if (kl->dtype != CLT_I32)
            return clt__fail(ctx, CLT_ERR_INVALID_DTYPE, "%s: key_lengths is %s, expected i32",
                             who, clt_dtype_name(kl->dtype));
        att_arg a = {kl, "key_lengths"};
        if ((st = expect_shape(who, &a, 1, &g->b)))
            return st;
    }
    return CLT_SUCCESS;
}

/* Outputs args[first..n) overlap no other operand (inputs, key_lengths, each other). */
static clt_status check_aliasing(const char *who, const att_arg *args, int n, int first,
                                 const clt_tensor *key_lengths)
{
    for (int o = first; o < n; o++) {
        for (int i = 0; i < n; i++)
            if (i != o && clt__tensors_overlap(args[o].t, args[i].t))
                return clt__fail(args[o].t->ctx, CLT_ERR_ALIASING, "%s: %s overlaps %s", who,
                                 args[o].name, args[i].name);
        if (key_lengths && clt__tensors_overlap(args[o].t, key_lengths))
            return clt__fail(args[o].t->ctx, CLT_ERR_ALIASING, "%s: %s overlaps key_lengths",
                             who, args[o].name);
    }
    return CLT_SUCCESS;
}

/* A prepared launch: kernel, rows it covers, group size, rows per group, and whether the kernel
 * is a micro-tiled one (attention_tiled.cl). */
typedef struct att_launch {
    cl_kernel k;
    uint64_t rows, bh;
    unsigned group, per;
    int tiled;
} att_launch;

/* memory.h: the workspace slot of the backward pass's row deltas D_i = dout_i . out_i, which the
 * micro-tiled dQ kernel writes and the micro-tiled dK/dV kernel reads (attention_tiled.cl). */
#define DELTA_SLOT 8
/* memory.h: the slot of the fused backward's dQ tickets (two counters per query tile and head). */
#define TICKET_SLOT 9

/* The built kernel `which` for head_dim d and its tiles, the group shrunk (tiles halved) until the
 * built kernel accepts it. */
static clt_status get_kernel(clt_context *ctx, att_kernel which, int d, int aligned, cl_kernel *k,
                             att_tiles *tiles, const char *who)
{
    att_tiles t = clt__attention_tiles(ctx, which, d);
    for (;;) {
        /* Unrolling only changes code size, not results: a CPU device (POCL, whatever the profile)
         * compiles the unrolled bodies for minutes and runs them no faster, so it keeps them rolled. */
        int unroll = ctx->dev->entry->info.type != CLT_DEVICE_CPU;
        /* The CPU device class runs the *_cpu kernels (attention.cl says why); GPU classes, the
         * gfx902 profile included, keep the others. */
        int cpu_row = clt__device_class_of(ctx) == CLT__CLASS_CPU;
        char options[160];
        snprintf(options, sizeof options,
                 "-DATT_D=%d -DATT_BM=%u -DATT_BN=%u -DATT_ALIGNED=%d -DATT_UNROLL=%d%s", d, t.bm,
                 t.bn, aligned, unroll, cpu_row ? " -DATT_CPU=1" : "");
        clt_status st = clt__kernel_get(ctx, ATTENTION_FAMILY, options,
                                        cpu_row ? cpu_names[which] : kernel_names[which], k);
        if (st != CLT_SUCCESS)
            return st;
        unsigned group = clt__attention_group(which, t);
        if (clt__kernel_work_group_limit(ctx, *k) >= group) {
            *tiles = t;
            return CLT_SUCCESS;
        }
        if (group == 1)
            return clt__fail(ctx, CLT_ERR_UNSUPPORTED, "%s: kernel %s accepts no work-group size",
                             who, kernel_names[which]);
        if (which == ATT_BWD_DKDV)
            t.bn /= 2;
        else
            t.bm /= 2;
    }
}

/* The micro-tiled kernel `which` (attention_tiled.cl) when allowed, the call uses that
 * implementation and its tiles fit the context and the built kernel's group limit; else the row
 * kernel. Both take the same arguments, except that the tiled dQ kernel also writes the row deltas
 * and the tiled dK/dV kernel reads them in place of out. */
static clt_status pick_kernel(clt_context *ctx, att_kernel which, int d, int aligned,
                              int allow_tiled, att_launch *l, const char *who)
{
    att_mtiles m;
    l->tiled = 0;
    if (allow_tiled && clt__attention_impl(ctx) == ATT_IMPL_TILED &&
        clt__attention_mtiles(ctx, which, d, &m)) {
        int unroll = ctx->dev->entry->info.type != CLT_DEVICE_CPU;
        /* CLT_ATTENTION_TILED_OPTS: extra -D options for tuning runs (ATT_KUNROLL, ATT_LOAD_UNROLL:
         * compile-time knobs of attention_tiled.cl that the tiles do not cover). */
        const char *extra = getenv("CLT_ATTENTION_TILED_OPTS");
        char options[320];
        clt__attention_tiled_options(ctx, which, d, m, aligned, unroll, options, sizeof options);
        if (extra)
            snprintf(options + strlen(options), sizeof options - strlen(options), " %.160s", extra);
        clt_status st = clt__kernel_get(ctx, "attention_tiled", options, tiled_names[which], &l->k);
        if (st != CLT_SUCCESS)
            return st;
        unsigned group = clt__attention_tiled_group(m);
        if (clt__kernel_work_group_limit(ctx, l->k) >= group) {
            l->group = group;
            l->per = m.br;
            l->tiled = 1;
            return CLT_SUCCESS;
        }
    }
    att_tiles t;
    clt_status st = get_kernel(ctx, which, d, aligned, &l->k, &t, who);
    if (st == CLT_SUCCESS)
        l->group = l->per = clt__attention_group(which, t);
    return st;
}

/* Sets a kernel's arguments in order from a list of (size, pointer). */
typedef struct att_karg {
    size_t size;
    const void *value;
} att_karg;

static clt_status set_args(clt_context *ctx, cl_kernel k, const att_karg *a, int n, const char *who)
{
    for (int i = 0; i < n; i++) {
        clt_status st = clt__set_arg(ctx, k, (cl_uint)i, a[i].size, a[i].value, who);
        if (st)
            return st;
    }
    return CLT_SUCCESS;
}

static clt_status enqueue(clt_context *ctx, const att_launch *l, const char *who)
{
    if (l->rows == 0 || l->bh == 0)
        return CLT_SUCCESS;
    size_t local[2] = {l->group, 1};
    size_t global[2] = {(size_t)((l->rows + l->per - 1) / l->per * l->group), (size_t)l->bh};
    return clt__enqueue_kernel(ctx, l->k, 2, global, local, who);
}

static int offsets_aligned(const att_arg *args, int n)
{
    for (int i = 0; i < n; i++)
        if (args[i].name[0] != 'l' && (args[i].t->offset / sizeof(float)) % 4 != 0)
            return 0;
    return 1;
}

/* Everything a kernel needs besides its tensors. */
typedef struct att_scalars {
    cl_mem len_mem;
    cl_ulong len_off;
    cl_int has_len, causal;
    cl_uint heads, sq, sk;
    cl_float scale, scale_log2;
} att_scalars;

static void scalars_of(const att_geom *g, const clt_attention_options *opts, cl_mem dummy,
                       att_scalars *s)
{
    const clt_tensor *kl = opts ? opts->key_lengths : NULL;
    s->has_len = kl != NULL;
    /* Without key lengths the kernel never reads the buffer; any valid cl_mem will do. */
    s->len_mem = kl ? kl->storage->mem : dummy;
    s->len_off = kl ? kl->offset / sizeof(int32_t) : 0;
    s->causal = opts && opts->causal;
    s->heads = (cl_uint)g->h;
    s->sq = (cl_uint)g->sq;
    s->sk = (cl_uint)g->sk;
    float scale = opts && opts->scale != 0.0f ? opts->scale : (float)(1.0 / sqrt((double)g->d));
    s->scale = scale;
    s->scale_log2 = (float)((double)scale * 1.4426950408889634);
}

#define MEM(t) {sizeof(cl_mem), &(t)->storage->mem}

clt_status clt_attention_forward(const clt_tensor *q, const clt_tensor *k, const clt_tensor *v,
                                 const clt_attention_options *opts, clt_tensor *out,
                                 clt_tensor *lse)
{
    CLT_PUBLIC_CALL();
    const char *who = "clt_attention_forward";
    att_arg args[5] = {{q, "q"}, {k, "k"}, {v, "v"}, {out, "out"}, {lse, "lse"}};
    int n = lse ? 5 : 4;
    att_geom g = {0, 0, 0, 0, 0};
    clt_status st;
    if ((st = check_args(who, args, n, opts, &g)) ||
        (st = check_aliasing(who, args, n, 3, opts ? opts->key_lengths : NULL)))
        return st;
    clt_context *ctx = q->ctx;
    if (g.b * g.h * g.sq == 0)
        return CLT_SUCCESS;
    att_launch l = {NULL, (uint64_t)g.sq, (uint64_t)(g.b * g.h), 0, 0, 0};
    if ((st = pick_kernel(ctx, ATT_FWD, (int)g.d, offsets_aligned(args, n), 1, &l, who)))
        return st;
    att_scalars s;
    scalars_of(&g, opts, q->storage->mem, &s);
    cl_ulong qo = q->offset / 4, ko = k->offset / 4, vo = v->offset / 4, oo = out->offset / 4;
    cl_ulong lo = lse ? lse->offset / 4 : 0;
    cl_int write_lse = lse != NULL;
    cl_mem lse_mem = lse ? lse->storage->mem : out->storage->mem;
    att_karg a[] = {MEM(q), {8, &qo}, MEM(k), {8, &ko}, MEM(v), {8, &vo}, MEM(out), {8, &oo},
                    {sizeof(cl_mem), &lse_mem}, {8, &lo}, {4, &write_lse},
                    {sizeof(cl_mem), &s.len_mem}, {8, &s.len_off}, {4, &s.has_len},
                    {4, &s.heads}, {4, &s.sq}, {4, &s.sk}, {4, &s.scale_log2}, {4, &s.causal}};
    if ((st = set_args(ctx, l.k, a, (int)(sizeof a / sizeof a[0]), who)))
        return st;
    return enqueue(ctx, &l, who);
}

/* The fused micro-tiled backward (attention_tiled.cl, ATT_DQ_FUSED): the row-delta kernel, then
 * the dK/dV kernel that also adds dQ in key-group order. *used is 0 (and nothing is enqueued) when
 * this context does not take that path: the CPU row kernels, CLT_ATTENTION_DQ=separate, tiles that
 * do not allow it, or a built kernel that refuses the group. */
static clt_status backward_fused(clt_context *ctx, const att_geom *g, const att_arg *args,
                                 const clt_attention_options *opts, int aligned, int *used,
                                 const char *who)
{
    *used = 0;
    att_mtiles m;
    if (clt__attention_impl(ctx) != ATT_IMPL_TILED ||
        !clt__attention_mtiles(ctx, ATT_BWD_DKDV, (int)g->d, &m) ||
        clt__attention_dq_mode(m) != ATT_DQ_FUSED)
        return CLT_SUCCESS;
    int unroll = ctx->dev->entry->info.type != CLT_DEVICE_CPU;
    char options[320];
    cl_kernel kd = NULL, kk = NULL;
    clt__attention_fused_options(ctx, 1, (int)g->d, m, aligned, unroll, options, sizeof options);
    clt_status st = clt__kernel_get(ctx, "attention_tiled", options, "attention_tiled_bwd_delta", &kd);
    if (st != CLT_SUCCESS)
        return st;
    clt__attention_fused_options(ctx, 0, (int)g->d, m, aligned, unroll, options, sizeof options);
    const char *extra = getenv("CLT_ATTENTION_TILED_OPTS"); /* as in pick_kernel */
    if (extra)
        snprintf(options + strlen(options), sizeof options - strlen(options), " %.160s", extra);
    if ((st = clt__kernel_get(ctx, "attention_tiled", options, "attention_tiled_bwd_dkdv", &kk)))
        return st;
    unsigned group = clt__attention_tiled_group(m);
    if (clt__kernel_work_group_limit(ctx, kd) < ATT_DELTA_GROUP ||
        clt__kernel_work_group_limit(ctx, kk) < group)
        return CLT_SUCCESS;
    const clt_tensor *q = args[0].t, *k = args[1].t, *v = args[2].t, *out = args[3].t;
    const clt_tensor *lse = args[4].t, *dout = args[5].t, *dq = args[6].t, *dk = args[7].t;
    const clt_tensor *dv = args[8].t;
    uint64_t bh = (uint64_t)(g->b * g->h), nqt = ((uint64_t)g->sq + m.bc - 1) / m.bc;
    /* the launch counter, then one counter per (head, query tile); the delta kernel zeroes them */
    cl_ulong n_tickets = 1 + bh * nqt;
    cl_mem delta = NULL, tickets = NULL;
    int fresh;
    if ((st = clt__workspace_get(ctx, DELTA_SLOT, (size_t)(bh * (uint64_t)g->sq) * sizeof(float),
                                 &delta, &fresh)) ||
        (st = clt__workspace_get(ctx, TICKET_SLOT, (size_t)n_tickets * sizeof(cl_uint), &tickets,
                                 &fresh)))
        return st;
    att_scalars s;
    scalars_of(g, opts, q->storage->mem, &s);
    cl_ulong qo = q->offset / 4, ko = k->offset / 4, vo = v->offset / 4, oo = out->offset / 4;
    cl_ulong lo = lse->offset / 4, doo = dout->offset / 4, dqo = dq->offset / 4;
    cl_ulong dko = dk->offset / 4, dvo = dv->offset / 4, zero = 0;
    cl_ulong rows = bh * (uint64_t)g->sq;
    /* Rotated tile order (attention_tiled.cl): without a causal mask, on GPUs, where one group per
     * compute unit holds all key groups of a head at once (their waits form a cycle). */
    uint64_t nkb = ((uint64_t)g->sk + m.br - 1) / m.br;
    cl_int rotate = !s.causal && ctx->dev->entry->info.type != CLT_DEVICE_CPU &&
                    nkb <= ctx->dev->entry->info.compute_units;
    /* The delta grid (16 items per row) covers the tickets: 16 B H Sq >= 1 + B H ceil(Sq / bc). */
    att_karg ad[] = {MEM(out),  {8, &oo},   MEM(dout), {8, &doo}, {sizeof(cl_mem), &delta},
                     {8, &rows}, {sizeof(cl_mem), &tickets}, {8, &n_tickets}};
    att_karg ak[] = {MEM(q),        {8, &qo},        MEM(k),         {8, &ko},
                     MEM(v),        {8, &vo},        {sizeof(cl_mem), &delta},
                     {8, &zero},
                     MEM(lse),      {8, &lo},        MEM(dout),      {8, &doo},
                     MEM(dk),       {8, &dko},       MEM(dv),        {8, &dvo},
                     {sizeof(cl_mem), &s.len_mem}, {8, &s.len_off}, {4, &s.has_len},
                     {4, &s.heads}, {4, &s.sq},      {4, &s.sk},     {4, &s.scale_log2},
                     {4, &s.scale}, {4, &s.causal},  MEM(dq),        {8, &dqo},
                     {sizeof(cl_mem), &tickets}, {4, &rotate}};
    if ((st = set_args(ctx, kd, ad, (int)(sizeof ad / sizeof ad[0]), who)) ||
        (st = set_args(ctx, kk, ak, (int)(sizeof ak / sizeof ak[0]), who)))
        return st;
    *used = 1;
    size_t dlocal = ATT_DELTA_GROUP;
    size_t dglobal = (size_t)((rows + ATT_DELTA_ROWS - 1) / ATT_DELTA_ROWS) * ATT_DELTA_GROUP;
    if ((st = clt__enqueue_kernel(ctx, kd, 1, &dglobal, &dlocal, who)))
        return st;
    att_launch lk = {kk, (uint64_t)g->sk, bh, group, m.br, 1};
    return enqueue(ctx, &lk, who);
}

clt_status clt_attention_backward(const clt_tensor *q, const clt_tensor *k, const clt_tensor *v,
                                  const clt_tensor *out, const clt_tensor *lse,
                                  const clt_tensor *dout, const clt_attention_options *opts,
                                  clt_tensor *dq, clt_tensor *dk, clt_tensor *dv)
{
    CLT_PUBLIC_CALL();
    const char *who = "clt_attention_backward";
    att_arg args[9] = {{q, "q"},       {k, "k"},   {v, "v"},   {out, "out"}, {lse, "lse"},
                       {dout, "dout"}, {dq, "dq"}, {dk, "dk"}, {dv, "dv"}};
    att_geom g = {0, 0, 0, 0, 0};
    clt_status st;
    if ((st = check_args(who, args, 9, opts, &g)) ||
        (st = check_aliasing(who, args, 9, 6, opts ? opts->key_lengths : NULL)))
        return st;
    clt_context *ctx = q->ctx;
    int aligned = offsets_aligned(args, 9);
    if (g.b * g.h > 0 && g.sq > 0 && g.sk > 0) {
        int used = 0;
        if ((st = backward_fused(ctx, &g, args, opts, aligned, &used, who)) || used)
            return st;
    }
    att_launch lq = {NULL, (uint64_t)g.sq, (uint64_t)(g.b * g.h), 0, 0, 0};
    att_launch lk = {NULL, (uint64_t)g.sk, (uint64_t)(g.b * g.h), 0, 0, 0};
    /* Both kernels are built and given their arguments before either is enqueued: a failure leaves
     * nothing enqueued. The tiled dK/dV kernel reads the deltas the tiled dQ kernel writes, so it
     * runs only after that one (or when there is no query row to read). */
    if (lq.rows && lq.bh) {
        if ((st = pick_kernel(ctx, ATT_BWD_DQ, (int)g.d, aligned, 1, &lq, who)))
            return st;
    }
    if (lk.rows && lk.bh) {
        if ((st = pick_kernel(ctx, ATT_BWD_DKDV, (int)g.d, aligned, lq.tiled || !lq.k, &lk, who)))
            return st;
    }
    /* Any valid buffer stands in for the deltas where no kernel touches them. */
    cl_mem delta = q->storage->mem;
    if (lq.tiled) {
        int fresh;
        size_t bytes = (size_t)(g.b * g.h * g.sq) * sizeof(float);
        if ((st = clt__workspace_get(ctx, DELTA_SLOT, bytes, &delta, &fresh)))
            return st;
    }
    cl_ulong delta_off = 0;
    att_scalars s;
    scalars_of(&g, opts, q->storage->mem, &s);
    cl_ulong qo = q->offset / 4, ko = k->offset / 4, vo = v->offset / 4, oo = out->offset / 4;
    cl_ulong lo = lse->offset / 4, doo = dout->offset / 4, dqo = dq->offset / 4;
    cl_ulong dko = dk->offset / 4, dvo = dv->offset / 4;
    if (lq.k) {
        att_karg a[] = {MEM(q),        {8, &qo},        MEM(k),         {8, &ko},
                        MEM(v),        {8, &vo},        MEM(out),       {8, &oo},
                        MEM(lse),      {8, &lo},        MEM(dout),      {8, &doo},
                        MEM(dq),       {8, &dqo},       {sizeof(cl_mem), &s.len_mem},
                        {8, &s.len_off}, {4, &s.has_len}, {4, &s.heads}, {4, &s.sq},
                        {4, &s.sk},    {4, &s.scale_log2}, {4, &s.scale}, {4, &s.causal},
                        {sizeof(cl_mem), &delta}};
        int n = (int)(sizeof a / sizeof a[0]) - !lq.tiled;
        if ((st = set_args(ctx, lq.k, a, n, who)))
            return st;
    }
    if (lk.k) {
        /* the tiled kernel takes the deltas where the row kernel takes out */
        cl_mem o_or_delta = lk.tiled ? delta : out->storage->mem;
        cl_ulong o_or_delta_off = lk.tiled ? delta_off : oo;
        att_karg a[] = {MEM(q),        {8, &qo},        MEM(k),         {8, &ko},
                        MEM(v),        {8, &vo},        {sizeof(cl_mem), &o_or_delta},
                        {8, &o_or_delta_off},
                        MEM(lse),      {8, &lo},        MEM(dout),      {8, &doo},
                        MEM(dk),       {8, &dko},       MEM(dv),        {8, &dvo},
                        {sizeof(cl_mem), &s.len_mem}, {8, &s.len_off}, {4, &s.has_len},
                        {4, &s.heads}, {4, &s.sq},      {4, &s.sk},     {4, &s.scale_log2},
                        {4, &s.scale}, {4, &s.causal}};
        if ((st = set_args(ctx, lk.k, a, (int)(sizeof a / sizeof a[0]), who)))
            return st;
    }
    if ((st = enqueue(ctx, &lq, who)))
        return st;
    return enqueue(ctx, &lk, who);
}
