/* Distributed layer (cltensor_dist.h), internal: the communicator, its pinned staging buffers and
 * the collectives in flight, advanced by one progress engine (engine.c) from the calling thread. */
#ifndef CLT_DIST_H
#define CLT_DIST_H

#include <mpi.h>

#include "cltensor_dist.h"
#include "memory/memory.h"
#include "tensor/tensor.h"

#define DIST_MAX_IN_FLIGHT 64 /* collectives per communicator; also the tag space (see engine.c) */
#define DIST_MAX_WINDOW 32 /* scratch slots are bits of an unsigned */
#define DIST_MAX_STAGES 128

enum dist_kind { DIST_ALLREDUCE, DIST_BROADCAST, DIST_ALLGATHER, DIST_REDUCE_SCATTER };

/* A pinned host buffer of the communicator's context, reused by later collectives. */
typedef struct dist_stage {
    cl_mem mem;
    unsigned char *ptr;
    size_t bytes;
    int in_use;
} dist_stage;

enum chunk_state {
    CHUNK_READING, CHUNK_EXCHANGING, CHUNK_DONE,
    /* allreduce through shared node memory (node.c), in this order */
    NODE_WAIT_SLOT,  /* the chunk's slot is still read by a peer (credits) */
    NODE_PUBLISHING, /* the segments peers own: device -> own slot, then mapped for reading */
    NODE_WAIT_PUB,   /* waiting for every peer's "published" */
    NODE_REDUCING,   /* the owned segment summed on the device, then device -> own slot */
    NODE_WAIT_RES,   /* waiting for every peer's "result" */
    NODE_GATHERING   /* peers' results -> the device; "done" once those copies finished */
};

typedef struct dist_chunk {
    int state;
    cl_event read_done;  /* the chunk's last device->host read (in-order queue: all of them) */
    size_t first, count; /* elements of one rank's block */
    int step;            /* ring step (allreduce) */
    int slot;            /* scratch slot while exchanging (allreduce) */
    uint64_t g;          /* node path: the communicator's chunk number, the same on every rank */
    MPI_Request req[2];
} dist_chunk;

typedef struct dist_op {
    struct clt_dist_comm *comm;
    enum dist_kind kind;
    clt_dist_op red;
    int root;
    unsigned seq;            /* the communicator's collective number: the same on every rank */
    cl_mem src, dst;         /* retained */
    size_t src_off, dst_off; /* bytes */
    size_t n;                /* elements of one rank's block */
    size_t esz;              /* element size: 4 (MPI_FLOAT) or 1 (MPI_BYTE, any dtype) */
    size_t chunk_elems, nchunks, started, exchanged;
    size_t first_open;       /* chunks below it are done */
    dist_chunk *chunks;
    dist_stage *stage;       /* host copy of the data, laid out per chunk (see engine.c) */
    float *scratch;          /* window slots of a ring segment (allreduce), malloc'ed */
    size_t scratch_elems;
    unsigned scratch_used;   /* bit per slot */
    cl_event last_write;     /* the latest host->device write (in-order queue: all of them) */
    int complete;            /* every result write enqueued (or failed): the future is done */
    clt_status status;
    int has_future;          /* a future still refers to the op */
    int abandoned;           /* failed with MPI requests outstanding: its memory is never reused */
    int node;                /* allreduce through shared node memory (node.c) */
    cl_event start;          /* node: a marker after the work before the collective on the context */
    size_t node_open;        /* node: chunks whose "done" is not sent yet */
    struct dist_op *next;    /* the communicator's list, oldest first */
} dist_op;

/* The shared-memory path of allreduce when every rank is on one node (node.c). Each rank owns a
 * segment of an MPI shared window: `slots` staging slots of chunk_bytes. Every rank wraps every
 * rank's segment in a CL_MEM_USE_HOST_PTR buffer, so copies and kernels reach a peer's staging
 * memory directly (DMA on a GPU, no copy at all on a CPU device). Zero-byte messages on `sig`
 * say "published", "result" and "done" per chunk; MPI's non-overtaking order numbers them. */
