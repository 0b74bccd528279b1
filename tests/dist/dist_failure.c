/* A rank that stops answering in the middle of a collective: the last rank starts an allreduce,
 * takes one progress step, then stalls (sleeps past the timeout) and never progresses it again.
 * Every other rank must get CLT_ERR_COMM within the timeout (1.5 s, plus slack for a loaded CI
 * machine) instead of hanging; the stalled rank, when it comes back, finds its peers gone and gets
 * CLT_ERR_COMM too; the broken communicator refuses every later call. */
#include <string.h>
#include <time.h>

#include "dist/dist_test.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void failed_rank(clt_context *ctx, int64_t n)
{
    clt_dist_options o;
    clt_dist_options_init(&o);
    o.chunk_bytes = 4096; /* small messages: sends complete eagerly, nothing is left to hang on */
    o.timeout_s = 1.5;
    clt_dist_comm *comm = NULL;
    DT_OK(ctx, clt_dist_comm_create(ctx, MPI_COMM_WORLD, &o, &comm));
    if (!comm)
        return;
    clt_tensor *t = NULL;
    DT_OK(ctx, clt_tensor_create(ctx, CLT_F32, 1, &n, &t));
    DT_OK(ctx, clt_tensor_fill(t, 1.0));
    DT_OK(ctx, clt_dist_allreduce(comm, t, CLT_DIST_SUM)); /* a healthy one first */
    clt_future *f = NULL;
    double t0 = now();
    DT_OK(ctx, clt_dist_allreduce_async(comm, t, CLT_DIST_SUM, &f));
    if (dt_rank == dt_size - 1) {
        clt_dist_progress(comm);
        struct timespec stall = {3, 500000000};
        nanosleep(&stall, NULL); /* the "failed" rank: no progress from here on */
    }
    clt_status st = clt_future_wait(f);
    double waited = now() - t0;
    DT_CHECK(st == CLT_ERR_COMM, "the collective with a stalled rank returned %s", clt_status_string(st));
    DT_CHECK(strstr(clt_last_error(ctx), "no progress") != NULL, "message: %s", clt_last_error(ctx));
    if (dt_rank != dt_size - 1)
        DT_CHECK(waited < o.timeout_s + 10.0, "the error came after %.1f s", waited);
    clt_future_free(f);
    DT_STATUS(ctx, clt_dist_allreduce(comm, t, CLT_DIST_SUM), CLT_ERR_COMM);
    DT_STATUS(ctx, clt_dist_progress(comm), CLT_ERR_COMM);
    if (dt_rank == 0)
        printf("  failed rank, %lld floats: peers returned CLT_ERR_COMM after %.2f s (timeout 1.5 s)\n",
               (long long)n, waited);
    clt_tensor_free(t);
    clt_dist_comm_free(comm);
}

void dt_failed_rank(clt_context *ctx)
{
    if (dt_size < 2)
        return;
    failed_rank(ctx, 50000);  /* 200 KB: the ring */
    failed_rank(ctx, 300000); /* 1.2 MB: past 1 MiB, the node path (src/dist/node.c) */
}
