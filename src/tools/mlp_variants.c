/* Fused-MLP programs for the kernel ISA check (see mlp_variants.h). The options come from the
 * family's own choice (clt__mlp_fused_programs, clt__mlp_update_options) on ctx; nothing is
 * built or launched. */
#include "tools/mlp_variants.h"

#include <stdio.h>

#include "cltensor_mlp.h"
#include "ops/mlp/mlp.h"

static clt_status emit(clt_context *ctx, const clt_mlp_desc *d, clt__variant_use use,
                       clt__variant_list *l, clt__variant_add_fn add)
{
    mlp_fused_cfg cfg[2];
    char why[200];
    int count = clt__mlp_fused_programs(ctx, d, cfg, why, sizeof why);
    clt_status st = CLT_SUCCESS;
    for (int i = 0; i < count && !st; i++)
        st = add(l, use, "mlp_fused", cfg[i].options, cfg[i].wg, NULL);
    return st;
}

/* The PINN of BENCHMARKS.md (bench/pinn_net.h): Fourier features 2 -> 64, three tanh layers of
 * `width`, a linear output of 2. */
static void pinn(clt_mlp_desc *d, int64_t width)
{
    clt_mlp_desc_init(d);
    d->inputs = 2;
    d->encoding = CLT_MLP_ENCODING_FOURIER;
    d->fourier_features = 32;
    d->layers = 4;
    for (int i = 0; i < 4; i++) {
        d->widths[i] = i == 3 ? 2 : width;
        d->activations[i] = i == 3 ? CLT_IDENTITY : CLT_TANH;
    }
}

/* Identity encoding of 3 coordinates, two hidden layers of `width` with act, a linear output of 3
 * (narrow ones give the kernels' small COLS, 16 and 32). */
static void plain(clt_mlp_desc *d, clt_unary_op act, int64_t width)
{
    clt_mlp_desc_init(d);
    d->inputs = 3;
    d->layers = 3;
    for (int i = 0; i < 3; i++) {
        d->widths[i] = i == 2 ? 3 : width;
        d->activations[i] = i == 2 ? CLT_IDENTITY : act;
    }
}

clt_status clt__mlp_variants(clt_context *ctx, clt__variant_use use, clt__variant_list *l,
                             clt__variant_add_fn add)
{
    static const int64_t widths[] = {16, 32, 64, 128};
    static const clt_unary_op acts[] = {CLT_IDENTITY, CLT_TANH, CLT_RELU, CLT_SIGMOID, CLT_SILU};
    clt_mlp_desc d;
    clt_status st = CLT_SUCCESS;
    for (size_t i = 0; i < sizeof widths / sizeof widths[0] && !st; i++) {
        pinn(&d, widths[i]);
        st = emit(ctx, &d, use, l, add);
    }
    for (size_t i = 0; i < sizeof acts / sizeof acts[0] && !st; i++) {
        plain(&d, acts[i], 128);
        st = emit(ctx, &d, use, l, add);
    }
    for (size_t i = 0; i < 2 && !st; i++) {
        plain(&d, CLT_TANH, widths[i]);
        st = emit(ctx, &d, use, l, add);
    }
    if (!st) {
        char opts[48];
        size_t wg = clt__mlp_update_options(ctx, opts, sizeof opts, NULL);
        st = add(l, use, "mlp_update", opts, (int)wg, NULL);
    }
    return st;
}
