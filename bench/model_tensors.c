/* See model_tensors.h. */
#include "model_tensors.h"

void model_tensors_init(model_tensors *r, clt_context *ctx)
{
    r->ctx = ctx;
    r->n_all = 0;
    r->status = CLT_SUCCESS;
}

static clt_tensor *keep(model_tensors *r, clt_status st, clt_tensor *t)
{
    if (st != CLT_SUCCESS || r->n_all == MODEL_TENSORS_MAX) {
        if (r->status == CLT_SUCCESS)
            r->status = st != CLT_SUCCESS ? st : CLT_ERR_OUT_OF_HOST_MEMORY;
        clt_tensor_free(t);
        return NULL;
    }
    r->all[r->n_all++] = t;
    return t;
}

clt_tensor *model_tensor(model_tensors *r, clt_dtype dt, int ndim, const int64_t *shape)
{
    clt_tensor *t = NULL;
    if (r->status != CLT_SUCCESS)
        return NULL;
    clt_status st = clt_tensor_create(r->ctx, dt, ndim, shape, &t);
    return keep(r, st, t);
}

clt_tensor *model_view(model_tensors *r, clt_tensor *base, size_t off, int ndim, const int64_t *shape)
{
    clt_tensor *t = NULL;
    if (r->status != CLT_SUCCESS)
        return NULL;
    clt_status st = clt_tensor_view(base, (int64_t)off, ndim, shape, &t);
    return keep(r, st, t);
}

void model_tensors_free(model_tensors *r)
{
    for (int i = r->n_all; i-- > 0;)
        clt_tensor_free(r->all[i]);
    r->n_all = 0;
}
