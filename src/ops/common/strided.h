/* Host side of the strided index description the layout and index kernels take as one by-value
 * argument (cl_kernels/common/strided.h explains the fields), and the argument checks those
 * families share. Internal. */
#ifndef CLT_OPS_STRIDED_H
#define CLT_OPS_STRIDED_H

#include "runtime/runtime.h"
#include "tensor/tensor.h"

#define CLT__SD_MAX 8

/* Mirror of the kernels' clt_sd: all fields 64-bit, same order. */
typedef struct clt__sd {
    int64_t ndim, count, a_off, b_off, e0, e1;
    int64_t shape[CLT__SD_MAX];
    int64_t a[CLT__SD_MAX];
    int64_t b[CLT__SD_MAX];
    int64_t c[CLT__SD_MAX];
    int64_t d[CLT__SD_MAX];
    int64_t e[CLT__SD_MAX];
} clt__sd;

/* Row-major strides (elements) of a shape. */
void clt__contiguous_strides(int ndim, const int64_t *shape, int64_t *strides);

/* Drop size-1 axes and merge neighbours that are contiguous in both A and B (a[d] == a[d+1] *
 * shape[d+1] and the same for b), so the kernels divide less. Only for descriptions whose c..e
 * extras are unused. */
void clt__sd_coalesce(clt__sd *s);

/* The first non-NULL tensor's context, for messages about NULL arguments. */
clt_context *clt__first_ctx(int n, const clt_tensor *const *t);
/* CLT_ERR_INVALID_ARGUMENT naming the first NULL tensor (names[i]), CLT_ERR_CONTEXT_MISMATCH when
 * they belong to different contexts. */
clt_status clt__check_handles(const char *who, int n, const clt_tensor *const *t,
                              const char *const *names);
/* CLT_ERR_INVALID_DTYPE unless t has dtype want. */
clt_status clt__check_dtype(const char *who, const clt_tensor *t, const char *name, clt_dtype want);
/* "[2, 3, 4]" into buf. */
void clt__shape_text(int ndim, const int64_t *shape, char *buf, size_t cap);
/* CLT_ERR_INVALID_SHAPE unless t has exactly the shape (ndim, shape); the message gives both. */
clt_status clt__check_shape(const char *who, const clt_tensor *t, const char *name, int ndim,
                            const int64_t *shape);
/* CLT_ERR_ALIASING when out shares bytes with in. */
clt_status clt__check_no_overlap(const char *who, const clt_tensor *in, const char *in_name,
                                 const clt_tensor *out, const char *out_name);

/* Set arguments (dst buffer, src buffer, the description by value, then `nextra` more) and launch
 * kernel over s->count items in a 1-D grid. Buffers: dst and src may be the same cl_mem. */
clt_status clt__sd_set_args(clt_context *ctx, cl_kernel k, cl_mem dst, cl_mem src, const clt__sd *s,
                            const char *who);

/* Copy box s (src strides a, dst strides b; s is coalesced in place) with the layout family's generic
 * or tiled transpose kernel (ops/layout/layout_common.c); for any family that moves 4-byte elements
 * between layouts (the channels-last Conv2D forward). */
clt_status clt__layout_copy(clt_context *ctx, cl_mem dst, cl_mem src, clt__sd *s, const char *who);

#endif
