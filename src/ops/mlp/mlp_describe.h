/* The MLP family's dispatch as a line of text for clt-info (clt_context_describe_dispatch). */
#ifndef CLT_OPS_MLP_DESCRIBE_H
#define CLT_OPS_MLP_DESCRIBE_H

#include <stddef.h>

#include "runtime/runtime.h"

/* Writes (NUL-terminated, cut to size) which path a network takes on ctx. */
void clt__mlp_describe(const clt_context *ctx, char *buf, size_t size);

#endif
