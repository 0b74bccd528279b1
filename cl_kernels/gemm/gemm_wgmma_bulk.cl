/* GEMM on Hopper's tensor cores (wgmma, as gemm_wgmma.cl) with its operands fed by bulk copies:
 * C = act(alpha * op(A) op(B) + beta * C + bias) + residual, TF32 / 3xTF32 (IN16 = 0) or f16 / bf16
 * products, f32 accumulation, C f32 or 16-bit (OUT16). See src/ops/gemm/gemm_wgmma.c for when.
 *
 * Why: gemm_wgmma.cl's items copy every 16 bytes of a slice themselves (cp.async) and meet at one barrier a
 * slice. Here gemm_wgmma_pack (PACK_TILED) has laid each 128-row x BK slice of an operand out as the exact
 * bytes of its swizzled local tile, so one `cp.async.bulk` moves it, issued by one item, completing on an
 * mbarrier (transaction bytes) that the consumers wait on; the consumers hand a slot back through a second
 * mbarrier. Nobody waits at a group barrier.
 *
 * H100, driver 580.159, 8192^3: TF32 5003 us vs 5468-5524 for gemm_wgmma.cl's cp.async ring, bf16 2868 vs 3005.
 * Not here: thread-block clusters multicasting the tiles neighbouring groups share (half the L2 traffic in
 * 2 x 2): NVIDIA's OpenCL launches every group as a cluster of one even when the entry asks for more with
 * .reqnctapercluster (a probe read %cluster_nctarank = 1 in every group), and the multicast then faults.
 *
 * Group: one consumer warpgroup (items 0..127) computes the 128 x 128 tile (2 m64 x n128 accumulators, 128
 * floats an item); the copies are issued by item 128 (PWARP = 1: a fifth warp) or by item 0 between its
 * products (PWARP = 0: refilling the slot of slice t - LAG at slice t). Ring: STAGES slots of 128-row A
 * and B tiles with 32-byte rows (BK = 8 f32 or 16 halves: the 32B swizzle of common/wgmma.h), 8 KiB a
 * slot. Slice t waits on full[t % STAGES] (parity (t / STAGES) & 1); its products are committed, then
 * wgmma.wait_group 1 leaves them running while slice t - 1's slot is released.
 *
 * Grid: (Np / 128 * WG, Mp / 128, batch), local (WG, 1, 1), WG = 128 + 32 PWARP; Np and Mp multiples of
 * 128. A and B (GEMM_ARGS) are the packed copies: offs.x / offs.y their starts,
 * strides.x / strides.y their batch strides, dims.z = K of the packed rows (a multiple of BK); lda, ldb
 * unused. C, bias, residual and the epilogue as in common/gemm_common.h.
 * -D contract: STAGES, PWARP, LAG, plus IDX64, ACT, IN16, OUT16 of common/gemm_common.h. */
#ifndef STAGES
#define STAGES 5
#endif
#ifndef PWARP
#define PWARP 1
#endif
#ifndef LAG
#define LAG 1
#endif

#if IN16
#define ESZ 2
#else
#define ESZ 4
#endif
#define ROWB 32
#define BK (ROWB / ESZ)
#include "common/wgmma.h"

#define TILE_BYTES (128 * ROWB)
#define STAGE_BYTES (2 * TILE_BYTES)
#define WG (128 + 32 * PWARP)

#if STAGES < 2 || STAGES * (STAGE_BYTES + 16) > 49152
#error "2 or more slots, all within 48 KiB with their barriers"
#endif
#if !PWARP && (LAG < 1 || LAG >= STAGES)
#error "LAG in 1 .. STAGES - 1"
#endif

