/* clt-info: what cltensor sees. Every OpenCL device and its capabilities, which one a context would
 * pick, and the limits and program cache of a context created there (public API only); with
 * --resources the per-kernel resource table (info_resources.c, which reads internal tables: the
 * tool links the static library). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cltensor_all.h"
#include "json_out.h"
#include "tools/info_resources.h"
#include "tool_args.h"

typedef struct info_options {
    int json;
    int list;
    const char *device;  /* NULL: the library's default selection ($CLT_DEVICE, ...) */
    const char *profile; /* NULL: $CLT_DEVICE_PROFILE, else native */
    int resources;
    const char *isa_report;
} info_options;

static void usage(FILE *f) {
    fprintf(f,
            "usage: clt-info [--json | --list] [--device SEL] [--profile NAME]\n"
            "       clt-info --resources [--device SEL] [--profile NAME] [--isa-report FILE]\n"
            "  (no option)     every platform and device, the selected one marked, and the limits\n"
            "                  of a context created on it\n"
            "  --json          the same as one JSON object\n"
            "  --list          one line per device: <index> <platform>:<device> <type> <platform> / <device>\n"
            "  --device SEL    select as clt_context_options.device: \"2\", \"1:0\", \"gpu\", \"cpu\",\n"
            "                  or a substring of \"platform / device\" (default: $CLT_DEVICE)\n"
            "  --profile NAME  device profile: native or gfx902 (default: $CLT_DEVICE_PROFILE)\n"
            "  --resources     registers / memory / spills per kernel of every variant the tables\n"
            "                  select. Native profile on an NVIDIA device: each variant built with\n"
            "                  -cl-nv-verbose, the driver's log as a table (as clt-kernels\n"
            "                  --nv-report); exit 1 if one fails to build. --profile gfx902, gfx90a or\n"
            "                  gfx1030: the AMD ISA check's table (VGPR, SGPR, scratch, spills, LDS,\n"
            "                  occupancy), rows whose options the tables no longer select marked\n"
            "                  STALE. A device or profile with no report (POCL native, no ISA report\n"
            "                  yet): one line saying so, exit 0\n"
            "  --isa-report FILE  the ISA check's table to read (default: $CLT_ISA_OUT/<target>/\n"
            "                  resources.tsv if CLT_ISA_OUT is set, else the build tree's\n"
            "                  isa/<target>/resources.tsv that ctest -R amd_isa_<target> writes)\n"
            "  --help          this text\n"
            "  --version       the library version\n"
            "exit status: 0 ok, 1 failure\n");
}

static const char *type_name(clt_device_type t) {
    switch (t) {
    case CLT_DEVICE_CPU: return "cpu";
    case CLT_DEVICE_GPU: return "gpu";
    case CLT_DEVICE_ACCELERATOR: return "accelerator";
    default: return "other";
    }
}

static const char *vendor_name(clt_vendor v) {
    switch (v) {
    case CLT_VENDOR_NVIDIA: return "nvidia";
    case CLT_VENDOR_AMD: return "amd";
    case CLT_VENDOR_INTEL: return "intel";
    case CLT_VENDOR_POCL: return "pocl";
    default: return "other";
    }
}

/* "1.5 GiB" style, into buf. */
static const char *human_bytes(uint64_t b, char *buf, size_t cap) {
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)b;
    int u = 0;
    while (v >= 1024.0 && u < 4) {
        v /= 1024.0;
        u++;
    }
    if (u == 0)
        snprintf(buf, cap, "%llu B", (unsigned long long)b);
    else
        snprintf(buf, cap, "%.1f %s", v, units[u]);
    return buf;
}

static const char *yes_no(int v) { return v ? "yes" : "no"; }


/* ------------------------------------------------------------------ text output */

static void print_device_text(const clt_device_info *d, int selected) {
    char b1[32], b2[32], b3[32];
    printf("  [%d] %d:%d %s%s\n", d->global_index, d->platform_index, d->device_index, d->device_name,
           selected ? "   <- selected" : "");
    printf("      vendor            %s (%s)\n", vendor_name(d->vendor), d->device_vendor);
    printf("      type              %s\n", type_name(d->type));
    printf("      compute units     %u @ %u MHz\n", d->compute_units, d->max_clock_mhz);
    printf("      max work-group    %llu (multiple %u)\n", (unsigned long long)d->max_work_group_size,
           d->preferred_work_group_multiple);
    printf("      local memory      %s%s\n", human_bytes(d->local_mem_bytes, b1, sizeof b1),
           d->local_mem_is_global ? " (global memory)" : "");
    printf("      global memory     %s, max alloc %s\n", human_bytes(d->global_mem_bytes, b2, sizeof b2),
           human_bytes(d->max_alloc_bytes, b3, sizeof b3));
    printf("      unified memory    %s\n", yes_no(d->unified_memory));
    printf("      fp16 / fp64       %s / %s\n", yes_no(d->has_fp16), yes_no(d->has_fp64));
    printf("      inline PTX        %s\n", yes_no(d->has_inline_ptx));
    printf("      subgroups         %s\n", yes_no(d->has_subgroups));
    printf("      device version    %s\n", d->device_version);
    printf("      OpenCL C          %s\n", d->opencl_c_version);
    printf("      driver            %s\n", d->driver_version);
}

