/* Build options of the random program (cl_kernels/random/random.cl), shared by random.c and the
 * kernel variant list (src/tools/kernel_variants.c). */
#ifndef CLT_RANDOM_OPTIONS_H
#define CLT_RANDOM_OPTIONS_H

#include "tune/dispatch_common.h"

/* cpu_device: the device is a CPU (random_normal_cpu and rnd_log under every profile, so that the
 * gfx902 profile on a CPU gives random_normal_cpu's bits); else NVIDIA takes rnd_log (cheaper
 * there than the built-in log) and AMD the built-in log. */
const char *clt__random_options(int cpu_device, clt__device_class cls);

#endif
