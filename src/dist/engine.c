/* The progress engine of the collectives: per collective, chunks move from "reading" (the
 * device->host read enqueued when the collective started) to "exchanging" (MPI requests posted) to
 * "done" (the host->device write enqueued). One non-blocking pass (clt__dist_advance) tests what is
 * pending and starts what became ready; futures and waits repeat it. No thread of our own.
 *
 * Host layout of a collective's staging buffer: allreduce and broadcast keep the tensor's layout;
 * allgather and reduce_scatter put, for chunk c (elements [first, first + count) of each rank's
 * block), the size blocks side by side at size * first, block q at size * first + q * count, so
 * each chunk is one contiguous MPI buffer.
 *
 * Matching: chunks start their exchange in chunk order, and a collective starts its chunks only
 * once every older collective has started all of its own, so every rank posts MPI's nonblocking
 * collectives in one order. The ring's point-to-point messages carry the tag
 * (seq % 64) * 512 + chunk % 512: unique among what can be in flight (at most 64 collectives, at
 * most 64 chunks each), and non-overtaking orders the steps of one chunk. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dist/dist.h"

static void nap(void)
{
    struct timespec ts = {0, 20000}; /* 20 us: leaves the CPU to the device (POCL) and to MPI */
    nanosleep(&ts, NULL);
}

static size_t host_offset(const dist_op *op, const dist_chunk *ch, int block)
{
    if (op->kind == DIST_ALLREDUCE || op->kind == DIST_BROADCAST)
        return ch->first * op->esz;
    return ((size_t)op->comm->size * ch->first + (size_t)block * ch->count) * op->esz;
}

static int mod(int a, int p)
{
    return ((a % p) + p) % p;
}

/* Ring segment i of a chunk of len elements: [len * i / P, len * (i + 1) / P). */
static size_t seg_start(size_t len, int i, int p)
{
    return len * (size_t)i / (size_t)p;
}

static clt_status mpi_failed(clt_dist_comm *c, const char *who, const char *what, int rc)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS)
        snprintf(msg, sizeof msg, "error %d", rc);
    return clt__dist_break(c, who, "%s failed: %s", what, msg);
}

static float *chunk_host(const dist_op *op, const dist_chunk *ch)
{
    return (float *)(op->stage->ptr + host_offset(op, ch, 0));
}

static clt_status post_ring_step(dist_op *op, dist_chunk *ch, size_t ci, const char *who)
{
    clt_dist_comm *c = op->comm;
    int p = c->size, r = c->rank, k = ch->step;
    float *h = chunk_host(op, ch);
    size_t len = ch->count;
    int send_seg, recv_seg;
    float *recv_to;
    if (k < p - 1) { /* reduce-scatter: add the left neighbour's partial sum of segment r-k-1 */
        send_seg = mod(r - k, p);
        recv_seg = mod(r - k - 1, p);
        recv_to = op->scratch + (size_t)ch->slot * op->scratch_elems;
    } else { /* allgather: pass the finished segments around */
        int t = k - (p - 1);
        send_seg = mod(r + 1 - t, p);
        recv_seg = mod(r - t, p);
        recv_to = h + seg_start(len, recv_seg, p);
    }
    int tag = (int)((op->seq % DIST_MAX_IN_FLIGHT) * 512 + ci % 512);
    size_t s0 = seg_start(len, send_seg, p), s1 = seg_start(len, send_seg + 1, p);
    size_t g0 = seg_start(len, recv_seg, p), g1 = seg_start(len, recv_seg + 1, p);
    int rc = MPI_Irecv(recv_to, (int)(g1 - g0), MPI_FLOAT, mod(r - 1, p), tag, c->comm, &ch->req[0]);
    if (rc != MPI_SUCCESS)
        return mpi_failed(c, who, "MPI_Irecv", rc);
    rc = MPI_Isend(h + s0, (int)(s1 - s0), MPI_FLOAT, mod(r + 1, p), tag, c->comm, &ch->req[1]);
    if (rc != MPI_SUCCESS)
        return mpi_failed(c, who, "MPI_Isend", rc);
    return CLT_SUCCESS;
}

static void scale_mean(float *x, size_t n, int p)
{
    for (size_t i = 0; i < n; i++)
        x[i] = x[i] / (float)p;
}

