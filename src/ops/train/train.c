/* Training ops of include/cltensor_train.h: clt_adam_step, clt_mse_loss (+ _with_grad), clt_mse_loss_backward,
 * clt_fourier_features. Validate, then one launch each (cl_kernels/train/train.cl, or the expression
 * engine for the loss gradient). */
#include <math.h>
#include <stdio.h>

#include "cltensor_train.h"
#include "ops/elementwise/elementwise.h"
#include "ops/common/launch.h"
#include "ops/train/train_internal.h"
#include "program/program.h"
#include "tensor/tensor.h"

#define TRAIN_FAMILY "train"
#define MSE_WG 256u /* the loss's one work-group: enough items to hide latency on a GPU */

void clt_adam_params_init(clt_adam_params *p)
{
    if (!p)
        return;
    p->lr = 1e-3f;
    p->beta1 = 0.9f;
    p->beta2 = 0.999f;
    p->eps = 1e-8f;
    p->weight_decay = 0.0f;
}

/* Not NULL, one context, f32: the checks every op here starts with. */
static clt_status check_tensors(const char *who, int n, const clt_tensor *const *t,
                                const char *const *names)
{
    clt_status st = clt__ew_not_null(who, n, t, names);
    if (st != CLT_SUCCESS)
        return st;
    for (int i = 0; i < n; i++) {
        if (t[i]->ctx != t[0]->ctx)
            return clt__fail(t[0]->ctx, CLT_ERR_CONTEXT_MISMATCH,
                             "%s: %s and %s belong to different contexts", who, names[0], names[i]);
        if (t[i]->dtype != CLT_F32)
            return clt__fail(t[0]->ctx, CLT_ERR_INVALID_DTYPE, "%s: %s is %s, expected f32", who,
                             names[i], clt_dtype_name(t[i]->dtype));
    }
    return CLT_SUCCESS;
}

static cl_ulong elem_off(const clt_tensor *t) { return t->offset / sizeof(float); }

/* Kernel `name` of train.cl. All three kernels come from one build (-DWG: the largest power-of-two
 * group <= MSE_WG that the device and the loss kernel take), so a process compiles train.cl once. */
static clt_status train_kernel(clt_context *ctx, const char *name, cl_kernel *k,
                               size_t *wg_out)
{
    size_t wg = MSE_WG;
    while (wg > ctx->limits.max_work_group_size && wg > 1)
        wg >>= 1;
    while (wg > 1 && wg * sizeof(float) > ctx->limits.local_mem_budget)
        wg >>= 1;
    for (;;) {
        char options[32];
        snprintf(options, sizeof options, "-DWG=%zu", wg);
        cl_kernel mse;
        clt_status st = clt__kernel_get(ctx, TRAIN_FAMILY, options, "mse_loss", &mse);
        if (st == CLT_SUCCESS && (clt__kernel_work_group_limit(ctx, mse) >= wg || wg == 1))
            st = clt__kernel_get(ctx, TRAIN_FAMILY, options, name, k);
        else if (st == CLT_SUCCESS) {
            wg >>= 1; /* registers: this device runs fewer items of the loss kernel per group */
            continue;
        }
        if (st != CLT_SUCCESS)
            return st;
        if (wg_out)
            *wg_out = wg;
        return CLT_SUCCESS;
    }
}

/* One item per element over a full grid (the Adam and Fourier kernels have no stride loop, which
 * lets POCL vectorise a work-group across its items; GPUs gain nothing from a capped grid here). */
static clt_status launch_full(clt_context *ctx, cl_kernel k, uint64_t items, const char *who)
{
    size_t local = clt__fit_local(ctx, k, 256);
    size_t global = (size_t)((items + local - 1) / local) * local;
    return clt__enqueue_kernel(ctx, k, 1, &global, &local, who);
}

/* ------------------------------------------------------------------------------------ Adam */

static int in_unit(float b) { return b >= 0.0f && b < 1.0f; }

void clt_adamw_params_init(clt_adam_params *p)
{
    clt_adam_params_init(p);
    if (p)
        p->weight_decay = 0.01f;
}

