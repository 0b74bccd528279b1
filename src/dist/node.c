/* Allreduce when every rank of the communicator is on one node: through shared host memory, with
 * the sums on the device, so no byte is copied by MPI and none is summed by the host.
 *
 * Chunk g (numbered across collectives, the same on every rank) uses slot g % slots of every
 * rank's staging segment. Rank r owns segment r of each chunk (seg_at below). Per chunk, rank r:
 *   1. copies the segments the peers own from its device tensor into its own slot (q_out), and
 *      maps them for reading (on a GPU that map is the device -> host DMA); then signals PUB;
 *   2. once every peer's PUB is in: the sum of segment r over the ranks, in rank order, on the
 *      device, reading each peer's slot through its USE_HOST_PTR buffer (q_in; a write-invalidate
 *      map and unmap first tells the runtime the host memory changed: on a GPU the unmap is the
 *      host -> device DMA); the result goes to the tensor and into the own slot, mapped; RES;
 *   3. once every peer's RES is in: copies each peer's result segment into the tensor (q_in); when
 *      those copies finished it signals DONE: it reads none of the peers' slots any more.
 * A slot is reused for chunk g + slots once every peer's DONE for g is in (credits), so a slow
 * rank holds the others back instead of being overwritten.
 *
 * Per chunk each rank moves (P - 1) / P of it device -> host and host -> device in step 1 and 3
 * and 1 / P in step 2, the least any host-staged allreduce can: d2h and h2d of one tensor's size.
 * q_out and q_in are two in-order queues, so the two directions overlap. The collective's result
 * is on the context's queue through a barrier on both queues' last commands. */
#include <stdlib.h>
#include <string.h>

#include "dist/dist.h"
#include "ops/common/launch.h"
#include "program/program.h"

#define NODE_SLOTS 8
#define NODE_ALIGN 4096 /* USE_HOST_PTR regions start on a page: what runtimes pin without a copy */
/* Smaller allreduces take the ring: three signal rounds and a dozen commands per chunk cost more
 * than the ring's copies there (H200, 2 ranks: the same ~0.7 ms at 4 KiB - 1 MiB; a data-parallel
 * step of 5 buckets of 40-150 KB took 2.9 ms through the node path, 2.1 through the ring). */
#define NODE_MIN_BYTES ((size_t)1 << 20)
/* The node path's chunk on GPUs when the user left chunk_bytes to us: each chunk pays a round of
 * signals and map/unmap commands, so bigger chunks keep the DMA engines busy (H200, 2 ranks, 256
 * MiB, of the pinned-copy bound: 4 MiB chunks 0.25x, 8 MiB 0.50x, 16 MiB 0.83x, 32 MiB 0.84-0.85x
 * but 0.72x at 64 MiB, 64 MiB 0.78x). CPU devices keep chunk_bytes' 1 MiB (POCL, 2 ranks: 1 and 4
 * MiB alike, 16 MiB slower). */
#define NODE_GPU_CHUNK ((size_t)16 << 20)

int clt__dist_node_takes(const clt_dist_comm *c, size_t bytes)
{
    return c->node.on && bytes >= NODE_MIN_BYTES;
}

static size_t seg_at(size_t len, int i, int p)
{
    return len * (size_t)i / (size_t)p;
}

static uint64_t *got(dist_node *n, int type, int peer, int size)
{
    return &n->got[(size_t)type * (size_t)size + (size_t)peer];
}

static clt_status cl_failed(clt_dist_comm *c, const char *who, const char *what, cl_int err)
{
    return clt__dist_break(c, who, "%s failed: %s", what, clt__cl_error_name(err));
}

static int post_recv(clt_dist_comm *c, int type, int peer)
{
    return MPI_Irecv(NULL, 0, MPI_BYTE, peer, type, c->node.sig,
                     &c->node.recv[(size_t)type * (size_t)c->size + (size_t)peer]);
}

