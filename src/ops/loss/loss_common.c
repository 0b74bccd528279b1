/* The loss family's shared helpers (loss_internal.h). */
#include <stdio.h>

#include "memory/memory.h"
#include "ops/common/launch.h"
#include "ops/loss/loss_internal.h"
#include "program/program.h"

#define LOSS_WG 256u
#define LOSS_WS_SLOT 5       /* memory.h: slot 5 is the losses' (and clip_grad_norm's) */
#define LOSS_WS_HEAD 4       /* uints before the partials (loss.cl's WS_HEAD) */
#define GROUPS_PER_CU 8u
#define MAX_GROUPS 1024u

clt_status clt__loss_kernel(clt_context *ctx, const char *name, cl_kernel *k, size_t *wg_out)
{
    /* CPU devices (POCL): one item per row / channel, no barriers; a work-group of 256 items and
     * its barriers cost ~20 us per row on POCL, which serialises the items of a group */
    size_t wg = clt__cpu_style(ctx) ? 1 : LOSS_WG;
    while (wg > ctx->limits.max_work_group_size && wg > 1)
        wg >>= 1;
    while (wg > 1 && wg * 6 * sizeof(float) > ctx->limits.local_mem_budget)
        wg >>= 1;
    for (;;) {
        char options[32];
        snprintf(options, sizeof options, "-DWG=%zu", wg);
        clt_status st = clt__kernel_get(ctx, "loss", options, name, k);
        if (st != CLT_SUCCESS)
            return st;
        if (clt__kernel_work_group_limit(ctx, *k) >= wg || wg == 1) {
            *wg_out = wg;
            return CLT_SUCCESS;
        }
        wg >>= 1;
    }
}

uint64_t clt__loss_groups(const clt_context *ctx, uint64_t units)
{
    uint64_t cap = (uint64_t)ctx->dev->entry->info.compute_units * GROUPS_PER_CU;
    if (cap < 1)
        cap = 1;
    if (cap > MAX_GROUPS)
        cap = MAX_GROUPS;
    if (units < 1)
        units = 1;
    return units < cap ? units : cap;
}

clt_status clt__loss_set_workspace(clt_context *ctx, cl_kernel k, cl_uint index, int scalar,
                                   uint64_t groups, const char *who)
{
    cl_mem ws;
    clt_status st;
    if (scalar)
        st = clt__workspace_get_counted(ctx, LOSS_WS_SLOT, LOSS_WS_HEAD * sizeof(cl_uint),
                                        (size_t)groups * sizeof(float), who, &ws);
    else
        st = clt__pool_empty_mem(ctx, &ws);
    if (st != CLT_SUCCESS)
        return st;
    return clt__set_arg(ctx, k, index, sizeof ws, &ws, who);
}

clt_status clt__loss_check_reduction(clt_context *ctx, clt_reduction r, const char *who)
{
    if (r != CLT_REDUCTION_NONE && r != CLT_REDUCTION_MEAN && r != CLT_REDUCTION_SUM)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: reduction %d is not NONE, MEAN or SUM", who,
                         (int)r);
    return CLT_SUCCESS;
}
