/* Double references for the training ops: the formulas of cltensor_train.h, nothing clever. */
#include "ref/train_ref.h"

#include <math.h>

void ref_adam_step(int64_t n, double *param, const double *grad, double *m, double *v, double lr,
                   double beta1, double beta2, double eps, double weight_decay, int64_t step)
{
    double bc1 = 1.0 - pow(beta1, (double)step), bc2 = 1.0 - pow(beta2, (double)step);
    for (int64_t i = 0; i < n; i++) {
        double g = grad[i] + weight_decay * param[i];
        m[i] = beta1 * m[i] + (1.0 - beta1) * g;
        v[i] = beta2 * v[i] + (1.0 - beta2) * g * g;
        param[i] -= lr / bc1 * m[i] / (sqrt(v[i]) / sqrt(bc2) + eps);
    }
}

double ref_mse(int64_t n, const float *pred, const float *target)
{
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double d = (double)pred[i] - (double)target[i];
        s += d * d;
    }
    return n ? s / (double)n : NAN;
}

void ref_fourier(int64_t n, int64_t d, int64_t f, const float *x, const float *B, double scale,
                 double *out)
{
    for (int64_t r = 0; r < n; r++)
        for (int64_t c = 0; c < f; c++) {
            double dot = 0.0;
            for (int64_t k = 0; k < d; k++)
                dot += (double)x[r * d + k] * (double)B[k * f + c];
            out[r * 2 * f + c] = sin(scale * dot);
            out[r * 2 * f + f + c] = cos(scale * dot);
        }
}
