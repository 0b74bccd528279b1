/* Profiler hooks (public side: include/cltensor_profile.h). Internal.
 *
 * Every place that enqueues a command records it with a one-line hook:
 *   clEnqueueXxx(..., clt__prof_event(ctx));           event out-pointer, NULL when the profiler is off
 *   clt__prof_commit(ctx, "clt_x", "write", CLT_PROFILE_TRANSFER, bytes);
 * or, when the caller keeps its own event, clt__prof_record(ctx, ev, ...) (retains it). With the
 * profiler off (ctx->prof NULL) both are a test and a return: no event is ever requested. */
#ifndef CLT_PROFILE_INTERNAL_H
#define CLT_PROFILE_INTERNAL_H

#include "cltensor_profile.h"
#include "runtime/runtime.h"

struct clt_profiler;

/* Create / destroy the profiler of a context (ctx->prof). destroy releases pending events unread. */
clt_status clt__prof_create(clt_context *ctx);
void clt__prof_destroy(clt_context *ctx);

/* The event slot for the next command, or NULL when the profiler is off. */
cl_event *clt__prof_event(clt_context *ctx);
/* Record the command whose event was just written into the slot (no-op when off or when the slot is
 * empty, e.g. the enqueue failed). op and impl are copied when first seen. */
void clt__prof_commit(clt_context *ctx, const char *op, const char *impl, clt_profile_kind kind,
                      uint64_t bytes);
/* The same for a kernel: impl is its CL_KERNEL_FUNCTION_NAME (cached per kernel). */
void clt__prof_commit_kernel(clt_context *ctx, const char *op, cl_kernel kernel);
/* Record a command whose event the caller keeps (retained here; NULL ev is ignored). */
void clt__prof_record(clt_context *ctx, cl_event ev, const char *op, const char *impl,
                      clt_profile_kind kind, uint64_t bytes);

/* Tests: a smaller trace cap (1 .. CLT_PROFILE_TRACE_CAP), applied from the next reset on. */
void clt__prof_set_trace_cap(clt_context *ctx, size_t cap);
/* Tests: the largest number of commands that waited unresolved since the last reset. */
size_t clt__prof_pending_peak(const clt_context *ctx);

/* One resolved command of the trace, oldest first (i < stats.trace_records). Times in device ns.
 * Returns 0 when i is out of range. */
typedef struct clt__prof_span {
    const char *op, *impl;
    clt_profile_kind kind;
    uint64_t queued, start, end, bytes;
    int failed; /* ended in an error: no times */
} clt__prof_span;
int clt__prof_trace_at(const clt_context *ctx, size_t i, clt__prof_span *out);

#endif
