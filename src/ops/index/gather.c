/* clt_gather, clt_scatter, clt_scatter_add, clt_index_select, clt_index_add, clt_masked_fill. */
#include <string.h>

#include "ops/common/launch.h"
#include "ops/index/index_internal.h"
#include "program/program.h"

/* data: the tensor indexed along axis (x of gather, out of scatter); other: the tensor with the
 * index's shape (out of gather, src of scatter). Returns the normalised axis in *ax. */
static clt_status check_axis_op(const char *who, const clt_tensor *data, const char *dn,
                                const clt_tensor *index, const clt_tensor *other, const char *on,
                                int axis, int select, int *ax)
{
    clt_context *ctx = data->ctx;
    clt_status st;
    if ((st = clt__check_dtype(who, index, "index", CLT_I32)))
        return st;
    if (data->dtype != CLT_F32 && data->dtype != CLT_I32)
        return clt__fail(ctx, CLT_ERR_INVALID_DTYPE, "%s: %s is %s, expected f32 or i32", who, dn,
                         clt_dtype_name(data->dtype));
    if (other->dtype != data->dtype)
        return clt__fail(ctx, CLT_ERR_INVALID_DTYPE, "%s: %s is %s but %s is %s", who, on,
                         clt_dtype_name(other->dtype), dn, clt_dtype_name(data->dtype));
    int n = data->ndim;
    if (axis < -n || axis >= n || n == 0)
        return clt__fail(ctx, CLT_ERR_INVALID_AXIS, "%s: axis %d out of range for %d axes", who,
                         axis, n);
    *ax = axis < 0 ? axis + n : axis;
    if (select) { /* index 1-D; other = data with shape[axis] = len(index) */
        if (index->ndim != 1)
            return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: index has %d axes, expected 1", who,
                             index->ndim);
        int64_t want[CLT_MAX_DIMS];
        memcpy(want, data->shape, sizeof want);
        want[*ax] = index->shape[0];
        return clt__check_shape(who, other, on, n, want);
    }
    if ((st = clt__check_shape(who, other, on, index->ndim, index->shape)))
        return st;
    if (index->ndim != n)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: index has %d axes, %s has %d", who,
                         index->ndim, dn, n);
    for (int d = 0; d < n; d++)
        if (d != *ax && index->shape[d] > data->shape[d])
            return clt__fail(ctx, CLT_ERR_INVALID_SHAPE,
                             "%s: index dim %d is %lld, larger than %s's %lld", who, d,
                             (long long)index->shape[d], dn, (long long)data->shape[d]);
    return CLT_SUCCESS;
}

/* The description of a gather (to_data = 0) or scatter (1) over `other`'s box. */
static void axis_desc(clt__sd *s, const clt_tensor *data, const clt_tensor *index,
                      const clt_tensor *other, int ax, int select, int scatter)
{
    int n = data->ndim;
    int64_t ds[CLT_MAX_DIMS], os[CLT_MAX_DIMS], is[CLT_MAX_DIMS];
    clt__contiguous_strides(n, data->shape, ds);
    clt__contiguous_strides(n, other->shape, os);
    if (select) {
        for (int d = 0; d < n; d++)
            is[d] = d == ax ? 1 : 0;
    } else {
        clt__contiguous_strides(n, index->shape, is);
    }
    s->ndim = n;
    s->count = other->numel;
    int64_t *dstr = scatter ? s->b : s->a, *ostr = scatter ? s->a : s->b;
    for (int d = 0; d < n; d++) {
        s->shape[d] = other->shape[d];
        dstr[d] = d == ax ? 0 : ds[d];
        ostr[d] = os[d];
        s->d[d] = is[d];
    }
    s->a_off = clt__elem_off(scatter ? other : data);
    s->b_off = clt__elem_off(scatter ? data : other);
    s->c[0] = clt__elem_off(index);
    s->c[1] = ds[ax];
    s->c[2] = data->shape[ax];
}

