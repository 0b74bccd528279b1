/* GEMM through Hopper's wgmma (cl_kernels/gemm/gemm_wgmma_bulk.cl, or gemm_wgmma.cl, on operands packed by
 * gemm_wgmma_pack.cl), the sm_90a path of issue 18: TF32 and f16 / bf16 products; the dispatcher tries it
 * before the mma.sync kernels, which stay its fallback.
 *
 * When: on an sm_90 device, f32 A, B and C in TF32 or 3xTF32 math, or f16 / bf16 A and B (any math mode:
 * their products are exact) with C f32 or of their type, by default only for products of at least
 * 2048^3 multiply-adds with m, n, k >= 1024 each: there gemm_wgmma.cl ran 1.57-1.76x faster than mma.sync
 * on the H200 in TF32 and 1.60-1.81x in bf16 (bench/RESULTS.md); at 1024^3 the two were even, and where
 * one side of the product is thin (a convolution's columns times a few filters) packing the operands
 * costs more than the product.
 * 3xTF32 from 4096^3 while its packed copies stay under 512 MiB (wanted()).
 * CLT_GEMM_WGMMA=1 takes every size (tests), =0 none (A/B runs).
 * Taken: any transposes, offsets, batches and epilogues (the packing absorbs every layout: unlike
 * mma.sync's, 16-bit operands need no alignment), no k segments. Declined (CLT_ERR_UNSUPPORTED, nothing
 * enqueued; the dispatcher goes on to mma.sync): other devices, f32 in fp32 math, k segments, alpha = 0 or
 * empty products, and packed copies that would not fit one allocation.
 *
 * Each call packs op(A) and op(B)^T into workspace slot 10 as K-contiguous copies (TF32-rounded for f32;
 * for 3xTF32 three segments, [A_lo | A_hi | A_hi] and [B_hi | B_lo | B_hi]: one TF32 product over 3 K,
 * the three products of the split) padded to whole tiles (two launches, counted in every number here: at
 * 8192^2 f32 each reads and writes 256 MiB; H100, one call: 180 us for A by 16-byte chunks, 192 us for B
 * turned in local memory, 2.8-3.0 TB/s, where the element-wise 32 x 32 kernel took 236 us each), then runs
 * the wgmma kernel on them (4590 us of the 4964 at 8192^3 TF32).
 *
 * The kernel: gemm_wgmma_bulk.cl by default (the packed copy holds each 128-row x 32-byte slice as the bytes
 * of its swizzled local tile, so one bulk copy moves it: H100, 8192^3, TF32 5003 us vs 5468-5524 for
 * gemm_wgmma.cl, bf16 2868 vs 3005, both with the element-wise pack; with the chunk packs 4964 and
 * 2634-2660, cuBLAS 2879 / 1449); CLT_GEMM_WGMMA_CFG selects either kernel's configuration (A/B runs).
 * Both read every operand tile from L2 once per 128 x 128 output tile (8192^3 TF32: 32 GiB, 6.4-6.9 TB/s
 * at 5.0-5.3 ms, near what L2 delivers); clusters that would share tiles between groups are not launched
 * by NVIDIA's OpenCL (gemm_wgmma_bulk.cl). */
#include "ops/gemm/gemm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memory/memory.h"
#include "ops/common/launch.h"
#include "program/program.h"

#define WGMMA_SLOT 10
#define WGMMA_KP 32 /* K padded to multiples of the pack kernel's tile (and of BK) */

/* gemm_wgmma.cl: WGS warpgroups of MT m64 x n128 accumulators, k slices of BK elements staged by cp.async in
 * a STAGES-deep ring (within RING_KIB KiB of local memory), wgmma.wait_group WAITN */
typedef struct ring_cfg {
    int wgs, mt, bk, stages, waitn, ring_kib;
} ring_cfg;

/* gemm_wgmma_bulk.cl: 128 x 128 tiles of 32-byte slices arriving by bulk copies into STAGES slots, the
 * copies issued by a fifth warp (pwarp 1) or by item 0 lag slices behind (pwarp 0) */
typedef struct bulk_cfg {
    int stages, pwarp, lag;
} bulk_cfg;

