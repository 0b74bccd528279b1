/* clt-kernels: the kernel variants the dispatch tables select, for checks outside the library.
 *   --list     every (program, options) pair a profile selects (the AMD ISA check compiles them:
 *              tests/isa/amd_isa_check.sh), with --dump DIR their full sources as DIR/<i>.cl
 *   --nv-report  builds every variant the current device's tables select with -cl-nv-verbose and
 *              prints registers / spills / shared memory from the NVIDIA driver's build log
 * Links the static library: it reads the families' internal tables. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cltensor_all.h"
#include "program/program.h"
#include "tools/kernel_variants.h"

/* ISA targets: the limits the library plans with there (wave, work-group cap, LDS). gfx902 is the
 * library's device profile; gfx90a and gfx1030 (wave 32) reuse its tables with their own wave. */
typedef struct isa_target {
    const char *name;
    unsigned wave;
} isa_target;
static const isa_target targets[] = {{"gfx902", 64}, {"gfx90a", 64}, {"gfx1030", 32}};
#define AMD_MAX_WG 256      /* ROCm's default CL_KERNEL_WORK_GROUP_SIZE without reqd_work_group_size */
#define AMD_LDS_BYTES 65536 /* per work-group, all three targets */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: clt-kernels --list [--profile gfx902|gfx90a|gfx1030|native] [--dump DIR]\n"
            "                   [--device SEL]\n"
            "       clt-kernels --nv-report [--device SEL] [--program NAME] [--shard I/N]\n"
            "  --list       one line per distinct (program, options) pair the profile's tables can\n"
            "               select, tab-separated: <index> <selected|compile-only> <program>\n"
            "               <launch work-group or 0> <full build options>; AMD profiles also list the\n"
            "               CPU-class variants as compile-only (they must still build)\n"
            "  --dump DIR   also write each variant's full source (includes inlined) as DIR/<index>.cl\n"
            "  --nv-report  build every variant the device's own tables select with -cl-nv-verbose and\n"
            "               print the NVIDIA build log (registers, spills, shared memory); --program\n"
            "               gemm_tiled (etc.) builds only that program's variants; --shard I/N only\n"
            "               the variants whose index is I modulo N (N processes build in parallel)\n"
            "exit status: 0 ok, 1 failure, 2 usage\n");
}

static const isa_target *target_named(const char *name)
{
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++)
        if (!strcmp(targets[i].name, name))
            return &targets[i];
    return NULL;
}

static clt_status open_context(const char *device, const isa_target *t, clt_context **ctx)
{
    clt_context_options o;
    clt_context_options_init(&o);
    o.device = device;
    o.profile = t ? "gfx902" : "native";
    o.cache_dir = "off";
    clt_status st = clt_context_create(&o, ctx);
    if (st != CLT_SUCCESS) {
        fprintf(stderr, "clt-kernels: %s\n", clt_last_error(NULL));
        return st;
    }
    if (t) { /* the target's limits, whatever the local device has (nothing is run here) */
        (*ctx)->limits.wave_width = t->wave;
        (*ctx)->limits.max_work_group_size = AMD_MAX_WG;
        (*ctx)->limits.local_mem_budget = AMD_LDS_BYTES;
        char want[32];
        snprintf(want, sizeof want, "-DCLT_WAVE=%u ", t->wave);
        if (!strstr(clt__base_build_options(*ctx), want)) {
            fprintf(stderr, "clt-kernels: base options fixed before the target's limits: %s\n",
                    clt__base_build_options(*ctx));
            return CLT_ERR_UNSUPPORTED;
        }
    }
    return CLT_SUCCESS;
}

static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    size_t n = strlen(text);
    int bad = fwrite(text, 1, n, f) != n;
    return fclose(f) != 0 || bad ? -1 : 0;
}

static int list_variants(const char *device, const char *profile, const char *dump)
{
    const isa_target *t = NULL;
    if (strcmp(profile, "native") != 0 && !(t = target_named(profile))) {
        fprintf(stderr, "clt-kernels: unknown profile \"%s\"\n", profile);
        return 2;
    }
    if (dump && mkdir(dump, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "clt-kernels: mkdir %s: %s\n", dump, strerror(errno));
        return 1;
    }
    clt_context *ctx;
    if (open_context(device, t, &ctx) != CLT_SUCCESS)
        return 1;
    clt__variant_list l;
    clt_status st = clt__list_variants(ctx, t != NULL, &l);
    if (st != CLT_SUCCESS) {
        fprintf(stderr, "clt-kernels: listing variants: %s\n", clt_last_error(ctx));
        clt_context_free(ctx);
        return 1;
    }
    const char *base = clt__base_build_options(ctx);
    int rc = 0;
    for (int i = 0; i < l.n && !rc; i++) {
        const clt__variant *v = &l.v[i];
        printf("%d\t%s\t%s\t%d\t%s%s%s\n", i,
               v->use == CLT__VARIANT_SELECTED ? "selected" : "compile-only", v->program,
               v->launch_wg, base, *v->options ? " " : "", v->options);
        if (!dump)
            continue;
        char *src = NULL, path[4096];
        if (clt__variant_source(ctx, v, &src) != CLT_SUCCESS) {
            fprintf(stderr, "clt-kernels: source of %s: %s\n", v->program, clt_last_error(ctx));
            rc = 1;
            break;
        }
        snprintf(path, sizeof path, "%s/%d.cl", dump, i);
        if (write_file(path, src) != 0) {
            fprintf(stderr, "clt-kernels: writing %s failed\n", path);
            rc = 1;
        }
        free(src);
    }
    clt__variant_list_free(&l);
    clt_context_free(ctx);
    return rc;
}