static clt_status enqueue_write(dist_op *op, size_t dst_byte, size_t host_byte, size_t bytes,
                                const char *who)
{
    clt_context *ctx = op->comm->ctx;
    cl_event ev = NULL;
    cl_int err = clEnqueueWriteBuffer(ctx->queue, op->dst, CL_FALSE, op->dst_off + dst_byte, bytes,
                                      op->stage->ptr + host_byte, 0, NULL, &ev);
    if (err != CL_SUCCESS) {
        clt__cl_fail(ctx, err, "clEnqueueWriteBuffer");
        return clt__dist_break(op->comm, who, "a host->device write failed: %s", clt__cl_error_name(err));
    }
    if (op->last_write)
        clReleaseEvent(op->last_write);
    op->last_write = ev;
    return CLT_SUCCESS;
}

/* The chunk's exchange is over: its result goes back to the device. */
static clt_status finish_exchange(dist_op *op, dist_chunk *ch, const char *who)
{
    clt_dist_comm *c = op->comm;
    clt_status st = CLT_SUCCESS;
    size_t e = op->esz;
    switch (op->kind) {
    case DIST_ALLREDUCE:
        if (op->red == CLT_DIST_MEAN && c->size == 1)
            scale_mean(chunk_host(op, ch), ch->count, 1);
        st = enqueue_write(op, ch->first * e, host_offset(op, ch, 0), ch->count * e, who);
        break;
    case DIST_BROADCAST:
        if (c->rank != op->root)
            st = enqueue_write(op, ch->first * e, host_offset(op, ch, 0), ch->count * e, who);
        break;
    case DIST_ALLGATHER:
        for (int q = 0; q < c->size && st == CLT_SUCCESS; q++)
            st = enqueue_write(op, ((size_t)q * op->n + ch->first) * e, host_offset(op, ch, q),
                               ch->count * e, who);
        break;
    case DIST_REDUCE_SCATTER:
        if (op->red == CLT_DIST_MEAN)
            scale_mean(chunk_host(op, ch), ch->count, c->size);
        st = enqueue_write(op, ch->first * e, host_offset(op, ch, 0), ch->count * e, who);
        break;
    }
    ch->state = CHUNK_DONE;
    op->exchanged++;
    if (op->exchanged == op->nchunks) {
        op->complete = 1;
        clFlush(c->ctx->queue);
    }
    return st;
}

static clt_status start_exchange(dist_op *op, dist_chunk *ch, size_t ci, const char *who)
{
    clt_dist_comm *c = op->comm;
    ch->req[0] = ch->req[1] = MPI_REQUEST_NULL;
    int rc = MPI_SUCCESS;
    const char *what = "";
    void *h = op->stage->ptr + host_offset(op, ch, 0);
    switch (op->kind) {
    case DIST_ALLREDUCE:
        if (c->size == 1)
            return finish_exchange(op, ch, who);
        for (ch->slot = 0; op->scratch_used & (1u << ch->slot); ch->slot++) {
        }
        op->scratch_used |= 1u << ch->slot;
        ch->step = 0;
        ch->state = CHUNK_EXCHANGING;
        c->active++;
        return post_ring_step(op, ch, ci, who);
    case DIST_BROADCAST:
        rc = MPI_Ibcast(h, (int)ch->count, MPI_BYTE, op->root, c->comm, &ch->req[0]);
        what = "MPI_Ibcast";
        break;
    case DIST_ALLGATHER:
        rc = MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, h, (int)ch->count, MPI_BYTE, c->comm,
                            &ch->req[0]);
        what = "MPI_Iallgather";
        break;
    case DIST_REDUCE_SCATTER:
        rc = MPI_Ireduce_scatter_block(MPI_IN_PLACE, h, (int)ch->count, MPI_FLOAT, MPI_SUM, c->comm,
                                       &ch->req[0]);
        what = "MPI_Ireduce_scatter_block";
        break;
    }
    if (rc != MPI_SUCCESS)
        return mpi_failed(c, who, what, rc);
    ch->state = CHUNK_EXCHANGING;
    c->active++;
    return CLT_SUCCESS;
}

