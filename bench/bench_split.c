/* Snapshots of the profiler's totals (see bench_split.h). */
#include "bench_split.h"

#include <stdlib.h>

int bench_split_enabled(clt_context *ctx) {
    clt_context_limits lim;
    return clt_context_get_limits(ctx, &lim) == CLT_SUCCESS && lim.profiler;
}

clt_status bench_split_snapshot(clt_context *ctx, bench_split_snap *out) {
    out->kernel_ns = out->transfer_ns = out->host_ns = out->idle_ns = 0.0;
    clt_status st = clt_profile_collect(ctx);
    size_t n = 0;
    if (st == CLT_SUCCESS)
        st = clt_profile_get(ctx, NULL, 0, &n);
    if (st != CLT_SUCCESS || n == 0)
        return st;
    clt_profile_entry *rows = malloc(n * sizeof *rows);
    if (!rows)
        return CLT_ERR_OUT_OF_HOST_MEMORY;
    st = clt_profile_get(ctx, rows, n, &n);
    for (size_t i = 0; st == CLT_SUCCESS && i < n; i++) {
        out->kernel_ns += (double)rows[i].kernel_ns;
        out->transfer_ns += (double)rows[i].transfer_ns;
        out->host_ns += (double)rows[i].host_ns;
        out->idle_ns += (double)rows[i].idle_ns;
    }
    free(rows);
    return st;
}
