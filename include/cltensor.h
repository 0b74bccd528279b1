/**
 * @file
 * cltensor — a cross-vendor GPU compute backend over OpenCL for ML frameworks.
 *
 * Public C ABI: the base types (status, dtype, context, tensor, activations) and the context and
 * tensor calls. Each op family has its own header that includes only this one
 * (cltensor_ops.h, cltensor_gemm.h, cltensor_conv.h, cltensor_train.h, cltensor_profile.h);
 * cltensor_all.h includes them all. No OpenCL types appear here; interop lives in cltensor_cl.h.
 *
 * Execution model
 *   A context owns one device, one in-order command queue and one buffer pool.
 *   Every op only enqueues work and returns; the queue orders it. The calls that
 *   block are: clt_tensor_read, clt_tensor_write (until the host data is copied
 *   out of the caller's memory), clt_finish, clt_future_wait, clt_profile_collect and
 *   clt_context_free.
 *   Errors raised while the device executes surface at the next blocking call.
 *
 * Thread safety
 *   A context (and everything created from it) is used by one thread at a time,
 *   like a CUDA stream. Different contexts are independent and may be used
 *   concurrently from different threads, also on the same device. Contexts on
 *   the same device share one process-wide program cache, so a second context
 *   compiles nothing that the first already built.
 *
 * Conventions
 *   Every function that can fail returns clt_status. Constructors fill an out
 *   parameter and set it to NULL on failure. _free(NULL) is a no-op. On any
 *   failure nothing is enqueued and no argument is modified; clt_last_error()
 *   then describes what went wrong. The library never aborts, exits or prints
 *   (set CLT_LOG=debug to get a log on stderr).
 *   Every call that takes handles returns CLT_ERR_INVALID_ARGUMENT for a NULL handle or out
 *   pointer, and CLT_ERR_CONTEXT_MISMATCH for tensors of different contexts; the statuses each
 *   function lists are those on top of these. Any call that enqueues work may also return
 *   CLT_ERR_OUT_OF_DEVICE_MEMORY, CLT_ERR_OUT_OF_HOST_MEMORY, CLT_ERR_BUILD_FAILED (a kernel
 *   compiled on first use did not build) or CLT_ERR_OPENCL (an OpenCL call failed).
 *   Ownership: what a _create call returns belongs to the caller until its _free; tensors and
 *   futures also die with their context (clt_context_free). Pointers passed in (shapes, host data,
 *   option strings) are only read during the call; nothing keeps them.
 *
 * Environment (each also settable in clt_context_options, which wins)
 *   CLT_DEVICE          device selection, see clt_context_options.device
 *   CLT_DEVICE_PROFILE  "native" (default) or "gfx902"
 *   CLT_MEMORY_LIMIT    pool cap in bytes; suffixes K, M, G (powers of 1024)
 *   CLT_KERNEL_DIR      load cl_kernels/ sources from this directory
 *   CLT_CACHE_DIR       on-disk program cache directory, or "off"
 *   CLT_GEMM_IMPL       "tiled", "clblast" or "auto" (default)
 *   CLT_CONV_IMPL       "tiled", "clblast" or "auto" (default)
 *   CLT_MATH            GEMM/Conv2D math mode: "fp32" (default), "tf32" or "3xtf32" (clt_math_mode)
 *   CLT_FFT_IMPL        "ours", "clfft", "vkfft" or "auto" (default), see cltensor_fft.h
 *   CLT_PROFILE         "1" records every command for the profiler (cltensor_profile.h)
 *   CLT_TUNING_FILE     tuning file instead of CACHE_DIR/tuning-HASH.txt, or "off" (env only)
 *   CLT_LOG             "debug" to log to stderr
 */
#ifndef CLTENSOR_H
#define CLTENSOR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** CLT_API marks the public functions. Building the shared library (CLT_BUILDING_LIBRARY) exports
 * them; an application using the shared library imports them (which matters on Windows); with
 * CLT_STATIC defined (an application linking a static archive of cltensor) it is empty. */
#if defined(CLT_STATIC)
#define CLT_API
#elif defined(_WIN32)
#if defined(CLT_BUILDING_LIBRARY)
#define CLT_API __declspec(dllexport)
#else
#define CLT_API __declspec(dllimport)
#endif
#elif defined(__GNUC__) || defined(__clang__)
#define CLT_API __attribute__((visibility("default")))
#else
#define CLT_API
#endif

