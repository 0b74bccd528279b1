/* Our GEMM kernels: picks a variant by shape and device class (src/ops/gemm/gemm_params.c), builds it with
 * its -D parameters, and enqueues it once, epilogue fused. Variants:
 *   tiled  gemm_tiled.cl, GPU style (local-memory tiles, register blocking)
 *   cpu    gemm_cpu.cl, CPU style (no local memory, explicit SIMD vectors), for CPU devices
 *   small  gemm.cl gemm_small_*, one item per output, for small or skinny shapes
 *   gemv   gemm.cl gemm_gemv_*, k split across a group, for m == 1 or n == 1
 * Tiled runs split K (several groups per C tile, the last adds the pieces) when the tile grid alone
 * would leave compute units idle.
 * CLT_GEMM_VARIANT=tiled|tiled:<config index>[:<pieces>]|cpu|small|gemv forces one (tests use it);
 * anything else, or unset, means automatic. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/gemm/gemm.h"
#include "memory/memory.h"
#include "ops/common/launch.h"
#include "program/program.h"
#include "ops/gemm/gemm_tiled_choice.h"
#include "ops/gemm/gemm_params.h"

typedef enum gemm_variant { V_AUTO, V_TILED, V_CPU, V_SMALL, V_GEMV } gemm_variant;

/* Kernel flags: must match cl_kernels/common/gemm_common.h. */
#define F_VEC_A 1u
#define F_VEC_B 2u
#define F_VEC_C 4u
#define F_BIAS_COL 8u
#define F_BIAS_ROW 16u
#define F_RESIDUAL 32u
#define F_CONTIG_K 64u
#define F_DACT_SHIFT 7 /* bits 7-8: clt__gemm_problem.dact */

/* Shapes beyond this go elsewhere (CLBlast): indices and tile origins stay in int. */
#define MAX_DIM ((int64_t)INT_MAX - 4096)
#define IDX32_LIMIT ((int64_t)INT_MAX - 16)

typedef struct gemm_launch {
    clt_context *ctx;
    const clt__gemm_problem *p;
    const char *who;
    const char *act_opts; /* " -DIDX64=.. [-DACT=..]" */
    cl_uint flags;
    int pieces, chunk; /* split K: pieces > 1 groups per C tile, each over chunk values of k */
    int ppseg;         /* pieces per k segment of A (p->a_kseg > 0), else 0 */
    cl_mem ws;
} gemm_launch;


static gemm_variant variant_override(int *cfg_index, int *pieces)
{
    const char *e = getenv("CLT_GEMM_VARIANT");
    *cfg_index = -1;
    *pieces = 0;
    if (!e)
        return V_AUTO;
    if (!strncmp(e, "tiled", 5)) {
        if (e[5] == ':') {
            *cfg_index = atoi(e + 6);
            const char *second = strchr(e + 6, ':');
            if (second)
                *pieces = atoi(second + 1);
        }
        return V_TILED;
    }
    if (!strcmp(e, "cpu"))
        return V_CPU;
    if (!strcmp(e, "small"))
        return V_SMALL;
    if (!strcmp(e, "gemv"))
        return V_GEMV;
    return V_AUTO;
}

/* Largest element index + 1 of a rows x cols matrix with leading dimension ld. */
static int64_t span(int64_t rows, int64_t cols, int64_t ld)
{
    return rows == 0 || cols == 0 ? 0 : (rows - 1) * ld + cols;
}

int clt__gemm_needs_idx64(const clt__gemm_problem *p)
{
    int64_t sa = p->ta ? span(p->k, p->m, p->lda) : span(p->m, p->k, p->lda);
    int64_t sb = p->tb ? span(p->n, p->k, p->ldb) : span(p->k, p->n, p->ldb);
    int64_t sc = span(p->m, p->n, p->ldc);
    int64_t sr = p->residual ? span(p->m, p->n, p->ldr) : 0;
    int64_t bias = p->bias ? (p->bias_mode == CLT_BIAS_PER_ROW ? p->m : p->n) : 0;
    return sa > IDX32_LIMIT || sb > IDX32_LIMIT || sc > IDX32_LIMIT || sr > IDX32_LIMIT ||
           bias > IDX32_LIMIT;
}

