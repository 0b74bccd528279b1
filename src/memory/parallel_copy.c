/* Host copies into and out of pinned staging, split over a few threads. One core's memcpy (~8 GB/s
 * measured on the H200 host) is what limited staged transfers, while the pinned DMA runs at ~54 GB/s.
 * Threads are started and joined inside the call: nothing outlives it. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "memory/memory.h"

#define MAX_COPY_THREADS 4
#define MIN_BYTES_PER_THREAD (1u << 20) /* below this a thread costs more than it saves */

typedef struct copy_part {
    unsigned char *dst;
    const unsigned char *src;
    size_t bytes;
} copy_part;

static void *copy_part_run(void *p)
{
    copy_part *part = p;
    memcpy(part->dst, part->src, part->bytes);
    return NULL;
}

static int copy_threads(size_t bytes)
{
    /* Threads may copy at once: the lazily counted cores are an atomic (a plain static was a data
     * race; every thread computes the same value, so relaxed order suffices). */
    static _Atomic int cached_cores;
    int cores = atomic_load_explicit(&cached_cores, memory_order_relaxed);
    if (cores == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        cores = n > 0 ? (int)n : 1;
        atomic_store_explicit(&cached_cores, cores, memory_order_relaxed);
    }
    size_t by_size = bytes / MIN_BYTES_PER_THREAD;
    int n = cores < MAX_COPY_THREADS ? cores : MAX_COPY_THREADS;
    return by_size < (size_t)n ? (by_size > 0 ? (int)by_size : 1) : n;
}

void clt__parallel_copy(void *dst, const void *src, size_t bytes)
{
    int n = copy_threads(bytes);
    if (n <= 1) {
        memcpy(dst, src, bytes);
        return;
    }
    copy_part parts[MAX_COPY_THREADS];
    pthread_t threads[MAX_COPY_THREADS];
    int started[MAX_COPY_THREADS] = {0};
    size_t step = (bytes / (size_t)n + 63) & ~(size_t)63; /* cache-line aligned splits */
    for (int i = 0; i < n; i++) {
        size_t begin = (size_t)i * step;
        size_t end = i == n - 1 ? bytes : begin + step;
        if (begin > bytes)
            begin = bytes;
        if (end > bytes)
            end = bytes;
        parts[i] = (copy_part){(unsigned char *)dst + begin, (const unsigned char *)src + begin,
                               end - begin};
    }
    for (int i = 1; i < n; i++)
        started[i] = pthread_create(&threads[i], NULL, copy_part_run, &parts[i]) == 0;
    copy_part_run(&parts[0]);
    for (int i = 1; i < n; i++) {
        if (started[i])
            pthread_join(threads[i], NULL);
        else
            copy_part_run(&parts[i]); /* no thread to be had: copy here */
    }
}
