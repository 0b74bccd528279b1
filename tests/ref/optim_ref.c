/* Double references for the optimisers: torch.optim's update rules as written in its docs. */
#include "ref/optim_ref.h"

#include <math.h>

void ref_adamw_step(int64_t n, double *param, const double *grad, double *m, double *v, double lr,
                    double beta1, double beta2, double eps, double weight_decay, int64_t step)
{
    double bc1 = 1 - pow(beta1, (double)step), bc2 = 1 - pow(beta2, (double)step);
    for (int64_t i = 0; i < n; i++) {
        param[i] *= 1 - lr * weight_decay;
        m[i] = beta1 * m[i] + (1 - beta1) * grad[i];
        v[i] = beta2 * v[i] + (1 - beta2) * grad[i] * grad[i];
        double mhat = m[i] / bc1, vhat = v[i] / bc2;
        param[i] -= lr * mhat / (sqrt(vhat) + eps);
    }
}

void ref_sgd_step(int64_t n, double *param, const double *grad, double *buf, double lr, double momentum,
                  double dampening, double weight_decay, int nesterov, int64_t step)
{
    for (int64_t i = 0; i < n; i++) {
        double g = grad[i] + weight_decay * param[i];
        if (momentum != 0) {
            buf[i] = step == 1 ? g : momentum * buf[i] + (1 - dampening) * g;
            g = nesterov ? g + momentum * buf[i] : buf[i];
        }
        param[i] -= lr * g;
    }
}

double ref_clip_grad_norm(int64_t n, double *grad, double max_norm)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++)
        s += grad[i] * grad[i];
    double norm = sqrt(s), coef = max_norm / (norm + 1e-6);
    if (coef < 1)
        for (int64_t i = 0; i < n; i++)
            grad[i] *= coef;
    return norm;
}
