/* ISA targets and their planning context; see isa_targets.h. */
#include "tools/isa_targets.h"

#include <stdio.h>
#include <string.h>

#include "program/program.h"

/* gfx902 is the library's device profile; gfx90a and gfx1030 (wave 32) reuse its tables with their
 * own wave. */
static const clt__isa_target targets[] = {{"gfx902", 64}, {"gfx90a", 64}, {"gfx1030", 32}};
#define AMD_MAX_WG 256      /* ROCm's default CL_KERNEL_WORK_GROUP_SIZE without reqd_work_group_size */
#define AMD_LDS_BYTES 65536 /* per work-group, all three targets */

const clt__isa_target *clt__isa_target_named(const char *name)
{
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++)
        if (!strcmp(targets[i].name, name))
            return &targets[i];
    return NULL;
}

clt_status clt__isa_open_context(const char *tool, const char *device, const clt__isa_target *t,
                                 clt_context **ctx)
{
    clt_context_options o;
    clt_context_options_init(&o);
    o.device = device;
    o.profile = t ? "gfx902" : "native";
    o.cache_dir = "off";
    clt_status st = clt_context_create(&o, ctx);
    if (st != CLT_SUCCESS) {
        fprintf(stderr, "%s: %s\n", tool, clt_last_error(NULL));
        return st;
    }
    if (t) { /* the target's limits, whatever the local device has (nothing is run here) */
        (*ctx)->limits.wave_width = t->wave;
        (*ctx)->limits.max_work_group_size = AMD_MAX_WG;
        (*ctx)->limits.local_mem_budget = AMD_LDS_BYTES;
        char want[32];
        snprintf(want, sizeof want, "-DCLT_WAVE=%u ", t->wave);
        if (!strstr(clt__base_build_options(*ctx), want)) {
            fprintf(stderr, "%s: base options fixed before the target's limits: %s\n", tool,
                    clt__base_build_options(*ctx));
            clt_context_free(*ctx);
            *ctx = NULL;
            return CLT_ERR_UNSUPPORTED;
        }
    }
    return CLT_SUCCESS;
}
