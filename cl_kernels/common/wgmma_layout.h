/* The swizzled K-major local layout Hopper's wgmma reads (common/wgmma.h's kernels) and the pack kernel
 * that lays operands out in it ahead of time (gemm/gemm_wgmma_pack.cl, PACK_TILED). No wgmma code here,
 * so a program including only this is not an sm_90a build.
 *
 * Layout: a tile of rows x ROWB bytes (ROWB = 32, 64 or 128: BK elements of ESZ bytes) stores row r at
 * r * ROWB with its 16-byte chunk c at chunk wgmma_chunk(c, r) = c ^ ((r >> SWZ_SHIFT) & (KC - 1)),
 * the hardware's 32B / 64B / 128B swizzle (address bits 4.. XORed with bits 7..), so a tile starts
 * at a 1024-byte boundary (or a multiple of its 8-row repeat inside one).
 * The includer defines ROWB (bytes per tile row) and ESZ (bytes per element). */
#ifndef CLT_WGMMA_LAYOUT_H
#define CLT_WGMMA_LAYOUT_H

#define KC (ROWB / 16)  /* 16-byte chunks per tile row */
#define EPC (16 / ESZ)  /* elements per chunk */

#if KC == 8
#define SWZ_SHIFT 0
#define SWZ_MODE 1ul /* 128B */
#elif KC == 4
#define SWZ_SHIFT 1
#define SWZ_MODE 2ul /* 64B */
#elif KC == 2
#define SWZ_SHIFT 2
#define SWZ_MODE 3ul /* 32B */
#else
#error "BK x the element size must be 32, 64 or 128 bytes"
#endif

/* The chunk where logical chunk c of tile row r is stored. */
static inline __attribute__((always_inline)) int wgmma_chunk(int c, int r)
{
    return c ^ ((r >> SWZ_SHIFT) & (KC - 1));
}

#endif
