/* Every (kernel program, build options) pair the dispatch tables can select on a context, for the
 * kernel ISA check (tests/isa/amd_isa_check.sh) and the NVIDIA build-log report (clt-kernels). Built
 * from the families' own tables and option formatters (src/ops/<family>/..._params.c), so a table
 * change is seen by the check. Internal (links the static library). */
#ifndef CLT_KERNEL_VARIANTS_H
#define CLT_KERNEL_VARIANTS_H

#include "runtime/runtime.h"
#include "tools/variant_types.h"

/* Fill list with ctx's variants (distinct (program, options, source) only). cpu_too adds the CPU
 * class's variants as compile-only when ctx's class is not CPU. */
clt_status clt__list_variants(clt_context *ctx, int cpu_too, clt__variant_list *list);
void clt__variant_list_free(clt__variant_list *list);

/* The full source of variant v on ctx (the family .cl with its includes inlined, or the generated
 * text), heap for the caller to free. */
clt_status clt__variant_source(clt_context *ctx, const clt__variant *v, char **out);

#endif