/* ---------------------------------------------------------------- version */

/** Major version of these headers (an incompatible ABI change raises it; while it is 0, the
 *  minor version does). */
#define CLT_VERSION_MAJOR 0
/** Minor version of these headers. */
#define CLT_VERSION_MINOR 1
/** Patch version of these headers. */
#define CLT_VERSION_PATCH 0
/** The version of these headers as text. */
#define CLT_VERSION_STRING "0.1.0"

/** Version of the library actually loaded, e.g. "0.1.0" (the CLT_VERSION_* macros are those of the
 *  headers compiled against). Never NULL; a static string, valid for the life of the process. */
CLT_API const char *clt_version_string(void);

/** Version numbers of the library actually loaded. Any pointer may be NULL (that number is not
 *  written). Never fails, never blocks. Compare with CLT_VERSION_MAJOR / CLT_VERSION_MINOR to check
 *  that the shared library found at run time matches the headers (the same major.minor is
 *  compatible while the major is 0). */
CLT_API void clt_version(int *major, int *minor, int *patch);

/* ----------------------------------------------------------------- status */

/** Stable status codes: values never change once released. */
typedef enum clt_status {
    CLT_SUCCESS = 0,
    CLT_ERR_INVALID_ARGUMENT = 1,      /**< NULL handle, bad option or value */
    CLT_ERR_INVALID_DTYPE = 2,         /**< unknown dtype, or dtypes that do not match */
    CLT_ERR_INVALID_SHAPE = 3,         /**< bad ndim, negative dim, shapes that do not fit */
    CLT_ERR_SIZE_OVERFLOW = 4,         /**< element count or byte size overflows */
    CLT_ERR_DEVICE_NOT_FOUND = 5,      /**< no OpenCL device, or none matches the selection */
    CLT_ERR_OUT_OF_DEVICE_MEMORY = 6,  /**< pool cap reached, or the device refused */
    CLT_ERR_OUT_OF_HOST_MEMORY = 7,    /**< malloc failed */
    CLT_ERR_BUILD_FAILED = 8,          /**< a kernel did not compile; the build log is in clt_last_error */
    CLT_ERR_OPENCL = 9,                /**< an OpenCL call failed; its name is in clt_last_error */
    CLT_ERR_NOT_READY = 10,            /**< a future is not complete yet (not an error) */
    CLT_ERR_UNSUPPORTED = 11,          /**< valid request this device or build cannot do */
    CLT_ERR_CONTEXT_MISMATCH = 12,     /**< handles from different contexts mixed */
    CLT_ERR_IO = 13,                   /**< a file could not be read or written */
    CLT_ERR_INVALID_AXIS = 14,         /**< axis out of range */
    CLT_ERR_ALIASING = 15,             /**< output overlaps an input where the op forbids it */
    CLT_ERR_COMM = 16                  /**< a distributed collective failed: an MPI error, a peer that
                                            did not answer within the timeout, or a communicator
                                            broken by an earlier failure (cltensor_dist.h) */
} clt_status;

/** Short constant name of a status ("CLT_ERR_INVALID_SHAPE"); unknown values give "CLT_ERR_UNKNOWN".
 *  A static string (never NULL, never freed). Never fails, never blocks. */
CLT_API const char *clt_status_string(clt_status status);

/* ------------------------------------------------------------------ types */

/** Element types. Values are stable. f32 is computed everywhere; the others are storage types
 *  (create, fill, copy, read, write) until an op says otherwise. */
typedef enum clt_dtype {
    CLT_F32 = 1,
    CLT_F16 = 2, /**< IEEE binary16 storage */
    CLT_I32 = 3,
    CLT_U8 = 4,
    CLT_C64 = 5, /**< complex: interleaved f32 real, imaginary (8 bytes); the FFT family computes it */
    CLT_BF16 = 6 /**< bfloat16 storage (the top 16 bits of an f32); GEMM/Conv2D inputs, clt_cast */
} clt_dtype;

/** How GEMM and Conv2D multiply f32 operands. Values are stable. Accumulation is fp32 in every
 *  mode. A device without tensor cores (clt_device_has_tensor_cores() == 0, cltensor_gemm.h: POCL, AMD, NVIDIA
 *  before compute capability 8.0) runs the exact fp32 path under every mode; the profiler's
 *  implementation name and clt-info say which ran. */