typedef struct wgmma_cfg {
    int bulk; /* which kernel: bulk_cfg b (gemm_wgmma_bulk.cl) or ring_cfg r (gemm_wgmma.cl) */
    ring_cfg r;
    bulk_cfg b;
} wgmma_cfg;

/* Five 8 KiB slots filled by a fifth warp: H100, 8192^3 TF32, 5003-5004 us; 4 slots 5123, 3 slots 6695, the
 * copies from item 0 one slice behind 5032. */
static const bulk_cfg default_bulk = {5, 1, 1};

/* gemm_wgmma.cl's best (CLT_GEMM_WGMMA_CFG's reference for A/B runs): 2 warpgroups of 64 x 128, k slices of
 * 64 bytes (16 f32, 32 halves: the 64B swizzle) in 3 stages (exactly 48 KiB), measured on the H200
 * (bench/RESULTS.md). */
static const ring_cfg default_ring = {2, 1, 16, 3, 0, 48}, default_ring16 = {2, 1, 32, 3, 0, 48};

static int64_t round_up(int64_t x, int64_t m)
{
    return (x + m - 1) / m * m;
}

/* gemm_wgmma_pack.cl's kernels: gemm_wgmma_pack_rows copies a K-contiguous operand in 16-byte chunks,
 * gemm_wgmma_pack_trans turns the others through local memory in 16-byte chunks; CLT_GEMM_WGMMA_PACK=tile
 * takes gemm_wgmma_pack (32 x 32 tiles of single elements, the first kernel) for every operand (A/B runs). */
clt_status clt__gemm_wgmma_pack(clt_context *ctx, const clt__wgmma_pack *a, const char *who)
{
    const char *force = getenv("CLT_GEMM_WGMMA_PACK");
    const int tile = force && strcmp(force, "tile") == 0;
    const int64_t chunk = a->in16 ? 8 : 4; /* elements in 16 bytes */
    cl_kernel kern;
    char opts[48] = "";
    if (a->in16)
        snprintf(opts, sizeof opts, "-DIN16=%d", a->in16);
    if (a->tiled_bk) /* gemm_wgmma_bulk.cl's slices of tiled_bk elements */
        snprintf(opts + strlen(opts), sizeof opts - strlen(opts), "%s-DBK=%d -DPACK_TILED=1", a->in16 ? " " : "",
                 a->tiled_bk);
    const char *name = tile ? "gemm_wgmma_pack" : a->trans ? "gemm_wgmma_pack_trans" : "gemm_wgmma_pack_rows";
    clt_status st = clt__kernel_get(ctx, "gemm_wgmma_pack", opts, name, &kern);
    if (st != CLT_SUCCESS)
        return st;
    cl_ulong o = a->off, s = (cl_ulong)a->stride;
    cl_long l = a->ld;
    /* gemm_wgmma_pack's flag, or the chunk kernels': whole 16-byte loads are aligned */
    cl_int t = tile ? a->trans : a->off % (uint64_t)chunk == 0 && a->stride % chunk == 0 && a->ld % chunk == 0;
    cl_int r = (cl_int)a->rows, kk = (cl_int)a->k, kpi = (cl_int)a->kp, rp = (cl_int)a->rows_p;
    cl_int segs = a->segs, lo = a->lo_mask;
    cl_ulong d = a->dst_off;
    if ((st = clt__set_arg(ctx, kern, 0, sizeof(cl_mem), &a->x, who)) ||
        (st = clt__set_arg(ctx, kern, 1, sizeof o, &o, who)) ||
        (st = clt__set_arg(ctx, kern, 2, sizeof s, &s, who)) ||
        (st = clt__set_arg(ctx, kern, 3, sizeof l, &l, who)) ||
        (st = clt__set_arg(ctx, kern, 4, sizeof t, &t, who)) ||
        (st = clt__set_arg(ctx, kern, 5, sizeof r, &r, who)) ||
        (st = clt__set_arg(ctx, kern, 6, sizeof kk, &kk, who)) ||
        (st = clt__set_arg(ctx, kern, 7, sizeof(cl_mem), &a->dst, who)) ||
        (st = clt__set_arg(ctx, kern, 8, sizeof d, &d, who)) ||
        (st = clt__set_arg(ctx, kern, 9, sizeof kpi, &kpi, who)) ||
        (st = clt__set_arg(ctx, kern, 10, sizeof rp, &rp, who)) ||
        (st = clt__set_arg(ctx, kern, 11, sizeof segs, &segs, who)) ||
        (st = clt__set_arg(ctx, kern, 12, sizeof lo, &lo, who)))
        return st;
    size_t cols = (size_t)(a->kp * a->segs), rows_p = (size_t)a->rows_p, batch = (size_t)a->batch;
    size_t global[3] = {cols, rows_p / 4, batch}, local[3] = {32, 8, 1}; /* gemm_wgmma_pack: 32 x 32 tiles */
    if (!tile && !a->trans) { /* a chunk per item */
        global[0] = cols / (size_t)chunk, global[1] = rows_p;
        local[0] = 4, local[1] = 64;
    } else if (!tile) { /* 32 k x 8 chunks of rows per group */
        global[0] = cols / 32 * 256, global[1] = rows_p / (size_t)(8 * chunk);
        local[0] = 256, local[1] = 1;
    }
    return clt__enqueue_kernel(ctx, kern, 3, global, local, who);
}

