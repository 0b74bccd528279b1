/* Recording: the hooks the enqueue sites call, the pending ring of events, and their resolution into
 * per-(op, impl) rows and the trace ring. Everything is sized at creation except the trace, which
 * grows up to its cap, so memory stays bounded however many commands a context runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profiler_state.h"

clt_status clt__prof_create(clt_context *ctx)
{
    struct clt_profiler *p = calloc(1, sizeof *p);
    if (!p)
        return clt__fail(ctx, CLT_ERR_OUT_OF_HOST_MEMORY, "creating the profiler: out of host memory");
    p->trace_cap = p->trace_cap_next = CLT_PROFILE_TRACE_CAP;
    for (size_t i = 0; i < ROW_INDEX_SLOTS; i++)
        p->row_index[i] = -1;
    ctx->prof = p;
    return CLT_SUCCESS;
}

void clt__prof_destroy(clt_context *ctx)
{
    if (!ctx->prof)
        return;
    clt__prof_clear(ctx->prof);
    free(ctx->prof->trace);
    free(ctx->prof);
    ctx->prof = NULL;
}

cl_event *clt__prof_event(clt_context *ctx)
{
    if (!ctx->prof)
        return NULL;
    ctx->prof->slot = NULL;
    return &ctx->prof->slot;
}

static uint64_t pair_hash(const char *op, const char *impl)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (const unsigned char *s = (const unsigned char *)op; *s; s++)
        h = (h ^ *s) * 0x100000001b3ull;
    h = (h ^ 0xff) * 0x100000001b3ull;
    for (const unsigned char *s = (const unsigned char *)impl; *s; s++)
        h = (h ^ *s) * 0x100000001b3ull;
    return h;
}

/* The row of (op, impl), created when new. When the table is full, new pairs share one row
 * "(other)" (itself the last row that can be created). */
static uint32_t row_of(struct clt_profiler *p, const char *op, const char *impl, clt_profile_kind kind)
{
    uint64_t h = pair_hash(op, impl);
    size_t slot = (size_t)h % ROW_INDEX_SLOTS;
    for (;; slot = (slot + 1) % ROW_INDEX_SLOTS) {
        int32_t r = p->row_index[slot];
        if (r < 0)
            break;
        const prof_row *row = &p->rows[r];
        if (row->hash == h && strcmp(row->e.op, op) == 0 && strcmp(row->e.impl, impl) == 0)
            return (uint32_t)r;
    }
    if (p->n_rows == CLT_PROFILE_MAX_ROWS - 1) {
        op = "(other)";
        impl = "(other)";
        h = pair_hash(op, impl);
        slot = (size_t)h % ROW_INDEX_SLOTS;
        while (p->row_index[slot] >= 0)
            slot = (slot + 1) % ROW_INDEX_SLOTS;
    } else if (p->n_rows == CLT_PROFILE_MAX_ROWS) {
        return p->n_rows - 1; /* "(other)" */
    }
    uint32_t r = p->n_rows++;
    prof_row *row = &p->rows[r];
    memset(row, 0, sizeof *row);
    row->hash = h;
    snprintf(row->e.op, sizeof row->e.op, "%s", op);
    snprintf(row->e.impl, sizeof row->e.impl, "%s", impl);
    row->e.kind = kind;
    p->row_index[slot] = (int32_t)r;
    return r;
}

static void trace_push(struct clt_profiler *p, const prof_record *rec)
{
    if (p->trace_count == p->trace_cap) {
        p->trace[p->trace_head] = *rec; /* overwrite the oldest */
        p->trace_head = (p->trace_head + 1) % p->trace_cap;
        p->trace_dropped++;
        return;
    }
    if (p->trace_count == p->trace_alloc) {
        size_t n = p->trace_alloc ? p->trace_alloc * 2 : 1024;
        if (n > p->trace_cap)
            n = p->trace_cap;
        prof_record *t = realloc(p->trace, n * sizeof *t);
        if (!t) {
            p->trace_dropped++; /* no memory: the rows still count it */
            return;
        }
        p->trace = t;
        p->trace_alloc = n;
    }
    /* While not full, head is 0 and records sit in order. */
    p->trace[p->trace_count++] = *rec;
}

