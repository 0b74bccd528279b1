/* The types of GEMM's dispatch rule and kernel-parameter table, apart from the code that fills and
 * reads them, so the tuning file (tune/tuning_file.h) can hold a family's overrides without including
 * the family's code. Types only. Internal. */
#ifndef CLT_GEMM_TABLES_H
#define CLT_GEMM_TABLES_H

#include "runtime/runtime.h"

/* One row of the auto table. A problem goes to CLBlast when all of m, n, k are at least
 * clblast_min_dim and 2*m*n*k*batch is at least clblast_min_flop; clblast_min_dim = 0 means never.
 * The first row whose vendor, device type and name substring match the device (or the profile)
 * wins; the last row is the default. A tuner may later replace rows from measurements. */
typedef struct clt__gemm_rule {
    const char *label;        /* shown by clt-info and in logs: "nvidia" */
    const char *profile;      /* match this device profile (e.g. "gfx902"), or NULL */
    clt_vendor vendor;        /* CLT_VENDOR_OTHER: any */
    clt_device_type type;     /* CLT_DEVICE_OTHER: any */
    const char *name_contains; /* substring of the device name, or NULL */
    int64_t clblast_min_dim;
    double clblast_min_flop;
} clt__gemm_rule;

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

#endif