void clt__dist_node_create(clt_dist_comm *c, int auto_chunk)
{
    dist_node *n = &c->node;
    memset(n, 0, sizeof *n);
    n->sig = MPI_COMM_NULL;
    n->win = MPI_WIN_NULL;
    const char *e = getenv("CLT_DIST_SHM");
    int wanted = !(e && strcmp(e, "0") == 0);
    /* Every rank decides alike: the window and the signal communicator are collective. */
    MPI_Comm local = MPI_COMM_NULL;
    int local_size = 0, all = 0;
    if (MPI_Comm_split_type(c->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local) == MPI_SUCCESS) {
        MPI_Comm_size(local, &local_size);
        MPI_Comm_free(&local);
    }
    int mine = wanted && c->size > 1 && local_size == c->size;
    if (MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, c->comm) != MPI_SUCCESS || !all)
        return;
    n->slots = NODE_SLOTS;
    clt_device_info info;
    clt_context_device_info(c->ctx, &info);
    size_t chunk = auto_chunk && info.type != CLT_DEVICE_CPU ? NODE_GPU_CHUNK : c->opts.chunk_bytes;
    n->chunk_bytes = chunk;
    n->slot_bytes = (chunk + NODE_ALIGN - 1) & ~(size_t)(NODE_ALIGN - 1);
    size_t seg_bytes = n->slot_bytes * (size_t)n->slots;
    unsigned char *base = NULL;
    int ok = MPI_Comm_dup(c->comm, &n->sig) == MPI_SUCCESS &&
             MPI_Win_allocate_shared((MPI_Aint)(seg_bytes + NODE_ALIGN), 1, MPI_INFO_NULL, c->comm, &base,
                                     &n->win) == MPI_SUCCESS;
    n->buf = calloc((size_t)c->size, sizeof *n->buf);
    n->got = calloc((size_t)NODE_SIGNALS * (size_t)c->size, sizeof *n->got);
    n->recv = malloc((size_t)NODE_SIGNALS * (size_t)c->size * sizeof *n->recv);
    ok = ok && n->buf && n->got && n->recv;
    clt_context *ctx = c->ctx;
    cl_int err = CL_SUCCESS;
    for (int q = 0; q < c->size && ok; q++) {
        MPI_Aint bytes = 0;
        int disp = 0;
        unsigned char *p = NULL;
        ok = MPI_Win_shared_query(n->win, q, &bytes, &disp, &p) == MPI_SUCCESS && p;
        if (!ok)
            break;
        /* Mapped page-aligned in every process: the same offset to the next page everywhere. */
        p += (NODE_ALIGN - (uintptr_t)p % NODE_ALIGN) % NODE_ALIGN;
        /* Peers' segments are only read by our commands: a runtime keeping a device copy of them
         * then never writes it back over what their owner wrote. */
        cl_mem_flags rw = q == c->rank ? CL_MEM_READ_WRITE : CL_MEM_READ_ONLY;
        n->buf[q] = clCreateBuffer(ctx->dev->cl_ctx, rw | CL_MEM_USE_HOST_PTR, seg_bytes, p, &err);
        ok = err == CL_SUCCESS;
    }
    if (ok) {
        n->q_out = clCreateCommandQueue(ctx->dev->cl_ctx, ctx->dev->entry->device, 0, &err);
        ok = err == CL_SUCCESS;
    }
    if (ok) {
        n->q_in = clCreateCommandQueue(ctx->dev->cl_ctx, ctx->dev->entry->device, 0, &err);
        ok = err == CL_SUCCESS;
    }
    ok = ok && clt__kernel_get(ctx, "dist_sum", "", "dist_sum", &n->sum) == CLT_SUCCESS;
    for (int t = 0; t < NODE_SIGNALS && ok; t++)
        for (int q = 0; q < c->size; q++) {
            n->recv[(size_t)t * (size_t)c->size + (size_t)q] = MPI_REQUEST_NULL;
            if (q != c->rank && ok)
                ok = post_recv(c, t, q) == MPI_SUCCESS;
        }
    /* The ranks must agree: one that could not set up makes all fall back to the ring. The window
     * is freed (collectively) only where every rank has one; else it is left to MPI_Finalize. */
    int ok_all = 0, win_all = 0, have_win = n->win != MPI_WIN_NULL;
    if (MPI_Allreduce(&ok, &ok_all, 1, MPI_INT, MPI_LAND, c->comm) != MPI_SUCCESS)
        ok_all = 0;
    if (!ok_all && MPI_Allreduce(&have_win, &win_all, 1, MPI_INT, MPI_LAND, c->comm) == MPI_SUCCESS &&
        !win_all)
        n->win = MPI_WIN_NULL;
    n->on = 1; /* for the teardown below */
    if (!ok_all) {
        clt__dist_node_free(c);
        memset(n, 0, sizeof *n);
    }
}

