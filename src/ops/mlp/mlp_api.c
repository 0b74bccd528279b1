/* Entry points of include/cltensor_mlp.h: the description's checks, the network's tensors, the
 * per-call checks, then the fused path (mlp_fused.c), the CPU-shaped fused path (mlp_cpu.c) or the
 * per-layer path (mlp_layers.c); the optimizer launch they all end with (mlp_update.cl). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/common/launch.h"
#include "ops/elementwise/elementwise.h"
#include "ops/mlp/mlp.h"
#include "program/program.h"
#include "tensor/tensor.h"

#define UPDATE_WG 256u
#define UPDATE_SPLIT 8u /* items per parameter in mlp_update (its USPLIT) */

void clt_mlp_desc_init(clt_mlp_desc *d)
{
    if (!d)
        return;
    memset(d, 0, sizeof *d);
    d->inputs = 2;
    d->encoding = CLT_MLP_ENCODING_IDENTITY;
    d->fourier_scale = 6.28318530717958647692f;
    d->loss = CLT_MLP_LOSS_MSE;
    d->optimizer = CLT_MLP_ADAM;
    d->lr = 1e-3f;
    d->beta1 = 0.9f;
    d->beta2 = 0.999f;
    d->eps = 1e-8f;
    d->momentum = 0.9f;
    d->dampening = 0.0f;
    d->path = CLT_MLP_PATH_AUTO;
}

static int supported_act(clt_unary_op a)
{
    return a == CLT_IDENTITY || a == CLT_TANH || a == CLT_RELU || a == CLT_SIGMOID || a == CLT_SILU;
}

static int finite_ge0(float x) { return isfinite(x) && x >= 0.0f; }

static clt_status check_desc(clt_context *ctx, const clt_mlp_desc *d, const clt_tensor *B)
{
    static const char *who = "clt_mlp_create";
    if (d->inputs < 1 || d->inputs > CLT_MLP_MAX_WIDTH)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: inputs %lld (need 1..%d)", who,
                         (long long)d->inputs, CLT_MLP_MAX_WIDTH);
    if (d->layers < 1 || d->layers > CLT_MLP_MAX_LAYERS)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: %d layers (need 1..%d)", who, d->layers,
                         CLT_MLP_MAX_LAYERS);
    for (int l = 0; l < d->layers; l++) {
        if (d->widths[l] < 1 || d->widths[l] > CLT_MLP_MAX_WIDTH)
            return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: layer %d has width %lld (need 1..%d)",
                             who, l, (long long)d->widths[l], CLT_MLP_MAX_WIDTH);
        if (!supported_act(d->activations[l]))
            return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT,
                             "%s: layer %d: activation %d is not identity, tanh, relu, sigmoid or silu",
                             who, l, (int)d->activations[l]);
    }
    if (d->loss != CLT_MLP_LOSS_MSE)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: unknown loss %d", who, (int)d->loss);
    if (d->optimizer != CLT_MLP_ADAM && d->optimizer != CLT_MLP_SGD)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: unknown optimizer %d", who,
                         (int)d->optimizer);
    if (d->path != CLT_MLP_PATH_AUTO && d->path != CLT_MLP_PATH_FUSED &&
        d->path != CLT_MLP_PATH_LAYERS && d->path != CLT_MLP_PATH_FUSED_CPU)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: unknown path %d", who, (int)d->path);
    if (!finite_ge0(d->lr) || !finite_ge0(d->eps) || !finite_ge0(d->weight_decay) ||
        !(d->beta1 >= 0.0f && d->beta1 < 1.0f) || !(d->beta2 >= 0.0f && d->beta2 < 1.0f) ||
        !(d->momentum >= 0.0f && d->momentum < 1.0f) ||
        !(d->dampening >= 0.0f && d->dampening <= 1.0f))
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT,
                         "%s: lr %g, betas %g / %g, eps %g, momentum %g, dampening %g, weight_decay %g: "
                         "need finite lr, eps, weight_decay >= 0, betas and momentum in [0, 1), "
                         "dampening in [0, 1]",
                         who, (double)d->lr, (double)d->beta1, (double)d->beta2, (double)d->eps,
                         (double)d->momentum, (double)d->dampening, (double)d->weight_decay);
    if (d->encoding == CLT_MLP_ENCODING_IDENTITY) {
        if (B)
            return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: B given for the identity encoding",
                             who);
        return CLT_SUCCESS;
    }
    if (d->encoding != CLT_MLP_ENCODING_FOURIER)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: unknown encoding %d", who,
                         (int)d->encoding);
    if (d->fourier_features < 1 || d->fourier_features > CLT_MLP_MAX_WIDTH / 2 ||
        !isfinite(d->fourier_scale))
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT,
                         "%s: Fourier features %lld (need 1..%d), scale %g (need finite)", who,
                         (long long)d->fourier_features, CLT_MLP_MAX_WIDTH / 2,
                         (double)d->fourier_scale);
    if (!B)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: the Fourier encoding needs B", who);
    if (B->ctx != ctx)
        return clt__fail(ctx, CLT_ERR_CONTEXT_MISMATCH, "%s: B belongs to another context", who);
    if (B->dtype != CLT_F32)
        return clt__fail(ctx, CLT_ERR_INVALID_DTYPE, "%s: B is %s, expected f32", who,
                         clt_dtype_name(B->dtype));
    if (B->ndim != 2 || B->shape[0] != d->inputs || B->shape[1] != d->fourier_features)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: B must be [%lld, %lld]", who,
                         (long long)d->inputs, (long long)d->fourier_features);
    return CLT_SUCCESS;
}

