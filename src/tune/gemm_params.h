/* Per-device-class parameters of our GEMM kernels (cl_kernels/gemm*.cl) and the size thresholds that
 * choose between them. Chosen from the device's vendor/type and the context's profile: the gfx902
 * profile selects the AMD table on any device. Internal. */
#ifndef CLT_GEMM_PARAMS_H
#define CLT_GEMM_PARAMS_H

#include <stddef.h>

#include "runtime/runtime.h"
#include "tune/dispatch_common.h"

/* gemm_tiled.cl: MWG x NWG tile per work-group of MDIMC x NDIMC items, K staged KWG at a time. */
typedef struct clt__gemm_tiled_cfg {
    int mwg, nwg, kwg, mdimc, ndimc, vw, db;
} clt__gemm_tiled_cfg;

/* gemm_cpu.cl: rpi rows x nv columns per work item, `local` items per work-group. */
typedef struct clt__gemm_cpu_cfg {
    int rpi, nv, local;
} clt__gemm_cpu_cfg;

#define CLT_GEMM_MAX_TILED_CFGS 5

typedef struct clt__gemm_table {
    const char *name;        /* "nvidia", "amd", "cpu", "default" */
    int prefer_cpu;          /* big shapes go to gemm_cpu, not gemm_tiled */
    int n_tiled;
    clt__gemm_tiled_cfg tiled[CLT_GEMM_MAX_TILED_CFGS]; /* largest first */
    clt__gemm_cpu_cfg cpu;
    int small_lx, small_ly;  /* local size of gemm_small */
    int gemv_f, gemv_s;      /* local size of gemm_gemv (fast dim, slow dim) */
    double small_volume;     /* m * n * k at or below which gemm_small is used */
    int skinny;              /* m or n at or below which gemm_small is used */
    int warp_cols;           /* gemm_tiled.cl TXW: items along n in one 32-wide warp (0: a row of NDIMC) */
} clt__gemm_table;

/* The table in force on ctx: the tuning file's merge (tuning_file.h) when one is in force, else the
 * built-in table. Never NULL. */
const clt__gemm_table *clt__gemm_table_for(const clt_context *ctx);
/* The built-in table for ctx's device class and profile. Never NULL. */
const clt__gemm_table *clt__gemm_table_builtin(const clt_context *ctx);
/* The built-in table of device class c, whatever the device (tests pin the NVIDIA one on POCL). */
const clt__gemm_table *clt__gemm_table_of_class(clt__device_class c);

/* "-DMWG=.. -DNWG=.. ..." in a fixed order (part of the program cache key). */
void clt__gemm_tiled_options(const clt__gemm_tiled_cfg *c, char *buf, size_t cap);
void clt__gemm_cpu_options(const clt__gemm_cpu_cfg *c, char *buf, size_t cap);

/* The TXW to build config c with under table t: t->warp_cols when the config can take it (it
 * divides NDIMC and 32, 32 / TXW divides MDIMC, whole warps), else 0 (the default layout). */
int clt__gemm_tiled_warp_cols(const clt__gemm_table *t, const clt__gemm_tiled_cfg *c);

/* Local memory a tiled config needs, in bytes; its work-group size. */
size_t clt__gemm_tiled_local_bytes(const clt__gemm_tiled_cfg *c);
int clt__gemm_tiled_wg(const clt__gemm_tiled_cfg *c);

#endif
