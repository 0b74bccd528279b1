/**
 * @file
 * cltensor over MPI: collectives of device tensors between processes, and a data-parallel training
 * helper. Built when cltensor is configured with -DCLT_WITH_MPI=ON and MPI is found
 * (the CMake package then defines CLT_WITH_MPI; the library links MPI); needs <mpi.h>, so
 * cltensor_all.h does not include it.
 *
 * Staging. No MPI library can take an OpenCL buffer, so every collective goes through pinned host
 * memory, in chunks (clt_dist_options.chunk_bytes): each chunk's device->host read is enqueued at
 * once, its exchange starts as soon as its read completes, and its host->device write is enqueued
 * as soon as its exchange is done, so reads, the exchange and writes of different chunks overlap.
 * Allreduce is our own ring (reduce-scatter then allgather, nonblocking MPI_Isend / MPI_Irecv,
 * sums on the host in a fixed order): every rank ends with the same bits.
 *
 * Within one node. When every rank of the communicator shares a node (MPI_COMM_TYPE_SHARED), an
 * allreduce of 1 MiB or more goes through an MPI shared-memory window instead: each rank copies
 * the parts of a chunk that other ranks own into its own staging slot, each owner sums its part
 * on its device reading the peers' slots directly, and every rank copies the owners' results
 * back; no byte goes through MPI and none is summed by the host. The sum is taken in rank order by
 * the part's owner, so every rank again ends with the same bits (which may differ from the ring's
 * in the last place). It takes two extra command queues, a window of 8 chunks per rank (16 MiB
 * chunks on GPUs when chunk_bytes is left to the library, else chunk_bytes) and, on runtimes that
 * keep device copies of host-pointer buffers, device memory for every rank's window. Set
 * CLT_DIST_SHM=0 in the environment of every rank to use the ring everywhere. Broadcast, allgather and
 * reduce_scatter use MPI's nonblocking collectives (MPI_Ibcast, MPI_Iallgather,
 * MPI_Ireduce_scatter_block) per chunk.
 *
 * Progress. There is no progress thread. A collective advances whenever the calling thread is in
 * a call of this header on its communicator or polls / waits on one of its futures
 * (clt_future_poll, clt_future_wait): each such call tests every pending read event and MPI request
 * of every collective in flight on the communicator without blocking, and starts what became
 * ready. clt_dist_progress does only that; call it between the ops of a backward pass to keep
 * gradients moving while later layers are enqueued. Waiting on one communicator does not advance
 * another: with several communicators, wait for their collectives in the same order on every rank. A wait polls with short sleeps (tens of
 * microseconds), leaving the CPU to the device and to MPI's own progress.
 *
 * Completion. A collective's future completes when its result is enqueued on the tensor's
 * context: every op enqueued on that context afterwards sees the result (the in-order queue), and
 * nothing blocks on the device. Until then the tensors of the collective must not be read, written
 * or freed. The blocking forms (no _async) are the async form plus clt_future_wait.
 *
 * Matching. Every rank must start the same collectives in the same order on a communicator (as in
 * MPI), with the same element counts (and root). At most 64 collectives may be in flight on one
 * communicator; starting another first completes the oldest.
 *
 * Failure. A collective in which no request makes progress for clt_dist_options.timeout_s seconds
 * (default 60, $CLT_DIST_TIMEOUT) fails with CLT_ERR_COMM, and so does every collective in flight
 * on that communicator and every later call on it (it is broken for good: collectives are not
 * resumable). Its pending receives are cancelled; requests MPI cannot cancel (those of MPI's own
 * collectives, sends) and their staging memory are abandoned, not freed. The calls never call
 * MPI_Abort. Limits, honestly: this catches a peer that stops answering (hung, stalled, or gone
 * without MPI noticing). A peer process that dies is another matter in MPI implementations without
 * fault tolerance (Open MPI 4.1): mpirun then kills the whole job, so no rank hangs, but none
 * returns either. After CLT_ERR_COMM the application should end (MPI_Finalize may wait on the
 * abandoned requests of a peer that is still alive; MPI_Abort ends the job at once).
 *
 * Threads: a communicator and its context are used by one thread at a time. MPI must be
 * initialised (MPI_THREAD_FUNNELED is enough) before clt_dist_comm_create and finalised after
 * clt_dist_comm_free. Free the communicator before its context.
 */
#ifndef CLTENSOR_DIST_H
#define CLTENSOR_DIST_H