/* Prints the lines of an NVIDIA build log that carry resources (ptxas info: registers, spill
 * stores/loads, shared memory) after a header naming the variant. */
static int nv_build(clt_context *ctx, const clt__variant *v, int index)
{
    char *src = NULL;
    if (clt__variant_source(ctx, v, &src) != CLT_SUCCESS) {
        fprintf(stderr, "clt-kernels: source of %s: %s\n", v->program, clt_last_error(ctx));
        return 1;
    }
    const char *base = clt__base_build_options(ctx);
    size_t cap = strlen(base) + strlen(v->options) + 32;
    char *opts = malloc(cap);
    cl_int err = opts ? CL_SUCCESS : CL_OUT_OF_HOST_MEMORY;
    cl_device_id dev = ctx->dev->entry->device;
    cl_program prog = NULL;
    if (opts) {
        snprintf(opts, cap, "%s %s -cl-nv-verbose", base, v->options);
        const char *s = src;
        prog = clCreateProgramWithSource(ctx->dev->cl_ctx, 1, &s, NULL, &err);
    }
    cl_int built = prog ? clBuildProgram(prog, 1, &dev, opts, NULL, NULL) : err;
    size_t n = 0;
    char *log = NULL;
    if (prog && clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &n) == CL_SUCCESS &&
        (log = malloc(n + 1)) != NULL &&
        clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, n, log, NULL) == CL_SUCCESS)
        log[n] = '\0';
    printf("== %d %s %s%s\n", index, v->program, v->options, built == CL_SUCCESS ? "" : "  BUILD FAILED");
    for (char *line = log ? strtok(log, "\n") : NULL; line; line = strtok(NULL, "\n"))
        if (built != CL_SUCCESS || strstr(line, "ptxas info") || strstr(line, "spill") ||
            strstr(line, "registers") || strstr(line, "smem"))
            printf("   %s\n", line);
    free(log);
    free(opts);
    free(src);
    if (prog)
        clReleaseProgram(prog);
    return built == CL_SUCCESS ? 0 : 1;
}

static int nv_report(const char *device, const char *only, int shard, int shards)
{
    clt_context *ctx;
    if (open_context(device, NULL, &ctx) != CLT_SUCCESS)
        return 1;
    const clt_device_info *d = &ctx->dev->entry->info;
    if (d->vendor != CLT_VENDOR_NVIDIA) {
        printf("clt-kernels: %s has no NVIDIA build log (-cl-nv-verbose is an option of NVIDIA's "
               "OpenCL driver); nothing to report\n", d->device_name);
        clt_context_free(ctx);
        return 0;
    }
    clt__variant_list l;
    if (clt__list_variants(ctx, 0, &l) != CLT_SUCCESS) {
        fprintf(stderr, "clt-kernels: listing variants: %s\n", clt_last_error(ctx));
        clt_context_free(ctx);
        return 1;
    }
    printf("# %s, %d variants; base options: %s\n", d->device_name, l.n,
           clt__base_build_options(ctx));
    int bad = 0;
    for (int i = 0; i < l.n; i++)
        if ((!only || !strcmp(only, l.v[i].program)) && i % shards == shard)
            bad |= nv_build(ctx, &l.v[i], i);
    clt__variant_list_free(&l);
    clt_context_free(ctx);
    return bad;
}

int main(int argc, char **argv)
{
    const char *device = NULL, *profile = "gfx902", *dump = NULL, *only = NULL;
    int mode = 0; /* 1 list, 2 nv-report */
    int shard = 0, shards = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--list"))
            mode = 1;
        else if (!strcmp(a, "--nv-report"))
            mode = 2;
        else if (!strcmp(a, "--profile") && i + 1 < argc)
            profile = argv[++i];
        else if (!strcmp(a, "--dump") && i + 1 < argc)
            dump = argv[++i];
        else if (!strcmp(a, "--device") && i + 1 < argc)
            device = argv[++i];
        else if (!strcmp(a, "--program") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(a, "--shard") && i + 1 < argc) {
            char tail = 0;
            if (sscanf(argv[++i], "%d/%d%c", &shard, &shards, &tail) != 2 || shards < 1 ||
                shard < 0 || shard >= shards) {
                fprintf(stderr, "clt-kernels: --shard wants I/N with 0 <= I < N, not \"%s\"\n", argv[i]);
                return 2;
            }
        }
        else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "clt-kernels: unknown or incomplete option \"%s\"\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (mode == 1)
        return list_variants(device, profile, dump);
    if (mode == 2)
        return nv_report(device, only, shard, shards);
    usage(stderr);
    return 2;
}
