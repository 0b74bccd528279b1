/* The CPU-shaped fused path of the MLP family (cl_kernels/mlp/mlp_cpu.cl, path "fused-cpu"): the
 * kernel's -D list and scratch for this network, the tile plan of a call (points per tile, groups),
 * the forward launch and a training step's two launches (mlp_cpu_train, then mlp_cpu_update through
 * clt__mlp_update). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/common/launch.h"
#include "ops/mlp/mlp.h"
#include "program/program.h"
#include "tensor/tensor.h"

#define CPU_FAMILY "mlp_cpu"
#define CPU_NV 16      /* mlp_cpu.cl's NV: points per vector */
#define CPU_TP_MAX 128 /* points per tile at most: a tile's activations stay in its core's L2 (64
                          and 256 measured no faster on the PINN's train_step) */

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

/* A row stride of an odd number of 64-byte lines: a power-of-two stride maps a column walk of the
 * feature-major tiles into a few cache sets (mlp_cpu.cl reads 16-point columns down the rows). */
static int64_t odd_lines(int64_t w)
{
    int64_t s = (w + CPU_NV - 1) / CPU_NV * CPU_NV;
    return (s / CPU_NV) % 2 ? s : s + CPU_NV;
}

static void put_list(char *o, size_t cap, const char *name, const int64_t *v, int count)
{
    size_t used = strlen(o);
    used += (size_t)snprintf(o + used, used < cap ? cap - used : 0, " -D%s=", name);
    for (int i = 0; i < count && used < cap; i++)
        used += (size_t)snprintf(o + used, cap - used, i ? ",%lld" : "%lld", (long long)v[i]);
}

/* CLT_MLP_CPU_<name> overrides a default, for measurements only: TP (points per tile at most), GROUPS /
 * FGROUPS / UGROUPS (items of the training, forward and optimizer launches), RPI (rows per register
 * block: on the PINN's train_step 4 and 8 measured 1.2-1.5x slower than 6). A different TP or GROUPS
 * changes the order of the gradient sums, so the last bits. */
static int env_int(const char *name, int def, int lo, int hi)
{
    const char *e = getenv(name);
    int v = e ? atoi(e) : 0;
    return e && v >= lo && v <= hi ? v : def;
}

int clt__mlp_cpu_config(clt_mlp *mlp, char *why, size_t why_size)
{
    clt_context *ctx = mlp->ctx;
    const clt_mlp_desc *d = &mlp->d;
    mlp_cpu_cfg *c = &mlp->cpu;
    int nl = d->layers;
    int64_t maxw = 0, w[CLT_MLP_MAX_LAYERS + 1], a[CLT_MLP_MAX_LAYERS];
    int64_t arow[CLT_MLP_MAX_LAYERS + 1], zrow[CLT_MLP_MAX_LAYERS];
    for (int l = 0; l <= nl; l++) {
        w[l] = mlp->width[l];
        maxw = w[l] > maxw ? w[l] : maxw;
    }
    if (maxw > CLT_MLP_FUSED_MAX_WIDTH) {
        snprintf(why, why_size, "width %lld > %d", (long long)maxw, CLT_MLP_FUSED_MAX_WIDTH);
        return 0;
    }
    int64_t rows = 0;
    for (int l = 0; l <= nl; l++)
        arow[l] = rows, rows += w[l];
    for (int l = 0; l < nl; l++) {
        a[l] = act_code(d->activations[l]);
        zrow[l] = a[l] == 4 ? rows : -1;
        rows += a[l] == 4 ? w[l + 1] : 0;
    }
    int64_t g0 = rows, g1 = rows + maxw, xt = rows + 2 * maxw;
    rows = xt + (d->encoding == CLT_MLP_ENCODING_FOURIER ? d->inputs : 0);
    c->lds = odd_lines(maxw);
    c->tp_max = env_int("CLT_MLP_CPU_TP", CPU_TP_MAX, CPU_NV, 1024) / CPU_NV * CPU_NV;
    c->rows = rows;
    c->sstride = rows * odd_lines(c->tp_max) + c->tp_max * c->lds;
    int cu = (int)ctx->dev->entry->info.compute_units;
    c->train_groups = env_int("CLT_MLP_CPU_GROUPS", cu > 0 ? cu : 1, 1, 4096);
    c->forward_groups = env_int("CLT_MLP_CPU_FGROUPS", cu > 0 ? cu : 1, 1, 4096);
    c->update_groups = env_int("CLT_MLP_CPU_UGROUPS", cu > 0 ? cu : 1, 1, 4096);
    snprintf(c->options, sizeof c->options,
             "-DNL=%d -DIN_DIM=%lld -DENC=%d -DG0ROW=%lld -DG1ROW=%lld -DXTROW=%lld -DROWS=%lld "
             "-DLDS=%lld -DNPARAMS=%lld -DRPI=%d",
             nl, (long long)d->inputs, d->encoding == CLT_MLP_ENCODING_FOURIER, (long long)g0,
             (long long)g1, (long long)xt, (long long)rows, (long long)c->lds,
             (long long)mlp->nparams, env_int("CLT_MLP_CPU_RPI", 6, 1, 8));
    put_list(c->options, sizeof c->options, "MLP_W", w, nl + 1);
    put_list(c->options, sizeof c->options, "MLP_ACT", a, nl);
    put_list(c->options, sizeof c->options, "MLP_POFF", mlp->poff, nl);
    put_list(c->options, sizeof c->options, "MLP_AROW", arow, nl + 1);
    put_list(c->options, sizeof c->options, "MLP_ZROW", zrow, nl);
    if (strlen(c->options) + 1 >= sizeof c->options) {
        snprintf(why, why_size, "too many layers for the kernel's option list");
        return 0;
    }
    /* build now: no compile inside a timed call */
    const char *names[3] = {"mlp_cpu_forward", "mlp_cpu_train", "mlp_cpu_update"};
    for (int i = 0; i < 3; i++) {
        cl_kernel k;
        clt_status st = clt__kernel_get(ctx, CPU_FAMILY, c->options, names[i], &k);
        if (st != CLT_SUCCESS) {
            snprintf(why, why_size, "%s did not build (%s)", names[i], clt_status_string(st));
            return 0;
        }
    }
    why[0] = '\0';
    return 1;
}

