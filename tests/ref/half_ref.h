/* Plain-C reference for IEEE binary16 conversions, used to check f16 storage paths. */
#ifndef CLT_REF_HALF_REF_H
#define CLT_REF_HALF_REF_H

#include <stdint.h>

/* float -> binary16 bits, round to nearest, ties to even; overflow gives infinity, NaN stays NaN. */
uint16_t ref_float_to_half(float f);
/* binary16 bits -> float (exact). */
float ref_half_to_float(uint16_t h);
/* Non-zero when h encodes a NaN. */
int ref_half_is_nan(uint16_t h);

#endif
