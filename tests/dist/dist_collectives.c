/* The collectives against a host reference computed in double from every rank's data (each rank
 * can regenerate all of it): odd sizes, empty tensors, sizes across chunk edges, any rank count;
 * allreduce results must be the same bits on every rank. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dist/dist.h" /* src/dist: the communicator, to see which path it took */
#include "dist/dist_test.h"

enum { STREAM_ALLREDUCE = 1, STREAM_BCAST = 2, STREAM_GATHER = 3, STREAM_SCATTER = 4, STREAM_ASYNC = 5 };

static clt_tensor *f32_tensor(clt_context *ctx, int64_t n, uint64_t stream, int rank)
{
    float *x = malloc((size_t)n * sizeof *x + 4);
    for (int64_t i = 0; i < n; i++)
        x[i] = dt_value(stream * 64 + (uint64_t)rank, (uint64_t)i);
    clt_tensor *t = NULL;
    DT_OK(ctx, clt_tensor_create_from_host(ctx, CLT_F32, 1, &n, x, (size_t)n * sizeof *x, &t));
    free(x);
    return t;
}

static float *read_f32(clt_context *ctx, const clt_tensor *t)
{
    size_t n = (size_t)clt_tensor_numel(t);
    float *x = malloc(n * sizeof *x + 4);
    DT_OK(ctx, clt_tensor_read(t, x, n * sizeof *x));
    return x;
}

/* got[i] against the double sum over ranks of (stream, rank, base + i) (divided by size for mean). */
static void check_sum(const char *what, const float *got, int64_t n, uint64_t stream, int64_t base,
                      int mean)
{
    int bad = 0;
    for (int64_t i = 0; i < n && bad < 3; i++) {
        double want = 0, mag = 0;
        for (int r = 0; r < dt_size; r++) {
            double v = dt_value(stream * 64 + (uint64_t)r, (uint64_t)(base + i));
            want += v;
            mag += fabs(v);
        }
        if (mean) {
            want /= dt_size;
            mag /= dt_size;
        }
        double tol = 2.0 * dt_size * FLT_EPSILON * mag + 1e-30;
        if (!(fabs((double)got[i] - want) <= tol)) {
            dt_fail(__FILE__, __LINE__, "%s: n %lld, element %lld: got %.9g, want %.9g", what,
                    (long long)n, (long long)i, got[i], want);
            bad++;
        }
    }
}

static void allreduce_sizes(clt_context *ctx, clt_dist_comm *comm, const int64_t *sizes, int count)
{
    for (int k = 0; k < count; k++)
        for (int mean = 0; mean < 2; mean++) {
            int64_t n = sizes[k];
            clt_tensor *t = f32_tensor(ctx, n, STREAM_ALLREDUCE, dt_rank);
            DT_OK(ctx, clt_dist_allreduce(comm, t, mean ? CLT_DIST_MEAN : CLT_DIST_SUM));
            float *got = read_f32(ctx, t);
            check_sum(mean ? "allreduce mean" : "allreduce sum", got, n, STREAM_ALLREDUCE, 0, mean);
            DT_CHECK(dt_same_on_all_ranks(got, (size_t)n * sizeof *got),
                     "allreduce n %lld: ranks hold different bits", (long long)n);
            free(got);
            clt_tensor_free(t);
        }
}

static void broadcast_sizes(clt_context *ctx, clt_dist_comm *comm, const int64_t *sizes, int count)
{
    int root = dt_size - 1; /* not rank 0 */
    for (int k = 0; k < count; k++) {
        int64_t n = sizes[k];
        /* i32: broadcast moves bytes of any dtype */
        int32_t *x = malloc((size_t)n * 4 + 4), *got = malloc((size_t)n * 4 + 4);
        for (int64_t i = 0; i < n; i++)
            x[i] = (int32_t)(dt_value(STREAM_BCAST * 64 + (uint64_t)dt_rank, (uint64_t)i) * 1e9f);
        clt_tensor *t = NULL;
        DT_OK(ctx, clt_tensor_create_from_host(ctx, CLT_I32, 1, &n, x, (size_t)n * 4, &t));
        DT_OK(ctx, clt_dist_broadcast(comm, t, root));
        DT_OK(ctx, clt_tensor_read(t, got, (size_t)n * 4));
        for (int64_t i = 0; i < n; i++) {
            int32_t want = (int32_t)(dt_value(STREAM_BCAST * 64 + (uint64_t)root, (uint64_t)i) * 1e9f);
            if (got[i] != want) {
                dt_fail(__FILE__, __LINE__, "broadcast n %lld element %lld: got %d want %d",
                        (long long)n, (long long)i, got[i], want);
                break;
            }
        }
        free(x);
        free(got);
        clt_tensor_free(t);
    }
}

