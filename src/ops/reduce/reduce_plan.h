/* Axis analysis shared by the reductions: which elements each output reduces, in the canonical
 * form the reduce kernel reads (see cl_kernels/reduce/reduce.cl). Internal. */
#ifndef CLT_REDUCE_PLAN_H
#define CLT_REDUCE_PLAN_H

#include "cltensor_ops.h"
#include "tensor/tensor.h"

/* Kernel layouts (-DLAYOUT of reduce.cl). */
enum {
    CLT__RED_ROWS = 0,      /* [outer, R]: the reduced axes are the last ones */
    CLT__RED_COLS = 1,      /* [outer, R, inner], inner > 1 */
    CLT__RED_GEN_LANES = 2, /* general, the innermost dim is reduced */
    CLT__RED_GEN_OUTS = 3   /* general, the innermost dim is kept */
};

typedef struct clt__reduce_plan {
    int64_t outputs;   /* O: number of results (product of kept dims) */
    int64_t length;    /* R: elements per result (product of reduced dims) */
    int64_t inner;     /* CLT__RED_COLS: product of the kept dims after the reduced block */
    int layout;
    /* general layouts: kept and reduced dims after merging, innermost first, padded with 1 / 0 */
    uint64_t kept_dims[4], kept_strides[4], red_dims[4], red_strides[4];
    int64_t innermost_kept; /* size of the innermost kept (merged) dim, 1 if none */
    int out_ndim;
    int64_t out_shape[CLT_MAX_DIMS];
} clt__reduce_plan;

/* Normalise axes (naxes == 0 or axes == NULL: all; negative count from the end; each in range and
 * distinct, else CLT_ERR_INVALID_AXIS naming the axis) and build the plan, including out's shape
 * for keepdim. naxes < 0 is CLT_ERR_INVALID_ARGUMENT. `who` names the public call. */
clt_status clt__reduce_plan_make(const char *who, const clt_tensor *x, int naxes, const int *axes,
                                 int keepdim, clt__reduce_plan *plan);

/* clt_reduce(op, ...) with messages naming `who`: the single-launch reduction, for other op
 * families (global average pooling is MEAN over axes {2, 3}). */
clt_status clt__reduce_as(const char *who, clt_reduce_op op, const clt_tensor *x, int naxes,
                          const int *axes, int keepdim, clt_tensor *out);

/* out[i] = sum over r < R of x[r * O + i], O = out's element count, x and out f32, contiguous from
 * their offsets and already checked by the caller (`who`): a sum over leading axes (a bias
 * gradient), the column layout of the single-launch reduction, whose chunk groups spread long
 * columns over the whole device. */
clt_status clt__reduce_sum_leading(const char *who, const clt_tensor *x, uint64_t R, clt_tensor *out);

/* "[2, 3, 4]" into buf. */
void clt__format_shape(char *buf, size_t size, int ndim, const int64_t *shape);

#endif
