/* Start-up costs a framework pays once per process: OpenCL driver initialisation, and creating a
 * context plus running its first kernel (the program compiled from source when the disk cache is
 * cold, loaded from it when warm). */
#ifndef BENCH_STARTUP_H
#define BENCH_STARTUP_H

#include "bench_report.h"

/* Creates env->ctx (and fills env->device / env->limits) while timing it. rows[0] is
 * "startup/driver_init", rows[1] "startup/context_first_kernel" with a note saying where the program
 * came from. On failure env->ctx is NULL and the status is returned. */
clt_status bench_startup(const clt_context_options *opts, bench_env *env, bench_result rows[2]);

#endif
