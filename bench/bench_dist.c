/* clt-bench --suite dist, under mpirun (built with CLT_WITH_MPI). The shared timing loop of the
 * other suites picks its repetition count per process, which MPI collectives cannot follow, so this
 * suite times for itself with counts every rank agrees on, and reports the slowest rank.
 *
 * allreduce/<bytes>: clt_dist_allreduce (sum, f32) from 4 KiB to --max-bytes (default 256 MiB);
 *   algbw = bytes / time, busbw = algbw * 2 (P-1) / P (the NCCL convention).
 * pinned/<bytes>: in the same run, every rank at once, a device->host read into pinned memory
 *   (CL_MEM_ALLOC_HOST_PTR, mapped) and a host->device write from it, timed apart: the staging
 * bound. The pipeline overlaps them with the exchange, so the bound on algbw is min(d2h, h2d)
 * bandwidth; "vs bound" is algbw over it. dp_step/<width>x<batch>: one data-parallel step of a
 * 3-hidden-layer MLP on a per-rank batch (clt_mlp_gradients, clt_dist_dp_sync, clt_adam_step)
 * against the same step without the exchange on every rank at once (local); weak-scaling efficiency
 * = local / dp. traffic = the gradient allreduce alone; compute/traffic says whether the case meets
 * the ">= 5x". dp_pinn/<width>x<points>: the PINN step with its gradients in buckets
 * announced layer by layer during the backward (overlapped) or exchanged after it; there
 * compute/traffic = local / (after - local), what the exchange adds when nothing hides it. */
#include <string.h>

#include "bench_dist.h"

int bench_dist_requested(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--suite=dist") == 0 ||
            (strcmp(argv[i], "--suite") == 0 && i + 1 < argc && strcmp(argv[i + 1], "dist") == 0))
            return 1;
    return 0;
}

#ifdef CLT_WITH_MPI
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cltensor_all.h"
#include "cltensor_cl.h"
#include "cltensor_dist.h"
#include "pinn_net.h"

static int rank, size;
static FILE *jf; /* --json FILE: JSON lines (rank 0), next to the table on stdout */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double slowest(double t)
{
    double m = 0;
    MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return m;
}

