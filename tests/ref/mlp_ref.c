/* The double reference of tests/ref/mlp_ref.h: straightforward loops, one point at a time. */
#include "mlp_ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void ref_mlp_init(ref_mlp *r, const clt_mlp_desc *d, const float *B)
{
    r->d = d, r->B = B;
    r->width[0] = d->encoding == CLT_MLP_ENCODING_FOURIER ? 2 * d->fourier_features : d->inputs;
    r->nparams = 0;
    for (int l = 0; l < d->layers; l++) {
        r->width[l + 1] = d->widths[l];
        r->poff[l] = r->nparams;
        r->nparams += (r->width[l] + 1) * r->width[l + 1];
    }
}

static double act(clt_unary_op a, double z)
{
    switch (a) {
    case CLT_TANH: return tanh(z);
    case CLT_RELU: return z > 0 ? z : 0;
    case CLT_SIGMOID: return 1 / (1 + exp(-z));
    case CLT_SILU: return z / (1 + exp(-z));
    default: return z;
    }
}

static double act_grad(clt_unary_op a, double z)
{
    double s = 1 / (1 + exp(-z)), t = tanh(z);
    switch (a) {
    case CLT_TANH: return 1 - t * t;
    case CLT_RELU: return z > 0 ? 1 : 0;
    case CLT_SIGMOID: return s * (1 - s);
    case CLT_SILU: return s * (1 + z * (1 - s));
    default: return 1;
    }
}

static void encode(const ref_mlp *r, const float *x, double *a0)
{
    const clt_mlp_desc *d = r->d;
    if (d->encoding != CLT_MLP_ENCODING_FOURIER) {
        for (int64_t c = 0; c < d->inputs; c++)
            a0[c] = x[c];
        return;
    }
    int64_t f = d->fourier_features;
    for (int64_t c = 0; c < f; c++) {
        double dot = 0;
        for (int64_t k = 0; k < d->inputs; k++)
            dot += (double)x[k] * r->B[k * f + c];
        a0[c] = sin((double)d->fourier_scale * dot);
        a0[f + c] = cos((double)d->fourier_scale * dot);
    }
}

/* a[l] (layer inputs / outputs) and z[l] (pre-activations of layer l) of one point. */
static void forward_point(const ref_mlp *r, const double *p, const float *x, double **a, double **z)
{
    encode(r, x, a[0]);
    for (int l = 0; l < r->d->layers; l++) {
        int64_t k = r->width[l], o = r->width[l + 1];
        const double *W = p + r->poff[l], *b = W + k * o;
        for (int64_t j = 0; j < o; j++) {
            double s = b[j];
            for (int64_t q = 0; q < k; q++)
                s += a[l][q] * W[q * o + j];
            z[l][j] = s;
            a[l + 1][j] = act(r->d->activations[l], s);
        }
    }
}

static double **alloc_rows(const ref_mlp *r)
{
    int nl = r->d->layers;
    double **rows = malloc(sizeof(double *) * (size_t)(2 * nl + 3));
    for (int l = 0; l < 2 * nl + 3; l++)
        rows[l] = calloc(CLT_MLP_MAX_WIDTH > 4096 ? 4096 : CLT_MLP_MAX_WIDTH, sizeof(double));
    return rows;
}

static void free_rows(const ref_mlp *r, double **rows)
{
    for (int l = 0; l < 2 * r->d->layers + 3; l++)
        free(rows[l]);
    free(rows);
}

void ref_mlp_forward(const ref_mlp *r, const double *p, int64_t n, const float *x, double *y)
{
    int nl = r->d->layers;
    double **rows = alloc_rows(r), **a = rows, **z = rows + nl + 1;
    int64_t o = r->width[nl];
    for (int64_t i = 0; i < n; i++) {
        forward_point(r, p, x + i * r->d->inputs, a, z);
        memcpy(y + i * o, a[nl], sizeof(double) * (size_t)o);
    }
    free_rows(r, rows);
}

double ref_mlp_gradients(const ref_mlp *r, const double *p, int64_t n, const float *x,
                         const float *t, double *grad)
{
    int nl = r->d->layers;
    double **rows = alloc_rows(r), **a = rows, **z = rows + nl + 1, *g = rows[2 * nl + 1],
           *gin = rows[2 * nl + 2];
    int64_t o = r->width[nl];
    double loss = 0, scale = 2.0 / ((double)n * (double)o);
    memset(grad, 0, sizeof(double) * (size_t)r->nparams);
    for (int64_t i = 0; i < n; i++) {
        forward_point(r, p, x + i * r->d->inputs, a, z);
        for (int64_t j = 0; j < o; j++) {
            double e = a[nl][j] - t[i * o + j];
            loss += e * e;
            g[j] = scale * e * act_grad(r->d->activations[nl - 1], z[nl - 1][j]);
        }
        for (int l = nl - 1; l >= 0; l--) {
            int64_t k = r->width[l], ow = r->width[l + 1];
            double *dW = grad + r->poff[l], *db = dW + k * ow;
            const double *W = p + r->poff[l];
            for (int64_t q = 0; q < k; q++)
                for (int64_t j = 0; j < ow; j++)
                    dW[q * ow + j] += a[l][q] * g[j];
            for (int64_t j = 0; j < ow; j++)
                db[j] += g[j];
            if (l == 0)
                break;
            for (int64_t q = 0; q < k; q++) {
                double s = 0;
                for (int64_t j = 0; j < ow; j++)
                    s += g[j] * W[q * ow + j];
                gin[q] = s * act_grad(r->d->activations[l - 1], z[l - 1][q]);
            }
            memcpy(g, gin, sizeof(double) * (size_t)k);
        }
    }
    free_rows(r, rows);
    return loss / ((double)n * (double)o);
}

void ref_mlp_update(const ref_mlp *r, double *p, const double *grad, double *m, double *v,
                    int64_t step)
{
    const clt_mlp_desc *d = r->d;
    for (int64_t i = 0; i < r->nparams; i++) {
        double g = grad[i] + d->weight_decay * p[i];
        if (d->optimizer == CLT_MLP_ADAM) {
            m[i] = d->beta1 * m[i] + (1 - (double)d->beta1) * g;
            v[i] = d->beta2 * v[i] + (1 - (double)d->beta2) * g * g;
            double bc1 = 1 - pow(d->beta1, (double)step), bc2 = 1 - pow(d->beta2, (double)step);
            p[i] -= d->lr / bc1 * m[i] / (sqrt(v[i]) / sqrt(bc2) + d->eps);
        } else {
            double b = g;
            if (d->momentum != 0) {
                b = step == 1 ? g : d->momentum * m[i] + (1 - (double)d->dampening) * g;
                m[i] = b;
            }
            p[i] -= d->lr * b;
        }
    }
}
