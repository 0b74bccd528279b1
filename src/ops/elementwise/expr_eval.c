/* Evaluating an expression: argument checks, the broadcast plan, the kernel lookup by structure
 * (generating and compiling only on a miss), arguments and the one launch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/elementwise/expr_internal.h"
#include "ops/common/launch.h"
#include "program/program.h"
#include "tensor/tensor.h"

static void shape_text(const clt_tensor *t, char *buf, size_t cap)
{
    size_t len = (size_t)snprintf(buf, cap, "[");
    for (int d = 0; d < t->ndim && len < cap; d++)
        len += (size_t)snprintf(buf + len, cap - len, d ? ", %lld" : "%lld",
                                (long long)t->shape[d]);
    if (len < cap)
        snprintf(buf + len, cap - len, "]");
}

static int broadcasts_to(const clt_tensor *t, const clt_tensor *out)
{
    if (t->ndim > out->ndim)
        return 0;
    int pad = out->ndim - t->ndim;
    for (int d = 0; d < t->ndim; d++)
        if (t->shape[d] != 1 && t->shape[d] != out->shape[d + pad])
            return 0;
    return 1;
}

static int same_shape(const clt_tensor *a, const clt_tensor *b)
{
    if (a->ndim != b->ndim)
        return 0;
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d])
            return 0;
    return 1;
}

/* Everything the header promises to reject, before anything is enqueued. */
static clt_status validate(const char *who, const clt_expr *e, int root, int ninputs,
                           const clt_tensor *const *inputs, int nscalars, const float *scalars,
                           clt_tensor *out, unsigned char *reach, clt__expr_plan *plan)
{
    clt_context *ctx = out->ctx;
    if (!e)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: expression is NULL", who);
    if (e->error[0])
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: invalid expression: %s", who,
                         e->error);
    if (root < 0 || root >= e->count)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT,
                         "%s: root %d is not a node of the expression (0 .. %d)", who, root,
                         e->count - 1);
    if (ninputs < 0 || ninputs > CLT_EXPR_MAX_INPUTS || (ninputs > 0 && !inputs))
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: ninputs %d with inputs %s", who,
                         ninputs, inputs ? "given" : "NULL");
    if (nscalars < 0 || nscalars > CLT_EXPR_MAX_SCALARS || (nscalars > 0 && !scalars))
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: nscalars %d with scalars %s", who,
                         nscalars, scalars ? "given" : "NULL");
    unsigned in_mask, sc_mask;
    clt__expr_reach(e, root, reach, &in_mask, &sc_mask);
    plan->n_in = plan->n_sc = 0;
    for (int s = 0; s < CLT_EXPR_MAX_SCALARS; s++) {
        if (!(sc_mask & (1u << s)))
            continue;
        if (s >= nscalars)
            return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT,
                             "%s: the expression reads scalar %d but only %d scalars are given",
                             who, s, nscalars);
        plan->sc_slot[plan->n_sc++] = s;
    }
    if (out->dtype != CLT_F32)
        return clt__fail(ctx, CLT_ERR_INVALID_DTYPE, "%s: out is %s, only f32 is supported", who,
                         clt_dtype_name(out->dtype));
    for (int s = 0; s < CLT_EXPR_MAX_INPUTS; s++) {
        if (!(in_mask & (1u << s)))
            continue;
        const clt_tensor *t = s < ninputs ? inputs[s] : NULL;
        if (!t)
            return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT,
                             "%s: the expression reads input %d but it is %s", who, s,
                             s < ninputs ? "NULL" : "not given");
        if (t->ctx != ctx)
            return clt__fail(ctx, CLT_ERR_CONTEXT_MISMATCH,
                             "%s: input %d belongs to another context than out", who, s);
        if (t->dtype != CLT_F32)
            return clt__fail(ctx, CLT_ERR_INVALID_DTYPE, "%s: input %d is %s, expected f32", who,
                             s, clt_dtype_name(t->dtype));
        if (!broadcasts_to(t, out)) {
            char a[200], b[200];
            shape_text(t, a, sizeof a);
            shape_text(out, b, sizeof b);
            return clt__fail(ctx, CLT_ERR_INVALID_SHAPE,
                             "%s: input %d of shape %s does not broadcast to out's shape %s", who,
                             s, a, b);
        }
        /* In place is fine (each element is read before it is written, by the same work item);
         * any other overlap would read elements already overwritten. */
        if (clt__tensors_overlap(t, out) && !(t->offset == out->offset && same_shape(t, out)))
            return clt__fail(ctx, CLT_ERR_ALIASING,
                             "%s: out overlaps input %d without being the same memory and shape",
                             who, s);
        plan->in_slot[plan->n_in++] = s;
    }
    return CLT_SUCCESS;
}

