/* clt-kernels: the kernel variants the dispatch tables select, for checks outside the library.
 *   --list     every (program, options) pair a profile selects (the AMD ISA check compiles them:
 *              tests/isa/amd_isa_check.sh), with --dump DIR their full sources as DIR/<i>.cl
 *   --nv-report  builds every variant the current device's tables select with -cl-nv-verbose and
 *              prints one row per kernel of registers / shared memory / stack / spills parsed from
 *              the NVIDIA driver's build log (tools/nv_report.c, shared with clt-info --resources)
 * Links the static library: it reads the families' internal tables. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cltensor_all.h"
#include "program/program.h"
#include "tools/isa_targets.h"
#include "tools/kernel_variants.h"
#include "tools/nv_report.h"
#include "tools/nv_resources.h"
#include "tools/text_file.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: clt-kernels --list [--profile gfx902|gfx90a|gfx1030|native] [--dump DIR]\n"
            "                   [--device SEL]\n"
            "       clt-kernels --nv-report [--device SEL] [--program NAME] [--shard I/N] [--raw]\n"
            "                       [--index I[,J...]] [--ptx DIR] [--extra-options OPTS]\n"
            "       clt-kernels --nv-parse FILE\n"
            "  --list       one line per distinct (program, options) pair the profile's tables can\n"
            "               select, tab-separated: <index> <selected|compile-only> <program>\n"
            "               <launch work-group or 0> <full build options>; AMD profiles also list the\n"
            "               CPU-class variants as compile-only (they must still build)\n"
            "  --dump DIR   also write each variant's full source (includes inlined) as DIR/<index>.cl\n"
            "  --nv-report  build every variant the device's own tables select with -cl-nv-verbose and\n"
            "               print one row per kernel: variant index, program, kernel, registers,\n"
            "               shared memory, stack frame, spill stores and loads (bytes; '-' where the\n"
            "               log said nothing), then 'nv-resources: V variants, K kernels, S with\n"
            "               spills, F build failures'; --program gemm_tiled (etc.) builds only that\n"
            "               program's variants; --shard I/N only the variants whose index is I modulo\n"
            "               N (N processes build in parallel); --raw also prints the driver's ptxas\n"
            "               lines under '== <index> <program> <options>' (a failed build's whole log\n"
            "               is always printed); --index only the listed variant indexes; --ptx DIR\n"
            "               writes each variant's PTX (NVIDIA's program binary) as DIR/<index>.ptx;\n"
            "               --extra-options appends OPTS to every variant's build options (A/B\n"
            "               builds, e.g. \"-DCLT_REQD=0\");\n"
            "               not an NVIDIA device: says so, exit 0\n"
            "  --nv-parse FILE  the same table from a saved report (--nv-report --raw output, e.g.\n"
            "               bench/results/h200/nv_report.txt) or an NVIDIA build log; no device\n"
            "exit status: 0 ok, 1 failure (a variant failed to build, an unreadable file), 2 usage\n");
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
    const clt__isa_target *t = NULL;
    if (strcmp(profile, "native") != 0 && !(t = clt__isa_target_named(profile))) {
        fprintf(stderr, "clt-kernels: unknown profile \"%s\"\n", profile);
        return 2;
    }
    if (dump && mkdir(dump, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "clt-kernels: mkdir %s: %s\n", dump, strerror(errno));
        return 1;
    }
    clt_context *ctx;
    if (clt__isa_open_context("clt-kernels", device, t, &ctx) != CLT_SUCCESS)
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

/* A saved report (--nv-report --raw output, or any NVIDIA build log) as the table. */
static int nv_parse(const char *path)
{
    char *text = NULL, err[512];
    size_t len = 0;
    int st = clt__read_text_file(path, 64L << 20, &text, &len, err, sizeof err);
    if (st == CLT__TEXT_ABSENT)
        snprintf(err, sizeof err, "%s: no such file", path);
    if (st != CLT__TEXT_OK) {
        fprintf(stderr, "clt-kernels: --nv-parse %s\n", err);
        return 1;
    }
    clt__nv_table t;
    clt__nv_table_init(&t);
    clt__nv_parse_text(&t, text, len);
    free(text);
    clt__nv_print_table(stdout, &t);
    clt__nv_print_summary(stdout, &t);
    int rc = t.build_failures > 0;
    clt__nv_table_free(&t);
    return rc;
}

static int nv_report(const char *device, const clt__nv_report_options *o)
{
    clt_context *ctx;
    if (clt__isa_open_context("clt-kernels", device, NULL, &ctx) != CLT_SUCCESS)
        return 1;
    int rc = clt__nv_report(ctx, o);
    clt_context_free(ctx);
    return rc;
}

int main(int argc, char **argv)
{
    const char *device = NULL, *profile = "gfx902", *dump = NULL;
    const char *parse = NULL;
    int mode = 0; /* 1 list, 2 nv-report, 3 nv-parse */
    clt__nv_report_options nv = {"clt-kernels", NULL, 0, 1, 0, NULL, NULL, 0, NULL};
    int indexes[64];
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
            nv.program = argv[++i];
        else if (!strcmp(a, "--nv-parse") && i + 1 < argc) {
            mode = 3;
            parse = argv[++i];
        } else if (!strcmp(a, "--raw"))
            nv.raw = 1;
        else if (!strcmp(a, "--ptx") && i + 1 < argc)
            nv.ptx_dir = argv[++i];
        else if (!strcmp(a, "--extra-options") && i + 1 < argc)
            nv.extra = argv[++i];
        else if (!strcmp(a, "--index") && i + 1 < argc) {
            const char *p = argv[++i];
            nv.indexes = indexes;
            nv.n_indexes = 0;
            for (;;) {
                char *end;
                long v = strtol(p, &end, 10);
                if (end == p || v < 0 || v > 1000000 || nv.n_indexes == 64 || (*end && *end != ',')) {
                    fprintf(stderr, "clt-kernels: --index wants up to 64 indexes I,J,..., not \"%s\"\n",
                            argv[i]);
                    return 2;
                }
                indexes[nv.n_indexes++] = (int)v;
                if (!*end)
                    break;
                p = end + 1;
            }
        }
        else if (!strcmp(a, "--shard") && i + 1 < argc) {
            char tail = 0;
            if (sscanf(argv[++i], "%d/%d%c", &nv.shard, &nv.shards, &tail) != 2 ||
                nv.shards < 1 || nv.shard < 0 || nv.shard >= nv.shards) {
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
        return nv_report(device, &nv);
    if (mode == 3)
        return nv_parse(parse);
    usage(stderr);
    return 2;
}