/* How much further segment s + 1 of A starts than one run of k would put it. */
static int64_t segment_shift(const clt__gemm_problem *p)
{
    return p->a_kseg > 0 ? p->a_kseg_stride - p->a_kseg * (p->ta ? p->lda : 1) : 0;
}

cl_uint clt__gemm_kernel_flags(const clt__gemm_problem *p)
{
    cl_uint f = 0;
    /* k segments start pieces at multiples of a_kseg: vectors along k need it (and A's shift)
     * to be multiples of 4 too */
    int seg_ok = p->a_kseg <= 0 || (p->a_kseg % 4 == 0 && segment_shift(p) % 4 == 0);
    if (clt__gemm_aligned(p->a_off, p->lda, p->a_stride, 4) && seg_ok)
        f |= F_VEC_A;
    if (clt__gemm_aligned(p->b_off, p->ldb, p->b_stride, 4) && seg_ok)
        f |= F_VEC_B;
    if (clt__gemm_aligned(p->c_off, p->ldc, p->c_stride, 4) &&
        (!p->residual || clt__gemm_aligned(p->residual_off, p->ldr, p->c_stride, 4)))
        f |= F_VEC_C;
    if (p->bias && p->bias_mode == CLT_BIAS_PER_COLUMN)
        f |= F_BIAS_COL;
    if (p->bias && p->bias_mode == CLT_BIAS_PER_ROW)
        f |= F_BIAS_ROW;
    if (p->residual)
        f |= p->dact ? (cl_uint)p->dact << F_DACT_SHIFT : F_RESIDUAL; /* the slot holds y */
    return f;
}

/* gemv: whether the matrix operand is contiguous along k (then dim 0 of the group walks k). */
static int gemv_contig_k(const clt__gemm_problem *p)
{
    if (p->n == 1)
        return p->ta == CLT_NO_TRANS; /* outputs along i: op(A) rows */
    return p->tb == CLT_TRANS;        /* m == 1: outputs along j: op(B) columns */
}

static clt_status kernel_for(gemm_launch *L, const char *family, const char *opts, const char *base,
                             cl_kernel *k)
{
    char name[64], all[384];
    snprintf(name, sizeof name, "%s_%c%c", base, L->p->ta ? 't' : 'n', L->p->tb ? 't' : 'n');
    snprintf(all, sizeof all, "%s%s", opts, L->act_opts);
    clt_status st = clt__kernel_get(L->ctx, family, all, name, k);
    return st;
}

clt_status clt__gemm_set_args(clt_context *ctx, cl_kernel k, const clt__gemm_problem *p, cl_uint flags,
                              const char *who)
{
    cl_mem bias = p->bias ? p->bias : p->c, res = p->residual ? p->residual : p->c;
    cl_ulong4 offs = {{p->a_off, p->b_off, p->c_off, p->residual_off}};
    cl_ulong4 strides = {{(cl_ulong)p->a_stride, (cl_ulong)p->b_stride, (cl_ulong)p->c_stride,
                          p->bias_off}};
    cl_long4 lds = {{p->lda, p->ldb, p->ldc, p->residual ? p->ldr : 0}};
    cl_int4 dims = {{(cl_int)p->m, (cl_int)p->n, (cl_int)p->k, (cl_int)flags}};
    cl_float4 sc = {{p->alpha, p->beta, p->act_alpha, 0.0f}};
    clt_status st;
    if ((st = clt__set_arg(ctx, k, 0, sizeof(cl_mem), &p->a, who)) ||
        (st = clt__set_arg(ctx, k, 1, sizeof(cl_mem), &p->b, who)) ||
        (st = clt__set_arg(ctx, k, 2, sizeof(cl_mem), &p->c, who)) ||
        (st = clt__set_arg(ctx, k, 3, sizeof(cl_mem), &bias, who)) ||
        (st = clt__set_arg(ctx, k, 4, sizeof(cl_mem), &res, who)) ||
        (st = clt__set_arg(ctx, k, 5, sizeof offs, &offs, who)) ||
        (st = clt__set_arg(ctx, k, 6, sizeof strides, &strides, who)) ||
        (st = clt__set_arg(ctx, k, 7, sizeof lds, &lds, who)) ||
        (st = clt__set_arg(ctx, k, 8, sizeof dims, &dims, who)) ||
        (st = clt__set_arg(ctx, k, 9, sizeof sc, &sc, who)))
        return st;
    return CLT_SUCCESS;
}

