/* Launch helpers shared by every op: one place decides work-group and grid sizes. Internal. */
#ifndef CLT_LAUNCH_H
#define CLT_LAUNCH_H

#include "runtime/runtime.h"

/* Enqueue a 1-D grid-stride kernel over `items` work items (its arguments already set). Picks a
 * work-group size within the context's limits and the kernel's own CL_KERNEL_WORK_GROUP_SIZE, and
 * caps the grid at a few waves per compute unit (the kernel loops over the rest). items == 0
 * enqueues nothing. `who` names the public call for error messages. */
clt_status clt__launch_1d(clt_context *ctx, cl_kernel kernel, uint64_t items, const char *who);

/* The same with the caller's preferred work-group size (still narrowed to the limits). Keep it
 * fixed per kernel: POCL compiles a work-group function per local size. */
clt_status clt__launch_1d_group(clt_context *ctx, cl_kernel kernel, uint64_t items,
                                size_t preferred_local, const char *who);

/* clt__launch_1d with a grid of at most groups_per_cu groups per compute unit on GPUs (0: the
 * default cap), for grid-stride kernels that stream best as one resident wave. */
clt_status clt__launch_1d_capped(clt_context *ctx, cl_kernel kernel, uint64_t items,
                                 uint64_t groups_per_cu, const char *who);

/* The grid the functions above enqueue, for callers that enqueue on a queue of their own (the
 * distributed layer's extra queues): a 1-D grid-stride launch over `items` items (items >= 1) with
 * at most groups_per_cu groups per compute unit on GPUs, one item per element on CPUs. */
void clt__launch_1d_grid(const clt_context *ctx, cl_kernel kernel, uint64_t items, size_t preferred_local,
                         uint64_t groups_per_cu, size_t *global, size_t *local);

/* The one place where op kernels are enqueued (1-3 dimensions, arguments already set), so every
 * launch can be observed (profiler) and fails with the same message: "<who>: clEnqueueNDRangeKernel
 * (global AxB, local CxD): CL_...". local may be NULL (driver's choice). */
clt_status clt__enqueue_kernel(clt_context *ctx, cl_kernel kernel, cl_uint dims, const size_t *global,
                               const size_t *local, const char *who);

/* Whether ctx runs the CPU-style kernel variants (no local memory, vectors across a work item,
 * one item per output row or element): a CPU device, unless the profile asks for the GPU variants
 * (gfx902 does, so the tests run them on POCL too). */
int clt__cpu_style(const clt_context *ctx);

/* Multi-stage ops (im2col then GEMM, Winograd transform, GEMM, output): `stages` runs once as a
 * rehearsal, where every kernel is built, chosen and given its arguments but clt__enqueue_kernel
 * (and CLBlast) enqueue nothing, then for real; so a stage that cannot be built fails the op before
 * its first stage ran. */
typedef clt_status (*clt__stages_fn)(clt_context *ctx, const void *arg, const char *who);
clt_status clt__rehearse_then_run(clt_context *ctx, clt__stages_fn stages, const void *arg,
                                  const char *who);

/* CL_KERNEL_WORK_GROUP_SIZE of a kernel on ctx's device, cached per context (kernels live as long
 * as the context, so a pointer identifies one). */
size_t clt__kernel_work_group_limit(clt_context *ctx, cl_kernel kernel);
/* Whether kernel runs in groups of `group` items: its compiled group size
 * (reqd_work_group_size) is exactly that, or its CL_KERNEL_WORK_GROUP_SIZE is at least that.
 * NVIDIA's driver reports 256 for kernels that declare 512 or 1024 items and launch with them
 * (H100, driver 580.159: fft_local and fft_wide at 32-108 registers), so a declared size the
 * compiler accepted is trusted over the reported limit. */
int clt__kernel_runs_group(clt_context *ctx, cl_kernel kernel, size_t group);
/* The largest work-group a launch of kernel may use: its own limit, capped by the context's (the
 * gfx902 profile's 256 on any device). */
size_t clt__group_limit(clt_context *ctx, cl_kernel kernel);
/* want, cut to clt__group_limit (at least 1). */
size_t clt__fit_local(clt_context *ctx, cl_kernel kernel, size_t want);
/* The largest power-of-two fraction of want (want halved until it fits) within clt__group_limit. */
size_t clt__fit_local_halving(clt_context *ctx, cl_kernel kernel, size_t want);

/* clSetKernelArg with an error message naming the op and argument index. */
clt_status clt__set_arg(clt_context *ctx, cl_kernel kernel, cl_uint index, size_t size,
                        const void *value, const char *who);

#endif