void clt_mlp_free(clt_mlp *mlp)
{
    if (!mlp)
        return;
    clt_tensor *own[] = {mlp->params, mlp->grads, mlp->m,       mlp->v,
                         mlp->loss,   mlp->B,     mlp->scratch, mlp->partial,
                         mlp->loss_part, mlp->counter};
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        clt_tensor_free(own[i]);
    for (int l = 0; l < CLT_MLP_MAX_LAYERS; l++)
        clt_tensor_free(mlp->bias[l]), clt_tensor_free(mlp->dbias[l]);
    clt__mlp_layers_free(mlp);
    free(mlp);
}

/* splitmix64: the deterministic initial parameters */
static uint64_t next_u64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static clt_status make_tensors(clt_mlp *mlp, const clt_tensor *B, uint64_t seed)
{
    clt_context *ctx = mlp->ctx;
    int64_t np = mlp->nparams, one = 1;
    clt_status st;
    if ((st = clt_tensor_create(ctx, CLT_F32, 1, &np, &mlp->params)) ||
        (st = clt_tensor_create(ctx, CLT_F32, 1, &np, &mlp->grads)) ||
        (st = clt_tensor_create(ctx, CLT_F32, 1, &np, &mlp->m)) ||
        (st = clt_tensor_create(ctx, CLT_F32, 1, &np, &mlp->v)) ||
        (st = clt_tensor_create(ctx, CLT_F32, 1, &one, &mlp->loss)) ||
        (st = clt_tensor_create(ctx, CLT_I32, 1, &one, &mlp->counter)) ||
        (st = clt_tensor_fill(mlp->counter, 0.0)))
        return st;
    if (B) {
        if ((st = clt_tensor_create(ctx, CLT_F32, 2, B->shape, &mlp->B)) ||
            (st = clt_tensor_copy(mlp->B, B)))
            return st;
    } else if ((st = clt_tensor_create(ctx, CLT_F32, 1, &one, &mlp->B)) ||
               (st = clt_tensor_fill(mlp->B, 0.0)))
        return st;
    for (int l = 0; l < mlp->d.layers; l++) {
        int64_t nb = mlp->width[l + 1], off = mlp->poff[l] + mlp->width[l] * nb;
        if ((st = clt_tensor_view(mlp->params, off, 1, &nb, &mlp->bias[l])) ||
            (st = clt_tensor_view(mlp->grads, off, 1, &nb, &mlp->dbias[l])))
            return st;
    }
    float *host = malloc(sizeof(float) * (size_t)np);
    if (!host)
        return CLT_ERR_OUT_OF_HOST_MEMORY;
    uint64_t rng = seed;
    for (int l = 0; l < mlp->d.layers; l++) {
        double bound = 1.0 / sqrt((double)mlp->width[l]);
        int64_t count = (mlp->width[l] + 1) * mlp->width[l + 1];
        for (int64_t i = 0; i < count; i++) {
            double u = (double)(next_u64(&rng) >> 11) * 0x1.0p-53;
            host[mlp->poff[l] + i] = (float)((2.0 * u - 1.0) * bound);
        }
    }
    st = clt_tensor_write(mlp->params, host, sizeof(float) * (size_t)np);
    free(host);
    if (!st)
        st = clt_tensor_fill(mlp->m, 0.0);
    if (!st)
        st = clt_tensor_fill(mlp->v, 0.0);
    if (!st)
        st = clt_tensor_fill(mlp->grads, 0.0);
    if (!st)
        st = clt_tensor_fill(mlp->loss, 0.0);
    return st;
}

