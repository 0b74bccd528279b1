/* The type of Conv2D's dispatch rule, apart from the code that fills and reads it, so the tuning
 * file (tune/tuning_file.h) can hold the family's override without including the family's code.
 * Types only. Internal. */
#ifndef CLT_CONV_TABLES_H
#define CLT_CONV_TABLES_H

#include "runtime/runtime.h"

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

#endif
