/* The process-wide program cache of one device, shared by every context on it (owned by its
 * clt_device_state, guarded by ds->lock). A lookup tries memory, then the disk cache, then
 * compiles. Builds run under the lock on purpose: two contexts asking for the same program at once
 * must not both spend seconds compiling it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program/program.h"

/* Enough of a build log to diagnose; POCL can print megabytes of warnings. */
#define MAX_LOG_IN_MESSAGE (32 * 1024)

typedef struct program_entry {
    uint64_t hash;
    char *key; /* family \n full options \n source identity */
    cl_program program;
} program_entry;

struct clt_program_cache {
    program_entry *entries;
    size_t count, cap;
    clt_program_cache_stats stats; /* disk_files / disk_bytes are filled per context on request */
};

clt_status clt__program_cache_create(clt_device_state *ds, struct clt_program_cache **out)
{
    (void)ds;
    *out = calloc(1, sizeof **out);
    if (!*out)
        return clt__fail(NULL, CLT_ERR_OUT_OF_HOST_MEMORY, "program cache: out of host memory");
    return CLT_SUCCESS;
}

void clt__program_cache_destroy(struct clt_program_cache *pc)
{
    if (!pc)
        return;
    for (size_t i = 0; i < pc->count; i++) {
        clReleaseProgram(pc->entries[i].program);
        free(pc->entries[i].key);
    }
    free(pc->entries);
    free(pc);
}

void clt__program_cache_get_stats(clt_device_state *ds, clt_program_cache_stats *stats)
{
    memset(stats, 0, sizeof *stats);
    pthread_mutex_lock(&ds->lock);
    if (ds->programs)
        *stats = ds->programs->stats;
    pthread_mutex_unlock(&ds->lock);
}

clt_status clt_program_cache_get_stats(const clt_context *ctx, clt_program_cache_stats *stats)
{
    CLT_PUBLIC_CALL();
    if (!ctx)
        return clt__fail(NULL, CLT_ERR_INVALID_ARGUMENT,
                         "clt_program_cache_get_stats: ctx is NULL");
    if (!stats)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT,
                         "clt_program_cache_get_stats: stats is NULL");
    clt__program_cache_get_stats(ctx->dev, stats);
    clt__disk_cache_usage(ctx->limits.cache_dir, &stats->disk_files, &stats->disk_bytes);
    return CLT_SUCCESS;
}

static char *join3(const char *a, const char *b, const char *c)
{
    size_t na = strlen(a), nb = strlen(b), nc = strlen(c);
    char *s = malloc(na + nb + nc + 3);
    if (!s)
        return NULL;
    memcpy(s, a, na);
    s[na] = '\n';
    memcpy(s + na + 1, b, nb);
    s[na + 1 + nb] = '\n';
    memcpy(s + na + nb + 2, c, nc + 1);
    return s;
}

static program_entry *find(struct clt_program_cache *pc, const char *key, uint64_t hash)
{
    for (size_t i = 0; i < pc->count; i++)
        if (pc->entries[i].hash == hash && strcmp(pc->entries[i].key, key) == 0)
            return &pc->entries[i];
    return NULL;
}

static int insert(struct clt_program_cache *pc, char *key, uint64_t hash, cl_program program)
{
    if (pc->count == pc->cap) {
        size_t cap = pc->cap ? pc->cap * 2 : 16;
        program_entry *e = realloc(pc->entries, cap * sizeof *e);
        if (!e)
            return 0;
        pc->entries = e;
        pc->cap = cap;
    }
    pc->entries[pc->count++] = (program_entry){hash, key, program};
    return 1;
}

/* Creates (and drops) every kernel of program: drivers finish setting a program up (POCL reads
 * its kernel metadata) only then, so a program that passes this is one whose kernels can be made. */
static cl_int create_all_kernels(cl_program program)
{
    cl_uint n = 0;
    cl_int err = clCreateKernelsInProgram(program, 0, NULL, &n);
    if (err != CL_SUCCESS || n == 0)
        return err != CL_SUCCESS ? err : CL_INVALID_PROGRAM_EXECUTABLE;
    cl_kernel *kernels = calloc(n, sizeof *kernels);
    if (!kernels)
        return CL_OUT_OF_HOST_MEMORY;
    cl_uint got = 0;
    err = clCreateKernelsInProgram(program, n, kernels, &got);
    for (cl_uint i = 0; err == CL_SUCCESS && i < got; i++)
        clReleaseKernel(kernels[i]);
    free(kernels);
    return err;
}

/* Any failure here is silent: the caller compiles from source instead. An entry the driver
 * refuses is deleted, and one whose load never finished (it killed its process) is deleted by the
 * next process that finds its trial mark: a bad entry costs one rebuild, once. */
