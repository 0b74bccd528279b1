/* clt_cross_entropy (include/cltensor_loss.h): checks, then one launch of ce_rows
 * (cl_kernels/loss/loss.cl). */
#include <math.h>

#include "ops/common/launch.h"
#include "ops/loss/loss_internal.h"

void clt_cross_entropy_params_init(clt_cross_entropy_params *p)
{
    if (!p)
        return;
    p->reduction = CLT_REDUCTION_MEAN;
    p->label_smoothing = 0.0f;
    p->ignore_index = -100;
}

/* target: i32 [rows] (the logits' shape without the last dim, or flat), or f32 of the logits' shape. */
static clt_status check_target(const clt_tensor *logits, const clt_tensor *target, uint64_t rows,
                               const char *who)
{
    if (target->dtype == CLT_F32) {
        if (!clt__f32_same_dims(target, logits))
            return clt__fail(logits->ctx, CLT_ERR_INVALID_SHAPE,
                             "%s: probability targets (f32) must have the logits' shape", who);
        return CLT_SUCCESS;
    }
    if (target->dtype != CLT_I32)
        return clt__fail(logits->ctx, CLT_ERR_INVALID_DTYPE,
                         "%s: target is %s, expected i32 class indices or f32 probabilities", who,
                         clt_dtype_name(target->dtype));
    int lead_ok = target->ndim == logits->ndim - 1;
    for (int d = 0; lead_ok && d < target->ndim; d++)
        lead_ok = target->shape[d] == logits->shape[d];
    int flat_ok = target->ndim == 1 && (uint64_t)target->shape[0] == rows;
    if (!lead_ok && !flat_ok)
        return clt__fail(logits->ctx, CLT_ERR_INVALID_SHAPE,
                         "%s: class targets (i32) need the logits' shape without the last dim (%llu rows)",
                         who, (unsigned long long)rows);
    return CLT_SUCCESS;
}

clt_status clt_cross_entropy(const clt_tensor *logits, const clt_tensor *target,
                             const clt_cross_entropy_params *p, clt_tensor *loss, clt_tensor *dlogits)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_cross_entropy";
    static const char *const names[4] = {"logits", "target", "loss", "dlogits"};
    const clt_tensor *t[4] = {logits, target, loss, dlogits};
    clt_status st = clt__f32_check(who, 4, t, names, 0x8u, 0x2u);
    if (st != CLT_SUCCESS)
        return st;
    clt_context *ctx = logits->ctx;
    if (!p)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: p is NULL", who);
    if ((st = clt__loss_check_reduction(ctx, p->reduction, who)) != CLT_SUCCESS)
        return st;
    if (!(p->label_smoothing >= 0.0f && p->label_smoothing <= 1.0f))
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: label_smoothing %g outside [0, 1]", who,
                         (double)p->label_smoothing);
    if (logits->ndim < 1 || logits->shape[logits->ndim - 1] == 0)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: logits need a last dim of at least 1 class",
                         who);
    uint64_t K = (uint64_t)logits->shape[logits->ndim - 1], R = (uint64_t)logits->numel / K;
    if ((st = check_target(logits, target, R, who)) != CLT_SUCCESS)
        return st;
    int scalar = p->reduction != CLT_REDUCTION_NONE;
    if ((uint64_t)loss->numel != (scalar ? 1u : R))
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: loss has %lld elements, expected %llu", who,
                         (long long)loss->numel, (unsigned long long)(scalar ? 1u : R));
    if (dlogits && !clt__f32_same_dims(dlogits, logits))
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: dlogits' shape differs from the logits'", who);
    int i, j;
    if (clt__f32_first_overlap(4, t, 0x3u, &i, &j))
        return clt__fail(ctx, CLT_ERR_ALIASING, "%s: %s overlaps %s", who, names[i], names[j]);
    if (R == 0 && !scalar)
        return CLT_SUCCESS;
    cl_kernel k;
    size_t wg;
    if ((st = clt__loss_kernel(ctx, "ce_rows", &k, &wg)) != CLT_SUCCESS)
        return st;
    uint64_t groups = clt__loss_groups(ctx, R);
    int prob = target->dtype == CLT_F32;
    cl_uint flags = (prob ? CLT__LOSS_F_PROB : 0) | (dlogits ? CLT__LOSS_F_GRAD : 0) |
                    (scalar ? CLT__LOSS_F_SCALAR : 0) |
                    (p->reduction == CLT_REDUCTION_MEAN ? CLT__LOSS_F_MEAN : 0);
    cl_ulong4 off = {{clt__f32_off(logits), clt__f32_off(target), clt__f32_off(loss), clt__f32_off(dlogits)}};
    cl_ulong2 dims = {{R, K}};
    cl_int ignore = p->ignore_index;
    float smoothing = p->label_smoothing;
    if ((st = clt__f32_set_buffer(ctx, k, 0, logits, who)) ||
        (st = clt__f32_set_buffer(ctx, k, 1, prob ? NULL : target, who)) ||
        (st = clt__f32_set_buffer(ctx, k, 2, prob ? target : NULL, who)) ||
        (st = clt__f32_set_buffer(ctx, k, 3, loss, who)) ||
        (st = clt__f32_set_buffer(ctx, k, 4, dlogits, who)) ||
        (st = clt__loss_set_workspace(ctx, k, 5, scalar, groups, who)) ||
        (st = clt__set_arg(ctx, k, 6, sizeof off, &off, who)) ||
        (st = clt__set_arg(ctx, k, 7, sizeof dims, &dims, who)) ||
        (st = clt__set_arg(ctx, k, 8, sizeof smoothing, &smoothing, who)) ||
        (st = clt__set_arg(ctx, k, 9, sizeof ignore, &ignore, who)) ||
        (st = clt__set_arg(ctx, k, 10, sizeof flags, &flags, who)))
        return st;
    size_t global = (size_t)groups * wg;
    return clt__enqueue_kernel(ctx, k, 1, &global, &wg, who);
}
