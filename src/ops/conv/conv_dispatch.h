/* Conv2D dispatch: which implementation runs a validated forward problem. ctx->limits.conv_impl
 * forces "tiled" (ours) or "clblast" (im2col + CLBlast GEMM); "auto" decides from a small
 * per-device-class rule table (conv_dispatch.c). Whatever is chosen, CLT_ERR_UNSUPPORTED from it
 * sends the problem to the other one. */
#ifndef CLT_CONV_DISPATCH_H
#define CLT_CONV_DISPATCH_H

#include "ops/conv/conv2d.h"
#include "ops/conv/conv_tables.h"

typedef enum clt__conv_impl { CLT_CONV_IMPL_TILED = 0, CLT_CONV_IMPL_CLBLAST = 1 } clt__conv_impl;

/* The rule auto uses on ctx: the tuning file's, else the built-in table's. */
const clt__conv_rule *clt__conv_rule_for(const clt_context *ctx);
const clt__conv_rule *clt__conv_rule_builtin(const clt_context *ctx);
clt__conv_impl clt__conv_choose(const clt_context *ctx, const clt__conv_problem *p);
const char *clt__conv_impl_name(clt__conv_impl impl);

/* Run p (n >= 1) on the chosen implementation, falling back on CLT_ERR_UNSUPPORTED. */
clt_status clt__conv_dispatch(clt_context *ctx, const clt__conv_problem *p, const char *who);

#endif
