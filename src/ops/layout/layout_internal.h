/* What the layout family's files share: the checks of a data-moving op and the launch of a
 * strided-box kernel. Internal. */
#ifndef CLT_LAYOUT_INTERNAL_H
#define CLT_LAYOUT_INTERNAL_H

#include "cltensor_layout.h"
#include "ops/common/strided.h"

#define CLT__LAYOUT_FAMILY "layout"

/* CLT_ERR_INVALID_DTYPE unless t is a 4-byte dtype (f32, i32). */
clt_status clt__layout_check_4byte(const char *who, const clt_tensor *t, const char *name);
/* x and out: same dtype (4 bytes), no overlap. */
clt_status clt__layout_check_pair(const char *who, const clt_tensor *x, const char *xn,
                                  const clt_tensor *out, const char *on);
/* Normalise an axis in [-n, n) to [0, n): CLT_ERR_INVALID_AXIS otherwise. */
clt_status clt__layout_axis(const char *who, const clt_context *ctx, int axis, int n, int *out);

/* Run kernel `name` of the layout family over box s (count items), dst and src buffers. */
clt_status clt__layout_run(clt_context *ctx, const char *name, cl_mem dst, cl_mem src,
                           const clt__sd *s, const char *who);

/* layout_cpu.cl's layout_copy_rows and layout_pad_rows: consecutive rows per work
 * item (the kernels' LT_ROWS_PER_ITEM) */
#define LT_ROWS_PER_ITEM 8

/* layout_join4_x4's launch: LT_JOIN_ILP 16-byte units per work item and grid pass (layout.cl),
 * over a grid of at most LT_JOIN_GROUPS_PER_CU groups per compute unit (one resident wave of
 * 256-item groups, 2048 items, on an H200 SM). H200, concat3_last/8x1024x256 (50 MB moved):
 * 14.5-14.7 us with one unit per item and a full grid, 14.1-14.3 with 2 or 4 units, 13.2-14.0
 * with 2 units and this cap or 4 and half of it (PyTorch 14.1). CLT_JOIN_ILP (1, 2, 4, 8) and
 * CLT_JOIN_GROUPS_PER_CU (0: no cap) override them for A/B runs. */
#define LT_JOIN_ILP 2
#define LT_JOIN_GROUPS_PER_CU 8u
int clt__join_ilp(void);
uint64_t clt__join_groups_per_cu(void);
const char *clt__join_options(int ilp);

#endif
