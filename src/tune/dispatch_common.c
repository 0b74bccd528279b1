/* Shared by the op dispatch tables (see dispatch_common.h). */
#include "tune/dispatch_common.h"

#include <stdlib.h>
#include <string.h>

int clt__rule_matches(const clt_context *ctx, const char *profile, clt_vendor vendor,
                      clt_device_type type, const char *name_contains)
{
    const clt_device_info *info = &ctx->dev->entry->info;
    if (profile)
        return strcmp(profile, ctx->limits.profile) == 0;
    if (strcmp(ctx->limits.profile, "native") != 0)
        return 0; /* another profile: only its own row or the default */
    return (vendor == CLT_VENDOR_OTHER || vendor == info->vendor) &&
           (type == CLT_DEVICE_OTHER || type == info->type) &&
           (!name_contains || clt__contains_nocase(info->device_name, name_contains));
}

clt__device_class clt__device_class_of(const clt_context *ctx)
{
    if (!strcmp(ctx->limits.profile, "gfx902"))
        return CLT__CLASS_AMD;
    const clt_device_info *info = &ctx->dev->entry->info;
    if (info->type == CLT_DEVICE_CPU)
        return CLT__CLASS_CPU;
    if (info->vendor == CLT_VENDOR_NVIDIA)
        return CLT__CLASS_NVIDIA;
    if (info->vendor == CLT_VENDOR_AMD)
        return CLT__CLASS_AMD;
    return CLT__CLASS_DEFAULT;
}

clt_status clt__run_with_fallback(clt_context *ctx, const char *op, const void *problem,
                                  const char *who, clt__impl first, clt__impl second)
{
    clt_status st = first.run(ctx, problem, who);
    if (st != CLT_ERR_UNSUPPORTED)
        return st;
    char *why = strdup(clt_last_error(ctx));
    if (clt__log_enabled())
        clt__log("%s: %s refused (%s), trying %s\n", who, first.name, why ? why : "?", second.name);
    st = second.run(ctx, problem, who);
    if (st == CLT_ERR_UNSUPPORTED) {
        char *why2 = strdup(clt_last_error(ctx));
        st = clt__fail(ctx, CLT_ERR_UNSUPPORTED,
                       "%s: no %s implementation takes this problem: %s: %s; %s: %s", who, op,
                       first.name, why ? why : "?", second.name, why2 ? why2 : "?");
        free(why2);
    }
    free(why);
    return st;
}
