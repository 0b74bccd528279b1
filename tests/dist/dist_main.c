/* The MPI test program: run by ctest under mpiexec on 2 and 3 ranks (tests dist_np2, dist_np3).
 * Every rank runs every test; the exit status is non-zero when any rank saw a failure. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dist/dist_test.h"

int dt_rank, dt_size, dt_failures;
uint64_t dt_seed;

void dt_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "[rank %d] %s:%d: ", dt_rank, file, line);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    dt_failures++;
}

static uint64_t mix(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

float dt_value(uint64_t stream, uint64_t i)
{
    uint64_t z = mix(dt_seed ^ mix(stream * 0x100000001B3ull + i));
    return (float)((double)(z >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
}

int dt_same_on_all_ranks(const void *data, size_t bytes)
{
    uint64_t h = 1469598103934665603ull;
    const unsigned char *p = data;
    for (size_t i = 0; i < bytes; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    uint64_t lo = 0, hi = 0;
    MPI_Allreduce(&h, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&h, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    return lo == hi;
}

typedef struct named_test {
    const char *name;
    void (*run)(clt_context *ctx);
} named_test;

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &dt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &dt_size);
    if (dt_rank == 0) {
        const char *s = getenv("CLT_TEST_SEED");
        dt_seed = s ? strtoull(s, NULL, 0) : (uint64_t)time(NULL) * 2654435761u;
        printf("dist tests on %d ranks, CLT_TEST_SEED=0x%llx\n", dt_size, (unsigned long long)dt_seed);
    }
    MPI_Bcast(&dt_seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    clt_context *ctx = NULL;
    if (clt_context_create(NULL, &ctx) != CLT_SUCCESS) {
        fprintf(stderr, "[rank %d] clt_context_create: %s\n", dt_rank, clt_last_error(NULL));
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* The failed-rank test breaks its communicator, so it runs last. */
    const named_test tests[] = {{"collectives", dt_collectives},
                                {"async_and_errors", dt_async_and_errors},
                                {"data_parallel", dt_data_parallel},
                                {"failed_rank", dt_failed_rank}};
    const char *only = getenv("CLT_DIST_TEST");
    int total = 0;
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        if (only && *only && strcmp(only, tests[i].name) != 0)
            continue;
        int before = dt_failures;
        tests[i].run(ctx);
        int mine = dt_failures - before, all = 0;
        MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (dt_rank == 0)
            printf("%-18s %s (%d failed checks over %d ranks)\n", tests[i].name, all ? "FAIL" : "ok",
                   all, dt_size);
        total += all;
    }
    clt_context_free(ctx);
    if (dt_rank == 0)
        printf("dist tests: %s\n", total ? "FAILED" : "passed");
    MPI_Finalize();
    return total ? 1 : 0;
}
