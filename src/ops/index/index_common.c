#include "ops/common/launch.h"
#include "ops/index/index_internal.h"
#include "program/program.h"

clt_status clt__index_run(clt_context *ctx, const char *name, cl_mem dst, cl_mem src,
                          const clt__sd *s, cl_mem index, const char *who)
{
    return clt__index_run_items(ctx, name, dst, src, s, index, (uint64_t)s->count, who);
}

clt_status clt__index_run_items(clt_context *ctx, const char *name, cl_mem dst, cl_mem src,
                                const clt__sd *s, cl_mem index, uint64_t items, const char *who)
{
    if (items == 0)
        return CLT_SUCCESS;
    cl_kernel k;
    clt_status st = clt__kernel_get(ctx, CLT__INDEX_FAMILY, "", name, &k);
    if (st)
        return st;
    if ((st = clt__sd_set_args(ctx, k, dst, src, s, who)) ||
        (st = clt__set_arg(ctx, k, 3, sizeof(cl_mem), &index, who)))
        return st;
    return clt__launch_1d(ctx, k, items, who);
}
