/* Tensor-core GEMM on NVIDIA (mma.sync through inline PTX, cl_kernels/gemm/gemm_mma.cl): the entry
 * the dispatcher tries first for TF32 / 3xTF32 math and f16 / bf16 inputs, and the capability probe.
 * This version has no kernel yet: every problem is refused, and the dispatcher runs the fp32
 * kernels (and says so in the profiler's implementation name). */
#include "ops/gemm/gemm.h"

#include <stdlib.h>
#include <string.h>

/* cl_nv_device_attribute_query (cl_ext.h names them; spelled out so older headers build too). */
#define NV_COMPUTE_CAPABILITY_MAJOR 0x4000
#define NV_COMPUTE_CAPABILITY_MINOR 0x4001

int clt__device_has_tensor_cores(const clt_context *ctx)
{
    const clt_device_info *d = &ctx->dev->entry->info;
    /* The gfx902 profile stands for a device without them, whatever runs underneath. */
    if (d->vendor != CLT_VENDOR_NVIDIA || d->type != CLT_DEVICE_GPU ||
        strcmp(ctx->limits.profile, "native") != 0)
        return 0;
    cl_device_id dev = ctx->dev->entry->device;
    size_t len = 0;
    if (clGetDeviceInfo(dev, CL_DEVICE_EXTENSIONS, 0, NULL, &len) != CL_SUCCESS || len == 0)
        return 0;
    char *ext = calloc(len + 1, 1);
    int has_query = ext && clGetDeviceInfo(dev, CL_DEVICE_EXTENSIONS, len, ext, NULL) == CL_SUCCESS &&
                    strstr(ext, "cl_nv_device_attribute_query");
    free(ext);
    if (!has_query)
        return 0;
    cl_uint major = 0, minor = 0;
    if (clGetDeviceInfo(dev, NV_COMPUTE_CAPABILITY_MAJOR, sizeof major, &major, NULL) != CL_SUCCESS ||
        clGetDeviceInfo(dev, NV_COMPUTE_CAPABILITY_MINOR, sizeof minor, &minor, NULL) != CL_SUCCESS)
        return 0;
    return major >= 8; /* Ampere and later: mma.sync tf32 / f16 / bf16 with f32 accumulation */
}

int clt_device_has_tensor_cores(const clt_context *ctx)
{
    return ctx ? clt__device_has_tensor_cores(ctx) : 0;
}

clt_status clt__gemm_mma(clt_context *ctx, const clt__gemm_problem *p, const char *who)
{
    (void)p;
    if (!clt__device_has_tensor_cores(ctx))
        return clt__fail(ctx, CLT_ERR_UNSUPPORTED, "%s: the device has no tensor cores", who);
    return clt__fail(ctx, CLT_ERR_UNSUPPORTED, "%s: no tensor-core GEMM kernel in this build", who);
}
