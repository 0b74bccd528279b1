#include "ref/reduce_ref.h"

#include <math.h>
#include <stdlib.h>

/* Output index and reduction count of every element, walking x in row-major order (so, for each
 * output, its elements come in increasing reduction index). */
static void walk_setup(int ndim, const int64_t *shape, const int *reduced, int64_t *outputs,
                       int64_t *length)
{
    *outputs = 1;
    *length = 1;
    for (int d = 0; d < ndim; d++) {
        if (reduced[d])
            *length *= shape[d];
        else
            *outputs *= shape[d];
    }
}

static int64_t out_index(int ndim, const int64_t *shape, const int *reduced, int64_t flat)
{
    int64_t idx[8];
    for (int d = ndim - 1; d >= 0; d--) {
        idx[d] = shape[d] ? flat % shape[d] : 0;
        flat = shape[d] ? flat / shape[d] : 0;
    }
    int64_t o = 0;
    for (int d = 0; d < ndim; d++)
        if (!reduced[d])
            o = o * shape[d] + idx[d];
    return o;
}

int64_t ref_reduce(int op, const float *x, int ndim, const int64_t *shape, const int *reduced,
                   double *val, double *scale)
{
    int64_t O, R;
    walk_setup(ndim, shape, reduced, &O, &R);
    int64_t n = O * R;
    double *s1 = calloc((size_t)O + 1, sizeof *s1), *s2 = calloc((size_t)O + 1, sizeof *s2);
    double *best = calloc((size_t)O + 1, sizeof *best);
    int64_t *seen = calloc((size_t)O + 1, sizeof *seen), *at = calloc((size_t)O + 1, sizeof *at);
    int64_t *oi = malloc(((size_t)n + 1) * sizeof *oi);
    for (int64_t i = 0; i < n; i++)
        oi[i] = out_index(ndim, shape, reduced, i);
    /* pass 1: sums, extremes, positions */
    for (int64_t i = 0; i < n; i++) {
        int64_t o = oi[i];
        double v = x[i];
        int64_t r = seen[o]++;
        s1[o] += v;
        s2[o] += op == 6 ? v * v : fabs(v);
        int first = r == 0;
        int is_max = op == 2 || op == REF_ARGMAX;
        if (first) {
            best[o] = v;
            at[o] = 0;
        } else if (!isnan(best[o]) && (isnan(v) || (is_max ? v > best[o] : v < best[o]))) {
            best[o] = v;
            at[o] = r;
        }
    }
    for (int64_t o = 0; o < O; o++) {
        double mean = s1[o] / (double)R;
        switch (op) {
        case 0: val[o] = s1[o]; break;
        case 1: val[o] = R ? mean : NAN; break;
        case 2: case 3: val[o] = best[o]; break;
        case 6: val[o] = sqrt(s2[o]); break;
        case REF_ARGMAX: case REF_ARGMIN: val[o] = R ? (double)at[o] : -1.0; break;
        default: val[o] = 0.0; break;
        }
        if (scale)
            scale[o] = op <= 1 ? s2[o] / (op == 1 && R ? (double)R : 1.0) : op == 6 ? val[o] : 0.0;
        best[o] = mean;
        s2[o] = 0.0;
    }
    if (op == 4 || op == 5) { /* pass 2: squared deviations from the exact mean */
        for (int64_t i = 0; i < n; i++) {
            double d = x[i] - best[oi[i]];
            s2[oi[i]] += d * d;
        }
        for (int64_t o = 0; o < O; o++) {
            double div = op == 4 ? (double)R : (double)R - 1.0;
            val[o] = div > 0.0 ? s2[o] / div : NAN;
            if (scale)
                scale[o] = val[o];
        }
    }
    free(s1);
    free(s2);
    free(best);
    free(seen);
    free(at);
    free(oi);
    return O;
}