clt_status clt__adam_check(clt_context *ctx, const clt_adam_params *p, int64_t step, const char *who)
{
    if (!p)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: p is NULL", who);
    if (step < 1)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: step %lld (the first update is step 1)",
                         who, (long long)step);
    if (!(p->lr >= 0.0f && isfinite(p->lr)) || !in_unit(p->beta1) || !in_unit(p->beta2) ||
        !(p->eps >= 0.0f && isfinite(p->eps)) ||
        !(p->weight_decay >= 0.0f && isfinite(p->weight_decay)))
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT,
                         "%s: lr %g, betas %g / %g, eps %g, weight_decay %g: need finite lr, eps, "
                         "weight_decay >= 0 and betas in [0, 1)",
                         who, (double)p->lr, (double)p->beta1, (double)p->beta2, (double)p->eps,
                         (double)p->weight_decay);
    return CLT_SUCCESS;
}

cl_float8 clt__adam_scalars(const clt_adam_params *p, int64_t step, int decoupled)
{
    /* Bias corrections in double on the host, as torch computes them (Python floats). */
    double bc1 = 1.0 - pow((double)p->beta1, (double)step);
    double bc2 = 1.0 - pow((double)p->beta2, (double)step);
    cl_float8 s = {{(float)(p->lr / bc1), p->beta1, p->beta2, p->eps, decoupled ? 0.0f : p->weight_decay,
                    (float)sqrt(bc2), decoupled ? (float)(1.0 - (double)p->lr * p->weight_decay) : 1.0f,
                    0.0f}};
    return s;
}

/* clt_adam_step and clt_adamw_step: one kernel, the weight decay either added to the gradient (L2)
 * or applied to param as a factor (decoupled). */
static clt_status adam_run(const char *who, int decoupled, clt_tensor *param, const clt_tensor *grad,
                           clt_tensor *m, clt_tensor *v, const clt_adam_params *p, int64_t step)
{
    static const char *const names[4] = {"param", "grad", "m", "v"};
    const clt_tensor *t[4] = {param, grad, m, v};
    clt_status st = check_tensors(who, 4, t, names);
    if (st != CLT_SUCCESS)
        return st;
    clt_context *ctx = param->ctx;
    if ((st = clt__adam_check(ctx, p, step, who)) != CLT_SUCCESS)
        return st;
    for (int i = 1; i < 4; i++)
        if ((st = clt__ew_same_shape(who, t[i], names[i], param, "param")) != CLT_SUCCESS)
            return st;
    for (int i = 0; i < 4; i++)
        for (int j = i + 1; j < 4; j++)
            if (clt__tensors_overlap(t[i], t[j]))
                return clt__fail(ctx, CLT_ERR_ALIASING, "%s: %s overlaps %s", who, names[i], names[j]);
    if (param->numel == 0)
        return CLT_SUCCESS;
    cl_float8 s = clt__adam_scalars(p, step, decoupled);
    cl_ulong4 off = {{elem_off(param), elem_off(grad), elem_off(m), elem_off(v)}};
    cl_ulong count = (cl_ulong)param->numel;
    cl_kernel k;
    if ((st = train_kernel(ctx, "adam_step", &k, NULL)) != CLT_SUCCESS)
        return st;
    for (cl_uint i = 0; i < 4; i++)
        if ((st = clt__set_arg(ctx, k, i, sizeof(cl_mem), &t[i]->storage->mem, who)))
            return st;
    if ((st = clt__set_arg(ctx, k, 4, sizeof off, &off, who)) ||
        (st = clt__set_arg(ctx, k, 5, sizeof count, &count, who)) ||
        (st = clt__set_arg(ctx, k, 6, sizeof s, &s, who)))
        return st;
    return launch_full(ctx, k, count, who);
}

clt_status clt_adam_step(clt_tensor *param, const clt_tensor *grad, clt_tensor *m, clt_tensor *v,
                         const clt_adam_params *p, int64_t step)
{
    CLT_PUBLIC_CALL();
    return adam_run("clt_adam_step", 0, param, grad, m, v, p, step);
}