void clt__dist_node_free(clt_dist_comm *c)
{
    dist_node *n = &c->node;
    if (!n->on)
        return;
    if (n->q_out) {
        clFinish(n->q_out);
        clReleaseCommandQueue(n->q_out);
    }
    if (n->q_in) {
        clFinish(n->q_in);
        clReleaseCommandQueue(n->q_in);
    }
    for (int q = 0; n->buf && q < c->size; q++)
        if (n->buf[q])
            clReleaseMemObject(n->buf[q]);
    for (size_t i = 0; n->recv && i < (size_t)NODE_SIGNALS * (size_t)c->size; i++)
        if (n->recv[i] != MPI_REQUEST_NULL) {
            MPI_Cancel(&n->recv[i]);
            MPI_Request_free(&n->recv[i]);
        }
    /* Collective: only where every rank is here (a broken communicator leaves it to MPI_Finalize). */
    if (!c->broken) {
        if (n->win != MPI_WIN_NULL)
            MPI_Win_free(&n->win);
        if (n->sig != MPI_COMM_NULL)
            MPI_Comm_free(&n->sig);
    }
    free(n->buf);
    free(n->got);
    free(n->recv);
    n->on = 0;
}

clt_status clt__dist_node_start(dist_op *op, const char *who)
{
    clt_context *ctx = op->comm->ctx;
    op->node = 1;
    op->chunk_elems = op->comm->node.chunk_bytes / sizeof(float);
    op->nchunks = (op->n + op->chunk_elems - 1) / op->chunk_elems;
    op->chunks = calloc(op->nchunks ? op->nchunks : 1, sizeof *op->chunks);
    if (!op->chunks)
        return clt__dist_break(op->comm, who, "out of host memory");
    for (size_t i = 0; i < op->nchunks; i++) {
        dist_chunk *ch = &op->chunks[i];
        ch->first = i * op->chunk_elems;
        ch->count = op->n - ch->first < op->chunk_elems ? op->n - ch->first : op->chunk_elems;
        ch->state = NODE_WAIT_SLOT;
        ch->req[0] = ch->req[1] = MPI_REQUEST_NULL;
    }
    op->node_open = op->nchunks;
    cl_int err = clEnqueueMarkerWithWaitList(ctx->queue, 0, NULL, &op->start);
    if (err == CL_SUCCESS)
        err = clFlush(ctx->queue);
    return err == CL_SUCCESS ? CLT_SUCCESS : cl_failed(op->comm, who, "the collective's start marker", err);
}

static clt_status signal_peers(clt_dist_comm *c, int type, const char *who)
{
    for (int q = 0; q < c->size; q++) {
        if (q == c->rank)
            continue;
        MPI_Request r = MPI_REQUEST_NULL;
        /* Zero bytes: no buffer to keep alive, so the request is freed at once. */
        int rc = MPI_Isend(NULL, 0, MPI_BYTE, q, type, c->node.sig, &r);
        if (rc == MPI_SUCCESS)
            rc = MPI_Request_free(&r);
        if (rc != MPI_SUCCESS)
            return clt__dist_break(c, who, "a signal to rank %d failed (MPI error %d)", q, rc);
    }
    c->node.sent[type]++;
    return CLT_SUCCESS;
}