#define WGMMA_MIN_VOLUME (2048.0 * 2048.0 * 2048.0)
#define WGMMA_MIN_SIDE 1024
#define WGMMA_3X_MIN_VOLUME (4096.0 * 4096.0 * 4096.0)
#define WGMMA_3X_MAX_PACKED (512.0 * 1024 * 1024) /* bytes of the three-segment copies of A and B */

/* Whether p asks for 3xTF32 on f32 operands: the kernel then packs and multiplies three segments. */
static int splits(const clt__gemm_problem *p)
{
    return p->math == CLT_MATH_FP32_3XTF32 && p->a_dtype == CLT_F32;
}

/* Whether p is for the wgmma kernel: CLT_GEMM_WGMMA=1 every problem, =0 none, else the size rule. */
static int wanted(const clt__gemm_problem *p)
{
    const char *e = getenv("CLT_GEMM_WGMMA");
    if (e && !strcmp(e, "0"))
        return 0;
    if (e && !strcmp(e, "1"))
        return 1;
    /* 3xTF32 packs 3 segments per operand (3x the bytes of TF32's packing): only where the product
     * dwarfs them, and only while the copies stay small. H100, one call (bench/RESULTS.md): 4096^3
     * 2053 us vs mma.sync 2187 (402 MB packed), but 8192^3 27119 vs 17083 (1.6 GB packed: the 3 K
     * panels no longer stay in L2 between the tiles that share them, as we read it; not profiled) */
    int split = splits(p);
    double packed = ((double)p->m + (double)p->n) * (double)p->k * 3.0 * 4.0 * (double)p->batch;
    if (split && packed > WGMMA_3X_MAX_PACKED)
        return 0;
    double floor = split ? WGMMA_3X_MIN_VOLUME : WGMMA_MIN_VOLUME;
    return p->m >= WGMMA_MIN_SIDE && p->n >= WGMMA_MIN_SIDE && p->k >= WGMMA_MIN_SIDE &&
           (double)p->m * (double)p->n * (double)p->k >= floor;
}

/* CLT_GEMM_WGMMA_CFG="bulk,stages,pwarp[,lag]" (A/B runs): 2-5 slots of 8 KiB (five fit 48 KiB), lag
 * below the slots; 0 when e is not that. */
static int parse_bulk(const char *e, bulk_cfg *b)
{
    *b = (bulk_cfg){0, 1, 1};
    int n = sscanf(e, "bulk,%d,%d,%d", &b->stages, &b->pwarp, &b->lag);
    return n >= 2 && b->stages >= 2 && b->stages <= 5 && (b->pwarp == 0 || b->pwarp == 1) && b->lag >= 1 &&
           b->lag < b->stages;
}

/* CLT_GEMM_WGMMA_CFG="wgs,mt,bk,stages,waitn[,ring_kib]" (A/B runs; bk in elements of esz bytes): tile rows
 * of 32, 64 or 128 bytes, at least one slice in flight, a ring within ring_kib KiB of local memory (48 by
 * default; more only probes whether the driver takes it); 0 when e is not that. */