static clt_status enqueue(gemm_launch *L, cl_kernel k, cl_uint flags, const size_t global[3],
                          const size_t local[3])
{
    const clt__gemm_problem *p = L->p;
    clt_context *ctx = L->ctx;
    clt_status st = clt__gemm_set_args(ctx, k, p, flags, L->who);
    if (st != CLT_SUCCESS)
        return st;
    if (L->pieces > 1) {
        cl_int8 split = {{L->pieces, L->chunk, L->ppseg, (cl_int)p->a_kseg, (cl_int)segment_shift(p)}};
        if ((st = clt__set_arg(ctx, k, 10, sizeof(cl_mem), &L->ws, L->who)) ||
            (st = clt__set_arg(ctx, k, 11, sizeof split, &split, L->who)))
            return st;
    }
    return clt__enqueue_kernel(ctx, k, 3, global, local, L->who);
}

static size_t round_up(size_t x, size_t to) { return (x + to - 1) / to * to; }


/* The split-K plan (L->pieces, chunk, ppseg; its workspace is split_workspace's: counters zeroed once,
 * reset by the kernel, then the partial tiles). With A in k segments, pieces never straddle a
 * segment: about `pieces` in all, at least one each. */
static clt_status split_setup(gemm_launch *L, const clt__gemm_tiled_cfg *c, int pieces)
{
    const clt__gemm_problem *p = L->p;
    L->ppseg = 0;
    if (p->a_kseg > 0) {
        int64_t segs = (p->k + p->a_kseg - 1) / p->a_kseg, steps = (p->a_kseg + c->kwg - 1) / c->kwg;
        int64_t per = (pieces + segs - 1) / segs;
        L->chunk = (int)((steps + per - 1) / per) * c->kwg;
        L->ppseg = (int)((p->a_kseg + L->chunk - 1) / L->chunk);
        L->pieces = (int)(segs * L->ppseg);
    } else {
        int64_t steps = (p->k + c->kwg - 1) / c->kwg;
        L->chunk = (int)((steps + pieces - 1) / pieces) * c->kwg;
        L->pieces = (int)((p->k + L->chunk - 1) / L->chunk);
    }
    if (L->pieces < 2)
        L->pieces = 1;
    return CLT_SUCCESS;
}

/* The split workspace, taken only once the kernel has been built: its counters' first zeroing is a
 * command, and no command may run before a build that could still fail (rehearsals of multi-stage
 * ops rely on it). */
static clt_status split_workspace(gemm_launch *L, const clt__gemm_tiled_cfg *c)
{
    size_t parts = (size_t)clt__gemm_tile_groups(L->p, c) * (size_t)L->pieces * (size_t)c->mwg *
                   (size_t)c->nwg;
    return clt__workspace_get_counted(L->ctx, 4, SPLIT_COUNTERS * sizeof(cl_uint), parts * sizeof(float),
                                      L->who, &L->ws);
}

/* Whether a config after i fits ctx, has at most SPLIT_MAX_TILE elements and a grid within the
 * split counters (so a split that config i may not take has a taker). */
static int smaller_split_tile(const gemm_launch *L, const clt__gemm_table *t, int i)
{
    for (int j = i + 1; j < t->n_tiled; j++)
        if (clt__gemm_tiled_fits(L->ctx, &t->tiled[j]))
            return t->tiled[j].mwg * t->tiled[j].nwg <= SPLIT_MAX_TILE &&
                   clt__gemm_tile_groups(L->p, &t->tiled[j]) <= SPLIT_COUNTERS;
    return 0;
}

