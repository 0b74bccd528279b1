/* clt-tune: measures the dispatch decisions on the current device (the sweeps of tune_sweeps.c),
 * writes the device's tuning file, reads it back to check that a context will use it, and prints
 * what it found and where it wrote. Starts from the built-in tables (any existing tuning file is
 * not read). Native profile only: a simulated profile's choices are not measurable here. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tool_args.h"
#include "tune_sweeps.h"

typedef struct tune_options {
    const char *device;
    const char *out;
    int quick, dry_run;
    int only[16]; /* --sweep: 1 for each sweep to run (all when none is named) */
    int named;
} tune_options;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: clt-tune [--device SEL] [--quick] [--sweep NAME] [--out PATH] [--dry-run]\n"
            "  --device SEL  device, as clt_context_options.device (default: $CLT_DEVICE)\n"
            "  --quick       fewer sizes and candidates (minutes instead of tens of minutes)\n"
            "  --sweep NAME  run only this sweep (repeatable or a comma list; default: all); the\n"
            "                file then holds only their sections (the rest stays built-in)\n"
            "  --out PATH    write here instead of the device's file in the cache directory\n"
            "                (<cache dir>/tuning-<hash>.txt, which contexts read by default); PATH's\n"
            "                directory must exist and be writable (checked before the sweeps)\n"
            "  --dry-run     measure and print, write nothing\n"
            "  --version     the library version\n"
            "sweeps, in order:\n");
    for (int i = 0; i < tune_sweep_count; i++)
        fprintf(f, "  %-16s %s\n", tune_sweeps[i].name, tune_sweeps[i].what);
    fprintf(f, "exit status: 0 ok, 1 failure\n");
}

enum { OPT_DEVICE = 256, OPT_QUICK, OPT_OUT, OPT_DRY_RUN, OPT_VERSION, OPT_SWEEP };

/* --sweep's value: each comma-separated name marked in o->only. Returns 0, or -1 (printed). */
static int select_sweeps(const char *list, tune_options *o)
{
    const char *p = list;
    do {
        size_t len = strcspn(p, ",");
        int i = 0;
        while (i < tune_sweep_count && (strlen(tune_sweeps[i].name) != len ||
                                        strncmp(tune_sweeps[i].name, p, len) != 0))
            i++;
        if (i == tune_sweep_count || i >= (int)(sizeof o->only / sizeof o->only[0])) {
            fprintf(stderr, "clt-tune: --sweep: no sweep '%.*s' (see --help)\n", (int)len, p);
            return -1;
        }
        o->only[i] = 1;
        o->named = 1;
        p += len;
    } while (*p++ == ',');
    return 0;
}

static int parse_args(int argc, char **argv, tune_options *o)
{
    static const struct option long_options[] = {
        {"device", required_argument, NULL, OPT_DEVICE}, {"quick", no_argument, NULL, OPT_QUICK},
        {"out", required_argument, NULL, OPT_OUT},       {"dry-run", no_argument, NULL, OPT_DRY_RUN},
        {"help", no_argument, NULL, 'h'},                {"version", no_argument, NULL, OPT_VERSION},
        {"sweep", required_argument, NULL, OPT_SWEEP},   {NULL, 0, NULL, 0}};
    opterr = 0; /* our own one-line messages */
    int c;
    while ((c = getopt_long(argc, argv, ":h", long_options, NULL)) != -1) {
        switch (c) {
        case OPT_DEVICE: o->device = optarg; break;
        case OPT_QUICK: o->quick = 1; break;
        case OPT_OUT: o->out = optarg; break;
        case OPT_DRY_RUN: o->dry_run = 1; break;
        case OPT_SWEEP:
            if (select_sweeps(optarg, o) != 0)
                return -1;
            break;
        case 'h': usage(stdout); exit(0);
        case OPT_VERSION: tool_print_version("clt-tune"); exit(0);
        case ':': fprintf(stderr, "clt-tune: %s needs a value\n", argv[optind - 1]); return -1;
        default: fprintf(stderr, "clt-tune: unknown option '%s' (see --help)\n", argv[optind - 1]); return -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "clt-tune: unexpected argument '%s' (see --help)\n", argv[optind]);
        return -1;
    }
    /* The file is written after the sweeps (tens of minutes): a path that cannot be written is
     * refused now. */
    if (o->out && !o->dry_run && tool_check_output("clt-tune", "--out", o->out) != 0)
        return -1;
    return 0;
}

