/* See winograd_dw_ref.h. */
#include <math.h>
#include <stdlib.h>

#include "ref/winograd_dw_ref.h"

/* Magnitudes of the transform matrices (|A|, |B^T|, |G^T| of common/winograd.h), for the bound
 * only: the expected values come from the direct reference. */
static const double abs_a[6][4] = {{1, 0, 0, 0}, {1, 1, 1, 1}, {1, 1, 1, 1},
                                   {1, 2, 4, 8}, {1, 2, 4, 8}, {0, 0, 0, 1}};
static const double abs_bt[6][6] = {{4, 0, 5, 0, 1, 0}, {0, 4, 4, 1, 1, 0}, {0, 4, 4, 1, 1, 0},
                                    {0, 2, 1, 2, 1, 0}, {0, 2, 1, 2, 1, 0}, {0, 4, 0, 5, 0, 1}};
static const double abs_gt[3][6] = {{1.0 / 4, 1.0 / 6, 1.0 / 6, 1.0 / 24, 1.0 / 24, 0},
                                    {0, 1.0 / 6, 1.0 / 6, 1.0 / 12, 1.0 / 12, 0},
                                    {0, 1.0 / 6, 1.0 / 6, 1.0 / 6, 1.0 / 6, 1}};

/* t (6x6) = m (6 x k) |p| m^T for a k x k patch p. */
static void sandwich(const double *m, int k, const double *p, double *t)
{
    double h[6][6];
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < k; j++) {
            h[i][j] = 0;
            for (int a = 0; a < k; a++)
                h[i][j] += m[i * k + a] * fabs(p[a * k + j]);
        }
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) {
            t[i * 6 + j] = 0;
            for (int b = 0; b < k; b++)
                t[i * 6 + j] += h[i][b] * m[j * k + b];
        }
}

void ref_winograd_dw_scale(const ref_conv *s, const float *dy, const float *x, double *ts)
{
    int64_t n = s->n, ci = s->ci, h = s->h, w = s->w, co = s->co;
    int64_t ho = ref_conv_ho(s), wo = ref_conv_wo(s);
    double *acc = calloc((size_t)(co * ci * 36), sizeof *acc),
           *u = malloc((size_t)co * 36 * sizeof *u);
    double v[36], p[36];
    for (int64_t i = 0; i < n; i++)
        for (int64_t by = 0; by < ho; by += 4)
            for (int64_t bx = 0; bx < wo; bx += 4) {
                for (int64_t k = 0; k < co; k++) {
                    for (int a = 0; a < 16; a++) {
                        int64_t y = by + a / 4, xx = bx + a % 4;
                        p[a] = y < ho && xx < wo ? dy[((i * co + k) * ho + y) * wo + xx] : 0;
                    }
                    sandwich(&abs_a[0][0], 4, p, u + k * 36);
                }
                for (int64_t c = 0; c < ci; c++) {
                    for (int a = 0; a < 36; a++) {
                        int64_t y = by - s->pt + a / 6, xx = bx - s->pl + a % 6;
                        p[a] = y >= 0 && y < h && xx >= 0 && xx < w
                                   ? x[((i * ci + c) * h + y) * w + xx]
                                   : 0;
                    }
                    sandwich(&abs_bt[0][0], 6, p, v);
                    for (int64_t k = 0; k < co; k++)
                        for (int xi = 0; xi < 36; xi++)
                            acc[(k * ci + c) * 36 + xi] += u[k * 36 + xi] * v[xi];
                }
            }
    for (int64_t e = 0; e < co * ci; e++)
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) {
                double t = 0;
                for (int xi = 0; xi < 36; xi++)
                    t += abs_gt[a][xi / 6] * acc[e * 36 + xi] * abs_gt[b][xi % 6];
                ts[e * 9 + a * 3 + b] = t;
            }
    free(acc), free(u);
}
