/**
 * @file
 * cltensor profiler: where the time of each op goes (kernel, transfer, host overhead).
 *
 * Turn it on per context: CLT_PROFILE=1 in the environment, or clt_context_options.profiler = 1 at
 * clt_context_create. The queue is then created with profiling enabled and every command the library
 * enqueues on it (op kernels, CLBlast routines, host<->device transfers, maps, device copies, fills)
 * is recorded with the public call that issued it (the "op": "clt_add", "clt_gemm"; the copy of
 * clt_tensor_create_from_host counts as "clt_tensor_write"), the implementation ("impl": the kernel
 * function name such as "gemm_tiled_nn" or "expr_kernel", "clblast:sgemm" /
 * "clblast:sgemm_strided_batched" for CLBlast, "write" / "read" / "copy" / "fill" / "map" / "unmap"
 * for transfers) and its OpenCL profiling times. With the profiler off nothing is recorded and no event is requested: it costs
 * nothing.
 *
 * The split, per command, from its OpenCL timestamps QUEUED <= START <= END:
 *   kernel time     START -> END of a kernel command
 *   transfer time   START -> END of a transfer command
 *   host overhead   QUEUED -> START: from the enqueue call until the device starts the command. On an
 *                   in-order queue this includes waiting behind earlier commands, so a host that runs
 *                   far ahead of the device shows large host overhead: that is queueing, not launch
 *                   cost (a benchmark loop on POCL shows milliseconds). Idle time is the launch
 *                   cost that the device actually felt.
 *   idle time       END of the previous recorded command -> START of this one, when positive: the
 *                   time the device sat idle before the command (launch latency the queue did not
 *                   hide, or a host that was late). Unlike host overhead it does not grow with
 *                   queueing, so in a loop kernel + transfer + idle time is the device-side wall time.
 * So kernel + transfer + host overhead of a row is exactly the sum of its commands' QUEUED -> END,
 * and kernel + transfer + idle over all rows is the span from the first START to the last END
 * (commands of an in-order queue do not overlap).
 *
 * Bounded memory. Commands are resolved (their times read) in queue order, without waiting, every
 * 64 commands and by every call below. At most CLT_PROFILE_MAX_PENDING commands wait unresolved:
 * when a host runs that far ahead of the device, the enqueueing call waits for the older half of
 * them (a stall the profiler adds; nothing is lost). So do not enqueue that many commands behind
 * clt_context_wait_event on an event the same thread completes only later: the stall would wait
 * for it forever. Resolved commands go into per-(op, impl) rows
 * (at most CLT_PROFILE_MAX_ROWS; later new pairs count in a row with op "(other)") and into a trace
 * of the latest CLT_PROFILE_TRACE_CAP commands: beyond that the oldest trace records are overwritten
 * (counted in clt_profile_stats.trace_dropped) while the rows keep counting everything. Memory when
 * on: about 150 KiB plus 40 bytes per trace record (2.5 MiB at the cap).
 *
 * Not recorded: markers and barriers of clt_context_export_event / clt_context_wait_event, and the
 * unmapping of the library's own pinned buffers at clt_context_free. CLBlast returns one event per
 * routine, the one of its last kernel: helper kernels it runs before that (padding, transposes) show
 * up as host overhead of the clblast row, not as kernel time.
 *
 * Blocking: clt_profile_collect waits for the queue (like clt_finish). The other calls never wait:
 * they include the commands that have completed, in queue order (call clt_profile_collect first to
 * include everything enqueued so far).
 * Thread safety: as for the context (one thread at a time per context).
 * On a context without the profiler every call returns CLT_ERR_UNSUPPORTED, and clt_last_error says
 * how to turn it on.
 */
#ifndef CLTENSOR_PROFILE_H
#define CLTENSOR_PROFILE_H

#include "cltensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most recorded commands that wait unresolved; an enqueue beyond it first waits for the oldest
 *  (counted in clt_profile_stats.stalls). */
#define CLT_PROFILE_MAX_PENDING 4096
/** Most (op, impl) rows the profiler keeps. */
#define CLT_PROFILE_MAX_ROWS 256
/** Commands kept for the Chrome trace (the latest ones). */
#define CLT_PROFILE_TRACE_CAP 65536

/** What a recorded command was. */
typedef enum clt_profile_kind {
    CLT_PROFILE_KERNEL = 1,  /**< an op kernel or a CLBlast routine */
    CLT_PROFILE_TRANSFER = 2 /**< host<->device copy, map/unmap, device copy, buffer fill */
} clt_profile_kind;