static clt_status gather_like(const char *who, const clt_tensor *x, int axis,
                              const clt_tensor *index, clt_tensor *out, int select)
{
    static const char *const names[3] = {"x", "index", "out"};
    const clt_tensor *t[3] = {x, index, out};
    clt_status st;
    int ax = 0;
    if ((st = clt__check_handles(who, 3, t, names)) ||
        (st = check_axis_op(who, x, "x", index, out, "out", axis, select, &ax)) ||
        (st = clt__check_no_overlap(who, x, "x", out, "out")) ||
        (st = clt__check_no_overlap(who, index, "index", out, "out")))
        return st;
    clt__sd s = {0};
    axis_desc(&s, x, index, out, ax, select, 0);
    return clt__index_run(x->ctx, "index_gather", out->storage->mem, x->storage->mem, &s,
                          index->storage->mem, who);
}

static clt_status scatter_like(const char *who, clt_tensor *out, int axis, const clt_tensor *index,
                               const clt_tensor *src, int select, int add)
{
    static const char *const names[3] = {"out", "index", "src"};
    const clt_tensor *t[3] = {out, index, src};
    clt_status st;
    int ax = 0;
    if ((st = clt__check_handles(who, 3, t, names)) ||
        (st = check_axis_op(who, out, "out", index, src, "src", axis, select, &ax)) ||
        (add && (st = clt__check_dtype(who, out, "out", CLT_F32))) ||
        (st = clt__check_no_overlap(who, src, "src", out, "out")) ||
        (st = clt__check_no_overlap(who, index, "index", out, "out")))
        return st;
    clt__sd s = {0};
    axis_desc(&s, out, index, src, ax, select, 1);
    return clt__index_run(out->ctx, add ? "index_scatter_add" : "index_scatter", out->storage->mem,
                          src->storage->mem, &s, index->storage->mem, who);
}

clt_status clt_gather(const clt_tensor *x, int axis, const clt_tensor *index, clt_tensor *out)
{
    CLT_PUBLIC_CALL();
    return gather_like("clt_gather", x, axis, index, out, 0);
}

clt_status clt_index_select(const clt_tensor *x, int axis, const clt_tensor *index, clt_tensor *out)
{
    CLT_PUBLIC_CALL();
    return gather_like("clt_index_select", x, axis, index, out, 1);
}

clt_status clt_scatter_add(clt_tensor *out, int axis, const clt_tensor *index, const clt_tensor *src)
{
    CLT_PUBLIC_CALL();
    return scatter_like("clt_scatter_add", out, axis, index, src, 0, 1);
}

clt_status clt_scatter(clt_tensor *out, int axis, const clt_tensor *index, const clt_tensor *src)
{
    CLT_PUBLIC_CALL();
    return scatter_like("clt_scatter", out, axis, index, src, 0, 0);
}

clt_status clt_index_add(clt_tensor *out, int axis, const clt_tensor *index, const clt_tensor *src)
{
    CLT_PUBLIC_CALL();
    return scatter_like("clt_index_add", out, axis, index, src, 1, 1);
}

/* Turn masked_fill's description s into index_masked_fill_x4's when it fits (returns 1; s is left
 * alone otherwise): merge neighbouring axes whose mask strides are contiguous (x and out always
 * are), then ask for a last extent that is a multiple of 4, 16-byte aligned x and out, and every
 * offset below 2^31; c[1] says whether the mask is read in 16-byte units too. */
static int masked_fill_x4(clt__sd *s, const clt_tensor *mask)
{
    clt__sd m = *s;
    int k = 0;
    for (int d = 0; d < s->ndim; d++) {
        if (s->shape[d] == 1)
            continue;
        if (k > 0 && m.d[k - 1] == s->d[d] * s->shape[d]) {
            m.shape[k - 1] *= s->shape[d];
            m.d[k - 1] = s->d[d];
            continue;
        }
        m.shape[k] = s->shape[d];
        m.d[k] = s->d[d];
        k++;
    }
    if (k == 0) /* a single element */
        m.shape[0] = 1, m.d[0] = 0, k = 1;
    m.ndim = k;
    const int64_t lim = INT32_MAX, moff = m.c[0];
    if (m.shape[k - 1] % 4 || m.a_off % 4 || m.b_off % 4 || m.a_off + m.count >= lim ||
        m.b_off + m.count >= lim || moff + mask->numel >= lim)
        return 0;
    int vec = m.d[k - 1] == 1 && moff % 4 == 0;
    for (int d = 0; d < k - 1; d++)
        vec = vec && m.d[d] % 4 == 0;
    if (!vec && m.d[k - 1] != 0) /* a per-element mask at an unaligned place: 4 loads a unit */
        return 0;
    m.c[1] = vec;
    *s = m;
    return 1;
}

