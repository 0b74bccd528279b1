/* The fused path of the MLP family (cl_kernels/mlp/mlp_fused.cl): the kernel shape for this
 * network on this device, the forward launch, and a training step's two launches (fused forward +
 * backward into per-group partial gradients; then mlp_update). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/common/launch.h"
#include "ops/mlp/mlp.h"
#include "program/program.h"
#include "tensor/tensor.h"

#define FUSED_FAMILY "mlp_fused"
#define FUSED_LOCAL_CAP (32u * 1024u) /* bytes of local memory off NVIDIA */

static int act_code(clt_unary_op a)
{
    switch (a) {
    case CLT_TANH: return 1;
    case CLT_RELU: return 2;
    case CLT_SIGMOID: return 3;
    case CLT_SILU: return 4;
    default: return 0;
    }
}

/* Appends "-DNAME=v0,v1,..." to o. */
static void put_list(char *o, size_t cap, const char *name, const int64_t *v, int count)
{
    size_t used = strlen(o);
    used += (size_t)snprintf(o + used, used < cap ? cap - used : 0, " -D%s=", name);
    for (int i = 0; i < count && used < cap; i++)
        used += (size_t)snprintf(o + used, cap - used, i ? ",%lld" : "%lld", (long long)v[i]);
}

/* The local memory the fused kernels may take: NVIDIA's whole group budget (48 KiB on the H200),
 * elsewhere at most FUSED_LOCAL_CAP. On AMD that keeps two groups per CU (64 KiB of LDS). On POCL
 * (the CPU device, and the gfx902 profile in CI) mlp_train groups above ~40 KiB gave wrong
 * gradients that changed from run to run whenever two groups ran at once: correct with
 * POCL_MAX_PTHREAD_COUNT=1, and the same code was correct at 38 KiB and wrong at 42 KiB (not
 * root-caused inside POCL; the kernel's local indexing stays in bounds). */
uint64_t clt__mlp_fused_local_budget(const clt_context *ctx)
{
    uint64_t budget = ctx->limits.local_mem_budget;
    if (ctx->dev->entry->info.vendor != CLT_VENDOR_NVIDIA && budget > FUSED_LOCAL_CAP)
        budget = FUSED_LOCAL_CAP;
    return budget;
}

/* Groups of the training launch: a persistent grid (each group's partial gradients are a slice of
 * pstride floats, so fewer groups is less traffic in launch 2). NVIDIA takes 4 per SM: on the H200
 * (ed1da0f) pinn_train_step/10000's 313 tiles ran 394 us as 157 groups of 2 tiles, 309 us as 313
 * groups of one (the second tile's read-modify-write of the partials and the longer chain cost
 * more than the larger launch 2); 200 and 1000 points were within noise. Elsewhere 2 per compute
 * unit. CLT_MLP_GROUPS overrides the cap for measurements. */
static int group_cap(const clt_context *ctx)
{
    const char *env = getenv("CLT_MLP_GROUPS");
    if (env && atoi(env) > 0)
        return atoi(env);
    int cu = (int)ctx->dev->entry->info.compute_units;
    if (cu < 1)
        cu = 1;
    if (ctx->dev->entry->info.type != CLT_DEVICE_GPU)
        return cu;
    return ctx->dev->entry->info.vendor == CLT_VENDOR_NVIDIA ? 4 * cu : 2 * cu;
}

/* The options of one shape of the fused kernels: ppi_want points per item (0: MLP_TILE points
 * per tile); nothing built. */