/* Tiled: config `first` (or, when -1, the automatic choice) split in `pieces` (0: automatic),
 * then smaller configs until the built kernel accepts the work-group size. */
static clt_status try_tiled(gemm_launch *L, const clt__gemm_table *t, int first, int pieces)
{
    const clt__gemm_problem *p = L->p;
    int start = first, auto_pieces = 1;
    if (start < 0)
        start = clt__gemm_choose_tiled(L->ctx, L->p, t, &auto_pieces);
    for (int i = start; i >= 0 && i < t->n_tiled; i++) {
        const clt__gemm_tiled_cfg *c = &t->tiled[i];
        if (!clt__gemm_tiled_fits(L->ctx, c))
            continue;
        int q = pieces > 0 ? pieces : i == start ? auto_pieces : 1;
        if (q > 1 && (p->k < 2 || clt__gemm_tile_groups(p, c) > SPLIT_COUNTERS))
            q = 1;
        if (p->a_kseg > 0 && p->a_kseg < p->k) { /* segments: always split, once per segment at least */
            if (clt__gemm_tile_groups(p, c) > SPLIT_COUNTERS)
                return CLT_ERR_UNSUPPORTED;
            q = q > 2 ? q : 2;
        }
        if (q > 1 && c->mwg * c->nwg > SPLIT_MAX_TILE && smaller_split_tile(L, t, i))
            continue; /* see SPLIT_MAX_TILE: the next config takes the split */
        L->pieces = 1;
        clt_status st;
        if (q > 1 && (st = split_setup(L, c, q)) != CLT_SUCCESS)
            return st;
        char opts[256];
        clt__gemm_tiled_options(c, opts, sizeof opts);
        if (L->pieces > 1)
            strncat(opts, " -DSPLITK=1", sizeof opts - strlen(opts) - 1);
        const char *extra = getenv("CLT_GEMM_KERNEL_OPTS"); /* experiment switch: extra -D for A/B runs */
        if (extra && strlen(extra) >= 64)
            extra = NULL;
        int txw = clt__gemm_tiled_warp_cols(t, c);
        if (txw > 0 && !(extra && strstr(extra, "-DTXW"))) /* the switch's TXW, not a redefinition */
            snprintf(opts + strlen(opts), sizeof opts - strlen(opts), " -DTXW=%d", txw);
        strncat(opts, clt__fixed_group_option(L->ctx), sizeof opts - strlen(opts) - 1);
        if (extra) {
            strncat(opts, " ", sizeof opts - strlen(opts) - 1);
            strncat(opts, extra, sizeof opts - strlen(opts) - 1);
        }
        cl_kernel k;
        st = kernel_for(L, "gemm_tiled", opts, "gemm_tiled", &k);
        if (st != CLT_SUCCESS)
            return st;
        size_t wg = (size_t)clt__gemm_tiled_wg(c);
        if (clt__group_limit(L->ctx, k) < wg)
            continue;
        if (L->pieces > 1 && (st = split_workspace(L, c)) != CLT_SUCCESS)
            return st;
        size_t global[3] = {(size_t)((p->n + c->nwg - 1) / c->nwg) * wg,
                            (size_t)((p->m + c->mwg - 1) / c->mwg),
                            (size_t)p->batch * (size_t)L->pieces};
        size_t local[3] = {wg, 1, 1};
        return enqueue(L, k, L->flags, global, local);
    }
    return CLT_ERR_UNSUPPORTED;
}

