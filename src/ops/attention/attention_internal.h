/* What the attention family's files share: tile sizes per kernel and the device table that picks
 * them. Internal. */
#ifndef CLT_ATTENTION_INTERNAL_H
#define CLT_ATTENTION_INTERNAL_H

#include "runtime/runtime.h"

/* The three kernels of cl_kernels/attention/attention.cl. */
typedef enum att_kernel { ATT_FWD = 0, ATT_BWD_DQ = 1, ATT_BWD_DKDV = 2, ATT_KERNELS = 3 } att_kernel;

/* Tile sizes of one kernel: bm query rows, bn key rows per tile (the group size is bm for the
 * forward and dQ kernels, bn for dK/dV). */
typedef struct att_tiles {
    unsigned bm, bn;
} att_tiles;

/* The tiles kernel `which` uses for head_dim d on ctx: the device table's entry, or
 * CLT_ATTENTION_TILES from the environment, then halved until the local memory fits the context's
 * budget and the group its work-group limit. */
att_tiles clt__attention_tiles(const clt_context *ctx, att_kernel which, int d);

/* Local memory bytes kernel `which` needs with tiles t at head_dim d. */
size_t clt__attention_local_bytes(att_kernel which, int d, att_tiles t);

/* The group size of kernel `which` under tiles t. */
unsigned clt__attention_group(att_kernel which, att_tiles t);

/* Row kernels (attention.cl: one row per item) or micro-tiled ones (attention_tiled.cl). */
typedef enum att_impl { ATT_IMPL_ROWS = 0, ATT_IMPL_TILED = 1 } att_impl;

/* Tiles of a micro-tiled kernel: br own rows per group, bc stream rows per tile, tr x tc rows per
 * item in the score tile (attention_tiled.cl's ATT_BR, ATT_BC, ATT_TR, ATT_TC). */
typedef struct att_mtiles {
    unsigned br, bc, tr, tc;
} att_mtiles;

/* CLT_ATTENTION_IMPL=rows|tiled, else tiled except on CPU devices. */
att_impl clt__attention_impl(const clt_context *ctx);

/* The micro-tiles kernel `which` uses for head_dim d on ctx (CLT_ATTENTION_TILED_TILES when it is
 * valid and fits, else the table's entry shrunk to the limits): 1, or 0 when none fits. */
int clt__attention_mtiles(const clt_context *ctx, att_kernel which, int d, att_mtiles *out);

/* Local memory bytes and group size of a micro-tiled kernel. */
size_t clt__attention_tiled_local_bytes(att_kernel which, int d, att_mtiles t);
unsigned clt__attention_tiled_group(att_mtiles t);

/* The build options of micro-tiled kernel `which` (attention.c and the kernel variant list share
 * them): the tiles, the head dimension, the alignment and unroll switches, and the fixed-group
 * option of the context (program.h). */
void clt__attention_tiled_options(const clt_context *ctx, att_kernel which, int d, att_mtiles m,
                                  int aligned, int unroll, char *buf, size_t cap);

/* The backward pass's dQ on the micro-tiled path: its own kernel recomputing S and dP
 * (attention_tiled_bwd_dq), or added by the dK/dV kernel in key-group order after a row-delta
 * kernel (ATT_DQ_FUSED; attention_tiled.cl explains both). */
typedef enum att_dq_mode { ATT_DQ_SEPARATE = 0, ATT_DQ_FUSED = 1 } att_dq_mode;

/* CLT_ATTENTION_DQ=separate|fused, else fused wherever the dK/dV tiles allow it (br == bc). */
att_dq_mode clt__attention_dq_mode(att_mtiles dkdv);

/* Build options of the fused backward's two kernels: the dK/dV kernel with ATT_DQ_FUSED=1
 * (delta = 0) or the row-delta kernel (delta = 1), both with the dK/dV kernel's tiles. */
void clt__attention_fused_options(const clt_context *ctx, int delta, int d, att_mtiles dkdv,
                                  int aligned, int unroll, char *buf, size_t cap);

/* Group size of the row-delta kernel (attention_tiled.cl's DELTA_GROUP) and rows per group. */
#define ATT_DELTA_GROUP 256u
#define ATT_DELTA_ROWS 16u

#endif
