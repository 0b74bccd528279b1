/* clt__nv_report: build each variant with -cl-nv-verbose, parse the log; see nv_report.h. */
#include "tools/nv_report.h"

#include <stdlib.h>
#include <string.h>

#include "program/program.h"
#include "tools/kernel_variants.h"
#include "tools/nv_resources.h"

/* NVIDIA's program binary is the PTX its front end made: written out so that ptxas here can show
 * what the driver's own ptxas did with it. Failures are reported, not fatal. */
static void write_ptx(cl_program prog, int index, const clt__nv_report_options *o)
{
    size_t size = 0;
    unsigned char *bin = NULL;
    char path[4096];
    snprintf(path, sizeof path, "%s/%d.ptx", o->ptx_dir, index);
    FILE *f = NULL;
    if (clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) == CL_SUCCESS &&
        size > 0 && size < ((size_t)1 << 30) && (bin = malloc(size)) != NULL &&
        clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL) == CL_SUCCESS &&
        (f = fopen(path, "wb")) != NULL && fwrite(bin, 1, size, f) == size) {
        if (fclose(f) == 0) {
            free(bin);
            return;
        }
        f = NULL;
    }
    if (f)
        fclose(f);
    free(bin);
    fprintf(stderr, "%s: could not write the PTX of variant %d to %s\n", o->tool, index, path);
}

/* Builds variant v (index i) and feeds its build log to t; prints the raw ptxas lines when asked.
 * Returns 1 when the build failed. */
static int nv_build(clt_context *ctx, const clt__variant *v, int index, const clt__nv_report_options *o,
                    clt__nv_table *t)
{
    char *src = NULL;
    if (clt__variant_source(ctx, v, &src) != CLT_SUCCESS) {
        fprintf(stderr, "%s: source of %s: %s\n", o->tool, v->program, clt_last_error(ctx));
        clt__nv_begin_variant(t, index, v->program, 1);
        return 1;
    }
    const char *base = clt__base_build_options(ctx);
    const char *extra = o->extra ? o->extra : "";
    size_t cap = strlen(base) + strlen(v->options) + strlen(extra) + 32;
    char *opts = malloc(cap);
    cl_int err = opts ? CL_SUCCESS : CL_OUT_OF_HOST_MEMORY;
    cl_device_id dev = ctx->dev->entry->device;
    cl_program prog = NULL;
    const size_t length = strlen(src);
    int guarded = 0, dropped = 0;
    if (opts) {
        snprintf(opts, cap, "%s %s %s", base, v->options, extra);
        /* the library's own build: with reqd_work_group_size, without it where that spilled */
        guarded = clt__fixed_group_guarded(&ctx->dev->entry->info, src, length, opts);
        if (!guarded)
            strcat(opts, " -cl-nv-verbose");
        const char *s = src;
        prog = clCreateProgramWithSource(ctx->dev->cl_ctx, 1, &s, &length, &err);
    }
    cl_int built = !prog ? err
                   : guarded ? clt__build_fixed_group(&prog, ctx->dev->cl_ctx, dev, src, length,
                                                      opts, &dropped)
                             : clBuildProgram(prog, 1, &dev, opts, NULL, NULL);
    if (built == CL_SUCCESS && o->ptx_dir)
        write_ptx(prog, index, o);
    char *log = prog ? clt__program_build_log(prog, dev) : NULL;
    clt__nv_begin_variant(t, index, v->program, built != CL_SUCCESS);
    if (o->raw || built != CL_SUCCESS)
        printf("== %d %s %s%s%s\n", index, v->program, v->options,
               dropped ? " -DCLT_REQD=0 (built without reqd_work_group_size: it spilled)" : "",
               built == CL_SUCCESS ? "" : "  BUILD FAILED");
    for (char *line = log, *next; line && *line; line = next) {
        char *nl = strchr(line, '\n');
        next = nl ? nl + 1 : line + strlen(line);
        if (nl)
            *nl = '\0'; /* the line alone for strstr below */
        size_t len = strlen(line);
        clt__nv_parse_line(t, line, len);
        if (built != CL_SUCCESS || (o->raw && strstr(line, "ptxas") && len < 4096))
            printf("   %.*s\n", (int)len, line);
    }
    free(log);
    free(opts);
    free(src);
    if (prog)
        clReleaseProgram(prog);
    return built == CL_SUCCESS ? 0 : 1;
}

int clt__nv_report(clt_context *ctx, const clt__nv_report_options *o)
{
    const clt_device_info *d = &ctx->dev->entry->info;
    if (d->vendor != CLT_VENDOR_NVIDIA) {
        printf("%s: %s has no NVIDIA build log (-cl-nv-verbose is an option of NVIDIA's OpenCL "
               "driver); no NVIDIA resource report\n", o->tool, d->device_name);
        return 0;
    }
    clt__variant_list l;
    if (clt__list_variants(ctx, 0, &l) != CLT_SUCCESS) {
        fprintf(stderr, "%s: listing variants: %s\n", o->tool, clt_last_error(ctx));
        return 1;
    }
    int shards = o->shards > 0 ? o->shards : 1;
    printf("# %s, %d variants; base options: %s%s%s\n", d->device_name, l.n,
           clt__base_build_options(ctx), o->extra ? "; every variant also: " : "",
           o->extra ? o->extra : "");
    clt__nv_table t;
    clt__nv_table_init(&t);
    int bad = 0;
    if (!o->raw)
        clt__nv_print_header(stdout);
    /* rows as each variant is built (a run cut short by a time limit keeps what it printed) */
    for (int i = 0; i < l.n; i++) {
        int wanted = !o->indexes;
        for (int k = 0; k < o->n_indexes && !wanted; k++)
            wanted = o->indexes[k] == i;
        if (!wanted || (o->program && strcmp(o->program, l.v[i].program)) || i % shards != o->shard)
            continue;
        int from = t.n;
        bad |= nv_build(ctx, &l.v[i], i, o, &t);
        if (!o->raw)
            clt__nv_print_rows(stdout, &t, from, t.n);
        fflush(stdout);
    }
    if (o->raw) /* the raw lines first (a file --nv-parse reads whole), then the table */
        clt__nv_print_table(stdout, &t);
    clt__nv_print_summary(stdout, &t);
    clt__nv_table_free(&t);
    clt__variant_list_free(&l);
    return bad;
}
