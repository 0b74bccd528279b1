/* The NVIDIA resource report of clt-kernels --nv-report and clt-info --resources: every variant the
 * context's own dispatch tables select, built with -cl-nv-verbose, the driver's log parsed into one
 * row per kernel (tools/nv_resources.h). Internal: links the static library (the tables are). */
#ifndef CLT_NV_REPORT_H
#define CLT_NV_REPORT_H

#include "runtime/runtime.h"

typedef struct clt__nv_report_options {
    const char *tool;    /* message prefix: "clt-kernels" */
    const char *program; /* only this program's variants, NULL: all */
    int shard, shards;   /* only variants whose index is shard modulo shards (0, 1: all) */
    int raw;             /* also print the raw ptxas lines under "== <index> <program> <options>" */
    const char *ptx_dir; /* non-NULL: write each built variant's PTX (the program binary) as
                            <ptx_dir>/<index>.ptx, to read with a local ptxas */
    const int *indexes;  /* non-NULL: only these variant indexes (n_indexes of them) */
    int n_indexes;
    const char *extra;   /* non-NULL: appended to every variant's options (A/B builds, e.g.
                            "-DCLT_REQD=0"); the report's header names it */
} clt__nv_report_options;

/* On an NVIDIA device: prints the header, [raw lines,] the table and the summary on stdout;
 * returns 1 when a variant failed to build or could not be listed, else 0. On another vendor's
 * device: one line saying there is no NVIDIA build log, returns 0. */
int clt__nv_report(clt_context *ctx, const clt__nv_report_options *o);

#endif