clt_status clt__dist_node_poll(clt_dist_comm *c, int *moved, const char *who)
{
    dist_node *n = &c->node;
    int total = NODE_SIGNALS * c->size;
    for (int i = 0; i < total; i++) {
        for (;;) {
            if (n->recv[i] == MPI_REQUEST_NULL)
                break;
            int flag = 0;
            int rc = MPI_Test(&n->recv[i], &flag, MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS)
                return clt__dist_break(c, who, "MPI_Test on a signal failed (MPI error %d)", rc);
            if (!flag)
                break;
            int type = i / c->size, peer = i % c->size;
            (*got(n, type, peer, c->size))++;
            *moved = 1;
            if (post_recv(c, type, peer) != MPI_SUCCESS)
                return clt__dist_break(c, who, "MPI_Irecv of a signal failed");
        }
    }
    return CLT_SUCCESS;
}

static int all_signalled(clt_dist_comm *c, int type, uint64_t g)
{
    for (int q = 0; q < c->size; q++)
        if (q != c->rank && *got(&c->node, type, q, c->size) <= g)
            return 0;
    return 1;
}


static void keep_event(dist_chunk *ch, cl_event ev)
{
    if (ch->read_done)
        clReleaseEvent(ch->read_done);
    ch->read_done = ev;
}

/* A step's commands are enqueued (or failed at err): flush both queues, keep the step's last
 * event for the engine to poll, move the chunk on. */
static clt_status step_enqueued(dist_op *op, dist_chunk *ch, cl_int err, cl_event last, const char *what,
                                int state, const char *who)
{
    dist_node *n = &op->comm->node;
    if (err == CL_SUCCESS)
        err = clFlush(n->q_in);
    if (err == CL_SUCCESS)
        err = clFlush(n->q_out);
    if (err != CL_SUCCESS) {
        if (last)
            clReleaseEvent(last);
        return cl_failed(op->comm, who, what, err);
    }
    keep_event(ch, last);
    ch->state = state;
    op->exchanged += state == NODE_GATHERING; /* chunks whose last commands are enqueued */
    return CLT_SUCCESS;
}

/* Make what commands wrote to bytes of the own slot visible in its host memory: a map for reading
 * (on a GPU the device -> host DMA; nothing on a CPU device) after `after` (or NULL), unmapped at
 * once (a read mapping writes nothing back). *ev: the map's completion. */
static cl_int make_visible(cl_command_queue q, cl_mem own, size_t off, size_t bytes, cl_event after,
                           cl_event *ev)
{
    cl_int err = CL_SUCCESS;
    void *p = clEnqueueMapBuffer(q, own, CL_FALSE, CL_MAP_READ, off, bytes, after ? 1 : 0,
                                 after ? &after : NULL, ev, &err);
    if (err == CL_SUCCESS)
        err = clEnqueueUnmapMemObject(q, own, p, 0, NULL, NULL);
    return err;
}

/* Step 1: the segments the peers own, device -> own slot, mapped for reading. */
static clt_status publish(dist_op *op, dist_chunk *ch, const char *who)
{
    clt_dist_comm *c = op->comm;
    dist_node *n = &c->node;
    int s = (int)(ch->g % (uint64_t)n->slots), r = c->rank, p = c->size;
    cl_mem own = n->buf[r];
    cl_int err = CL_SUCCESS;
    size_t slot0 = (size_t)s * n->slot_bytes, e = sizeof(float);
    /* What the peers own: [0, seg r) and [seg r + 1, count), at most two ranges. */
    size_t ranges[2][2] = {{0, seg_at(ch->count, r, p)}, {seg_at(ch->count, r + 1, p), ch->count}};
    cl_event last = NULL;
    for (int k = 0; k < 2 && err == CL_SUCCESS; k++) {
        size_t a = ranges[k][0], b = ranges[k][1];
        if (a == b)
            continue;
        err = clEnqueueCopyBuffer(n->q_out, op->src, own, op->src_off + (ch->first + a) * e, slot0 + a * e,
                                  (b - a) * e, 1, &op->start, NULL);
        if (last)
            clReleaseEvent(last);
        last = NULL;
        if (err == CL_SUCCESS)
            err = make_visible(n->q_out, own, slot0 + a * e, (b - a) * e, NULL, &last);
    }
    if (err == CL_SUCCESS && !last) /* nothing for the peers (a chunk shorter than the ranks) */
        err = clEnqueueMarkerWithWaitList(n->q_out, 0, NULL, &last);
    return step_enqueued(op, ch, err, last, "publishing a chunk", NODE_PUBLISHING, who);
}

