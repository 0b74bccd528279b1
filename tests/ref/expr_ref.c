/* Host-side tensors and a double-precision evaluator for clt_expr graphs (see expr_ref.h). */
#include "ref/expr_ref.h"

#include <math.h>
#include <stdlib.h>

#include "ref/activation_ref.h"
#include "util/test_util.h"

host_tensor host_random(int ndim, const int64_t *shape, float lo, float hi)
{
    host_tensor h = {ndim, {0}, 1, NULL};
    for (int d = 0; d < ndim; d++) {
        h.shape[d] = shape[d];
        h.numel *= shape[d];
    }
    h.data = malloc((size_t)(h.numel ? h.numel : 1) * sizeof(float));
    if (h.data)
        tu_random_f32(h.data, (size_t)h.numel, lo, hi);
    return h;
}

/* Element of h read at out's linear index i, broadcasting (aligned at the last axis). */
double bcast_at(const host_tensor *h, int ndim, const int64_t *shape, int64_t i)
{
    int64_t off = 0, stride = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        int64_t c = i % shape[d];
        i /= shape[d];
        int hd = d - (ndim - h->ndim);
        if (hd >= 0) {
            if (h->shape[hd] != 1)
                off += c * stride;
            stride *= h->shape[hd];
        }
    }
    return h->data[off];
}

/* Reference evaluation of an expression in double, node by node. */
double ref_eval(const clt_expr *e, int root, const double *in, const float *sc)
{
    double v[CLT_EXPR_MAX_NODES];
    for (int i = 0; i <= root; i++) {
        const clt__expr_node *n = &e->nodes[i];
        double alpha = n->b >= 0 ? v[n->b] : 0.0;
        switch (n->kind) {
        case CLT__NODE_INPUT: v[i] = in[n->index]; break;
        case CLT__NODE_SCALAR: v[i] = sc[n->index]; break;
        case CLT__NODE_UNARY: v[i] = ref_unary((clt_unary_op)n->op, v[n->a], alpha); break;
        case CLT__NODE_GRAD:
            v[i] = n->from_y ? ref_unary_deriv_from_y((clt_unary_op)n->op, v[n->a], alpha)
                             : ref_unary_deriv((clt_unary_op)n->op, v[n->a], alpha);
            break;
        case CLT__NODE_BINARY: v[i] = ref_binary((clt_binary_op)n->op, v[n->a], v[n->b]); break;
        default: v[i] = ref_where(v[n->a], v[n->b], v[n->c]); break;
        }
    }
    return v[root];
}

int close_enough(double got, double ref, double rtol, double atol)
{
    if (isnan(ref))
        return isnan(got);
    if (isinf(ref))
        return got == ref;
    return fabs(got - ref) <= rtol * fabs(ref) + atol;
}

void host_free(host_tensor *h, int n)
{
    for (int k = 0; k < n; k++)
        free(h[k].data);
}

