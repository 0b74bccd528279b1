/* clt-bench: runs the benchmark cases of bench/README.md on one device and prints JSON lines and a
 * markdown table. Options and the loop over cases live here; the method is bench_timing's, the output
 * bench_report's, the cases the suite tables'. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_cases.h"
#include "bench_compare.h"
#include "bench_dist.h"
#include "bench_startup.h"
#include "bench_report.h"
#include "bench_timing.h"
#include "tool_args.h"

#define MAX_SELECTED 16

typedef struct bench_options {
    const bench_suite *suites[MAX_SELECTED];
    int suite_count;
    const char *case_filter;
    const char *json_path;
    char **compare_files; /* --compare FILE...: join earlier runs instead of running */
    const char *png_path; /* --png FILE: with --compare, also draw the table */
    int compare_count;
    const char *device;
    const char *profile;
    const char *impl; /* --impl: clt_context_options.gemm_impl and conv_impl */
    int pinn_layers;  /* --pinn-path layers: the pinn suite on the per-layer path */
    int split;             /* --split: profiler on, kernel/transfer/host columns */
    const char *trace_path; /* --trace FILE: Chrome trace of the run (implies --split) */
    int list;
    bench_timing_config timing;
} bench_options;

static void usage(FILE *f) {
    fprintf(f,
            "usage: clt-bench [options]\n"
            "  --suite NAME     transfer, seed, micro, gemm, conv, pinn, fft, attention, transformer, cnn, ops, nnops or all; repeatable or a comma\n"
            "                   (--suite dist: alone, under mpirun, CLT_WITH_MPI builds; bench_dist.c)\n"
            "                   list (default: seed)\n"
            "  --case SUBSTR    only cases whose name contains SUBSTR\n"
            "  --json FILE      write the JSON lines to FILE (stdout then shows only the table)\n"
            "  --device SEL     device, as clt_context_options.device (default: $CLT_DEVICE)\n"
            "  --profile NAME   device profile: native or gfx902 (default: $CLT_DEVICE_PROFILE)\n"
            "  --impl NAME      GEMM and Conv2D implementation: tiled, clblast or auto (default:\n"
            "                   $CLT_GEMM_IMPL / $CLT_CONV_IMPL, else auto); the JSON peer is then\n"
            "                   cltensor-tiled or\n"
            "                   cltensor-clblast (auto: cltensor); or the FFT backend: ours, clfft or\n"
            "                   vkfft (sets CLT_FFT_IMPL; peer cltensor-ours / -clfft / -vkfft)\n"
            "  --split          profiler on (as CLT_PROFILE=1): kernel_us / transfer_us / host_us /\n"
            "                   idle_us per op as columns and JSON fields (host_us: enqueue to start,\n"
            "                   queueing included; idle_us: device idle before each command)\n"
            "  --trace FILE     with the profiler: write the Chrome trace of the run (the latest\n"
            "                   65536 commands) to FILE, for ui.perfetto.dev; implies --split\n"
            "  --pinn-path P    pinn suite: fused (default, clt_mlp) or layers (one GEMM per layer,\n"
            "                   bench/pinn_net.c); the JSON peer is then cltensor-layers\n"
            "  --samples N      samples per case, at least 5 (default 5)\n"
            "  --min-ms MS      minimum length of one sample in ms (default 20)\n"
            "  --compare F...   join JSON-lines files of several runs/peers into one table of times\n"
            "                   and ratios (per case: the fastest run and by how much); every\n"
            "                   argument that is not an option is such a file\n"
            "  --png FILE       with --compare: also draw the times as a bar chart (needs gnuplot)\n"
            "  --list           list the cases (of --suite, default all) and whether they are implemented\n"
            "  --help           this text\n"
            "  --version        the library version\n"
            "exit status: 0 all cases ran (or were not implemented / skipped), 1 a case or setup failed\n");
}

static int add_suite(bench_options *o, const char *name) {
    if (strcmp(name, "all") == 0) {
        for (int i = 0; i < bench_suite_count; i++)
            if (add_suite(o, bench_suites[i]->name) != 0)
                return -1;
        return 0;
    }
    const bench_suite *s = bench_find_suite(name);
    if (!s) {
        fprintf(stderr, "clt-bench: unknown suite '%s'\n", name);
        return -1;
    }
    for (int i = 0; i < o->suite_count; i++)
        if (o->suites[i] == s)
            return 0;
    if (o->suite_count == MAX_SELECTED)
        return -1;
    o->suites[o->suite_count++] = s;
    return 0;
}

/* "a,b,c" -> add_suite for each. */
static int add_suite_list(bench_options *o, const char *list) {
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        if (add_suite(o, tok) != 0)
            return -1;
    return 0;
}

