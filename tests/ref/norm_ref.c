/* Double references for the normalisation ops: the textbook formulas, written independently of the
 * kernels (dx by the chain rule through mean and variance). */
#include "ref/norm_ref.h"

#include <math.h>
#include <stdlib.h>

static int64_t pidx(int64_t r, int64_t i, int64_t L, int64_t S, int64_t G)
{
    return (r % G) * (L / S) + i / S;
}

static void row_stats(const double *xr, int64_t L, int rms, double eps, double *mean, double *rstd)
{
    double m = 0, v = 0;
    if (!rms) {
        for (int64_t i = 0; i < L; i++)
            m += xr[i];
        m /= (double)L;
    }
    for (int64_t i = 0; i < L; i++)
        v += (xr[i] - m) * (xr[i] - m);
    *mean = m;
    *rstd = 1.0 / sqrt(v / (double)L + eps);
}

void ref_rownorm_forward(int64_t R, int64_t L, int64_t S, int64_t G, int rms, const double *x,
                         const double *gamma, const double *beta, double eps, double *y, double *mean,
                         double *rstd)
{
    for (int64_t r = 0; r < R; r++) {
        double m, s;
        row_stats(x + r * L, L, rms, eps, &m, &s);
        for (int64_t i = 0; i < L; i++) {
            int64_t p = pidx(r, i, L, S, G);
            double v = (x[r * L + i] - m) * s;
            y[r * L + i] = v * (gamma ? gamma[p] : 1.0) + (beta ? beta[p] : 0.0);
        }
        if (mean)
            mean[r] = m;
        if (rstd)
            rstd[r] = s;
    }
}

void ref_rownorm_backward(int64_t R, int64_t L, int64_t S, int64_t G, int rms, const double *dy,
                          const double *x, const double *gamma, double eps, double *dx,
                          double *dgamma, double *dbeta, double *abs_dg, double *abs_db)
{
    int64_t P = S ? G * (L / S) : 0; /* S == 0: empty planes, no parameter is touched */
    for (int64_t p = 0; p < P; p++) {
        if (dgamma)
            dgamma[p] = 0;
        if (dbeta)
            dbeta[p] = 0;
        if (abs_dg)
            abs_dg[p] = 0;
        if (abs_db)
            abs_db[p] = 0;
    }
    for (int64_t r = 0; r < R; r++) {
        const double *xr = x + r * L, *dyr = dy + r * L;
        double m, s;
        row_stats(xr, L, rms, eps, &m, &s);
        /* y = xhat * gamma; with g = dy * gamma: dL/dxhat = g;
         * xhat = (x - m) s: dxhat_i/dx_j = s (delta_ij - [!rms] / L) - (x_i - m) s^3 (x_j - m) / L */
        double sum_g = 0, sum_gx = 0;
        for (int64_t i = 0; i < L; i++) {
            int64_t p = pidx(r, i, L, S, G);
            double g = dyr[i] * (gamma ? gamma[p] : 1.0);
            sum_g += g;
            sum_gx += g * (xr[i] - m);
            if (dgamma)
                dgamma[p] += dyr[i] * (xr[i] - m) * s;
            if (dbeta)
                dbeta[p] += dyr[i];
            if (abs_dg)
                abs_dg[p] += fabs(dyr[i] * (xr[i] - m) * s);
            if (abs_db)
                abs_db[p] += fabs(dyr[i]);
        }
        if (!dx)
            continue;
        for (int64_t j = 0; j < L; j++) {
            double g = dyr[j] * (gamma ? gamma[pidx(r, j, L, S, G)] : 1.0);
            double v = s * g - (rms ? 0.0 : s * sum_g / (double)L) -
                       s * s * s * (xr[j] - m) * sum_gx / (double)L;
            dx[r * L + j] = v;
        }
    }
}

static int64_t bn_at(int64_t n, int64_t c, int64_t j, int64_t C, int64_t HW)
{
    return (n * C + c) * HW + j;
}

void ref_batch_norm(int64_t N, int64_t C, int64_t HW, int training, const double *x,
                    const double *gamma, const double *beta, double *run_mean, double *run_var,
                    double momentum, double eps, double *y, double *save_mean, double *save_rstd)
{
    double M = (double)(N * HW);
    for (int64_t c = 0; c < C; c++) {
        double m, var;
        if (training) {
            m = 0, var = 0;
            for (int64_t n = 0; n < N; n++)
                for (int64_t j = 0; j < HW; j++)
                    m += x[bn_at(n, c, j, C, HW)];
            m /= M;
            for (int64_t n = 0; n < N; n++)
                for (int64_t j = 0; j < HW; j++) {
                    double d = x[bn_at(n, c, j, C, HW)] - m;
                    var += d * d;
                }
            var /= M;
            if (run_mean) {
                run_mean[c] = (1 - momentum) * run_mean[c] + momentum * m;
                run_var[c] = (1 - momentum) * run_var[c] + momentum * var * M / (M - 1);
            }
        } else {
            m = run_mean[c];
            var = run_var[c];
        }
        double s = 1.0 / sqrt(var + eps);
        for (int64_t n = 0; n < N; n++)
            for (int64_t j = 0; j < HW; j++) {
                int64_t e = bn_at(n, c, j, C, HW);
                y[e] = (x[e] - m) * s * (gamma ? gamma[c] : 1.0) + (beta ? beta[c] : 0.0);
            }
        if (save_mean)
            save_mean[c] = m, save_rstd[c] = s;
    }
}

void ref_batch_norm_backward(int64_t N, int64_t C, int64_t HW, int training, const double *dy,
                             const double *x, const double *gamma, const double *mean,
                             const double *rstd, double *dx, double *dgamma, double *dbeta)
{
    double M = (double)(N * HW);
    for (int64_t c = 0; c < C; c++) {
        double db = 0, dg = 0, g = gamma ? gamma[c] : 1.0;
        for (int64_t n = 0; n < N; n++)
            for (int64_t j = 0; j < HW; j++) {
                int64_t e = bn_at(n, c, j, C, HW);
                db += dy[e];
                dg += dy[e] * (x[e] - mean[c]) * rstd[c];
            }
        if (dgamma)
            dgamma[c] = dg;
        if (dbeta)
            dbeta[c] = db;
        if (!dx)
            continue;
        for (int64_t n = 0; n < N; n++)
            for (int64_t j = 0; j < HW; j++) {
                int64_t e = bn_at(n, c, j, C, HW);
                double xhat = (x[e] - mean[c]) * rstd[c];
                dx[e] = training ? g * rstd[c] * (dy[e] - db / M - xhat * dg / M) : g * rstd[c] * dy[e];
            }
    }
}