enum node_signal { NODE_PUB, NODE_RES, NODE_DONE, NODE_SIGNALS };

typedef struct dist_node {
    int on;
    MPI_Comm sig;
    MPI_Win win;
    int slots;
    size_t chunk_bytes;        /* the path's chunk (see node.c) */
    size_t slot_bytes;         /* chunk_bytes rounded up to a page */
    cl_mem *buf;               /* [size]: every rank's segment, in this context */
    cl_command_queue q_out;    /* device -> own slot, and the maps that make it visible */
    cl_command_queue q_in;     /* peers' slots -> device, the sums */
    cl_kernel sum;
    uint64_t next_g;           /* chunks started */
    uint64_t sent[NODE_SIGNALS];
    uint64_t *got;             /* [NODE_SIGNALS][size]: signals received per peer */
    MPI_Request *recv;         /* [NODE_SIGNALS][size]: the outstanding zero-byte receive */
} dist_node;

struct clt_dist_comm {
    clt_context *ctx;
    MPI_Comm comm;
    int rank, size;
    clt_dist_options opts;
    unsigned next_seq;
    int active;              /* chunks exchanging, all collectives together (<= window) */
    dist_op *ops;            /* in flight, oldest first */
    int in_flight;
    double last_progress;    /* when an exchange last moved (seconds, monotonic) */
    int broken;              /* a failure ended the communicator: every call fails */
    char broken_why[256];
    dist_stage stages[DIST_MAX_STAGES];
    dist_node node;
};

/* comm.c */
double clt__dist_now(void);
/* ev's CL_EVENT_COMMAND_EXECUTION_STATUS: CL_COMPLETE (0), a state still to run (> 0), or a negative
 * error code: the command's failure, or the query's own. */
cl_int clt__dist_event_status(cl_event ev);
/* A free pinned buffer of at least `bytes` (reused, or made), marked in use. */
clt_status clt__dist_stage_get(clt_dist_comm *c, size_t bytes, dist_stage **out);
/* Mark the communicator broken (first reason wins) and return CLT_ERR_COMM recorded as "who: why". */
clt_status clt__dist_break(clt_dist_comm *c, const char *who, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* CLT_ERR_COMM "who: ..." for a communicator broken earlier. */
clt_status clt__dist_broken_status(clt_dist_comm *c, const char *who);

/* node.c */
/* Set up the shared-memory path when every rank is on one node (collective, from
 * clt_dist_comm_create); leaves it off (c->node.on = 0) where it cannot be had, or CLT_DIST_SHM=0.
 * auto_chunk: chunk_bytes was left to the library, which picks the node path's own. */
void clt__dist_node_create(clt_dist_comm *c, int auto_chunk);
/* Whether an allreduce of `bytes` takes the node path. */
int clt__dist_node_takes(const clt_dist_comm *c, size_t bytes);
/* Tear it down; the window (collective) is freed only on a communicator that is not broken. */
void clt__dist_node_free(clt_dist_comm *c);
/* Start the op on the node path: the marker its commands wait for; chunks in NODE_WAIT_SLOT. */
clt_status clt__dist_node_start(dist_op *op, const char *who);
/* One non-blocking pass over the op's chunks; `may_start`: older collectives started all theirs.
 * Sets *moved when something advanced. */
clt_status clt__dist_node_advance(dist_op *op, int may_start, int *moved, int *waits_on_peers,
                                  const char *who);
/* Take in the signals that arrived (all node ops of the communicator). */
clt_status clt__dist_node_poll(clt_dist_comm *c, int *moved, const char *who);

/* engine.c */
/* Enqueue the op's reads, link it into the communicator, and return its future. Takes ownership
 * of op (freed on failure). */
clt_status clt__dist_start(dist_op *op, const char *who, clt_future **out);
/* One non-blocking pass over every collective in flight (see cltensor_dist.h, Progress). */
clt_status clt__dist_advance(clt_dist_comm *c, const char *who);
/* Wait for every collective in flight (or give up on a broken communicator); retire them. */
void clt__dist_drain(clt_dist_comm *c);

#endif /* CLT_DIST_H */
