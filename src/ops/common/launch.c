#include <stdio.h>
#include <string.h>

#include "ops/common/launch.h"
#include "profile/profile.h"

#define PREFERRED_GROUP 256
/* GPUs: a grid of up to this many groups per compute unit (past it, items stride over the rest).
 * Large enough that streaming ops run one vector per item: on the H200, 16M-element add/relu took
 * 50.2/36.4 us with 16 groups per unit (a grid-stride loop of ~8 trips) and 49.4/34.6 us with a
 * full grid (PyTorch: 49.9/35.2). */
#define GROUPS_PER_COMPUTE_UNIT 1024

clt_status clt__set_arg(clt_context *ctx, cl_kernel kernel, cl_uint index, size_t size,
                        const void *value, const char *who)
{
    cl_int err = clSetKernelArg(kernel, index, size, value);
    if (err == CL_SUCCESS)
        return CLT_SUCCESS;
    char what[160];
    snprintf(what, sizeof what, "%s: clSetKernelArg(%u)", who, (unsigned)index);
    return clt__cl_fail(ctx, err, what);
}

size_t clt__kernel_work_group_limit(clt_context *ctx, cl_kernel kernel)
{
    size_t slot = ((uintptr_t)kernel >> 4) % (sizeof ctx->wg_cache / sizeof ctx->wg_cache[0]);
    if (ctx->wg_cache[slot].kernel == kernel)
        return ctx->wg_cache[slot].max_work_group;
    size_t limit = 0;
    if (clGetKernelWorkGroupInfo(kernel, ctx->dev->entry->device, CL_KERNEL_WORK_GROUP_SIZE,
                                 sizeof limit, &limit, NULL) != CL_SUCCESS || limit == 0)
        return 1; /* not cached: ask again next time */
    ctx->wg_cache[slot].kernel = kernel;
    ctx->wg_cache[slot].max_work_group = limit;
    return limit;
}

int clt__kernel_runs_group(clt_context *ctx, cl_kernel kernel, size_t group)
{
    size_t reqd[3] = {0, 0, 0};
    if (clGetKernelWorkGroupInfo(kernel, ctx->dev->entry->device, CL_KERNEL_COMPILE_WORK_GROUP_SIZE,
                                 sizeof reqd, reqd, NULL) == CL_SUCCESS &&
        reqd[0] == group && reqd[1] == 1 && reqd[2] == 1)
        return 1;
    return clt__kernel_work_group_limit(ctx, kernel) >= group;
}

size_t clt__group_limit(clt_context *ctx, cl_kernel kernel)
{
    size_t lim = clt__kernel_work_group_limit(ctx, kernel);
    return lim > ctx->limits.max_work_group_size ? (size_t)ctx->limits.max_work_group_size : lim;
}

size_t clt__fit_local(clt_context *ctx, cl_kernel kernel, size_t want)
{
    size_t lim = clt__group_limit(ctx, kernel), l = want < lim ? want : lim;
    return l ? l : 1;
}

size_t clt__fit_local_halving(clt_context *ctx, cl_kernel kernel, size_t want)
{
    size_t lim = clt__group_limit(ctx, kernel);
    while (want > 1 && want > lim)
        want /= 2;
    return want;
}

clt_status clt__enqueue_kernel(clt_context *ctx, cl_kernel kernel, cl_uint dims, const size_t *global,
                               const size_t *local, const char *who)
{
    if (ctx->rehearsal)
        return CLT_SUCCESS;
    cl_int err = clEnqueueNDRangeKernel(ctx->queue, kernel, dims, NULL, global, local, 0, NULL,
                                        clt__prof_event(ctx));
    if (err == CL_SUCCESS) {
        if (ctx->impl_note)
            clt__prof_commit(ctx, who, ctx->impl_note, CLT_PROFILE_KERNEL, 0);
        else
            clt__prof_commit_kernel(ctx, who, kernel);
        return CLT_SUCCESS;
    }
    char what[256], g[64] = "", l[64] = "";
    for (cl_uint d = 0; d < dims && d < 3; d++) {
        size_t gl = strlen(g), ll = strlen(l);
        snprintf(g + gl, sizeof g - gl, "%s%zu", d ? "x" : "", global[d]);
        if (local)
            snprintf(l + ll, sizeof l - ll, "%s%zu", d ? "x" : "", local[d]);
    }
    snprintf(what, sizeof what, "%s: clEnqueueNDRangeKernel(global %s, local %s)", who, g,
             local ? l : "driver's");
    return clt__cl_fail(ctx, err, what);
}

int clt__cpu_style(const clt_context *ctx)
{
    return ctx->dev->entry->info.type == CLT_DEVICE_CPU && strcmp(ctx->limits.profile, "gfx902") != 0;
}

clt_status clt__launch_1d(clt_context *ctx, cl_kernel kernel, uint64_t items, const char *who)
{
    return clt__launch_1d_group(ctx, kernel, items, PREFERRED_GROUP, who);
}

static clt_status launch_1d_at_most(clt_context *ctx, cl_kernel kernel, uint64_t items,
                                   size_t preferred_local, uint64_t groups_per_cu, const char *who);

clt_status clt__launch_1d_group(clt_context *ctx, cl_kernel kernel, uint64_t items,
                                size_t preferred_local, const char *who)
{
    return launch_1d_at_most(ctx, kernel, items, preferred_local, GROUPS_PER_COMPUTE_UNIT, who);
}

clt_status clt__launch_1d_capped(clt_context *ctx, cl_kernel kernel, uint64_t items,
                                 uint64_t groups_per_cu, const char *who)
{
    return launch_1d_at_most(ctx, kernel, items, PREFERRED_GROUP,
                             groups_per_cu ? groups_per_cu : GROUPS_PER_COMPUTE_UNIT, who);
}

void clt__launch_1d_grid(const clt_context *ctx, cl_kernel kernel, uint64_t items, size_t preferred_local,
                         uint64_t groups_per_cu, size_t *global, size_t *local)
{
    *local = clt__fit_local((clt_context *)ctx, kernel, preferred_local);
    uint64_t groups = (items + *local - 1) / *local;
    /* GPUs: a few waves of groups, each work item striding over the rest (fewer, fuller groups).
     * CPUs (POCL): one item per element, no stride. POCL runs a work-group as a loop vectorised
     * across its items, so consecutive items must touch consecutive elements; a grid-stride loop
     * would send each item through memory 'global size' elements apart, and bandwidth collapses. */
    if (ctx->dev->entry->info.type != CLT_DEVICE_CPU) {
        uint64_t cap = (uint64_t)ctx->dev->entry->info.compute_units * groups_per_cu;
        if (cap == 0)
            cap = groups_per_cu;
        if (groups > cap)
            groups = cap;
    }
    *global = (size_t)(groups * *local);
}

static clt_status launch_1d_at_most(clt_context *ctx, cl_kernel kernel, uint64_t items,
                                   size_t preferred_local, uint64_t groups_per_cu, const char *who)
{
    if (items == 0)
        return CLT_SUCCESS;
    size_t global, local;
    clt__launch_1d_grid(ctx, kernel, items, preferred_local, groups_per_cu, &global, &local);
    return clt__enqueue_kernel(ctx, kernel, 1, &global, &local, who);
}

clt_status clt__rehearse_then_run(clt_context *ctx, clt__stages_fn stages, const void *arg,
                                  const char *who)
{
    int outer = ctx->rehearsal;
    ctx->rehearsal = 1;
    clt_status st = stages(ctx, arg, who);
    ctx->rehearsal = outer;
    return st != CLT_SUCCESS || outer ? st : stages(ctx, arg, who);
}
