/* Double references for the losses: straight from the definitions (log_softmax in double, the
 * gradient as d/dz of the written loss). */
#include "ref/loss_ref.h"

#include <math.h>
#include <stdlib.h>

void ref_cross_entropy(int64_t R, int64_t K, const double *z, const int32_t *tidx, const double *prob,
                       double smoothing, int32_t ignore_index, int reduction, double *loss, double *dz)
{
    double total = 0, count = 0;
    double *q = malloc(sizeof(double) * (size_t)(K ? K : 1));
    double *lsm = malloc(sizeof(double) * (size_t)(K ? K : 1));
    for (int64_t r = 0; r < R; r++) {
        const double *zr = z + r * K;
        double m = -INFINITY, s = 0;
        for (int64_t k = 0; k < K; k++)
            m = fmax(m, zr[k]);
        for (int64_t k = 0; k < K; k++)
            s += exp(zr[k] - m);
        for (int64_t k = 0; k < K; k++)
            lsm[k] = zr[k] - m - log(s);
        int ignored = !prob && tidx[r] == ignore_index;
        for (int64_t k = 0; k < K; k++)
            q[k] = ignored ? 0 : prob ? (1 - smoothing) * prob[r * K + k] + smoothing / (double)K
                                      : (k == tidx[r] ? 1 - smoothing : 0) + smoothing / (double)K;
        double l = 0;
        for (int64_t k = 0; k < K; k++)
            l -= q[k] * lsm[k];
        if (!ignored)
            count += 1;
        if (reduction == 0)
            loss[r] = l;
        total += l;
        if (dz) /* d/dz_k of -sum_j q_j lsm_j = sum_j q_j softmax_k - q_k */
            for (int64_t k = 0; k < K; k++) {
                double sq = 0;
                for (int64_t j = 0; j < K; j++)
                    sq += q[j];
                dz[r * K + k] = sq * exp(lsm[k]) - q[k];
            }
    }
    if (prob)
        count = (double)R;
    double scale = reduction == 1 ? 1.0 / count : 1.0;
    if (reduction == 1)
        loss[0] = total / count;
    else if (reduction == 2)
        loss[0] = total;
    if (dz && reduction == 1)
        for (int64_t i = 0; i < R * K; i++)
            dz[i] *= scale;
    free(q);
    free(lsm);
}

void ref_pointwise_loss(int mode, int64_t n, int64_t D, const double *x, const double *y,
                        const double *pos_weight, double beta, int reduction, double *loss, double *dx)
{
    double total = 0;
    for (int64_t i = 0; i < n; i++) {
        double l, g, d = x[i] - y[i];
        if (mode == 0) {
            double pw = pos_weight ? pos_weight[i % D] : 1.0;
            double sig = 1.0 / (1.0 + exp(-x[i]));
            /* -[pw y log sig + (1 - y) log(1 - sig)], log sig = -log1p(exp(-x)) */
            l = pw * y[i] * log1p(exp(-x[i])) + (1 - y[i]) * log1p(exp(x[i]));
            g = -pw * y[i] * (1 - sig) + (1 - y[i]) * sig;
        } else if (mode == 2 && fabs(d) < beta) {
            l = 0.5 * d * d / beta;
            g = d / beta;
        } else {
            l = fabs(d) - (mode == 2 ? 0.5 * beta : 0);
            g = d > 0 ? 1 : d < 0 ? -1 : 0;
        }
        if (reduction == 0)
            loss[i] = l;
        total += l;
        if (dx)
            dx[i] = reduction == 1 ? g / (double)n : g;
    }
    if (reduction == 1)
        loss[0] = total / (double)n;
    else if (reduction == 2)
        loss[0] = total;
}
