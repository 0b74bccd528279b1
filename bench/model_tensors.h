/* The tensors of a model built from public calls only (model_gpt.c, model_cnn.c): each constructor
 * remembers its tensor, so the model frees them together, and the first failure, after which every
 * constructor does nothing and returns NULL (a model is built without a check after each call). */
#ifndef CLT_BENCH_MODEL_TENSORS_H
#define CLT_BENCH_MODEL_TENSORS_H

#include <stddef.h>

#include "cltensor.h"

#define MODEL_TENSORS_MAX 160

typedef struct model_tensors {
    clt_context *ctx;
    clt_tensor *all[MODEL_TENSORS_MAX];
    int n_all;
    clt_status status; /* the first failure; CLT_ERR_OUT_OF_HOST_MEMORY past MODEL_TENSORS_MAX */
} model_tensors;

void model_tensors_init(model_tensors *r, clt_context *ctx);
/* A new tensor of ctx, or NULL after a failure. */
clt_tensor *model_tensor(model_tensors *r, clt_dtype dt, int ndim, const int64_t *shape);
/* A view of base `off` elements in, or NULL after a failure. */
clt_tensor *model_view(model_tensors *r, clt_tensor *base, size_t off, int ndim, const int64_t *shape);
/* Frees every remembered tensor, newest first (views before their bases). */
void model_tensors_free(model_tensors *r);

#endif
