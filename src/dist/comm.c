/* The communicator: a duplicated MPI_Comm bound to a context, its options and its pool of pinned
 * staging buffers. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dist/dist.h"

double clt__dist_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

cl_int clt__dist_event_status(cl_event ev)
{
    cl_int s = CL_QUEUED;
    cl_int err = clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, NULL);
    return err != CL_SUCCESS ? err : s;
}

void clt_dist_options_init(clt_dist_options *opts)
{
    if (!opts)
        return;
    opts->chunk_bytes = 0; /* auto: see cltensor_dist.h */
    opts->window = 4;
    opts->timeout_s = 60.0;
    const char *e = getenv("CLT_DIST_CHUNK_BYTES");
    uint64_t b = 0;
    if (e && *e && clt__parse_bytes(e, &b) == 0 && b >= 4096 && b <= ((uint64_t)1 << 30))
        opts->chunk_bytes = (size_t)b & ~(size_t)3;
    e = getenv("CLT_DIST_TIMEOUT");
    if (e && *e) {
        char *end = NULL;
        double t = strtod(e, &end);
        if (end && *end == '\0' && t > 0)
            opts->timeout_s = t;
    }
}

clt_status clt_dist_comm_create(clt_context *ctx, MPI_Comm comm, const clt_dist_options *opts,
                                clt_dist_comm **out)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_dist_comm_create";
    if (out)
        *out = NULL;
    if (!ctx || !out)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", who, ctx ? "out" : "ctx");
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: MPI is not initialised (MPI_Init first)", who);
    if (comm == MPI_COMM_NULL)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: comm is MPI_COMM_NULL", who);
    clt_dist_options o;
    if (opts)
        o = *opts;
    else
        clt_dist_options_init(&o);
    int auto_chunk = o.chunk_bytes == 0;
    if (o.chunk_bytes == 0) {
        /* On a CPU device every stage is a memcpy by the same cores: 1 MiB chunks stay in cache
         * between the device->host copy, the exchange, the sum and the host->device copy (measured
         * 2x the throughput of 4 MiB at 256 MiB, POCL, 2 ranks). A GPU's DMA wants bigger ones. */
        clt_device_info info;
        clt_context_device_info(ctx, &info);
        o.chunk_bytes = info.type == CLT_DEVICE_CPU ? (size_t)1 << 20 : (size_t)4 << 20;
    }
    if (o.chunk_bytes < 4096 || o.chunk_bytes > ((size_t)1 << 30) || o.chunk_bytes % 4)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT,
                         "%s: chunk_bytes %zu is not a multiple of 4 in [4096, 2^30]", who, o.chunk_bytes);
    if (o.window < 1 || o.window > DIST_MAX_WINDOW)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: window %d is outside 1..%d", who, o.window,
                         DIST_MAX_WINDOW);
    if (!(o.timeout_s > 0))
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: timeout_s must be > 0", who);
    clt_dist_comm *c = calloc(1, sizeof *c);
    if (!c)
        return clt__fail(ctx, CLT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", who);
    c->ctx = ctx;
    c->opts = o;
    int rc = MPI_Comm_dup(comm, &c->comm);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_rank(c->comm, &c->rank);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_size(c->comm, &c->size);
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, msg, &len);
        if (c->comm != MPI_COMM_NULL)
            MPI_Comm_free(&c->comm);
        free(c);
        return clt__fail(ctx, CLT_ERR_COMM, "%s: %s", who, msg);
    }
    c->last_progress = clt__dist_now();
    clt__dist_node_create(c, auto_chunk);
    *out = c;
    return CLT_SUCCESS;
}

void clt_dist_comm_free(clt_dist_comm *c)
{
    if (!c)
        return;
    clt__dist_drain(c);
    clt__dist_node_free(c);
    for (int i = 0; i < DIST_MAX_STAGES; i++)
        if (c->stages[i].mem && !c->stages[i].in_use)
            clt__pinned_release(c->ctx, c->stages[i].mem, c->stages[i].ptr);
    /* A broken communicator may still have requests MPI could not cancel: leave it to MPI_Finalize. */
    if (!c->broken)
        MPI_Comm_free(&c->comm);
    free(c);
}

int clt_dist_rank(const clt_dist_comm *c)
{
    return c ? c->rank : -1;
}

int clt_dist_size(const clt_dist_comm *c)
{
    return c ? c->size : -1;
}

clt_status clt__dist_stage_get(clt_dist_comm *c, size_t bytes, dist_stage **out)
{
    dist_stage *best = NULL, *empty = NULL;
    for (int i = 0; i < DIST_MAX_STAGES; i++) {
        dist_stage *s = &c->stages[i];
        if (!s->mem) {
            if (!empty)
                empty = s;
        } else if (!s->in_use && s->bytes >= bytes && (!best || s->bytes < best->bytes)) {
            best = s;
        }
    }
    if (!best) {
        if (!empty)
            return clt__fail(c->ctx, CLT_ERR_OUT_OF_HOST_MEMORY,
                             "%d pinned staging buffers in use: too many collectives in flight",
                             DIST_MAX_STAGES);
        size_t want = (bytes + 65535) & ~(size_t)65535;
        cl_int err = clt__pinned_create(c->ctx, want ? want : 65536, &empty->mem, &empty->ptr);
        if (err != CL_SUCCESS)
            return clt__cl_fail(c->ctx, err, "pinned staging buffer");
        empty->bytes = want ? want : 65536;
        best = empty;
    }
    best->in_use = 1;
    *out = best;
    return CLT_SUCCESS;
}

clt_status clt__dist_break(clt_dist_comm *c, const char *who, const char *fmt, ...)
{
    if (!c->broken) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->broken_why, sizeof c->broken_why, fmt, ap);
        va_end(ap);
        c->broken = 1;
    }
    return clt__fail(c->ctx, CLT_ERR_COMM, "%s: %s", who, c->broken_why);
}

clt_status clt__dist_broken_status(clt_dist_comm *c, const char *who)
{
    return clt__fail(c->ctx, CLT_ERR_COMM, "%s: the communicator is broken by an earlier failure (%s)",
                     who, c->broken_why);
}
