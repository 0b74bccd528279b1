/* The CNN of bench/model_cnn.h in double: the reference of tests/models/check_cnn.c (same flat
 * parameter layout). */
#ifndef CLT_CNN_REF_H
#define CLT_CNN_REF_H

#include "model_cnn.h"

/* One SGD step in double on images x [batch, 3, 16, 16] and labels [batch]; returns the loss
 * before the update. */
double ref_cnn_step(double *params, const float *x, const int32_t *labels, int batch, double lr);

#endif
