/* Per-device-class parameters of our GEMM kernels (cl_kernels/gemm*.cl) and the size thresholds that
 * choose between them. Chosen from the device's vendor/type and the context's profile: the gfx902
 * profile selects the AMD table on any device. Internal. */
#ifndef CLT_GEMM_PARAMS_H
#define CLT_GEMM_PARAMS_H

#include <stddef.h>

#include "ops/gemm/gemm_tables.h"
#include "tune/dispatch_common.h"

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
