/* Checks and launches shared by the layout ops. */
#include "ops/common/launch.h"
#include "ops/layout/layout_internal.h"
#include "program/program.h"

/* Below this many elements along both swapped axes the transpose tile would be mostly empty. */
#define TRANSPOSE_MIN_EXTENT 8
/* CPUs: items per work-group of layout_copy_rows. Its items loop over rows, so POCL has nothing
 * to vectorise across them, and small groups spread few items over every core: slice_step2/4096x4096
 * (256 items) ran in one group of 256 on one core, 3049 us, in groups of 16 1742 us; permute
 * unchanged (647 / 674), concat 1986 -> 1697. */
#define CPU_ROWS_GROUP 16
#define TILE 32
#define TILE_ROWS 8

clt_status clt__layout_check_4byte(const char *who, const clt_tensor *t, const char *name)
{
    if (t->dtype == CLT_F32 || t->dtype == CLT_I32)
        return CLT_SUCCESS;
    return clt__fail(t->ctx, CLT_ERR_INVALID_DTYPE, "%s: %s is %s, expected f32 or i32", who, name,
                     clt_dtype_name(t->dtype));
}

clt_status clt__layout_check_pair(const char *who, const clt_tensor *x, const char *xn,
                                  const clt_tensor *out, const char *on)
{
    clt_status st = clt__layout_check_4byte(who, x, xn);
    if (st)
        return st;
    if (out->dtype != x->dtype)
        return clt__fail(x->ctx, CLT_ERR_INVALID_DTYPE, "%s: %s is %s but %s is %s", who, on,
                         clt_dtype_name(out->dtype), xn, clt_dtype_name(x->dtype));
    return clt__check_no_overlap(who, x, xn, out, on);
}

clt_status clt__layout_axis(const char *who, const clt_context *ctx, int axis, int n, int *out)
{
    if (axis < -n || axis >= n)
        return clt__fail(ctx, CLT_ERR_INVALID_AXIS, "%s: axis %d out of range for %d axes", who,
                         axis, n);
    *out = axis < 0 ? axis + n : axis;
    return CLT_SUCCESS;
}

clt_status clt__layout_run(clt_context *ctx, const char *name, cl_mem dst, cl_mem src,
                           const clt__sd *s, const char *who)
{
    if (s->count == 0)
        return CLT_SUCCESS;
    cl_kernel k;
    clt_status st = clt__kernel_get(ctx, CLT__LAYOUT_FAMILY, "", name, &k);
    if (st)
        return st;
    if ((st = clt__sd_set_args(ctx, k, dst, src, s, who)))
        return st;
    return clt__launch_1d(ctx, k, (uint64_t)s->count, who);
}

/* The axis P != last with src stride 1, when the last (dst-contiguous) axis is not src-contiguous
 * and both are long enough to fill tiles; -1 otherwise. */
static int transpose_axis(const clt__sd *s)
{
    int last = (int)s->ndim - 1;
    if (last < 1 || s->a[last] == 1 || s->b[last] != 1 || s->shape[last] < TRANSPOSE_MIN_EXTENT)
        return -1;
    for (int p = 0; p < last; p++)
        if (s->a[p] == 1 && s->shape[p] >= TRANSPOSE_MIN_EXTENT)
            return p;
    return -1;
}

/* layout_copy_x4's e0 for a coalesced box with 32-bit offsets (amax: the last source element it
 * reads), or -1 when the destination rows cannot be stored 4 elements at a time (last extent not
 * a multiple of 4, dst not contiguous along it, or not 16-byte aligned). 1: 16-byte loads too; 2:
 * source stride 2 (a step-2 slice), two 16-byte loads per 4 elements, which read one element past
 * the last one used, so only while that stays inside src's buffer; 0: element loads. */
static int copy_x4_mode(const clt__sd *s, int64_t amax, cl_mem src)
{
    int last = (int)s->ndim - 1;
    if (s->shape[last] % 4 || s->b[last] != 1 || s->b_off % 4)
        return -1;
    int aligned = s->a_off % 4 == 0;
    for (int d = 0; d < last; d++) {
        if (s->b[d] % 4)
            return -1;
        aligned = aligned && s->a[d] % 4 == 0;
    }
    if (aligned && s->a[last] == 1)
        return 1;
    size_t bytes = 0;
    if (aligned && s->a[last] == 2 &&
        clGetMemObjectInfo(src, CL_MEM_SIZE, sizeof bytes, &bytes, NULL) == CL_SUCCESS &&
        (uint64_t)(amax + 2) * 4 <= (uint64_t)bytes)
        return 2;
    return 0;
}

/* CPUs: when rows (the last axis) are contiguous on both sides, visit them in the source's memory
 * order: the axes before the last sorted by falling source stride (a box copy is the same in any
 * order). The reads then stream and the writes scatter, which a CPU's store buffer absorbs; rows
 * read 2 KB apart (permute (0, 2, 1, 3) of 8x1024x8x64) had every row's first load wait on memory,
 * past the prefetchers' 4 KB pages. */
