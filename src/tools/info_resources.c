/* clt-info --resources; see info_resources.h. Links the static library (as clt-kernels does): the
 * variant list comes from the families' internal dispatch tables, which no public call exposes,
 * and the report must list exactly what the tables select, not a copy of them. */
#include "tools/info_resources.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program/program.h"
#include "tools/isa_report.h"
#include "tools/isa_targets.h"
#include "tools/kernel_variants.h"
#include "tools/nv_report.h"

#ifndef CLT_ISA_REPORT_DIR /* the build tree's ISA_OUT of the amd_isa_* ctests (CMakeLists.txt) */
#define CLT_ISA_REPORT_DIR "isa"
#endif

static int amd_table(const char *device, const clt__isa_target *t, const char *isa_report)
{
    char path[4096];
    const char *dir = getenv("CLT_ISA_OUT");
    if (isa_report)
        snprintf(path, sizeof path, "%s", isa_report);
    else
        snprintf(path, sizeof path, "%s/%s/resources.tsv", dir && *dir ? dir : CLT_ISA_REPORT_DIR,
                 t->name);
    clt__isa_report r;
    char err[512];
    int st = clt__isa_report_read(path, t->name, &r, err, sizeof err);
    if (st == CLT__ISA_ABSENT) {
        printf("clt-info: no AMD ISA resource report for %s at %s: nothing to show (make one with "
               "ctest -R amd_isa_%s in the build tree, or tests/isa/amd_isa_check.sh CLT_KERNELS %s "
               "with ISA_OUT set)\n", t->name, path, t->name, t->name);
        return 0;
    }
    if (st != CLT__ISA_OK) {
        fprintf(stderr, "clt-info: ISA report %s\n", err);
        return 1;
    }
    clt_context *ctx;
    if (clt__isa_open_context("clt-info", device, t, &ctx) != CLT_SUCCESS) {
        clt__isa_report_free(&r);
        return 1;
    }
    clt__variant_list l;
    if (clt__list_variants(ctx, 1, &l) != CLT_SUCCESS) {
        fprintf(stderr, "clt-info: listing the %s variants: %s\n", t->name, clt_last_error(ctx));
        clt_context_free(ctx);
        clt__isa_report_free(&r);
        return 1;
    }
    clt__isa_report_mark_stale(&r, &l, clt__base_build_options(ctx));
    clt__isa_report_print(stdout, &r, path);
    clt__variant_list_free(&l);
    clt_context_free(ctx);
    clt__isa_report_free(&r);
    return 0;
}

int info_resources(const char *device, const char *profile, const char *isa_report)
{
    if (!profile || !*profile)
        profile = getenv("CLT_DEVICE_PROFILE");
    const clt__isa_target *t = profile && *profile ? clt__isa_target_named(profile) : NULL;
    if (t)
        return amd_table(device, t, isa_report);
    if (profile && *profile && strcmp(profile, "native") != 0) {
        fprintf(stderr, "clt-info: --resources: unknown profile \"%s\" (native, gfx902, gfx90a, gfx1030)\n",
                profile);
        return 1;
    }
    if (isa_report) {
        fprintf(stderr, "clt-info: --isa-report needs --profile gfx902, gfx90a or gfx1030\n");
        return 1;
    }
    clt_context *ctx;
    if (clt__isa_open_context("clt-info", device, NULL, &ctx) != CLT_SUCCESS)
        return 1;
    clt__nv_report_options o = {"clt-info", NULL, 0, 1, 0, NULL, NULL, 0, NULL};
    int rc = clt__nv_report(ctx, &o);
    clt_context_free(ctx);
    return rc;
}
