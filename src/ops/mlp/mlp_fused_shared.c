/* What both fused paths (mlp_fused.c on GPUs, mlp_cpu.c on CPU devices) share: the per-group
 * workspace and the first arguments of their training kernels, which take the same buffers in
 * the same order. */
#include "ops/common/launch.h"
#include "ops/mlp/mlp.h"
#include "tensor/tensor.h"

clt_status clt__mlp_ensure_groups(clt_mlp *mlp, int64_t groups, int64_t scratch_per_group)
{
    if (groups <= mlp->groups_cap)
        return CLT_SUCCESS;
    clt_tensor *s = NULL, *p = NULL, *l = NULL;
    int64_t ns = groups * scratch_per_group, np = groups * mlp->pstride;
    clt_status st = clt_tensor_create(mlp->ctx, CLT_F32, 1, &ns, &s);
    if (!st)
        st = clt_tensor_create(mlp->ctx, CLT_F32, 1, &np, &p);
    if (!st)
        st = clt_tensor_create(mlp->ctx, CLT_F32, 1, &groups, &l);
    if (st) {
        clt_tensor_free(s), clt_tensor_free(p), clt_tensor_free(l);
        return st;
    }
    clt_tensor_free(mlp->scratch), clt_tensor_free(mlp->partial), clt_tensor_free(mlp->loss_part);
    mlp->scratch = s, mlp->partial = p, mlp->loss_part = l;
    mlp->groups_cap = groups;
    return CLT_SUCCESS;
}

cl_ulong clt__mlp_elem_off(const clt_tensor *t) { return t->offset / sizeof(float); }

clt_status clt__mlp_train_buffers(clt_mlp *mlp, cl_kernel k, const clt_tensor *x,
                                  const clt_tensor *target, const char *who)
{
    const cl_mem mems[7] = {x->storage->mem,       mlp->B->storage->mem,       mlp->params->storage->mem,
                            target->storage->mem,  mlp->scratch->storage->mem, mlp->partial->storage->mem,
                            mlp->loss_part->storage->mem};
    clt_status st = CLT_SUCCESS;
    for (cl_uint i = 0; i < 7 && !st; i++)
        st = clt__set_arg(mlp->ctx, k, i, sizeof(cl_mem), &mems[i], who);
    return st;
}

cl_float2 clt__mlp_train_scales(const clt_mlp *mlp, int64_t n)
{
    double outs = (double)n * (double)mlp->width[mlp->d.layers];
    return (cl_float2){{mlp->d.fourier_scale, (float)(2.0 / outs)}};
}
