/* Device profiles: the limits a context plans with. "gfx902" narrows any device to what an AMD
 * Raven Ridge APU allows, so its code paths run (and are tested) on whatever device is present. */
#include <stdio.h>
#include <string.h>

#include "runtime/runtime.h"

#define GFX902_MAX_WORK_GROUP 256
#define GFX902_WAVE 64
#define GFX902_LDS_BYTES 65536

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

clt_status clt__profile_limits(const clt_device_info *info, const char *profile,
                               clt_context_limits *limits)
{
    if (!profile || !*profile || !strcmp(profile, "native")) {
        snprintf(limits->profile, sizeof limits->profile, "native");
        limits->max_work_group_size = info->max_work_group_size;
        limits->wave_width = info->preferred_work_group_multiple;
        limits->local_mem_budget = info->local_mem_bytes;
        limits->zero_copy = info->unified_memory;
        return CLT_SUCCESS;
    }
    if (!strcmp(profile, "gfx902")) {
        snprintf(limits->profile, sizeof limits->profile, "gfx902");
        limits->max_work_group_size = min_u64(GFX902_MAX_WORK_GROUP, info->max_work_group_size);
        limits->wave_width = GFX902_WAVE;
        /* Plan for the APU's LDS, but never for more than this device really has. */
        limits->local_mem_budget = min_u64(GFX902_LDS_BYTES, info->local_mem_bytes);
        limits->zero_copy = 1;
        return CLT_SUCCESS;
    }
    return clt__fail(NULL, CLT_ERR_INVALID_ARGUMENT,
                     "unknown device profile \"%s\" (expected \"native\" or \"gfx902\")", profile);
}