typedef enum clt_math_mode {
    CLT_MATH_DEFAULT = 0,      /**< per call: the context's mode; per context: $CLT_MATH, else FP32 */
    CLT_MATH_FP32 = 1,         /**< exact fp32 products (the tests' baseline) */
    CLT_MATH_TF32 = 2,         /**< tensor cores, inputs rounded to TF32 (10-bit mantissa, nearest,
                                    ties away from zero as cuBLAS does) */
    CLT_MATH_FP32_3XTF32 = 3   /**< tensor cores, each operand split into a TF32 high part and a TF32
                                    residual, three products: fp32-level accuracy */
} clt_math_mode;

/** "default", "fp32", "tf32", "3xtf32", or "unknown". A static string. Never blocks. */
CLT_API const char *clt_math_mode_name(clt_math_mode mode);

/* Shared by the elementwise ops and the GEMM/conv epilogues, so it lives with the base types. */
/** Unary ops and activations. `alpha` is used by LEAKY_RELU (slope for x < 0) and ELU
 *  (alpha * (exp(x) - 1) for x < 0) and ignored by the others. */
typedef enum clt_unary_op {
    CLT_IDENTITY = 0,
    CLT_NEG = 1,
    CLT_ABS = 2,
    CLT_SIGN = 3,       /**< -1, 0, +1 (NaN stays NaN) */
    CLT_EXP = 4,
    CLT_LOG = 5,
    CLT_SQRT = 6,
    CLT_RSQRT = 7,
    CLT_RECIPROCAL = 8,
    CLT_SQUARE = 9,
    CLT_SIN = 10,
    CLT_COS = 11,
    CLT_TANH = 12,
    CLT_SIGMOID = 13,
    CLT_RELU = 14,
    CLT_LEAKY_RELU = 15,
    CLT_ELU = 16,
    CLT_GELU_ERF = 17,  /**< x * Phi(x) */
    CLT_GELU_TANH = 18, /**< the tanh approximation */
    CLT_SILU = 19,      /**< x * sigmoid(x) */
    CLT_SOFTPLUS = 20,  /**< log(1 + exp(x)), stable for large |x| */
    CLT_HARDSWISH = 21  /**< x * relu6(x + 3) / 6 */
} clt_unary_op;

/** Most dimensions a tensor can have. */
#define CLT_MAX_DIMS 8

/** Size in bytes of one element of dtype, or 0 for an unknown dtype. Never blocks. */
CLT_API size_t clt_dtype_size(clt_dtype dtype);
/** Name of a dtype ("f32"), or "unknown". A static string. Never blocks. */
CLT_API const char *clt_dtype_name(clt_dtype dtype);

/** A device, its in-order queue, buffer pool and kernels (clt_context_create). Opaque. */
typedef struct clt_context clt_context;
/** A device-resident n-dimensional array of one dtype, or a view into another (clt_tensor_create,
 *  clt_tensor_view). Opaque; belongs to one context. */
typedef struct clt_tensor clt_tensor;
/** The pending result of an asynchronous read (clt_tensor_read_async). Opaque. */
typedef struct clt_future clt_future;

/* ---------------------------------------------------------------- devices */

/** Kind of an OpenCL device (CL_DEVICE_TYPE). */
typedef enum clt_device_type {
    CLT_DEVICE_OTHER = 0,      /**< none of the below (e.g. CL_DEVICE_TYPE_CUSTOM) */
    CLT_DEVICE_CPU = 1,        /**< a CPU (POCL, Intel's CPU runtime) */
    CLT_DEVICE_GPU = 2,        /**< a GPU */
    CLT_DEVICE_ACCELERATOR = 3 /**< an accelerator (FPGA, DSP) */
} clt_device_type;

/** Who makes the device or its OpenCL implementation (kernels and tables are chosen by it). */
typedef enum clt_vendor {
    CLT_VENDOR_OTHER = 0,  /**< not recognised: generic kernels and parameters */
    CLT_VENDOR_NVIDIA = 1, /**< NVIDIA's OpenCL */
    CLT_VENDOR_AMD = 2,    /**< AMD (ROCm, Clover, the gfx902 profile) */
    CLT_VENDOR_INTEL = 3,  /**< Intel */
    CLT_VENDOR_POCL = 4    /**< the Portable Computing Language (CPU) */
} clt_vendor;

