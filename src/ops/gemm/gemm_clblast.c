/* The CLBlast implementation of a validated GEMM problem: CLBlastSgemm or
 * CLBlastSgemmStridedBatched (row-major, on the context's queue, no event), then our epilogue as
 * one extra launch when the problem has one. The profiler gets the routine's event (CLBlast's last
 * kernel). k = 0 (which CLBlast rejects) is the epilogue pass
 * alone: C = act(beta * C + bias) + residual. */
#include <clblast_c.h>

#include "ops/gemm/gemm.h"
#include "ops/gemm/gemm_epilogue.h"
#include "profile/profile.h"

static const char *status_name(CLBlastStatusCode s)
{
    switch (s) {
#define N(x) case CLBlast##x: return "CLBlast" #x;
    N(Success) N(OpenCLCompilerNotAvailable) N(TempBufferAllocFailure) N(OpenCLOutOfResources)
    N(OpenCLOutOfHostMemory) N(OpenCLBuildProgramFailure) N(InvalidValue) N(InvalidCommandQueue)
    N(InvalidMemObject) N(InvalidBinary) N(InvalidBuildOptions) N(InvalidProgram)
    N(InvalidProgramExecutable) N(InvalidKernelName) N(InvalidKernelDefinition) N(InvalidKernel)
    N(InvalidArgIndex) N(InvalidArgValue) N(InvalidArgSize) N(InvalidKernelArgs)
    N(InvalidLocalNumDimensions) N(InvalidLocalThreadsTotal) N(InvalidLocalThreadsDim)
    N(InvalidGlobalOffset) N(InvalidEventWaitList) N(InvalidEvent) N(InvalidOperation)
    N(InvalidBufferSize) N(InvalidGlobalWorkSize) N(NotImplemented) N(InvalidMatrixA)
    N(InvalidMatrixB) N(InvalidMatrixC) N(InvalidVectorX) N(InvalidVectorY) N(InvalidDimension)
    N(InvalidLeadDimA) N(InvalidLeadDimB) N(InvalidLeadDimC) N(InvalidIncrementX)
    N(InvalidIncrementY) N(InsufficientMemoryA) N(InsufficientMemoryB) N(InsufficientMemoryC)
    N(InsufficientMemoryX) N(InsufficientMemoryY) N(InsufficientMemoryTemp) N(InvalidBatchCount)
    N(InvalidOverrideKernel) N(MissingOverrideParameter) N(InvalidLocalMemUsage)
    N(NoHalfPrecision) N(NoDoublePrecision) N(InvalidVectorScalar) N(InsufficientMemoryScalar)
    N(DatabaseError) N(UnknownError) N(UnexpectedError)
#undef N
    }
    return "CLBlast status";
}

/* Memory shortage keeps its meaning; CLBlast refusing the problem or the device (it cannot build,
 * has no parameters, disagrees with our already checked sizes) is "unsupported", so the dispatcher
 * falls back to our kernels; anything else is an OpenCL failure. */
static clt_status to_status(CLBlastStatusCode s)
{
    switch (s) {
    case CLBlastTempBufferAllocFailure:
    case CLBlastOpenCLOutOfResources: return CLT_ERR_OUT_OF_DEVICE_MEMORY;
    case CLBlastOpenCLOutOfHostMemory: return CLT_ERR_OUT_OF_HOST_MEMORY;
    case CLBlastOpenCLCompilerNotAvailable:
    case CLBlastOpenCLBuildProgramFailure:
    case CLBlastInvalidBinary:
    case CLBlastInvalidBuildOptions:
    case CLBlastInvalidProgram:
    case CLBlastInvalidProgramExecutable:
    case CLBlastInvalidLocalThreadsTotal:
    case CLBlastInvalidLocalThreadsDim:
    case CLBlastNotImplemented:
    case CLBlastInvalidDimension:
    case CLBlastInvalidLeadDimA:
    case CLBlastInvalidLeadDimB:
    case CLBlastInvalidLeadDimC:
    case CLBlastInsufficientMemoryA:
    case CLBlastInsufficientMemoryB:
    case CLBlastInsufficientMemoryC:
    case CLBlastInvalidBatchCount:
    case CLBlastInvalidLocalMemUsage:
    case CLBlastDatabaseError: return CLT_ERR_UNSUPPORTED;
    default: return CLT_ERR_OPENCL;
    }
}

static CLBlastTranspose trans(clt_transpose t)
{
    return t == CLT_TRANS ? CLBlastTransposeYes : CLBlastTransposeNo;
}

clt_status clt__gemm_clblast(clt_context *ctx, const clt__gemm_problem *p, const char *who)
{
    clt__gemm_problem no_product;
    if (clt__gemm_alpha_zero(p, &no_product)) /* BLAS: alpha = 0 reads neither A nor B */
        p = &no_product;
    if (p->a_kseg > 0 && p->a_kseg < p->k)
        return clt__fail(ctx, CLT_ERR_UNSUPPORTED, "%s: CLBlast takes no k segments of A", who);
    if (p->k == 0)
        return clt__gemm_epilogue_run(ctx, p, p->beta != 0.0f, p->beta, who);
    if (ctx->rehearsal) /* CLBlast cannot build without running; its epilogue pass can */
        return clt__gemm_epilogue_run(ctx, p, 1, 1.0f, who);
    CLBlastStatusCode s;
    const char *routine, *impl;
    if (p->batch == 1) {
        routine = "CLBlastSgemm";
        impl = "clblast:sgemm";
        s = CLBlastSgemm(CLBlastLayoutRowMajor, trans(p->ta), trans(p->tb), (size_t)p->m,
                         (size_t)p->n, (size_t)p->k, p->alpha, p->a, p->a_off, (size_t)p->lda, p->b,
                         p->b_off, (size_t)p->ldb, p->beta, p->c, p->c_off, (size_t)p->ldc,
                         &ctx->queue, clt__prof_event(ctx));
    } else {
        routine = "CLBlastSgemmStridedBatched";
        impl = "clblast:sgemm_strided_batched";
        s = CLBlastSgemmStridedBatched(
            CLBlastLayoutRowMajor, trans(p->ta), trans(p->tb), (size_t)p->m, (size_t)p->n,
            (size_t)p->k, p->alpha, p->a, p->a_off, (size_t)p->lda, (size_t)p->a_stride, p->b,
            p->b_off, (size_t)p->ldb, (size_t)p->b_stride, p->beta, p->c, p->c_off, (size_t)p->ldc,
            (size_t)p->c_stride, (size_t)p->batch, &ctx->queue, clt__prof_event(ctx));
    }
    clt__prof_commit(ctx, who, impl, CLT_PROFILE_KERNEL, 0);
    if (s != CLBlastSuccess)
        return clt__fail(ctx, to_status(s), "%s: %s (m %lld, n %lld, k %lld, batch %lld) failed: %s (%d)",
                         who, routine, (long long)p->m, (long long)p->n, (long long)p->k,
                         (long long)p->batch, status_name(s), (int)s);
    return clt__gemm_epilogue_run(ctx, p, 1, 1.0f, who);
}
