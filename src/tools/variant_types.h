/* The kernel variant list's types, shared by its makers (kernel_variants.c, expr_variants.c).
 * Internal. */
#ifndef CLT_VARIANT_TYPES_H
#define CLT_VARIANT_TYPES_H

#include "runtime/runtime.h"

/* Whether the context's own device class selects the variant ("selected": the resource rules
 * apply) or it belongs to another class's table that the program still has to build for this
 * target ("compile-only": CPU-class kernels on an AMD profile). */
typedef enum clt__variant_use { CLT__VARIANT_SELECTED, CLT__VARIANT_COMPILE_ONLY } clt__variant_use;

typedef struct clt__variant {
    clt__variant_use use;
    char program[48];  /* "gemm_tiled", or "expr:<label>" for a generated source */
    char options[640]; /* the family's options, as the program cache keys on them (no base part) */
    int launch_wg;     /* the work-group size the host launches it with when the table fixes one,
                          else 0 (then the host caps it by CL_KERNEL_WORK_GROUP_SIZE) */
    char *source;      /* generated source (expressions), heap; NULL: the family's .cl file */
} clt__variant;

typedef struct clt__variant_list {
    clt__variant *v;
    int n, cap;
} clt__variant_list;

/* Append a variant unless an equal one is listed (then a SELECTED use wins); takes source. */
typedef clt_status (*clt__variant_add_fn)(clt__variant_list *l, clt__variant_use use,
                                          const char *program, const char *options, int wg,
                                          char *source);

#endif
