/* What the train family's files share: the Adam checks and kernel scalars (train.c), used by the
 * single-tensor and the multi-tensor steps alike. Internal. */
#ifndef CLT_TRAIN_INTERNAL_H
#define CLT_TRAIN_INTERNAL_H

#include "cltensor_train.h"
#include "runtime/runtime.h"

/* p not NULL, step >= 1, every hyper-parameter in range; else CLT_ERR_INVALID_ARGUMENT naming who. */
clt_status clt__adam_check(clt_context *ctx, const clt_adam_params *p, int64_t step, const char *who);
/* The kernels' float8 (cl_kernels/train/train.cl's adam_step, multi_tensor.cl op 0). */
cl_float8 clt__adam_scalars(const clt_adam_params *p, int64_t step, int decoupled);

#endif
