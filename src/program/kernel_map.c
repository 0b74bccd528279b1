/* Each context's cl_kernel objects, one per (family, options, kernel name). cl_kernel holds
 * argument state, so kernels are per context even though programs are shared per device. Ops look a
 * kernel up on every launch: a hit is one hash and three string compares, no lock, no allocation.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program/program.h"

typedef struct kernel_entry {
    struct kernel_entry *next;
    uint64_t hash;
    const char *family, *options, *name; /* point into text */
    cl_kernel kernel;
    char text[]; /* family \0 options \0 name \0 */
} kernel_entry;

struct clt_kernel_map {
    kernel_entry **buckets;
    size_t n_buckets; /* power of two */
    size_t count;
    char base_options[256]; /* clt__base_build_options of the owning context, "" until asked */
};

clt_status clt__kernel_map_create(struct clt_kernel_map **out)
{
    struct clt_kernel_map *km = calloc(1, sizeof *km);
    if (km) {
        km->n_buckets = 64;
        km->buckets = calloc(km->n_buckets, sizeof *km->buckets);
    }
    if (!km || !km->buckets) {
        free(km);
        *out = NULL;
        return clt__fail(NULL, CLT_ERR_OUT_OF_HOST_MEMORY, "kernel map: out of host memory");
    }
    *out = km;
    return CLT_SUCCESS;
}

void clt__kernel_map_destroy(struct clt_kernel_map *km)
{
    if (!km)
        return;
    for (size_t b = 0; b < km->n_buckets; b++) {
        kernel_entry *e = km->buckets[b];
        while (e) {
            kernel_entry *next = e->next;
            clReleaseKernel(e->kernel);
            free(e);
            e = next;
        }
    }
    free(km->buckets);
    free(km);
}

static uint64_t key_hash(const char *family, const char *options, const char *name)
{
    /* Byte-wise FNV-1a with a separator, cheap for the short strings ops pass. */
    uint64_t h = 0xcbf29ce484222325ull;
    const char *parts[3] = {family, options, name};
    for (int i = 0; i < 3; i++) {
        for (const unsigned char *p = (const unsigned char *)parts[i]; *p; p++)
            h = (h ^ *p) * 0x100000001b3ull;
        h = (h ^ 0xff) * 0x100000001b3ull;
    }
    return h;
}

static void grow(struct clt_kernel_map *km)
{
    size_t n = km->n_buckets * 2;
    kernel_entry **buckets = calloc(n, sizeof *buckets);
    if (!buckets)
        return; /* longer chains, still correct */
    for (size_t b = 0; b < km->n_buckets; b++) {
        kernel_entry *e = km->buckets[b];
        while (e) {
            kernel_entry *next = e->next;
            size_t i = (size_t)e->hash & (n - 1);
            e->next = buckets[i];
            buckets[i] = e;
            e = next;
        }
    }
    free(km->buckets);
    km->buckets = buckets;
    km->n_buckets = n;
}

static clt_status add_entry(clt_context *ctx, uint64_t hash, const char *family,
                            const char *options, const char *name, cl_kernel kernel)
{
    struct clt_kernel_map *km = ctx->kernels;
    size_t nf = strlen(family) + 1, no = strlen(options) + 1, nn = strlen(name) + 1;
    kernel_entry *e = malloc(sizeof *e + nf + no + nn);
    if (!e)
        return clt__fail(ctx, CLT_ERR_OUT_OF_HOST_MEMORY, "kernel map: out of host memory");
    memcpy(e->text, family, nf);
    memcpy(e->text + nf, options, no);
    memcpy(e->text + nf + no, name, nn);
    e->family = e->text;
    e->options = e->text + nf;
    e->name = e->text + nf + no;
    e->hash = hash;
    e->kernel = kernel;
    if (km->count + 1 > km->n_buckets)
        grow(km);
    size_t i = (size_t)hash & (km->n_buckets - 1);
    e->next = km->buckets[i];
    km->buckets[i] = e;
    km->count++;
    return CLT_SUCCESS;
}

