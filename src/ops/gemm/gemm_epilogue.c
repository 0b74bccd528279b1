/* Host side of the separate GEMM epilogue pass (see gemm_epilogue.h, cl_kernels/gemm/gemm_epilogue.cl). */
#include "ops/gemm/gemm_epilogue.h"

#include <stdio.h>

#include "ops/common/launch.h"
#include "program/program.h"

#define GROUPS_PER_COMPUTE_UNIT 16

/* EPI_* codes of cl_kernels/gemm/gemm_epilogue.cl. */
/* The activation's device function, "" for identity, NULL when the epilogue cannot fuse it. */
const char *clt__epilogue_act_name(clt_unary_op op)
{
    switch (op) {
    case CLT_IDENTITY: return "";
    case CLT_RELU: return "clt_act_relu";
    case CLT_GELU_ERF: return "clt_act_gelu_erf";
    case CLT_GELU_TANH: return "clt_act_gelu_tanh";
    case CLT_TANH: return "clt_act_tanh";
    case CLT_SIGMOID: return "clt_act_sigmoid";
    case CLT_SILU: return "clt_act_silu";
    default: return NULL;
    }
}

static unsigned act_code(clt_unary_op act)
{
    switch (act) {
    case CLT_RELU: return 1;
    case CLT_GELU_ERF: return 2;
    case CLT_GELU_TANH: return 3;
    case CLT_TANH: return 4;
    case CLT_SIGMOID: return 5;
    case CLT_SILU: return 6;
    default: return 0; /* identity; validation admits no other */
    }
}

int clt__gemm_has_epilogue(const clt__gemm_problem *p)
{
    return p->bias != NULL || p->act != CLT_IDENTITY || p->residual != NULL;
}

/* Columns across dimension 0, rows across dimension 1. GPUs: at most a few groups per compute
 * unit (the kernel strides over the rest); CPUs: one item per element (see launch.c). */
static clt_status launch_2d(clt_context *ctx, cl_kernel k, uint64_t cols, uint64_t rows,
                            const char *who)
{
    size_t local0 = clt__fit_local(ctx, k, 256);
    if (local0 > cols)
        local0 = (size_t)cols; /* short rows: narrow groups rather than idle items */
    if (local0 == 0)
        local0 = 1;
    uint64_t groups0 = (cols + local0 - 1) / local0, groups1 = rows;
    if (ctx->dev->entry->info.type != CLT_DEVICE_CPU) {
        uint64_t cap = (uint64_t)(ctx->dev->entry->info.compute_units ? ctx->dev->entry->info.compute_units
                                                                      : 1) * GROUPS_PER_COMPUTE_UNIT;
        if (groups0 > cap)
            groups0 = cap;
        groups1 = cap / groups0 ? cap / groups0 : 1;
        if (groups1 > rows)
            groups1 = rows;
    } else if (groups1 > ((uint64_t)1 << 30)) {
        groups1 = (uint64_t)1 << 30; /* the kernel strides over the rest */
    }
    size_t global[2] = {(size_t)(groups0 * local0), (size_t)groups1}, local[2] = {local0, 1};
    return clt__enqueue_kernel(ctx, k, 2, global, local, who);
}

clt_status clt__gemm_epilogue_run(clt_context *ctx, const clt__gemm_problem *p, int read_c,
                                  float scale, const char *who)
{
    if (read_c && scale == 1.0f && !clt__gemm_has_epilogue(p))
        return CLT_SUCCESS;
    cl_kernel k;
    clt_status st = clt__kernel_get(ctx, "gemm_epilogue", "", "gemm_epilogue", &k);
    if (st != CLT_SUCCESS)
        return st;
    /* Unused buffers are bound to C: never read, and no driver has to accept a NULL buffer. */
    cl_mem bias = p->bias ? p->bias : p->c, res = p->residual ? p->residual : p->c;
    cl_ulong c_off = p->c_off, ldc = (cl_ulong)p->ldc, c_stride = (cl_ulong)p->c_stride;
    cl_ulong m = (cl_ulong)p->m, n = (cl_ulong)p->n, rows = (cl_ulong)(p->m * p->batch);
    cl_ulong bias_off = p->bias_off, res_off = p->residual_off, ldr = (cl_ulong)p->ldr;
    float alpha = p->act_alpha;
    cl_uint mode = (read_c ? 1u : 0u) | (p->bias ? (cl_uint)p->bias_mode << 1 : 0u) |
                   (p->residual && !p->dact ? 1u << 3 : 0u) | (cl_uint)p->dact << 4 |
                   act_code(p->act) << 8;
    if ((st = clt__set_arg(ctx, k, 0, sizeof(cl_mem), &p->c, who)) ||
        (st = clt__set_arg(ctx, k, 1, sizeof c_off, &c_off, who)) ||
        (st = clt__set_arg(ctx, k, 2, sizeof ldc, &ldc, who)) ||
        (st = clt__set_arg(ctx, k, 3, sizeof c_stride, &c_stride, who)) ||
        (st = clt__set_arg(ctx, k, 4, sizeof m, &m, who)) ||
        (st = clt__set_arg(ctx, k, 5, sizeof n, &n, who)) ||
        (st = clt__set_arg(ctx, k, 6, sizeof rows, &rows, who)) ||
        (st = clt__set_arg(ctx, k, 7, sizeof scale, &scale, who)) ||
        (st = clt__set_arg(ctx, k, 8, sizeof alpha, &alpha, who)) ||
        (st = clt__set_arg(ctx, k, 9, sizeof mode, &mode, who)) ||
        (st = clt__set_arg(ctx, k, 10, sizeof(cl_mem), &bias, who)) ||
        (st = clt__set_arg(ctx, k, 11, sizeof bias_off, &bias_off, who)) ||
        (st = clt__set_arg(ctx, k, 12, sizeof(cl_mem), &res, who)) ||
        (st = clt__set_arg(ctx, k, 13, sizeof res_off, &res_off, who)) ||
        (st = clt__set_arg(ctx, k, 14, sizeof ldr, &ldr, who)))
        return st;
    return launch_2d(ctx, k, (uint64_t)p->n, (uint64_t)rows, who);
}