void clt__mlp_layout(clt_mlp *mlp)
{
    const clt_mlp_desc *d = &mlp->d;
    mlp->width[0] = d->encoding == CLT_MLP_ENCODING_FOURIER ? 2 * d->fourier_features : d->inputs;
    mlp->nparams = 0;
    for (int l = 0; l < d->layers; l++) {
        mlp->width[l + 1] = d->widths[l];
        mlp->poff[l] = mlp->nparams;
        mlp->nparams += (mlp->width[l] + 1) * mlp->width[l + 1];
    }
    mlp->pstride = (mlp->nparams + 31) / 32 * 32;
}

clt_status clt_mlp_create(clt_context *ctx, const clt_mlp_desc *desc, const clt_tensor *B,
                          uint64_t seed, clt_mlp **out)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_mlp_create";
    if (out)
        *out = NULL;
    if (!ctx || !desc || !out)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", who,
                         !ctx ? "ctx" : !desc ? "desc" : "out");
    clt_status st = check_desc(ctx, desc, B);
    if (st != CLT_SUCCESS)
        return st;
    clt_mlp *mlp = calloc(1, sizeof *mlp);
    if (!mlp)
        return clt__fail(ctx, CLT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", who);
    mlp->ctx = ctx;
    mlp->d = *desc;
    clt__mlp_layout(mlp);
    if (mlp->nparams > INT32_MAX) {
        long long np = (long long)mlp->nparams;
        free(mlp);
        return clt__fail(ctx, CLT_ERR_SIZE_OVERFLOW, "%s: %lld parameters (more than 2^31)", who, np);
    }
    char why[200] = "";
    /* auto on a CPU device (POCL): the CPU-shaped fused kernels (mlp_cpu.c: a work item per
     * core-sized tile, SIMD across the tile's points). The GPU-shaped fused kernels measured 2-7x
     * slower than the per-layer GEMMs there (256-item groups with barriers, vectorised by POCL only
     * across items); fused-cpu measured 3-5.7x faster than the per-layer path on the PINN (2
     * cores, bench/RESULTS.md). A network beyond its widths runs per-layer (silu: the GPU-shaped fused
     * kernels, the only others that have it). Forcing FUSED still runs the GPU-shaped kernels. */
    int cpu_auto = desc->path == CLT_MLP_PATH_AUTO && clt__cpu_style(ctx);
    int can_cpu = (cpu_auto || desc->path == CLT_MLP_PATH_FUSED_CPU) &&
                  clt__mlp_cpu_config(mlp, why, sizeof why);
    if (desc->path == CLT_MLP_PATH_FUSED_CPU && !can_cpu) {
        free(mlp);
        return clt__fail(ctx, CLT_ERR_UNSUPPORTED,
                         "%s: the CPU-shaped fused path cannot run this network: %s", who, why);
    }
    if (cpu_auto && !can_cpu) {
        char cpu_why[sizeof why];
        memcpy(cpu_why, why, sizeof why);
        snprintf(why, sizeof why, "auto on a CPU device, fused-cpu refused: %.140s", cpu_why);
    }
    int can_fuse = !can_cpu && desc->path != CLT_MLP_PATH_LAYERS && !cpu_auto &&
                   clt__mlp_fused_config(mlp, mlp->cfg, why, sizeof why);
    int silu_hidden = 0; /* the per-layer path's GEMM epilogue has no silu backward */
    for (int l = 0; l < desc->layers; l++)
        silu_hidden |= desc->activations[l] == CLT_SILU;
    if (desc->path == CLT_MLP_PATH_FUSED && !can_fuse) {
        free(mlp);
        return clt__fail(ctx, CLT_ERR_UNSUPPORTED, "%s: the fused path cannot run this network: %s",
                         who, why);
    }
    if (!can_cpu && !can_fuse && silu_hidden) { /* silu has no per-layer path */
        if (cpu_auto && clt__mlp_fused_config(mlp, mlp->cfg, why, sizeof why))
            can_fuse = 1; /* fused even on a CPU */
        else {
            free(mlp);
            return clt__fail(ctx, CLT_ERR_UNSUPPORTED,
                             "%s: silu runs only on the fused paths, which cannot run this network%s%s",
                             who, why[0] ? ": " : "", why);
        }
    }
    mlp->fused = can_fuse;
    mlp->fused_cpu = can_cpu;
    if ((st = make_tensors(mlp, B, seed)) != CLT_SUCCESS) {
        clt_mlp_free(mlp);
        return st;
    }
    clt__log("%s: %d layers, %lld parameters, %s path%s%s", who, desc->layers,
             (long long)mlp->nparams, clt_mlp_path_name(mlp), why[0] ? " (" : "", why[0] ? why : "");
    *out = mlp;
    return CLT_SUCCESS;
}