static void print_context_text(const clt_device_info *d, const clt_context_limits *l,
                               const clt_program_cache_stats *cs, const char *dispatch) {
    char b1[32], b2[32], b3[32];
    printf("\nContext on [%d] %s\n", d->global_index, d->device_name);
    printf("  profile             %s\n", l->profile);
    printf("  max work-group      %llu\n", (unsigned long long)l->max_work_group_size);
    printf("  wave width          %u\n", l->wave_width);
    printf("  local memory budget %s\n", human_bytes(l->local_mem_budget, b1, sizeof b1));
    printf("  zero-copy           %s\n", yes_no(l->zero_copy));
    printf("  memory limit        %s\n",
           l->memory_limit ? human_bytes(l->memory_limit, b2, sizeof b2) : "none");
    printf("  kernel sources      %s\n", l->kernel_dir[0] ? l->kernel_dir : "embedded");
    printf("  program cache       %s\n", l->cache_dir[0] ? l->cache_dir : "off");
    if (l->cache_dir[0])
        printf("  cache contents      %llu files, %s\n", (unsigned long long)cs->disk_files,
               human_bytes(cs->disk_bytes, b3, sizeof b3));
    printf("\nDispatch\n");
    for (const char *p = dispatch; *p;) { /* indent each line */
        const char *nl = strchr(p, '\n');
        int len = nl ? (int)(nl - p) : (int)strlen(p);
        printf("  %.*s\n", len, p);
        p += len + (nl ? 1 : 0);
    }
}

/* ------------------------------------------------------------------ JSON output */

static void print_device_json(const clt_device_info *d) {
    printf("{\"global_index\":%d,\"platform_index\":%d,\"device_index\":%d,", d->global_index,
           d->platform_index, d->device_index);
    printf("\"type\":\"%s\",\"vendor\":\"%s\",\"platform_name\":", type_name(d->type),
           vendor_name(d->vendor));
    json_out_string(stdout, d->platform_name);
    printf(",\"platform_version\":");
    json_out_string(stdout, d->platform_version);
    printf(",\"device_name\":");
    json_out_string(stdout, d->device_name);
    printf(",\"device_vendor\":");
    json_out_string(stdout, d->device_vendor);
    printf(",\"device_version\":");
    json_out_string(stdout, d->device_version);
    printf(",\"driver_version\":");
    json_out_string(stdout, d->driver_version);
    printf(",\"opencl_c_version\":");
    json_out_string(stdout, d->opencl_c_version);
    printf(",\"compute_units\":%u,\"max_clock_mhz\":%u,\"max_work_group_size\":%llu,"
           "\"preferred_work_group_multiple\":%u,\"local_mem_bytes\":%llu,\"local_mem_is_global\":%s,"
           "\"global_mem_bytes\":%llu,\"max_alloc_bytes\":%llu,\"unified_memory\":%s,"
           "\"fp16\":%s,\"fp64\":%s,\"inline_ptx\":%s,\"subgroups\":%s}",
           d->compute_units, d->max_clock_mhz, (unsigned long long)d->max_work_group_size,
           d->preferred_work_group_multiple, (unsigned long long)d->local_mem_bytes,
           d->local_mem_is_global ? "true" : "false", (unsigned long long)d->global_mem_bytes,
           (unsigned long long)d->max_alloc_bytes, d->unified_memory ? "true" : "false",
           d->has_fp16 ? "true" : "false", d->has_fp64 ? "true" : "false",
           d->has_inline_ptx ? "true" : "false", d->has_subgroups ? "true" : "false");
}

