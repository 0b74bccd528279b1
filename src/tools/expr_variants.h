/* A representative set of expression-engine programs for the kernel ISA check: the engine generates
 * a source per expression structure and layout, so no list can be complete; these cover every node
 * kind (inputs, scalars, every unary op and its derivative, every binary op, where), broadcasting,
 * offset views, and the layouts the context selects. Internal. */
#ifndef CLT_EXPR_VARIANTS_H
#define CLT_EXPR_VARIANTS_H

#include "tools/variant_types.h"

clt_status clt__expr_variants(clt_context *ctx, int cpu, clt__variant_use use, clt__variant_list *l,
                              clt__variant_add_fn add);

#endif
