/* Reduction axis analysis: normalise the axes, derive out's shape, then drop size-1 dims and merge
 * neighbouring dims that are both kept or both reduced (contiguous tensors make merged dims plain
 * strided runs). One reduced run is the canonical [outer, R, inner] form; several need the general
 * index mapping. */
#include <stdio.h>
#include <string.h>

#include "ops/reduce/reduce_plan.h"

void clt__format_shape(char *buf, size_t size, int ndim, const int64_t *shape)
{
    size_t n = (size_t)snprintf(buf, size, "[");
    for (int i = 0; i < ndim && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, "%s%lld", i ? ", " : "", (long long)shape[i]);
    if (n < size)
        snprintf(buf + n, size - n, "]");
}

static clt_status normalise_axes(const char *who, const clt_tensor *x, int naxes, const int *axes,
                                 int reduced[CLT_MAX_DIMS])
{
    memset(reduced, 0, sizeof(int) * CLT_MAX_DIMS);
    if (naxes < 0)
        return clt__fail(x->ctx, CLT_ERR_INVALID_ARGUMENT, "%s: naxes is %d", who, naxes);
    if (naxes == 0 || !axes) {
        for (int d = 0; d < x->ndim; d++)
            reduced[d] = 1;
        return CLT_SUCCESS;
    }
    for (int i = 0; i < naxes; i++) {
        int a = axes[i];
        if (a < -x->ndim || a >= x->ndim)
            return clt__fail(x->ctx, CLT_ERR_INVALID_AXIS,
                             "%s: axis %d is out of range for a %d-d tensor (valid: %d .. %d)", who, a,
                             x->ndim, -x->ndim, x->ndim - 1);
        int d = a < 0 ? a + x->ndim : a;
        if (reduced[d])
            return clt__fail(x->ctx, CLT_ERR_INVALID_AXIS, "%s: axis %d (dim %d) is given twice", who,
                             a, d);
        reduced[d] = 1;
    }
    return CLT_SUCCESS;
}

/* Merged runs of dims, outermost first. */
typedef struct run {
    int64_t size;
    int reduced;
} run;

static void fill_general(clt__reduce_plan *p, const run *runs, int nruns)
{
    int nk = 0, nr = 0;
    uint64_t stride = 1;
    for (int i = 0; i < 4; i++) {
        p->kept_dims[i] = p->red_dims[i] = 1;
        p->kept_strides[i] = p->red_strides[i] = 0;
    }
    for (int i = nruns - 1; i >= 0; i--) { /* innermost first */
        if (runs[i].reduced) {
            p->red_dims[nr] = (uint64_t)runs[i].size;
            p->red_strides[nr++] = stride;
        } else {
            p->kept_dims[nk] = (uint64_t)runs[i].size;
            p->kept_strides[nk++] = stride;
        }
        stride *= (uint64_t)runs[i].size;
    }
    p->layout = runs[nruns - 1].reduced ? CLT__RED_GEN_LANES : CLT__RED_GEN_OUTS;
}

clt_status clt__reduce_plan_make(const char *who, const clt_tensor *x, int naxes, const int *axes,
                                 int keepdim, clt__reduce_plan *p)
{
    int reduced[CLT_MAX_DIMS];
    clt_status st = normalise_axes(who, x, naxes, axes, reduced);
    if (st != CLT_SUCCESS)
        return st;
    memset(p, 0, sizeof *p);
    p->outputs = 1;
    p->length = 1;
    for (int d = 0; d < x->ndim; d++) {
        if (reduced[d]) {
            p->length *= x->shape[d];
            if (keepdim)
                p->out_shape[p->out_ndim++] = 1;
        } else {
            p->outputs *= x->shape[d];
            p->out_shape[p->out_ndim++] = x->shape[d];
        }
    }
    /* Drop size-1 dims, merge neighbours of the same kind (alternating runs: at most 4 of each). */
    run runs[CLT_MAX_DIMS];
    int nruns = 0;
    for (int d = 0; d < x->ndim; d++) {
        if (x->shape[d] == 1)
            continue;
        if (nruns > 0 && runs[nruns - 1].reduced == reduced[d])
            runs[nruns - 1].size *= x->shape[d];
        else
            runs[nruns++] = (run){x->shape[d], reduced[d]};
    }
    p->inner = 1;
    p->innermost_kept = 1;
    for (int i = nruns - 1; i >= 0; i--)
        if (!runs[i].reduced) {
            p->innermost_kept = runs[i].size;
            break;
        }
    int nred = 0, first_red = -1;
    for (int i = 0; i < nruns; i++)
        if (runs[i].reduced && nred++ == 0)
            first_red = i;
    if (nred == 0) {
        p->layout = CLT__RED_ROWS; /* nothing reduced: R = 1, each output is one element */
    } else if (nred == 1) {
        for (int i = first_red + 1; i < nruns; i++)
            p->inner *= runs[i].size;
        p->layout = p->inner == 1 ? CLT__RED_ROWS : CLT__RED_COLS;
    } else {
        fill_general(p, runs, nruns);
    }
    return CLT_SUCCESS;
}