/** One row: every completed command of one (op, impl) pair since the last reset. Times in ns. */
typedef struct clt_profile_entry {
    char op[64];          /**< public call: "clt_add", "clt_tensor_read" */
    char impl[64];        /**< kernel function name, "clblast:CLBlastSgemm", "write", "read", ... */
    clt_profile_kind kind;  /**< kernel or transfer */
    uint64_t count;       /**< commands completed (failed ones included) */
    uint64_t kernel_ns;   /**< sum of START -> END, kernel commands */
    uint64_t transfer_ns; /**< sum of START -> END, transfer commands */
    uint64_t host_ns;     /**< sum of QUEUED -> START (host overhead, see above) */
    uint64_t idle_ns;     /**< sum of the device's idle time before each command (see above) */
    uint64_t bytes;       /**< bytes moved, transfer commands */
    uint64_t failed;      /**< commands that ended in an execution error (no times counted) */
} clt_profile_entry;

/** Bookkeeping of the profiler since the last reset. */
typedef struct clt_profile_stats {
    uint64_t commands;      /**< commands resolved into rows */
    uint64_t pending;       /**< enqueued, not resolved yet (complete or not) */
    uint64_t rows;          /**< rows in use */
    uint64_t trace_records; /**< commands in the trace now (<= trace_cap) */
    uint64_t trace_cap;     /**< CLT_PROFILE_TRACE_CAP */
    uint64_t trace_dropped; /**< older trace records overwritten at the cap */
    uint64_t stalls;        /**< times an enqueue waited because CLT_PROFILE_MAX_PENDING were pending */
} clt_profile_stats;

/** Wait for all enqueued work (blocks, like clt_finish) and resolve every recorded command.
 *  Statuses: CLT_ERR_INVALID_ARGUMENT (ctx NULL), CLT_ERR_UNSUPPORTED (profiler off), CLT_ERR_OPENCL
 *  (an execution error of earlier work, as clt_finish reports it). */
CLT_API clt_status clt_profile_collect(clt_context *ctx);

/** Copy up to cap rows into entries (in the order the pairs were first seen) and set *count to the
 *  number of rows there are (which may exceed cap: call again with a larger array). entries may be
 *  NULL when cap is 0. Never blocks. Statuses: CLT_ERR_INVALID_ARGUMENT (ctx or count NULL, entries
 *  NULL with cap > 0), CLT_ERR_UNSUPPORTED. */
CLT_API clt_status clt_profile_get(clt_context *ctx, clt_profile_entry *entries, size_t cap,
                                   size_t *count);

/** The profiler's counters (see clt_profile_stats). Never blocks. Statuses as clt_profile_get. */
CLT_API clt_status clt_profile_get_stats(clt_context *ctx, clt_profile_stats *stats);

/** A text table into buf (NUL-terminated, truncated to size): per row op, impl, kind, count, kernel,
 *  transfer, host overhead and idle time in microseconds (totals and per command), then a totals line and a
 *  line with the stats. Never blocks. Statuses: CLT_ERR_INVALID_ARGUMENT (ctx or buf NULL, size 0),
 *  CLT_ERR_UNSUPPORTED. */
CLT_API clt_status clt_profile_report(clt_context *ctx, char *buf, size_t size);

/** Write the trace as Chrome-trace JSON ({"traceEvents": [...]}, one complete "X" event per command,
 *  ts/dur in microseconds of the device clock from the first command since the reset; one track for
 *  kernels and one for transfers; args: impl, bytes, queued_us = host overhead) to path. Load it in
 *  https://ui.perfetto.dev or chrome://tracing. Failed commands have no times and are left out.
 *  Never blocks on the device. Statuses:
 *  CLT_ERR_INVALID_ARGUMENT (ctx or path NULL), CLT_ERR_UNSUPPORTED, CLT_ERR_IO (cannot write the
 *  file; nothing is left at path). */
CLT_API clt_status clt_profile_write_trace(clt_context *ctx, const char *path);

/** Forget every row, the trace and the counters; commands enqueued before the call and not resolved
 *  yet are dropped too (they never appear). Never blocks. Statuses: CLT_ERR_INVALID_ARGUMENT,
 *  CLT_ERR_UNSUPPORTED. */
CLT_API clt_status clt_profile_reset(clt_context *ctx);

#ifdef __cplusplus
}
#endif

#endif /* CLTENSOR_PROFILE_H */