static void allgather_sizes(clt_context *ctx, clt_dist_comm *comm, const int64_t *sizes, int count)
{
    for (int k = 0; k < count; k++) {
        int64_t n = sizes[k], total = n * dt_size;
        /* u8: odd byte counts */
        unsigned char *x = malloc((size_t)n + 1), *got = malloc((size_t)total + 1);
        for (int64_t i = 0; i < n; i++)
            x[i] = (unsigned char)(dt_value(STREAM_GATHER * 64 + (uint64_t)dt_rank, (uint64_t)i) * 127 + 128);
        clt_tensor *in = NULL, *out = NULL;
        DT_OK(ctx, clt_tensor_create_from_host(ctx, CLT_U8, 1, &n, x, (size_t)n, &in));
        DT_OK(ctx, clt_tensor_create(ctx, CLT_U8, 1, &total, &out));
        DT_OK(ctx, clt_tensor_fill(out, 7));
        DT_OK(ctx, clt_dist_allgather(comm, in, out));
        DT_OK(ctx, clt_tensor_read(out, got, (size_t)total));
        for (int64_t i = 0; i < total; i++) {
            int r = (int)(i / (n ? n : 1));
            unsigned char want =
                (unsigned char)(dt_value(STREAM_GATHER * 64 + (uint64_t)r, (uint64_t)(i % n)) * 127 + 128);
            if (got[i] != want) {
                dt_fail(__FILE__, __LINE__, "allgather n %lld element %lld: got %d want %d",
                        (long long)n, (long long)i, got[i], want);
                break;
            }
        }
        free(x);
        free(got);
        clt_tensor_free(in);
        clt_tensor_free(out);
    }
}

static void reduce_scatter_sizes(clt_context *ctx, clt_dist_comm *comm, const int64_t *sizes, int count)
{
    for (int k = 0; k < count; k++)
        for (int mean = 0; mean < 2; mean++) {
            int64_t m = sizes[k], total = m * dt_size;
            clt_tensor *in = f32_tensor(ctx, total, STREAM_SCATTER, dt_rank), *out = NULL;
            DT_OK(ctx, clt_tensor_create(ctx, CLT_F32, 1, &m, &out));
            DT_OK(ctx, clt_tensor_fill(out, NAN));
            DT_OK(ctx, clt_dist_reduce_scatter(comm, in, out, mean ? CLT_DIST_MEAN : CLT_DIST_SUM));
            float *got = read_f32(ctx, out);
            check_sum(mean ? "reduce_scatter mean" : "reduce_scatter sum", got, m, STREAM_SCATTER,
                      (int64_t)dt_rank * m, mean);
            free(got);
            clt_tensor_free(in);
            clt_tensor_free(out);
        }
}

