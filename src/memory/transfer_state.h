/* Private to src/memory: the staging state of a context, shared by transfer.c and future.c. */
#ifndef CLT_TRANSFER_STATE_H
#define CLT_TRANSFER_STATE_H

#include "memory/memory.h"

/* Pinned staging for discrete devices: one CL_MEM_ALLOC_HOST_PTR buffer, mapped once, used as
 * STAGING_CHUNKS chunks in rotation so a copy into one chunk overlaps the DMA of another. */
#define STAGING_CHUNKS 4
#define STAGING_CHUNK_BYTES ((size_t)8 << 20)

/* Ring of pinned slots for small asynchronous reads. */
#define RING_SLOTS 256
#define RING_SLOT_BYTES 256

struct clt_future_ring;

struct clt_transfer {
    cl_mem staging;                    /* NULL until first needed */
    unsigned char *staging_ptr;        /* persistent mapping */
    size_t chunk_bytes;
    cl_event chunk_events[STAGING_CHUNKS]; /* last command using each chunk, or NULL */
    int next_chunk;
    int staging_unavailable;           /* creating it failed once: copy directly from then on */
    struct clt_future_ring *ring;      /* owned by future.c, NULL until first needed */
};

/* clt__pinned_create / clt__pinned_release (transfer.c) are declared in memory.h. */

/* future.c: wait for every live future's read, free them all, release the ring. */
void clt__future_ring_destroy(clt_context *ctx, struct clt_future_ring *ring);

/* transfer.c: wait for ev; a negative execution status becomes CLT_ERR_OPENCL "<who>: execution
 * failed: CL_..." recorded on ctx. ev may be NULL (nothing to wait for). */
clt_status clt__wait_event(clt_context *ctx, cl_event ev, const char *who);

#endif /* CLT_TRANSFER_STATE_H */
