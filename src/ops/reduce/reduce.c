/* Reductions: clt_reduce, clt_argmax, clt_argmin, clt_rowsum. Validate, plan the axes
 * (reduce_plan.c), choose lanes per output and chunk groups, then ONE launch of reduce_run
 * (cl_kernels/reduce/reduce.cl). Long reductions with few outputs spread over many work-groups in that same
 * launch; the last group of each output group finishes (counters and partials in the workspace). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memory/memory.h"
#include "ops/common/launch.h"
#include "ops/reduce/reduce_plan.h"
#include "profile/profile.h"
#include "program/program.h"
#include "tune/dispatch_common.h"

#define REDUCE_FAMILY "reduce"
#define OP_ARGMAX 7 /* RED_OP values after the clt_reduce_op ones */
#define OP_ARGMIN 8

#define PREFERRED_WG 256u
#define MAX_COUNTERS 1024u      /* output groups that can use chunk groups; must match -DMAX_COUNTERS */
#define PARTIAL_BYTES 16u       /* one float4 per partial accumulator */
#define GROUPS_PER_CU 4u        /* chunk groups per compute unit: H200 sum/16M 22.7 us at 8, 21.3 at 4 */
#define MIN_PER_LANE_CHUNKED 32 /* split into chunks only while each lane keeps this much work */
#define ELEMS_PER_LANE 8        /* rows: lanes per output ~ R / this */
#define SPLIT_COLS_OPG 64       /* columns: outputs per group when chunk groups split them */
#define CPU_MIN_CHUNK 8192      /* CPU rows: elements one item streams before a split pays */
#define CPU_GROUP_ELEMS 16384   /* CPU rows: elements per work-group before another group pays */
#define CPU_GROUPS_PER_CU 4     /* CPU rows: at most this many groups per compute unit */

static const char *const op_names[] = {"SUM", "MEAN", "MAX", "MIN", "VAR", "VAR_UNBIASED", "L2NORM"};

static uint64_t next_pow2(uint64_t v)
{
    uint64_t p = 1;
    while (p < v)
        p <<= 1;
    return p;
}

static uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/* Launch geometry. */
typedef struct geometry {
    uint32_t wg, lanes, chunks;
    uint64_t out_groups, chunk_len;
} geometry;

static void choose_geometry(const clt_context *ctx, const clt__reduce_plan *p, uint32_t wg,
                            geometry *g)
{
    uint64_t R = (uint64_t)p->length, O = (uint64_t)p->outputs;
    uint64_t useful = next_pow2(ceil_div(R, ELEMS_PER_LANE)); /* lanes that still get work */
    uint64_t lanes;
    if (p->layout == CLT__RED_ROWS || p->layout == CLT__RED_GEN_LANES) {
        lanes = useful;
    } else {
        /* adjacent work-items read adjacent kept elements; the rest of the group splits R */
        uint64_t opg = next_pow2((uint64_t)p->innermost_kept);
        if (opg > wg)
            opg = wg;
        /* outputs too few to fill the device (chunk groups follow): at most SPLIT_COLS_OPG per
         * group, so each output has lanes to share the merge of its chunks' partials (one lane
         * per output merged 256 partials in a row for a 8192 x 512 column sum on an H200) */
        uint64_t cus = ctx->dev->entry->info.compute_units ? ctx->dev->entry->info.compute_units : 1;
        if (opg > SPLIT_COLS_OPG && O / opg < cus * GROUPS_PER_CU)
            opg = SPLIT_COLS_OPG;
        lanes = wg / opg;
        if (lanes > useful)
            lanes = useful;
    }
    if (lanes > wg)
        lanes = wg;
    g->wg = wg;
    g->lanes = (uint32_t)lanes;
    g->out_groups = ceil_div(O, wg / lanes);
    g->chunks = 1;
    g->chunk_len = R;
    uint64_t cus = ctx->dev->entry->info.compute_units ? ctx->dev->entry->info.compute_units : 1;
    const char *e = getenv("CLT_REDUCE_GROUPS_PER_CU"); /* experiment switch for A/B runs */
    uint64_t target = cus * (e && atoi(e) > 0 ? (uint64_t)atoi(e) : GROUPS_PER_CU);
    if (g->out_groups < target && g->out_groups <= MAX_COUNTERS &&
        R >= 2 * lanes * MIN_PER_LANE_CHUNKED) {
        uint64_t c = ceil_div(target, g->out_groups);
        uint64_t most = R / (lanes * MIN_PER_LANE_CHUNKED);
        if (c > most)
            c = most;
        if (c > 1) {
            /* chunk boundaries on multiples of 4 * lanes keep the unrolled loop whole */
            uint64_t step = 4 * lanes;
            g->chunk_len = ceil_div(ceil_div(R, c), step) * step;
            g->chunks = (uint32_t)ceil_div(R, g->chunk_len);
        }
    }
}