clt_status clt_adamw_step(clt_tensor *param, const clt_tensor *grad, clt_tensor *m, clt_tensor *v,
                          const clt_adam_params *p, int64_t step)
{
    CLT_PUBLIC_CALL();
    return adam_run("clt_adamw_step", 1, param, grad, m, v, p, step);
}

/* ------------------------------------------------------------------------------------ MSE */

static int same_memory(const clt_tensor *a, const clt_tensor *b)
{
    return a->storage == b->storage && a->offset == b->offset;
}

/* clt_mse_loss (dpred NULL) and clt_mse_loss_with_grad: one launch either way. */
static clt_status mse_run(const char *who, const clt_tensor *pred, const clt_tensor *target,
                          clt_tensor *out, clt_tensor *dpred, int with_grad)
{
    static const char *const names[4] = {"pred", "target", "out", "dpred"};
    const clt_tensor *t[4] = {pred, target, out, dpred};
    clt_status st = check_tensors(who, with_grad ? 4 : 3, t, names);
    if (st != CLT_SUCCESS)
        return st;
    clt_context *ctx = pred->ctx;
    if ((st = clt__ew_same_shape(who, target, "target", pred, "pred")) != CLT_SUCCESS)
        return st;
    if (with_grad) {
        if ((st = clt__ew_same_shape(who, dpred, "dpred", pred, "pred")) != CLT_SUCCESS)
            return st;
        for (int i = 0; i < 3; i++)
            if (clt__tensors_overlap(dpred, t[i]) && (i == 2 || !same_memory(dpred, t[i])))
                return clt__fail(ctx, CLT_ERR_ALIASING, "%s: dpred overlaps %s", who, names[i]);
    }
    if (out->numel != 1)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: out has %lld elements, expected 1", who,
                         (long long)out->numel);
    if (clt__tensors_overlap(out, pred) || clt__tensors_overlap(out, target))
        return clt__fail(ctx, CLT_ERR_ALIASING, "%s: out overlaps %s", who,
                         clt__tensors_overlap(out, pred) ? "pred" : "target");
    cl_kernel k;
    size_t wg;
    if ((st = train_kernel(ctx, "mse_loss", &k, &wg)) != CLT_SUCCESS)
        return st;
    /* without a gradient dpred is bound to pred and never written (sc.y = 0) */
    const clt_tensor *d = with_grad ? dpred : pred;
    cl_ulong4 off = {{elem_off(pred), elem_off(target), elem_off(out), elem_off(d)}};
    cl_ulong count = (cl_ulong)pred->numel;
    /* the mean of nothing is NaN; the gradient 2 / count as clt_mse_loss_backward rounds it */
    cl_float2 sc = {{count ? (float)(1.0 / (double)count) : NAN,
                     with_grad && count ? (float)(2.0 / (double)count) : 0.0f}};
    if ((st = clt__set_arg(ctx, k, 0, sizeof(cl_mem), &pred->storage->mem, who)) ||
        (st = clt__set_arg(ctx, k, 1, sizeof(cl_mem), &target->storage->mem, who)) ||
        (st = clt__set_arg(ctx, k, 2, sizeof(cl_mem), &out->storage->mem, who)) ||
        (st = clt__set_arg(ctx, k, 3, sizeof(cl_mem), &d->storage->mem, who)) ||
        (st = clt__set_arg(ctx, k, 4, sizeof off, &off, who)) ||
        (st = clt__set_arg(ctx, k, 5, sizeof count, &count, who)) ||
        (st = clt__set_arg(ctx, k, 6, sizeof sc, &sc, who)))
        return st;
    return clt__enqueue_kernel(ctx, k, 1, &wg, &wg, who);
}

clt_status clt_mse_loss(const clt_tensor *pred, const clt_tensor *target, clt_tensor *out)
{
    CLT_PUBLIC_CALL();
    return mse_run("clt_mse_loss", pred, target, out, NULL, 0);
}