static cl_program load_from_disk(clt_device_state *ds, const char *dir, const clt_cache_key *key,
                                 const char *options)
{
    unsigned char *data;
    size_t size;
    int rejected;
    struct clt_program_cache *pc = ds->programs;
    if (!clt__disk_cache_load(dir, key, &data, &size, &rejected)) {
        if (rejected) {
            pc->stats.disk_rejects++;
            clt__disk_cache_discard(dir, key);
        }
        return NULL;
    }
    clt_trial trial = clt__disk_cache_trial_begin(dir, key);
    if (trial != CLT_TRIAL_STARTED) {
        free(data);
        pc->stats.disk_rejects += trial == CLT_TRIAL_STALE ? 1u : 0u;
        return NULL;
    }
    cl_device_id dev = ds->entry->device;
    cl_int err, bin_status = CL_SUCCESS;
    const unsigned char *bin = data;
    cl_program program =
        clCreateProgramWithBinary(ds->cl_ctx, 1, &dev, &size, &bin, &bin_status, &err);
    free(data);
    if (err == CL_SUCCESS && bin_status == CL_SUCCESS)
        err = clBuildProgram(program, 1, &dev, options, NULL, NULL);
    else if (err == CL_SUCCESS)
        err = bin_status;
    if (err == CL_SUCCESS)
        err = create_all_kernels(program);
    if (err != CL_SUCCESS) {
        clt__log("program cache: binary %s refused by the driver: %s; entry discarded", key->hex,
                 clt__cl_error_name(err));
        if (program)
            clReleaseProgram(program);
        clt__disk_cache_discard(dir, key);
        pc->stats.disk_rejects++;
        return NULL;
    }
    clt__disk_cache_trial_end(dir, key);
    pc->stats.disk_loads++;
    return program;
}

static clt_status build_from_source(clt_context *ctx, const char *family, const char *source,
                                    size_t length, const char *options, cl_program *out)
{
    clt_device_state *ds = ctx->dev;
    cl_device_id dev = ds->entry->device;
    cl_int err;
    *out = NULL;
    cl_program program = clCreateProgramWithSource(ds->cl_ctx, 1, &source, &length, &err);
    if (err != CL_SUCCESS)
        return clt__cl_fail(ctx, err, "clCreateProgramWithSource");
    int dropped = 0;
    if (clt__fixed_group_guarded(&ds->entry->info, source, length, options))
        err = clt__build_fixed_group(&program, ds->cl_ctx, dev, source, length, options, &dropped);
    else
        err = clBuildProgram(program, 1, &dev, options, NULL, NULL);
    if (dropped)
        clt__log("program cache: family '%s': ptxas spilled with reqd_work_group_size; kept the "
                 "build without it (-DCLT_REQD=0)", family);
    const char *sm90a_why = NULL;
    if (err == CL_SUCCESS && clt__sm90a_wanted(&ds->entry->info, source, length))
        err = clt__sm90a_rebuild(&program, ds->cl_ctx, dev, options, &sm90a_why);
    if (err == CL_BUILD_PROGRAM_FAILURE || err == CL_INVALID_BUILD_OPTIONS ||
        err == CL_COMPILER_NOT_AVAILABLE) {
        char *log = clt__program_build_log(program, dev);
        size_t n = log ? strlen(log) : 0;
        clt_status st = clt__fail(ctx, CLT_ERR_BUILD_FAILED,
                                  "building kernel family '%s' failed: %s (%d)%s%s\noptions: %s\n"
                                  "build log:\n%.*s%s",
                                  family, clt__cl_error_name(err), (int)err,
                                  sm90a_why ? "; sm_90a pass: " : "", sm90a_why ? sm90a_why : "", options,
                                  (int)(n > MAX_LOG_IN_MESSAGE ? MAX_LOG_IN_MESSAGE : n),
                                  log ? log : "(out of host memory)",
                                  n > MAX_LOG_IN_MESSAGE ? "\n[build log truncated]" : "");
        free(log);
        clReleaseProgram(program);
        return st;
    }
    if (err != CL_SUCCESS) {
        clReleaseProgram(program);
        char what[200];
        snprintf(what, sizeof what, "clBuildProgram (kernel family '%s')", family);
        return clt__cl_fail(ctx, err, what);
    }
    ds->programs->stats.source_builds++;
    *out = program;
    return CLT_SUCCESS;
}