/* CPU rows (the barrier-free kernel): item = (output, chunk); chunks only for few long rows; few,
 * large work-groups (a group is a loop on one thread; each costs a dispatch). kmax: the kernel's
 * largest local size. */
static void cpu_geometry(const clt_context *ctx, const clt__reduce_plan *p, uint64_t kmax,
                         geometry *g, size_t *local, size_t *global)
{
    uint64_t R = (uint64_t)p->length, O = (uint64_t)p->outputs;
    uint64_t cus = ctx->dev->entry->info.compute_units ? ctx->dev->entry->info.compute_units : 1;
    uint64_t target = cus * CPU_GROUPS_PER_CU;
    g->wg = 1;
    g->lanes = 1;
    g->chunks = 1;
    g->chunk_len = R;
    if (O < target && O <= MAX_COUNTERS && R >= 2 * CPU_MIN_CHUNK) {
        uint64_t c = ceil_div(target, O), most = R / CPU_MIN_CHUNK;
        if (c > most)
            c = most;
        g->chunk_len = ceil_div(ceil_div(R, c), 32) * 32; /* whole vector steps but the last */
        g->chunks = (uint32_t)ceil_div(R, g->chunk_len);
    }
    uint64_t pieces = O * g->chunks, groups = O * R / CPU_GROUP_ELEMS;
    if (groups > target)
        groups = target;
    if (groups > pieces)
        groups = pieces;
    if (groups < 1)
        groups = 1;
    uint64_t l = next_pow2(ceil_div(pieces, groups));
    while (l > kmax && l > 1)
        l >>= 1;
    g->out_groups = ceil_div(pieces, l);
    *local = (size_t)l;
    *global = (size_t)(g->out_groups * l);
}

/* Rows on CPU devices: a contiguous slice per work-item; GPUs (and the gfx902 profile, which must
 * run the GPU variant wherever the tests run) interleave lanes for coalesced reads. */
static int contiguous_lanes(const clt_context *ctx, int layout)
{
    if (layout != CLT__RED_ROWS && layout != CLT__RED_GEN_LANES)
        return 0; /* column walks: interleaved lanes share cache lines */
    return clt__cpu_style(ctx);
}

static int cpu_rows(const clt_context *ctx, int layout)
{
    return layout == CLT__RED_ROWS && contiguous_lanes(ctx, layout);
}

/* The kernel for (op, layout) with the largest power-of-two work-group the device takes (the CPU
 * rows kernel: any local size up to the returned one). */
static clt_status get_kernel(clt_context *ctx, int op, int layout, int vec4,
                             cl_kernel *k, uint32_t *wg_out)
{
    int cpu = cpu_rows(ctx, layout);
    const char *ewg = getenv("CLT_REDUCE_WG"), *eun = getenv("CLT_REDUCE_UNROLL"); /* A/B switches */
    uint32_t wg = cpu ? 1u : ewg && atoi(ewg) > 0 ? (uint32_t)atoi(ewg) : PREFERRED_WG;
    int unroll = eun ? atoi(eun) : 0; /* 0: the kernel's VEC_UNROLL */
    /* NVIDIA: x's float4 loads as ld.global.cs (evict first; reduce.cl NV_LOAD). H200, one call:
     * sum/16M 19.70 us against 20.88-20.92 plain (copy of 16M floats 36.08: 91.6% of its bandwidth
     * against 86%); L2::256B prefetch 22.30, nc + no L1 + L2::256B 20.99. CLT_REDUCE_NV_LOAD=0..3
     * (A/B switch) picks another. */
    const char *enl = getenv("CLT_REDUCE_NV_LOAD");
    int nv_load = vec4 && clt__device_class_of(ctx) == CLT__CLASS_NVIDIA ? (enl ? atoi(enl) : 1) : 0;
    while (wg > ctx->limits.max_work_group_size && wg > 1)
        wg >>= 1;
    while (wg > 1 && (uint64_t)wg * PARTIAL_BYTES + 64 > ctx->limits.local_mem_budget)
        wg >>= 1;
    for (;;) {
        char options[192];
        snprintf(options, sizeof options,
                 "-DRED_OP=%d -DLAYOUT=%d -DWG=%u -DMAX_COUNTERS=%u -DCONTIG=%d -DCPU_ROWS=%d -DVEC4=%d%s"
                 " -DNV_LOAD=%d",
                 op, layout, wg, MAX_COUNTERS, contiguous_lanes(ctx, layout), cpu, vec4,
                 vec4 && unroll == 4 ? " -DVEC_UNROLL=4" : "", nv_load);
        clt_status st = clt__kernel_get(ctx, REDUCE_FAMILY, options, "reduce_run", k);
        if (st != CLT_SUCCESS)
            return st;
        size_t kmax = clt__kernel_work_group_limit(ctx, *k); /* cached; 1 if unknown */
        if (cpu) {
            for (*wg_out = 1; (size_t)*wg_out * 2 <= kmax && *wg_out < (1u << 16);)
                *wg_out *= 2;
            return CLT_SUCCESS;
        }
        if (kmax >= wg || wg == 1) {
            *wg_out = wg;
            return CLT_SUCCESS;
        }
        wg >>= 1; /* this build cannot run WG items per group (registers): a smaller variant */
    }
}