/* Tell the runtime that bytes of a peer's slot changed behind its back (a peer wrote them). */
static cl_int refresh(cl_command_queue q, cl_mem buf, size_t off, size_t bytes)
{
    cl_int err = CL_SUCCESS;
    void *p = clEnqueueMapBuffer(q, buf, CL_FALSE, CL_MAP_WRITE_INVALIDATE_REGION, off, bytes, 0, NULL,
                                 NULL, &err);
    if (err == CL_SUCCESS)
        err = clEnqueueUnmapMemObject(q, buf, p, 0, NULL, NULL);
    return err;
}

/* One term (see dist_sum.cl) into out, and into the own slot's out2_off as well when out2_off is
 * not NO_SECOND. */
#define NO_SECOND ((size_t)-1)
static cl_int sum_term(dist_op *op, cl_mem out, size_t out_off, size_t out2_off, cl_mem a, size_t a_off,
                       cl_mem b, size_t b_off, size_t count, float div, cl_event *ev)
{
    dist_node *n = &op->comm->node;
    clt_context *ctx = op->comm->ctx;
    cl_int both = out2_off != NO_SECOND;
    cl_ulong args[5] = {out_off, both ? out2_off : 0, a_off, b_off, count};
    cl_mem own = n->buf[op->comm->rank];
    cl_int err = clSetKernelArg(n->sum, 0, sizeof(cl_mem), &out);
    err |= clSetKernelArg(n->sum, 1, sizeof(cl_ulong), &args[0]);
    err |= clSetKernelArg(n->sum, 2, sizeof(cl_mem), &own);
    err |= clSetKernelArg(n->sum, 3, sizeof(cl_ulong), &args[1]);
    err |= clSetKernelArg(n->sum, 4, sizeof(cl_int), &both);
    err |= clSetKernelArg(n->sum, 5, sizeof(cl_mem), &a);
    err |= clSetKernelArg(n->sum, 6, sizeof(cl_ulong), &args[2]);
    err |= clSetKernelArg(n->sum, 7, sizeof(cl_mem), &b);
    err |= clSetKernelArg(n->sum, 8, sizeof(cl_ulong), &args[3]);
    err |= clSetKernelArg(n->sum, 9, sizeof(cl_ulong), &args[4]);
    err |= clSetKernelArg(n->sum, 10, sizeof(float), &div);
    if (err != CL_SUCCESS)
        return CL_INVALID_KERNEL_ARGS;
    size_t global, local;
    clt__launch_1d_grid(ctx, n->sum, count, 256, 8, &global, &local);
    return clEnqueueNDRangeKernel(n->q_in, n->sum, 1, NULL, &global, &local, 1, &op->start, ev);
}