static void print_context_json(const clt_context_limits *l, const clt_program_cache_stats *cs,
                               const char *dispatch, const clt_tuning_info *tu) {
    printf("{\"profile\":");
    json_out_string(stdout, l->profile);
    printf(",\"max_work_group_size\":%llu,\"wave_width\":%u,\"local_mem_budget\":%llu,"
           "\"zero_copy\":%s,\"memory_limit\":%llu,\"kernel_dir\":",
           (unsigned long long)l->max_work_group_size, l->wave_width,
           (unsigned long long)l->local_mem_budget, l->zero_copy ? "true" : "false",
           (unsigned long long)l->memory_limit);
    if (l->kernel_dir[0])
        json_out_string(stdout, l->kernel_dir);
    else
        printf("null");
    printf(",\"cache_dir\":");
    if (l->cache_dir[0])
        json_out_string(stdout, l->cache_dir);
    else
        printf("null");
    printf(",\"cache\":{\"disk_files\":%llu,\"disk_bytes\":%llu,\"memory_hits\":%llu,"
           "\"disk_loads\":%llu,\"source_builds\":%llu,\"disk_writes\":%llu,\"disk_rejects\":%llu}",
           (unsigned long long)cs->disk_files, (unsigned long long)cs->disk_bytes,
           (unsigned long long)cs->memory_hits, (unsigned long long)cs->disk_loads,
           (unsigned long long)cs->source_builds, (unsigned long long)cs->disk_writes,
           (unsigned long long)cs->disk_rejects);
    printf(",\"dispatch\":");
    json_out_string(stdout, dispatch);
    static const char *const sources[] = {"builtin", "file", "ignored"};
    printf(",\"tuning\":{\"source\":\"%s\",\"path\":", sources[tu->source % 3]);
    json_out_string(stdout, tu->path);
    printf(",\"written\":");
    json_out_string(stdout, tu->written);
    printf(",\"reason\":");
    json_out_string(stdout, tu->reason);
    printf(",\"builtin_row\":");
    json_out_string(stdout, tu->builtin);
    printf("}");
    printf("}");
}

/* ------------------------------------------------------------------ main */

enum { OPT_JSON = 256, OPT_LIST, OPT_DEVICE, OPT_PROFILE, OPT_VERSION, OPT_RESOURCES, OPT_ISA_REPORT };

static int parse_args(int argc, char **argv, info_options *o) {
    static const struct option long_options[] = {
        {"json", no_argument, NULL, OPT_JSON},         {"list", no_argument, NULL, OPT_LIST},
        {"device", required_argument, NULL, OPT_DEVICE}, {"profile", required_argument, NULL, OPT_PROFILE},
        {"help", no_argument, NULL, 'h'},              {"version", no_argument, NULL, OPT_VERSION},
        {"resources", no_argument, NULL, OPT_RESOURCES}, {"isa-report", required_argument, NULL, OPT_ISA_REPORT},
        {NULL, 0, NULL, 0}};
    opterr = 0; /* our own one-line messages */
    int c;
    while ((c = getopt_long(argc, argv, ":h", long_options, NULL)) != -1) {
        switch (c) {
        case OPT_JSON: o->json = 1; break;
        case OPT_LIST: o->list = 1; break;
        case OPT_DEVICE: o->device = optarg; break;
        case OPT_PROFILE: o->profile = optarg; break;
        case OPT_RESOURCES: o->resources = 1; break;
        case OPT_ISA_REPORT: o->isa_report = optarg; break;
        case 'h': usage(stdout); exit(0);
        case OPT_VERSION: tool_print_version("clt-info"); exit(0);
        case ':': fprintf(stderr, "clt-info: %s needs a value\n", argv[optind - 1]); return 1;
        default: fprintf(stderr, "clt-info: unknown option '%s' (see --help)\n", argv[optind - 1]); return 1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "clt-info: unexpected argument '%s' (see --help)\n", argv[optind]);
        return 1;
    }
    if (o->json && o->list) {
        fprintf(stderr, "clt-info: --json and --list exclude each other\n");
        return 1;
    }
    if (o->resources && (o->json || o->list)) {
        fprintf(stderr, "clt-info: --resources excludes --json and --list\n");
        return 1;
    }
    if (o->isa_report && !o->resources) {
        fprintf(stderr, "clt-info: --isa-report goes with --resources\n");
        return 1;
    }
    return 0;
}

/* Whether a context opens on device `index` (every device is listed; some may refuse, e.g. a driver
 * that lists a device it cannot drive). "" when it opens, else the reason. */
static void device_usable(int index, char *why, size_t cap) {
    char sel[16];
    snprintf(sel, sizeof sel, "%d", index);
    clt_context_options opts;
    clt_context_options_init(&opts);
    opts.device = sel;
    clt_context *ctx = NULL;
    why[0] = '\0';
    if (clt_context_create(&opts, &ctx) != CLT_SUCCESS)
        snprintf(why, cap, "%s", clt_last_error(NULL));
    clt_context_free(ctx);
}

