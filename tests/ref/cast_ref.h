/* Reference dtype conversions for clt_cast and the 16-bit / TF32 GEMM tests, written independently
 * of the kernels: values go through double and one rint(), not through bit tricks. */
#ifndef CLT_CAST_REF_H
#define CLT_CAST_REF_H

#include <stdint.h>

#include "cltensor.h"

/* The binary floating-point pattern (sign, ebits exponent, mbits stored mantissa) nearest to v,
 * ties to even, overflow to infinity; v must not be NaN. f16: (10, 5), bf16: (7, 8). */
uint32_t ref_encode_binary(double v, int mbits, int ebits);
/* The value of such a pattern (NaN for NaN patterns). */
double ref_decode_binary(uint32_t bits, int mbits, int ebits);
/* v rounded to TF32 (10 stored mantissa bits, f32's exponent range), nearest, ties AWAY from zero
 * (cvt.rna.tf32.f32, as cuBLAS rounds); NaN and infinities unchanged. */
float ref_round_tf32(float v);

/* clt_cast's rules (include/cltensor_cast.h) on one element's bits (f32/i32: 32 bits; f16/bf16:
 * the low 16). */
uint32_t ref_cast_bits(clt_dtype from, uint32_t bits, clt_dtype to);

/* The value of a 16-bit element of dtype d (f16 or bf16) as a double. */
double ref_16bit_value(clt_dtype d, uint16_t bits);
/* The nearest 16-bit pattern of dtype d to the f32 v (clt_cast's rule). */
uint16_t ref_16bit_from_f32(clt_dtype d, float v);

#endif