static int wanted(const bench_options *o, const bench_case *c);

enum { OPT_SUITE = 256, OPT_CASE, OPT_JSON, OPT_DEVICE, OPT_PROFILE, OPT_IMPL, OPT_SPLIT, OPT_TRACE,
       OPT_SAMPLES, OPT_MIN_MS, OPT_COMPARE, OPT_PNG, OPT_LIST, OPT_VERSION, OPT_PINN_PATH };

static const struct option long_options[] = {
    {"suite", required_argument, NULL, OPT_SUITE},     {"case", required_argument, NULL, OPT_CASE},
    {"json", required_argument, NULL, OPT_JSON},       {"device", required_argument, NULL, OPT_DEVICE},
    {"profile", required_argument, NULL, OPT_PROFILE}, {"impl", required_argument, NULL, OPT_IMPL},
    {"split", no_argument, NULL, OPT_SPLIT},           {"trace", required_argument, NULL, OPT_TRACE},
    {"samples", required_argument, NULL, OPT_SAMPLES}, {"min-ms", required_argument, NULL, OPT_MIN_MS},
    {"compare", no_argument, NULL, OPT_COMPARE},       {"png", required_argument, NULL, OPT_PNG},
    {"list", no_argument, NULL, OPT_LIST},             {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, OPT_VERSION},       {"pinn-path", required_argument, NULL, OPT_PINN_PATH},
    {NULL, 0, NULL, 0}};

/* Every value is checked here, before any device work: a bad one is one line on stderr and exit 1. */
static int parse_args(int argc, char **argv, bench_options *o) {
    int compare = 0;
    double min_ms = 20;
    o->timing.samples = 5;
    opterr = 0; /* our own one-line messages */
    int c;
    while ((c = getopt_long(argc, argv, ":h", long_options, NULL)) != -1) {
        switch (c) {
        case 'h': usage(stdout); exit(0);
        case OPT_VERSION: tool_print_version("clt-bench"); exit(0);
        case OPT_LIST: o->list = 1; break;
        case OPT_SPLIT: o->split = 1; break;
        case OPT_COMPARE: compare = 1; break;
        case OPT_SUITE:
            if (add_suite_list(o, optarg) != 0)
                return -1;
            break;
        case OPT_CASE: o->case_filter = optarg; break;
        case OPT_PNG: o->png_path = optarg; break;
        case OPT_TRACE: o->trace_path = optarg; o->split = 1; break;
        case OPT_JSON: o->json_path = optarg; break;
        case OPT_DEVICE: o->device = optarg; break;
        case OPT_PROFILE: o->profile = optarg; break;
        case OPT_IMPL:
            o->impl = optarg;
            if (!strcmp(o->impl, "ours") || !strcmp(o->impl, "clfft") || !strcmp(o->impl, "vkfft")) {
                /* an FFT backend: the fft suite's plans read CLT_FFT_IMPL */
                setenv("CLT_FFT_IMPL", o->impl, 1);
            } else if (strcmp(o->impl, "tiled") && strcmp(o->impl, "clblast") && strcmp(o->impl, "auto")) {
                fprintf(stderr, "clt-bench: --impl: '%s' is not tiled, clblast, ours, clfft, vkfft or auto\n",
                        o->impl);
                return -1;
            }
            break;
        case OPT_PINN_PATH:
            if (strcmp(optarg, "fused") && strcmp(optarg, "layers")) {
                fprintf(stderr, "clt-bench: --pinn-path: '%s' is not fused or layers\n", optarg);
                return -1;
            }
            o->pinn_layers = strcmp(optarg, "layers") == 0;
            break;
        case OPT_SAMPLES:
            if (tool_parse_int("clt-bench", "--samples", optarg, 5, 100000, &o->timing.samples) != 0)
                return -1;
            break;
        case OPT_MIN_MS:
            if (tool_parse_positive("clt-bench", "--min-ms", optarg, 0, &min_ms) != 0)
                return -1;
            break;
        case ':':
            fprintf(stderr, "clt-bench: %s needs a value\n", argv[optind - 1]);
            return -1;
        default:
            fprintf(stderr, "clt-bench: unknown option '%s' (see --help)\n", argv[optind - 1]);
            return -1;
        }
    }
    o->timing.min_sample_s = min_ms * 1e-3;
    if (compare) { /* the remaining arguments are the JSON-lines files */
        o->compare_files = argv + optind;
        o->compare_count = argc - optind;
        if (o->compare_count == 0) {
            fprintf(stderr, "clt-bench: --compare needs JSON-lines files\n");
            return -1;
        }
        for (int i = 0; i < o->compare_count; i++)
            if (access(o->compare_files[i], R_OK) != 0) {
                fprintf(stderr, "clt-bench: --compare: cannot read %s\n", o->compare_files[i]);
                return -1;
            }
        return o->png_path ? tool_check_output("clt-bench", "--png", o->png_path) : 0;
    }
    if (optind < argc) {
        fprintf(stderr, "clt-bench: unexpected argument '%s' (see --help)\n", argv[optind]);
        return -1;
    }
    if (o->png_path) {
        fprintf(stderr, "clt-bench: --png is for --compare\n");
        return -1;
    }
    if (o->suite_count == 0)
        add_suite(o, o->list ? "all" : "seed"); /* listing shows everything by default */
    int matching = 0;
    for (int s = 0; s < o->suite_count; s++)
        for (int i = 0; i < o->suites[s]->count; i++)
            matching += wanted(o, &o->suites[s]->cases[i]);
    if (matching == 0) {
        fprintf(stderr, "clt-bench: --case: no case of the selected suites contains '%s' (see --list)\n",
                o->case_filter);
        return -1;
    }
    if ((o->json_path && tool_check_output("clt-bench", "--json", o->json_path) != 0) ||
        (o->trace_path && tool_check_output("clt-bench", "--trace", o->trace_path) != 0))
        return -1;
    return 0;
}

