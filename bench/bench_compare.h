/* clt-bench --compare: joins JSON-lines results of several runs (cltensor, the PyTorch peer, other
 * devices) into one markdown table: per case the time of every run, who is fastest and by how much. */
#ifndef BENCH_COMPARE_H
#define BENCH_COMPARE_H

#include <stdio.h>

/* Returns 0, or -1 when a file cannot be read (message on stderr). */
int bench_compare(int nfiles, char *const *files, FILE *out);

#endif