#include <mpi.h>

#include "cltensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A communicator: an MPI_Comm (duplicated) bound to one cltensor context. Opaque. */
typedef struct clt_dist_comm clt_dist_comm;

/** The reduction of allreduce and reduce_scatter (f32). */
typedef enum clt_dist_op {
    CLT_DIST_SUM = 0, /**< the sum over ranks */
    CLT_DIST_MEAN = 1 /**< the sum over ranks divided by the number of ranks */
} clt_dist_op;

/** Settings of a communicator (clt_dist_options_init, then change what you need). */
typedef struct clt_dist_options {
    size_t chunk_bytes; /**< pipeline granularity, >= 4096 and a multiple of 4, or 0 (the default,
                             unless $CLT_DIST_CHUNK_BYTES): 1 MiB on CPU devices, 4 MiB on others
                             (16 MiB for allreduce within one node, see above) */
    int window;         /**< chunks exchanged at once (all collectives of the communicator together),
                             1..32 (default 4) */
    double timeout_s;   /**< seconds without progress before a collective fails, > 0 (default 60,
                             $CLT_DIST_TIMEOUT) */
} clt_dist_options;

/** Defaults, with the environment's overrides. NULL is ignored. */
CLT_API void clt_dist_options_init(clt_dist_options *opts);

/** A communicator over `comm` (duplicated with MPI_Comm_dup, so its traffic never mixes with the
 *  application's; errors on it return instead of aborting) for tensors of ctx. opts may be NULL.
 *  Collective over comm (every rank calls it). Statuses: CLT_ERR_INVALID_ARGUMENT (NULL ctx or
 *  out, MPI not initialised, comm MPI_COMM_NULL, a bad option), CLT_ERR_COMM (an MPI call failed),
 *  CLT_ERR_OUT_OF_HOST_MEMORY. On failure *out is NULL. The
 *  caller owns the communicator (clt_dist_comm_free). */
CLT_API clt_status clt_dist_comm_create(clt_context *ctx, MPI_Comm comm, const clt_dist_options *opts,
                                        clt_dist_comm **out);
/** Complete (or, on a broken communicator, abandon) the collectives in flight, release the staging
 *  memory and the duplicated MPI_Comm. Blocks until the collectives are done. NULL is a no-op. */
CLT_API void clt_dist_comm_free(clt_dist_comm *comm);
/** This process's rank in the communicator, or -1 for NULL. */
CLT_API int clt_dist_rank(const clt_dist_comm *comm);
/** The number of ranks, or -1 for NULL. */
CLT_API int clt_dist_size(const clt_dist_comm *comm);

/** Advance every collective in flight on comm without blocking (see Progress above).
 *  Returns CLT_SUCCESS, or CLT_ERR_COMM once the communicator is broken. */
CLT_API clt_status clt_dist_progress(clt_dist_comm *comm);

/** t = op over ranks of t, in place (f32; any shape; every rank the same element count).
 *  *out receives a future (clt_future_wait / clt_future_poll; clt_future_free) that completes
 *  when the result is enqueued on t's context. Statuses: CLT_ERR_INVALID_ARGUMENT (NULL, unknown
 *  op), CLT_ERR_INVALID_DTYPE (not f32), CLT_ERR_CONTEXT_MISMATCH (t not of the communicator's
 *  context), CLT_ERR_COMM (broken communicator, an MPI call failed; element counts that differ
 *  between ranks are not detected: the ranks then time out or fail in MPI), memory errors. On
 *  failure *out is NULL and nothing was enqueued. */
CLT_API clt_status clt_dist_allreduce_async(clt_dist_comm *comm, clt_tensor *t, clt_dist_op op,
                                            clt_future **out);
/** clt_dist_allreduce_async, then wait for the future. */
CLT_API clt_status clt_dist_allreduce(clt_dist_comm *comm, clt_tensor *t, clt_dist_op op);

/** t = root's t on every rank (any dtype; the same byte count everywhere). root in
 *  0..size-1, else CLT_ERR_INVALID_ARGUMENT; otherwise as clt_dist_allreduce_async. */
CLT_API clt_status clt_dist_broadcast_async(clt_dist_comm *comm, clt_tensor *t, int root,
                                            clt_future **out);
/** clt_dist_broadcast_async, then wait for the future. */
CLT_API clt_status clt_dist_broadcast(clt_dist_comm *comm, clt_tensor *t, int root);

