/* Plain-C double references for the training ops (include/cltensor_train.h). */
#ifndef CLT_REF_TRAIN_REF_H
#define CLT_REF_TRAIN_REF_H

#include <stdint.h>

/* torch.optim.Adam on n elements, in place, in double. */
void ref_adam_step(int64_t n, double *param, const double *grad, double *m, double *v, double lr,
                   double beta1, double beta2, double eps, double weight_decay, int64_t step);
/* mean((pred - target)^2) over n elements (NaN for n == 0). */
double ref_mse(int64_t n, const float *pred, const float *target);
/* out [n, 2f] = [sin(scale * x B), cos(scale * x B)], x [n, d], B [d, f]. */
void ref_fourier(int64_t n, int64_t d, int64_t f, const float *x, const float *B, double scale,
                 double *out);

#endif