static void source_order(clt__sd *s)
{
    const int last = (int)s->ndim - 1;
    if (last < 2 || s->a[last] != 1 || s->b[last] != 1)
        return;
    for (int i = 1; i < last; i++) /* insertion sort, stable: equal strides keep their order */
        for (int j = i; j > 0 && s->a[j - 1] < s->a[j]; j--) {
            int64_t t = s->shape[j];
            s->shape[j] = s->shape[j - 1];
            s->shape[j - 1] = t;
            t = s->a[j];
            s->a[j] = s->a[j - 1];
            s->a[j - 1] = t;
            t = s->b[j];
            s->b[j] = s->b[j - 1];
            s->b[j - 1] = t;
        }
}

/* The generic copy: per row on CPUs; on GPUs 4 elements per item when the destination rows allow
 * (layout_copy_x4), else per element (32-bit indices when everything fits). */
static clt_status copy_generic(clt_context *ctx, cl_mem dst, cl_mem src, const clt__sd *s,
                               const char *who)
{
    cl_kernel k;
    clt_status st;
    if (clt__cpu_style(ctx)) {
        clt__sd v = *s;
        source_order(&v);
        if ((st = clt__kernel_get(ctx, "layout_cpu", "", "layout_copy_rows", &k)))
            return st;
        if ((st = clt__sd_set_args(ctx, k, dst, src, &v, who)))
            return st;
        uint64_t rows = (uint64_t)(s->count / s->shape[s->ndim - 1]);
        return clt__launch_1d_group(ctx, k, (rows + LT_ROWS_PER_ITEM - 1) / LT_ROWS_PER_ITEM,
                                    CPU_ROWS_GROUP, who);
    }
    int64_t amax = s->a_off, bmax = s->b_off;
    for (int d = 0; d < s->ndim; d++) {
        amax += (s->shape[d] - 1) * s->a[d];
        bmax += (s->shape[d] - 1) * s->b[d];
    }
    int idx32 = s->count < INT32_MAX && amax < INT32_MAX && bmax < INT32_MAX;
    int x4 = idx32 ? copy_x4_mode(s, amax, src) : -1;
    if (x4 >= 0) {
        clt__sd v = *s;
        v.e0 = x4;
        if ((st = clt__kernel_get(ctx, CLT__LAYOUT_FAMILY, "", "layout_copy_x4", &k)) ||
            (st = clt__sd_set_args(ctx, k, dst, src, &v, who)))
            return st;
        return clt__launch_1d(ctx, k, (uint64_t)s->count / 4, who);
    }
    if ((st = clt__kernel_get(ctx, CLT__LAYOUT_FAMILY, idx32 ? "-DLT_IDX32=1" : "", "layout_copy",
                              &k)))
        return st;
    if ((st = clt__sd_set_args(ctx, k, dst, src, s, who)))
        return st;
    return clt__launch_1d(ctx, k, (uint64_t)s->count, who);
}

clt_status clt__layout_copy(clt_context *ctx, cl_mem dst, cl_mem src, clt__sd *s, const char *who)
{
    if (s->count == 0)
        return CLT_SUCCESS;
    clt__sd_coalesce(s);
    int p = clt__cpu_style(ctx) ? -1 : transpose_axis(s);
    if (p < 0)
        return copy_generic(ctx, dst, src, s, who);
    cl_kernel k;
    clt_status st = clt__kernel_get(ctx, CLT__LAYOUT_FAMILY, "", "layout_transpose", &k);
    if (st)
        return st;
    if (clt__kernel_work_group_limit(ctx, k) < TILE * TILE_ROWS ||
        ctx->limits.max_work_group_size < TILE * TILE_ROWS)
        return copy_generic(ctx, dst, src, s, who);
    int last = (int)s->ndim - 1;
    clt__sd t = *s;
    t.e[0] = s->shape[last];
    t.e[1] = s->a[last];
    t.e[2] = s->shape[p];
    t.e[3] = s->b[p];
    int m = 0;
    t.count = 1;
    for (int d = 0; d < last; d++) {
        if (d == p)
            continue;
        t.shape[m] = s->shape[d];
        t.a[m] = s->a[d];
        t.b[m] = s->b[d];
        t.count *= s->shape[d];
        m++;
    }
    if (m == 0) {
        t.shape[0] = 1;
        t.a[0] = t.b[0] = 0;
        m = 1;
    }
    t.ndim = m;
    if ((st = clt__sd_set_args(ctx, k, dst, src, &t, who)))
        return st;
    size_t local[3] = {TILE, TILE_ROWS, 1};
    size_t global[3] = {(size_t)((t.e[0] + TILE - 1) / TILE * TILE),
                        (size_t)((t.e[2] + TILE - 1) / TILE * TILE_ROWS), (size_t)t.count};
    return clt__enqueue_kernel(ctx, k, 3, global, local, who);
}