void dt_collectives(clt_context *ctx)
{
    /* Small chunks (1024 floats) and a window of 3: many chunks in flight, chunk edges hit. */
    clt_dist_options o;
    clt_dist_options_init(&o);
    o.chunk_bytes = 4096;
    o.window = 3;
    clt_dist_comm *small = NULL, *dflt = NULL;
    DT_OK(ctx, clt_dist_comm_create(ctx, MPI_COMM_WORLD, &o, &small));
    DT_OK(ctx, clt_dist_comm_create(ctx, MPI_COMM_WORLD, NULL, &dflt));
    if (!small || !dflt)
        return;
    DT_CHECK(clt_dist_size(small) == dt_size && clt_dist_rank(small) == dt_rank, "rank/size");
    /* mpirun on one machine: every rank on one node, so the node path must be on (unless
     * CLT_DIST_SHM=0 asks for the ring): else the sizes below would test the ring twice. */
    const char *shm = getenv("CLT_DIST_SHM");
    int want_node = dt_size > 1 && !(shm && strcmp(shm, "0") == 0);
    DT_CHECK(small->node.on == want_node && dflt->node.on == want_node, "the node path is %s",
             small->node.on ? "on" : "off");
    const int64_t sizes[] = {0, 1, 2, 3, 5, 1023, 1024, 1025, 7919};
    const int count = (int)(sizeof sizes / sizeof sizes[0]);
    allreduce_sizes(ctx, small, sizes, count);
    broadcast_sizes(ctx, small, sizes, count);
    reduce_scatter_sizes(ctx, small, sizes, count);
    const int64_t bytes[] = {0, 1, 3, 4095, 4096, 4097, 10007};
    allgather_sizes(ctx, small, bytes, (int)(sizeof bytes / sizeof bytes[0]));
    /* Past 1 MiB, on one node, allreduce takes the shared-memory path (src/dist/node.c): with
     * 4 KiB chunks that is ~300 chunks through its 8 slots, each reused ~37 times. */
    const int64_t node[] = {(1 << 18) + 5, 300007};
    allreduce_sizes(ctx, small, node, 2);
    /* The default chunk (4 MiB): one chunk and a bit. */
    const int64_t big[] = {(1 << 20) + 3};
    allreduce_sizes(ctx, dflt, big, 1);
    reduce_scatter_sizes(ctx, dflt, big, 1);
    clt_dist_comm_free(small);
    clt_dist_comm_free(dflt);
}

/* Several collectives in flight at once while other work is enqueued; futures polled and waited
 * in another order than started. Then the argument checks (local: nothing reaches MPI). */
