/* What the loss family's files share: the kernel build, the number of groups and the workspace of
 * the scalar reductions (cl_kernels/loss/loss.cl explains the last-group-finishes sum). Internal. */
#ifndef CLT_LOSS_INTERNAL_H
#define CLT_LOSS_INTERNAL_H

#include "cltensor_loss.h"
#include "ops/common/f32_args.h"

#define CLT__LOSS_F_PROB 1u
#define CLT__LOSS_F_GRAD 2u
#define CLT__LOSS_F_SCALAR 4u
#define CLT__LOSS_F_MEAN 8u
#define CLT__LOSS_F_POSW 16u

/* Kernel `name` of loss.cl and its work-group size (a power of two <= 256 within the limits). */
clt_status clt__loss_kernel(clt_context *ctx, const char *name, cl_kernel *k, size_t *wg);

/* How many groups a launch over `units` (rows or groups' worth of elements) uses: at most a few per
 * compute unit, at least 1 (an empty scalar reduction still writes its result). */
uint64_t clt__loss_groups(const clt_context *ctx, uint64_t units);

/* Binds the reduction workspace (counter + `groups` partials; slot 5, zeroed when new) to argument
 * index of k when scalar, else the placeholder buffer. */
clt_status clt__loss_set_workspace(clt_context *ctx, cl_kernel k, cl_uint index, int scalar,
                                   uint64_t groups, const char *who);

/* A valid reduction, else CLT_ERR_INVALID_ARGUMENT naming who. */
clt_status clt__loss_check_reduction(clt_context *ctx, clt_reduction r, const char *who);

#endif
