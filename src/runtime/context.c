/* Contexts: option resolution (options, then environment, then defaults), creation and teardown,
 * and the few blocking calls that are not transfers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memory/memory.h"
#include "profile/profile.h"
#include "program/program.h"
#include "runtime/runtime.h"
#include "tensor/tensor.h"
#include "tune/tuning_file.h"
#include "ops/fft/fft_cache.h"

const char *clt_version_string(void) { return CLT_VERSION_STRING; }

void clt_version(int *major, int *minor, int *patch)
{
    if (major)
        *major = CLT_VERSION_MAJOR;
    if (minor)
        *minor = CLT_VERSION_MINOR;
    if (patch)
        *patch = CLT_VERSION_PATCH;
}

void clt_context_options_init(clt_context_options *opts)
{
    if (opts)
        memset(opts, 0, sizeof *opts);
}

int clt__parse_bytes(const char *text, uint64_t *bytes)
{
    if (!text || !*text)
        return -1;
    uint64_t v = 0;
    const char *p = text;
    if (*p < '0' || *p > '9')
        return -1;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > (UINT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    unsigned shift = 0;
    switch (*p) {
    case '\0': break;
    case 'k': case 'K': shift = 10; p++; break;
    case 'm': case 'M': shift = 20; p++; break;
    case 'g': case 'G': shift = 30; p++; break;
    case 't': case 'T': shift = 40; p++; break;
    default: return -1;
    }
    if (*p == 'i' || *p == 'B' || *p == 'b') { /* accept "MiB", "MB", "M" alike: powers of 1024 */
        if (*p == 'i')
            p++;
        if (*p == 'B' || *p == 'b')
            p++;
    }
    if (*p != '\0' || (shift && v > (UINT64_MAX >> shift)))
        return -1;
    *bytes = v << shift;
    return 0;
}

static const char *env_or(const char *option, const char *env_name)
{
    if (option)
        return option;
    const char *v = getenv(env_name);
    return v && *v ? v : NULL;
}

/* An implementation choice (option, else environment, else "auto") into out[16]. */
static clt_status pick_impl(const char *option, const char *env_name, const char *what,
                            const char *who, char *out)
{
    const char *v = env_or(option, env_name);
    if (v && strcmp(v, "auto") && strcmp(v, "tiled") && strcmp(v, "clblast"))
        return clt__fail(NULL, CLT_ERR_INVALID_ARGUMENT,
                         "%s: %s implementation \"%s\" is not tiled, clblast or auto", who, what, v);
    snprintf(out, 16, "%s", v ? v : "auto");
    return CLT_SUCCESS;
}

static clt_status pick_profiler(int option, const char *who, int *out)
{
    if (option != 0) {
        *out = option > 0;
        return CLT_SUCCESS;
    }
    const char *v = getenv("CLT_PROFILE");
    if (!v || !*v || strcmp(v, "0") == 0) {
        *out = 0;
        return CLT_SUCCESS;
    }
    if (strcmp(v, "1"))
        return clt__fail(NULL, CLT_ERR_INVALID_ARGUMENT, "%s: CLT_PROFILE=\"%s\" is not 0 or 1", who, v);
    *out = 1;
    return CLT_SUCCESS;
}

const char *clt_math_mode_name(clt_math_mode mode)
{
    switch (mode) {
    case CLT_MATH_DEFAULT: return "default";
    case CLT_MATH_FP32: return "fp32";
    case CLT_MATH_TF32: return "tf32";
    case CLT_MATH_FP32_3XTF32: return "3xtf32";
    }
    return "unknown";
}

/* The context's math mode: the option, else $CLT_MATH, else fp32. */
static clt_status pick_math(clt_math_mode option, const char *who, clt_math_mode *out)
{
    if (option != CLT_MATH_DEFAULT) {
        if (option != CLT_MATH_FP32 && option != CLT_MATH_TF32 && option != CLT_MATH_FP32_3XTF32)
            return clt__fail(NULL, CLT_ERR_INVALID_ARGUMENT, "%s: math mode %d is not a clt_math_mode",
                             who, (int)option);
        *out = option;
        return CLT_SUCCESS;
    }
    const char *v = getenv("CLT_MATH");
    *out = CLT_MATH_FP32;
    if (!v || !*v || strcmp(v, "fp32") == 0)
        return CLT_SUCCESS;
    if (strcmp(v, "tf32") == 0)
        *out = CLT_MATH_TF32;
    else if (strcmp(v, "3xtf32") == 0)
        *out = CLT_MATH_FP32_3XTF32;
    else
        return clt__fail(NULL, CLT_ERR_INVALID_ARGUMENT,
                         "%s: CLT_MATH=\"%s\" is not fp32, tf32 or 3xtf32", who, v);
    return CLT_SUCCESS;
}

