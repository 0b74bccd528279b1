/* The public collectives: argument checks, then a dist_op for the engine. */
#include <stdlib.h>

#include "dist/dist.h"

/* Common checks of a collective's tensors; on success a fresh op with src/dst retained. */
static clt_status new_op(clt_dist_comm *c, const char *who, enum dist_kind kind, const clt_tensor *in,
                         clt_tensor *out, clt_future **fut, dist_op **op_out)
{
    *op_out = NULL;
    if (fut)
        *fut = NULL;
    if (!c || !in || !out || !fut)
        return clt__fail(c ? c->ctx : NULL, CLT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", who,
                         !c ? "comm" : !in ? "a tensor" : !out ? "a tensor" : "the future pointer");
    if (in->ctx != c->ctx || out->ctx != c->ctx)
        return clt__fail(c->ctx, CLT_ERR_CONTEXT_MISMATCH,
                         "%s: the tensors must belong to the communicator's context", who);
    int reduces = kind == DIST_ALLREDUCE || kind == DIST_REDUCE_SCATTER;
    if (reduces && (in->dtype != CLT_F32 || out->dtype != CLT_F32))
        return clt__fail(c->ctx, CLT_ERR_INVALID_DTYPE, "%s: reductions take f32 tensors, got %s", who,
                         clt_dtype_name(in->dtype != CLT_F32 ? in->dtype : out->dtype));
    if (in->dtype != out->dtype)
        return clt__fail(c->ctx, CLT_ERR_INVALID_DTYPE, "%s: in is %s, out is %s", who,
                         clt_dtype_name(in->dtype), clt_dtype_name(out->dtype));
    if (kind == DIST_ALLGATHER || kind == DIST_REDUCE_SCATTER) {
        const clt_tensor *block = kind == DIST_ALLGATHER ? in : out;
        const clt_tensor *whole = kind == DIST_ALLGATHER ? out : in;
        if (whole->numel != block->numel * c->size)
            return clt__fail(c->ctx, CLT_ERR_INVALID_SHAPE,
                             "%s: %s has %lld elements, expected %d ranks x %lld", who,
                             kind == DIST_ALLGATHER ? "out" : "in", (long long)whole->numel, c->size,
                             (long long)block->numel);
        if (clt__tensors_overlap(in, out))
            return clt__fail(c->ctx, CLT_ERR_ALIASING, "%s: out overlaps in", who);
    }
    if (c->broken)
        return clt__dist_broken_status(c, who);
    dist_op *op = calloc(1, sizeof *op);
    if (!op)
        return clt__fail(c->ctx, CLT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", who);
    op->comm = c;
    op->kind = kind;
    op->src = in->storage->mem;
    op->dst = out->storage->mem;
    clRetainMemObject(op->src);
    clRetainMemObject(op->dst);
    op->src_off = in->offset;
    op->dst_off = out->offset;
    if (reduces) {
        op->esz = sizeof(float);
        op->n = (size_t)(kind == DIST_ALLREDUCE ? in->numel : out->numel);
    } else { /* bytes: any dtype */
        op->esz = 1;
        op->n = kind == DIST_ALLGATHER ? in->nbytes : out->nbytes;
    }
    *op_out = op;
    return CLT_SUCCESS;
}

static clt_status wait_and_free(clt_status st, clt_future *f)
{
    if (st != CLT_SUCCESS)
        return st;
    st = clt_future_wait(f);
    clt_future_free(f);
    return st;
}

clt_status clt_dist_allreduce_async(clt_dist_comm *comm, clt_tensor *t, clt_dist_op op,
                                    clt_future **out)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_dist_allreduce";
    if (comm && op != CLT_DIST_SUM && op != CLT_DIST_MEAN) {
        if (out)
            *out = NULL;
        return clt__fail(comm->ctx, CLT_ERR_INVALID_ARGUMENT, "%s: unknown op %d", who, (int)op);
    }
    dist_op *d = NULL;
    clt_status st = new_op(comm, who, DIST_ALLREDUCE, t, t, out, &d);
    if (st != CLT_SUCCESS)
        return st;
    d->red = op;
    if (comm->size == 1)
        d->n = 0; /* the sum or mean over one rank is t itself: nothing to move */
    return clt__dist_start(d, who, out);
}

