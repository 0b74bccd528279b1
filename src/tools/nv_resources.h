/* NVIDIA build logs (-cl-nv-verbose: ptxas' -v lines) parsed into one row per kernel: registers,
 * shared memory, stack frame, spill stores and loads. Pure text work, no OpenCL: clt-kernels
 * --nv-report and clt-info --resources feed it the driver's log of each variant; the Check suite
 * nv_resources feeds it canned text. The log is untrusted: lines are bounded, numbers range-checked,
 * and what does not parse is counted, never fatal. */
#ifndef CLT_NV_RESOURCES_H
#define CLT_NV_RESOURCES_H

#include <stddef.h>
#include <stdio.h>

#define CLT__NV_LINE_MAX 1024   /* longer lines are skipped and counted as over-long */
#define CLT__NV_NAME_MAX 128    /* kernel and program names, with the terminator */
#define CLT__NV_ROWS_MAX 100000 /* a log claiming more kernels than this is cut there */

typedef struct clt__nv_row {
    int variant;                  /* the variant's index in its tool's list, -1 when unknown */
    char program[CLT__NV_NAME_MAX];
    char kernel[CLT__NV_NAME_MAX];
    char arch[16];                /* "sm_90a" */
    long registers;               /* -1: the log did not say (likewise below) */
    long barriers;
    long smem;                    /* bytes of static shared memory */
    long stack;                   /* bytes of stack frame per thread */
    long spill_stores, spill_loads;
} clt__nv_row;

typedef struct clt__nv_table {
    clt__nv_row *rows;
    int n, cap;
    int variants;        /* distinct variants seen (clt__nv_begin_variant calls or "== " headers) */
    int build_failures;  /* variants marked failed */
    int malformed;       /* ptxas lines that did not parse */
    int over_long;       /* lines over CLT__NV_LINE_MAX, skipped */
    int out_of_memory;   /* rows lost to allocation failure or CLT__NV_ROWS_MAX */
    /* parser state */
    int variant;
    char program[CLT__NV_NAME_MAX];
    int props_row;       /* row that the next "stack frame" line belongs to, -1: none */
} clt__nv_table;

void clt__nv_table_init(clt__nv_table *t);
void clt__nv_table_free(clt__nv_table *t);

/* The rows that follow belong to variant index of program (either may be -1 / NULL). failed
 * counts a build failure. */
void clt__nv_begin_variant(clt__nv_table *t, int index, const char *program, int failed);

/* Feeds one line (no newline needed, len bytes, need not be terminated). Also understands the
 * report's own "== <index> <program> <options>[  BUILD FAILED]" headers, so a saved
 * clt-kernels --nv-report --raw file parses whole. Returns 0 when used or ignored, 1 when a ptxas
 * line was malformed or the line over-long (counted in t). */
int clt__nv_parse_line(clt__nv_table *t, const char *line, size_t len);

/* Feeds a whole log: splits at '\n' (and "\r\n"), a final line without newline included. */
void clt__nv_parse_text(clt__nv_table *t, const char *text, size_t len);

/* Rows with spill stores or loads above zero. */
int clt__nv_kernels_with_spills(const clt__nv_table *t);

/* The table (one row per kernel, fixed columns), then the summary line:
 * "nv-resources: V variants, K kernels, S with spills, F build failures[, M malformed lines]...". */
void clt__nv_print_table(FILE *f, const clt__nv_table *t);
/* The same in pieces, for a report printed as it is built: the column header, rows [from, to). */
void clt__nv_print_header(FILE *f);
void clt__nv_print_rows(FILE *f, const clt__nv_table *t, int from, int to);
void clt__nv_print_summary(FILE *f, const clt__nv_table *t);

#endif