static int wanted(const bench_options *o, const bench_case *c) {
    return !o->case_filter || strstr(c->name, o->case_filter) != NULL;
}

static void list_cases(const bench_options *o) {
    for (int s = 0; s < o->suite_count; s++)
        for (int i = 0; i < o->suites[s]->count; i++) {
            const bench_case *c = &o->suites[s]->cases[i];
            if (wanted(o, c))
                printf("%-9s %-34s %s%s\n", o->suites[s]->name, c->name,
                       c->setup ? "implemented" : "not implemented",
                       (c->flags & BENCH_GPU_ONLY) ? " (gpu only)" : "");
        }
}

/* Has a case of that name already been reported (matmul/256 is in seed and gemm)? */
static int already_reported(const bench_report *rep, const char *name) {
    for (int i = 0; i < rep->count; i++)
        if (strcmp(rep->rows[i].name, name) == 0)
            return 1;
    return 0;
}

static void fail_note(bench_result *res, clt_context *ctx, const char *stage, clt_status st) {
    res->outcome = BENCH_FAILED;
    snprintf(res->note, sizeof res->note, "%s: %s: %s", stage, clt_status_string(st),
             clt_last_error(ctx));
}

static void run_case(bench_env *env, const bench_options *o, const bench_case *c, bench_result *res) {
    memset(res, 0, sizeof *res);
    snprintf(res->name, sizeof res->name, "%s", c->name);
    if (!c->setup) {
        res->outcome = BENCH_NOT_IMPLEMENTED;
        return;
    }
    if ((c->flags & BENCH_GPU_ONLY) && env->device.type == CLT_DEVICE_CPU) {
        res->outcome = BENCH_SKIPPED;
        snprintf(res->note, sizeof res->note, "CPU device");
        return;
    }
    bench_run r;
    memset(&r, 0, sizeof r);
    clt_status st = c->setup(env, c, &r);
    if (st == CLT_ERR_UNSUPPORTED) {
        res->outcome = BENCH_SKIPPED;
        snprintf(res->note, sizeof res->note, "%s", clt_last_error(env->ctx));
        return;
    }
    if (st != CLT_SUCCESS) {
        fail_note(res, env->ctx, "setup", st);
        return;
    }
    if (r.name[0])
        snprintf(res->name, sizeof res->name, "%s", r.name);
    snprintf(res->note, sizeof res->note, "%s", r.note);
    res->work = r.work;
    res->unit = r.unit;
    st = bench_measure(env->ctx, &r, &o->timing, &res->timing);
    if (st != CLT_SUCCESS)
        fail_note(res, env->ctx, "run", st);
    if (r.teardown)
        r.teardown(r.state);
    /* Leave nothing in flight (and surface late errors) before the next case. */
    st = clt_finish(env->ctx);
    if (st != CLT_SUCCESS && res->outcome == BENCH_OK)
        fail_note(res, env->ctx, "finish", st);
}

static int total_cases(const bench_options *o) {
    int n = 0;
    for (int s = 0; s < o->suite_count; s++)
        for (int i = 0; i < o->suites[s]->count; i++)
            n += wanted(o, &o->suites[s]->cases[i]);
    return n;
}

