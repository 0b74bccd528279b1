/* Micro-tiled attention kernels (cl_kernels/attention/attention_tiled.cl): which implementation a
 * call uses, the tiles per device class and head dimension, an environment override for tile
 * sweeps, and the fit to the context's limits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/attention/attention_internal.h"
#include "program/program.h"
#include "tune/dispatch_common.h"

/* Per head dimension (32, 64, 128): {br, bc, tr, tc} of fwd, dq, dkdv. Chosen with clang's PTX and
 * ptxas -arch=sm_90 (an approximation of NVIDIA's compiler): 128-item groups, no spills, fwd 128
 * registers at d64 (4 groups per SM), dq and dkdv 80 / 108, local memory under 45 KiB so that 4-5
 * groups share an SM's 228 KiB. d128 halves the tiles (local rows are twice as long). To be swept
 * on the H200 (CLT_ATTENTION_TILED_TILES): at d64, dq and dkdv at 4x4 items (64-item groups) took
 * the backward of b8h8s1024d64 from 2842 to 2459 us (causal 1670 to 1499; stop 14's sweep,
 * bench/results/h200/attention_tile_sweep.jsonl). */
static const att_mtiles gpu_tiled[3][ATT_KERNELS] = {
    {{64, 32, 4, 4}, {32, 32, 2, 4}, {32, 32, 2, 4}}, /* d32 */
    {{64, 32, 4, 4}, {32, 32, 4, 4}, {32, 32, 4, 4}}, /* d64 */
    {{32, 32, 2, 4}, {16, 16, 1, 2}, {16, 16, 1, 2}}, /* d128 */
};

/* AMD (gfx902 ISA check): the d64 forward at 4x4 needs 208 VGPRs (one wave per SIMD); 2x4 rows. */
static const att_mtiles amd_tiled[3][ATT_KERNELS] = {
    {{64, 32, 4, 4}, {32, 32, 2, 4}, {32, 32, 2, 4}},
    {{32, 32, 2, 4}, {32, 32, 2, 4}, {32, 32, 2, 4}},
    {{32, 32, 2, 4}, {16, 16, 1, 2}, {16, 16, 1, 2}},
};

static int dim_index(int d) { return d == 32 ? 0 : d == 64 ? 1 : 2; }

att_impl clt__attention_impl(const clt_context *ctx)
{
    const char *e = getenv("CLT_ATTENTION_IMPL");
    if (e && strcmp(e, "rows") == 0)
        return ATT_IMPL_ROWS;
    if (e && strcmp(e, "tiled") == 0)
        return ATT_IMPL_TILED;
    /* CPU devices (POCL) keep the row kernels unless told: they run groups as loops, where the
     * micro-tiles buy nothing measured yet. */
    return ctx->dev->entry->info.type == CLT_DEVICE_CPU ? ATT_IMPL_ROWS : ATT_IMPL_TILED;
}

unsigned clt__attention_tiled_group(att_mtiles t) { return (t.br / t.tr) * (t.bc / t.tc); }

/* kernel: ATT_KERNEL (0-2 the att_kernel values, 3 the row deltas); fused: ATT_DQ_FUSED. */
static void tiled_options(const clt_context *ctx, int kernel, int fused, int d, att_mtiles m,
                          int aligned, int unroll, char *buf, size_t cap)
{
    snprintf(buf, cap,
             "-DATT_KERNEL=%d -DATT_D=%d -DATT_BR=%u -DATT_BC=%u -DATT_TR=%u -DATT_TC=%u "
             "-DATT_ALIGNED=%d -DATT_UNROLL=%d%s%s",
             kernel, d, m.br, m.bc, m.tr, m.tc, aligned, unroll, fused ? " -DATT_DQ_FUSED=1" : "",
             clt__fixed_group_option(ctx));
}

void clt__attention_tiled_options(const clt_context *ctx, att_kernel which, int d, att_mtiles m,
                                  int aligned, int unroll, char *buf, size_t cap)
{
    tiled_options(ctx, (int)which, 0, d, m, aligned, unroll, buf, cap);
}