clt_status clt_context_set_math_mode(clt_context *ctx, clt_math_mode mode)
{
    CLT_PUBLIC_CALL();
    if (!ctx)
        return clt__fail(NULL, CLT_ERR_INVALID_ARGUMENT, "clt_context_set_math_mode: ctx is NULL");
    if (mode != CLT_MATH_DEFAULT && mode != CLT_MATH_FP32 && mode != CLT_MATH_TF32 &&
        mode != CLT_MATH_FP32_3XTF32)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT,
                         "clt_context_set_math_mode: math mode %d is not a clt_math_mode", (int)mode);
    ctx->math = mode == CLT_MATH_DEFAULT ? ctx->limits.math : mode;
    return CLT_SUCCESS;
}

clt_status clt_context_get_math_mode(const clt_context *ctx, clt_math_mode *mode)
{
    CLT_PUBLIC_CALL();
    if (!ctx || !mode)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "clt_context_get_math_mode: %s is NULL",
                         ctx ? "mode" : "ctx");
    *mode = ctx->math;
    return CLT_SUCCESS;
}

static void resolve_cache_dir(const char *option, char *out, size_t size)
{
    const char *dir = env_or(option, "CLT_CACHE_DIR");
    out[0] = '\0';
    if (dir) {
        if (strcmp(dir, "off") != 0)
            snprintf(out, size, "%s", dir);
        return;
    }
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    if (xdg && *xdg)
        snprintf(out, size, "%s/cltensor", xdg);
    else if (home && *home)
        snprintf(out, size, "%s/.cache/cltensor", home);
}

void clt__context_destroy(clt_context *ctx)
{
    if (ctx->queue)
        clFinish(ctx->queue);
    clt__prof_destroy(ctx);
    clt__tensor_release_all(ctx);
    clt__fft_cache_destroy(ctx);
    clt__workspace_release_all(ctx);
    if (ctx->transfer)
        clt__transfer_destroy(ctx, ctx->transfer);
    if (ctx->kernels)
        clt__kernel_map_destroy(ctx->kernels);
    if (ctx->pool)
        clt__pool_destroy(ctx->pool);
    if (ctx->queue) /* ours, or our reference on an adopted queue */
        clReleaseCommandQueue(ctx->queue);
    if (ctx->dev)
        clt__device_state_release(ctx->dev);
    clt__tuning_free(ctx->tuning);
    free(ctx->error);
    free(ctx);
}

/* A failure during creation: move the message to the thread slot (the context is going away). */
static clt_status creation_failed(clt_context *ctx, clt_status st, const char *who)
{
    if (ctx->error && ctx->error[0])
        clt__fail(NULL, st, "%s: %s", who, ctx->error);
    clt__context_destroy(ctx);
    return st;
}

clt_status clt__context_resolve_options(const clt_context_options *opts, int global_index,
                                        const char *who, clt_context_limits *limits)
{
    clt_context_options defaults;
    clt_context_options_init(&defaults);
    if (!opts)
        opts = &defaults;
    uint64_t limit = opts->memory_limit;
    if (limit == 0) {
        const char *env = getenv("CLT_MEMORY_LIMIT");
        if (env && *env && clt__parse_bytes(env, &limit) != 0)
            return clt__fail(NULL, CLT_ERR_INVALID_ARGUMENT,
                             "%s: CLT_MEMORY_LIMIT=\"%s\" is not a byte count "
                             "(expected e.g. 1048576, 512M, 2G)", who, env);
    }
    const clt_device_entry *list;
    int n;
    clt_status st = clt__device_list(&list, &n);
    if (st != CLT_SUCCESS)
        return st;
    memset(limits, 0, sizeof *limits);
    st = clt__profile_limits(&list[global_index].info, env_or(opts->profile, "CLT_DEVICE_PROFILE"),
                             limits);
    if (st != CLT_SUCCESS) /* the profile layer does not know which public call asked */
        return st;
    limits->memory_limit = limit;
    const char *kdir = env_or(opts->kernel_dir, "CLT_KERNEL_DIR");
    snprintf(limits->kernel_dir, sizeof limits->kernel_dir, "%s", kdir ? kdir : "");
    resolve_cache_dir(opts->cache_dir, limits->cache_dir, sizeof limits->cache_dir);
    if ((st = pick_impl(opts->gemm_impl, "CLT_GEMM_IMPL", "GEMM", who, limits->gemm_impl)) ||
        (st = pick_impl(opts->conv_impl, "CLT_CONV_IMPL", "Conv2D", who, limits->conv_impl)) ||
        (st = pick_profiler(opts->profiler, who, &limits->profiler)) ||
        (st = pick_math(opts->math, who, &limits->math)))
        return st;
    return CLT_SUCCESS;
}