clt_tensor *clt_mlp_params(const clt_mlp *mlp) { return mlp ? mlp->params : NULL; }
clt_tensor *clt_mlp_grads(const clt_mlp *mlp) { return mlp ? mlp->grads : NULL; }
clt_tensor *clt_mlp_loss(const clt_mlp *mlp) { return mlp ? mlp->loss : NULL; }
const char *clt_mlp_path_name(const clt_mlp *mlp)
{
    return !mlp ? "" : mlp->fused_cpu ? "fused-cpu" : mlp->fused ? "fused" : "layers";
}
int64_t clt_mlp_steps(const clt_mlp *mlp) { return mlp ? mlp->steps : 0; }

/* x [N, inputs] and, when given, out [N, width] (y or target): returns N or -1 (failed). */
static int64_t check_io(clt_mlp *mlp, const char *who, const clt_tensor *x, const clt_tensor *o,
                        const char *oname, clt_status *st)
{
    if (!mlp) {
        *st = clt__fail(NULL, CLT_ERR_INVALID_ARGUMENT, "%s: mlp is NULL", who);
        return -1;
    }
    const clt_tensor *t[2] = {x, o};
    const char *names[2] = {"x", oname};
    if ((*st = clt__ew_not_null(who, 2, t, names)) != CLT_SUCCESS)
        return -1;
    clt_context *ctx = mlp->ctx;
    for (int i = 0; i < 2; i++) {
        if (t[i]->ctx != ctx) {
            *st = clt__fail(ctx, CLT_ERR_CONTEXT_MISMATCH, "%s: %s belongs to another context", who,
                            names[i]);
            return -1;
        }
        if (t[i]->dtype != CLT_F32) {
            *st = clt__fail(ctx, CLT_ERR_INVALID_DTYPE, "%s: %s is %s, expected f32", who, names[i],
                            clt_dtype_name(t[i]->dtype));
            return -1;
        }
    }
    int64_t out_w = mlp->width[mlp->d.layers];
    if (x->ndim != 2 || x->shape[1] != mlp->d.inputs || o->ndim != 2 || o->shape[0] != x->shape[0] ||
        o->shape[1] != out_w) {
        *st = clt__fail(ctx, CLT_ERR_INVALID_SHAPE,
                        "%s: need x [N, %lld] and %s [N, %lld]; got %d-D x and %d-D %s (shapes "
                        "[%lld, %lld], [%lld, %lld])",
                        who, (long long)mlp->d.inputs, oname, (long long)out_w, x->ndim, o->ndim,
                        oname, (long long)x->shape[0], (long long)(x->ndim > 1 ? x->shape[1] : 0),
                        (long long)o->shape[0], (long long)(o->ndim > 1 ? o->shape[1] : 0));
        return -1;
    }
    return x->shape[0];
}

