#include <stdio.h>

#include "ops/launch.h"

#define PREFERRED_GROUP 256
#define GROUPS_PER_COMPUTE_UNIT 16

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

clt_status clt__launch_1d(clt_context *ctx, cl_kernel kernel, uint64_t items, const char *who)
{
    if (items == 0)
        return CLT_SUCCESS;
    size_t kernel_max = 0;
    cl_int err = clGetKernelWorkGroupInfo(kernel, ctx->dev->entry->device, CL_KERNEL_WORK_GROUP_SIZE,
                                          sizeof kernel_max, &kernel_max, NULL);
    if (err != CL_SUCCESS)
        kernel_max = 1;
    size_t local = PREFERRED_GROUP;
    if (local > ctx->limits.max_work_group_size)
        local = (size_t)ctx->limits.max_work_group_size;
    if (local > kernel_max)
        local = kernel_max;
    if (local == 0)
        local = 1;
    uint64_t groups = (items + local - 1) / local;
    /* GPUs: a few waves of groups, each work item striding over the rest (fewer, fuller groups).
     * CPUs (POCL): one item per element, no stride. POCL runs a work-group as a loop vectorised
     * across its items, so consecutive items must touch consecutive elements; a grid-stride loop
     * would send each item through memory 'global size' elements apart, and bandwidth collapses. */
    if (ctx->dev->entry->info.type != CLT_DEVICE_CPU) {
        uint64_t cap = (uint64_t)ctx->dev->entry->info.compute_units * GROUPS_PER_COMPUTE_UNIT;
        if (cap == 0)
            cap = GROUPS_PER_COMPUTE_UNIT;
        if (groups > cap)
            groups = cap;
    }
    size_t global = (size_t)(groups * local);
    err = clEnqueueNDRangeKernel(ctx->queue, kernel, 1, NULL, &global, &local, 0, NULL, NULL);
    if (err != CL_SUCCESS) {
        char what[160];
        snprintf(what, sizeof what, "%s: clEnqueueNDRangeKernel(global %zu, local %zu)", who, global,
                 local);
        return clt__cl_fail(ctx, err, what);
    }
    return CLT_SUCCESS;
}