/* Merge adjacent dims that are contiguous for every operand, then classify each input. */
static void make_plan(const clt_tensor *const *inputs, const clt_tensor *out, clt__expr_plan *p)
{
    int nd = out->ndim, m = 0;
    uint64_t s[CLT_EXPR_MAX_INPUTS][CLT_MAX_DIMS];
    for (int k = 0; k < p->n_in; k++) {
        const clt_tensor *t = inputs[p->in_slot[k]];
        int pad = nd - t->ndim;
        uint64_t stride = 1;
        for (int d = nd - 1; d >= 0; d--) {
            uint64_t dim = d >= pad ? (uint64_t)t->shape[d - pad] : 1;
            s[k][d] = dim == 1 ? 0 : stride;
            stride *= dim;
        }
    }
    for (int d = 0; d < nd; d++) {
        uint64_t dim = (uint64_t)out->shape[d];
        if (dim == 1)
            continue;
        int merge = m > 0;
        for (int k = 0; k < p->n_in && merge; k++)
            merge = p->strides[k][m - 1] == s[k][d] * dim;
        if (merge) {
            p->dims[m - 1] *= dim;
        } else {
            p->dims[m] = dim;
            m++;
        }
        for (int k = 0; k < p->n_in; k++)
            p->strides[k][m - 1] = s[k][d];
    }
    p->ndim = m;
    p->flat = 1;
    for (int k = 0; k < p->n_in; k++) {
        const clt_tensor *t = inputs[p->in_slot[k]];
        p->win_div[k] = p->win_mod[k] = 0;
        if ((uint64_t)t->numel == p->n) {
            p->acc[k] = CLT__ACC_SAME;
            continue;
        }
        p->flat = 0;
        if (t->numel == 1) {
            p->acc[k] = CLT__ACC_SCALAR;
            continue;
        }
        int j = 0, l = m - 1;
        while (p->strides[k][j] == 0)
            j++;
        while (p->strides[k][l] == 0)
            l--;
        int window = p->strides[k][l] == 1;
        for (int d = j; d < l && window; d++)
            window = p->strides[k][d] == p->strides[k][d + 1] * p->dims[d + 1];
        if (!window) {
            p->acc[k] = CLT__ACC_GENERAL;
            continue;
        }
        p->acc[k] = CLT__ACC_WINDOW;
        uint64_t inner = 1, span = 1;
        for (int d = l + 1; d < m; d++)
            inner *= p->dims[d];
        for (int d = j; d <= l; d++)
            span *= p->dims[d];
        p->win_div[k] = l < m - 1;
        p->win_mod[k] = j > 0;
        p->win_d[k] = inner;
        p->win_m[k] = span;
    }
}

typedef struct arg_writer {
    clt_context *ctx;
    cl_kernel kernel;
    cl_uint next;
    int idx32;
    const char *who;
    clt_status st;
} arg_writer;

static void arg(arg_writer *w, size_t size, const void *value)
{
    if (w->st == CLT_SUCCESS)
        w->st = clt__set_arg(w->ctx, w->kernel, w->next, size, value, w->who);
    w->next++;
}

static void arg_index(arg_writer *w, uint64_t v)
{
    if (w->idx32) {
        cl_uint u = (cl_uint)v;
        arg(w, sizeof u, &u);
    } else {
        cl_ulong u = v;
        arg(w, sizeof u, &u);
    }
}

static clt_status set_args(arg_writer *w, const clt__expr_plan *p,
                           const clt_tensor *const *inputs, const float *scalars, clt_tensor *out)
{
    arg(w, sizeof(cl_mem), &out->storage->mem);
    for (int k = 0; k < p->n_in; k++)
        arg(w, sizeof(cl_mem), &inputs[p->in_slot[k]]->storage->mem);
    arg_index(w, p->n);
    if (p->offsets) {
        cl_ulong off = out->offset / sizeof(float);
        arg(w, sizeof off, &off);
        for (int k = 0; k < p->n_in; k++) {
            off = inputs[p->in_slot[k]]->offset / sizeof(float);
            arg(w, sizeof off, &off);
        }
    }
    if (!p->flat) {
        int general = 0;
        for (int k = 0; k < p->n_in; k++) {
            if (p->acc[k] == CLT__ACC_WINDOW && p->win_div[k])
                arg_index(w, p->win_d[k]);
            if (p->acc[k] == CLT__ACC_WINDOW && p->win_mod[k])
                arg_index(w, p->win_m[k]);
            general |= p->acc[k] == CLT__ACC_GENERAL;
        }
        if (general) {
            for (int d = 1; d < p->ndim; d++)
                arg_index(w, p->dims[d]);
            for (int k = 0; k < p->n_in; k++)
                for (int d = 0; d < p->ndim && p->acc[k] == CLT__ACC_GENERAL; d++)
                    arg_index(w, p->strides[k][d]);
        }
    }
    for (int k = 0; k < p->n_sc; k++)
        arg(w, sizeof(float), &scalars[p->sc_slot[k]]);
    return w->st;
}

