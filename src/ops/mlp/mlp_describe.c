/* clt-info's line for the MLP family: the fused kernels' rule on this context. */
#include <stdio.h>

#include "cltensor_mlp.h"
#include "ops/common/launch.h"
#include "ops/mlp/mlp.h"
#include "ops/mlp/mlp_describe.h"

void clt__mlp_describe(const clt_context *ctx, char *buf, size_t size)
{
    if (clt__cpu_style(ctx)) { /* clt_mlp_create's auto on a CPU device (mlp_api.c) */
        snprintf(buf, size,
                 "mlp: fused-cpu (forward: mlp_cpu_forward, 1 launch; train step: mlp_cpu_train + "
                 "mlp_cpu_update, 2 launches; a work item per tile of points, SIMD across the "
                 "tile) when every width <= %d; else per-layer (clt_gemm per layer, ~4 launches per "
                 "layer and step); the GPU-shaped fused kernels only when forced\n",
                 CLT_MLP_FUSED_MAX_WIDTH);
        return;
    }
    unsigned long long wg = MLP_FUSED_GROUP, rt = MLP_RT_GROUP;
    while (wg > ctx->limits.max_work_group_size && wg > 16)
        wg /= 2;
    while (rt > ctx->limits.max_work_group_size && rt > 16)
        rt /= 2;
    int rt_tile = ctx->dev->entry->info.vendor == CLT_VENDOR_NVIDIA ? MLP_RT_TILE_NV : MLP_TILE;
    snprintf(buf, size,
             "mlp: fused (forward: mlp_forward, 1 launch; train step: mlp_train, which also sums "
             "the loss, + mlp_update, 2 launches) when every width <= %d and "
             "silu/tanh/relu/sigmoid/identity: networks 64-%d wide in register-tiled groups of "
             "%llu items (tiles of %d points; small N in smaller tiles), narrower ones in groups of "
             "up to %llu items (tiles of up to %d points), within %llu B of local memory a group; "
             "else per-layer (clt_gemm per layer, ~4 launches per layer and step)\n",
             CLT_MLP_FUSED_MAX_WIDTH, CLT_MLP_FUSED_MAX_WIDTH, rt, rt_tile, wg, MLP_TILE,
             (unsigned long long)clt__mlp_fused_local_budget(ctx));
}