static int fused_options(const clt_mlp *mlp, int ppi_want, mlp_fused_cfg *cfg, char *why,
                         size_t why_size)
{
    clt_context *ctx = mlp->ctx;
    const clt_mlp_desc *d = &mlp->d;
    int nl = d->layers;
    int64_t maxw = 0;
    for (int l = 0; l <= nl; l++)
        maxw = mlp->width[l] > maxw ? mlp->width[l] : maxw;
    if (maxw > CLT_MLP_FUSED_MAX_WIDTH) {
        snprintf(why, why_size, "width %lld > %d", (long long)maxw, CLT_MLP_FUSED_MAX_WIDTH);
        return 0;
    }
    int cols = 16;
    while (cols < maxw)
        cols *= 2;
    /* RT: the register-tiled layers (mlp_fused.cl) for the big tiles of networks 64 or 128 wide,
     * in groups of MLP_RT_GROUP (4 rows of 32 items at width 128, 8 points each: the 32-point
     * tile). H200 (one run, 10000 points): pinn_forward 82 -> 62 us, pinn_train_step 320 -> 232;
     * WG 256 with 4 or 8 points per item 328-334 us, 16 points per item (64-point tiles) the same
     * as 8. CLT_MLP_RT=0 keeps the one-column items (measurements only). */
    const char *ert = getenv("CLT_MLP_RT");
    const int rt = ppi_want == 0 && cols >= 64 && !(ert && atoi(ert) == 0);
    const int across = rt ? cols / 4 : cols; /* items across a row of the tile */
    /* CLT_MLP_WG / CLT_MLP_PPI override the group and points per item (measurements only) */
    const char *ewg = getenv("CLT_MLP_WG"), *eppi = getenv("CLT_MLP_PPI");
    int wg = ewg && atoi(ewg) >= across && atoi(ewg) % across == 0 ? atoi(ewg)
             : rt                                                  ? MLP_RT_GROUP
                                                                   : MLP_FUSED_GROUP;
    while ((uint64_t)wg > ctx->limits.max_work_group_size && wg > across)
        wg /= 2;
    if ((uint64_t)wg > ctx->limits.max_work_group_size) {
        snprintf(why, why_size, "the device's groups hold %llu items, the kernel needs %d",
                 (unsigned long long)ctx->limits.max_work_group_size, wg);
        return 0;
    }
    const int nr = wg / across; /* rows of items */
    int ppi = MLP_TILE / nr > 0 ? MLP_TILE / nr : 1;
    /* RT on NVIDIA: 40-point tiles. The groups of a step all run at once (up to 4 per SM), so the
     * SM with the most points sets the time: 10000 points are 313 32-point tiles, 3 on some SMs
     * (96 points), or 250 40-point tiles, at most 2 per SM (80 points), and 250 partial slices
     * instead of 313. H200, one call, two runs each (pinn_train_step / pinn_forward at 10000,
     * us): 32 points 225-227 / 62.0, 40 points 210 / 55.9, 48 points 244-246 / 89, 64 points
     * 225-228 / 62.0 */
    if (rt && ctx->dev->entry->info.vendor == CLT_VENDOR_NVIDIA && MLP_RT_TILE_NV % nr == 0)
        ppi = MLP_RT_TILE_NV / nr;
    if (ppi_want > 0 && ppi_want < ppi)
        ppi = ppi_want;
    if (eppi && atoi(eppi) > 0 && atoi(eppi) <= 64)
        ppi = atoi(eppi);
    /* weight rows per forward chunk, weight columns per backward chunk (mlp_fused.cl): on NVIDIA
     * small tiles are latency-bound and have registers to spare, so they take wide chunks (fewer
     * round trips). Elsewhere (AMD's wave64 VGPR budget) the forward's double-buffered chunk sets
     * mlp_train's registers: on gfx902 KC 32 gave 256 VGPRs and scratch, KC 16 123-127 VGPRs (2
     * waves), KC 8 83-113 (2-3 waves). The small tiles' backward chunk: BWC 32 against 64 on the
     * H200 (ed1da0f, one run): pinn_100_epochs/200 4.44 against 4.70 ms, pinn_train_step/200
     * 46.5 against 46.7 us (with RESIDENT the group then takes 27 KiB of local memory, not 43).
     * The reqd_work_group_size guard (mlp_fused.cl) stays: dropping the attribute from every
     * program (CLT_NV_REQD=0) measured no better there (bench/results/h200/pinn_knobs.md, c1).
     * CLT_MLP_KC / CLT_MLP_BWC override them (measurements only). */
    const char *ekc = getenv("CLT_MLP_KC"), *ebwc = getenv("CLT_MLP_BWC");
    const int nvidia = ctx->dev->entry->info.vendor == CLT_VENDOR_NVIDIA;
    /* RT's chunk holds KC float4 rows: 8 on the H200 (KC 4 82.8 and 16 94.8 against 70.0 us of
     * pinn_forward/10000, one run), 4 elsewhere for AMD's VGPRs */
    int kc = rt ? (nvidia ? 8 : 4) : !nvidia ? 8 : ppi <= 2 ? 64 : 32;
    int bwc = nvidia && ppi <= 2 ? 32 : 16;
    if (ekc && atoi(ekc) >= 4 && atoi(ekc) <= 128 && atoi(ekc) % 4 == 0)
        kc = atoi(ekc);
    if (ebwc && atoi(ebwc) >= 4 && atoi(ebwc) <= 128 && !(atoi(ebwc) & (atoi(ebwc) - 1)))
        bwc = atoi(ebwc); /* a power of two: halved below while it does not fit */
    kc = kc < cols ? kc : cols;
    bwc = bwc < cols ? bwc : cols;
    const int lda = cols + 4; /* mlp_fused.cl's LDA */
    const uint64_t budget = clt__mlp_fused_local_budget(ctx);
#define FUSED_LOCAL(ppi_, bwc_)                                                                    \
    ((uint64_t)(2 * nr * (ppi_) * lda + (rt ? 4 : cols * ((bwc_) + 1))) * sizeof(float))
    while (ppi > 1 && FUSED_LOCAL(ppi, bwc < 16 ? bwc : 16) > budget) /* the tile first, */
        ppi /= 2;
    while (bwc > 4 && FUSED_LOCAL(ppi, bwc) > budget) /* then the chunk */
        bwc /= 2;
    int64_t tp = (int64_t)nr * ppi;
    if (FUSED_LOCAL(ppi, bwc) > budget) {
        snprintf(why, why_size, "the activations need %llu B of local memory, the kernels may take %llu",
                 (unsigned long long)FUSED_LOCAL(ppi, bwc), (unsigned long long)budget);
        return 0;
    }
    /* RESIDENT (small tiles): every layer's input stays in local memory through the step, so the
     * backward does not reload it from scratch (one L2 round trip per layer on the chain of a
     * latency-bound step). CLT_MLP_RESIDENT=0 turns it off (measurements only). */
    const char *eres = getenv("CLT_MLP_RESIDENT");
    uint64_t res_bytes =
        FUSED_LOCAL(ppi, bwc) + (uint64_t)(nl - 1) * nr * ppi * lda * sizeof(float);
    int resident = res_bytes <= budget && !(eres && atoi(eres) == 0);
#undef FUSED_LOCAL
    int64_t w[CLT_MLP_MAX_LAYERS + 1], a[CLT_MLP_MAX_LAYERS], soff[CLT_MLP_MAX_LAYERS + 1];
    int64_t s = 0;
    for (int l = 0; l <= nl; l++) {
        w[l] = mlp->width[l];
        soff[l] = s;
        if (l < nl)
            a[l] = act_code(d->activations[l]), s += tp * w[l];
    }
    cfg->wg = wg, cfg->cols = cols, cfg->ppi = ppi, cfg->tp = tp;
    cfg->max_groups = group_cap(ctx);
    cfg->scratch = s + nl * tp * cols;
    snprintf(cfg->options, sizeof cfg->options,
             "-DWG=%d -DCOLS=%d -DPPI=%d -DNL=%d -DIN_DIM=%lld -DENC=%d -DSCRATCH=%lld -DPSTRIDE=%lld "
             "-DKC=%d -DBWC=%d -DRESIDENT=%d -DRT=%d",
             wg, cols, ppi, nl, (long long)d->inputs, d->encoding == CLT_MLP_ENCODING_FOURIER,
             (long long)cfg->scratch, (long long)mlp->pstride, kc, bwc, resident, rt);
    /* the group is still checked against the built kernel's limit below */
    size_t used = strlen(cfg->options);
    snprintf(cfg->options + used, sizeof cfg->options - used, "%s", clt__fixed_group_option(ctx));
    put_list(cfg->options, sizeof cfg->options, "MLP_W", w, nl + 1);
    put_list(cfg->options, sizeof cfg->options, "MLP_ACT", a, nl);
    put_list(cfg->options, sizeof cfg->options, "MLP_POFF", mlp->poff, nl);
    put_list(cfg->options, sizeof cfg->options, "MLP_SOFF", soff, nl + 1);
    return 1;
}

