/* Runtime layer: errors and logging, device discovery, shared per-device state, the context.
 * Internal: nothing here is exported. Internal functions use the prefix clt__ (two underscores). */
#ifndef CLT_RUNTIME_H
#define CLT_RUNTIME_H

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cltensor.h"

struct clt_pool;
struct clt_transfer;
struct clt_program_cache;
struct clt_kernel_map;
struct clt_workspace;
struct clt__tuning;
struct clt_profiler;
struct clt_fft_cache;

/* ------------------------------------------------------------ errors.c */

/* Record a failure message on ctx (or, when ctx is NULL, in the calling thread's context-less slot)
 * and return st, so call sites read: return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "clt_x: ...", ...). */
clt_status clt__fail(const clt_context *ctx, clt_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Same with a va_list. */
clt_status clt__vfail(const clt_context *ctx, clt_status st, const char *fmt, va_list ap);
/* The public call running on this thread, so that a failure deep in a shared layer (program cache,
 * pool, workspace, expression evaluator, OpenCL enqueue) still reports a message starting with the
 * name the caller used. Every public entry point that can fail opens with CLT_PUBLIC_CALL(); the
 * outermost one wins when public calls nest (an op creating a temporary tensor), and the name is
 * restored when the function returns (cleanup attribute), so it is never stale. Thread-local: two
 * threads using one context each keep their own. clt__vfail prefixes "<name>: " unless the message
 * already starts with it. */
const char *clt__public_call_enter(const char *name);
void clt__public_call_leave(const char *const *previous);
/* The name of the outermost public call on this thread, or NULL outside one. */
const char *clt__public_call(void);
#if defined(__GNUC__) || defined(__clang__)
#define CLT_PUBLIC_CALL()                                                                          \
    const char *clt__enclosing_call __attribute__((cleanup(clt__public_call_leave), unused)) =     \
        clt__public_call_enter(__func__)
#else
/* Without the cleanup attribute no layer below an op could name the public call in a message. */
#error "cltensor is built with GCC or Clang (the cleanup attribute names the public call in messages)"
#endif
/* An OpenCL call failed: message "<what>: CL_NAME (code)". Status: CLT_ERR_OUT_OF_DEVICE_MEMORY for
 * CL_MEM_OBJECT_ALLOCATION_FAILURE / CL_OUT_OF_RESOURCES, CLT_ERR_OUT_OF_HOST_MEMORY for
 * CL_OUT_OF_HOST_MEMORY, CLT_ERR_OPENCL otherwise. */
clt_status clt__cl_fail(const clt_context *ctx, cl_int err, const char *what);
/* "CL_INVALID_VALUE" etc.; "CL_UNKNOWN_ERROR" for codes it does not know. */
const char *clt__cl_error_name(cl_int err);

/* Logging to stderr, only when CLT_LOG=debug. */
int clt__log_enabled(void);
void clt__log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ------------------------------------------------------ regular_file.c */

/* Opens path for reading only when it is a regular file, never blocking on a FIFO or device:
 * -1 with errno set and a message naming the path in why otherwise (errno ENOENT when absent,
 * EINVAL when not a regular file). */
int clt__open_regular(const char *path, char *why, size_t cap);
/* Same as a stdio stream ("rb"). */
FILE *clt__fopen_regular(const char *path, char *why, size_t cap);

/* ------------------------------------------------------------ device.c */

typedef struct clt_device_entry {
    cl_platform_id platform;
    cl_device_id device;
    clt_device_info info;
    cl_context probe_ctx; /* context made while probing (NVIDIA), handed to the first device state */
} clt_device_entry;

/* All devices of all platforms, probed once per process (thread-safe). count may be 0. */
clt_status clt__device_list(const clt_device_entry **list, int *count);
/* Resolve a selection string (public clt_device_select semantics) against the list. */
clt_status clt__device_resolve(const char *selection, int *global_index);

/* ----------------------------------------------------- device_state.c */

/* Process-wide state of one device, shared by every context on it: one cl_context (so programs
 * can be shared) and the program cache. Reference counted; the last release frees it. */
typedef struct clt_device_state {
    int global_index;
    const clt_device_entry *entry;
    cl_context cl_ctx;
    pthread_mutex_t lock; /* guards programs and refcount */
    int refcount;
    struct clt_program_cache *programs;
    int is_adopted;                          /* cl_ctx is an application's (retained, not ours) */
    struct clt_device_state *next_adopted;   /* registry of adopted states */
} clt_device_state;

clt_status clt__device_state_acquire(int global_index, clt_device_state **out);
/* The state of device global_index on an application's cl_context (retained while the state lives),
 * shared by every cltensor context adopting that cl_context. */
clt_status clt__device_state_adopt(int global_index, cl_context cl_ctx, clt_device_state **out);
void clt__device_state_release(clt_device_state *ds);

/* ----------------------------------------------------------- profile.c */

/* Effective limits of a context: the device's, narrowed by the named profile ("native", "gfx902").
 * Returns CLT_ERR_INVALID_ARGUMENT for an unknown profile name. */
clt_status clt__profile_limits(const clt_device_info *info, const char *profile,
                               clt_context_limits *limits);

/* ----------------------------------------------------------- context.c */

struct clt_context {
    clt_device_state *dev;
    cl_command_queue queue;
    clt_context_limits limits;
    struct clt_pool *pool;
    struct clt_transfer *transfer;
    struct clt_kernel_map *kernels; /* this context's cl_kernel objects (not thread-safe to share) */
    struct clt_tensor *tensors;     /* live tensor handles, released with the context */
    struct clt_workspace *workspace; /* persistent op scratch buffers (memory/workspace.c), or NULL */
    struct clt__tuning *tuning;     /* the tuning file in force, or why not (tune/tuning_file.h) */
    struct clt_profiler *prof;      /* profile/: NULL when the profiler is off */
    struct clt_fft_cache *fft;      /* FFT plans made on this context (ops/fft/fft_cache.c), or NULL */
    struct {                        /* CL_KERNEL_WORK_GROUP_SIZE by kernel, direct-mapped: asked */
        cl_kernel kernel;           /* on every launch, and the driver query is not free */
        size_t max_work_group;
    } wg_cache[64];
    char *error;                    /* last failure message, heap, grows as needed */
    size_t error_cap;
    int rehearsal; /* ops/common/launch.h clt__rehearse_then_run: build and check, enqueue nothing */
    int nv_sm; /* ops/gemm/gemm_mma.c's probe, cached: 0 unknown, else NVIDIA compute capability + 1 */
    const char *impl_note; /* non-NULL: the profiler names the next kernels so (a static string),
                              instead of their function name: e.g. which math path really ran */
    clt_math_mode math; /* GEMM/Conv2D mode for calls asking CLT_MATH_DEFAULT (clt_context_set_math_mode) */
};

/* Everything of clt_context_create but the device and queue: resolves opts (and the environment)
 * against device global_index into *limits and *memory_limit. Failures are recorded on the thread
 * slot with the prefix `who`. */
clt_status clt__context_resolve_options(const clt_context_options *opts, int global_index,
                                        const char *who, clt_context_limits *limits);
/* Second half of creation, once ctx->dev and ctx->queue are set: pool, transfers, kernels, profiler,
 * tuning. On failure ctx is destroyed and the message moved to the thread slot under `who`. */
clt_status clt__context_start(clt_context *ctx, const char *who);
/* Tears down a context in any state of construction. */
void clt__context_destroy(clt_context *ctx);

/* Parse "123", "64K", "512M", "2G" (powers of 1024). Returns 0 on success. */
int clt__parse_bytes(const char *text, uint64_t *bytes);

/* Case-insensitive substring search. */
int clt__contains_nocase(const char *haystack, const char *needle);

#endif /* CLT_RUNTIME_H */