/* The tiles of a call: as many groups as allowed (at most one per tile), every group the same
 * number of tiles, the points spread evenly over them (a multiple of 16 per tile); the plan
 * depends on n and the device only, so the sums' order (and the bits) repeat. */
typedef struct plan {
    int tp, ldp;
    int64_t groups;
} plan;

static plan plan_of(const mlp_cpu_cfg *c, int64_t n, int cap)
{
    int64_t tiles = (n + c->tp_max - 1) / c->tp_max;
    int64_t groups = tiles < cap ? tiles : cap;
    tiles = (tiles + groups - 1) / groups * groups;
    int64_t per = (n + tiles - 1) / tiles;
    plan p;
    p.tp = (int)((per + CPU_NV - 1) / CPU_NV * CPU_NV);
    p.ldp = (int)odd_lines(p.tp);
    tiles = (n + p.tp - 1) / p.tp;
    p.groups = tiles < groups ? tiles : groups;
    return p;
}

/* arguments 4.. common to both kernels after the buffers: n, tp, ldp, sstride */
static clt_status set_shape(clt_context *ctx, cl_kernel k, cl_uint i, int64_t n, const plan *p,
                            int64_t sstride, const char *who)
{
    cl_long nn = n, ss = sstride;
    cl_int tp = p->tp, ldp = p->ldp;
    clt_status st;
    if ((st = clt__set_arg(ctx, k, i, sizeof nn, &nn, who)) ||
        (st = clt__set_arg(ctx, k, i + 1, sizeof tp, &tp, who)) ||
        (st = clt__set_arg(ctx, k, i + 2, sizeof ldp, &ldp, who)))
        return st;
    return clt__set_arg(ctx, k, i + 3, sizeof ss, &ss, who);
}

clt_status clt__mlp_cpu_forward(clt_mlp *mlp, const clt_tensor *x, clt_tensor *y, int64_t n)
{
    static const char *who = "clt_mlp_forward";
    clt_context *ctx = mlp->ctx;
    plan p = plan_of(&mlp->cpu, n, mlp->cpu.forward_groups);
    cl_kernel k;
    clt_status st = clt__kernel_get(ctx, CPU_FAMILY, mlp->cpu.options, "mlp_cpu_forward", &k);
    if (!st)
        st = clt__mlp_ensure_groups(mlp, p.groups, mlp->cpu.sstride);
    if (st)
        return st;
    cl_float scale = mlp->d.fourier_scale;
    cl_ulong2 off = {{clt__mlp_elem_off(x), clt__mlp_elem_off(y)}};
    const cl_mem mems[5] = {x->storage->mem, mlp->B->storage->mem, mlp->params->storage->mem,
                            y->storage->mem, mlp->scratch->storage->mem};
    for (cl_uint i = 0; i < 5; i++)
        if ((st = clt__set_arg(ctx, k, i, sizeof(cl_mem), &mems[i], who)))
            return st;
    if ((st = set_shape(ctx, k, 5, n, &p, mlp->cpu.sstride, who)) ||
        (st = clt__set_arg(ctx, k, 9, sizeof scale, &scale, who)) ||
        (st = clt__set_arg(ctx, k, 10, sizeof off, &off, who)))
        return st;
    size_t local = 1, global = (size_t)p.groups;
    return clt__enqueue_kernel(ctx, k, 1, &global, &local, who);
}

clt_status clt__mlp_cpu_step(clt_mlp *mlp, const clt_tensor *x, const clt_tensor *target, int64_t n,
                             int update, int want_loss, const char *who)
{
    clt_context *ctx = mlp->ctx;
    plan p = plan_of(&mlp->cpu, n, mlp->cpu.train_groups);
    cl_kernel k;
    clt_status st = clt__kernel_get(ctx, CPU_FAMILY, mlp->cpu.options, "mlp_cpu_train", &k);
    if (!st)
        st = clt__mlp_ensure_groups(mlp, p.groups, mlp->cpu.sstride);
    if (st)
        return st;
    cl_float2 sc = clt__mlp_train_scales(mlp, n);
    cl_ulong2 off = {{clt__mlp_elem_off(x), clt__mlp_elem_off(target)}};
    if ((st = clt__mlp_train_buffers(mlp, k, x, target, who)))
        return st;
    if ((st = set_shape(ctx, k, 7, n, &p, mlp->cpu.sstride, who)) ||
        (st = clt__set_arg(ctx, k, 11, sizeof sc, &sc, who)) ||
        (st = clt__set_arg(ctx, k, 12, sizeof off, &off, who)))
        return st;
    size_t local = 1, global = (size_t)p.groups;
    if ((st = clt__enqueue_kernel(ctx, k, 1, &global, &local, who)) != CLT_SUCCESS)
        return st;
    return clt__mlp_update(mlp, mlp->partial, p.groups, mlp->loss_part, n, update, want_loss, who);
}
