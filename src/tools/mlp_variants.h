/* A representative set of fused-MLP programs for the kernel ISA check: the fused kernels take
 * their options per network (widths, activations, offsets), so no list can be complete; these are
 * the PINN network of BENCHMARKS.md at every hidden width the bench measures, every activation on
 * the identity encoding, narrow networks (16 and 32 columns), each in the shapes the device
 * selects (big tiles, and on GPUs the small ones), and the optimizer kernel. Internal. */
#ifndef CLT_MLP_VARIANTS_H
#define CLT_MLP_VARIANTS_H

#include "tools/variant_types.h"

clt_status clt__mlp_variants(clt_context *ctx, clt__variant_use use, clt__variant_list *l,
                             clt__variant_add_fn add);

#endif
