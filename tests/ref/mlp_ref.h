/* Plain-C double reference of the fused MLP (include/cltensor_mlp.h): the same network, loss and
 * optimizers, for tests/mlp. */
#ifndef CLT_REF_MLP_REF_H
#define CLT_REF_MLP_REF_H

#include <stdint.h>

#include "cltensor_mlp.h"

typedef struct ref_mlp {
    const clt_mlp_desc *d;
    const float *B; /* [inputs, F] or NULL */
    int64_t width[CLT_MLP_MAX_LAYERS + 1], poff[CLT_MLP_MAX_LAYERS], nparams;
} ref_mlp;

/* Fills widths and offsets from the description (the library's layout). */
void ref_mlp_init(ref_mlp *r, const clt_mlp_desc *d, const float *B);
/* y [n, out] of the network with parameters p at x [n, inputs]. */
void ref_mlp_forward(const ref_mlp *r, const double *p, int64_t n, const float *x, double *y);
/* Gradient of the MSE loss into grad [nparams]; returns the loss. */
double ref_mlp_gradients(const ref_mlp *r, const double *p, int64_t n, const float *x,
                         const float *t, double *grad);
/* One optimizer update (step is 1-based) of p with m, v (v unused by SGD). */
void ref_mlp_update(const ref_mlp *r, double *p, const double *grad, double *m, double *v,
                    int64_t step);

#endif