/* Step 2: segment r summed over the ranks in rank order, into the tensor and the own slot. */
static clt_status reduce(dist_op *op, dist_chunk *ch, const char *who)
{
    clt_dist_comm *c = op->comm;
    dist_node *n = &c->node;
    int s = (int)(ch->g % (uint64_t)n->slots), r = c->rank, p = c->size;
    size_t e = sizeof(float), a = seg_at(ch->count, r, p), len = seg_at(ch->count, r + 1, p) - a;
    size_t slot0 = (size_t)s * n->slot_bytes;
    cl_int err = CL_SUCCESS;
    cl_event last = NULL;
    if (len > 0) {
        for (int q = 0; q < p && err == CL_SUCCESS; q++)
            if (q != r)
                err = refresh(n->q_in, n->buf[q], slot0 + a * e, len * e);
        /* Term q of the sum is rank q's segment: the tensor for this rank, a slot for the others.
         * Partial sums go to the own slot's segment r (free until the result goes there): the
         * tensor may be src as well (in place), and this rank's term must be read unchanged. */
        size_t src_el = op->src_off / e + ch->first + a, dst_el = op->dst_off / e + ch->first + a;
        size_t slot_el = slot0 / e + a;
        float mean = op->red == CLT_DIST_MEAN ? (float)p : 1.0f;
        for (int q = 1; q < p && err == CL_SUCCESS; q++) {
            int last_term = q == p - 1;
            cl_mem x = q == 1 ? (r == 0 ? op->src : n->buf[0]) : n->buf[r];
            size_t x_off = q == 1 && r == 0 ? src_el : slot_el;
            cl_mem y = q == r ? op->src : n->buf[q];
            size_t y_off = q == r ? src_el : slot_el;
            /* the last term writes the tensor and the own slot, which the peers read the result from */
            cl_event ev = NULL;
            err = sum_term(op, last_term ? op->dst : n->buf[r], last_term ? dst_el : slot_el,
                           last_term ? slot_el : NO_SECOND, x, x_off, y, y_off, len,
                           last_term ? mean : 1.0f, last_term ? &ev : NULL);
            if (ev)
                last = ev;
        }
        cl_event summed = last;
        last = NULL;
        if (err == CL_SUCCESS)
            err = make_visible(n->q_out, n->buf[r], slot0 + a * e, len * e, summed, &last);
        if (summed)
            clReleaseEvent(summed);
    } else {
        err = clEnqueueMarkerWithWaitList(n->q_out, 0, NULL, &last);
    }
    return step_enqueued(op, ch, err, last, "summing a chunk", NODE_REDUCING, who);
}

/* Step 3: every peer's result segment, its slot -> the tensor. */
static clt_status gather(dist_op *op, dist_chunk *ch, const char *who)
{
    clt_dist_comm *c = op->comm;
    dist_node *n = &c->node;
    int s = (int)(ch->g % (uint64_t)n->slots), p = c->size;
    size_t e = sizeof(float), slot0 = (size_t)s * n->slot_bytes;
    cl_int err = CL_SUCCESS;
    for (int q = 0; q < p && err == CL_SUCCESS; q++) {
        size_t a = seg_at(ch->count, q, p), len = seg_at(ch->count, q + 1, p) - a;
        if (q == c->rank || len == 0)
            continue;
        err = refresh(n->q_in, n->buf[q], slot0 + a * e, len * e);
        if (err == CL_SUCCESS)
            err = clEnqueueCopyBuffer(n->q_in, n->buf[q], op->dst, slot0 + a * e,
                                      op->dst_off + (ch->first + a) * e, len * e, 0, NULL, NULL);
    }
    cl_event last = NULL;
    if (err == CL_SUCCESS)
        err = clEnqueueMarkerWithWaitList(n->q_in, 0, NULL, &last);
    return step_enqueued(op, ch, err, last, "gathering a chunk", NODE_GATHERING, who);
}

