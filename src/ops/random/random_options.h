/* Build options of the random program (cl_kernels/random/random.cl), shared by random.c and the
 * kernel variant list (src/tools/kernel_variants.c). */
#ifndef CLT_RANDOM_OPTIONS_H
#define CLT_RANDOM_OPTIONS_H

/* cpu_device: the device is a CPU (adds random_normal_cpu, under every profile). Every device
 * builds with correctly rounded sqrt: with the kernels' own log and sin/cos, fma and no
 * contraction, a stream's bits are the same on every device and profile. ilp: GPUs' RND_ILP. */
const char *clt__random_options(int cpu_device, int ilp);

/* Philox blocks per work item of the GPU random_uniform / random_normal (random.cl RND_ILP):
 * RANDOM_GPU_ILP, or CLT_RANDOM_ILP (1, 2, 4 or 8) for A/B runs. */
#define RANDOM_GPU_ILP 4 /* H200, 16M: uniform 34.2 -> 25.1 us (8: 24.5), normal 42.8 -> 38.5 */
int clt__random_ilp(void);

#endif
