/* The profiler's split for clt-bench: kernel / transfer / host-overhead time of the timed samples.
 * Rows are never reset during a run (so --trace keeps the whole run): the split of the samples is the
 * difference of two snapshots of the profiler's totals. */
#ifndef BENCH_SPLIT_H
#define BENCH_SPLIT_H

#include "cltensor_all.h"

typedef struct bench_split_snap {
    double kernel_ns, transfer_ns, host_ns, idle_ns;
} bench_split_snap;

/* 1 when ctx records commands (CLT_PROFILE=1, clt-bench --split). */
int bench_split_enabled(clt_context *ctx);
/* Wait for the queue and sum every profiler row. */
clt_status bench_split_snapshot(clt_context *ctx, bench_split_snap *out);

#endif
