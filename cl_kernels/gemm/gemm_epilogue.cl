/* GEMM epilogue as a separate pass, for implementations that cannot fuse it (CLBlast), and the
 * whole k = 0 case there:  C = act(scale * C + bias) + residual  over `batch` C matrices, or
 * C = (scale * C + bias) * dact'(y) with y read through the residual arguments.
 *
 * Layout: row-major; element (b, i, j) of C is c[c_off + b*c_stride + i*ldc + j]; the residual
 * uses its own offset and ldr with C's batch stride; the bias is shared by every batch (bias[j]
 * per column or bias[i] per row). 64-bit indexing throughout.
 * Grid: dimension 0 walks columns (consecutive items touch consecutive elements: coalesced on GPUs,
 * vectorisable on POCL), dimension 1 walks the batch*m rows; both are grid-stride loops, so any
 * grid size works.
 *
 * Flags are run-time arguments, not -D options: this pass is memory-bound, so uniform branches
 * cost nothing measurable, and one program then serves every epilogue (no compile per variant).
 * mode bits: 0 read C (else start from 0: beta = 0 with k = 0, C is never read), 1-2 bias
 * (clt_bias_mode: 1 per column, 2 per row), 3 residual, 4-5 dact (1 tanh, 2 sigmoid, 3 relu: the
 * derivative from the forward output y = res[..]; never with bit 3 or an activation), 8-15 the
 * activation (EPI_* below).
 *
 * -D contract: none.
 */
#include "common/activations.h"

#define EPI_IDENTITY 0
#define EPI_RELU 1
#define EPI_GELU_ERF 2
#define EPI_GELU_TANH 3
#define EPI_TANH 4
#define EPI_SIGMOID 5
#define EPI_SILU 6

static inline float epi_act(uint act, float v, float alpha)
{
    switch (act) {
    case EPI_RELU: return clt_act_relu(v, alpha);
    case EPI_GELU_ERF: return clt_act_gelu_erf(v, alpha);
    case EPI_GELU_TANH: return clt_act_gelu_tanh(v, alpha);
    case EPI_TANH: return clt_act_tanh(v, alpha);
    case EPI_SIGMOID: return clt_act_sigmoid(v, alpha);
    case EPI_SILU: return clt_act_silu(v, alpha);
    default: return v;
    }
}

__kernel void gemm_epilogue(__global float *c, ulong c_off, ulong ldc, ulong c_stride, ulong m,
                            ulong n, ulong rows, float scale, float act_alpha, uint mode,
                            __global const float *bias, ulong bias_off, __global const float *res,
                            ulong res_off, ulong ldr)
{
    const int read_c = mode & 1u, bias_mode = (mode >> 1) & 3u, has_res = (mode >> 3) & 1u;
    const uint act = (mode >> 8) & 255u, dact = (mode >> 4) & 3u;
    for (ulong r = get_global_id(1); r < rows; r += get_global_size(1)) {
        ulong b = r / m, i = r - b * m;
        __global float *crow = c + c_off + b * c_stride + i * ldc;
        __global const float *rrow = res + res_off + b * c_stride + i * ldr;
        const float brow = bias_mode == 2 ? bias[bias_off + i] : 0.0f;
        for (ulong j = get_global_id(0); j < n; j += get_global_size(0)) {
            float v = read_c ? scale * crow[j] : 0.0f;
            v += bias_mode == 1 ? bias[bias_off + j] : brow;
            v = epi_act(act, v, act_alpha);
            if (has_res)
                v += rrow[j];
            if (dact)
                v *= dact == 1u ? clt_dact_tanh(rrow[j], 0.0f)
                     : dact == 2u ? clt_dact_sigmoid(rrow[j], 0.0f) : clt_dact_relu(rrow[j], 0.0f);
            crow[j] = v;
        }
    }
}
