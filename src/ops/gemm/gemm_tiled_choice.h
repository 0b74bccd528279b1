/* Tile and split-K choice of our tiled GEMM (gemm_tiled_choice.c). Internal. */
#ifndef CLT_GEMM_TILED_CHOICE_H
#define CLT_GEMM_TILED_CHOICE_H

#include <stdint.h>

#include "ops/gemm/gemm.h"
#include "ops/gemm/gemm_params.h"

/* Split-K limits: must match cl_kernels/gemm/gemm_tiled.cl (SPLIT_COUNTERS); each piece gets at least
 * MIN_SPLIT_STEPS k slices, so the partial tiles' traffic stays small next to the products. */
#define SPLIT_COUNTERS 4096
#define MIN_SPLIT_STEPS 4
/* Tiles this big (MWG * NWG) are never split by the automatic choice (gemm_tiled_choice.c); only
 * the forced switches (CLT_GEMM_VARIANT=tiled:<i>:<pieces>, k segments of A) split them, and
 * bigger ones not at all where a smaller config can take the split (gemm_tiled.c try_tiled):
 * NVIDIA's 256x128 split kernel took 255 registers and spilled 1104 B on the H200 (ptxas via
 * clt-kernels --nv-report) where its unsplit form does not, so its splits run on 128x128. */
#define SPLIT_MAX_TILE (128 * 128)
#define MAX_PIECES 128 /* the 7x7 stem grad-weight (5 tiles of 64x32): 128 pieces measured best */

/* Whether config c fits ctx's local memory and work-group limits. */
int clt__gemm_tiled_fits(const clt_context *ctx, const clt__gemm_tiled_cfg *c);
/* Work-groups of c's tile grid over p (batch included). */
uint64_t clt__gemm_tile_groups(const clt__gemm_problem *p, const clt__gemm_tiled_cfg *c);
/* The config index of table t to start from, and the k pieces for it (1: unsplit). */
int clt__gemm_choose_tiled(const clt_context *ctx, const clt__gemm_problem *p,
                           const clt__gemm_table *t, int *pieces);

#endif
