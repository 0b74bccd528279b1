/* The GEMM epilogue as its own launch (cl_kernels/gemm/gemm_epilogue.cl), for implementations that
 * cannot fuse it: C = act(scale * C + bias) + residual, or (scale * C + bias) * dact'(y), over p's
 * batched, strided C matrices (bias, activation, residual / y taken from p). Internal. */
#ifndef CLT_GEMM_EPILOGUE_H
#define CLT_GEMM_EPILOGUE_H

#include "ops/gemm/gemm.h"

/* Non-zero when p has a bias, an activation or a residual (or a dact y). */
int clt__gemm_has_epilogue(const clt__gemm_problem *p);

/* One launch; read_c = 0 starts from zero (C is not read). Nothing is enqueued when the pass
 * would be the identity (read_c, scale 1, no epilogue). */
clt_status clt__gemm_epilogue_run(clt_context *ctx, const clt__gemm_problem *p, int read_c,
                                  float scale, const char *who);

#endif
