/* Our FFT backend: any length, any strides. On GPUs one kernel (cl_kernels/fft/fft_stockham.cl)
 * launched once per radix stage, or the whole pass in one launch (fft_local.cl, fft_wide.cl; which
 * one and its shape: fft_shape.c); on CPU devices one launch per pass, a whole transform per work
 * item (fft_rows.cl). A transform of rank R is R passes of batched 1-D transforms, one per axis; a
 * pass with several stages runs its middle stages through two contiguous scratch buffers
 * (workspace slot FFT_SLOT), reading the caller's layout in its first stage and writing it in its last.
 *   C2C: innermost axis first, in -> out, then out -> out.
 *   R2C: the innermost axis reads real data and keeps the Hermitian half, then C2C passes on out.
 *   C2R: C2C passes on the outer axes into a third scratch area (the input is never changed), then the
 *        innermost axis reads the half with its conjugate mirror and writes real parts. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memory/memory.h"
#include "ops/common/launch.h"
#include "ops/fft/fft_plan.h"
#include "ops/fft/fft_shape.h"
#include "program/program.h"

#define FFT_FAMILY "fft_stockham"
#define FFT_ROWS_FAMILY "fft_rows"
#define FFT_SLOT 6
#define MAX_STAGES CLT_FFT_MAX_STAGES
#define M_PI_VALUE 3.14159265358979323846
#define IDX32_LIMIT ((int64_t)1 << 30) /* below this, 32-bit indices cannot overflow */

enum { BUF_IN = 0, BUF_OUT = 1, BUF_STAGE = 2 }; /* pass endpoints; BUF_STAGE: C2R's staging area */
enum { MODE_COMPLEX = 0, MODE_REAL = 1, MODE_HALF = 2 };

typedef struct ours_pass {
    int64_t n;                 /* logical length along the axis */
    int stages;
    int radix[MAX_STAGES];
    int src, dst;              /* BUF_* */
    int64_t src_lay[8], dst_lay[8]; /* long8 layouts, offsets relative to the endpoint's start */
    int64_t batch;             /* transforms in this pass */
    int last;                  /* applies the plan's scale */
    cl_mem twiddles;           /* the n-th roots of unity (float2), made from doubles at plan time */
    cl_mem radices;            /* the stage radices (int), plus the identity stage, for fft_rows */
} ours_pass;

typedef struct ours_state {
    int npasses;
    ours_pass pass[CLT_FFT_MAX_RANK];
    int64_t scratch;           /* complex elements of each of the two stage buffers */
    int64_t staging;           /* complex elements of the C2R staging area (0: none) */
} ours_state;

/* fft_rows.cl's QUAD_ROWS_MIN: shorter rows run its row path, longer ones four at a time in lanes. */
#define ROWS_LANES_FROM 512

/* How many radix-8 stages fft_rows (CPU devices) takes first for length n (POCL, fastest of 3-5 alternated
 * runs of the fft suite, 8s against 4s): rows under ROWS_LANES_FROM as many as leave no radix-2 stage
 * (batched 64 as 8 8: 1.04-1.11x; 128 as 8 4 4: 1.23x against 8 8 2, which was 1.04-1.10x against 4 4 4 2;
 * fft3/128 1.16x); longer rows only where the power of two 2^k in n has k odd, so
 * that no radix-2 stage is left, as few as that needs with 4s for the rest (512 as 8 8 8: 1.04-1.12x, 1536
 * as 8 8 8 3: 1.11-1.12x, 1000 as 8 5 5 5 for 4 2 5 5 5: 1.07x, 2048 as 8 8 8 4: 1.03x, 8192 as 8 8 8 4 4:
 * 1.10x); with k even 4s stay (all 8s: 256 as 8 8 4 0.95x in lanes, 1024 as 8 8 8 2 0.98x, 4096 as 8 8 8 8
 * 0.99x). 256 has run in the row path since (8 8 4 there: 1.05-1.24x over lanes of 4 4 4 4). */
static int rows_eights(int64_t n)
{
    int k = 0;
    for (int64_t m = n; m > 1 && m % 2 == 0; m /= 2)
        k++;
    if (n < ROWS_LANES_FROM) /* k = 3 a + 1: one 8 fewer, a 4 for the 8 2 */
        return k % 3 == 1 && k >= 4 ? k / 3 - 1 : k / 3;
    if (k % 2 == 0)
        return 0;
    int a = k / 3; /* 3 a <= k with a odd leaves k - 3 a even: 4s */
    return a % 2 ? a : a - 1;
}

