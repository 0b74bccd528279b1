/* clt_topk over the last axis (argmax along any axis is clt_argmax in the reduce family): one
 * work-group per row (cl_kernels/index/index.cl): index_topk_radix (a few radix passes, then a sort
 * of the survivors) for RADIX_KMIN <= k <= RADIX_KMAX, index_topk (one pass per rank) else; CPUs
 * take index_topk_rows for k <= CPU_KMAX. */
#include <stdio.h>

#include "ops/common/launch.h"
#include "ops/index/index_internal.h"
#include "program/program.h"

#define PREFERRED_GROUP 256
#define CPU_KMAX 256 /* CPU variant: the most candidates an item keeps (private array) */
#define RADIX_KMAX 2048 /* index.cl's TK_CAP default: the survivors it can sort in local memory */
#define RADIX_MIN_WG 16 /* index_topk_radix's 16 digits need at least 16 items */
/* Below this k, index_topk's k passes are fewer than the radix select's (about 4 passes over
 * random values, a gather and a sort): k = 1 took 10.3 us on the H200 at 64 x 32000 */
#define RADIX_KMIN 8

static clt_status select_rows(const char *who, const clt_tensor *x, int64_t k, clt_tensor *values,
                              clt_tensor *indices)
{
    clt_context *ctx = x->ctx;
    clt_status st;
    if ((st = clt__check_dtype(who, x, "x", CLT_F32)))
        return st;
    if (x->ndim < 1)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: x is 0-d, need a last axis", who);
    int64_t n = x->shape[x->ndim - 1];
    if (n > (int64_t)INT32_MAX)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: rows of %lld elements, at most 2^31 - 1",
                         who, (long long)n);
    int64_t want[CLT_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++)
        want[d] = x->shape[d];
    int wnd = values || (indices && indices->ndim == x->ndim) ? x->ndim : x->ndim - 1;
    if (k > 0 && (k > n))
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: k = %lld > row length %lld", who,
                         (long long)k, (long long)n);
    want[x->ndim - 1] = k;
    if (values && ((st = clt__check_dtype(who, values, "values", CLT_F32)) ||
                   (st = clt__check_shape(who, values, "values", x->ndim, want)) ||
                   (st = clt__check_no_overlap(who, x, "x", values, "values"))))
        return st;
    if (indices && ((st = clt__check_dtype(who, indices, "indices", CLT_I32)) ||
                    (st = clt__check_shape(who, indices, "indices", wnd, want)) ||
                    (st = clt__check_no_overlap(who, x, "x", indices, "indices"))))
        return st;
    if (values && indices && (st = clt__check_no_overlap(who, values, "values", indices, "indices")))
        return st;
    if (x->numel == 0 || k == 0)
        return CLT_SUCCESS;
    clt__sd s = {0};
    s.ndim = 1;
    s.count = x->numel / n;
    s.e0 = n;
    s.e1 = k;
    s.a_off = clt__elem_off(x);
    s.b_off = values ? clt__elem_off(values) : 0;
    s.c[0] = indices ? clt__elem_off(indices) : 0;
    s.c[1] = values != NULL;
    s.c[2] = indices != NULL;
    cl_mem vm = values ? values->storage->mem : x->storage->mem; /* unused when c[1] = 0 */
    cl_mem im = indices ? indices->storage->mem : x->storage->mem;
    if (clt__cpu_style(ctx) && k <= CPU_KMAX) {
        unsigned kmax = 8;
        while (kmax < k)
            kmax *= 2; /* few programs: 8, 16, ..., CPU_KMAX */
        char options[32];
        snprintf(options, sizeof options, "-DTK_KMAX=%u", kmax);
        cl_kernel kern;
        if ((st = clt__kernel_get(ctx, CLT__INDEX_FAMILY, options, "index_topk_rows", &kern)))
            return st;
        if ((st = clt__sd_set_args(ctx, kern, vm, x->storage->mem, &s, who)) ||
            (st = clt__set_arg(ctx, kern, 3, sizeof(cl_mem), &im, who)))
            return st;
        return clt__launch_1d_group(ctx, kern, (uint64_t)s.count, 1, who);
    }
    size_t wg = PREFERRED_GROUP;
    if (wg > ctx->limits.max_work_group_size)
        wg = (size_t)ctx->limits.max_work_group_size;
    for (;;) {
        size_t p = 1;
        while (p * 2 <= wg)
            p *= 2;
        wg = p;
        char options[32];
        snprintf(options, sizeof options, "-DTK_WG=%zu", wg);
        const char *name = k >= RADIX_KMIN && k <= RADIX_KMAX && wg >= RADIX_MIN_WG
                               ? "index_topk_radix"
                               : "index_topk";
        cl_kernel kern;
        if ((st = clt__kernel_get(ctx, CLT__INDEX_FAMILY, options, name, &kern)))
            return st;
        size_t lim = clt__kernel_work_group_limit(ctx, kern);
        if (lim < wg && wg > 1) {
            wg = lim;
            continue;
        }
        if ((st = clt__sd_set_args(ctx, kern, vm, x->storage->mem, &s, who)) ||
            (st = clt__set_arg(ctx, kern, 3, sizeof(cl_mem), &im, who)))
            return st;
        size_t global = (size_t)s.count * wg, local = wg;
        return clt__enqueue_kernel(ctx, kern, 1, &global, &local, who);
    }
}

clt_status clt_topk(const clt_tensor *x, int k, clt_tensor *values, clt_tensor *indices)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_topk";
    if (!x || (!values && !indices))
        return clt__fail(x ? x->ctx : values ? values->ctx : indices ? indices->ctx : NULL,
                         CLT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", who,
                         !x ? "x" : "values and indices both");
    if ((values && values->ctx != x->ctx) || (indices && indices->ctx != x->ctx))
        return clt__fail(x->ctx, CLT_ERR_CONTEXT_MISMATCH, "%s: tensors of different contexts", who);
    if (k < 1)
        return clt__fail(x->ctx, CLT_ERR_INVALID_ARGUMENT, "%s: k = %d, expected >= 1", who, k);
    if (indices && indices->ndim != x->ndim)
        return clt__fail(x->ctx, CLT_ERR_INVALID_SHAPE, "%s: indices has %d axes, expected %d", who,
                         indices->ndim, x->ndim);
    return select_rows(who, x, k, values, indices);
}
