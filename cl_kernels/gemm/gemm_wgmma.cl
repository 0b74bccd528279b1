/* GEMM on Hopper's tensor cores through wgmma (the sm_90a path, see src/ops/gemm/gemm_wgmma.c):
 * C = act(alpha * op(A) op(B) + beta * C + bias) + residual, A and B f32 in TF32 or 3xTF32 math (IN16 = 0;
 * 3xTF32 through gemm_wgmma_pack.cl's segments) or f16 / bf16 (IN16 = 1 / 2, exact products), C f32 or
 * the operands' 16-bit type (OUT16), f32 accumulation.
 * NVIDIA sm_90 only: the wgmma lines are "//SM90A " asm comments that src/program/sm90a_build.c turns
 * into instructions after the build (NVIDIA's OpenCL refuses them as code: its PTX target is sm_90).
 *
 * gemm_wgmma: one group of WGS warpgroups computes a BM x BN tile (warpgroup w: rows 64 MT w .. of the
 * tile, MT m64 x n128 wgmma accumulators = 64 MT floats per item) of the operands gemm_wgmma_pack.cl has
 * packed. K in slices of BK elements through a STAGES-deep ring of local tiles filled by cp.async; per
 * slice one barrier, then ROWB / 32 wgmma k-steps per accumulator (k8 for TF32, k16 for 16-bit: 32 bytes
 * of a row either way), issued asynchronously; wgmma.wait_group WAITN lets one slice's products run while
 * the next slice's barrier and copies are issued (the ring then prefetches STAGES - 1 - WAITN slices
 * ahead, the slot it refills being one no wgmma still reads).
 *
 * Local layout: wgmma's swizzled K-major layout. A tile of R rows x BK elements stores row r at r * ROWB
 * (ROWB = BK x element size: 32, 64 or 128 bytes) with its 16-byte chunk c at chunk c ^ ((r >> SWZ_SHIFT) & (KC - 1)),
 * the hardware's 32B / 64B / 128B swizzle (address bits 4.. XORed with bits 7..), so the tiles start at
 * 1024-byte boundaries. The descriptor of a k step points at its row group + 32 j bytes; stride byte
 * offset = 8 rows. Measured against the unswizzled "interleaved" layout (core matrices of 8 rows x 16
 * bytes, no XOR) in one H200 run, 8192^3: 199 vs 80 TFLOP/s (BK 16), 136 vs 108 (BK 8) (why was not
 * measured; conflicts in wgmma's operand reads are the likely cause). The copies walk a row's chunks with
 * consecutive items, so a quarter-warp writes 128 contiguous bytes (permuted within), conflict-free.
 *
 * Grid: (n tiles * WG, m tiles, batch), local (WG, 1, 1), WG = 128 * WGS. Packed A and B come as A and
 * B in GEMM_ARGS (offs.x / offs.y their starts, strides.x / strides.y their batch strides, lda = ldb =
 * Kp, dims.z = Kp); C, bias and residual as in common/gemm_common.h.
 * -D contract: WGS, MT, BK, STAGES, WAITN, RING_LIMIT (bytes, default 48 KiB), plus IDX64, ACT, IN16 and
 * OUT16 of common/gemm_common.h. */

#ifndef WGS
#define WGS 2
#endif
#ifndef MT
#define MT 1
#endif
#ifndef BK
#define BK 16
#endif
#ifndef STAGES
#define STAGES 3
#endif
#ifndef WAITN
#define WAITN 0
#endif

#if IN16
#define ESZ 2 /* bytes per operand element */
#else
#define ESZ 4
#endif
#define WG (128 * WGS)
#define BM (64 * MT * WGS)
#define BN 128
#define ROWB (BK * ESZ)  /* bytes per tile row */
#include "common/wgmma.h"

#define A_BYTES (BM * ROWB)
#define STAGE_BYTES ((BM + BN) * ROWB)
#define PD (STAGES - 1 - WAITN) /* slices in flight ahead of the one multiplied */

#ifndef RING_LIMIT
#define RING_LIMIT 49152 /* NVIDIA's OpenCL: 48 KiB of local memory per group */
#endif
#if STAGE_BYTES * STAGES > RING_LIMIT
#error "the ring must fit the local memory of a group"
#endif
#if PD < 1
#error "STAGES - 1 - WAITN must be at least 1"
#endif