/** What a device is and can do, probed once per process. */
typedef struct clt_device_info {
    int platform_index;           /**< position in clGetPlatformIDs order */
    int device_index;             /**< position within its platform */
    int global_index;             /**< position in the flat list across platforms */
    clt_device_type type;         /**< CPU, GPU, ... */
    clt_vendor vendor;            /**< from the platform and vendor names */
    char platform_name[128];      /**< CL_PLATFORM_NAME */
    char platform_version[128];   /**< CL_PLATFORM_VERSION */
    char device_name[128];        /**< CL_DEVICE_NAME */
    char device_vendor[128];      /**< CL_DEVICE_VENDOR */
    char device_version[128];     /**< "OpenCL 3.0 CUDA" */
    char driver_version[128];     /**< CL_DRIVER_VERSION */
    char opencl_c_version[64];    /**< "OpenCL C 1.2 ..." */
    uint32_t compute_units;       /**< CL_DEVICE_MAX_COMPUTE_UNITS */
    uint32_t max_clock_mhz;       /**< CL_DEVICE_MAX_CLOCK_FREQUENCY */
    uint64_t max_work_group_size; /**< CL_DEVICE_MAX_WORK_GROUP_SIZE */
    uint32_t preferred_work_group_multiple; /**< warp / wavefront / SIMD width hint */
    uint64_t local_mem_bytes;     /**< CL_DEVICE_LOCAL_MEM_SIZE */
    int local_mem_is_global;      /**< "local" memory is really global (CPU devices) */
    uint64_t global_mem_bytes;    /**< CL_DEVICE_GLOBAL_MEM_SIZE */
    uint64_t max_alloc_bytes;     /**< CL_DEVICE_MAX_MEM_ALLOC_SIZE: the largest single tensor */
    int unified_memory;           /**< host and device share memory (APU, CPU) */
    int has_fp16;                 /**< cl_khr_fp16 */
    int has_fp64;                 /**< cl_khr_fp64 */
    int has_inline_ptx;           /**< NVIDIA: asm("...") in OpenCL C builds and runs */
    int has_subgroups;            /**< cl_khr_subgroups or cl_intel_subgroups */
} clt_device_info;

/** Number of OpenCL devices across all platforms (0 when there is no platform). */
CLT_API clt_status clt_device_count(int *count);
/** Capabilities of device `global_index` (0 .. count-1). */
CLT_API clt_status clt_device_get_info(int global_index, clt_device_info *info);
/** Resolve a selection string (see clt_context_options.device) to a device index, without creating
 *  anything. NULL or "" means the default (CLT_DEVICE, else first GPU, else first CPU, else first device).
 *  Returns CLT_ERR_DEVICE_NOT_FOUND when nothing matches. */
CLT_API clt_status clt_device_select(const char *selection, int *global_index);

/* ---------------------------------------------------------------- context */

/** How clt_context_create sets up a context. Initialise with clt_context_options_init; every field
 *  left at its zero value takes the environment's setting, else the default. */
typedef struct clt_context_options {
    /** Which device: NULL = $CLT_DEVICE, else first GPU, else CPU. Forms: "2" (flat index),
     *  "1:0" (platform:device), "gpu" / "cpu" / "accelerator" (first of that type), or a
     *  case-insensitive substring of "platform name / device name / platform version / device vendor"
     *  ("nvidia", "pocl"). */
    const char *device;
    /** Device profile: NULL = $CLT_DEVICE_PROFILE, else "native". "gfx902" makes the library choose
     *  kernels and parameters as it would on an AMD gfx902 APU (work-group <= 256, wave 64, local
     *  memory budget 64 KiB but never more than the device has, zero-copy transfers). */
    const char *profile;
    /** Pool cap in bytes (device memory held: in use plus cached). 0 = $CLT_MEMORY_LIMIT, else none. */
    uint64_t memory_limit;
    /** Directory with cl_kernels sources to use instead of the embedded ones. NULL = $CLT_KERNEL_DIR. */
    const char *kernel_dir;
    /** On-disk program cache directory; "off" disables it. NULL = $CLT_CACHE_DIR, else
     *  $XDG_CACHE_HOME/cltensor, else $HOME/.cache/cltensor. */
    const char *cache_dir;
    /** GEMM implementation: "tiled" (ours), "clblast" or "auto" (default: by shape and device).
     *  NULL = $CLT_GEMM_IMPL, else "auto". */
    const char *gemm_impl;
    /** Conv2D implementation: "tiled" (ours), "clblast" (im2col + CLBlast GEMM) or "auto".
     *  NULL = $CLT_CONV_IMPL, else "auto". */
    const char *conv_impl;
    /** Profiler: 1 on, -1 off, 0 = $CLT_PROFILE ("1" on; unset, "" or "0" off). */
    int profiler;
    /** GEMM/Conv2D math mode: CLT_MATH_DEFAULT = $CLT_MATH ("fp32", "tf32", "3xtf32"), else FP32.
     *  A value outside clt_math_mode: CLT_ERR_INVALID_ARGUMENT. */
    clt_math_mode math;
} clt_context_options;