/* Radices for n: `eights` 8s, then 4s, then 2, then odd primes ascending. The stage kernels (GPUs, no
 * 8s) have their own 2, 3, 4, 5, 7 (larger ones run the any-radix kernel); fft_rows (CPU devices) has
 * constant-root butterflies for 3, 5 and 8. n = 1 is one identity stage. */
static int factor(int64_t n, int eights, int *radix)
{
    int count = 0;
    if (n == 1) {
        radix[count++] = 1;
        return count;
    }
    for (; eights > 0 && n % 8 == 0; eights--) {
        radix[count++] = 8;
        n /= 8;
    }
    while (n % 4 == 0) {
        radix[count++] = 4;
        n /= 4;
    }
    while (n % 2 == 0) {
        radix[count++] = 2;
        n /= 2;
    }
    for (int64_t p = 3; p * p <= n; p += 2)
        while (n % p == 0) {
            radix[count++] = (int)p;
            n /= p;
        }
    if (n > 1)
        radix[count++] = (int)n; /* a prime: the planner caps lengths well below 2^31 */
    return count;
}

/* Layout of one side for a pass along `axis`: dims other than the axis become batch dims 1 and 2,
 * the plan's batch is dim 0. len: the side's lengths in this pass's domain. */
static void side_layout(const clt_fft_key *k, int axis, const int64_t *len, const int64_t *stride,
                        int64_t dist, int mode, int64_t *lay)
{
    int64_t bs[2] = {0, 0}, nb[2] = {1, 1};
    int j = 0;
    for (int a = 0; a < k->rank; a++)
        if (a != axis) {
            bs[j] = stride[a];
            nb[j] = len[a];
            j++;
        }
    lay[0] = 0;
    lay[1] = stride[axis];
    lay[2] = dist;
    lay[3] = bs[0];
    lay[4] = bs[1];
    lay[5] = nb[0];
    lay[6] = nb[1];
    lay[7] = mode;
}

static void add_pass(ours_state *s, const clt_fft_key *k, int rows, int axis, const int64_t *domain, int src,
                     int dst, const int64_t *src_len, const int64_t *src_stride, int64_t src_dist,
                     int src_mode, const int64_t *dst_len, const int64_t *dst_stride, int64_t dst_dist,
                     int dst_mode)
{
    ours_pass *p = &s->pass[s->npasses++];
    p->n = k->n[axis];
    p->stages = factor(p->n, rows ? rows_eights(p->n) : 0, p->radix);
    p->src = src;
    p->dst = dst;
    side_layout(k, axis, src_len, src_stride, src_dist, src_mode, p->src_lay);
    side_layout(k, axis, dst_len, dst_stride, dst_dist, dst_mode, p->dst_lay);
    int64_t count = k->batch;
    for (int a = 0; a < k->rank; a++)
        if (a != axis)
            count *= domain[a];
    p->batch = count;
    if (count * p->n > s->scratch)
        s->scratch = count * p->n;
}

/* The table of a pass: tw[m] = (cos, sin)(2 pi m / n) in double, rounded once to float; copied to
 * the device when the buffer is created (nothing enqueued). */