static int fail(const char *what, clt_status st, const clt_context *ctx) {
    fprintf(stderr, "clt-info: %s: %s: %s\n", what, clt_status_string(st), clt_last_error(ctx));
    return 1;
}

int main(int argc, char **argv) {
    info_options o = {0};
    if (parse_args(argc, argv, &o) != 0)
        return 1;
    if (o.resources)
        return info_resources(o.device, o.profile, o.isa_report);

    int count = 0;
    clt_status st = clt_device_count(&count);
    if (st != CLT_SUCCESS)
        return fail("clt_device_count", st, NULL);
    if (count == 0) {
        fprintf(stderr, "clt-info: no OpenCL devices found (is an ICD installed? see clinfo -l)\n");
        return 1;
    }
    clt_device_info *devs = calloc((size_t)count, sizeof *devs);
    if (!devs) {
        fprintf(stderr, "clt-info: out of host memory\n");
        return 1;
    }
    for (int i = 0; i < count; i++) {
        st = clt_device_get_info(i, &devs[i]);
        if (st != CLT_SUCCESS) {
            free(devs);
            return fail("clt_device_get_info", st, NULL);
        }
    }

    if (o.list) {
        for (int i = 0; i < count; i++)
            printf("%d %d:%d %s %s / %s\n", devs[i].global_index, devs[i].platform_index,
                   devs[i].device_index, type_name(devs[i].type), devs[i].platform_name,
                   devs[i].device_name);
        free(devs);
        return 0;
    }

    int selected = -1;
    st = clt_device_select(o.device, &selected);
    if (st != CLT_SUCCESS) {
        free(devs);
        return fail("clt_device_select", st, NULL);
    }

    clt_context_options opts;
    clt_context_options_init(&opts);
    if (o.device)
        opts.device = o.device;
    if (o.profile)
        opts.profile = o.profile;
    clt_context *ctx = NULL;
    clt_context_limits limits;
    clt_program_cache_stats cache;
    char dispatch[2048] = "";
    clt_tuning_info tuning;
    memset(&tuning, 0, sizeof tuning);
    memset(&limits, 0, sizeof limits);
    memset(&cache, 0, sizeof cache);
    const char *failed = NULL;
    st = clt_context_create(&opts, &ctx);
    if (st == CLT_ERR_INVALID_ARGUMENT) { /* a bad --profile (or environment value): nothing to show */
        free(devs);
        return fail("clt_context_create", st, NULL);
    }
    if (st != CLT_SUCCESS)
        failed = "clt_context_create";
    else if ((st = clt_context_get_limits(ctx, &limits)) != CLT_SUCCESS)
        failed = "clt_context_get_limits";
    else if ((st = clt_program_cache_get_stats(ctx, &cache)) != CLT_SUCCESS)
        failed = "clt_program_cache_get_stats";
    else if ((st = clt_context_describe_dispatch(ctx, dispatch, sizeof dispatch)) != CLT_SUCCESS)
        failed = "clt_context_describe_dispatch";
    else if ((st = clt_context_get_tuning(ctx, &tuning)) != CLT_SUCCESS)
        failed = "clt_context_get_tuning";

    if (o.json) {
        printf("{\"version\":");
        json_out_string(stdout, clt_version_string());
        printf(",\"devices\":[");
        for (int i = 0; i < count; i++) {
            if (i)
                printf(",");
            print_device_json(&devs[i]);
        }
        printf("],\"selected\":%d,\"context\":", selected);
        if (failed) {
            printf("null,\"error\":");
            json_out_string(stdout, clt_last_error(ctx));
        } else {
            print_context_json(&limits, &cache, dispatch, &tuning);
        }
        printf("}\n");
    } else {
        printf("cltensor %s\n", clt_version_string());
        int last_platform = -1;
        for (int i = 0; i < count; i++) {
            if (devs[i].platform_index != last_platform) {
                last_platform = devs[i].platform_index;
                printf("\nPlatform %d: %s (%s)\n", last_platform, devs[i].platform_name,
                       devs[i].platform_version);
            }
            print_device_text(&devs[i], i == selected);
            char why[256];
            device_usable(i, why, sizeof why);
            printf("      usable            %s%s\n", why[0] ? "no: " : "yes (a context opens)", why);
        }
        if (!failed)
            print_context_text(&devs[selected], &limits, &cache, dispatch);
    }

    int rc = 0;
    if (failed)
        rc = fail(failed, st, ctx);
    clt_context_free(ctx);
    free(devs);
    return rc;
}