/** Fill *opts with defaults (everything from the environment). NULL is ignored. Never blocks. */
CLT_API void clt_context_options_init(clt_context_options *opts);

/** Create a context on the selected device. opts may be NULL (defaults).
 *  Statuses: CLT_ERR_DEVICE_NOT_FOUND, CLT_ERR_INVALID_ARGUMENT (bad profile or memory limit string),
 *  CLT_ERR_OPENCL, CLT_ERR_OUT_OF_HOST_MEMORY. On failure *out is NULL and clt_last_error(NULL) says why.
 *  The caller owns the context: free it with clt_context_free. Blocks while it creates the OpenCL
 *  context and queue (the first context on a device also probes it); compiles nothing. */
CLT_API clt_status clt_context_create(const clt_context_options *opts, clt_context **out);
/** Wait for all work, then release everything the context owns, including tensors and futures
 *  still alive (their handles become invalid: do not use or free them afterwards; wrapped user
 *  buffers get their reference back). Blocks until the queue is idle. NULL is a no-op. */
CLT_API void clt_context_free(clt_context *ctx);
/** Block until all enqueued work is done. Returns the first execution error, if any
 *  (CLT_ERR_OPENCL, CLT_ERR_OUT_OF_DEVICE_MEMORY), CLT_ERR_INVALID_ARGUMENT for NULL. */
CLT_API clt_status clt_finish(clt_context *ctx);
/** Submit enqueued work to the device without waiting (clFlush). Does not block.
 *  CLT_ERR_INVALID_ARGUMENT for NULL, CLT_ERR_OPENCL. */
CLT_API clt_status clt_flush(clt_context *ctx);

/** Detailed message of the last failure on ctx (which call, which argument, expected vs got, the
 *  OpenCL error name, the build log). With ctx == NULL: the calling thread's last failure of a call
 *  that had no context (clt_context_create, clt_device_*). Never NULL; "" when nothing failed.
 *  Successful calls do not clear it. The string belongs to the library: with ctx it stays valid
 *  until the next failing call on ctx or clt_context_free(ctx); with NULL (a per-thread buffer)
 *  until the calling thread's next failing context-less call or the thread's end. Copy it to keep
 *  it longer. Never blocks. */
CLT_API const char *clt_last_error(const clt_context *ctx);

/** The device of ctx, copied into *info. CLT_ERR_INVALID_ARGUMENT for NULL. Never blocks. */
CLT_API clt_status clt_context_device_info(const clt_context *ctx, clt_device_info *info);

/** The limits a context actually uses: the device's, narrowed by the profile. */
typedef struct clt_context_limits {
    char profile[32];           /**< "native" or "gfx902" */
    uint64_t max_work_group_size; /**< the largest work-group a kernel is launched with */
    uint32_t wave_width;        /**< 32 NVIDIA, 64 AMD/gfx902, SIMD width hint elsewhere */
    uint64_t local_mem_budget;  /**< bytes a kernel may plan to use */
    int zero_copy;              /**< transfers map memory instead of copying through staging */
    uint64_t memory_limit;      /**< pool cap, 0 = none */
    char kernel_dir[512];       /**< "" = embedded sources */
    char cache_dir[512];        /**< "" when the disk cache is off */
    char gemm_impl[16];         /**< "auto", "tiled" or "clblast" */
    char conv_impl[16];         /**< "auto", "tiled" or "clblast" */
    int profiler;               /**< 1 when every command is recorded (queue profiling on) */
    clt_math_mode math;         /**< the context's math mode at creation (never CLT_MATH_DEFAULT) */
} clt_context_limits;