void clt__attention_fused_options(const clt_context *ctx, int delta, int d, att_mtiles dkdv,
                                  int aligned, int unroll, char *buf, size_t cap)
{
    tiled_options(ctx, delta ? 3 : (int)ATT_BWD_DKDV, !delta, d, dkdv, aligned, unroll, buf, cap);
    /* gfx902's ISA check: the d64 fused dK/dV kernel took 129 VGPRs (1 wave per SIMD) with the D
     * loops unrolled by 2, 113 (2 waves) rolled. */
    size_t used = strlen(buf);
    if (!delta && clt__device_class_of(ctx) == CLT__CLASS_AMD && used < cap)
        snprintf(buf + used, cap - used, " -DATT_KUNROLL=1");
}

att_dq_mode clt__attention_dq_mode(att_mtiles dkdv)
{
    const char *e = getenv("CLT_ATTENTION_DQ");
    if (e && strcmp(e, "separate") == 0)
        return ATT_DQ_SEPARATE;
    return dkdv.br == dkdv.bc ? ATT_DQ_FUSED : ATT_DQ_SEPARATE;
}

size_t clt__attention_tiled_local_bytes(att_kernel which, int d, att_mtiles t)
{
    size_t rows = (size_t)(t.br + t.bc) * (size_t)(d + 4), pt = (size_t)t.br * (t.bc + 4);
    size_t cx = t.bc / t.tc, f = sizeof(float);
    if (which == ATT_FWD)
        return (rows + pt + t.br * cx) * f;
    if (which == ATT_BWD_DQ)
        return (2 * rows + pt + t.br * cx) * f;
    return (2 * rows + 2 * pt + 2 * (size_t)t.bc) * f;
}

/* The kernel's #error rules (attention_tiled.cl) plus the context's limits. */
static int fits(const clt_context *ctx, att_kernel which, int d, att_mtiles t)
{
    if (!t.br || !t.bc || !t.tr || !t.tc || t.br % t.tr || t.bc % t.tc || t.bc % 4)
        return 0;
    unsigned cx = t.bc / t.tc;
    if (cx % 4 || (unsigned)(d / 4) % cx)
        return 0;
    uint64_t cap = ctx->limits.max_work_group_size ? ctx->limits.max_work_group_size : 1;
    return clt__attention_tiled_group(t) <= cap &&
           clt__attention_tiled_local_bytes(which, d, t) <= ctx->limits.local_mem_budget;
}

/* CLT_ATTENTION_TILED_TILES="br,bc,tr,tc" for all three kernels, or twelve numbers (fwd, dq, dkdv
 * in turn); anything else is ignored. */
static int env_tiles(att_kernel which, att_mtiles *out)
{
    const char *s = getenv("CLT_ATTENTION_TILED_TILES");
    unsigned v[12];
    int n = 0, used = 0;
    if (!s)
        return 0;
    while (n < 12 && sscanf(s, "%u%n", &v[n], &used) == 1) {
        n++;
        s += used;
        if (*s != ',')
            break;
        s++;
    }
    if (*s != '\0' || (n != 4 && n != 12))
        return 0;
    int at = n == 12 ? 4 * (int)which : 0;
    att_mtiles t = {v[at], v[at + 1], v[at + 2], v[at + 3]};
    *out = t;
    return 1;
}

int clt__attention_mtiles(const clt_context *ctx, att_kernel which, int d, att_mtiles *out)
{
    att_mtiles t;
    if (env_tiles(which, &t) && fits(ctx, which, d, t)) {
        *out = t;
        return 1;
    }
    t = (clt__device_class_of(ctx) == CLT__CLASS_AMD ? amd_tiled : gpu_tiled)[dim_index(d)][which];
    /* A smaller device: halve the own rows (then the per-item rows) until the tiles fit. */
    while (!fits(ctx, which, d, t) && t.br > t.tr)
        t.br /= 2;
    if (!fits(ctx, which, d, t))
        return 0;
    *out = t;
    return 1;
}
