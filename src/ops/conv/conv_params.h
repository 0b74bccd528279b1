/* Per-device-class parameters of our Conv2D kernels (cl_kernels/conv2d*.cl). Chosen from the
 * device's vendor/type and the context's profile: the gfx902 profile selects the AMD table on any
 * device. Internal. */
#ifndef CLT_CONV_PARAMS_H
#define CLT_CONV_PARAMS_H

#include <stddef.h>

#include "runtime/runtime.h"
#include "tune/dispatch_common.h"

/* conv2d.cl (implicit GEMM): MWG x NWG tile per work-group of MDIMC x NDIMC items, K slices of KWG. */
typedef struct clt__conv_tiled_cfg {
    int mwg, nwg, kwg, mdimc, ndimc;
} clt__conv_tiled_cfg;

#define CLT_CONV_MAX_TILED_CFGS 4

typedef struct clt__conv_table {
    const char *name;  /* "nvidia", "amd", "cpu", "default" */
    int prefer_cpu;    /* the CPU-style direct kernel instead of the implicit GEMM */
    int n_tiled;
    clt__conv_tiled_cfg tiled[CLT_CONV_MAX_TILED_CFGS]; /* largest first */
    int cpu_rpi, cpu_local; /* conv2d_cpu.cl: channels per item, items per group */
    int direct_local;       /* conv2d_direct.cl: items per group */
    /* Winograd F(4x4, 3x3) (conv2d_winograd.c) chosen automatically for 3x3 / stride 1 /
     * dilation 1 / one group when Ci >= wino_min_ci, Co >= wino_min_co and N*Ho*Wo >=
     * wino_min_pixels; wino_min_ci = 0: never. */
    int wino_min_ci, wino_min_co;
    int64_t wino_min_pixels;
} clt__conv_table;

/* The table for ctx's device class and profile. Never NULL. */
const clt__conv_table *clt__conv_table_for(const clt_context *ctx);

/* "-DMWG=.. -DNWG=.. -DKWG=.. -DMDIMC=.. -DNDIMC=.. -DCHMAJOR=.." (part of the cache key). */
void clt__conv_tiled_options(const clt__conv_tiled_cfg *c, int chmajor, char *buf, size_t cap);
/* The table of device class c, whatever the device (the kernel ISA check lists the CPU class's
 * variants for every target). */
const clt__conv_table *clt__conv_table_of_class(clt__device_class c);

/* conv2d_backward.cl tiles (conv2d_backward_ours.c): grad-input 64 input channels x 128 (n, h, w)
 * columns, 4 x 8 per item; grad-weight 64 output channels x 64 (ci, ky, kx) columns, 4 x 4 per
 * item. 256 items per group either way. */
#define CLT__CONVB_DX_OPTS "-DTM=64 -DTN=128 -DTK=16 -DRM=4 -DRN=8"
#define CLT__CONVB_DW_OPTS "-DTM=64 -DTN=64 -DTK=16 -DRM=4 -DRN=4"

size_t clt__conv_tiled_local_bytes(const clt__conv_tiled_cfg *c);
int clt__conv_tiled_wg(const clt__conv_tiled_cfg *c);

#endif