#define CHECK(call)                                                                                \
    do {                                                                                           \
        clt_status st_ = (call);                                                                   \
        if (st_ != CLT_SUCCESS) {                                                                  \
            fprintf(stderr, "[rank %d] %s -> %s: %s\n", rank, #call, clt_status_string(st_),       \
                    clt_last_error(ctx));                                                          \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

static int reps_for(size_t bytes)
{
    return bytes <= ((size_t)1 << 20) ? 20 : bytes <= ((size_t)16 << 20) ? 5 : 3;
}

/* Wait for the queue the way the dist layer's futures do (poll, then sleep 20 us): on POCL with
 * more ranks than cores, clFinish measured 2-4x slower steps, its waiting thread competing with
 * the device's for the cores. */
static void wait_queue(clt_context *ctx, clt_tensor *any)
{
    clt_future *f = NULL;
    CHECK(clt_tensor_read_async(any, 0, 1, &f));
    struct timespec ts = {0, 20000};
    clt_status st;
    while ((st = clt_future_poll(f)) == CLT_ERR_NOT_READY)
        nanosleep(&ts, NULL);
    CHECK(st);
    clt_future_free(f);
}

/* The same for raw OpenCL commands: a marker polled with the same sleep. */
static void wait_cl_queue(cl_command_queue q)
{
    cl_event ev = NULL;
    clEnqueueMarkerWithWaitList(q, 0, NULL, &ev);
    clFlush(q);
    struct timespec ts = {0, 20000};
    cl_int s = CL_QUEUED;
    while (clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, NULL) ==
               CL_SUCCESS &&
           s > CL_COMPLETE)
        nanosleep(&ts, NULL);
    clReleaseEvent(ev);
}

/* Seconds per pinned read (d2h) and write (h2d) of t, every rank at once. */
static void pinned_copy(clt_context *ctx, clt_tensor *t, size_t bytes, double *d2h, double *h2d)
{
    cl_context cl = clt_context_cl_context(ctx);
    cl_command_queue q = clt_context_cl_queue(ctx);
    cl_int err;
    cl_mem pin = clCreateBuffer(cl, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, NULL, &err);
    void *host = err == CL_SUCCESS ? clEnqueueMapBuffer(q, pin, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE,
                                                        0, bytes, 0, NULL, NULL, &err)
                                   : NULL;
    if (err != CL_SUCCESS) {
        fprintf(stderr, "[rank %d] pinned buffer of %zu bytes: OpenCL error %d\n", rank, bytes,
                err);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    size_t off = 0;
    cl_mem mem = clt_tensor_cl_mem(t, &off);
    int reps = reps_for(bytes);
    for (int dir = 0; dir < 2; dir++) {
        clEnqueueReadBuffer(q, mem, CL_TRUE, off, bytes, host, 0, NULL, NULL); /* warm */
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = now();
        for (int r = 0; r < reps; r++) {
            if (dir == 0)
                clEnqueueReadBuffer(q, mem, CL_FALSE, off, bytes, host, 0, NULL, NULL);
            else
                clEnqueueWriteBuffer(q, mem, CL_FALSE, off, bytes, host, 0, NULL, NULL);
        }
        wait_cl_queue(q);
        double t = slowest((now() - t0) / reps);
        *(dir == 0 ? d2h : h2d) = t;
    }
    clEnqueueUnmapMemObject(q, pin, host, 0, NULL, NULL);
    clFinish(q);
    clReleaseMemObject(pin);
}

static void bench_allreduce(clt_context *ctx, clt_dist_comm *comm, size_t max_bytes)
{
    if (rank == 0)
        printf("| case | ranks | time (ms) | algbw GB/s | busbw GB/s | pinned d2h GB/s | pinned "
               "h2d GB/s "
               "| vs bound |\n|---|---|---|---|---|---|---|---|\n");
    for (size_t bytes = 4096; bytes <= max_bytes; bytes *= 4) {
        int64_t n = (int64_t)(bytes / 4);
        clt_tensor *t = NULL;
        CHECK(clt_tensor_create(ctx, CLT_F32, 1, &n, &t));
        CHECK(clt_tensor_fill_uniform(t, 7 + (uint64_t)rank, -1.f, 1.f));
        double d2h = 0, h2d = 0;
        pinned_copy(ctx, t, bytes, &d2h, &h2d);
        CHECK(clt_dist_allreduce(comm, t, CLT_DIST_MEAN)); /* warm: staging made, kernels none */
        CHECK(clt_finish(ctx));
        int reps = reps_for(bytes);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = now();
        for (int r = 0; r < reps; r++)
            CHECK(clt_dist_allreduce(comm, t, CLT_DIST_MEAN));
        wait_queue(ctx, t);
        double secs = slowest((now() - t0) / reps);
        double alg = (double)bytes / secs / 1e9, bus = alg * 2.0 * (size - 1) / size;
        double bound = (double)bytes / (d2h > h2d ? d2h : h2d) / 1e9;
        if (rank == 0) {
            if (jf)
                fprintf(jf,
                        "{\"suite\":\"dist\",\"case\":\"allreduce/%zu\",\"ranks\":%d,\"ms\":%.4f,"
                        "\"algbw_gbs\":%.3f,\"busbw_gbs\":%.3f,\"pinned_d2h_gbs\":%.3f,"
                        "\"pinned_h2d_gbs\":%.3f,\"vs_bound\":%.3f}\n",
                        bytes, size, secs * 1e3, alg, bus, bytes / d2h / 1e9, bytes / h2d / 1e9,
                        alg / bound);
            printf("| allreduce/%zu | %d | %.3f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", bytes,
                   size, secs * 1e3, alg, bus, bytes / d2h / 1e9, bytes / h2d / 1e9, alg / bound);
            fflush(stdout);
        }
        clt_tensor_free(t);
        CHECK(clt_pool_trim(ctx));
    }
}

/* Mean seconds of one step: mode 0 local (no exchange), 1 data-parallel, 2 the exchange alone. */
static double time_steps(clt_context *ctx, clt_mlp *net, clt_dist_dp *dp, const clt_tensor *x,
                         const clt_tensor *y, clt_tensor *m, clt_tensor *v, int mode, int steps)
{
    clt_adam_params adam;
    clt_adam_params_init(&adam);
    clt_tensor *p = clt_mlp_params(net), *g = clt_mlp_grads(net);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now();
    for (int s = 1; s <= steps; s++) {
        if (mode != 2)
            CHECK(clt_mlp_gradients(net, x, y));
        if (mode != 0)
            CHECK(clt_dist_dp_sync(dp));
        if (mode != 2)
            CHECK(clt_adam_step(p, g, m, v, &adam, s));
        if (mode == 0) /* the data-parallel step waits for its gradients every step: so does this */
            wait_queue(ctx, p);
    }
    wait_queue(ctx, p);
    return slowest((now() - t0) / steps);
}

static void bench_dp(clt_context *ctx, clt_dist_comm *comm)
{
    /* width, per-rank batch. The last case only on GPUs: there the first two compute for about as
     * long as their gradients travel, under the ">= 5x" condition for weak scaling. */
    const int64_t cases[][2] = {{64, 2048}, {128, 4096}, {128, 65536}};
    clt_device_info info;
    clt_context_device_info(ctx, &info);
    size_t ncases = info.type == CLT_DEVICE_CPU ? 2 : 3;
    if (rank == 0)
        printf("\n| case | ranks | params | local step (ms) | dp step (ms) | traffic (ms) | "
               "compute/traffic "
               "| weak-scaling eff. |\n|---|---|---|---|---|---|---|---|\n");
    for (size_t k = 0; k < ncases; k++) {
        int64_t w = cases[k][0], b = cases[k][1];
        clt_mlp_desc d;
        clt_mlp_desc_init(&d);
        d.inputs = 2;
        d.layers = 4;
        for (int l = 0; l < 3; l++) {
            d.widths[l] = w;
            d.activations[l] = CLT_TANH;
        }
        d.widths[3] = 1;
        d.activations[3] = CLT_IDENTITY;
        clt_mlp *net = NULL;
        CHECK(clt_mlp_create(ctx, &d, NULL, 3, &net));
        int64_t xs[2] = {b, 2}, ys[2] = {b, 1};
        clt_tensor *x = NULL, *y = NULL, *m = NULL, *v = NULL;
        CHECK(clt_tensor_create(ctx, CLT_F32, 2, xs, &x));
        CHECK(clt_tensor_create(ctx, CLT_F32, 2, ys, &y));
        CHECK(clt_tensor_fill_uniform(x, 100 + (uint64_t)rank, -1.f, 1.f));
        CHECK(clt_tensor_fill_uniform(y, 200 + (uint64_t)rank, -1.f, 1.f));
        int64_t np = clt_tensor_numel(clt_mlp_params(net));
        CHECK(clt_tensor_create(ctx, CLT_F32, 1, &np, &m));
        CHECK(clt_tensor_create(ctx, CLT_F32, 1, &np, &v));
        CHECK(clt_tensor_fill(m, 0));
        CHECK(clt_tensor_fill(v, 0));
        clt_dist_dp *dp = NULL;
        CHECK(clt_dist_dp_create(comm, clt_mlp_params(net), clt_mlp_grads(net), 0, &dp));
        time_steps(ctx, net, dp, x, y, m, v, 1, 2); /* warm: kernels built, staging made */
        const int steps = 10;
        /* Interleaved, best of 3 each: the machine's load drifts between measurements. */
        double local = 1e30, dps = 1e30;
        for (int rep = 0; rep < 3; rep++) {
            double a = time_steps(ctx, net, dp, x, y, m, v, 0, steps);
            double c = time_steps(ctx, net, dp, x, y, m, v, 1, steps);
            if (getenv("CLT_BENCH_DIST_VERBOSE") && rank == 0)
                fprintf(stderr, "local %.3f ms, dp %.3f ms\n", a * 1e3, c * 1e3);
            local = a < local ? a : local;
            dps = c < dps ? c : dps;
        }
        double traffic = time_steps(ctx, net, dp, x, y, m, v, 2, steps);
        if (rank == 0) {
            if (jf)
                fprintf(
                    jf,
                    "{\"suite\":\"dist\",\"case\":\"dp_step/"
                    "%lldx%lld\",\"ranks\":%d,\"params\":%lld,"
                    "\"local_ms\":%.4f,\"dp_ms\":%.4f,\"traffic_ms\":%.4f,\"efficiency\":%.3f}\n",
                    (long long)w, (long long)b, size, (long long)np, local * 1e3, dps * 1e3,
                    traffic * 1e3, local / dps);
            printf("| dp_step/%lldx%lld | %d | %lld | %.3f | %.3f | %.3f | %.1f | %.3f |\n",
                   (long long)w, (long long)b, size, (long long)np, local * 1e3, dps * 1e3,
                   traffic * 1e3, local / traffic, local / dps);
            fflush(stdout);
        }
        clt_dist_dp_free(dp);
        clt_tensor_free(x);
        clt_tensor_free(y);
        clt_tensor_free(m);
        clt_tensor_free(v);
        clt_mlp_free(net);
    }
}

static clt_status announce(void *dp, int64_t first)
{
    return clt_dist_dp_grads_ready(dp, first);
}

/* Mean seconds of one PINN step: mode 0 local, 1 data-parallel with each layer's gradients
 * announced as the backward pass enqueues them (overlap), 3 data-parallel with the exchange started
 * only after the whole backward (no overlap). */
static double time_pinn(clt_context *ctx, pinn_net *net, clt_dist_dp *dp, int mode, int steps)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now();
    for (int s = 1; s <= steps; s++) {
        CHECK(pinn_gradients_notify(net, mode == 1 ? announce : NULL, dp));
        if (mode != 0)
            CHECK(clt_dist_dp_sync(dp));
        CHECK(clt_adam_step(net->params, net->grads, net->m, net->v, &net->adam, s));
        if (mode == 0)
            wait_queue(ctx, net->params);
    }
    wait_queue(ctx, net->params);
    return slowest((now() - t0) / steps);
}

static void bench_dp_pinn(clt_context *ctx, clt_dist_comm *comm)
{
    /* per-rank points, F, width. The last case only on GPUs, where the first two compute for about
     * as long as one bucket's exchange takes: there the backward is long enough for the buckets'
     * exchanges to hide behind it (the weak-scaling condition, compute >= 5x traffic). */
    const int64_t cases[][3] = {{4096, 16, 64}, {4096, 16, 128}, {65536, 16, 128}};
    clt_device_info info;
    clt_context_device_info(ctx, &info);
    size_t ncases = info.type == CLT_DEVICE_CPU ? 2 : 3;
    if (rank == 0)
        printf("\n| case | ranks | params | local step (ms) | dp, overlapped (ms) | dp, after "
               "backward (ms) | compute/traffic "
               "| weak-scaling eff. |\n|---|---|---|---|---|---|---|---|\n");
    for (size_t k = 0; k < ncases; k++) {
        pinn_net *net = NULL;
        CHECK(pinn_create(ctx, cases[k][0], cases[k][1], cases[k][2], 5, &net));
        clt_dist_dp *dp = NULL;
        /* About four buckets, so the last layers' exchange can start early. */
        CHECK(clt_dist_dp_create(comm, net->params, net->grads, (size_t)net->nparams, &dp));
        time_pinn(ctx, net, dp, 1, 2); /* warm */
        const int steps = 10;
        double local = 1e30, over = 1e30, after = 1e30;
        for (int rep = 0; rep < 3; rep++) {
            double a = time_pinn(ctx, net, dp, 0, steps), b = time_pinn(ctx, net, dp, 1, steps);
            double c = time_pinn(ctx, net, dp, 3, steps);
            local = a < local ? a : local;
            over = b < over ? b : over;
            after = c < after ? c : after;
        }
        if (rank == 0) {
            if (jf)
                fprintf(
                    jf,
                    "{\"suite\":\"dist\",\"case\":\"dp_pinn/"
                    "%lldx%lld\",\"ranks\":%d,\"params\":%lld,"
                    "\"buckets\":%d,\"local_ms\":%.4f,\"dp_overlap_ms\":%.4f,\"dp_after_ms\":%.4f,"
                    "\"efficiency\":%.3f}\n",
                    (long long)cases[k][2], (long long)cases[k][0], size, (long long)net->nparams,
                    clt_dist_dp_buckets(dp), local * 1e3, over * 1e3, after * 1e3, local / over);
            /* traffic: what the exchange adds when it starts after the whole backward */
            printf("| dp_pinn/%lldx%lld (%d buckets) | %d | %lld | %.3f | %.3f | %.3f | %.1f | %.3f |\n",
                   (long long)cases[k][2], (long long)cases[k][0], clt_dist_dp_buckets(dp), size,
                   (long long)net->nparams, local * 1e3, over * 1e3, after * 1e3,
                   after > local ? local / (after - local) : 0.0, local / over);
            fflush(stdout);
        }
        clt_dist_dp_free(dp);
        pinn_free(net);
    }
}

int bench_dist_main(int argc, char **argv)
{
    size_t max_bytes = (size_t)256 << 20;
    const char *json_path = NULL;
    int skip_allreduce = 0, skip_dp = 0;
    for (int i = 1; i < argc; i++) { /* every argument checked before MPI starts */
        char *end = NULL;
        if (strcmp(argv[i], "--json") == 0 && i + 1 < argc)
            json_path = argv[++i];
        else if (strcmp(argv[i], "--suite=dist") == 0)
            continue;
        else if (strcmp(argv[i], "--suite") == 0 && i + 1 < argc &&
                 strcmp(argv[i + 1], "dist") == 0)
            i++;
        else if (strncmp(argv[i], "--max-bytes=", 12) == 0 &&
                 (max_bytes = (size_t)strtoull(argv[i] + 12, &end, 0)) >= 4096 && end &&
                 *end == '\0')
            continue;
        else if (strcmp(argv[i], "--case=allreduce") == 0)
            skip_dp = 1;
        else if (strcmp(argv[i], "--case=dp_step") == 0)
            skip_allreduce = 1;
        else {
            fprintf(stderr,
                    "clt-bench: --suite dist takes --json FILE, --max-bytes=N (>= 4096), "
                    "--case=allreduce or --case=dp_step; not '%s'\n",
                    argv[i]);
            return 1;
        }
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0 && json_path && !(jf = fopen(json_path, "w"))) {
        fprintf(stderr, "clt-bench: --json: cannot write %s\n", json_path);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* One GPU per rank on a multi-GPU node: without CLT_DEVICE, rank r of a node takes GPU
     * r % (GPUs present); elsewhere the library's default selection. */
    char sel[16] = "";
    const char *env_dev = getenv("CLT_DEVICE");
    if (!env_dev || !*env_dev) {
        MPI_Comm node;
        int local = 0, count = 0, gpus = 0;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
        MPI_Comm_rank(node, &local);
        MPI_Comm_free(&node);
        clt_device_count(&count);
        int gpu_index[64];
        for (int i = 0; i < count && gpus < 64; i++) {
            clt_device_info d;
            if (clt_device_get_info(i, &d) == CLT_SUCCESS && d.type == CLT_DEVICE_GPU)
                gpu_index[gpus++] = i;
        }
        if (gpus > 1)
            snprintf(sel, sizeof sel, "%d", gpu_index[local % gpus]);
    }
    clt_context_options copts;
    clt_context_options_init(&copts);
    if (sel[0])
        copts.device = sel;
    clt_context *ctx = NULL;
    if (clt_context_create(&copts, &ctx) != CLT_SUCCESS) {
        fprintf(stderr, "[rank %d] clt_context_create: %s\n", rank, clt_last_error(NULL));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    clt_device_info info;
    clt_context_device_info(ctx, &info);
    if (rank == 0)
        printf("clt-bench --suite dist: %d ranks, rank 0 on device %d %s (%s)%s\n\n", size,
               info.global_index, info.device_name, info.platform_name,
               sel[0] ? ", one GPU per rank of a node" : "");
    clt_dist_comm *comm = NULL;
    CHECK(clt_dist_comm_create(ctx, MPI_COMM_WORLD, NULL, &comm));
    if (!skip_allreduce)
        bench_allreduce(ctx, comm, max_bytes);
    if (!skip_dp) {
        bench_dp(ctx, comm);
        bench_dp_pinn(ctx, comm);
    }
    clt_dist_comm_free(comm);
    clt_context_free(ctx);
    if (jf)
        fclose(jf);
    MPI_Finalize();
    return 0;
}
#endif /* CLT_WITH_MPI; without it clt-bench refuses --suite dist */
