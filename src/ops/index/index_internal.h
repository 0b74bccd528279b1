/* What the index family's files share. Internal. */
#ifndef CLT_INDEX_INTERNAL_H
#define CLT_INDEX_INTERNAL_H

#include "cltensor_index.h"
#include "ops/common/strided.h"

#define CLT__INDEX_FAMILY "index"

/* Run kernel `name` (arguments: dst, src, the description, the index buffer) over s->count items
 * in a 1-D grid; options are the build options ("" for the defaults). */
clt_status clt__index_run(clt_context *ctx, const char *name, cl_mem dst, cl_mem src,
                          const clt__sd *s, cl_mem index, const char *who);
/* The same over `items` work items (a kernel that takes several elements per item). */
clt_status clt__index_run_items(clt_context *ctx, const char *name, cl_mem dst, cl_mem src,
                                const clt__sd *s, cl_mem index, uint64_t items, const char *who);
static inline int64_t clt__elem_off(const clt_tensor *t) { return (int64_t)(t->offset / 4); }

#endif