/* Read the times of a complete (or failed) command into its row and the trace. */
static void resolve_one(struct clt_profiler *p, const prof_pending *pe)
{
    prof_row *row = &p->rows[pe->row];
    prof_record rec = {.row = pe->row, .bytes = pe->bytes};
    cl_ulong q = 0, s = 0, e = 0;
    /* A command that failed has no profiling info (or zeros): counted, no times. */
    if (clGetEventProfilingInfo(pe->ev, CL_PROFILING_COMMAND_QUEUED, sizeof q, &q, NULL) ||
        clGetEventProfilingInfo(pe->ev, CL_PROFILING_COMMAND_START, sizeof s, &s, NULL) ||
        clGetEventProfilingInfo(pe->ev, CL_PROFILING_COMMAND_END, sizeof e, &e, NULL) || e == 0) {
        rec.failed = 1;
        row->e.failed++;
        q = s = e = 0;
    }
    /* Drivers are not always monotonic across the three clocks: clamp, never go negative. */
    if (s < q)
        s = q;
    if (e < s)
        e = s;
    rec.queued = q;
    rec.start = s;
    rec.end = e;
    row->e.count++;
    row->e.host_ns += s - q;
    if (!rec.failed) {
        if (p->last_end && s > p->last_end)
            row->e.idle_ns += s - p->last_end;
        p->last_end = e;
    }
    if (row->e.kind == CLT_PROFILE_KERNEL)
        row->e.kernel_ns += e - s;
    else
        row->e.transfer_ns += e - s;
    row->e.bytes += pe->bytes;
    p->commands++;
    trace_push(p, &rec);
}

static cl_int status_of(cl_event ev)
{
    cl_int exec = CL_QUEUED;
    if (clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof exec, &exec, NULL))
        exec = -1;
    return exec;
}

static cl_event pending_at(const struct clt_profiler *p, size_t i)
{
    return p->pending[(p->pending_head + i) % CLT_PROFILE_MAX_PENDING].ev;
}

/* How many pending commands, oldest first, have finished. Commands of an in-order queue finish in
 * order, so the finished ones are a prefix: a binary search asks the driver O(log n) times instead
 * of once per command (each query costs host time on the launch path). */
