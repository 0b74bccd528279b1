/* clt_bce_with_logits, clt_l1_loss, clt_smooth_l1_loss (include/cltensor_loss.h): checks, then one
 * launch of pointwise_loss (cl_kernels/loss/loss.cl). */
#include <math.h>

#include "ops/common/launch.h"
#include "ops/loss/loss_internal.h"

#define MODE_BCE 0u
#define MODE_L1 1u
#define MODE_SMOOTH_L1 2u

static clt_status pointwise(const char *who, cl_uint mode, const clt_tensor *x, const clt_tensor *y,
                            const clt_tensor *pos_weight, float beta, clt_reduction reduction,
                            clt_tensor *loss, clt_tensor *dx)
{
    static const char *const names[5] = {"x", "y", "pos_weight", "loss", "dx"};
    const clt_tensor *t[5] = {x, y, pos_weight, loss, dx};
    clt_status st = clt__f32_check(who, 5, t, names, 0x14u, 0);
    if (st != CLT_SUCCESS)
        return st;
    clt_context *ctx = x->ctx;
    if ((st = clt__loss_check_reduction(ctx, reduction, who)) != CLT_SUCCESS)
        return st;
    if (!clt__f32_same_dims(y, x))
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: y's shape differs from x's", who);
    if (dx && !clt__f32_same_dims(dx, x))
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: dx's shape differs from x's", who);
    int scalar = reduction != CLT_REDUCTION_NONE;
    if (scalar ? loss->numel != 1 : !clt__f32_same_dims(loss, x))
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: loss must have %s", who,
                         scalar ? "one element" : "x's shape (reduction NONE)");
    uint64_t D = x->ndim ? (uint64_t)x->shape[x->ndim - 1] : 1;
    if (pos_weight && (uint64_t)pos_weight->numel != D)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: pos_weight has %lld elements, expected %llu (x's last dim)",
                         who, (long long)pos_weight->numel, (unsigned long long)D);
    int i, j;
    if (clt__f32_first_overlap(5, t, 0x7u, &i, &j))
        return clt__fail(ctx, CLT_ERR_ALIASING, "%s: %s overlaps %s", who, names[i], names[j]);
    uint64_t n = (uint64_t)x->numel;
    if (n == 0 && !scalar)
        return CLT_SUCCESS;
    cl_kernel k;
    size_t wg;
    if ((st = clt__loss_kernel(ctx, "pointwise_loss", &k, &wg)) != CLT_SUCCESS)
        return st;
    uint64_t groups = clt__loss_groups(ctx, (n + wg - 1) / wg);
    int mean = reduction == CLT_REDUCTION_MEAN;
    cl_uint flags = (dx ? CLT__LOSS_F_GRAD : 0) | (scalar ? CLT__LOSS_F_SCALAR : 0) |
                    (mean ? CLT__LOSS_F_MEAN : 0) | (pos_weight ? CLT__LOSS_F_POSW : 0);
    /* the mean of nothing is NaN, as torch's */
    cl_float4 sc = {{beta, mean ? (float)(1.0 / (double)(n ? n : 1)) : 1.0f,
                     mean ? (n ? (float)(1.0 / (double)n) : NAN) : 1.0f, 0.0f}};
    cl_ulong8 off = {{clt__f32_off(x), clt__f32_off(y), clt__f32_off(pos_weight), clt__f32_off(loss),
                      clt__f32_off(dx), 0, 0, 0}};
    cl_ulong2 dims = {{n, D ? D : 1}};
    if ((st = clt__f32_set_buffers(ctx, k, t, NULL, 5, who)) ||
        (st = clt__loss_set_workspace(ctx, k, 5, scalar, groups, who)) ||
        (st = clt__set_arg(ctx, k, 6, sizeof off, &off, who)) ||
        (st = clt__set_arg(ctx, k, 7, sizeof dims, &dims, who)) ||
        (st = clt__set_arg(ctx, k, 8, sizeof sc, &sc, who)) ||
        (st = clt__set_arg(ctx, k, 9, sizeof mode, &mode, who)) ||
        (st = clt__set_arg(ctx, k, 10, sizeof flags, &flags, who)))
        return st;
    size_t global = (size_t)groups * wg;
    return clt__enqueue_kernel(ctx, k, 1, &global, &wg, who);
}

clt_status clt_bce_with_logits(const clt_tensor *x, const clt_tensor *y, const clt_tensor *pos_weight,
                               clt_reduction reduction, clt_tensor *loss, clt_tensor *dx)
{
    CLT_PUBLIC_CALL();
    return pointwise("clt_bce_with_logits", MODE_BCE, x, y, pos_weight, 0.0f, reduction, loss, dx);
}

clt_status clt_l1_loss(const clt_tensor *x, const clt_tensor *y, clt_reduction reduction,
                       clt_tensor *loss, clt_tensor *dx)
{
    CLT_PUBLIC_CALL();
    return pointwise("clt_l1_loss", MODE_L1, x, y, NULL, 0.0f, reduction, loss, dx);
}

clt_status clt_smooth_l1_loss(const clt_tensor *x, const clt_tensor *y, float beta,
                              clt_reduction reduction, clt_tensor *loss, clt_tensor *dx)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_smooth_l1_loss";
    if (!(beta >= 0.0f) || !isfinite(beta)) {
        clt_context *ctx = x ? x->ctx : y ? y->ctx : NULL;
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: beta %g must be finite and >= 0", who,
                         (double)beta);
    }
    return pointwise(who, beta == 0.0f ? MODE_L1 : MODE_SMOOTH_L1, x, y, NULL, beta, reduction, loss, dx);
}