/* One shape of the fused kernels (fused_options), built and checked to take its group. */
static int fused_variant(clt_mlp *mlp, int ppi_want, mlp_fused_cfg *cfg, char *why, size_t why_size)
{
    clt_context *ctx = mlp->ctx;
    if (!fused_options(mlp, ppi_want, cfg, why, why_size))
        return 0;
    const int wg = cfg->wg;
    /* build now (no compile inside a timed step) and check the kernels take the group */
    const char *names[2] = {"mlp_forward", "mlp_train"};
    for (int i = 0; i < 2; i++) {
        cl_kernel k;
        clt_status st = clt__kernel_get(ctx, FUSED_FAMILY, cfg->options, names[i], &k);
        if (st != CLT_SUCCESS) {
            snprintf(why, why_size, "%s did not build (%s)", names[i], clt_status_string(st));
            return 0;
        }
        if (clt__kernel_work_group_limit(ctx, k) < (size_t)wg) {
            snprintf(why, why_size, "%s runs at most %zu items per group, it needs %d", names[i],
                     clt__kernel_work_group_limit(ctx, k), wg);
            return 0;
        }
    }
    return 1;
}

static int64_t tile_points(const mlp_fused_cfg *c) { return c->tp; }

/* Variant 0 (tiles of MLP_TILE points) and, on GPUs, variant 1 (2 points per item): a small N in
 * big tiles leaves most compute units idle and each group's chain of layers long, so it takes
 * the small tiles when the big ones would not give every compute unit a group. */