/* Elements per work item of the cpu layout (floatW; 8 = one AVX2 register; 4 and 16 measured no
 * better on POCL) and its work-group size in items (8 x 512 = 4096 elements per group; 128 to
 * 4096 measured the same, 4096 doubles the 1024-element case). What POCL loses to torch at 1M and
 * 65536 is not this kernel (one POCL worker runs it at the 1-thread memcpy floor) but the wake of
 * POCL's second worker in every command, measured in a file git keeps:
 * `git show ae85e9d:bench/results/pocl/elementwise_1m_breakdown.md`. */
#define CPU_VEC 8
#define CPU_GROUP 512
/* Streaming (non-temporal) stores of out when the op's bytes (inputs in out's layout + out) exceed
 * the device's global-memory cache: out's lines would leave the cache anyway, and skipping their
 * read-for-ownership saves a quarter of an add's traffic, a third of a relu's. POCL, 2 cores,
 * 32 MiB L3, library A/B interleaved (3 runs, us wall / CPU): add/16M 6430-7290 / 12.5-14.5k ->
 * 4790-5270 / 9.2-10.5k, relu/16M 4630-5140 / 9.2-10.2k -> 3180-3680 / 6.3-7.3k, add/4M (48 MiB)
 * 960-1450 -> 710-1030. In cache they lose: add/1M (12 MiB) 124-138 -> 204-215 with a plain
 * float8 kernel. */
static int64_t stream_bytes_override = -1;

void clt__expr_set_stream_bytes(int64_t bytes)
{
    stream_bytes_override = bytes;
}

static int use_streaming_stores(clt_context *ctx, const clt__expr_plan *p)
{
    if (!p->vec || p->offsets == 2)
        return 0; /* only the aligned floatW store of the cpu layout streams */
    uint64_t bytes = p->n * sizeof(float);
    for (int k = 0; k < p->n_in; k++)
        bytes += p->acc[k] == CLT__ACC_SAME ? p->n * sizeof(float) : 0;
    if (stream_bytes_override >= 0)
        return bytes >= (uint64_t)stream_bytes_override;
    if (bytes < (1u << 22))
        return 0; /* streams never pay this small (see above): skip the query */
    cl_ulong cache = 0;
    cl_int err = clGetDeviceInfo(ctx->dev->entry->device, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE,
                                 sizeof cache, &cache, NULL);
    if (err != CL_SUCCESS || cache == 0)
        return 0;
    return bytes > cache;
}

/* Prelude (elementwise.cl with activations inlined) + generated text: the whole program. */
static clt_status make_source(clt_context *ctx, const clt_expr *e, int root,
                              const unsigned char *reach, const clt__expr_plan *plan, char **out,
                              size_t *body_at)
{
    char *prelude = NULL;
    size_t plen = 0;
    clt_status st = clt__kernel_source(ctx, "elementwise", ctx->limits.kernel_dir, &prelude, &plen);
    if (st != CLT_SUCCESS)
        return st;
    char *body = clt__expr_codegen(e, root, reach, plan);
    char *source = body ? malloc(plen + strlen(body) + 1) : NULL;
    if (!source) {
        free(prelude);
        free(body);
        return clt__fail(ctx, CLT_ERR_OUT_OF_HOST_MEMORY, "expression: out of host memory");
    }
    memcpy(source, prelude, plen);
    strcpy(source + plen, body);
    free(prelude);
    free(body);
    *out = source;
    *body_at = plen;
    return CLT_SUCCESS;
}

/* Miss path: the program, compiled once per device and structure. */
static clt_status build_kernel(clt_context *ctx, const char *key, const char *options,
                               const clt_expr *e, int root, const unsigned char *reach,
                               const clt__expr_plan *plan, cl_kernel *kernel)
{
    char *source = NULL;
    size_t body_at = 0;
    clt_status st = make_source(ctx, e, root, reach, plan, &source, &body_at);
    if (st != CLT_SUCCESS)
        return st;
    clt__log("expression %s: generated kernel:\n%s", key, source + body_at);
    st = clt__kernel_get_source(ctx, key, source, options, CLT__EXPR_KERNEL_NAME, kernel);
    free(source);
    return st;
}

#define CLT__STR_(x) #x
#define CLT__STR(x) CLT__STR_(x)

/* Everything an evaluation decides before it builds or launches: the reached nodes, the plan, the
 * structure key and the build options (the layout is in the options, and so in the cache key, not
 * in the structure key). */
