/* Every (kernel program, build options) pair the dispatch tables can select on a context, for the
 * kernel ISA check (tests/isa/amd_isa_check.sh) and the NVIDIA build-log report (clt-kernels). Built
 * from the families' own tables and option formatters (src/ops/<family>/..._params.c), so a table
 * change is seen by the check. Internal (links the static library). */
#ifndef CLT_KERNEL_VARIANTS_H
#define CLT_KERNEL_VARIANTS_H

#include "runtime/runtime.h"

/* Whether the context's own device class selects the variant ("selected": the resource rules
 * apply) or it belongs to another class's table that the program still has to build for this
 * target ("compile-only": CPU-class kernels on an AMD profile). */
typedef enum clt__variant_use { CLT__VARIANT_SELECTED, CLT__VARIANT_COMPILE_ONLY } clt__variant_use;

typedef struct clt__variant {
    clt__variant_use use;
    char program[48];  /* "gemm_tiled", or "expr:<label>" for a generated source */
    char options[320]; /* the family's options, as the program cache keys on them (no base part) */
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

/* Fill list with ctx's variants (distinct (program, options, source) only). cpu_too adds the CPU
 * class's variants as compile-only when ctx's class is not CPU. */
clt_status clt__list_variants(clt_context *ctx, int cpu_too, clt__variant_list *list);
void clt__variant_list_free(clt__variant_list *list);

/* The full source of variant v on ctx (the family .cl with its includes inlined, or the generated
 * text), heap for the caller to free. */
clt_status clt__variant_source(clt_context *ctx, const clt__variant *v, char **out);

#endif