static size_t finished_prefix(const struct clt_profiler *p)
{
    size_t n = p->pending_count;
    if (n == 0 || status_of(pending_at(p, n - 1)) <= CL_COMPLETE)
        return n;
    size_t lo = 0, hi = n - 1; /* the answer lies in [lo, hi]; command hi is not finished */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (status_of(pending_at(p, mid)) <= CL_COMPLETE)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void clt__prof_resolve(struct clt_profiler *p, int block)
{
    if (p->pending_count == 0)
        return;
    if (block) {
        cl_event newest = pending_at(p, p->pending_count - 1);
        clWaitForEvents(1, &newest);
    }
    for (size_t done = finished_prefix(p); done > 0; done--) {
        prof_pending *pe = &p->pending[p->pending_head];
        resolve_one(p, pe);
        clReleaseEvent(pe->ev);
        pe->ev = NULL;
        p->pending_head = (p->pending_head + 1) % CLT_PROFILE_MAX_PENDING;
        p->pending_count--;
    }
}

void clt__prof_clear(struct clt_profiler *p)
{
    while (p->pending_count > 0) {
        clReleaseEvent(p->pending[p->pending_head].ev);
        p->pending_head = (p->pending_head + 1) % CLT_PROFILE_MAX_PENDING;
        p->pending_count--;
    }
    p->pending_head = 0;
    p->pending_peak = 0;
    p->since_resolve = 0;
    p->n_rows = 0;
    for (size_t i = 0; i < ROW_INDEX_SLOTS; i++)
        p->row_index[i] = -1;
    memset(p->kernel_rows, 0, sizeof p->kernel_rows);
    p->trace_cap = p->trace_cap_next;
    p->trace_head = p->trace_count = 0;
    if (p->trace_alloc > p->trace_cap) {
        free(p->trace);
        p->trace = NULL;
        p->trace_alloc = 0;
    }
    p->trace_dropped = p->commands = p->stalls = p->last_end = 0;
}

/* Append an event (owned from now on) to the pending ring; keep the ring bounded. */
static void push_pending(clt_context *ctx, cl_event ev, uint32_t row, uint64_t bytes)
{
    struct clt_profiler *p = ctx->prof;
    if (p->pending_count == CLT_PROFILE_MAX_PENDING) {
        /* The host is that far ahead of the device: wait for the older half, then resolve it. */
        p->stalls++;
        clFlush(ctx->queue);
        size_t mid = (p->pending_head + CLT_PROFILE_MAX_PENDING / 2) % CLT_PROFILE_MAX_PENDING;
        clWaitForEvents(1, &p->pending[mid].ev);
        clt__prof_resolve(p, 0);
        if (p->pending_count == CLT_PROFILE_MAX_PENDING)
            clt__prof_resolve(p, 1); /* a driver that reported mid complete too early */
    }
    size_t at = (p->pending_head + p->pending_count) % CLT_PROFILE_MAX_PENDING;
    p->pending[at] = (prof_pending){.ev = ev, .row = row, .bytes = bytes};
    p->pending_count++;
    if (p->pending_count > p->pending_peak)
        p->pending_peak = p->pending_count;
    if (++p->since_resolve >= RESOLVE_EVERY) {
        p->since_resolve = 0;
        clt__prof_resolve(p, 0);
    }
}

void clt__prof_commit(clt_context *ctx, const char *op, const char *impl, clt_profile_kind kind,
                      uint64_t bytes)
{
    struct clt_profiler *p = ctx->prof;
    if (!p || !p->slot)
        return;
    cl_event ev = p->slot;
    p->slot = NULL;
    push_pending(ctx, ev, row_of(p, op, impl, kind), bytes);
}

void clt__prof_commit_kernel(clt_context *ctx, const char *op, cl_kernel kernel)
{
    struct clt_profiler *p = ctx->prof;
    if (!p || !p->slot)
        return;
    /* Kernels live as long as the context, so the pointer identifies the function. */
    size_t k = ((uintptr_t)kernel >> 4) % KERNEL_NAME_SLOTS;
    if (p->kernel_rows[k].kernel == kernel && p->kernel_rows[k].op == op &&
        p->kernel_rows[k].row < p->n_rows && strcmp(p->rows[p->kernel_rows[k].row].e.op, op) == 0) {
        cl_event ev = p->slot;
        p->slot = NULL;
        push_pending(ctx, ev, p->kernel_rows[k].row, 0);
        return;
    }
    char name[256] = ""; /* rows keep the first 63 characters */
    if (clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, sizeof name, name, NULL) != CL_SUCCESS)
        snprintf(name, sizeof name, "(unnamed kernel)");
    uint32_t row = row_of(p, op, name, CLT_PROFILE_KERNEL);
    p->kernel_rows[k].kernel = kernel;
    p->kernel_rows[k].op = op;
    p->kernel_rows[k].row = row;
    cl_event ev = p->slot;
    p->slot = NULL;
    push_pending(ctx, ev, row, 0);
}

void clt__prof_record(clt_context *ctx, cl_event ev, const char *op, const char *impl,
                      clt_profile_kind kind, uint64_t bytes)
{
    struct clt_profiler *p = ctx->prof;
    if (!p || !ev)
        return;
    if (clRetainEvent(ev) != CL_SUCCESS)
        return;
    push_pending(ctx, ev, row_of(p, op, impl, kind), bytes);
}

void clt__prof_set_trace_cap(clt_context *ctx, size_t cap)
{
    if (ctx->prof && cap >= 1 && cap <= CLT_PROFILE_TRACE_CAP)
        ctx->prof->trace_cap_next = cap;
}

size_t clt__prof_pending_peak(const clt_context *ctx)
{
    return ctx->prof ? ctx->prof->pending_peak : 0;
}

int clt__prof_trace_at(const clt_context *ctx, size_t i, clt__prof_span *out)
{
    const struct clt_profiler *p = ctx->prof;
    if (!p || i >= p->trace_count)
        return 0;
    const prof_record *r = &p->trace[(p->trace_head + i) % p->trace_cap];
    const clt_profile_entry *e = &p->rows[r->row].e;
    *out = (clt__prof_span){.op = e->op, .impl = e->impl, .kind = e->kind, .queued = r->queued,
                            .start = r->start, .end = r->end, .bytes = r->bytes,
                            .failed = (int)r->failed};
    return 1;
}