/* The workspace for chunk groups: counters (zeroed once, when the buffer is new), then partials. */
static clt_status get_workspace(clt_context *ctx, uint64_t partials, const char *who, cl_mem *ws)
{
    return clt__workspace_get_counted(ctx, 0, MAX_COUNTERS * sizeof(cl_uint),
                                      (size_t)partials * PARTIAL_BYTES, who, ws);
}

static clt_status launch(clt_context *ctx, int op, const clt__reduce_plan *p, const clt_tensor *x,
                         clt_tensor *out, const char *who)
{
    cl_kernel k;
    uint32_t wg = 1;
    /* GPU rows whose starts are 16-byte aligned: float4 loads (more bytes in flight per item) */
    int vec4 = p->layout == CLT__RED_ROWS && !contiguous_lanes(ctx, p->layout) &&
               (x->offset / sizeof(float)) % 4 == 0 && p->length % 4 == 0;
    clt_status st = get_kernel(ctx, op, p->layout, vec4, &k, &wg);
    if (st != CLT_SUCCESS)
        return st;
    geometry g;
    size_t local = wg, global;
    if (cpu_rows(ctx, p->layout)) {
        cpu_geometry(ctx, p, wg, &g, &local, &global);
    } else {
        choose_geometry(ctx, p, wg, &g);
        global = (size_t)(g.out_groups * g.chunks) * wg;
    }
    cl_mem ws = x->storage->mem; /* never touched by the kernel unless chunks > 1 */
    if (g.chunks > 1 &&
        (st = get_workspace(ctx, (uint64_t)p->outputs * g.chunks, who, &ws)) != CLT_SUCCESS)
        return st;
    size_t esize = clt_dtype_size(out->dtype);
    cl_ulong8 params = {{(cl_ulong)p->outputs, (cl_ulong)p->length, (cl_ulong)p->inner,
                         x->offset / sizeof(float), out->offset / esize, g.lanes, g.chunks,
                         g.chunk_len}};
    if ((st = clt__set_arg(ctx, k, 0, sizeof(cl_mem), &x->storage->mem, who)) ||
        (st = clt__set_arg(ctx, k, 1, sizeof(cl_mem), &out->storage->mem, who)) ||
        (st = clt__set_arg(ctx, k, 2, sizeof(cl_mem), &ws, who)) ||
        (st = clt__set_arg(ctx, k, 3, sizeof params, &params, who)))
        return st;
    if (p->layout >= CLT__RED_GEN_LANES) {
        cl_ulong16 geom;
        for (int i = 0; i < 4; i++) {
            geom.s[i] = p->kept_dims[i];
            geom.s[4 + i] = p->kept_strides[i];
            geom.s[8 + i] = p->red_dims[i];
            geom.s[12 + i] = p->red_strides[i];
        }
        if ((st = clt__set_arg(ctx, k, 4, sizeof geom, &geom, who)))
            return st;
    }
    return clt__enqueue_kernel(ctx, k, 1, &global, &local, who);
}

