/**
 * @file
 * cltensor dtype conversion: clt_cast between f32, f16, bf16 and i32, one launch, the same bits on
 * every device (conversions are done on bit patterns, never by the device's 16-bit arithmetic).
 *
 * Rounding and special values:
 *   f16 -> f32, bf16 -> f32   exact (subnormals kept, NaN payload kept)
 *   f32 -> f16                nearest, ties to even; |x| >= 65520 -> inf; NaN -> quiet NaN 0x7E00
 *                             with x's sign (payload dropped)
 *   f32 -> bf16               nearest, ties to even; past the largest finite -> inf; NaN -> quiet
 *                             NaN, sign and top payload bits kept ((bits >> 16) | 0x0040)
 *   f16 <-> bf16              as through f32 (the widening is exact: one rounding)
 *   i32 -> f32 / f16 / bf16   nearest, ties to even, rounded once (never twice through f32)
 *   f32 / f16 / bf16 -> i32   toward zero, saturated to [INT32_MIN, INT32_MAX]; NaN -> 0
 *   same dtype                a copy of the bits
 * Includes cltensor.h only.
 */
#ifndef CLTENSOR_CAST_H
#define CLTENSOR_CAST_H

#include "cltensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/** dst = src converted to dst's dtype (rules above). Both of f32, f16, bf16, i32; the same element
 *  count (shapes may differ, as for clt_tensor_copy). dst may not overlap src (CLT_ERR_ALIASING;
 *  the same dtype over exactly the same elements is the identity: nothing is enqueued).
 *  Statuses: CLT_ERR_INVALID_ARGUMENT (NULL), CLT_ERR_CONTEXT_MISMATCH, CLT_ERR_INVALID_DTYPE
 *  (another dtype), CLT_ERR_INVALID_SHAPE (element counts differ), CLT_ERR_ALIASING. Enqueued only. */
CLT_API clt_status clt_cast(const clt_tensor *src, clt_tensor *dst);

#ifdef __cplusplus
}
#endif
#endif /* CLTENSOR_CAST_H */