static int small_tiles_wanted(const clt_mlp *mlp, const mlp_fused_cfg *big)
{
    return !clt__cpu_style(mlp->ctx) && big->ppi > 2 && !getenv("CLT_MLP_PPI");
}

int clt__mlp_fused_config(clt_mlp *mlp, mlp_fused_cfg *cfg, char *why, size_t why_size)
{
    if (!fused_variant(mlp, 0, &cfg[0], why, why_size))
        return 0;
    mlp->variants = 1;
    if (small_tiles_wanted(mlp, &cfg[0]) && fused_variant(mlp, 2, &cfg[1], why, why_size))
        mlp->variants = 2;
    why[0] = '\0';
    return 1;
}

int clt__mlp_fused_programs(clt_context *ctx, const clt_mlp_desc *desc, mlp_fused_cfg cfg[2],
                            char *why, size_t why_size)
{
    clt_mlp *mlp = calloc(1, sizeof *mlp);
    if (!mlp) {
        snprintf(why, why_size, "out of host memory");
        return 0;
    }
    mlp->ctx = ctx;
    mlp->d = *desc;
    clt__mlp_layout(mlp);
    int count = 0;
    if (fused_options(mlp, 0, &cfg[0], why, why_size)) {
        count = 1;
        if (small_tiles_wanted(mlp, &cfg[0]) && fused_options(mlp, 2, &cfg[1], why, why_size))
            count = 2;
    }
    free(mlp);
    return count;
}

static const mlp_fused_cfg *pick(const clt_mlp *mlp, int64_t n)
{
    const mlp_fused_cfg *big = &mlp->cfg[0];
    int64_t tiles = (n + tile_points(big) - 1) / tile_points(big);
    int cu = (int)mlp->ctx->dev->entry->info.compute_units;
    return mlp->variants == 2 && tiles < cu ? &mlp->cfg[1] : big;
}

