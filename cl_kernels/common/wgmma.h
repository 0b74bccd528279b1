/* What the wgmma GEMM kernels share (gemm/gemm_wgmma.cl: operands staged by cp.async;
 * gemm/gemm_wgmma_bulk.cl: by bulk copies): the swizzled K-major local layout wgmma reads
 * (common/wgmma_layout.h), its shared-memory descriptor, and the m64n128 multiply-accumulate. Hopper (sm_90a) only: the wgmma
 * lines are "//SM90A " asm comments that src/program/sm90a_build.c turns into instructions.
 *
 * The includer defines ROWB, ESZ and IN16 (0: TF32 products, k8 a step; 1 / 2: f16 / bf16, k16). */
#ifndef CLT_WGMMA_H
#define CLT_WGMMA_H

#include "common/gemm_common.h"
#include "common/wgmma_layout.h"

#define WGMMA_STR2(x) #x
#define WGMMA_STR(x) WGMMA_STR2(x)

/* wgmma shared-memory descriptor of a swizzled K-major operand whose first row (of 64 or 128) is at local
 * address addr: leading byte offset unused (1), stride byte offset 8 rows, the swizzle mode. */
static inline __attribute__((always_inline)) ulong wgmma_desc(uint addr)
{
    return (ulong)((addr >> 4) & 0x3FFF) | (1ul << 16) | ((ulong)((8 * ROWB) >> 4) << 32) | (SWZ_MODE << 62);
}

#define F8(b) "+f"(d[b]), "+f"(d[b + 1]), "+f"(d[b + 2]), "+f"(d[b + 3]), "+f"(d[b + 4]), "+f"(d[b + 5]), \
              "+f"(d[b + 6]), "+f"(d[b + 7])

/* One k step: k8 TF32 or k16 f16 / bf16 (then with both operands K-major: transpose flags 0). */
#if IN16 == 0
#define WGMMA_SHAPE "m64n128k8.f32.tf32.tf32"
#define WGMMA_TAIL "p, 1, 1;"
#elif IN16 == 1
#define WGMMA_SHAPE "m64n128k16.f32.f16.f16"
#define WGMMA_TAIL "p, 1, 1, 0, 0;"
#else
#define WGMMA_SHAPE "m64n128k16.f32.bf16.bf16"
#define WGMMA_TAIL "p, 1, 1, 0, 0;"
#endif

/* d[0..63] += A (64 x k, descriptor da) * B (k x 128, descriptor db); d[4i + e]: row 16 warp + lane / 4
 * (+ 8 for e >= 2), column 8i + 2 (lane % 4) + (e & 1). */
static inline __attribute__((always_inline)) void wgmma_m64n128(float *d, ulong da, ulong db)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
                 "//SM90A wgmma.mma_async.sync.aligned." WGMMA_SHAPE " "
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
                 "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"
                 "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"
                 "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, %64, %65, " WGMMA_TAIL "\n}\n"
                 : F8(0), F8(8), F8(16), F8(24), F8(32), F8(40), F8(48), F8(56)
                 : "l"(da), "l"(db));
}

/* The same for a k x 64 B (descriptor db): d[0..31], d[4i + e] at column 8i + 2 (lane % 4) + (e & 1). */
#if IN16 == 0
#define WGMMA_SHAPE64 "m64n64k8.f32.tf32.tf32"
#elif IN16 == 1
#define WGMMA_SHAPE64 "m64n64k16.f32.f16.f16"
#else
#define WGMMA_SHAPE64 "m64n64k16.f32.bf16.bf16"
#endif
static inline __attribute__((always_inline)) void wgmma_m64n64(float *d, ulong da, ulong db)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
                 "//SM90A wgmma.mma_async.sync.aligned." WGMMA_SHAPE64 " "
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
                 "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, %32, %33, " WGMMA_TAIL "\n}\n"
                 : F8(0), F8(8), F8(16), F8(24)
                 : "l"(da), "l"(db));
}

/* A warpgroup's accumulators to C through the fused epilogue: block i of d (d[64 i ..], i < nblk, a
 * compile-time count) holds tile rows row0 + 64 i .. + 63 at columns col0 .. col0 + 127; rows >= M and
 * columns >= N are not written. */
static inline __attribute__((always_inline)) void wgmma_store(const float *d, const int nblk, int row0, int col0,
                                                              int M, int N, __global gemm_out_t *C, idx_t ldc,
                                                              const gemm_epi *epi)
{
    const int lane = get_local_id(0) & 31, w = (get_local_id(0) >> 5) & 3;
#pragma unroll
    for (int i = 0; i < nblk; i++) {
        const int r0 = row0 + i * 64 + w * 16 + (lane >> 2);
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int row = r0 + 8 * h;
            if (row >= M)
                continue;
#pragma unroll
            for (int j = 0; j < 16; j++) {
                const int col = col0 + j * 8 + (lane & 3) * 2;
                if (col < N)
                    gemm_store1(C, ldc, epi, d[64 * i + 4 * j + 2 * h], row, col);
                if (col + 1 < N)
                    gemm_store1(C, ldc, epi, d[64 * i + 4 * j + 2 * h + 1], row, col + 1);
            }
        }
    }
}

#endif