clt_status clt_dist_allreduce(clt_dist_comm *comm, clt_tensor *t, clt_dist_op op)
{
    CLT_PUBLIC_CALL();
    clt_future *f = NULL;
    clt_status st = clt_dist_allreduce_async(comm, t, op, &f);
    return wait_and_free(st, f);
}

clt_status clt_dist_broadcast_async(clt_dist_comm *comm, clt_tensor *t, int root, clt_future **out)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_dist_broadcast";
    if (comm && (root < 0 || root >= comm->size)) {
        if (out)
            *out = NULL;
        return clt__fail(comm->ctx, CLT_ERR_INVALID_ARGUMENT, "%s: root %d is not a rank of 0..%d", who,
                         root, comm->size - 1);
    }
    dist_op *d = NULL;
    clt_status st = new_op(comm, who, DIST_BROADCAST, t, t, out, &d);
    if (st != CLT_SUCCESS)
        return st;
    d->root = root;
    if (comm->size == 1)
        d->n = 0; /* the root is the only rank */
    return clt__dist_start(d, who, out);
}

clt_status clt_dist_broadcast(clt_dist_comm *comm, clt_tensor *t, int root)
{
    CLT_PUBLIC_CALL();
    clt_future *f = NULL;
    clt_status st = clt_dist_broadcast_async(comm, t, root, &f);
    return wait_and_free(st, f);
}

clt_status clt_dist_allgather_async(clt_dist_comm *comm, const clt_tensor *in, clt_tensor *out,
                                    clt_future **out_future)
{
    CLT_PUBLIC_CALL();
    dist_op *d = NULL;
    clt_status st = new_op(comm, "clt_dist_allgather", DIST_ALLGATHER, in, out, out_future, &d);
    return st != CLT_SUCCESS ? st : clt__dist_start(d, "clt_dist_allgather", out_future);
}

clt_status clt_dist_allgather(clt_dist_comm *comm, const clt_tensor *in, clt_tensor *out)
{
    CLT_PUBLIC_CALL();
    clt_future *f = NULL;
    clt_status st = clt_dist_allgather_async(comm, in, out, &f);
    return wait_and_free(st, f);
}

clt_status clt_dist_reduce_scatter_async(clt_dist_comm *comm, const clt_tensor *in, clt_tensor *out,
                                         clt_dist_op op, clt_future **out_future)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_dist_reduce_scatter";
    if (comm && op != CLT_DIST_SUM && op != CLT_DIST_MEAN) {
        if (out_future)
            *out_future = NULL;
        return clt__fail(comm->ctx, CLT_ERR_INVALID_ARGUMENT, "%s: unknown op %d", who, (int)op);
    }
    dist_op *d = NULL;
    clt_status st = new_op(comm, who, DIST_REDUCE_SCATTER, in, out, out_future, &d);
    if (st != CLT_SUCCESS)
        return st;
    d->red = op;
    return clt__dist_start(d, who, out_future);
}

clt_status clt_dist_reduce_scatter(clt_dist_comm *comm, const clt_tensor *in, clt_tensor *out,
                                   clt_dist_op op)
{
    CLT_PUBLIC_CALL();
    clt_future *f = NULL;
    clt_status st = clt_dist_reduce_scatter_async(comm, in, out, op, &f);
    return wait_and_free(st, f);
}

clt_status clt_dist_progress(clt_dist_comm *comm)
{
    CLT_PUBLIC_CALL();
    if (!comm)
        return clt__fail(NULL, CLT_ERR_INVALID_ARGUMENT, "clt_dist_progress: comm is NULL");
    return clt__dist_advance(comm, "clt_dist_progress");
}