clt_status clt_masked_fill(const clt_tensor *x, const clt_tensor *mask, float value, clt_tensor *out)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_masked_fill";
    static const char *const names[3] = {"x", "mask", "out"};
    const clt_tensor *t[3] = {x, mask, out};
    clt_status st;
    if ((st = clt__check_handles(who, 3, t, names)) ||
        (st = clt__check_dtype(who, x, "x", CLT_F32)) ||
        (st = clt__check_dtype(who, out, "out", CLT_F32)) ||
        (st = clt__check_shape(who, out, "out", x->ndim, x->shape)))
        return st;
    if (mask->dtype != CLT_F32 && mask->dtype != CLT_I32)
        return clt__fail(x->ctx, CLT_ERR_INVALID_DTYPE, "%s: mask is %s, expected f32 or i32", who,
                         clt_dtype_name(mask->dtype));
    if ((out->storage != x->storage || out->offset != x->offset) &&
        (st = clt__check_no_overlap(who, x, "x", out, "out")))
        return st;
    if ((st = clt__check_no_overlap(who, mask, "mask", out, "out")))
        return st;
    int n = x->ndim, ok = mask->ndim <= n;
    int64_t aligned[CLT_MAX_DIMS], ms[CLT_MAX_DIMS];
    for (int d = 0; ok && d < n; d++) {
        int md = d - (n - mask->ndim);
        aligned[d] = md >= 0 ? mask->shape[md] : 1;
        ok = aligned[d] == x->shape[d] || aligned[d] == 1;
    }
    if (!ok) {
        char a[160], b[160];
        clt__shape_text(mask->ndim, mask->shape, a, sizeof a);
        clt__shape_text(n, x->shape, b, sizeof b);
        return clt__fail(x->ctx, CLT_ERR_INVALID_SHAPE, "%s: mask of shape %s does not broadcast to x %s",
                         who, a, b);
    }
    clt__contiguous_strides(n, aligned, ms);
    clt__sd s = {0};
    s.ndim = n ? n : 1;
    s.count = x->numel;
    s.shape[0] = 1;
    clt__contiguous_strides(n, x->shape, s.a);
    clt__contiguous_strides(n, x->shape, s.b);
    for (int d = 0; d < n; d++) {
        s.shape[d] = x->shape[d];
        s.d[d] = aligned[d] == 1 ? 0 : ms[d];
    }
    s.a_off = clt__elem_off(x);
    s.b_off = clt__elem_off(out);
    s.c[0] = clt__elem_off(mask);
    s.e0 = mask->dtype == CLT_F32;
    uint32_t bits;
    memcpy(&bits, &value, 4);
    s.e1 = bits;
    if (x->numel == 0)
        return CLT_SUCCESS;
    if (!clt__cpu_style(x->ctx) && masked_fill_x4(&s, mask))
        return clt__index_run_items(x->ctx, "index_masked_fill_x4", out->storage->mem,
                                    x->storage->mem, &s, mask->storage->mem, (uint64_t)s.count / 4,
                                    who);
    if (clt__cpu_style(x->ctx)) {
        cl_kernel k;
        if ((st = clt__kernel_get(x->ctx, CLT__INDEX_FAMILY, "", "index_masked_fill_rows", &k)))
            return st;
        cl_mem mm = mask->storage->mem;
        if ((st = clt__sd_set_args(x->ctx, k, out->storage->mem, x->storage->mem, &s, who)) ||
            (st = clt__set_arg(x->ctx, k, 3, sizeof(cl_mem), &mm, who)))
            return st;
        return clt__launch_1d(x->ctx, k, (uint64_t)(s.count / s.shape[s.ndim - 1]), who);
    }
    return clt__index_run(x->ctx, "index_masked_fill", out->storage->mem, x->storage->mem, &s,
                          mask->storage->mem, who);
}
