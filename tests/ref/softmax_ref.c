#include "ref/softmax_ref.h"

#include <math.h>

void ref_softmax(const float *x, double *out, size_t rows, size_t n, int log_form)
{
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * n;
        double *yr = out + r * n;
        double m = -INFINITY;
        int nan = 0;
        for (size_t i = 0; i < n; i++) {
            nan |= isnan(xr[i]);
            if (xr[i] > m)
                m = xr[i];
        }
        double s = 0.0;
        for (size_t i = 0; i < n; i++)
            s += exp((double)xr[i] - m);
        for (size_t i = 0; i < n; i++) {
            double d = (double)xr[i] - m;
            yr[i] = nan ? NAN : log_form ? d - log(s) : exp(d) / s;
        }
    }
}

void ref_softmax_backward(const float *y, const float *dy, double *dx, double *scale, size_t rows,
                          size_t n, int log_form)
{
    for (size_t r = 0; r < rows; r++) {
        const float *yr = y + r * n, *gr = dy + r * n;
        double sum = 0.0, abs_sum = 0.0;
        for (size_t i = 0; i < n; i++) {
            double t = log_form ? (double)gr[i] : (double)gr[i] * yr[i];
            sum += t;
            abs_sum += fabs(t);
        }
        for (size_t i = 0; i < n; i++) {
            double yv = yr[i], gv = gr[i];
            size_t j = r * n + i;
            if (log_form) {
                dx[j] = gv - exp(yv) * sum;
                if (scale)
                    scale[j] = fabs(gv) + exp(yv) * abs_sum;
            } else {
                dx[j] = yv * (gv - sum);
                if (scale)
                    scale[j] = fabs(yv) * (fabs(gv) + abs_sum);
            }
        }
    }
}