/* Both requests of an exchanging chunk completed. */
static clt_status step_done(dist_op *op, dist_chunk *ch, size_t ci, const char *who)
{
    clt_dist_comm *c = op->comm;
    if (op->kind == DIST_ALLREDUCE) {
        int p = c->size, r = c->rank, k = ch->step;
        float *h = chunk_host(op, ch);
        if (k < p - 1) {
            int g = mod(r - k - 1, p);
            size_t g0 = seg_start(ch->count, g, p), g1 = seg_start(ch->count, g + 1, p);
            const float *in = op->scratch + (size_t)ch->slot * op->scratch_elems;
            for (size_t i = g0; i < g1; i++)
                h[i] = h[i] + in[i - g0];
            if (k == p - 2 && op->red == CLT_DIST_MEAN) { /* this rank now owns segment r+1 */
                int own = mod(r + 1, p);
                size_t o0 = seg_start(ch->count, own, p), o1 = seg_start(ch->count, own + 1, p);
                scale_mean(h + o0, o1 - o0, p);
            }
        }
        ch->step++;
        if (ch->step < 2 * (p - 1))
            return post_ring_step(op, ch, ci, who);
        op->scratch_used &= ~(1u << ch->slot);
    }
    c->active--;
    return finish_exchange(op, ch, who);
}

/* Give up on every collective in flight: cancel what MPI can cancel, abandon the rest. */
static void fail_all(clt_dist_comm *c)
{
    for (dist_op *op = c->ops; op; op = op->next) {
        if (op->complete)
            continue;
        for (size_t i = 0; i < op->started; i++) {
            dist_chunk *ch = &op->chunks[i];
            if (ch->state != CHUNK_EXCHANGING)
                continue;
            for (int k = 0; k < 2; k++) {
                if (ch->req[k] == MPI_REQUEST_NULL)
                    continue;
                if (op->kind == DIST_ALLREDUCE) { /* point-to-point: cancellable */
                    MPI_Cancel(&ch->req[k]);
                    MPI_Request_free(&ch->req[k]);
                }
            }
        }
        op->status = CLT_ERR_COMM;
        op->complete = 1;
        op->abandoned = 1; /* its host memory may still be written by MPI: never reused */
    }
    c->active = 0;
}

static void op_free(dist_op *op)
{
    for (size_t i = 0; i < op->nchunks; i++)
        if (op->chunks[i].read_done)
            clReleaseEvent(op->chunks[i].read_done);
    if (op->last_write)
        clReleaseEvent(op->last_write);
    if (op->start)
        clReleaseEvent(op->start);
    if (!op->abandoned) {
        if (op->stage)
            op->stage->in_use = 0;
        free(op->scratch);
    }
    if (op->src)
        clReleaseMemObject(op->src);
    if (op->dst)
        clReleaseMemObject(op->dst);
    free(op->chunks);
    free(op);
}

static int write_finished(dist_op *op)
{
    if (!op->last_write)
        return 1;
    return clt__dist_event_status(op->last_write) <= CL_COMPLETE; /* done, or failed: nothing to wait for */
}

/* Free the collectives that are over, whose futures are gone and whose writes have landed. */
static void retire(clt_dist_comm *c)
{
    dist_op **link = &c->ops;
    while (*link) {
        dist_op *op = *link;
        if (op->complete && !op->has_future &&
            (op->abandoned || (write_finished(op) && op->node_open == 0))) {
            *link = op->next;
            c->in_flight--;
            op_free(op);
        } else {
            link = &op->next;
        }
    }
}

clt_status clt__dist_advance(clt_dist_comm *c, const char *who)
{
    if (c->broken)
        return clt__dist_broken_status(c, who);
    int moved = 0, older_all_started = 1, node_waits = 0;
    clt_status st = CLT_SUCCESS;
    if (c->node.on)
        st = clt__dist_node_poll(c, &moved, who);
    for (dist_op *op = c->ops; op && st == CLT_SUCCESS; op = op->next) {
        if (op->node) {
            if (op->node_open > 0)
                st = clt__dist_node_advance(op, older_all_started, &moved, &node_waits, who);
            older_all_started = older_all_started && op->started == op->nchunks;
            continue;
        }
        while (op->first_open < op->started && op->chunks[op->first_open].state == CHUNK_DONE)
            op->first_open++;
        for (size_t i = op->first_open; i < op->started && st == CLT_SUCCESS; i++) {
            dist_chunk *ch = &op->chunks[i];
            if (ch->state != CHUNK_EXCHANGING)
                continue;
            int flag = 0;
            int rc = MPI_Testall(2, ch->req, &flag, MPI_STATUSES_IGNORE);
            if (rc != MPI_SUCCESS)
                st = mpi_failed(c, who, "MPI_Testall", rc);
            else if (flag) {
                moved = 1;
                st = step_done(op, ch, i, who);
            }
        }
        while (st == CLT_SUCCESS && older_all_started && op->started < op->nchunks &&
               c->active < c->opts.window) {
            dist_chunk *ch = &op->chunks[op->started];
            if (ch->read_done) {
                cl_int s = clt__dist_event_status(ch->read_done);
                if (s < 0)
                    st = clt__dist_break(c, who, "a device->host read failed: %s (in the read or in "
                                         "earlier work on the context)",
                                         clt__cl_error_name(s));
                if (st != CLT_SUCCESS || s != CL_COMPLETE)
                    break;
            }
            moved = 1;
            size_t ci = op->started++;
            st = start_exchange(op, ch, ci, who);
        }
        older_all_started = older_all_started && op->started == op->nchunks;
    }
    double now = clt__dist_now();
    if (st == CLT_SUCCESS) {
        if (moved || (c->active == 0 && !node_waits))
            c->last_progress = now;
        else if (now - c->last_progress > c->opts.timeout_s)
            st = clt__dist_break(c, who,
                                 "no progress for %.1f s (timeout_s): a peer stopped answering, or the "
                                 "ranks did not start the same collectives",
                                 now - c->last_progress);
    }
    if (st != CLT_SUCCESS)
        fail_all(c);
    retire(c);
    return st;
}