clt_status clt__kernel_get(clt_context *ctx, const char *family, const char *options,
                           const char *name, cl_kernel *out)
{
    *out = NULL;
    if (!options)
        options = "";
    if (!family || !name)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT,
                         "kernel lookup: family and name are required");
    struct clt_kernel_map *km = ctx->kernels;
    uint64_t hash = key_hash(family, options, name);
    for (kernel_entry *e = km->buckets[(size_t)hash & (km->n_buckets - 1)]; e; e = e->next) {
        if (e->hash == hash && strcmp(e->name, name) == 0 && strcmp(e->options, options) == 0 &&
            strcmp(e->family, family) == 0) {
            *out = e->kernel;
            return CLT_SUCCESS;
        }
    }

    cl_program program;
    clt_status st = clt__program_get(ctx, family, options, &program);
    if (st != CLT_SUCCESS)
        return st;
    cl_int err;
    cl_kernel kernel = clCreateKernel(program, name, &err);
    if (err == CL_INVALID_KERNEL_NAME)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT,
                         "clCreateKernel: no kernel named '%s' in family '%s' (options '%s'): "
                         "CL_INVALID_KERNEL_NAME",
                         name, family, options);
    if (err != CL_SUCCESS) {
        char what[256];
        snprintf(what, sizeof what, "clCreateKernel('%s', family '%s')", name, family);
        return clt__cl_fail(ctx, err, what);
    }
    st = add_entry(ctx, hash, family, options, name, kernel);
    if (st != CLT_SUCCESS) {
        clReleaseKernel(kernel);
        return st;
    }
    *out = kernel;
    return CLT_SUCCESS;
}

static kernel_entry *lookup(struct clt_kernel_map *km, uint64_t hash, const char *family,
                           const char *options, const char *name)
{
    for (kernel_entry *e = km->buckets[(size_t)hash & (km->n_buckets - 1)]; e; e = e->next)
        if (e->hash == hash && strcmp(e->name, name) == 0 && strcmp(e->options, options) == 0 &&
            strcmp(e->family, family) == 0)
            return e;
    return NULL;
}

cl_kernel clt__kernel_find(clt_context *ctx, const char *key, const char *options, const char *name)
{
    if (!options)
        options = "";
    kernel_entry *e = lookup(ctx->kernels, key_hash(key, options, name), key, options, name);
    return e ? e->kernel : NULL;
}

clt_status clt__kernel_get_source(clt_context *ctx, const char *key, const char *source,
                                  const char *options, const char *name, cl_kernel *out)
{
    *out = NULL;
    if (!options)
        options = "";
    uint64_t hash = key_hash(key, options, name);
    kernel_entry *e = lookup(ctx->kernels, hash, key, options, name);
    if (e) {
        *out = e->kernel;
        return CLT_SUCCESS;
    }
    cl_program program;
    clt_status st = clt__program_get_source(ctx, "generated", source, options, &program);
    if (st != CLT_SUCCESS)
        return st;
    cl_int err;
    cl_kernel kernel = clCreateKernel(program, name, &err);
    if (err != CL_SUCCESS) {
        char what[256];
        snprintf(what, sizeof what, "clCreateKernel('%s', generated source)", name);
        return clt__cl_fail(ctx, err, what);
    }
    st = add_entry(ctx, hash, key, options, name, kernel);
    if (st != CLT_SUCCESS) {
        clReleaseKernel(kernel);
        return st;
    }
    *out = kernel;
    return CLT_SUCCESS;
}

static void format_base_options(const clt_context *ctx, char *buf, size_t cap)
{
    /* Everything here changes generated code, and it is part of every program's cache key: a
     * gfx902-profile context gets programs of its own. */
    snprintf(buf, cap, "-cl-std=CL1.2 -DCLT_WAVE=%u -DCLT_MAX_WG=%llu -DCLT_LOCAL_MEM=%llu",
             (unsigned)ctx->limits.wave_width, (unsigned long long)ctx->limits.max_work_group_size,
             (unsigned long long)ctx->limits.local_mem_budget);
}

const char *clt__fixed_group_option(const clt_context *ctx)
{
    /* CLT_NV_REQD=0 (experiment switch for A/B runs): drop the attribute on NVIDIA everywhere */
    const char *drop = getenv("CLT_NV_REQD");
    if (drop && !strcmp(drop, "0") && ctx->dev->entry->info.vendor == CLT_VENDOR_NVIDIA)
        return " -DCLT_REQD=0";
    return "";
}

const char *clt__base_build_options(const clt_context *ctx)
{
    if (ctx->kernels) {
        if (!ctx->kernels->base_options[0])
            format_base_options(ctx, ctx->kernels->base_options, sizeof ctx->kernels->base_options);
        return ctx->kernels->base_options;
    }
    static _Thread_local char fallback[256];
    format_base_options(ctx, fallback, sizeof fallback);
    return fallback;
}