static clt_status try_cpu(gemm_launch *L, const clt__gemm_table *t)
{
    const clt__gemm_problem *p = L->p;
    char opts[64];
    const clt__gemm_cpu_cfg cc = t->cpu;
    clt__gemm_cpu_options(&cc, opts, sizeof opts);
    cl_kernel k;
    clt_status st = kernel_for(L, "gemm_cpu", opts, "gemm_cpu", &k);
    if (st != CLT_SUCCESS)
        return st;
    size_t local = (size_t)cc.local, lim = clt__group_limit(L->ctx, k);
    size_t blocks = (size_t)((p->m + cc.rpi - 1) / cc.rpi);
    if (local > lim)
        local = lim;
    if (local > 0) { /* even groups: items past m would repeat the last rows' work */
        size_t groups = (blocks + local - 1) / local;
        local = (blocks + groups - 1) / groups; /* m = 64: 11 (was 16, 5 idle); 128: 2 x 11 */
    }
    if (local == 0)
        return CLT_ERR_UNSUPPORTED;
    size_t global[3] = {round_up(blocks, local),
                        (size_t)((p->n + cc.nv - 1) / cc.nv), (size_t)p->batch};
    size_t locals[3] = {local, 1, 1};
    return enqueue(L, k, L->flags, global, locals);
}

/* A kernel of gemm.cl (gemm_small, gemm_gemv: one program, GEMV_WG from the table) and the
 * work-group size it allows. */
static clt_status gemm_family_kernel(gemm_launch *L, const clt__gemm_table *t, const char *base,
                                     cl_kernel *k, size_t *lim)
{
    char opts[32];
    snprintf(opts, sizeof opts, "-DGEMV_WG=%d", t->gemv_f * t->gemv_s);
    clt_status st = kernel_for(L, "gemm", opts, base, k);
    if (st == CLT_SUCCESS)
        *lim = clt__group_limit(L->ctx, *k);
    return st;
}

/* Halve the slow, then the fast dimension of a 2-D group until it fits lim items. */
static int fit_pair(size_t *fast, size_t *slow, size_t lim)
{
    while (*fast * *slow > lim && *slow > 1)
        *slow /= 2;
    while (*fast * *slow > lim && *fast > 1)
        *fast /= 2;
    return *fast * *slow <= lim;
}

static clt_status try_small(gemm_launch *L, const clt__gemm_table *t)
{
    const clt__gemm_problem *p = L->p;
    cl_kernel k;
    size_t lx = (size_t)t->small_lx, ly = (size_t)t->small_ly, lim;
    /* No point in a group wider than the matrix; then fit the device. */
    while (lx > 1 && lx / 2 >= (size_t)p->n)
        lx /= 2;
    while (ly > 1 && ly / 2 >= (size_t)p->m)
        ly /= 2;
    clt_status st = gemm_family_kernel(L, t, "gemm_small", &k, &lim);
    if (st != CLT_SUCCESS)
        return st;
    if (!fit_pair(&lx, &ly, lim))
        return CLT_ERR_UNSUPPORTED;
    size_t global[3] = {round_up((size_t)p->n, lx), round_up((size_t)p->m, ly), (size_t)p->batch};
    size_t local[3] = {lx, ly, 1};
    return enqueue(L, k, L->flags, global, local);
}

static clt_status try_gemv(gemm_launch *L, const clt__gemm_table *t)
{
    const clt__gemm_problem *p = L->p;
    cl_kernel k;
    size_t f = (size_t)t->gemv_f, s = (size_t)t->gemv_s, lim;
    clt_status st = gemm_family_kernel(L, t, "gemm_gemv", &k, &lim);
    if (st != CLT_SUCCESS)
        return st;
    if (!fit_pair(&f, &s, lim))
        return CLT_ERR_UNSUPPORTED;
    int ck = gemv_contig_k(p);
    uint64_t outs = (uint64_t)p->m * (uint64_t)p->n, per_group = ck ? s : f;
    size_t global[3] = {(size_t)((outs + per_group - 1) / per_group) * f, s, (size_t)p->batch};
    size_t local[3] = {f, s, 1};
    return enqueue(L, k, L->flags | (ck ? F_CONTIG_K : 0), global, local);
}

