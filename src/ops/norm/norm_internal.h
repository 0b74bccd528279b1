/* What the norm family's files share: the row-kernel build and launches. Internal. */
#ifndef CLT_NORM_INTERNAL_H
#define CLT_NORM_INTERNAL_H

#include "ops/common/f32_args.h"

/* Kernel `name` of cl_kernels/norm/<family>.cl, built with -DWG=<the group size it runs with>: the
 * largest power of two <= 256 within the context's limits, the local memory budget (two floats per
 * item) and the kernel's own CL_KERNEL_WORK_GROUP_SIZE. */
clt_status clt__norm_kernel(clt_context *ctx, const char *family, const char *name,
                            cl_kernel *k, size_t *wg);

/* Enqueue `groups` work-groups of wg items (arguments already set). groups == 0 enqueues nothing. */
/* Kernel `name` of the build for exactly wg items (which must hold it: the split kernels exist in
 * builds of wg >= 64), or *k = NULL when the device runs fewer of its items per group (the caller
 * keeps its one-group-per-row/channel kernel). Builds no other group size. */
clt_status clt__norm_kernel_at(clt_context *ctx, const char *family, const char *name, size_t wg,
                               cl_kernel *k);

clt_status clt__norm_launch_groups(clt_context *ctx, cl_kernel k, uint64_t groups, size_t wg,
                                   const char *who);

/* Split statistics (row_norm.c dparams, batch_norm.c channel statistics): counters at the head of
 * workspace slot NORM_WS_SLOT, one per set of groups that merge their partials; must match
 * -DNORM_COUNTERS of norm.cl and batch_norm.cl (their default). */
#define NORM_COUNTERS 1024u
#define NORM_WS_SLOT 7
/* Values of a row each item of rownorm_forward keeps in registers (norm.cl RN_REG). */
#define NORM_RN_REG 8u
#define NORM_SPLIT_GROUPS_PER_CU 4u /* groups a split aims for per compute unit */

/* The split workspace: NORM_COUNTERS counters (zeroed when new), then `bytes` of partials. */
clt_status clt__norm_workspace(clt_context *ctx, size_t bytes, const char *who, cl_mem *ws);

/* Groups a split launch aims for: NORM_SPLIT_GROUPS_PER_CU per compute unit (the environment's
 * CLT_NORM_GROUPS_PER_CU instead, when a positive number: A/B runs, and tests on few cores). */
uint64_t clt__norm_split_target(const clt_context *ctx);

/* eps finite and > 0, else CLT_ERR_INVALID_ARGUMENT naming who. */
clt_status clt__norm_check_eps(clt_context *ctx, float eps, const char *who);

#endif