/** out = the concatenation of every rank's in, in rank order (any dtype, the same on both):
 *  numel(out) == size * numel(in), else CLT_ERR_INVALID_SHAPE; out may not overlap in
 *  (CLT_ERR_ALIASING); otherwise as clt_dist_allreduce_async. */
CLT_API clt_status clt_dist_allgather_async(clt_dist_comm *comm, const clt_tensor *in, clt_tensor *out,
                                            clt_future **out_future);
/** clt_dist_allgather_async, then wait for the future. */
CLT_API clt_status clt_dist_allgather(clt_dist_comm *comm, const clt_tensor *in, clt_tensor *out);

/** out = block `rank` of op over ranks of in, where in is size blocks of numel(out) elements
 *  (f32): numel(in) == size * numel(out), else CLT_ERR_INVALID_SHAPE; out may not overlap in
 *  (CLT_ERR_ALIASING); otherwise as clt_dist_allreduce_async. */
CLT_API clt_status clt_dist_reduce_scatter_async(clt_dist_comm *comm, const clt_tensor *in,
                                                 clt_tensor *out, clt_dist_op op,
                                                 clt_future **out_future);
/** clt_dist_reduce_scatter_async, then wait for the future. */
CLT_API clt_status clt_dist_reduce_scatter(clt_dist_comm *comm, const clt_tensor *in, clt_tensor *out,
                                           clt_dist_op op);

/* ------------------------------------------------------------------ data parallel */

/** Data-parallel training over a communicator (as PyTorch's DDP): every rank holds the same
 *  parameters (one flat f32 tensor) and computes gradients (one flat f32 tensor, same layout) on its
 *  own shard of the batch; the gradients are averaged over ranks in buckets, each bucket's
 *  allreduce starting as soon as the backward pass has produced it, while later (earlier-layer)
 *  gradients are still being computed; then every rank applies the same optimizer step (e.g.
 *  clt_adam_step on the flat tensors), so the parameters stay bitwise identical (the allreduce gives
 *  every rank the same bits, and the same kernel on the same bits gives the same bits). Opaque. */
typedef struct clt_dist_dp clt_dist_dp;

/** A data-parallel helper for params and grads (f32, the communicator's context, the same element
 *  count, not overlapping). Buckets of bucket_bytes (rounded down to whole floats; 0 = 4 MiB) are
 *  cut from the END of grads, the part a backward pass finishes first. Broadcasts params from rank
 *  0 so that every rank starts from the same values (blocking: collective over the communicator).
 *  Statuses: CLT_ERR_INVALID_ARGUMENT (NULL), CLT_ERR_INVALID_DTYPE, CLT_ERR_CONTEXT_MISMATCH,
 *  CLT_ERR_INVALID_SHAPE (element counts differ), CLT_ERR_ALIASING, CLT_ERR_COMM, memory errors.
 *  The helper refers to comm, params and grads (free it before them). */
CLT_API clt_status clt_dist_dp_create(clt_dist_comm *comm, clt_tensor *params, clt_tensor *grads,
                                      size_t bucket_bytes, clt_dist_dp **out);
/** Free the helper (waits for buckets in flight). NULL is a no-op. */
CLT_API void clt_dist_dp_free(clt_dist_dp *dp);
/** Tell the helper that grads[first, numel) are final for this step (call it after enqueuing the
 *  backward of each layer, last layer first: `first` only decreases within a step). Every bucket
 *  now complete starts its allreduce (mean) at once; nothing blocks. CLT_ERR_INVALID_ARGUMENT for
 *  first outside 0..numel; CLT_ERR_COMM. */
CLT_API clt_status clt_dist_dp_grads_ready(clt_dist_dp *dp, int64_t first);
/** End the step's exchange: start what is not started yet, wait for every bucket (see
 *  cltensor_dist.h, Completion: the averaged gradients are enqueued on the context; the device is
 *  not waited for). Afterwards grads holds the mean over ranks, the same bits on every rank; the
 *  next step starts. Returns the first failure (CLT_ERR_COMM). */
CLT_API clt_status clt_dist_dp_sync(clt_dist_dp *dp);
/** Number of buckets. -1 for NULL. */
CLT_API int clt_dist_dp_buckets(const clt_dist_dp *dp);

#ifdef __cplusplus
}
#endif
#endif /* CLTENSOR_DIST_H */
