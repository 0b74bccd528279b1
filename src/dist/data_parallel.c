/* Data-parallel helper: gradient buckets (views of the flat gradient tensor, cut from its end) whose
 * mean allreduce starts as soon as the backward pass has produced them. */
#include <stdlib.h>

#include "dist/dist.h"

#define DEFAULT_BUCKET_BYTES ((size_t)4 << 20)

struct clt_dist_dp {
    clt_dist_comm *comm;
    clt_tensor *params, *grads;
    int64_t n, bucket_elems;
    int buckets, launched; /* buckets started this step, counted from the end */
    clt_tensor **views;    /* views[k]: elements [max(0, n - (k+1) B), n - k B) */
    clt_future **futures;
};

static int64_t bucket_first(const clt_dist_dp *dp, int k)
{
    int64_t f = dp->n - (int64_t)(k + 1) * dp->bucket_elems;
    return f < 0 ? 0 : f;
}

void clt_dist_dp_free(clt_dist_dp *dp)
{
    if (!dp)
        return;
    for (int k = 0; k < dp->buckets; k++) {
        if (dp->futures && dp->futures[k]) {
            clt_future_wait(dp->futures[k]);
            clt_future_free(dp->futures[k]);
        }
        if (dp->views)
            clt_tensor_free(dp->views[k]);
    }
    free(dp->futures);
    free(dp->views);
    free(dp);
}

clt_status clt_dist_dp_create(clt_dist_comm *comm, clt_tensor *params, clt_tensor *grads,
                              size_t bucket_bytes, clt_dist_dp **out)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_dist_dp_create";
    if (out)
        *out = NULL;
    if (!comm || !params || !grads || !out)
        return clt__fail(comm ? comm->ctx : NULL, CLT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", who,
                         !comm ? "comm" : !params ? "params" : !grads ? "grads" : "out");
    clt_context *ctx = comm->ctx;
    if (params->ctx != ctx || grads->ctx != ctx)
        return clt__fail(ctx, CLT_ERR_CONTEXT_MISMATCH, "%s: params and grads must be of the "
                         "communicator's context", who);
    if (params->dtype != CLT_F32 || grads->dtype != CLT_F32)
        return clt__fail(ctx, CLT_ERR_INVALID_DTYPE, "%s: params and grads must be f32", who);
    if (params->numel != grads->numel)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: params has %lld elements, grads %lld", who,
                         (long long)params->numel, (long long)grads->numel);
    if (clt__tensors_overlap(params, grads))
        return clt__fail(ctx, CLT_ERR_ALIASING, "%s: params and grads overlap", who);
    clt_dist_dp *dp = calloc(1, sizeof *dp);
    if (!dp)
        return clt__fail(ctx, CLT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", who);
    dp->comm = comm;
    dp->params = params;
    dp->grads = grads;
    dp->n = grads->numel;
    dp->bucket_elems = (int64_t)((bucket_bytes ? bucket_bytes : DEFAULT_BUCKET_BYTES) / sizeof(float));
    if (dp->bucket_elems < 1)
        dp->bucket_elems = 1;
    dp->buckets = dp->n == 0 ? 0 : (int)((dp->n + dp->bucket_elems - 1) / dp->bucket_elems);
    dp->views = calloc((size_t)dp->buckets + 1, sizeof *dp->views);
    dp->futures = calloc((size_t)dp->buckets + 1, sizeof *dp->futures);
    if (!dp->views || !dp->futures) {
        clt_dist_dp_free(dp);
        return clt__fail(ctx, CLT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", who);
    }
    for (int k = 0; k < dp->buckets; k++) {
        int64_t first = bucket_first(dp, k), end = dp->n - (int64_t)k * dp->bucket_elems;
        int64_t len = end - first;
        clt_status st = clt_tensor_view(grads, first, 1, &len, &dp->views[k]);
        if (st != CLT_SUCCESS) {
            clt_dist_dp_free(dp);
            return st;
        }
    }
    clt_status st = clt_dist_broadcast(comm, params, 0);
    if (st != CLT_SUCCESS) {
        clt_dist_dp_free(dp);
        return st;
    }
    *out = dp;
    return CLT_SUCCESS;
}

clt_status clt_dist_dp_grads_ready(clt_dist_dp *dp, int64_t first)
{
    CLT_PUBLIC_CALL();
    if (!dp)
        return clt__fail(NULL, CLT_ERR_INVALID_ARGUMENT, "clt_dist_dp_grads_ready: dp is NULL");
    if (first < 0 || first > dp->n)
        return clt__fail(dp->comm->ctx, CLT_ERR_INVALID_ARGUMENT,
                         "clt_dist_dp_grads_ready: first %lld is outside 0..%lld", (long long)first,
                         (long long)dp->n);
    while (dp->launched < dp->buckets && bucket_first(dp, dp->launched) >= first) {
        clt_status st = clt_dist_allreduce_async(dp->comm, dp->views[dp->launched], CLT_DIST_MEAN,
                                                 &dp->futures[dp->launched]);
        if (st != CLT_SUCCESS)
            return st;
        dp->launched++;
    }
    return clt_dist_progress(dp->comm);
}

clt_status clt_dist_dp_sync(clt_dist_dp *dp)
{
    CLT_PUBLIC_CALL();
    if (!dp)
        return clt__fail(NULL, CLT_ERR_INVALID_ARGUMENT, "clt_dist_dp_sync: dp is NULL");
    clt_status first_error = clt_dist_dp_grads_ready(dp, 0);
    for (int k = 0; k < dp->launched; k++) {
        clt_status st = clt_future_wait(dp->futures[k]);
        if (first_error == CLT_SUCCESS)
            first_error = st;
        clt_future_free(dp->futures[k]);
        dp->futures[k] = NULL;
    }
    dp->launched = 0;
    return first_error;
}

int clt_dist_dp_buckets(const clt_dist_dp *dp)
{
    return dp ? dp->buckets : -1;
}
