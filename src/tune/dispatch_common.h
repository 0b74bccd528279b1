/* What the dispatch tables of every op share: matching a rule row to the device, the device class
 * that picks a kernel parameter table, and running one implementation with the other as fallback.
 * Internal. */
#ifndef CLT_DISPATCH_COMMON_H
#define CLT_DISPATCH_COMMON_H

#include "runtime/runtime.h"

/* Whether a table row matches ctx: a row naming a profile matches only that profile; other rows
 * only the native profile and then the device's vendor / type / name substring (CLT_VENDOR_OTHER,
 * CLT_DEVICE_OTHER, NULL: any). */
int clt__rule_matches(const clt_context *ctx, const char *profile, clt_vendor vendor,
                      clt_device_type type, const char *name_contains);

/* The parameter table class of ctx: the gfx902 profile is AMD on any device. */
typedef enum clt__device_class {
    CLT__CLASS_NVIDIA,
    CLT__CLASS_AMD,
    CLT__CLASS_CPU,
    CLT__CLASS_DEFAULT
} clt__device_class;
clt__device_class clt__device_class_of(const clt_context *ctx);

/* Run `first` on problem; when it returns CLT_ERR_UNSUPPORTED (having enqueued nothing that
 * matters) run `second`; when both refuse, one CLT_ERR_UNSUPPORTED message names both reasons.
 * `op` is the family for messages ("GEMM", "Conv2D"). */
typedef clt_status (*clt__impl_fn)(clt_context *ctx, const void *problem, const char *who);
typedef struct clt__impl {
    const char *name;
    clt__impl_fn run;
} clt__impl;
clt_status clt__run_with_fallback(clt_context *ctx, const char *op, const void *problem,
                                  const char *who, clt__impl first, clt__impl second);

#endif
