/* The norm family's shared build and launch helpers (norm_internal.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ops/common/launch.h"
#include "memory/memory.h"
#include "ops/norm/norm_internal.h"
#include "program/program.h"

#define NORM_WG 256u /* items per row: enough to hide latency on a GPU, one program per device */

/* Kernel `name` of the family's build for groups of wg items (-DWG=wg). */
static clt_status build_at(clt_context *ctx, const char *family, const char *name, size_t wg,
                           cl_kernel *k)
{
    char options[32];
    snprintf(options, sizeof options, "-DWG=%zu", wg);
    return clt__kernel_get(ctx, family, options, name, k);
}

clt_status clt__norm_kernel(clt_context *ctx, const char *family, const char *name,
                            cl_kernel *k, size_t *wg_out)
{
    /* CPU devices (POCL): one item per row / channel, no barriers; a work-group of 256 items and
     * its barriers cost ~20 us per row on POCL, which serialises the items of a group */
    size_t wg = clt__cpu_style(ctx) ? 1 : NORM_WG;
    while (wg > ctx->limits.max_work_group_size && wg > 1)
        wg >>= 1;
    while (wg > 1 && wg * 2 * sizeof(float) > ctx->limits.local_mem_budget)
        wg >>= 1;
    for (;;) {
        clt_status st = build_at(ctx, family, name, wg, k);
        if (st != CLT_SUCCESS)
            return st;
        if (clt__kernel_work_group_limit(ctx, *k) >= wg || wg == 1) {
            *wg_out = wg;
            return CLT_SUCCESS;
        }
        wg >>= 1; /* registers: this device runs fewer items of this kernel per group */
    }
}

clt_status clt__norm_kernel_at(clt_context *ctx, const char *family, const char *name, size_t wg,
                               cl_kernel *k)
{
    clt_status st = build_at(ctx, family, name, wg, k);
    if (st == CLT_SUCCESS && clt__kernel_work_group_limit(ctx, *k) < wg)
        *k = NULL;
    return st;
}

clt_status clt__norm_launch_groups(clt_context *ctx, cl_kernel k, uint64_t groups, size_t wg,
                                   const char *who)
{
    if (groups == 0)
        return CLT_SUCCESS;
    size_t global = (size_t)groups * wg;
    return clt__enqueue_kernel(ctx, k, 1, &global, &wg, who);
}

clt_status clt__norm_check_eps(clt_context *ctx, float eps, const char *who)
{
    if (!(eps > 0.0f) || !isfinite(eps))
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: eps %g must be finite and > 0", who,
                         (double)eps);
    return CLT_SUCCESS;
}

clt_status clt__norm_workspace(clt_context *ctx, size_t bytes, const char *who, cl_mem *ws)
{
    return clt__workspace_get_counted(ctx, NORM_WS_SLOT, NORM_COUNTERS * sizeof(cl_uint), bytes, who,
                                      ws);
}

uint64_t clt__norm_split_target(const clt_context *ctx)
{
    uint64_t cus = ctx->dev->entry->info.compute_units;
    const char *e = getenv("CLT_NORM_GROUPS_PER_CU"); /* A/B switch (and tests on few cores) */
    return (cus ? cus : 1) * (e && atoi(e) > 0 ? (uint64_t)atoi(e) : NORM_SPLIT_GROUPS_PER_CU);
}