clt_status clt_mse_loss_with_grad(const clt_tensor *pred, const clt_tensor *target, clt_tensor *out,
                                  clt_tensor *dpred)
{
    CLT_PUBLIC_CALL();
    return mse_run("clt_mse_loss_with_grad", pred, target, out, dpred, 1);
}

clt_status clt_mse_loss_backward(const clt_tensor *pred, const clt_tensor *target, clt_tensor *dpred)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_mse_loss_backward";
    static const char *const names[3] = {"pred", "target", "dpred"};
    const clt_tensor *t[3] = {pred, target, dpred};
    clt_status st = check_tensors(who, 3, t, names);
    if (st != CLT_SUCCESS)
        return st;
    if ((st = clt__ew_same_shape(who, target, "target", pred, "pred")) != CLT_SUCCESS ||
        (st = clt__ew_same_shape(who, dpred, "dpred", pred, "pred")) != CLT_SUCCESS)
        return st;
    float norm = pred->numel ? (float)(2.0 / (double)pred->numel) : 0.0f;
    clt_expr e;
    clt__ew_begin(&e);
    int a = clt_expr_input(&e, 0), b = clt_expr_input(&e, 1), s = clt_expr_scalar(&e, 0);
    int root = clt_expr_binary(&e, CLT_MUL, s, clt_expr_binary(&e, CLT_SUB, a, b));
    return clt__expr_eval_named(who, &e, root, 2, t, 1, &norm, dpred);
}

/* --------------------------------------------------------------------------- Fourier features */

clt_status clt_fourier_features(const clt_tensor *x, const clt_tensor *B, float scale, clt_tensor *out)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_fourier_features";
    static const char *const names[3] = {"x", "B", "out"};
    const clt_tensor *t[3] = {x, B, out};
    clt_status st = check_tensors(who, 3, t, names);
    if (st != CLT_SUCCESS)
        return st;
    clt_context *ctx = x->ctx;
    if (!isfinite(scale))
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: scale %g is not finite", who,
                         (double)scale);
    if (x->ndim != 2 || B->ndim != 2 || out->ndim != 2)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: x, B and out must be 2-D (got %d, %d, %d)",
                         who, x->ndim, B->ndim, out->ndim);
    int64_t n = x->shape[0], d = x->shape[1], f = B->shape[1];
    if (B->shape[0] != d || out->shape[0] != n || out->shape[1] != 2 * f)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE,
                         "%s: x [%lld, %lld] and B [%lld, %lld] need out [%lld, %lld], got [%lld, %lld]",
                         who, (long long)n, (long long)d, (long long)B->shape[0], (long long)f,
                         (long long)n, (long long)(2 * f), (long long)out->shape[0],
                         (long long)out->shape[1]);
    if (clt__tensors_overlap(out, x) || clt__tensors_overlap(out, B))
        return clt__fail(ctx, CLT_ERR_ALIASING, "%s: out overlaps %s", who,
                         clt__tensors_overlap(out, x) ? "x" : "B");
    if (out->numel == 0)
        return CLT_SUCCESS;
    cl_kernel k;
    if ((st = train_kernel(ctx, "fourier_features", &k, NULL)) != CLT_SUCCESS)
        return st;
    cl_ulong4 off = {{elem_off(x), elem_off(B), elem_off(out), 0}};
    cl_ulong4 dims = {{(cl_ulong)n, (cl_ulong)d, (cl_ulong)f, 0}};
    for (cl_uint i = 0; i < 3; i++)
        if ((st = clt__set_arg(ctx, k, i, sizeof(cl_mem), &t[i]->storage->mem, who)))
            return st;
    if ((st = clt__set_arg(ctx, k, 3, sizeof off, &off, who)) ||
        (st = clt__set_arg(ctx, k, 4, sizeof dims, &dims, who)) ||
        (st = clt__set_arg(ctx, k, 5, sizeof scale, &scale, who)))
        return st;
    return launch_full(ctx, k, (uint64_t)(n * f), who);
}
