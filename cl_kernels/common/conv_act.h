/* Conv2D kernels' epilogue activation, chosen at run time: one program serves every activation of
 * the GEMM epilogue set (the switch is uniform and outside the K loop, so it costs nothing there,
 * while a -DACT per activation would multiply the programs to compile by 7). The numbers are
 * clt_unary_op values (include/cltensor_ops.h); anything else is the identity. */
#ifndef CLT_CONV_ACT_H
#define CLT_CONV_ACT_H

#include "common/activations.h"

static inline float conv_act(float v, int op, float alpha)
{
    switch (op) {
    case 12: return clt_act_tanh(v, alpha);
    case 13: return clt_act_sigmoid(v, alpha);
    case 14: return clt_act_relu(v, alpha);
    case 17: return clt_act_gelu_erf(v, alpha);
    case 18: return clt_act_gelu_tanh(v, alpha);
    case 19: return clt_act_silu(v, alpha);
    default: return v;
    }
}

#endif
