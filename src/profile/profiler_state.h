/* The profiler's state, shared by the files of src/profile/ only. */
#ifndef CLT_PROFILER_STATE_H
#define CLT_PROFILER_STATE_H

#include "profile/profile.h"

/* Commands are resolved every RESOLVE_EVERY commits (non-blocking status queries). */
#define RESOLVE_EVERY 64
#define KERNEL_NAME_SLOTS 64
#define ROW_INDEX_SLOTS 512 /* open addressing, > 2 * CLT_PROFILE_MAX_ROWS */

typedef struct prof_row {
    clt_profile_entry e;
    uint64_t hash;
} prof_row;

typedef struct prof_pending {
    cl_event ev;
    uint32_t row;
    uint64_t bytes;
} prof_pending;

typedef struct prof_record {
    uint32_t row;
    uint32_t failed;
    uint64_t queued, start, end, bytes;
} prof_record;

struct clt_profiler {
    cl_event slot; /* written by the enqueue, taken by commit */

    prof_row rows[CLT_PROFILE_MAX_ROWS];
    uint32_t n_rows;
    int32_t row_index[ROW_INDEX_SLOTS]; /* -1 empty, else a row */

    struct {                      /* CL_KERNEL_FUNCTION_NAME by kernel and op, direct-mapped */
        cl_kernel kernel;
        const char *op;           /* the pointer last seen; the row's text is checked too */
        uint32_t row;
    } kernel_rows[KERNEL_NAME_SLOTS];

    prof_pending pending[CLT_PROFILE_MAX_PENDING]; /* ring, oldest at head */
    size_t pending_head, pending_count, pending_peak;
    unsigned since_resolve;

    prof_record *trace; /* ring of the latest trace_cap records, grown on demand */
    size_t trace_alloc, trace_cap, trace_cap_next, trace_head, trace_count;
    uint64_t trace_dropped;
    uint64_t commands, stalls;
    uint64_t last_end; /* END of the last resolved command, 0 after a reset */
};

/* Resolve pending commands in queue order: with block, wait for all of them; otherwise stop at the
 * first one that is not complete. */
void clt__prof_resolve(struct clt_profiler *p, int block);
/* The profiler of ctx for public call `who`; CLT_ERR_UNSUPPORTED (saying how to turn it on) when off. */
clt_status clt__prof_need(clt_context *ctx, const char *who, struct clt_profiler **out);
/* Forget rows, trace and counters; drop pending events. */
void clt__prof_clear(struct clt_profiler *p);

#endif
