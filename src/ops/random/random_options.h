/* Build options of the random program (cl_kernels/random/random.cl), shared by random.c and the
 * kernel variant list (src/tools/kernel_variants.c). */
#ifndef CLT_RANDOM_OPTIONS_H
#define CLT_RANDOM_OPTIONS_H

/* cpu_device: the device is a CPU (adds random_normal_cpu, under every profile). Every device
 * builds with correctly rounded sqrt: with the kernels' own log and sin/cos, fma and no
 * contraction, a stream's bits are the same on every device and profile. */
const char *clt__random_options(int cpu_device);

#endif
