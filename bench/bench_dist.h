/* clt-bench --suite dist (built with CLT_WITH_MPI): run under mpirun; see bench_dist.c. */
#ifndef BENCH_DIST_H
#define BENCH_DIST_H

/* 1 when argv asks for the dist suite (--suite dist, --suite=dist). */
int bench_dist_requested(int argc, char **argv);
/* The whole dist run (its own options, MPI_Init / MPI_Finalize); returns the exit status. */
int bench_dist_main(int argc, char **argv);

#endif