clt_status clt__context_start(clt_context *ctx, const char *who)
{
    clt_status st;
    ctx->math = ctx->limits.math;
    if ((st = clt__pool_create(ctx, ctx->limits.memory_limit, &ctx->pool)) != CLT_SUCCESS ||
        (st = clt__transfer_create(ctx, &ctx->transfer)) != CLT_SUCCESS ||
        (st = clt__kernel_map_create(&ctx->kernels)) != CLT_SUCCESS ||
        (ctx->limits.profiler && (st = clt__prof_create(ctx)) != CLT_SUCCESS))
        return creation_failed(ctx, st, who);
    if (clt__tuning_load(ctx) != 0) /* a missing or bad tuning file is not an error: no file */
        return creation_failed(ctx, clt__fail(ctx, CLT_ERR_OUT_OF_HOST_MEMORY,
                                              "out of host memory (tuning)"), who);
    clt__log("context on device %d (%s), profile %s, cache %s%s", ctx->dev->global_index,
             ctx->dev->entry->info.device_name, ctx->limits.profile,
             ctx->limits.cache_dir[0] ? ctx->limits.cache_dir : "off",
             ctx->dev->is_adopted ? ", application's cl_context and queue" : "");
    return CLT_SUCCESS;
}

clt_status clt_context_create(const clt_context_options *opts, clt_context **out)
{
    CLT_PUBLIC_CALL();
    static const char who[] = "clt_context_create";
    if (!out)
        return clt__fail(NULL, CLT_ERR_INVALID_ARGUMENT, "clt_context_create: out is NULL");
    *out = NULL;
    int index;
    clt_status st = clt__device_resolve(opts ? opts->device : NULL, &index);
    if (st != CLT_SUCCESS) /* the device layer does not know which public call asked */
        return st;
    clt_context_limits limits;
    if ((st = clt__context_resolve_options(opts, index, who, &limits)) != CLT_SUCCESS)
        return st;

    clt_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return clt__fail(NULL, CLT_ERR_OUT_OF_HOST_MEMORY, "clt_context_create: out of host memory");
    ctx->limits = limits;
    st = clt__device_state_acquire(index, &ctx->dev);
    if (st != CLT_SUCCESS) {
        free(ctx);
        return st;
    }
    cl_int err;
    ctx->queue = clCreateCommandQueue(ctx->dev->cl_ctx, ctx->dev->entry->device,
                                      limits.profiler ? CL_QUEUE_PROFILING_ENABLE : 0, &err);
    if (err != CL_SUCCESS) {
        ctx->queue = NULL;
        return creation_failed(ctx, clt__cl_fail(ctx, err, "clCreateCommandQueue"), who);
    }
    if ((st = clt__context_start(ctx, who)) != CLT_SUCCESS)
        return st;
    *out = ctx;
    return CLT_SUCCESS;
}

void clt_context_free(clt_context *ctx)
{
    if (ctx)
        clt__context_destroy(ctx);
}

clt_status clt_finish(clt_context *ctx)
{
    CLT_PUBLIC_CALL();
    if (!ctx)
        return clt__fail(NULL, CLT_ERR_INVALID_ARGUMENT, "clt_finish: ctx is NULL");
    cl_int err = clFinish(ctx->queue);
    return err == CL_SUCCESS ? CLT_SUCCESS : clt__cl_fail(ctx, err, "clt_finish: clFinish");
}

clt_status clt_flush(clt_context *ctx)
{
    CLT_PUBLIC_CALL();
    if (!ctx)
        return clt__fail(NULL, CLT_ERR_INVALID_ARGUMENT, "clt_flush: ctx is NULL");
    cl_int err = clFlush(ctx->queue);
    return err == CL_SUCCESS ? CLT_SUCCESS : clt__cl_fail(ctx, err, "clt_flush: clFlush");
}

clt_status clt_context_device_info(const clt_context *ctx, clt_device_info *info)
{
    CLT_PUBLIC_CALL();
    if (!ctx || !info)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "clt_context_device_info: %s is NULL",
                         ctx ? "info" : "ctx");
    *info = ctx->dev->entry->info;
    return CLT_SUCCESS;
}

clt_status clt_context_get_limits(const clt_context *ctx, clt_context_limits *limits)
{
    CLT_PUBLIC_CALL();
    if (!ctx || !limits)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "clt_context_get_limits: %s is NULL",
                         ctx ? "limits" : "ctx");
    *limits = ctx->limits;
    return CLT_SUCCESS;
}