/* ------------------------------------------------------------------------ futures */

static clt_status future_progress(void *state, int block, const char *who)
{
    dist_op *op = state;
    for (;;) {
        if (!op->complete && op->comm)
            clt__dist_advance(op->comm, who);
        if (op->complete) {
            if (op->status == CLT_SUCCESS)
                return CLT_SUCCESS;
            clt_dist_comm *c = op->comm;
            return c ? clt__fail(c->ctx, op->status, "%s: the collective failed: %s", who, c->broken_why)
                     : op->status;
        }
        if (!block)
            return CLT_ERR_NOT_READY;
        nap();
    }
}

static void future_release(void *state)
{
    dist_op *op = state;
    op->has_future = 0;
    if (!op->comm) { /* its communicator is gone: the op is the future's alone */
        op_free(op);
        return;
    }
    retire(op->comm);
}

static const clt__future_hooks dist_future_hooks = {future_progress, future_release};

/* ------------------------------------------------------------------------ start, drain */

static clt_status enqueue_read(dist_op *op, size_t src_byte, size_t host_byte, size_t bytes,
                               cl_event *ev)
{
    clt_context *ctx = op->comm->ctx;
    if (*ev) {
        clReleaseEvent(*ev);
        *ev = NULL;
    }
    cl_int err = clEnqueueReadBuffer(ctx->queue, op->src, CL_FALSE, op->src_off + src_byte, bytes,
                                     op->stage->ptr + host_byte, 0, NULL, ev);
    return err == CL_SUCCESS ? CLT_SUCCESS : clt__cl_fail(ctx, err, "clEnqueueReadBuffer");
}

/* The staged path: the pinned stage and every chunk's device->host read, enqueued at once. */
static clt_status start_staged(dist_op *op, const char *who)
{
    clt_dist_comm *c = op->comm;
    size_t total_host = op->n * op->esz;
    if (op->kind == DIST_ALLGATHER || op->kind == DIST_REDUCE_SCATTER)
        total_host *= (size_t)c->size;
    op->chunk_elems = c->opts.chunk_bytes / op->esz;
    op->nchunks = (op->n + op->chunk_elems - 1) / op->chunk_elems;
    op->chunks = calloc(op->nchunks ? op->nchunks : 1, sizeof *op->chunks);
    if (op->kind == DIST_ALLREDUCE && c->size > 1 && op->n > 0) {
        size_t longest = op->chunk_elems < op->n ? op->chunk_elems : op->n;
        op->scratch_elems = longest / (size_t)c->size + 1;
        op->scratch = malloc(op->scratch_elems * (size_t)c->opts.window * sizeof(float));
    }
    if (!op->chunks || (op->scratch_elems && !op->scratch))
        return clt__dist_break(c, who, "out of host memory");
    clt_status st = CLT_SUCCESS;
    if (op->n > 0)
        st = clt__dist_stage_get(c, total_host, &op->stage);
    if (st != CLT_SUCCESS)
        return clt__dist_break(c, who, "no pinned staging memory for %zu bytes", total_host);
    size_t e = op->esz;
    for (size_t i = 0; i < op->nchunks && st == CLT_SUCCESS; i++) {
        dist_chunk *ch = &op->chunks[i];
        ch->first = i * op->chunk_elems;
        ch->count = op->n - ch->first < op->chunk_elems ? op->n - ch->first : op->chunk_elems;
        ch->req[0] = ch->req[1] = MPI_REQUEST_NULL;
        switch (op->kind) {
        case DIST_ALLREDUCE:
            st = enqueue_read(op, ch->first * e, host_offset(op, ch, 0), ch->count * e, &ch->read_done);
            break;
        case DIST_BROADCAST:
            if (c->rank == op->root)
                st = enqueue_read(op, ch->first * e, host_offset(op, ch, 0), ch->count * e,
                                  &ch->read_done);
            break;
        case DIST_ALLGATHER:
            st = enqueue_read(op, ch->first * e, host_offset(op, ch, c->rank), ch->count * e,
                              &ch->read_done);
            break;
        case DIST_REDUCE_SCATTER:
            for (int q = 0; q < c->size && st == CLT_SUCCESS; q++)
                st = enqueue_read(op, ((size_t)q * op->n + ch->first) * e, host_offset(op, ch, q),
                                  ch->count * e, &ch->read_done);
            break;
        }
    }
    if (st == CLT_SUCCESS && op->nchunks && clFlush(c->ctx->queue) != CL_SUCCESS)
        st = clt__fail(c->ctx, CLT_ERR_OPENCL, "clFlush failed");
    if (st != CLT_SUCCESS) /* reads may be enqueued already and the peers expect this rank */
        return clt__dist_break(c, who, "starting the collective failed: %s", clt_last_error(c->ctx));
    return CLT_SUCCESS;
}

