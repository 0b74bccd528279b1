/* Results of clt-bench: one JSON line per case as soon as it is measured, and a markdown table of all
 * cases at the end. */
#ifndef BENCH_REPORT_H
#define BENCH_REPORT_H

#include <stdio.h>

#include "bench_cases.h"
#include "bench_timing.h"

typedef enum bench_outcome {
    BENCH_OK = 0,
    BENCH_NOT_IMPLEMENTED,
    BENCH_SKIPPED, /* not for this device (note says why) */
    BENCH_FAILED   /* note has the status and message */
} bench_outcome;

typedef struct bench_result {
    char name[64];
    bench_outcome outcome;
    bench_timing timing; /* BENCH_OK only */
    double work;
    bench_unit unit;
    char note[256];
} bench_result;

typedef struct bench_report {
    FILE *json;          /* where JSON lines go (stdout or the --json file) */
    const char *peer;    /* "cltensor" */
    const char *device;  /* device name */
    const char *profile; /* "native" / "gfx902" */
    bench_result *rows;
    int count, cap;
} bench_report;

void bench_report_init(bench_report *rep, FILE *json, const char *peer, const char *device,
                       const char *profile);
/* Write the JSON line of res and keep it for the table. Returns 0, or -1 when out of memory. */
int bench_report_add(bench_report *rep, const bench_result *res);
/* The markdown table of every row so far. */
void bench_report_table(const bench_report *rep, FILE *out);
void bench_report_free(bench_report *rep);


#endif