clt_status clt__gemm_tiled(clt_context *ctx, const clt__gemm_problem *p, const char *who)
{
    if (p->m == 0 || p->n == 0 || p->batch == 0)
        return CLT_SUCCESS;
    clt__gemm_problem no_product;
    if (clt__gemm_alpha_zero(p, &no_product)) /* BLAS: alpha = 0 reads neither A nor B */
        p = &no_product;
    if (p->m > MAX_DIM || p->n > MAX_DIM || p->k > MAX_DIM)
        return clt__fail(ctx, CLT_ERR_UNSUPPORTED, "%s: our GEMM kernels take m, n, k < %lld",
                         who, (long long)MAX_DIM);
    const char *act = clt__epilogue_act_name(p->act);
    if (!act)
        return clt__fail(ctx, CLT_ERR_UNSUPPORTED, "%s: activation %d cannot be fused", who,
                         (int)p->act);
    char act_opts[112];
    snprintf(act_opts, sizeof act_opts, " -DIDX64=%d%s%s", clt__gemm_needs_idx64(p), *act ? " -DACT=" : "",
             act);
    int wide = clt__gemm_is_16bit(p);
    if (wide) /* only then: the f32 programs keep their exact options (and cache keys) */
        snprintf(act_opts + strlen(act_opts), sizeof act_opts - strlen(act_opts),
                 " -DIN16=%d -DOUT16=%d", clt__gemm_dtype_code(p->a_dtype), clt__gemm_dtype_code(p->c_dtype));
    gemm_launch L = {ctx, p, who, act_opts, clt__gemm_kernel_flags(p), 1, 0, 0, NULL};
    const clt__gemm_table *t = clt__gemm_table_for(ctx);

    int cfg, pieces;
    gemm_variant v = variant_override(&cfg, &pieces);
    clt_status st = CLT_ERR_UNSUPPORTED;
    if (wide) { /* only the tiled kernel converts 16-bit storage */
        st = try_tiled(&L, t, v == V_TILED && cfg >= 0 ? cfg : -1, v == V_TILED ? pieces : 0);
        if (st == CLT_ERR_UNSUPPORTED)
            return clt__fail(ctx, st, "%s: no tiled GEMM config for 16-bit operands fits this device",
                             who);
        return st;
    }
    if (p->a_kseg > 0 && p->a_kseg < p->k) { /* only the split tiled kernel walks segments */
        int64_t shift = segment_shift(p);
        if (shift < 0 || shift > INT_MAX || p->a_kseg > INT_MAX)
            return clt__fail(ctx, CLT_ERR_UNSUPPORTED, "%s: k segments of A out of int range", who);
        return try_tiled(&L, t, v == V_TILED && cfg >= 0 ? cfg : -1, v == V_TILED ? pieces : 0);
    }
    switch (v) {
    case V_TILED: st = try_tiled(&L, t, cfg < 0 ? -1 : cfg, pieces); break;
    case V_CPU: st = try_cpu(&L, t); break;
    case V_SMALL: st = try_small(&L, t); break;
    case V_GEMV: st = try_gemv(&L, t); break;
    case V_AUTO: {
        double volume = (double)p->m * (double)p->n * (double)p->k;
        int64_t mn_min = p->m < p->n ? p->m : p->n;
        if ((p->m == 1 || p->n == 1) && p->k >= 32)
            st = try_gemv(&L, t);
        else if (volume <= t->small_volume || mn_min <= t->skinny)
            st = try_small(&L, t);
        else if (t->prefer_cpu && !(p->ta == CLT_TRANS && p->tb == CLT_TRANS))
            st = try_cpu(&L, t); /* its TT form gathers A across cache lines: 1.8 GFLOP/s */
        else
            st = try_tiled(&L, t, -1, 0);
        if (st == CLT_ERR_UNSUPPORTED)
            st = try_small(&L, t);
        break;
    }
    }
    if (st == CLT_ERR_UNSUPPORTED)
        return clt__fail(ctx, st, "%s: no GEMM kernel variant fits this device (work-group limit %llu)",
                         who, (unsigned long long)ctx->limits.max_work_group_size);
    return st;
}
