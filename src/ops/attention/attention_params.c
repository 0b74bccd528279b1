/* Row-kernel (attention.cl) tile sizes: one table per device class and head dimension, an
 * environment override for tuning runs, the fit to the context's limits, and
 * clt_attention_describe (which names the micro-tiled kernels' tiles when a call would use them). */
#include <stdio.h>
#include <stdlib.h>

#include "cltensor_attention.h"
#include "ops/attention/attention_internal.h"
#include "tune/dispatch_common.h"

/* Per head dimension (32, 64, 128): tiles of fwd, dq, dkdv. GPU rows keep one query (key) row per
 * item with its accumulator in registers, so wide heads take smaller tiles (registers, and the
 * 48 KiB of local memory NVIDIA gives a group). CPU (POCL) runs groups as loops: small tiles keep
 * the unrolled bodies (and their compile time) small. Starting points, to be tuned on hardware. */
typedef struct att_row {
    att_tiles t[ATT_KERNELS];
} att_row;

static const att_row gpu_rows[3] = {
    {{{64, 64}, {64, 32}, {32, 64}}}, /* d32 */
    {{{64, 32}, {64, 32}, {32, 32}}}, /* d64 */
    {{{32, 16}, {32, 16}, {16, 16}}}, /* d128 */
};
static const att_row cpu_rows[3] = {
    {{{16, 16}, {16, 16}, {16, 16}}},
    {{{16, 16}, {16, 16}, {16, 16}}},
    {{{16, 8}, {16, 8}, {8, 16}}},
};

static int dim_index(int d) { return d == 32 ? 0 : d == 64 ? 1 : 2; }

size_t clt__attention_local_bytes(att_kernel which, int d, att_tiles t)
{
    size_t f = sizeof(float);
    if (which == ATT_BWD_DKDV)
        return 2 * (size_t)t.bm * d * f + 2 * (size_t)t.bn * (d + 4) * f + 2 * (size_t)t.bm * f;
    return 2 * (size_t)t.bn * d * f;
}

unsigned clt__attention_group(att_kernel which, att_tiles t)
{
    return which == ATT_BWD_DKDV ? t.bn : t.bm;
}

/* CLT_ATTENTION_TILES="fbm,fbn,qbm,qbn,kbm,kbn": six positive numbers up to 1024, or ignored. */
static int env_tiles(att_kernel which, att_tiles *out)
{
    const char *s = getenv("CLT_ATTENTION_TILES");
    unsigned v[6];
    char tail;
    if (!s || sscanf(s, "%u,%u,%u,%u,%u,%u%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &tail) != 6)
        return 0;
    for (int i = 0; i < 6; i++)
        if (v[i] < 1 || v[i] > 1024)
            return 0;
    out->bm = v[2 * which];
    out->bn = v[2 * which + 1];
    return 1;
}

att_tiles clt__attention_tiles(const clt_context *ctx, att_kernel which, int d)
{
    att_tiles t;
    if (!env_tiles(which, &t)) {
        const att_row *rows = clt__device_class_of(ctx) == CLT__CLASS_CPU ? cpu_rows : gpu_rows;
        t = rows[dim_index(d)].t[which];
    }
    uint64_t group_cap = ctx->limits.max_work_group_size ? ctx->limits.max_work_group_size : 1;
    while (clt__attention_local_bytes(which, d, t) > ctx->limits.local_mem_budget &&
           (t.bm > 1 || t.bn > 1)) {
        if (t.bn >= t.bm && t.bn > 1)
            t.bn /= 2;
        else
            t.bm /= 2;
    }
    while (clt__attention_group(which, t) > group_cap) {
        if (which == ATT_BWD_DKDV)
            t.bn /= 2;
        else
            t.bm /= 2;
    }
    return t;
}

clt_status clt_attention_describe(clt_context *ctx, int64_t head_dim, char *buf, size_t cap)
{
    CLT_PUBLIC_CALL();
    if (!ctx || !buf || cap == 0)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "clt_attention_describe: %s is NULL or 0",
                         !ctx ? "ctx" : !buf ? "buf" : "cap");
    if (head_dim != 32 && head_dim != 64 && head_dim != 128)
        return clt__fail(ctx, CLT_ERR_UNSUPPORTED,
                         "clt_attention_describe: head_dim %lld, supported 32, 64, 128",
                         (long long)head_dim);
    int d = (int)head_dim;
    att_mtiles m[ATT_KERNELS];
    int tiled = clt__attention_impl(ctx) == ATT_IMPL_TILED;
    for (int w = 0; w < ATT_KERNELS && tiled; w++)
        tiled = clt__attention_mtiles(ctx, (att_kernel)w, d, &m[w]);
    if (tiled) {
        snprintf(buf, cap,
                 "attention d%d tiled fwd br=%u bc=%u tr=%u tc=%u; bwd_dq br=%u bc=%u tr=%u "
                 "tc=%u; bwd_dkdv br=%u bc=%u tr=%u tc=%u; dq %s",
                 d, m[0].br, m[0].bc, m[0].tr, m[0].tc, m[1].br, m[1].bc, m[1].tr, m[1].tc,
                 m[2].br, m[2].bc, m[2].tr, m[2].tc,
                 clt__attention_dq_mode(m[2]) == ATT_DQ_FUSED ? "fused into dkdv" : "separate");
        return CLT_SUCCESS;
    }
    att_tiles f = clt__attention_tiles(ctx, ATT_FWD, d);
    att_tiles q = clt__attention_tiles(ctx, ATT_BWD_DQ, d);
    att_tiles k = clt__attention_tiles(ctx, ATT_BWD_DKDV, d);
    snprintf(buf, cap,
             "attention d%d rows fwd bm=%u bn=%u; bwd_dq bm=%u bn=%u; bwd_dkdv bm=%u bn=%u", d, f.bm,
             f.bn, q.bm, q.bn, k.bm, k.bn);
    return CLT_SUCCESS;
}
