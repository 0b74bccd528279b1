/* The AMD ISA targets of the kernel check (gfx902, gfx90a, gfx1030) and a context whose dispatch
 * tables and limits are those the library plans with there, on whatever device is present (nothing
 * is run on it): clt-kernels --list lists its variants, clt-info --resources checks an ISA report
 * against them. Internal (links the static library). */
#ifndef CLT_ISA_TARGETS_H
#define CLT_ISA_TARGETS_H

#include "runtime/runtime.h"

typedef struct clt__isa_target {
    const char *name;
    unsigned wave;
} clt__isa_target;

/* NULL when name is not an ISA target. */
const clt__isa_target *clt__isa_target_named(const char *name);

/* A context on device (NULL: the default selection) with program cache off: target NULL gives the
 * native profile, else the gfx902 profile with the target's wave, work-group cap and LDS. Failures
 * print one line "<tool>: ..." on stderr. */
clt_status clt__isa_open_context(const char *tool, const char *device, const clt__isa_target *t,
                                 clt_context **ctx);

#endif
