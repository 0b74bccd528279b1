/* Shared argument checks of the f32 families (f32_args.h). */
#include "ops/common/f32_args.h"

#include "memory/memory.h"
#include "ops/common/launch.h"

clt_status clt__f32_check(const char *who, int n, const clt_tensor *const *t, const char *const *names,
                          unsigned optional_mask, unsigned non_f32_mask)
{
    const clt_context *ctx = NULL;
    for (int i = 0; i < n && !ctx; i++)
        if (t[i])
            ctx = t[i]->ctx;
    for (int i = 0; i < n; i++)
        if (!t[i] && !(optional_mask & (1u << i)))
            return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", who, names[i]);
    for (int i = 0; i < n; i++) {
        if (!t[i])
            continue;
        if (t[i]->ctx != t[0]->ctx)
            return clt__fail(t[0]->ctx, CLT_ERR_CONTEXT_MISMATCH,
                             "%s: %s and %s belong to different contexts", who, names[0], names[i]);
        if (!(non_f32_mask & (1u << i)) && t[i]->dtype != CLT_F32)
            return clt__fail(t[0]->ctx, CLT_ERR_INVALID_DTYPE, "%s: %s is %s, expected f32", who,
                             names[i], clt_dtype_name(t[i]->dtype));
    }
    return CLT_SUCCESS;
}

int clt__f32_first_overlap(int n, const clt_tensor *const *t, unsigned allowed_mask, int *i, int *j)
{
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++) {
            if (!t[a] || !t[b])
                continue;
            if ((allowed_mask & (1u << a)) && (allowed_mask & (1u << b)))
                continue;
            if (clt__tensors_overlap(t[a], t[b])) {
                *i = a, *j = b;
                return 1;
            }
        }
    return 0;
}

clt_status clt__f32_set_buffer(clt_context *ctx, cl_kernel k, cl_uint index, const clt_tensor *t,
                               const char *who)
{
    cl_mem mem;
    if (t)
        mem = t->storage->mem;
    else {
        clt_status st = clt__pool_empty_mem(ctx, &mem);
        if (st != CLT_SUCCESS)
            return st;
    }
    return clt__set_arg(ctx, k, index, sizeof(cl_mem), &mem, who);
}

int clt__f32_same_dims(const clt_tensor *a, const clt_tensor *b)
{
    if (a->ndim != b->ndim)
        return 0;
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d])
            return 0;
    return 1;
}

clt_status clt__f32_set_buffers(clt_context *ctx, cl_kernel k, const clt_tensor *const *t,
                                 const int *order, int n, const char *who)
{
    for (int a = 0; a < n; a++) {
        clt_status st = clt__f32_set_buffer(ctx, k, (cl_uint)a, t[order ? order[a] : a], who);
        if (st != CLT_SUCCESS)
            return st;
    }
    return CLT_SUCCESS;
}