void dt_async_and_errors(clt_context *ctx)
{
    clt_dist_options o;
    clt_dist_options_init(&o);
    o.chunk_bytes = 4096;
    clt_dist_comm *comm = NULL;
    DT_OK(ctx, clt_dist_comm_create(ctx, MPI_COMM_WORLD, &o, &comm));
    if (!comm)
        return;
    /* the last one past 1 MiB: the node path's chunks in flight behind the ring's */
    const int64_t sizes[4] = {5001, 1, 30011, 300007};
    clt_tensor *t[4];
    clt_future *f[4];
    for (int k = 0; k < 4; k++) {
        t[k] = f32_tensor(ctx, sizes[k], STREAM_ASYNC + (uint64_t)k * 8, dt_rank);
        DT_OK(ctx, clt_dist_allreduce_async(comm, t[k], CLT_DIST_SUM, &f[k]));
    }
    int64_t m = 4097;
    clt_tensor *other = NULL;
    DT_OK(ctx, clt_tensor_create(ctx, CLT_F32, 1, &m, &other));
    DT_OK(ctx, clt_tensor_fill(other, 2.5)); /* enqueued while the exchange runs */
    int pending = 4;
    while (pending) {
        pending = 0;
        for (int k = 0; k < 4; k++) {
            clt_status st = clt_future_poll(f[k]);
            DT_CHECK(st == CLT_SUCCESS || st == CLT_ERR_NOT_READY, "poll -> %s", clt_status_string(st));
            pending += st == CLT_ERR_NOT_READY;
        }
    }
    for (int k = 3; k >= 0; k--) {
        DT_OK(ctx, clt_future_wait(f[k]));
        DT_OK(ctx, clt_future_get(f[k], NULL, 0));
        clt_future_free(f[k]);
        float *got = read_f32(ctx, t[k]);
        check_sum("async allreduce", got, sizes[k], STREAM_ASYNC + (uint64_t)k * 8, 0, 0);
        free(got);
        clt_tensor_free(t[k]);
    }
    float *o2 = read_f32(ctx, other);
    DT_CHECK(o2[0] == 2.5f && o2[m - 1] == 2.5f, "work enqueued during the exchange");
    free(o2);

    /* Bad input: the documented status, a message naming the call, no future, nothing exchanged. */
    int64_t n = 6, n3 = 6 * dt_size;
    clt_tensor *a = NULL, *i32 = NULL, *whole = NULL, *view = NULL;
    DT_OK(ctx, clt_tensor_create(ctx, CLT_F32, 1, &n, &a));
    DT_OK(ctx, clt_tensor_create(ctx, CLT_I32, 1, &n, &i32));
    DT_OK(ctx, clt_tensor_create(ctx, CLT_F32, 1, &n3, &whole));
    DT_OK(ctx, clt_tensor_view(whole, 0, 1, &n, &view));
    clt_future *fut = (clt_future *)1;
    DT_STATUS(ctx, clt_dist_allreduce_async(NULL, a, CLT_DIST_SUM, &fut), CLT_ERR_INVALID_ARGUMENT);
    DT_CHECK(fut == NULL, "future not cleared on failure");
    DT_STATUS(ctx, clt_dist_allreduce(comm, NULL, CLT_DIST_SUM), CLT_ERR_INVALID_ARGUMENT);
    DT_STATUS(ctx, clt_dist_allreduce(comm, a, (clt_dist_op)7), CLT_ERR_INVALID_ARGUMENT);
    DT_CHECK(strstr(clt_last_error(ctx), "clt_dist_allreduce") != NULL, "message: %s", clt_last_error(ctx));
    DT_STATUS(ctx, clt_dist_allreduce(comm, i32, CLT_DIST_SUM), CLT_ERR_INVALID_DTYPE);
    DT_STATUS(ctx, clt_dist_broadcast(comm, a, dt_size), CLT_ERR_INVALID_ARGUMENT);
    DT_STATUS(ctx, clt_dist_broadcast(comm, a, -1), CLT_ERR_INVALID_ARGUMENT);
    DT_STATUS(ctx, clt_dist_allgather(comm, a, a), dt_size == 1 ? CLT_ERR_ALIASING : CLT_ERR_INVALID_SHAPE);
    DT_STATUS(ctx, clt_dist_allgather(comm, view, whole), CLT_ERR_ALIASING);
    DT_CHECK(strstr(clt_last_error(ctx), "clt_dist_allgather") != NULL, "message: %s", clt_last_error(ctx));
    DT_STATUS(ctx, clt_dist_reduce_scatter(comm, a, whole, CLT_DIST_SUM),
              dt_size == 1 ? CLT_SUCCESS : CLT_ERR_INVALID_SHAPE);
    DT_STATUS(ctx, clt_dist_reduce_scatter(comm, whole, i32, CLT_DIST_SUM), CLT_ERR_INVALID_DTYPE);
    clt_context *other_ctx = NULL;
    DT_OK(NULL, clt_context_create(NULL, &other_ctx));
    clt_tensor *foreign = NULL;
    DT_OK(other_ctx, clt_tensor_create(other_ctx, CLT_F32, 1, &n, &foreign));
    DT_STATUS(ctx, clt_dist_allreduce(comm, foreign, CLT_DIST_SUM), CLT_ERR_CONTEXT_MISMATCH);
    clt_tensor_free(foreign);
    clt_context_free(other_ctx);
    clt_dist_comm *bad = NULL;
    DT_STATUS(ctx, clt_dist_comm_create(ctx, MPI_COMM_NULL, NULL, &bad), CLT_ERR_INVALID_ARGUMENT);
    o.chunk_bytes = 100;
    DT_STATUS(ctx, clt_dist_comm_create(ctx, MPI_COMM_WORLD, &o, &bad), CLT_ERR_INVALID_ARGUMENT);
    DT_CHECK(bad == NULL, "comm not cleared on failure");
    /* After all that, the communicator still works (nothing was started). */
    DT_OK(ctx, clt_tensor_fill(a, 1.0));
    DT_OK(ctx, clt_dist_allreduce(comm, a, CLT_DIST_SUM));
    float got[6];
    DT_OK(ctx, clt_tensor_read(a, got, sizeof got));
    DT_CHECK(got[0] == (float)dt_size && got[5] == (float)dt_size, "after errors: %g", got[0]);
    clt_tensor_free(view);
    clt_tensor_free(whole);
    clt_tensor_free(i32);
    clt_tensor_free(a);
    clt_dist_comm_free(comm);
}