static clt_status make_twiddles(clt_context *ctx, ours_pass *p, const char *who)
{
    size_t n = (size_t)p->n;
    float *tw = malloc(sizeof(float) * 2 * n);
    if (!tw)
        return clt__fail(ctx, CLT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", who);
    for (size_t m = 0; m < n; m++) {
        /* the angle from an exact fraction in [-1/2, 1/2] of a turn keeps it accurate for large n */
        double frac = (double)(2 * m > n ? (int64_t)m - (int64_t)n : (int64_t)m) / (double)n;
        tw[2 * m] = (float)cos(2.0 * M_PI_VALUE * frac);
        tw[2 * m + 1] = (float)sin(2.0 * M_PI_VALUE * frac);
    }
    cl_int err;
    p->twiddles = clCreateBuffer(ctx->dev->cl_ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                 sizeof(float) * 2 * n, tw, &err);
    free(tw);
    if (err != CL_SUCCESS) {
        p->twiddles = NULL;
        return clt__cl_fail(ctx, err, "clt_fft_plan_get: clCreateBuffer (twiddles)");
    }
    cl_int radices[MAX_STAGES + 1];
    for (int j = 0; j < p->stages; j++)
        radices[j] = p->radix[j];
    radices[p->stages] = 1;
    p->radices = clCreateBuffer(ctx->dev->cl_ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                sizeof(cl_int) * (size_t)(p->stages + 1), radices, &err);
    if (err != CL_SUCCESS) {
        p->radices = NULL;
        return clt__cl_fail(ctx, err, "clt_fft_plan_get: clCreateBuffer (radices)");
    }
    return CLT_SUCCESS;
}

clt_status clt__fft_ours_make(clt_fft_plan *plan, const char *who)
{
    const clt_fft_key *k = &plan->key;
    for (int a = 0; a < k->rank; a++)
        if (k->n[a] > (int64_t)1 << 31)
            return clt__fail(plan->ctx, CLT_ERR_UNSUPPORTED, "%s: length %lld above 2^31", who,
                             (long long)k->n[a]);
    ours_state *s = calloc(1, sizeof *s);
    if (!s)
        return clt__fail(plan->ctx, CLT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", who);
    int r = k->rank, last = r - 1;
    const int rows = clt__cpu_style(plan->ctx); /* fft_rows runs the passes (as in clt__fft_ours_execute) */
    int64_t full[CLT_FFT_MAX_RANK], half[CLT_FFT_MAX_RANK];
    memcpy(full, k->n, sizeof full);
    memcpy(half, k->n, sizeof half);
    half[last] = k->n[last] / 2 + 1;
    if (k->kind == CLT_FFT_C2C) {
        for (int a = last; a >= 0; a--) {
            int first = a == last;
            add_pass(s, k, rows, a, full, first ? BUF_IN : BUF_OUT, BUF_OUT, first ? plan->in_len : plan->out_len,
                     first ? k->in_stride : k->out_stride, first ? k->in_dist : k->out_dist, MODE_COMPLEX,
                     plan->out_len, k->out_stride, k->out_dist, MODE_COMPLEX);
        }
    } else if (k->kind == CLT_FFT_R2C) {
        add_pass(s, k, rows, last, full, BUF_IN, BUF_OUT, plan->in_len, k->in_stride, k->in_dist, MODE_REAL,
                 plan->out_len, k->out_stride, k->out_dist, MODE_HALF);
        for (int a = last - 1; a >= 0; a--)
            add_pass(s, k, rows, a, half, BUF_OUT, BUF_OUT, plan->out_len, k->out_stride, k->out_dist,
                     MODE_COMPLEX, plan->out_len, k->out_stride, k->out_dist, MODE_COMPLEX);
    } else {
        /* the staging area: the half spectrum, contiguous */
        int64_t st_stride[CLT_FFT_MAX_RANK], st_dist = 1;
        for (int a = last; a >= 0; a--) {
            st_stride[a] = st_dist;
            st_dist *= half[a];
        }
        int src = BUF_IN;
        for (int a = last - 1; a >= 0; a--) {
            int from_in = src == BUF_IN;
            add_pass(s, k, rows, a, half, src, BUF_STAGE, half, from_in ? k->in_stride : st_stride,
                     from_in ? k->in_dist : st_dist, MODE_COMPLEX, half, st_stride, st_dist, MODE_COMPLEX);
            src = BUF_STAGE;
        }
        if (r > 1)
            s->staging = st_dist * k->batch;
        int from_in = src == BUF_IN;
        add_pass(s, k, rows, last, full, src, BUF_OUT, half, from_in ? k->in_stride : st_stride,
                 from_in ? k->in_dist : st_dist, MODE_HALF, plan->out_len, k->out_stride, k->out_dist,
                 MODE_REAL);
    }
    s->pass[s->npasses - 1].last = 1;
    plan->ours = s;
    for (int i = 0; i < s->npasses; i++) {
        clt_status st = make_twiddles(plan->ctx, &s->pass[i], who);
        if (st != CLT_SUCCESS) {
            clt__fft_ours_free(plan);
            return st;
        }
    }
    return CLT_SUCCESS;
}

void clt__fft_ours_free(clt_fft_plan *plan)
{
    ours_state *s = plan->ours;
    if (!s)
        return;
    for (int i = 0; i < s->npasses; i++) {
        if (s->pass[i].twiddles)
            clReleaseMemObject(s->pass[i].twiddles);
        if (s->pass[i].radices)
            clReleaseMemObject(s->pass[i].radices);
    }
    free(s);
    plan->ours = NULL;
}

static cl_long8 to_long8(const int64_t *lay, int64_t offset)
{
    cl_long8 v;
    for (int i = 0; i < 8; i++)
        v.s[i] = lay[i];
    v.s[0] += offset;
    return v;
}

static int special_radix(int r) { return r == 2 || r == 3 || r == 4 || r == 5 || r == 7; }

static void stage_options(char *options, size_t size, int radix, int idx32)
{
    snprintf(options, size, "-DFFT_RADIX=%d -DFFT_IDX=%s", special_radix(radix) ? radix : 0, idx32 ? "int" : "long");
}

/* fft_rows (CPU devices): one program per index width. */
static clt_status rows_kernel(clt_context *ctx, int idx32, cl_kernel *k)
{
    return clt__kernel_get(ctx, FFT_ROWS_FAMILY, idx32 ? "-DFFT_IDX=int" : "-DFFT_IDX=long", "fft_rows", k);
}

/* Arguments 0-4 of fft_stage and fft_local: source and its layout, destination and its layout,
 * the twiddle table. */
static clt_status set_io_args(clt_context *ctx, cl_kernel k, cl_mem src, cl_long8 src_lay, cl_mem dst,
                              cl_long8 dst_lay, cl_mem tw, const char *who)
{
    clt_status st;
    if ((st = clt__set_arg(ctx, k, 0, sizeof src, &src, who)) ||
        (st = clt__set_arg(ctx, k, 1, sizeof src_lay, &src_lay, who)) ||
        (st = clt__set_arg(ctx, k, 2, sizeof dst, &dst, who)) ||
        (st = clt__set_arg(ctx, k, 3, sizeof dst_lay, &dst_lay, who)))
        return st;
    return clt__set_arg(ctx, k, 4, sizeof tw, &tw, who);
}

static clt_status launch_stage(clt_context *ctx, cl_mem src, cl_long8 src_lay, cl_mem dst,
                               cl_long8 dst_lay, cl_mem tw, int64_t n, int64_t ns, int radix,
                               int64_t batch, float dir, float scale, int idx32, const char *who)
{
    int special = special_radix(radix);
    char options[48];
    stage_options(options, sizeof options, radix, idx32);
    cl_kernel k;
    clt_status st = clt__kernel_get(ctx, FFT_FAMILY, options, "fft_stage", &k);
    if (st != CLT_SUCCESS)
        return st;
    cl_long cn = n, cns = ns, cr = radix, cb = batch;
    if ((st = set_io_args(ctx, k, src, src_lay, dst, dst_lay, tw, who)) ||
        (st = clt__set_arg(ctx, k, 5, sizeof cn, &cn, who)) ||
        (st = clt__set_arg(ctx, k, 6, sizeof cns, &cns, who)) ||
        (st = clt__set_arg(ctx, k, 7, sizeof cr, &cr, who)) ||
        (st = clt__set_arg(ctx, k, 8, sizeof cb, &cb, who)) ||
        (st = clt__set_arg(ctx, k, 9, sizeof dir, &dir, who)) ||
        (st = clt__set_arg(ctx, k, 10, sizeof scale, &scale, who)))
        return st;
    uint64_t items = (uint64_t)batch * (uint64_t)(special ? n / radix : n);
    return clt__launch_1d(ctx, k, items, who);
}

/* The whole pass in one launch, one work item per transform (CPU devices). */
static clt_status launch_rows(clt_context *ctx, const ours_pass *p, cl_mem src, cl_long8 src_lay, cl_mem dst,
                              cl_long8 dst_lay, cl_mem ws, int64_t scratch, int stages, float dir,
                              float scale, int idx32, const char *who)
{
    cl_kernel k;
    clt_status st = rows_kernel(ctx, idx32, &k);
    if (st != CLT_SUCCESS)
        return st;
    cl_long zero = 0, cscratch = scratch, cn = p->n, cb = p->batch;
    cl_int cstages = stages;
    if ((st = clt__set_arg(ctx, k, 0, sizeof src, &src, who)) ||
        (st = clt__set_arg(ctx, k, 1, sizeof src_lay, &src_lay, who)) ||
        (st = clt__set_arg(ctx, k, 2, sizeof dst, &dst, who)) ||
        (st = clt__set_arg(ctx, k, 3, sizeof dst_lay, &dst_lay, who)) ||
        (st = clt__set_arg(ctx, k, 4, sizeof ws, &ws, who)) ||
        (st = clt__set_arg(ctx, k, 5, sizeof zero, &zero, who)) ||
        (st = clt__set_arg(ctx, k, 6, sizeof cscratch, &cscratch, who)) ||
        (st = clt__set_arg(ctx, k, 7, sizeof p->twiddles, &p->twiddles, who)) ||
        (st = clt__set_arg(ctx, k, 8, sizeof p->radices, &p->radices, who)) ||
        (st = clt__set_arg(ctx, k, 9, sizeof cstages, &cstages, who)) ||
        (st = clt__set_arg(ctx, k, 10, sizeof cn, &cn, who)) ||
        (st = clt__set_arg(ctx, k, 11, sizeof cb, &cb, who)) ||
        (st = clt__set_arg(ctx, k, 12, sizeof dir, &dir, who)) ||
        (st = clt__set_arg(ctx, k, 13, sizeof scale, &scale, who)))
        return st;
    /* small groups, each item a whole transform at a time, and few items (16 per compute unit): an
     * item reuses its scratch rows for every transform it takes, so they stay in cache. One item
     * per transform wrote a scratch row per transform (2 x the batch's size, streamed through
     * memory): rfft2/64x256x256 on POCL then ran its passes in ~16 ms each. */
    uint64_t cu = ctx->dev->entry->info.compute_units ? ctx->dev->entry->info.compute_units : 1;
    uint64_t items = (uint64_t)p->batch < 16 * cu ? (uint64_t)p->batch : 16 * cu;
    return clt__launch_1d_group(ctx, k, items, 4, who);
}

/* Whether a pass layout (ours_pass's src_lay / dst_lay) is contiguous complex transforms. */
static int flat_layout(const int64_t *lay, int64_t n)
{
    return lay[1] == 1 && lay[2] == n && lay[5] == 1 && lay[6] == 1 && lay[7] == MODE_COMPLEX;
}

/* Pass p's one-launch kernel (fft_shape.c decides; *k = NULL when the pass keeps the stage
 * kernels). */
static clt_status local_kernel(clt_context *ctx, const ours_pass *p, int idx32, clt_fft_launch *L,
                               cl_kernel *k)
{
    *k = NULL;
    int flat = flat_layout(p->src_lay, p->n) && flat_layout(p->dst_lay, p->n);
    if (!clt__fft_one_launch(ctx, p->n, flat, 1, idx32, L))
        return CLT_SUCCESS;
    clt_status st = clt__kernel_get(ctx, L->kernel, L->options, L->kernel, k);
    if (st == CLT_SUCCESS && !clt__kernel_runs_group(ctx, *k, (size_t)L->wg))
        *k = NULL; /* registers: the device runs fewer items of it per group */
    return st;
}

/* fft_local's and fft_wide's groups: past this many a compute unit, groups loop over further
 * transforms. */
#define LOCAL_GROUPS_PER_CU 64

static clt_status launch_local(clt_context *ctx, cl_kernel k, const clt_fft_launch *L, cl_mem src, cl_long8 src_lay,
                               cl_mem dst, cl_long8 dst_lay, cl_mem tw, int64_t batch, float dir,
                               float scale, const char *who)
{
    cl_long cb = batch;
    clt_status st;
    if ((st = set_io_args(ctx, k, src, src_lay, dst, dst_lay, tw, who)) ||
        (st = clt__set_arg(ctx, k, 5, sizeof cb, &cb, who)) ||
        (st = clt__set_arg(ctx, k, 6, sizeof dir, &dir, who)) ||
        (st = clt__set_arg(ctx, k, 7, sizeof scale, &scale, who)))
        return st;
    uint64_t groups = ((uint64_t)batch + (uint64_t)L->T - 1) / (uint64_t)L->T;
    uint64_t cap = (uint64_t)ctx->dev->entry->info.compute_units * LOCAL_GROUPS_PER_CU;
    int most = clt__fft_knob("CLT_FFT_MAX_GROUPS", 1, 1 << 30); /* tests: groups loop over transforms */
    if (most)
        cap = (uint64_t)most;
    if (cap && groups > cap)
        groups = cap;
    size_t local = (size_t)L->wg, global = (size_t)groups * local;
    return clt__enqueue_kernel(ctx, k, 1, &global, &local, who);
}

/* Build every kernel a plan needs before anything is enqueued (a build failure then enqueues
 * nothing). */
static clt_status prepare_kernels(clt_context *ctx, const ours_state *s, int idx32, int rows)
{
    cl_kernel k;
    if (rows)
        return rows_kernel(ctx, idx32, &k);
    for (int i = 0; i < s->npasses; i++) {
        clt_fft_launch L;
        cl_kernel kl;
        clt_status st = local_kernel(ctx, &s->pass[i], idx32, &L, &kl);
        if (st != CLT_SUCCESS)
            return st;
        if (kl)
            continue;
        for (int j = 0; j <= s->pass[i].stages; j++) { /* j == stages: the identity stage */
            int r = j < s->pass[i].stages ? s->pass[i].radix[j] : 1;
            char options[48];
            stage_options(options, sizeof options, r, idx32);
            clt_status st = clt__kernel_get(ctx, FFT_FAMILY, options, "fft_stage", &k);
            if (st != CLT_SUCCESS)
                return st;
        }
    }
    return CLT_SUCCESS;
}

clt_status clt__fft_ours_execute(const clt_fft_plan *plan, cl_mem in, size_t in_off, cl_mem out,
                                 size_t out_off, const char *who)
{
    clt_context *ctx = plan->ctx;
    const ours_state *s = plan->ours;
    /* scratch: two stage buffers, then the staging area; a one-stage pass whose ends share a
     * buffer also goes through stage buffer 0 (an identity stage brings it back). */
    int64_t total = 2 * s->scratch + s->staging;
    /* 32-bit indices when every element index of every launch fits (2 per complex element) */
    int idx32 = 2 * (plan->in_span + (int64_t)in_off) < IDX32_LIMIT &&
                2 * (plan->out_span + (int64_t)out_off) < IDX32_LIMIT && 2 * total < IDX32_LIMIT;
    int rows = clt__cpu_style(ctx); /* CPU devices (the gfx902 profile keeps the stage kernels) */
    clt_status st = prepare_kernels(ctx, s, idx32, rows);
    if (st != CLT_SUCCESS)
        return st;
    cl_mem ws = NULL;
    int fresh;
    if ((st = clt__workspace_get(ctx, FFT_SLOT, (size_t)total * 8, &ws, &fresh)) != CLT_SUCCESS)
        return st;
    float dir = (float)plan->key.direction;
    for (int i = 0; i < s->npasses; i++) {
        const ours_pass *p = &s->pass[i];
        cl_mem ends[3] = {in, out, ws};
        int64_t end_off[3] = {(int64_t)in_off, (int64_t)out_off, 2 * s->scratch};
        cl_mem src = ends[p->src], dst = ends[p->dst];
        int64_t src_off = end_off[p->src], dst_off = end_off[p->dst];
        int stages = p->stages;
        int radix[MAX_STAGES + 1];
        memcpy(radix, p->radix, sizeof(int) * (size_t)stages);
        if (stages == 1 && src == dst)
            radix[stages++] = 1;
        if (rows) {
            st = launch_rows(ctx, p, src, to_long8(p->src_lay, src_off), dst, to_long8(p->dst_lay, dst_off), ws,
                             s->scratch, stages, dir, p->last ? (float)plan->scale : 1.0f, idx32, who);
            if (st != CLT_SUCCESS)
                return st;
            continue;
        }
        clt_fft_launch L;
        cl_kernel kl;
        if ((st = local_kernel(ctx, p, idx32, &L, &kl)) != CLT_SUCCESS)
            return st;
        if (kl) {
            st = launch_local(ctx, kl, &L, src, to_long8(p->src_lay, src_off), dst,
                              to_long8(p->dst_lay, dst_off), p->twiddles, p->batch, dir,
                              p->last ? (float)plan->scale : 1.0f, who);
            if (st != CLT_SUCCESS)
                return st;
            continue;
        }
        int64_t ns = 1;
        for (int j = 0; j < stages; j++) {
            int first = j == 0, final = j == stages - 1;
            int64_t tmp_lay[8] = {0, 1, p->n, 0, 0, 1, 1, MODE_COMPLEX};
            cl_mem a = first ? src : ws, b = final ? dst : ws;
            cl_long8 la = first ? to_long8(p->src_lay, src_off)
                                : to_long8(tmp_lay, ((j - 1) % 2) * s->scratch);
            cl_long8 lb = final ? to_long8(p->dst_lay, dst_off) : to_long8(tmp_lay, (j % 2) * s->scratch);
            float scale = final && p->last ? (float)plan->scale : 1.0f;
            st = launch_stage(ctx, a, la, b, lb, p->twiddles, p->n, ns, radix[j], p->batch, dir, scale,
                              idx32, who);
            if (st != CLT_SUCCESS)
                return st;
            ns *= radix[j];
        }
    }
    return CLT_SUCCESS;
}
