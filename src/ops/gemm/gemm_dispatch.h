/* GEMM dispatch: which implementation runs a validated problem. ctx->limits.gemm_impl forces
 * "tiled" or "clblast"; "auto" decides from a small per-device-class rule table (gemm_dispatch.c).
 * Whatever is chosen, CLT_ERR_UNSUPPORTED from it sends the problem to the other one. */
#ifndef CLT_GEMM_DISPATCH_H
#define CLT_GEMM_DISPATCH_H

#include "ops/gemm/gemm.h"
#include "ops/gemm/gemm_tables.h"

typedef enum clt__gemm_impl { CLT_GEMM_IMPL_TILED = 0, CLT_GEMM_IMPL_CLBLAST = 1 } clt__gemm_impl;

/* The rule auto uses on ctx: the tuning file's (tuning_file.h) when one is in force, else the
 * built-in row. */
const clt__gemm_rule *clt__gemm_rule_for(const clt_context *ctx);
/* The built-in row for ctx's device and profile. */
const clt__gemm_rule *clt__gemm_rule_builtin(const clt_context *ctx);

/* The implementation the context's setting and the rule pick for p (before any fallback). */
clt__gemm_impl clt__gemm_choose(const clt_context *ctx, const clt__gemm_problem *p);

const char *clt__gemm_impl_name(clt__gemm_impl impl);

/* Run p (m, n, batch >= 1) on the chosen implementation, falling back on CLT_ERR_UNSUPPORTED. */
clt_status clt__gemm_dispatch(clt_context *ctx, const clt__gemm_problem *p, const char *who);

#endif
