/* The fused paths' per-group workspace (mlp_fused.c, mlp_cpu.c): scratch, partial gradients and
 * loss parts for a grid of groups. */
#include "ops/mlp/mlp.h"
#include "tensor/tensor.h"

clt_status clt__mlp_ensure_groups(clt_mlp *mlp, int64_t groups, int64_t scratch_per_group)
{
    if (groups <= mlp->groups_cap)
        return CLT_SUCCESS;
    clt_tensor *s = NULL, *p = NULL, *l = NULL;
    int64_t ns = groups * scratch_per_group, np = groups * mlp->nparams;
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
