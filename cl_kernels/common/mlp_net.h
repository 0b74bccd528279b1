/* The network both fused MLP kernel files (mlp_fused.cl, mlp_cpu.cl) are built for, from their
 * shared -D lists: NL layers, MLP_W (NL + 1 widths), MLP_ACT (NL activation codes: 0 identity,
 * 1 tanh, 2 relu, 3 sigmoid, 4 silu), MLP_POFF (layer l's W [in][out] then b [out] in the flat
 * parameters). mlp_act_grad: d act / d z from the output y (and the input z, which only silu
 * needs; its sigmoid is taken on the side that cannot overflow exp). */
#ifndef CLT_CL_MLP_NET_H
#define CLT_CL_MLP_NET_H

__constant int widths[NL + 1] = {MLP_W};
__constant int acts[NL] = {MLP_ACT};
__constant int poff[NL] = {MLP_POFF};

static inline float mlp_act_grad(int a, float y, float z)
{
    if (a == 1)
        return 1.0f - y * y;
    if (a == 2)
        return y > 0.0f ? 1.0f : 0.0f;
    if (a == 3)
        return y * (1.0f - y);
    if (a == 4) {
        const float s = z >= 0.0f ? 1.0f / (1.0f + exp(-z)) : exp(z) / (1.0f + exp(z));
        return s * (1.0f + z * (1.0f - s));
    }
    return 1.0f;
}

#endif