/* Checks shared by every entry point, then the launch. op: RED_OP (0..6, or OP_ARGMAX/OP_ARGMIN). */
static clt_status reduce_named(const char *who, int op, const clt_tensor *x, int naxes,
                               const int *axes, int keepdim, clt_tensor *out)
{
    if (!x || !out)
        return clt__fail(x ? x->ctx : out ? out->ctx : NULL, CLT_ERR_INVALID_ARGUMENT,
                         "%s: %s is NULL", who, x ? "out" : "x");
    clt_context *ctx = x->ctx;
    if (out->ctx != ctx)
        return clt__fail(ctx, CLT_ERR_CONTEXT_MISMATCH, "%s: x and out belong to different contexts",
                         who);
    int is_arg = op == OP_ARGMAX || op == OP_ARGMIN;
    clt_dtype want = is_arg ? CLT_I32 : CLT_F32;
    if (x->dtype != CLT_F32)
        return clt__fail(ctx, CLT_ERR_INVALID_DTYPE, "%s: x is %s, expected f32", who,
                         clt_dtype_name(x->dtype));
    if (out->dtype != want)
        return clt__fail(ctx, CLT_ERR_INVALID_DTYPE, "%s: out is %s, expected %s", who,
                         clt_dtype_name(out->dtype), clt_dtype_name(want));
    clt__reduce_plan p;
    clt_status st = clt__reduce_plan_make(who, x, naxes, axes, keepdim, &p);
    if (st != CLT_SUCCESS)
        return st;
    int same = out->ndim == p.out_ndim;
    for (int d = 0; same && d < p.out_ndim; d++)
        same = out->shape[d] == p.out_shape[d];
    if (!same) {
        char got[160], exp[160], xs[160];
        clt__format_shape(got, sizeof got, out->ndim, out->shape);
        clt__format_shape(exp, sizeof exp, p.out_ndim, p.out_shape);
        clt__format_shape(xs, sizeof xs, x->ndim, x->shape);
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: out has shape %s, expected %s (x %s, keepdim %d)",
                         who, got, exp, xs, keepdim ? 1 : 0);
    }
    if (p.length == 0 && (op == CLT_REDUCE_MAX || op == CLT_REDUCE_MIN || is_arg))
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: %s over an empty axis has no value", who,
                         is_arg ? (op == OP_ARGMAX ? "argmax" : "argmin") : op_names[op]);
    if (is_arg && p.length > INT32_MAX)
        return clt__fail(ctx, CLT_ERR_SIZE_OVERFLOW,
                         "%s: axis of length %lld: indices do not fit in i32", who,
                         (long long)p.length);
    if (clt__tensors_overlap(x, out))
        return clt__fail(ctx, CLT_ERR_ALIASING, "%s: out overlaps x", who);
    if (p.outputs == 0)
        return CLT_SUCCESS;
    return launch(ctx, op, &p, x, out, who);
}

clt_status clt_reduce(clt_reduce_op op, const clt_tensor *x, int naxes, const int *axes, int keepdim,
                      clt_tensor *out)
{
    CLT_PUBLIC_CALL();
    if ((int)op < 0 || (int)op > CLT_REDUCE_L2NORM)
        return clt__fail(x ? x->ctx : out ? out->ctx : NULL, CLT_ERR_INVALID_ARGUMENT,
                         "clt_reduce: unknown op %d", (int)op);
    return reduce_named("clt_reduce", (int)op, x, naxes, axes, keepdim, out);
}

clt_status clt_argmax(const clt_tensor *x, int axis, int keepdim, clt_tensor *out)
{
    CLT_PUBLIC_CALL();
    return reduce_named("clt_argmax", OP_ARGMAX, x, 1, &axis, keepdim, out);
}

clt_status clt_argmin(const clt_tensor *x, int axis, int keepdim, clt_tensor *out)
{
    CLT_PUBLIC_CALL();
    return reduce_named("clt_argmin", OP_ARGMIN, x, 1, &axis, keepdim, out);
}

clt_status clt__reduce_as(const char *who, clt_reduce_op op, const clt_tensor *x, int naxes,
                          const int *axes, int keepdim, clt_tensor *out)
{
    return reduce_named(who, (int)op, x, naxes, axes, keepdim, out);
}

clt_status clt__reduce_sum_leading(const char *who, const clt_tensor *x, uint64_t R, clt_tensor *out)
{
    clt__reduce_plan p;
    memset(&p, 0, sizeof p);
    p.outputs = out->numel;
    p.length = (int64_t)R;
    p.inner = out->numel;
    p.innermost_kept = out->numel;
    p.layout = out->numel > 1 ? CLT__RED_COLS : CLT__RED_ROWS; /* one output: x is one row of R */
    if (p.outputs == 0)
        return CLT_SUCCESS;
    return launch(x->ctx, CLT_REDUCE_SUM, &p, x, out, who);
}

clt_status clt_rowsum(const clt_tensor *x, clt_tensor *out)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_rowsum";
    if (x && x->ndim == 0)
        return clt__fail(x->ctx, CLT_ERR_INVALID_SHAPE, "%s: x is a scalar (0-d), it has no rows", who);
    int axis = -1;
    return reduce_named(who, CLT_REDUCE_SUM, x, 1, &axis, 0, out);
}
