/* Conv2D dispatch: which implementation runs a validated forward problem. ctx->limits.conv_impl
 * forces "tiled" (ours) or "clblast" (im2col + CLBlast GEMM); "auto" decides from a small
 * per-device-class rule table (conv_dispatch.c). Whatever is chosen, CLT_ERR_UNSUPPORTED from it
 * sends the problem to the other one. */
#ifndef CLT_CONV_DISPATCH_H
#define CLT_CONV_DISPATCH_H

#include "ops/conv2d.h"

typedef enum clt__conv_impl { CLT_CONV_IMPL_TILED = 0, CLT_CONV_IMPL_CLBLAST = 1 } clt__conv_impl;

/* One row of the auto table: a problem goes to CLBlast when clblast_min_flop > 0, its FLOPs are at
 * least clblast_min_flop, K = Ci_g*Kh*Kw is at least clblast_min_k and it is neither 1x1 nor one
 * input channel per group (those are a plain GEMM / a direct kernel in ours). Row matching as
 * gemm_dispatch.h: profile row, else vendor/type/name, the last row is the default. */
typedef struct clt__conv_rule {
    const char *label;
    const char *profile;
    clt_vendor vendor;
    clt_device_type type;
    const char *name_contains;
    double clblast_min_flop; /* 0: never */
    int64_t clblast_min_k;
} clt__conv_rule;

/* The rule auto uses on ctx: the tuning file's, else the built-in table's. */
const clt__conv_rule *clt__conv_rule_for(const clt_context *ctx);
const clt__conv_rule *clt__conv_rule_builtin(const clt_context *ctx);
clt__conv_impl clt__conv_choose(const clt_context *ctx, const clt__conv_problem *p);
const char *clt__conv_impl_name(clt__conv_impl impl);

/* Run p (n >= 1) on the chosen implementation, falling back on CLT_ERR_UNSUPPORTED. */
clt_status clt__conv_dispatch(clt_context *ctx, const clt__conv_problem *p, const char *who);

#endif