/** The limits and settings in force on ctx, copied into *limits. CLT_ERR_INVALID_ARGUMENT for NULL.
 *  Never blocks. */
CLT_API clt_status clt_context_get_limits(const clt_context *ctx, clt_context_limits *limits);

/** The implementation choices in force on ctx (GEMM setting, the auto rule for this device, the
 *  kernel parameter table), as lines of text into buf (NUL-terminated, truncated to size).
 *  CLT_ERR_INVALID_ARGUMENT for NULL ctx or buf or size 0. Never blocks. */
CLT_API clt_status clt_context_describe_dispatch(const clt_context *ctx, char *buf, size_t size);

/** Set the math mode of ctx for later GEMM/Conv2D calls that ask for CLT_MATH_DEFAULT.
 *  CLT_MATH_DEFAULT restores the mode the context was created with (options, else $CLT_MATH).
 *  Statuses: CLT_ERR_INVALID_ARGUMENT (NULL ctx, or a value outside clt_math_mode). Never blocks;
 *  work already enqueued is unaffected. */
CLT_API clt_status clt_context_set_math_mode(clt_context *ctx, clt_math_mode mode);
/** The math mode in force on ctx (never CLT_MATH_DEFAULT) into *mode. CLT_ERR_INVALID_ARGUMENT
 *  for NULL. Never blocks. */
CLT_API clt_status clt_context_get_math_mode(const clt_context *ctx, clt_math_mode *mode);

/** Where the dispatch thresholds and kernel parameters in force on a context come from. */
typedef enum clt_tuning_source {
    CLT_TUNING_BUILTIN = 0, /**< the built-in tables (no tuning file, or tuning files off) */
    CLT_TUNING_FILE = 1,    /**< a tuning file written by clt-tune */
    CLT_TUNING_IGNORED = 2  /**< a tuning file exists but was rejected: built-in tables, see reason */
} clt_tuning_source;

/** The tuning in force on a context (clt_context_get_tuning). */
typedef struct clt_tuning_info {
    clt_tuning_source source; /**< built-in tables, a tuning file, or a rejected file */
    char path[640];     /**< the tuning file looked for ($CLT_TUNING_FILE, else in the cache
                           directory); "" when tuning files are off */
    char written[64];   /**< FILE: when clt-tune wrote it */
    char reason[256];   /**< IGNORED: why it was rejected; BUILTIN: why there is no file */
    char builtin[32];   /**< the built-in table row of this device and profile ("nvidia") */
} clt_tuning_info;

/** The tuning in force on ctx (a context reads its device's tuning file once, when created; a
 *  corrupt or foreign file is ignored, never an error). CLT_ERR_INVALID_ARGUMENT for NULL. */
CLT_API clt_status clt_context_get_tuning(const clt_context *ctx, clt_tuning_info *info);

/* ------------------------------------------------------------ buffer pool */

/** Counters of a context's buffer pool (clt_pool_get_stats). */
typedef struct clt_pool_stats {
    uint64_t bytes_in_use;   /**< held by live tensors (rounded to size classes) */
    uint64_t bytes_cached;   /**< freed, kept for reuse */
    uint64_t peak_bytes_in_use; /**< the most bytes_in_use has been */
    uint64_t hits;           /**< allocations served from the cache */
    uint64_t misses;         /**< allocations that created a new device buffer */
    uint64_t limit;          /**< cap on in_use + cached, 0 = none */
} clt_pool_stats;

/** The pool's counters, copied into *stats. CLT_ERR_INVALID_ARGUMENT for NULL. Never blocks. */
CLT_API clt_status clt_pool_get_stats(const clt_context *ctx, clt_pool_stats *stats);
/** Release every cached (unused) device buffer. Buffers in use are untouched. Does not block.
 *  CLT_ERR_INVALID_ARGUMENT for NULL. */
CLT_API clt_status clt_pool_trim(clt_context *ctx);

/* ---------------------------------------------------------- program cache */