static inline __attribute__((always_inline)) void bulk_mbar_init(uint bar, uint count)
{
    asm volatile("//SM90A mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

static inline __attribute__((always_inline)) void bulk_mbar_wait(uint bar, uint parity)
{
    uint done = 0;
    while (!done)
        asm volatile("{\n.reg .pred p;\n//SM90A mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                     "//SM90A selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done)
                     : "r"(bar), "r"(parity)
                     : "memory");
}

/* This item's arrival, announcing `bytes` more to land on the barrier this phase. */
static inline __attribute__((always_inline)) void bulk_mbar_expect(uint bar, uint bytes)
{
    asm volatile("{\n.reg .b64 st;\n//SM90A mbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1;\n}\n" ::"r"(bar),
                 "r"(bytes)
                 : "memory");
}

static inline __attribute__((always_inline)) void bulk_mbar_arrive(uint bar)
{
    asm volatile("{\n.reg .b64 st;\n//SM90A mbarrier.arrive.shared::cta.b64 st, [%0];\n}\n" ::"r"(bar) : "memory");
}

/* bytes from src into local dst, counted on the barrier bar when they land. */
static inline __attribute__((always_inline)) void bulk_copy(uint dst, __global const uchar *src, uint bytes, uint bar)
{
    asm volatile("//SM90A cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes "
                 "[%0], [%1], %2, [%3];\n" ::"r"(dst),
                 "l"(src), "r"(bytes), "r"(bar)
                 : "memory");
}

/* Slice t of this group's A and B row blocks (A_blk, B_blk: slice 0) into slot t % STAGES. */
static inline __attribute__((always_inline)) void bulk_issue(uint ring, uint full0, __global const uchar *A_blk,
                                                             __global const uchar *B_blk, int t)
{
    const uint s = (uint)t % STAGES, full = full0 + 8 * s, slot = ring + s * STAGE_BYTES;
    bulk_mbar_expect(full, STAGE_BYTES);
    bulk_copy(slot, A_blk + (size_t)t * TILE_BYTES, TILE_BYTES, full);
    bulk_copy(slot + TILE_BYTES, B_blk + (size_t)t * TILE_BYTES, TILE_BYTES, full);
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void gemm_wgmma_bulk(GEMM_ARGS)
{
    __local float4 slots[STAGES * STAGE_BYTES / 16] __attribute__((aligned(1024)));
    __local ulong bars[2 * STAGES]; /* full[STAGES], then empty[STAGES] */
    GEMM_SETUP(get_group_id(2));
    const uint ring = (uint)(size_t)slots, full0 = (uint)(size_t)bars, empty0 = full0 + 8 * STAGES;
    const int lid = get_local_id(0), slices = K / BK;
    const int m0 = get_group_id(1) * 128, n0 = get_group_id(0) * 128;
    __global const uchar *A_blk = (__global const uchar *)A + (size_t)get_group_id(1) * slices * TILE_BYTES;
    __global const uchar *B_blk = (__global const uchar *)B + (size_t)get_group_id(0) * slices * TILE_BYTES;
    (void)lda;
    (void)ldb;

    if (lid == 0) {
        for (int s = 0; s < STAGES; s++) {
            bulk_mbar_init(full0 + 8 * s, 1);
            bulk_mbar_init(empty0 + 8 * s, 4); /* the consumer warps */
        }
        asm volatile("//SM90A fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    barrier(CLK_LOCAL_MEM_FENCE);

#if PWARP
    if (lid == 128) {
        for (int t = 0; t < slices; t++) {
            if (t >= STAGES) /* released by the consumers */
                bulk_mbar_wait(empty0 + 8 * (t % STAGES), ((t / STAGES) - 1) & 1);
            bulk_issue(ring, full0, A_blk, B_blk, t);
        }
    }
#else
    if (lid == 0)
        for (int t = 0; t < STAGES && t < slices; t++)
            bulk_issue(ring, full0, A_blk, B_blk, t);
#endif
    if (lid < 128) {
        float d[128];
#pragma unroll
        for (int i = 0; i < 128; i++)
            d[i] = 0.0f;
        for (int t = 0; t < slices; t++) {
            const uint s = (uint)t % STAGES, slot = ring + s * STAGE_BYTES;
            bulk_mbar_wait(full0 + 8 * s, (t / STAGES) & 1);
            asm volatile("//SM90A wgmma.fence.sync.aligned;\n" ::: "memory");
            const ulong db = wgmma_desc(slot + TILE_BYTES);
            wgmma_m64n128(d, wgmma_desc(slot), db);
            wgmma_m64n128(d + 64, wgmma_desc(slot + 64 * ROWB), db);
            asm volatile("//SM90A wgmma.commit_group.sync.aligned;\n" ::: "memory");
            asm volatile("//SM90A wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
            if (t > 0 && (lid & 31) == 0)
                bulk_mbar_arrive(empty0 + 8 * ((t - 1) % STAGES)); /* slice t - 1's slot is free */
#if !PWARP
            const int tr = t - LAG;
            if (lid == 0 && tr >= 0 && tr + STAGES < slices) {
                bulk_mbar_wait(empty0 + 8 * (tr % STAGES), (tr / STAGES) & 1);
                bulk_issue(ring, full0, A_blk, B_blk, tr + STAGES);
            }
#endif
        }
        asm volatile("//SM90A wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
        wgmma_store(d, 2, m0, n0, M, N, C, ldc, &epi);
    }
}