static int run_all(bench_env *env, const bench_options *o, bench_report *rep) {
    int failed = 0, done = 0, total = total_cases(o);
    int progress = isatty(STDERR_FILENO);
    for (int s = 0; s < o->suite_count; s++)
        for (int i = 0; i < o->suites[s]->count; i++) {
            const bench_case *c = &o->suites[s]->cases[i];
            if (!wanted(o, c))
                continue;
            done++;
            if (already_reported(rep, c->name))
                continue;
            if (progress)
                fprintf(stderr, "\r\033[K[%d/%d] %s/%s ...", done, total, o->suites[s]->name, c->name);
            bench_result res;
            run_case(env, o, c, &res);
            if (progress)
                fprintf(stderr, "\r\033[K"); /* the result line may go to the same terminal */
            failed += res.outcome == BENCH_FAILED;
            if (bench_report_add(rep, &res) != 0) {
                fprintf(stderr, "clt-bench: out of host memory\n");
                return -1;
            }
        }
    if (progress)
        fprintf(stderr, "\r\033[K");
    return failed;
}

int main(int argc, char **argv) {
    if (bench_dist_requested(argc, argv)) { /* its own timing, under mpirun (bench_dist.c) */
#ifdef CLT_WITH_MPI
        return bench_dist_main(argc, argv);
#else
        fprintf(stderr, "clt-bench: --suite dist needs a build with -DCLT_WITH_MPI=ON\n");
        return 1;
#endif
    }
    bench_options o;
    memset(&o, 0, sizeof o);
    if (parse_args(argc, argv, &o) != 0)
        return 1;
    if (o.compare_count > 0)
        return bench_compare(o.compare_count, o.compare_files, o.png_path, stdout) == 0 ? 0 : 1;
    if (o.list) {
        list_cases(&o);
        return 0;
    }

    clt_context_options opts;
    clt_context_options_init(&opts);
    if (o.device)
        opts.device = o.device;
    if (o.profile)
        opts.profile = o.profile;
    if (o.impl && strcmp(o.impl, "ours") && strcmp(o.impl, "clfft") && strcmp(o.impl, "vkfft"))
        opts.gemm_impl = opts.conv_impl = o.impl;
    if (o.split)
        opts.profiler = 1;
    bench_env env;
    memset(&env, 0, sizeof env);
    env.next_seed = 0x5eed0001u;
    env.pinn_layers = o.pinn_layers;
    bench_result startup[BENCH_STARTUP_ROWS];
    clt_status st = bench_startup(&opts, &env, startup);
    if (st != CLT_SUCCESS) {
        fprintf(stderr, "clt-bench: no context: %s: %s\n", clt_status_string(st),
                clt_last_error(env.ctx));
        clt_context_free(env.ctx);
        return 1;
    }

    FILE *json = stdout;
    if (o.json_path && !(json = fopen(o.json_path, "w"))) {
        perror(o.json_path);
        clt_context_free(env.ctx);
        return 1;
    }
    bench_report rep;
    /* A forced GEMM implementation is its own column in --compare (CLBlast + our epilogue pass). */
    /* A forced FFT backend likewise (cltensor-clfft, cltensor-vkfft, cltensor-ours). */
    const char *fft_impl = getenv("CLT_FFT_IMPL");
    const char *peer = o.pinn_layers                                  ? "cltensor-layers"
                       : strcmp(env.limits.gemm_impl, "clblast") == 0 ? "cltensor-clblast"
                       : strcmp(env.limits.gemm_impl, "tiled") == 0 ? "cltensor-tiled"
                       : fft_impl && !strcmp(fft_impl, "clfft")     ? "cltensor-clfft"
                       : fft_impl && !strcmp(fft_impl, "vkfft")     ? "cltensor-vkfft"
                       : fft_impl && !strcmp(fft_impl, "ours")      ? "cltensor-ours"
                                                                    : "cltensor";
    bench_report_init(&rep, json, peer, env.device.device_name, env.limits.profile);
    for (int i = 0; i < BENCH_STARTUP_ROWS; i++)
        bench_report_add(&rep, &startup[i]);
    for (int s = 0; s < o.suite_count; s++)
        if (strcmp(o.suites[s]->name, "fft") == 0) {
            bench_result plan_row;
            if (bench_fft_first_plan(&env, &plan_row) == CLT_SUCCESS)
                bench_report_add(&rep, &plan_row);
            else
                fprintf(stderr, "clt-bench: startup/fft_plan: %s\n", clt_last_error(env.ctx));
        }
    int failed = run_all(&env, &o, &rep);
    bench_report_table(&rep, stdout);
    int trace_failed = o.trace_path && clt_profile_write_trace(env.ctx, o.trace_path) != CLT_SUCCESS;
    if (trace_failed)
        fprintf(stderr, "clt-bench: --trace: %s\n", clt_last_error(env.ctx));
    if (failed > 0)
        fprintf(stderr, "clt-bench: %d case(s) failed (see the table)\n", failed);

    bench_report_free(&rep);
    if (json != stdout)
        fclose(json);
    clt_context_free(env.ctx);
    return failed != 0 || trace_failed;
}