unsigned char *clt__program_binary(cl_program program, cl_device_id dev, size_t *size)
{
    cl_uint n = 0;
    if (clGetProgramInfo(program, CL_PROGRAM_NUM_DEVICES, sizeof n, &n, NULL) != CL_SUCCESS ||
        n == 0)
        return NULL;
    cl_device_id *devs = calloc(n, sizeof *devs);
    size_t *sizes = calloc(n, sizeof *sizes);
    unsigned char **bins = calloc(n, sizeof *bins);
    unsigned char *result = NULL;
    cl_uint mine = n;
    if (devs && sizes && bins &&
        clGetProgramInfo(program, CL_PROGRAM_DEVICES, n * sizeof *devs, devs, NULL) == CL_SUCCESS &&
        clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, n * sizeof *sizes, sizes, NULL) ==
            CL_SUCCESS) {
        for (cl_uint i = 0; i < n; i++)
            if (devs[i] == dev)
                mine = i;
        if (mine < n && sizes[mine] > 0 && (bins[mine] = malloc(sizes[mine])) != NULL &&
            clGetProgramInfo(program, CL_PROGRAM_BINARIES, n * sizeof *bins, bins, NULL) ==
                CL_SUCCESS) {
            result = bins[mine];
            *size = sizes[mine];
            bins[mine] = NULL;
        }
    }
    if (bins && mine < n)
        free(bins[mine]);
    free(devs);
    free(sizes);
    free(bins);
    return result;
}

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Why a binary the driver just gave us must not be stored; NULL when it looks whole. POCL 3.x
 * serialises a program by reading the files of its own kernel cache directory back from disk and
 * ignores a failed read (serialize_file in pocl_binary.c): when program.bc there is missing or
 * unreadable at that moment (the directory is shared by every process and keyed by the build, so
 * another process building or cleaning the same program races with us), the binary comes without
 * program.bc (POCL 3.1: a zero record size, ~14 KB instead of ~50 KB), and loading it later aborts
 * the loading process (assert "len > 0" in pocl_binary_get_kernels_metadata). Reproduced by
 * deleting program.bc between clBuildProgram and CL_PROGRAM_BINARIES. The header layout varies
 * between POCL versions, but program.bc has come first after it since format 2, so the record is
 * found by its path: u32 11, "/program.bc", u32 content length (> 0). Other drivers' binaries are
 * only checked for size. */
const char *clt__binary_defect(const unsigned char *bin, size_t size)
{
    static const char record[] = "/program.bc";
    const size_t rlen = sizeof record - 1;
    if (size == 0)
        return "empty";
    if (size < 8 || memcmp(bin, "poclbin", 8) != 0)
        return NULL;
    if (size < 24 || le32(bin + 20) == 0)
        return "POCL binary without kernels";
    size_t limit = size < 512 ? size : 512; /* the record follows the header at once */
    for (size_t at = 24; at + 4 + rlen + 4 <= limit; at++) {
        if (le32(bin + at) != rlen || memcmp(bin + at + 4, record, rlen) != 0)
            continue;
        uint32_t len = le32(bin + at + 4 + rlen);
        if (len == 0)
            return "POCL binary with an empty program.bc";
        if (size - (at + 8 + rlen) < len)
            return "POCL binary with a truncated program.bc";
        return NULL;
    }
    return "POCL binary without program.bc";
}

static void store_to_disk(clt_device_state *ds, const char *dir, const clt_cache_key *key,
                          cl_program program)
{
    size_t size = 0;
    unsigned char *bin = clt__program_binary(program, ds->entry->device, &size);
    if (!bin) {
        clt__log("program cache: no binary available for %s", key->hex);
        return;
    }
    const char *defect = clt__binary_defect(bin, size);
    if (defect) {
        clt__log("program cache: not storing %s: %s", key->hex, defect);
        free(bin);
        return;
    }
    if (clt__disk_cache_store(dir, key, bin, size))
        ds->programs->stats.disk_writes++;
    free(bin);
}

/* Memory miss, under ds->lock: disk, else compile (and remember the binary on disk). */
static clt_status load_or_build(clt_context *ctx, const char *family, const char *source,
                                size_t length, const char *options, cl_program *out,
                                const char **how)
{
    clt_device_state *ds = ctx->dev;
    const char *dir = ctx->limits.cache_dir;
    clt_cache_key key = clt__cache_key(source, length, options, &ds->entry->info);
    if (*dir) {
        *out = load_from_disk(ds, dir, &key, options);
        *how = "loaded from the disk cache";
        if (*out)
            return CLT_SUCCESS;
    }
    *how = "compiled from source";
    clt_status st = build_from_source(ctx, family, source, length, options, out);
    /* Only a program whose kernels could all be created is worth remembering. */
    if (st == CLT_SUCCESS && *dir && create_all_kernels(*out) == CL_SUCCESS)
        store_to_disk(ds, dir, &key, *out);
    return st;
}

