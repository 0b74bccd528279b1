/* Plain-C double references for SGD, AdamW and clip_grad_norm (include/cltensor_train.h). */
#ifndef CLT_REF_OPTIM_REF_H
#define CLT_REF_OPTIM_REF_H

#include <stdint.h>

/* torch.optim.AdamW on n elements, in place: param *= 1 - lr wd, then Adam without L2. */
void ref_adamw_step(int64_t n, double *param, const double *grad, double *m, double *v, double lr,
                    double beta1, double beta2, double eps, double weight_decay, int64_t step);
/* torch.optim.SGD on n elements, in place (buf may be NULL when momentum is 0). */
void ref_sgd_step(int64_t n, double *param, const double *grad, double *buf, double lr, double momentum,
                  double dampening, double weight_decay, int nesterov, int64_t step);
/* torch.nn.utils.clip_grad_norm_ (norm 2) over the concatenation of n values; returns the norm. */
double ref_clip_grad_norm(int64_t n, double *grad, double max_norm);

#endif
