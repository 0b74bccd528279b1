/* The MPI test program's small harness (Check forks per test, which MPI does not survive): checks
 * count failures per rank; main gathers them. */
#ifndef CLT_DIST_TEST_H
#define CLT_DIST_TEST_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

#include "cltensor_all.h"
#include "cltensor_dist.h"

extern int dt_rank, dt_size, dt_failures;
extern uint64_t dt_seed;

void dt_fail(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#define DT_CHECK(cond, ...)                                                                        \
    do {                                                                                           \
        if (!(cond))                                                                               \
            dt_fail(__FILE__, __LINE__, __VA_ARGS__);                                              \
    } while (0)

#define DT_OK(ctx, call)                                                                           \
    do {                                                                                           \
        clt_status dt_st_ = (call);                                                                \
        DT_CHECK(dt_st_ == CLT_SUCCESS, "%s -> %s: %s", #call, clt_status_string(dt_st_),         \
                 clt_last_error(ctx));                                                             \
    } while (0)

#define DT_STATUS(ctx, call, want)                                                                 \
    do {                                                                                           \
        clt_status dt_st_ = (call);                                                                \
        DT_CHECK(dt_st_ == (want), "%s -> %s, expected %s (%s)", #call, clt_status_string(dt_st_), \
                 clt_status_string(want), clt_last_error(ctx));                                   \
    } while (0)

/* A value in [-1, 1) that depends only on (seed, stream, i): every rank can recompute every other
 * rank's data for the host reference. */
float dt_value(uint64_t stream, uint64_t i);
/* FNV-1a of bytes; 1 when every rank of MPI_COMM_WORLD has the same hash. */
int dt_same_on_all_ranks(const void *data, size_t bytes);

void dt_collectives(clt_context *ctx);
void dt_async_and_errors(clt_context *ctx);
void dt_data_parallel(clt_context *ctx);
void dt_failed_rank(clt_context *ctx);

#endif