/** Counters of the program cache of a device (clt_program_cache_get_stats). */
typedef struct clt_program_cache_stats {
    uint64_t memory_hits;    /**< programs found already built in this process */
    uint64_t disk_loads;     /**< programs loaded from the on-disk binary cache */
    uint64_t source_builds;  /**< programs compiled from source */
    uint64_t disk_writes;    /**< binaries written to the disk cache */
    uint64_t disk_rejects;   /**< disk cache files ignored (corrupt, foreign, failed to load) */
    uint64_t disk_files;     /**< files now in the context's cache directory */
    uint64_t disk_bytes;     /**< their total size */
} clt_program_cache_stats;

/** Counters of the process-wide program cache of ctx's device (shared by all its contexts),
 *  copied into *stats. CLT_ERR_INVALID_ARGUMENT for NULL. Never blocks (lists the disk cache
 *  directory to count its files). */
CLT_API clt_status clt_program_cache_get_stats(const clt_context *ctx, clt_program_cache_stats *stats);

/* ---------------------------------------------------------------- tensors */

/** Create an uninitialised contiguous tensor. ndim 0..CLT_MAX_DIMS (0 = scalar); dims >= 0 (0 makes
 *  an empty tensor, which takes no pool memory: it succeeds even at the memory cap). Statuses:
 *  CLT_ERR_INVALID_ARGUMENT, CLT_ERR_INVALID_DTYPE, CLT_ERR_INVALID_SHAPE,
 *  CLT_ERR_SIZE_OVERFLOW, CLT_ERR_OUT_OF_DEVICE_MEMORY. The caller owns *out (clt_tensor_free; the
 *  context frees it otherwise). Does not block. */
CLT_API clt_status clt_tensor_create(clt_context *ctx, clt_dtype dtype, int ndim, const int64_t *shape,
                                     clt_tensor **out);
/** Create a tensor and copy `bytes` of host data into it (bytes must equal its size). Blocks only
 *  until the host data has been copied out of `data`. Statuses: those of clt_tensor_create, and
 *  CLT_ERR_INVALID_ARGUMENT when data is NULL (with bytes > 0) or bytes is not the tensor's size. */
CLT_API clt_status clt_tensor_create_from_host(clt_context *ctx, clt_dtype dtype, int ndim,
                                               const int64_t *shape, const void *data, size_t bytes,
                                               clt_tensor **out);
/** Release the tensor. Its memory returns to the pool once no view refers to it; work already
 *  enqueued on it still completes correctly. NULL is a no-op. Does not block. */
CLT_API void clt_tensor_free(clt_tensor *t);

/** Copy host data into t (bytes must equal clt_tensor_nbytes). Ordered after earlier ops on the
 *  queue; blocks until `data` may be reused (not for the device). CLT_ERR_INVALID_ARGUMENT for NULL
 *  or a wrong byte count. */
CLT_API clt_status clt_tensor_write(clt_tensor *t, const void *data, size_t bytes);
/** Blocking read of the whole tensor (bytes must equal clt_tensor_nbytes). Also reports execution
 *  errors of earlier work. Blocks until the data is in `data`. CLT_ERR_INVALID_ARGUMENT for NULL or
 *  a wrong byte count. */
CLT_API clt_status clt_tensor_read(const clt_tensor *t, void *data, size_t bytes);
/** Asynchronous read of elements [first, first+count) into library-owned pinned host memory.
 *  Returns at once; the future completes when the queue reaches the read. Small reads (a loss)
 *  use a ring of pinned slots, so reading a scalar every step never stalls the queue. Does not block.
 *  The caller owns *out (clt_future_free; the context frees it otherwise). Statuses:
 *  CLT_ERR_INVALID_ARGUMENT (NULL, or elements outside the tensor). */
CLT_API clt_status clt_tensor_read_async(const clt_tensor *t, int64_t first, int64_t count,
                                         clt_future **out);

/** CLT_SUCCESS if complete, CLT_ERR_NOT_READY if not yet, or the execution error. Never blocks.
 *  CLT_ERR_INVALID_ARGUMENT for NULL. */
CLT_API clt_status clt_future_poll(clt_future *f);
/** Block until complete; returns the execution status. CLT_ERR_INVALID_ARGUMENT for NULL. */
CLT_API clt_status clt_future_wait(clt_future *f);
/** The data of a complete future (waits first if needed): copies `bytes` (== count * element size)
 *  into dst. CLT_ERR_INVALID_ARGUMENT for NULL or a wrong byte count, or the execution error. */