clt_status clt__mlp_fused_forward(clt_mlp *mlp, const clt_tensor *x, clt_tensor *y, int64_t n)
{
    static const char *who = "clt_mlp_forward";
    clt_context *ctx = mlp->ctx;
    cl_kernel k;
    const mlp_fused_cfg *cfg = pick(mlp, n);
    clt_status st = clt__kernel_get(ctx, FUSED_FAMILY, cfg->options, "mlp_forward", &k);
    if (st != CLT_SUCCESS)
        return st;
    cl_long nn = n;
    cl_float scale = mlp->d.fourier_scale;
    cl_ulong2 off = {{clt__mlp_elem_off(x), clt__mlp_elem_off(y)}};
    if ((st = clt__set_arg(ctx, k, 0, sizeof(cl_mem), &x->storage->mem, who)) ||
        (st = clt__set_arg(ctx, k, 1, sizeof(cl_mem), &mlp->B->storage->mem, who)) ||
        (st = clt__set_arg(ctx, k, 2, sizeof(cl_mem), &mlp->params->storage->mem, who)) ||
        (st = clt__set_arg(ctx, k, 3, sizeof(cl_mem), &y->storage->mem, who)) ||
        (st = clt__set_arg(ctx, k, 4, sizeof nn, &nn, who)) ||
        (st = clt__set_arg(ctx, k, 5, sizeof scale, &scale, who)) ||
        (st = clt__set_arg(ctx, k, 6, sizeof off, &off, who)))
        return st;
    int64_t tp = tile_points(cfg);
    size_t local = (size_t)cfg->wg, global = (size_t)((n + tp - 1) / tp) * local;
    return clt__enqueue_kernel(ctx, k, 1, &global, &local, who);
}

clt_status clt__mlp_fused_step(clt_mlp *mlp, const clt_tensor *x, const clt_tensor *target, int64_t n,
                               int update, int want_loss, clt_future **loss_out,
                               clt_status *read_st, const char *who)
{
    clt_context *ctx = mlp->ctx;
    const mlp_fused_cfg *cfg = pick(mlp, n);
    int64_t tp = tile_points(cfg), tiles = (n + tp - 1) / tp;
    /* as many groups as the cap allows with every group taking the same number of tiles (the
     * slowest group sets the time; fewer groups is less partial-gradient traffic) */
    int64_t per_group = (tiles + cfg->max_groups - 1) / cfg->max_groups;
    int64_t groups = (tiles + per_group - 1) / per_group;
    cl_kernel k;
    clt_status st = clt__kernel_get(ctx, FUSED_FAMILY, cfg->options, "mlp_train", &k);
    if (st == CLT_SUCCESS)
        st = clt__mlp_ensure_groups(mlp, groups, mlp->cfg[0].scratch);
    if (st != CLT_SUCCESS)
        return st;
    cl_long nn = n;
    cl_float2 sc = clt__mlp_train_scales(mlp, n);
    cl_ulong2 off = {{clt__mlp_elem_off(x), clt__mlp_elem_off(target)}};
    cl_int want = want_loss;
    if ((st = clt__mlp_train_buffers(mlp, k, x, target, who)))
        return st;
    if ((st = clt__set_arg(ctx, k, 7, sizeof nn, &nn, who)) ||
        (st = clt__set_arg(ctx, k, 8, sizeof sc, &sc, who)) ||
        (st = clt__set_arg(ctx, k, 9, sizeof off, &off, who)) ||
        (st = clt__set_arg(ctx, k, 10, sizeof(cl_mem), &mlp->loss->storage->mem, who)) ||
        (st = clt__set_arg(ctx, k, 11, sizeof(cl_mem), &mlp->counter->storage->mem, who)) ||
        (st = clt__set_arg(ctx, k, 12, sizeof want, &want, who)))
        return st;
    size_t local = (size_t)cfg->wg, global = (size_t)groups * local;
    if ((st = clt__enqueue_kernel(ctx, k, 1, &global, &local, who)) != CLT_SUCCESS)
        return st;
    /* The loss is final after mlp_train: reading it before mlp_update lets the host have it, and
     * enqueue the next step, while the update runs (H200, pinn_train_step/200: the update's
     * 6.9 us and the 5.4 us between a kernel and a read left the wait for the loss) */
    if (loss_out)
        *read_st = clt_tensor_read_async(mlp->loss, 0, 1, loss_out);
    return clt__mlp_update(mlp, mlp->partial, groups, mlp->loss_part, n, update, 0, who);
}