clt_status clt_mlp_forward(clt_mlp *mlp, const clt_tensor *x, clt_tensor *y)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_mlp_forward";
    clt_status st;
    int64_t n = check_io(mlp, who, x, y, "y", &st);
    if (n < 0)
        return st;
    if (clt__tensors_overlap(x, y))
        return clt__fail(mlp->ctx, CLT_ERR_ALIASING, "%s: y overlaps x", who);
    if (n == 0)
        return CLT_SUCCESS;
    if (mlp->fused_cpu)
        return clt__mlp_cpu_forward(mlp, x, y, n);
    if (mlp->fused)
        return clt__mlp_fused_forward(mlp, x, y, n);
    return clt__mlp_layers_forward(mlp, x, y, n);
}

static clt_status step(clt_mlp *mlp, const char *who, const clt_tensor *x, const clt_tensor *target,
                       int update, clt_future **loss_out)
{
    clt_status st;
    int64_t n = check_io(mlp, who, x, target, "target", &st);
    if (n < 0)
        return st;
    if (n == 0)
        return clt__fail(mlp->ctx, CLT_ERR_INVALID_SHAPE, "%s: no points (N = 0)", who);
    if (n > INT32_MAX / 4)
        return clt__fail(mlp->ctx, CLT_ERR_INVALID_SHAPE, "%s: N %lld is too large", who,
                         (long long)n);
    int want_loss = !update || loss_out != NULL;
    /* the fused GPU path reads the loss between its two launches (clt__mlp_fused_step), the
     * others after the step */
    clt_status read_st = CLT_SUCCESS;
    st = mlp->fused_cpu ? clt__mlp_cpu_step(mlp, x, target, n, update, want_loss, who)
         : mlp->fused   ? clt__mlp_fused_step(mlp, x, target, n, update, want_loss, loss_out,
                                              &read_st, who)
                        : clt__mlp_layers_step(mlp, x, target, n, update, who);
    if (st != CLT_SUCCESS) {
        if (loss_out && *loss_out) { /* the update failed after the loss's read: no future */
            clt_future_free(*loss_out);
            *loss_out = NULL;
        }
        return st;
    }
    if (update)
        mlp->steps++;
    if (loss_out && !mlp->fused)
        read_st = clt_tensor_read_async(mlp->loss, 0, 1, loss_out);
    return read_st;
}

clt_status clt_mlp_gradients(clt_mlp *mlp, const clt_tensor *x, const clt_tensor *target)
{
    CLT_PUBLIC_CALL();
    return step(mlp, "clt_mlp_gradients", x, target, 0, NULL);
}

clt_status clt_mlp_train_step(clt_mlp *mlp, const clt_tensor *x, const clt_tensor *target,
                              clt_future **loss_out)
{
    CLT_PUBLIC_CALL();
    if (loss_out)
        *loss_out = NULL;
    return step(mlp, "clt_mlp_train_step", x, target, 1, loss_out);
}

/* mlp_update.cl's items per parameter (USPLIT) in groups of wg; CLT_MLP_USPLIT (a power of two)
 * overrides it for measurements */
static size_t update_split(size_t wg)
{
    const char *env = getenv("CLT_MLP_USPLIT");
    size_t split = UPDATE_SPLIT;
    if (env && atoi(env) > 0 && !(atoi(env) & (atoi(env) - 1)))
        split = (size_t)atoi(env);
    return wg < split ? wg : split;
}

