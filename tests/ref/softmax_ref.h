/* Plain-C references for softmax / log-softmax over the last axis and their backward passes,
 * computed in double from float inputs. */
#ifndef CLT_SOFTMAX_REF_H
#define CLT_SOFTMAX_REF_H

#include <stddef.h>

/* out[r*n + i] = softmax (log_form = 0) or log-softmax (log_form = 1) of row r, by the plain
 * formula with the row max subtracted (a NaN row, an all -inf row or +inf give NaN as that does). */
void ref_softmax(const float *x, double *out, size_t rows, size_t n, int log_form);

/* Backward from the forward output y: softmax dx = y (dy - sum(dy y)); log-softmax
 * dx = dy - exp(y) sum(dy). scale (may be NULL) receives each element's error scale: the same
 * formula with every term replaced by its absolute value, which bounds the rounding error of any
 * evaluation order up to a factor of the working precision. */
void ref_softmax_backward(const float *y, const float *dy, double *dx, double *scale, size_t rows,
                          size_t n, int log_form);

#endif
