/* clt-info's line for the MLP family: the fused kernels' rule on this context. */
#include <stdio.h>

#include "cltensor_mlp.h"
#include "ops/common/launch.h"
#include "ops/mlp/mlp.h"
#include "ops/mlp/mlp_describe.h"

void clt__mlp_describe(const clt_context *ctx, char *buf, size_t size)
{
    unsigned long long wg = MLP_FUSED_GROUP;
    while (wg > ctx->limits.max_work_group_size && wg > 16)
        wg /= 2;
    unsigned long long local = 2ull * MLP_TILE * (CLT_MLP_FUSED_MAX_WIDTH + 4) * sizeof(float);
    snprintf(buf, size,
             "mlp: fused (forward: mlp_forward, 1 launch; train step: mlp_train + mlp_update, 2 "
             "launches) when every width <= %d and silu/tanh/relu/sigmoid/identity: groups of %llu "
             "items, tiles of up to %d points (%llu B local at width 128, budget %llu B); else "
             "per-layer (clt_gemm per layer, ~4 launches per layer and step)%s\n",
             CLT_MLP_FUSED_MAX_WIDTH, wg, MLP_TILE, local,
             (unsigned long long)ctx->limits.local_mem_budget,
             clt__cpu_style(ctx) ? "; auto takes per-layer on this CPU device (faster here), "
                                   "fused only when forced or for silu"
                                 : "");
}
