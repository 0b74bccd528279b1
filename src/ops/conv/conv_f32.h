/* f32 stand-ins for 16-bit Conv2D operands (conv_f32.c). Internal. */
#ifndef CLT_CONV_F32_H
#define CLT_CONV_F32_H

#include "tensor/tensor.h"

/* f16 or bf16. */
int clt__conv_is16(clt_dtype d);

/* The dtypes of a Conv2D call (forward and backward alike): lead (x, or dy) f32, f16 or bf16, out f32 or
 * lead's type; CLT_ERR_INVALID_DTYPE naming the tensor otherwise. The other input must have lead's type:
 * the caller checks it with its shape. */
clt_status clt__conv_check_dtypes(const clt_context *ctx, const char *who, const char *lead_name, clt_dtype lead,
                                  const char *out_name, clt_dtype out);

/* One Conv2D call on f32 tensors: inputs a and b, output out (the call's other arguments in arg). */
typedef clt_status (*clt__conv_f32_fn)(const clt_tensor *a, const clt_tensor *b, clt_tensor *out, const void *arg);

/* fn on f32 copies of the 16-bit inputs a and b (the widening is exact) into out, or into an f32
 * stand-in rounded into out afterwards (nearest, ties to even: clt_cast) when out is 16-bit. Every
 * stand-in is allocated before anything is enqueued and freed after (the pool reuses it; the in-order
 * queue runs the work already enqueued on it first). The caller has validated the call. */
clt_status clt__conv_via_f32(clt_context *ctx, const clt_tensor *a, const clt_tensor *b, clt_tensor *out,
                             clt__conv_f32_fn fn, const void *arg);

#endif