clt_status clt__dist_start(dist_op *op, const char *who, clt_future **out)
{
    clt_dist_comm *c = op->comm;
    *out = NULL;
    /* Tags and matching allow 64 collectives with exchanges outstanding: wait for the oldest. */
    for (;;) {
        int open = 0;
        for (dist_op *o = c->ops; o; o = o->next)
            open += !o->complete;
        if (open < DIST_MAX_IN_FLIGHT)
            break;
        clt_status st = clt__dist_advance(c, who);
        if (st != CLT_SUCCESS) {
            op_free(op);
            return st;
        }
        nap();
    }
    op->seq = c->next_seq++;
    op->status = CLT_SUCCESS;
    int node = op->kind == DIST_ALLREDUCE && op->n > 0 && clt__dist_node_takes(c, op->n * op->esz);
    clt_status st = node ? clt__dist_node_start(op, who) : start_staged(op, who);
    if (st != CLT_SUCCESS) { /* the communicator is over: wait for what was enqueued, then free */
        for (size_t i = 0; op->chunks && i < op->nchunks; i++)
            if (op->chunks[i].read_done)
                clWaitForEvents(1, &op->chunks[i].read_done);
        if (op->start)
            clWaitForEvents(1, &op->start);
        op_free(op);
        return st;
    }
    op->complete = op->nchunks == 0;
    clt_future *f = NULL;
    st = clt__future_custom(c->ctx, &dist_future_hooks, op, &f);
    if (st != CLT_SUCCESS) {
        op->abandoned = 0;
        for (size_t i = 0; i < op->nchunks; i++)
            if (op->chunks[i].read_done)
                clWaitForEvents(1, &op->chunks[i].read_done);
        op_free(op);
        return clt__dist_break(c, who, "no future: %s", clt_last_error(c->ctx));
    }
    op->has_future = 1;
    dist_op **link = &c->ops;
    while (*link)
        link = &(*link)->next;
    *link = op;
    c->in_flight++;
    clt__dist_advance(c, who); /* chunks whose reads are done already start now */
    *out = f;
    return CLT_SUCCESS;
}

void clt__dist_drain(clt_dist_comm *c)
{
    for (;;) {
        int open = 0;
        for (dist_op *o = c->ops; o; o = o->next) /* node ops: until their last "done" is out */
            open += !o->complete || (o->node && o->node_open > 0 && !o->abandoned);
        if (!open || c->broken)
            break;
        clt__dist_advance(c, "clt_dist_comm_free");
        nap();
    }
    if (c->broken)
        fail_all(c);
    for (dist_op *o = c->ops; o; o = o->next)
        if (o->last_write && !o->abandoned)
            clWaitForEvents(1, &o->last_write);
    retire(c);
    /* What a future still holds lives on without the communicator. */
    while (c->ops) {
        dist_op *op = c->ops;
        c->ops = op->next;
        if (!op->abandoned && op->stage) {
            op->stage->in_use = 0;
            op->stage = NULL;
        }
        op->comm = NULL;
        op->next = NULL;
    }
}