/* Every chunk's last command is enqueued: the context's queue waits for both queues. */
static clt_status finish_op(dist_op *op, const char *who)
{
    clt_dist_comm *c = op->comm;
    clt_context *ctx = c->ctx;
    cl_event ends[2] = {NULL, NULL};
    cl_int err = clEnqueueMarkerWithWaitList(c->node.q_in, 0, NULL, &ends[0]);
    if (err == CL_SUCCESS)
        err = clEnqueueMarkerWithWaitList(c->node.q_out, 0, NULL, &ends[1]);
    cl_event barrier = NULL;
    if (err == CL_SUCCESS)
        err = clEnqueueBarrierWithWaitList(ctx->queue, 2, ends, &barrier);
    for (int k = 0; k < 2; k++)
        if (ends[k])
            clReleaseEvent(ends[k]);
    if (err == CL_SUCCESS)
        err = clFlush(c->node.q_in);
    if (err == CL_SUCCESS)
        err = clFlush(c->node.q_out);
    if (err == CL_SUCCESS)
        err = clFlush(ctx->queue);
    if (err != CL_SUCCESS) {
        if (barrier)
            clReleaseEvent(barrier);
        return cl_failed(c, who, "the collective's closing barrier", err);
    }
    if (op->last_write)
        clReleaseEvent(op->last_write);
    op->last_write = barrier;
    op->complete = 1;
    return CLT_SUCCESS;
}

clt_status clt__dist_node_advance(dist_op *op, int may_start, int *moved, int *waits_on_peers,
                                  const char *who)
{
    clt_dist_comm *c = op->comm;
    dist_node *n = &c->node;
    clt_status st = CLT_SUCCESS;
    for (size_t i = op->first_open; i < op->nchunks && st == CLT_SUCCESS; i++) {
        dist_chunk *ch = &op->chunks[i];
        if (ch->state == NODE_WAIT_SLOT) {
            /* chunks start in order, after every older collective's: g is the same on every rank */
            if (!may_start || i != op->started)
                break;
            uint64_t g = n->next_g;
            if (g >= (uint64_t)n->slots) {
                uint64_t prev = g - (uint64_t)n->slots;
                if (n->sent[NODE_DONE] <= prev)
                    break; /* this rank still reads through the slot's previous chunk */
                if (!all_signalled(c, NODE_DONE, prev)) {
                    *waits_on_peers = 1; /* a peer still reads the slot */
                    break;
                }
            }
            ch->g = n->next_g++;
            op->started++;
            st = publish(op, ch, who);
            *moved = 1;
            continue;
        }
        cl_int status = ch->read_done ? clt__dist_event_status(ch->read_done) : CL_COMPLETE;
        int done = status == CL_COMPLETE;
        if (status < 0)
            return clt__dist_break(c, who, "a staging copy failed (in it or in earlier work on the context)");
        switch (ch->state) {
        case NODE_PUBLISHING: /* signals go out in chunk order: the queue completes in order */
            if (done && n->sent[NODE_PUB] == ch->g) {
                st = signal_peers(c, NODE_PUB, who);
                ch->state = NODE_WAIT_PUB;
                *moved = 1;
            }
            break;
        case NODE_WAIT_PUB:
            break;
        case NODE_REDUCING:
            if (done && n->sent[NODE_RES] == ch->g) {
                st = signal_peers(c, NODE_RES, who);
                ch->state = NODE_WAIT_RES;
                *moved = 1;
            }
            break;
        case NODE_GATHERING:
            if (done && n->sent[NODE_DONE] == ch->g) {
                st = signal_peers(c, NODE_DONE, who);
                ch->state = CHUNK_DONE;
                op->node_open--;
                *moved = 1;
            }
            break;
        default:
            break;
        }
        if (st == CLT_SUCCESS && ch->state == NODE_WAIT_PUB && all_signalled(c, NODE_PUB, ch->g)) {
            st = reduce(op, ch, who);
            *moved = 1;
        }
        if (st == CLT_SUCCESS && ch->state == NODE_WAIT_RES && all_signalled(c, NODE_RES, ch->g)) {
            st = gather(op, ch, who);
            *moved = 1;
        }
        if (ch->state == NODE_WAIT_PUB || ch->state == NODE_WAIT_RES)
            *waits_on_peers = 1;
    }
    while (op->first_open < op->nchunks && op->chunks[op->first_open].state == CHUNK_DONE)
        op->first_open++;
    if (st == CLT_SUCCESS && !op->complete && op->exchanged == op->nchunks)
        st = finish_op(op, who);
    return st;
}