clt_status clt__program_get(clt_context *ctx, const char *family, const char *options,
                            cl_program *out)
{
    *out = NULL;
    if (!options)
        options = "";
    clt_device_state *ds = ctx->dev;
    const char *kernel_dir = ctx->limits.kernel_dir;
    const char *base = clt__base_build_options(ctx);
    size_t nb = strlen(base), no = strlen(options);
    char *full = malloc(nb + no + 2);
    if (!full)
        return clt__fail(ctx, CLT_ERR_OUT_OF_HOST_MEMORY, "program cache: out of host memory");
    memcpy(full, base, nb);
    full[nb] = no ? ' ' : '\0';
    memcpy(full + nb + 1, options, no + 1);

    /* Embedded sources cannot change while the process runs; files in kernel_dir can, so then the
     * source itself (its hash) is part of what identifies the program. */
    char *source = NULL;
    size_t length = 0;
    char identity[40] = "embedded";
    clt_status st = CLT_SUCCESS;
    if (*kernel_dir) {
        st = clt__kernel_source(ctx, family, kernel_dir, &source, &length);
        if (st == CLT_SUCCESS)
            snprintf(identity, sizeof identity, "disk %016llx",
                     (unsigned long long)clt__hash64(source, length, 0x6b65726e656cull));
    }
    char *key = st == CLT_SUCCESS ? join3(family, full, identity) : NULL;
    if (st == CLT_SUCCESS && !key)
        st = clt__fail(ctx, CLT_ERR_OUT_OF_HOST_MEMORY, "program cache: out of host memory");
    if (st != CLT_SUCCESS) {
        free(full);
        free(source);
        return st;
    }
    uint64_t hash = clt__hash64(key, strlen(key), 0);

    const char *how = "found in memory";
    pthread_mutex_lock(&ds->lock);
    struct clt_program_cache *pc = ds->programs;
    program_entry *hit = find(pc, key, hash);
    if (hit) {
        pc->stats.memory_hits++;
        *out = hit->program;
    } else {
        if (!source)
            st = clt__kernel_source(ctx, family, "", &source, &length);
        if (st == CLT_SUCCESS)
            st = load_or_build(ctx, family, source, length, full, out, &how);
        if (st == CLT_SUCCESS && !insert(pc, key, hash, *out)) {
            clReleaseProgram(*out);
            *out = NULL;
            st = clt__fail(ctx, CLT_ERR_OUT_OF_HOST_MEMORY, "program cache: out of host memory");
        } else if (st == CLT_SUCCESS) {
            key = NULL; /* owned by the entry now */
        }
    }
    pthread_mutex_unlock(&ds->lock);
    if (st == CLT_SUCCESS)
        clt__log("program cache: family '%s' options '%s': %s", family, full, how);
    free(key);
    free(full);
    free(source);
    return st;
}

clt_status clt__program_get_source(clt_context *ctx, const char *name, const char *source,
                                   const char *options, cl_program *out)
{
    *out = NULL;
    if (!options)
        options = "";
    clt_device_state *ds = ctx->dev;
    const char *base = clt__base_build_options(ctx);
    size_t nb = strlen(base), no = strlen(options), length = strlen(source);
    char *full = malloc(nb + no + 2);
    if (!full)
        return clt__fail(ctx, CLT_ERR_OUT_OF_HOST_MEMORY, "program cache: out of host memory");
    memcpy(full, base, nb);
    full[nb] = no ? ' ' : '\0';
    memcpy(full + nb + 1, options, no + 1);

    /* Generated sources are identified by content: two 64-bit hashes and the length make an
     * accidental collision negligible; the "generated" tag keeps them apart from family keys. */
    char identity[80];
    snprintf(identity, sizeof identity, "generated %016llx%016llx %zu",
             (unsigned long long)clt__hash64(source, length, 0x67656e31ull),
             (unsigned long long)clt__hash64(source, length, 0x67656e32ull), length);
    char *key = join3("", full, identity);
    if (!key) {
        free(full);
        return clt__fail(ctx, CLT_ERR_OUT_OF_HOST_MEMORY, "program cache: out of host memory");
    }
    uint64_t hash = clt__hash64(key, strlen(key), 0);

    clt_status st = CLT_SUCCESS;
    const char *how = "found in memory";
    pthread_mutex_lock(&ds->lock);
    struct clt_program_cache *pc = ds->programs;
    program_entry *hit = find(pc, key, hash);
    if (hit) {
        pc->stats.memory_hits++;
        *out = hit->program;
    } else {
        st = load_or_build(ctx, name, source, length, full, out, &how);
        if (st == CLT_SUCCESS && !insert(pc, key, hash, *out)) {
            clReleaseProgram(*out);
            *out = NULL;
            st = clt__fail(ctx, CLT_ERR_OUT_OF_HOST_MEMORY, "program cache: out of host memory");
        } else if (st == CLT_SUCCESS) {
            key = NULL;
        }
    }
    pthread_mutex_unlock(&ds->lock);
    if (st == CLT_SUCCESS)
        clt__log("program cache: generated '%s' options '%s': %s", name, full, how);
    free(key);
    free(full);
    return st;
}
