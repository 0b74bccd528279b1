/* The AMD ISA check's resource table ($ISA_OUT/<target>/resources.tsv, written by
 * tests/isa/amd_isa_check.sh) read back for clt-info --resources. The file is untrusted input: only
 * a regular file is read (opened without blocking, so a FIFO or device is refused, not waited on),
 * at most CLT__ISA_FILE_MAX bytes, lines at most CLT__ISA_LINE_MAX, every field checked; the first
 * problem rejects the file with a message naming the path, the line and the field. */
#ifndef CLT_ISA_REPORT_H
#define CLT_ISA_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "tools/variant_types.h"

#define CLT__ISA_FILE_MAX (16L << 20)
#define CLT__ISA_LINE_MAX 2048

typedef struct clt__isa_row {
    int index;    /* the variant's index in clt-kernels --list --profile <target> */
    int selected; /* 1 selected, 0 compile-only */
    char program[48];
    char kernel[128];
    long vgpr, sgpr, scratch, vgpr_spill, sgpr_spill, lds_bytes, occupancy;
    char options[1024]; /* full build options (base + the family's) */
    int stale;          /* the current tables no longer select (program, options) */
} clt__isa_row;

typedef struct clt__isa_report {
    char target[16];
    clt__isa_row *rows;
    int n, cap;
    int missing; /* variants the current tables select that have no row (set by mark_stale) */
} clt__isa_report;

enum { CLT__ISA_OK = 0, CLT__ISA_ABSENT = 1, CLT__ISA_BAD = 2 };

/* Reads path, whose first line must name target. CLT__ISA_OK; CLT__ISA_ABSENT when the file does
 * not exist; CLT__ISA_BAD otherwise, with the reason ("<path>: line 3: field vgpr: ...") in err. */
int clt__isa_report_read(const char *path, const char *target, clt__isa_report *r, char *err,
                         size_t errcap);
void clt__isa_report_free(clt__isa_report *r);

/* Marks rows whose (program, options) the list l no longer has as stale (base: the base build
 * options that the list's entries are prefixed with, as clt-kernels --list prints them) and
 * counts l's variants without a row in r->missing. Returns the number of stale rows. */
int clt__isa_report_mark_stale(clt__isa_report *r, const clt__variant_list *l, const char *base);

/* The table (STALE marked) and a summary line naming path. */
void clt__isa_report_print(FILE *f, const clt__isa_report *r, const char *path);

#endif
