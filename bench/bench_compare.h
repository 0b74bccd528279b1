/* clt-bench --compare: joins JSON-lines results of several runs (cltensor, the PyTorch peer, other
 * devices) into one markdown table: per case the time of every run, who is fastest and by how much. */
#ifndef BENCH_COMPARE_H
#define BENCH_COMPARE_H

#include <stdio.h>

/* Prints the table to out and, when png is not NULL, draws it there with gnuplot (Debian's
 * gnuplot-nox; only this option needs it). Returns 0, or -1 when a file cannot be read or the chart
 * cannot be drawn (message on stderr). */
int bench_compare(int nfiles, char *const *files, const char *png, FILE *out);

#endif