static int parse_ring(const char *e, int esz, ring_cfg *r)
{
    *r = (ring_cfg){0, 0, 0, 0, 0, 48};
    int n = sscanf(e, "%d,%d,%d,%d,%d,%d", &r->wgs, &r->mt, &r->bk, &r->stages, &r->waitn, &r->ring_kib);
    int rowb = r->bk * esz;
    return (n == 5 || n == 6) && (r->wgs == 1 || r->wgs == 2) && (r->mt == 1 || r->mt == 2) &&
           (rowb == 32 || rowb == 64 || rowb == 128) && (r->waitn == 0 || r->waitn == 1) &&
           r->stages - 1 - r->waitn >= 1 && r->stages - 1 - r->waitn <= 5 && r->ring_kib >= 48 &&
           r->ring_kib <= 227 && (64 * r->mt * r->wgs + 128) * rowb * r->stages <= r->ring_kib * 1024;
}

/* The configuration for elements of esz bytes: CLT_GEMM_WGMMA_CFG when it parses as either kernel's, else
 * the bulk kernel's default. */
static wgmma_cfg choose(int esz)
{
    wgmma_cfg c = {1, esz == 4 ? default_ring : default_ring16, default_bulk};
    const char *e = getenv("CLT_GEMM_WGMMA_CFG");
    bulk_cfg b;
    ring_cfg r;
    if (e && parse_bulk(e, &b))
        c.b = b;
    else if (e && parse_ring(e, esz, &r))
        c = (wgmma_cfg){0, r, default_bulk};
    return c;
}

