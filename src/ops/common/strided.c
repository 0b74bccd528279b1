#include <stdio.h>

#include "ops/common/strided.h"
#include "ops/common/launch.h"

void clt__contiguous_strides(int ndim, const int64_t *shape, int64_t *strides)
{
    int64_t s = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        strides[d] = s;
        s *= shape[d];
    }
}

void clt__sd_coalesce(clt__sd *s)
{
    int m = 0;
    for (int d = 0; d < s->ndim; d++) {
        if (s->shape[d] == 1)
            continue;
        if (m > 0 && s->a[m - 1] == s->a[d] * s->shape[d] && s->b[m - 1] == s->b[d] * s->shape[d]) {
            s->shape[m - 1] *= s->shape[d];
            s->a[m - 1] = s->a[d];
            s->b[m - 1] = s->b[d];
            continue;
        }
        s->shape[m] = s->shape[d];
        s->a[m] = s->a[d];
        s->b[m] = s->b[d];
        m++;
    }
    if (m == 0) { /* a single element */
        s->shape[0] = 1;
        s->a[0] = s->b[0] = 0;
        m = 1;
    }
    for (int d = m; d < CLT__SD_MAX; d++)
        s->shape[d] = 1, s->a[d] = s->b[d] = 0;
    s->ndim = m;
}

clt_context *clt__first_ctx(int n, const clt_tensor *const *t)
{
    for (int i = 0; i < n; i++)
        if (t[i])
            return t[i]->ctx;
    return NULL;
}

clt_status clt__check_handles(const char *who, int n, const clt_tensor *const *t,
                              const char *const *names)
{
    clt_context *ctx = clt__first_ctx(n, t);
    for (int i = 0; i < n; i++)
        if (!t[i])
            return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", who, names[i]);
    for (int i = 1; i < n; i++)
        if (t[i]->ctx != ctx)
            return clt__fail(ctx, CLT_ERR_CONTEXT_MISMATCH,
                             "%s: %s and %s belong to different contexts", who, names[0], names[i]);
    return CLT_SUCCESS;
}

clt_status clt__check_dtype(const char *who, const clt_tensor *t, const char *name, clt_dtype want)
{
    if (t->dtype == want)
        return CLT_SUCCESS;
    return clt__fail(t->ctx, CLT_ERR_INVALID_DTYPE, "%s: %s is %s, expected %s", who, name,
                     clt_dtype_name(t->dtype), clt_dtype_name(want));
}

void clt__shape_text(int ndim, const int64_t *shape, char *buf, size_t cap)
{
    size_t at = 0;
    int w = snprintf(buf, cap, "[");
    for (int d = 0; d < ndim && w >= 0 && (at += (size_t)w) < cap; d++)
        w = snprintf(buf + at, cap - at, d ? ", %lld" : "%lld", (long long)shape[d]);
    if (w >= 0 && (at += (size_t)w) < cap)
        snprintf(buf + at, cap - at, "]");
}

clt_status clt__check_shape(const char *who, const clt_tensor *t, const char *name, int ndim,
                            const int64_t *shape)
{
    int same = t->ndim == ndim;
    for (int d = 0; same && d < ndim; d++)
        same = t->shape[d] == shape[d];
    if (same)
        return CLT_SUCCESS;
    char got[160], want[160];
    clt__shape_text(t->ndim, t->shape, got, sizeof got);
    clt__shape_text(ndim, shape, want, sizeof want);
    return clt__fail(t->ctx, CLT_ERR_INVALID_SHAPE, "%s: %s has shape %s, expected %s", who, name,
                     got, want);
}

clt_status clt__check_no_overlap(const char *who, const clt_tensor *in, const char *in_name,
                                 const clt_tensor *out, const char *out_name)
{
    if (!clt__tensors_overlap(in, out))
        return CLT_SUCCESS;
    return clt__fail(out->ctx, CLT_ERR_ALIASING, "%s: %s overlaps %s", who, out_name, in_name);
}

clt_status clt__sd_set_args(clt_context *ctx, cl_kernel k, cl_mem dst, cl_mem src, const clt__sd *s,
                            const char *who)
{
    clt_status st;
    if ((st = clt__set_arg(ctx, k, 0, sizeof(cl_mem), &dst, who)) ||
        (st = clt__set_arg(ctx, k, 1, sizeof(cl_mem), &src, who)) ||
        (st = clt__set_arg(ctx, k, 2, sizeof *s, s, who)))
        return st;
    return CLT_SUCCESS;
}