typedef struct prepared {
    unsigned char reach[CLT_EXPR_MAX_NODES];
    clt__expr_plan plan;
    char key[CLT__EXPR_KEY_MAX];
    const char *options;
} prepared;

static clt_status prepare(const char *who, const clt_expr *e, int root, int ninputs,
                          const clt_tensor *const *inputs, int nscalars, const float *scalars,
                          clt_tensor *out, prepared *pr)
{
    clt_context *ctx = out->ctx;
    clt__expr_plan *plan = &pr->plan;
    clt_status st = validate(who, e, root, ninputs, inputs, nscalars, scalars, out, pr->reach, plan);
    if (st != CLT_SUCCESS)
        return st;
    plan->n = (uint64_t)out->numel;
    plan->idx32 = plan->n < (1ull << 31);
    plan->vec = clt__cpu_style(ctx) ? CPU_VEC : 0;
    /* Typed vector loads need every offset a multiple of the chunk (4 or W elements). */
    size_t chunk = plan->vec ? (size_t)plan->vec : 4;
    plan->offsets = 0;
    for (int k = -1; k < plan->n_in; k++) {
        size_t off = (k < 0 ? out : inputs[plan->in_slot[k]])->offset / sizeof(float);
        if (off && plan->offsets < 1)
            plan->offsets = 1;
        if (off % chunk)
            plan->offsets = 2;
    }
    make_plan(inputs, out, plan);
    if (!clt__expr_key(e, root, pr->reach, plan, pr->key))
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: expression key too long", who);
    static const char vec_opt[] = "-DCLT_EW_VEC=" CLT__STR(CPU_VEC);
    static const char stream_opt[] = "-DCLT_EW_VEC=" CLT__STR(CPU_VEC) " -DCLT_EW_NT=1";
    pr->options = !plan->vec ? "" : use_streaming_stores(ctx, plan) ? stream_opt : vec_opt;
    return CLT_SUCCESS;
}

clt_status clt__expr_program(const clt_expr *e, int root, int ninputs,
                             const clt_tensor *const *inputs, int nscalars, const float *scalars,
                             clt_tensor *out, char **source, const char **options)
{
    if (!out)
        return clt__fail(NULL, CLT_ERR_INVALID_ARGUMENT, "clt__expr_program: out is NULL");
    prepared pr;
    clt_status st = prepare("clt__expr_program", e, root, ninputs, inputs, nscalars, scalars, out, &pr);
    if (st == CLT_SUCCESS && out->numel == 0)
        st = clt__fail(out->ctx, CLT_ERR_INVALID_ARGUMENT, "clt__expr_program: out is empty");
    if (st == CLT_SUCCESS)
    {
        size_t body_at;
        st = make_source(out->ctx, e, root, pr.reach, &pr.plan, source, &body_at);
    }
    if (st == CLT_SUCCESS)
        *options = pr.options;
    return st;
}

clt_status clt__expr_eval_named(const char *who, const clt_expr *e, int root, int ninputs,
                                const clt_tensor *const *inputs, int nscalars, const float *scalars,
                                clt_tensor *out)
{
    if (!out)
        return clt__fail(NULL, CLT_ERR_INVALID_ARGUMENT, "%s: out is NULL", who);
    clt_context *ctx = out->ctx;
    prepared pr;
    clt_status st = prepare(who, e, root, ninputs, inputs, nscalars, scalars, out, &pr);
    if (st != CLT_SUCCESS || out->numel == 0)
        return st;
    clt__expr_plan plan = pr.plan;
    cl_kernel kernel = clt__kernel_find(ctx, pr.key, pr.options, CLT__EXPR_KERNEL_NAME);
    if (!kernel) {
        st = build_kernel(ctx, pr.key, pr.options, e, root, pr.reach, &plan, &kernel);
        if (st != CLT_SUCCESS)
            return st;
    }
    arg_writer w = {ctx, kernel, 0, plan.idx32, who, CLT_SUCCESS};
    st = set_args(&w, &plan, inputs, scalars, out);
    if (st != CLT_SUCCESS)
        return st;
    if (plan.vec)
        return clt__launch_1d_group(ctx, kernel, (plan.n + CPU_VEC - 1) / CPU_VEC, CPU_GROUP, who);
    uint64_t items = (plan.n + 3) / 4; /* both GPU layouts take 4 elements per iteration */
    return clt__launch_1d(ctx, kernel, items, who);
}

clt_status clt_expr_eval(const clt_expr *e, int root, int ninputs, const clt_tensor *const *inputs,
                         int nscalars, const float *scalars, clt_tensor *out)
{
    CLT_PUBLIC_CALL();
    return clt__expr_eval_named("clt_expr_eval", e, root, ninputs, inputs, nscalars, scalars, out);
}