static inline __attribute__((always_inline)) void wgmma_cp16(uint dst, __global const gemm_in_t *src)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src) : "memory");
}

/* Slice k0 of an R-row packed operand (row stride Kp) into the tile at local address t. */
static inline __attribute__((always_inline)) void wgmma_copy_tile(uint t, __global const gemm_in_t *P, int R,
                                                                  idx_t Kp, int k0, int lid)
{
#pragma unroll
    for (int q = lid; q < R * KC; q += WG) {
        int r = q / KC, c = q % KC;
        wgmma_cp16(t + r * ROWB + (wgmma_chunk(c, r) << 4), P + (idx_t)r * Kp + k0 + c * EPC);
    }
}

static inline __attribute__((always_inline)) void wgmma_copy_slice(uint stage, __global const gemm_in_t *A,
                                                                   __global const gemm_in_t *B, idx_t Kp, int k0,
                                                                   int lid)
{
    wgmma_copy_tile(stage, A, BM, Kp, k0, lid);
    wgmma_copy_tile(stage + A_BYTES, B, BN, Kp, k0, lid);
}

static inline __attribute__((always_inline)) void wgmma_commit_copies(void)
{
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}

/* The slice multiplied next has landed: at most PD - 1 younger copy groups still pending. */
#if PD == 1
#define WGMMA_COPIES_PENDING "0"
#elif PD == 2
#define WGMMA_COPIES_PENDING "1"
#elif PD == 3
#define WGMMA_COPIES_PENDING "2"
#elif PD == 4
#define WGMMA_COPIES_PENDING "3"
#elif PD == 5
#define WGMMA_COPIES_PENDING "4"
#else
#error "STAGES too deep"
#endif

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void gemm_wgmma(GEMM_ARGS)
{
    __local float4 ring[STAGES * STAGE_BYTES / 16] __attribute__((aligned(1024)));
    GEMM_SETUP(get_group_id(2));
    const uint base = (uint)(size_t)ring;
    const int lid = get_local_id(0), wg = lid >> 7;
    const int m0 = get_group_id(1) * BM, n0 = get_group_id(0) * BN;
    const idx_t Kp = lda;
    const __global gemm_in_t *At = A + (idx_t)m0 * Kp, *Bt = B + (idx_t)n0 * Kp;
    const int slices = K / BK;

    float d[64 * MT];
#pragma unroll
    for (int i = 0; i < 64 * MT; i++)
        d[i] = 0.0f;

    for (int s = 0; s < PD; s++) {
        if (s < slices)
            wgmma_copy_slice(base + s * STAGE_BYTES, At, Bt, Kp, s * BK, lid);
        wgmma_commit_copies();
    }
    for (int t = 0; t < slices; t++) {
        asm volatile("cp.async.wait_group " WGMMA_COPIES_PENDING ";\n" ::: "memory");
        /* the copies are generic-proxy writes; wgmma reads through the async proxy */
        asm volatile("//SM90A fence.proxy.async.shared::cta;\n" ::: "memory");
        barrier(CLK_LOCAL_MEM_FENCE);
        /* the slot of slice t - 1 - WAITN: every item has waited for those products */
        int tn = t + PD;
        if (tn < slices)
            wgmma_copy_slice(base + (tn % STAGES) * STAGE_BYTES, At, Bt, Kp, tn * BK, lid);
        wgmma_commit_copies();
        uint st = base + (t % STAGES) * STAGE_BYTES;
        asm volatile("//SM90A wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
        for (int j = 0; j < ROWB / 32; j++) {
            ulong db = wgmma_desc(st + A_BYTES + j * 32);
#pragma unroll
            for (int i = 0; i < MT; i++)
                wgmma_m64n128(d + 64 * i, wgmma_desc(st + (wg * MT + i) * 64 * ROWB + j * 32), db);
        }
        asm volatile("//SM90A wgmma.commit_group.sync.aligned;\n" ::: "memory");
        asm volatile("//SM90A wgmma.wait_group.sync.aligned " WGMMA_STR(WAITN) ";\n" ::: "memory");
    }
    asm volatile("//SM90A wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    asm volatile("cp.async.wait_all;\n" ::: "memory");

    wgmma_store(d, MT, m0 + wg * MT * 64, n0, M, N, C, ldc, &epi);
}