CLT_API clt_status clt_future_get(clt_future *f, void *dst, size_t bytes);
/** Release a future (blocks until its read has finished if it is still in flight). NULL is a
 *  no-op. */
CLT_API void clt_future_free(clt_future *f);

/** Set every element to value (converted to t's dtype: rounded to nearest even for f16 and bf16, truncated toward
 *  zero and saturated for integers). Enqueued only. CLT_ERR_INVALID_ARGUMENT for NULL. */
CLT_API clt_status clt_tensor_fill(clt_tensor *t, double value);
/** Fill an f32 tensor with uniform random values in [lo, hi) from a counter-based generator:
 *  the same seed gives the same values on every device. Enqueued only. CLT_ERR_INVALID_ARGUMENT
 *  (NULL, lo >= hi or not finite), CLT_ERR_INVALID_DTYPE (not f32). */
CLT_API clt_status clt_tensor_fill_uniform(clt_tensor *t, uint64_t seed, float lo, float hi);
/** dst = src. Same dtype and element count (shapes may differ). dst may not partly overlap src
 *  (CLT_ERR_ALIASING); when both cover exactly the same memory (a tensor and its reshape view) the
 *  copy is the identity and nothing is enqueued. Different contexts: CLT_ERR_CONTEXT_MISMATCH.
 *  Other statuses: CLT_ERR_INVALID_DTYPE, CLT_ERR_INVALID_SHAPE (element counts differ). Enqueued
 *  only. */
CLT_API clt_status clt_tensor_copy(clt_tensor *dst, const clt_tensor *src);
/** A view of t with another shape and the same element count, sharing t's memory. One dim may be -1
 *  (inferred). The view stays valid after t is freed. The caller owns *out (clt_tensor_free).
 *  Statuses: CLT_ERR_INVALID_ARGUMENT (NULL), CLT_ERR_INVALID_SHAPE (another element count, bad
 *  ndim or dim). Enqueues nothing. */
CLT_API clt_status clt_tensor_reshape(const clt_tensor *t, int ndim, const int64_t *shape,
                                      clt_tensor **out);
/** A view of the contiguous elements [offset, offset + numel(shape)) of t (counted from t's own
 *  first element), with the given shape, sharing t's memory: e.g. every layer's weight and bias as
 *  views of one flat parameter tensor. The view stays valid after t is freed. Ops see views like any
 *  tensor; two views overlap (CLT_ERR_ALIASING where an op forbids it) only when their element
 *  ranges intersect. Statuses: CLT_ERR_INVALID_ARGUMENT (NULL t/out, shape NULL with ndim > 0,
 *  offset < 0), CLT_ERR_INVALID_SHAPE (ndim outside 0..CLT_MAX_DIMS, a negative dim, or the range
 *  past t's end), CLT_ERR_SIZE_OVERFLOW. The caller owns *out (clt_tensor_free). Enqueues nothing. */
CLT_API clt_status clt_tensor_view(const clt_tensor *t, int64_t offset, int ndim, const int64_t *shape,
                                   clt_tensor **out);

/** The context of t (not a new reference), or NULL for NULL. Never blocks. */
CLT_API clt_context *clt_tensor_context(const clt_tensor *t);
/** The element type of t, or 0 (no dtype) for NULL. Never blocks. */
CLT_API clt_dtype clt_tensor_dtype(const clt_tensor *t);
/** Number of dims, or -1 for NULL. */
CLT_API int clt_tensor_ndim(const clt_tensor *t);
/** Size of dim `axis` (negative counts from the end), or -1 when out of range. */
CLT_API int64_t clt_tensor_dim(const clt_tensor *t, int axis);
/** Copies the shape into shape[0..ndim-1]; returns ndim (or -1 for NULL). */
CLT_API int clt_tensor_shape(const clt_tensor *t, int64_t *shape);
/** Number of elements (1 for a scalar, 0 for an empty tensor or NULL). Never blocks. */
CLT_API int64_t clt_tensor_numel(const clt_tensor *t);
/** Size of the data in bytes (numel * element size), or 0 for NULL. Never blocks. */
CLT_API size_t clt_tensor_nbytes(const clt_tensor *t);

#ifdef __cplusplus
}
#endif

#endif /* CLTENSOR_H */
