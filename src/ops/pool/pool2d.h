/* Pooling internals shared by pool2d*.c: the checks beyond conv_geometry.h's and the launch of one
 * pool2d.cl kernel. Internal. */
#ifndef CLT_POOL2D_H
#define CLT_POOL2D_H

#include "ops/common/conv_geometry.h"
#include "ops/common/launch.h"

typedef struct clt__pool_geom {
    int64_t n, c, h, w;   /* x / dx [n, c, h, w] */
    int64_t ho, wo;       /* out / dy [n, c, ho, wo] */
    int64_t kh, kw, sh, sw, pt, pb, pl, pr;
} clt__pool_geom;

/* Validate p against an input of shape x (4-D, from clt__conv_shape4) and fill g.
 * CLT_ERR_INVALID_ARGUMENT: p NULL, kernel or stride < 1, padding < 0 or >= the kernel on its axis.
 * CLT_ERR_INVALID_SHAPE: negative dimensions, output < 1. CLT_ERR_SIZE_OVERFLOW: an (n, c) plane of
 * 2^31 elements or more (kernels index planes in int, indices are i32). */
clt_status clt__pool_geom_make(const clt_context *ctx, const char *who, const int64_t x[4],
                               const clt_pool2d_params *p, clt__pool_geom *g);

/* t is non-NULL, of ctx, i32 and exactly shape (the max-pooling indices). */
clt_status clt__pool_check_indices(const clt_context *ctx, const char *who, const clt_tensor *t,
                                   const int64_t shape[4]);

/* CLT_ERR_ALIASING naming both when a (an output) overlaps b (b may be NULL). */
clt_status clt__pool_check_overlap(const clt_context *ctx, const char *who, const clt_tensor *a,
                                   const char *a_name, const clt_tensor *b, const char *b_name);

/* The int16 geometry argument of pool2d.cl: {H, W, Ho, Wo, KH, KW, SH, SW, PT, PL, flag, magic
 * numbers of the division by cols, then by rows}; cols x rows is Wo x Ho forward, W x H backward. */
cl_int16 clt__pool_kernel_geometry(const clt__pool_geom *g, int flag, int backward);

/* Set kernel `name` of pool2d.cl's (pool2d_cpu.cl's when it ends in "_cpu") arguments: the buffers of ts (nbuf of them, in order; a NULL
 * entry passes ts[0]'s buffer, never touched), then g (unless NULL) and o = {items, the buffers'
 * element offsets}, and launch `items` work items. items == 0 enqueues nothing. */
clt_status clt__pool_launch(clt_context *ctx, const char *who, const char *name,
                            const clt_tensor *const *ts, int nbuf, const cl_int16 *g, uint64_t items,
                            uint64_t extra);

#endif