clt_status clt__gemm_wgmma(clt_context *ctx, const clt__gemm_problem *p, const char *who)
{
    if (clt__device_nv_sm(ctx) != 90)
        return clt__fail(ctx, CLT_ERR_UNSUPPORTED, "%s: wgmma needs an sm_90 device (Hopper)", who);
    int in16 = clt__gemm_dtype_code(p->a_dtype), out16 = clt__gemm_dtype_code(p->c_dtype);
    int split = splits(p), segs = split ? 3 : 1;
    if (in16 == 0 && (out16 != 0 || (p->math != CLT_MATH_TF32 && !split)))
        return clt__fail(ctx, CLT_ERR_UNSUPPORTED, "%s: the wgmma path takes f32 operands in TF32 or 3xTF32 math",
                         who);
    if (!wanted(p))
        return clt__fail(ctx, CLT_ERR_UNSUPPORTED,
                         "%s: below the size where wgmma beats mma.sync (or CLT_GEMM_WGMMA=0)", who);
    if (p->a_kseg > 0 && p->a_kseg < p->k)
        return clt__fail(ctx, CLT_ERR_UNSUPPORTED, "%s: k segments run on the fp32 split kernel", who);
    if (p->m == 0 || p->n == 0 || p->batch == 0 || p->k == 0)
        return clt__fail(ctx, CLT_ERR_UNSUPPORTED, "%s: empty products go to the other kernels", who);
    clt__gemm_problem no_product;
    if (clt__gemm_alpha_zero(p, &no_product))
        return clt__fail(ctx, CLT_ERR_UNSUPPORTED, "%s: alpha = 0 goes to the other kernels", who);
    const char *act = clt__epilogue_act_name(p->act);
    if (!act)
        return clt__fail(ctx, CLT_ERR_UNSUPPORTED, "%s: activation %d cannot be fused", who, (int)p->act);
    size_t esz = in16 ? 2 : 4;
    wgmma_cfg c = choose((int)esz);
    int64_t bm = c.bulk ? 128 : 64 * c.r.mt * c.r.wgs, bn = 128; /* tile rows / columns */
    int64_t mp = round_up(p->m, bm), np = round_up(p->n, bn);
    const int bk = c.bulk ? 32 / (int)esz : c.r.bk; /* elements a k slice: 32-byte rows in the bulk kernel */
    int64_t kp = round_up(p->k, bk > WGMMA_KP ? bk : WGMMA_KP);
    double elems = ((double)mp + (double)np) * (double)kp * segs * (double)p->batch;
    if (mp > 2147483647LL - 256 || np > 2147483647LL - 256 || kp * segs > 2147483647LL - 64 ||
        elems * (double)esz > (double)ctx->dev->entry->info.max_alloc_bytes)
        return clt__fail(ctx, CLT_ERR_UNSUPPORTED, "%s: the packed operands would not fit one allocation", who);
    char opts[224];
    int idx64 = clt__gemm_needs_idx64(p) || (double)(mp > np ? mp : np) * (double)kp * segs > 2147483647.0;
    char ring[32] = "";
    if (!c.bulk && c.r.ring_kib != 48)
        snprintf(ring, sizeof ring, " -DRING_LIMIT=%d", c.r.ring_kib * 1024);
    char types[32] = ""; /* f32 keeps the options its program always had */
    if (in16)
        snprintf(types, sizeof types, " -DIN16=%d -DOUT16=%d", in16, out16);
    if (c.bulk)
        snprintf(opts, sizeof opts, "-DSTAGES=%d -DPWARP=%d -DLAG=%d -DIDX64=%d%s%s%s", c.b.stages, c.b.pwarp,
                 c.b.lag, idx64, types, *act ? " -DACT=" : "", act);
    else
        snprintf(opts, sizeof opts, "-DWGS=%d -DMT=%d -DBK=%d -DSTAGES=%d -DWAITN=%d%s -DIDX64=%d%s%s%s", c.r.wgs,
                 c.r.mt, c.r.bk, c.r.stages, c.r.waitn, ring, idx64, types, *act ? " -DACT=" : "", act);
    const char *kname = c.bulk ? "gemm_wgmma_bulk" : "gemm_wgmma";
    cl_kernel k;
    clt_status st = clt__kernel_get(ctx, kname, opts, kname, &k);
    if (st != CLT_SUCCESS)
        return st;
    size_t wg = (size_t)(c.bulk ? 128 + 32 * c.b.pwarp : 128 * c.r.wgs);
    if (clt__group_limit(ctx, k) < wg)
        return clt__fail(ctx, CLT_ERR_UNSUPPORTED, "%s: the wgmma kernel does not fit", who);
    cl_mem ws;
    int fresh;
    if ((st = clt__workspace_get(ctx, WGMMA_SLOT, (size_t)elems * esz, &ws, &fresh)) != CLT_SUCCESS)
        return st;
    uint64_t b_at = (uint64_t)(mp * kp * segs * p->batch);
    /* 3xTF32: lo segments A's first, B's second (see the top) */
    const int tiled = c.bulk ? bk : 0;
    clt__wgmma_pack pa = {in16, tiled, p->a, p->a_off, p->a_stride, p->lda, p->ta != CLT_NO_TRANS, p->m, p->k,
                          ws, 0, mp, kp, segs, split ? 1 : 0, p->batch};
    /* op(B)^T[j][k] = op(B)[k][j]: B untransposed is read across its rows */
    clt__wgmma_pack pb = {in16, tiled, p->b, p->b_off, p->b_stride, p->ldb, p->tb == CLT_NO_TRANS, p->n, p->k,
                          ws, b_at, np, kp, segs, split ? 2 : 0, p->batch};
    if ((st = clt__gemm_wgmma_pack(ctx, &pa, who)) != CLT_SUCCESS ||
        (st = clt__gemm_wgmma_pack(ctx, &pb, who)) != CLT_SUCCESS)
        return st;
    clt__gemm_problem q = *p;
    q.a = ws;
    q.b = ws;
    q.a_off = 0;
    q.b_off = b_at;
    q.lda = q.ldb = kp * segs;
    q.a_stride = mp * kp * segs;
    q.b_stride = np * kp * segs;
    q.k = kp * segs;
    if ((st = clt__gemm_set_args(ctx, k, &q, clt__gemm_kernel_flags(p), who)) != CLT_SUCCESS)
        return st;
    size_t global[3] = {(size_t)(np / bn) * wg, (size_t)(mp / bm), (size_t)p->batch}, local[3] = {wg, 1, 1};
    return clt__enqueue_kernel(ctx, k, 3, global, local, who);
}
