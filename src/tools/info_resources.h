/* clt-info --resources: the per-kernel resource table of the selected device or ISA target. */
#ifndef CLT_INFO_RESOURCES_H
#define CLT_INFO_RESOURCES_H

/* profile NULL: $CLT_DEVICE_PROFILE. An ISA target (gfx902, gfx90a, gfx1030): the AMD ISA check's
 * table read from isa_report (NULL: the default path, see info_resources.c), stale rows marked.
 * Otherwise the NVIDIA build-log table of device's variants, or one line saying the device has
 * none. Returns the exit status. */
int info_resources(const char *device, const char *profile, const char *isa_report);

#endif
