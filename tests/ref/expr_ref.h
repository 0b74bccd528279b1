/* Reference evaluation of elementwise expressions on the host, in double, with NumPy broadcasting.
 * Reads the expression's internal nodes (src/ops/elementwise/expr.h). */
#ifndef CLT_REF_EXPR_REF_H
#define CLT_REF_EXPR_REF_H

#include <stdint.h>

#include "cltensor_all.h"
#include "ops/elementwise/expr.h"

typedef struct host_tensor {
    int ndim;
    int64_t shape[CLT_MAX_DIMS];
    int64_t numel;
    float *data; /* heap; NULL for "no tensor" */
} host_tensor;

/* Fresh uniform values in [lo, hi) (tu_random_f32). data is NULL only when out of memory. */
host_tensor host_random(int ndim, const int64_t *shape, float lo, float hi);
void host_free(host_tensor *h, int n);
/* Element of h read at linear index i of a tensor of shape (ndim, shape), h broadcast to it. */
double bcast_at(const host_tensor *h, int ndim, const int64_t *shape, int64_t i);
/* Node root of e on one element: in[k] = input k's value, sc = the scalars. */
double ref_eval(const clt_expr *e, int root, const double *in, const float *sc);
/* |got - ref| <= rtol * |ref| + atol; NaN matches NaN, infinities must match exactly. */
int close_enough(double got, double ref, double rtol, double atol);

#endif