/* header.date, header.command, header.library. */
static int finish_header(clt__tuning_entries *e, int argc, char **argv)
{
    char date[64], cmd[CLT_TUNING_VALUE_MAX] = "clt-tune";
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", &tm);
    for (int i = 1; i < argc; i++) {
        size_t used = strlen(cmd);
        snprintf(cmd + used, sizeof cmd - used, " %s", argv[i]);
    }
    for (char *p = cmd; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    return clt__tuning_set(e, "header.date", date) | clt__tuning_set(e, "header.command", cmd) |
           clt__tuning_set(e, "header.library", clt_version_string());
}

/* Read the written file back as a new context would: it must be in force, with the same entries. */
static int verify(const char *path, const char *device, const clt__tuning_entries *written)
{
    setenv("CLT_TUNING_FILE", path, 1);
    clt_context_options opts;
    clt_context_options_init(&opts);
    opts.device = device;
    opts.profile = "native";
    clt_context *ctx = NULL;
    clt_status st = clt_context_create(&opts, &ctx);
    unsetenv("CLT_TUNING_FILE");
    if (st != CLT_SUCCESS) {
        fprintf(stderr, "clt-tune: verify: %s\n", clt_last_error(NULL));
        return -1;
    }
    const clt__tuning *t = ctx->tuning;
    int ok = t && t->source == CLT_TUNING_FILE && t->entries.n == written->n;
    for (int i = 0; ok && i < written->n; i++)
        ok = !strcmp(t->entries.kv[i].key, written->kv[i].key) &&
             !strcmp(t->entries.kv[i].value, written->kv[i].value);
    if (!ok)
        fprintf(stderr, "clt-tune: %s does not read back as written: %s\n", path,
                t && t->why[0] ? t->why : "entries differ");
    clt_context_free(ctx);
    return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
    tune_options o = {0};
    if (parse_args(argc, argv, &o) != 0)
        return 1;
    const char *prof = getenv("CLT_DEVICE_PROFILE");
    if (prof && *prof && strcmp(prof, "native") != 0) {
        fprintf(stderr, "clt-tune: CLT_DEVICE_PROFILE=%s: tuning measures the real device; unset it\n",
                prof);
        return 1;
    }
    setenv("CLT_TUNING_FILE", "off", 1); /* measure from the built-in tables */
    clt_context_options opts;
    clt_context_options_init(&opts);
    opts.device = o.device;
    opts.profile = "native";
    opts.gemm_impl = "auto";
    clt_context *ctx = NULL;
    if (clt_context_create(&opts, &ctx) != CLT_SUCCESS) {
        fprintf(stderr, "clt-tune: clt_context_create: %s\n", clt_last_error(NULL));
        return 1;
    }
    unsetenv("CLT_TUNING_FILE");
    clt__tuning_entries *out = calloc(1, sizeof *out);
    if (!out) {
        clt_context_free(ctx);
        return 1;
    }
    tune_env env = {0};
    env.ctx = ctx;
    clt_context_device_info(ctx, &env.dev);
    env.quick = o.quick;
    env.gpu = env.dev.type != CLT_DEVICE_CPU;
    env.timing.min_sample_s = o.quick ? 0.010 : 0.020;
    env.timing.samples = o.quick ? 5 : 7;
    env.trial = ctx->tuning;
    env.trial->gemm_table = *clt__gemm_table_builtin(ctx); /* sweeps install their winners here */
    env.trial->has_gemm_table = 1;
    env.out = out;
    env.seed = 12345;

    char path[1024];
    if (o.out)
        snprintf(path, sizeof path, "%s", o.out);
    else
        clt__tuning_default_path(ctx, path, sizeof path);
    if (!path[0] && !o.dry_run) {
        fprintf(stderr, "clt-tune: the cache directory is off (CLT_CACHE_DIR=off): give --out PATH\n");
        free(out);
        clt_context_free(ctx);
        return 1;
    }
    printf("clt-tune on %s (%s, driver %s)%s\n", env.dev.device_name, env.dev.platform_version,
           env.dev.driver_version, o.quick ? ", quick" : "");
    double t0 = bench_now_s();
    int rc = clt__tuning_header(ctx, out) | finish_header(out, argc, argv);
    for (int i = 0; rc == 0 && i < tune_sweep_count; i++) {
        if (o.named && !o.only[i])
            continue;
        printf("%s: %s\n", tune_sweeps[i].name, tune_sweeps[i].what);
        fflush(stdout);
        rc = tune_sweeps[i].run(&env);
    }
    double secs = bench_now_s() - t0;
    if (rc == 0) {
        printf("\nfound (%d measurements, %.0f s):\n", env.measurements, secs);
        for (int i = 0; i < out->n; i++)
            if (strncmp(out->kv[i].key, "header.", 7) != 0)
                printf("  %s = %s\n", out->kv[i].key, out->kv[i].value);
    }
    if (rc == 0 && !o.dry_run) {
        char why[300];
        if (clt__tuning_write(path, out, why, sizeof why) != 0) {
            fprintf(stderr, "clt-tune: %s\n", why);
            rc = -1;
        } else if ((rc = verify(path, o.device, out)) == 0) {
            printf("wrote %s%s\n", path, o.out ? " (use it with CLT_TUNING_FILE=<path>)" : "");
        }
    }
    free(out);
    clt_context_free(ctx);
    return rc == 0 ? 0 : 1;
}