size_t clt__mlp_update_options(const clt_context *ctx, char *options, size_t cap, size_t *split)
{
    size_t wg = UPDATE_WG;
    while (wg > ctx->limits.max_work_group_size && wg > 1)
        wg >>= 1;
    size_t sp = update_split(wg);
    snprintf(options, cap, "-DUWG=%zu -DUSPLIT=%zu", wg, sp);
    if (split)
        *split = sp;
    return wg;
}

clt_status clt__mlp_update(clt_mlp *mlp, const clt_tensor *partial, int64_t groups,
                           const clt_tensor *loss_part, int64_t n, int update, int want_loss,
                           const char *who)
{
    clt_context *ctx = mlp->ctx;
    const clt_mlp_desc *d = &mlp->d;
    char options[48];
    size_t split;
    size_t wg = clt__mlp_update_options(ctx, options, sizeof options, &split);
    cl_kernel k;
    /* fused-cpu: its own CPU-shaped twin (mlp_cpu.cl), same arguments plus the chunk of each item */
    clt_status st = mlp->fused_cpu
                        ? clt__kernel_get(ctx, "mlp_cpu", mlp->cpu.options, "mlp_cpu_update", &k)
                        : clt__kernel_get(ctx, "mlp_update", options, "mlp_update", &k);
    if (st != CLT_SUCCESS)
        return st;
    int64_t step_no = mlp->steps + 1;
    int mode = !update ? 0 : d->optimizer == CLT_MLP_ADAM ? 1 : 2;
    cl_int4 ctl = {{(cl_int)groups, mode, want_loss, step_no == 1}};
    double inv = 1.0 / ((double)n * (double)mlp->width[d->layers]);
    cl_float8 s;
    if (mode == 1) {
        double bc1 = 1.0 - pow((double)d->beta1, (double)step_no);
        double bc2 = 1.0 - pow((double)d->beta2, (double)step_no);
        s = (cl_float8){{(float)(d->lr / bc1), d->beta1, d->beta2, d->eps, d->weight_decay,
                         (float)sqrt(bc2), (float)inv, 0.0f}};
    } else
        s = (cl_float8){{d->lr, d->momentum, 0.0f, 0.0f, d->weight_decay, 1.0f, (float)inv,
                         d->dampening}};
    cl_int np = (cl_int)mlp->nparams;
    const cl_mem mems[7] = {mlp->params->storage->mem, mlp->grads->storage->mem,
                            mlp->m->storage->mem,      mlp->v->storage->mem,
                            partial->storage->mem,     loss_part->storage->mem,
                            mlp->loss->storage->mem};
    for (cl_uint i = 0; i < 7; i++)
        if ((st = clt__set_arg(ctx, k, i, sizeof(cl_mem), &mems[i], who)))
            return st;
    if ((st = clt__set_arg(ctx, k, 7, sizeof ctl, &ctl, who)) ||
        (st = clt__set_arg(ctx, k, 8, sizeof s, &s, who)) ||
        (st = clt__set_arg(ctx, k, 9, sizeof np, &np, who)))
        return st;
    if (mlp->fused_cpu) {
        size_t items = (size_t)mlp->cpu.update_groups, one = 1;
        cl_int chunk = (cl_int)((mlp->nparams + (int64_t)items * 16 - 1) / ((int64_t)items * 16) * 16);
        if ((st = clt__set_arg(ctx, k, 10, sizeof chunk, &chunk, who)))
            return st;
        return clt__enqueue_kernel(ctx, k, 1, &items, &one, who);
    }
    cl_int ps = partial == mlp->partial ? (cl_int)mlp->pstride : np; /* the per-layer path: grads */
    if ((st = clt__set_arg(ctx, k, 10, sizeof ps, &ps, who)))
        return st;
    size_t per_group = wg / split;
    size_t global = ((size_t)mlp->nparams + per_group - 1) / per_group * wg;
    return clt__enqueue_kernel(ctx, k, 1, &global, &wg, who);
}
