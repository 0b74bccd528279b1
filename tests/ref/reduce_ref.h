/* Plain-C references for the reductions, computed in double. */
#ifndef CLT_REDUCE_REF_H
#define CLT_REDUCE_REF_H

#include <stdint.h>

/* Reference op codes: 0..6 are clt_reduce_op; then argmax and argmin. */
#define REF_ARGMAX 7
#define REF_ARGMIN 8

/* Reduce x (row-major, `shape`) over the dims with reduced[d] != 0. Outputs are in row-major order
 * of the kept dims. val[o]: the result (for arg ops the index along the reduced dims, as a double;
 * -1 for an empty reduction). scale[o], when not NULL: the magnitude the rounding error scales
 * with: sum |x| (SUM, MEAN: divided by n), sum x^2 (L2NORM: its root), the variance (VAR), 0 else.
 * Returns the number of outputs. NaN rules: SUM/MEAN/VAR/L2 follow IEEE, MAX/MIN give NaN when
 * any element is NaN, argmax/argmin pick the first NaN, else the first extreme value. */
int64_t ref_reduce(int op, const float *x, int ndim, const int64_t *shape, const int *reduced,
                   double *val, double *scale);

#endif
