/* Elementwise expressions: the prelude of every kernel the expression engine generates
 * (src/ops/expr_codegen.c). The engine prepends this file (with its includes inlined) to the
 * generated text, which defines
 *     inline float expr_f(<one float per used input>, <one float per used scalar>)
 * and one kernel, expr_kernel, in one of two layouts:
 *   flat:      every input has out's layout; each work item takes float4 chunks in a grid-stride
 *              loop (vector loads when every buffer starts 16-byte aligned, vload4 otherwise),
 *              then a scalar tail of numel % 4 elements;
 *   broadcast: the same float4 chunks for out and for inputs of out's layout; per element, the
 *              other inputs are read as in[0] (one element, hoisted), in[(i / D) % M]
 *              (contiguous over a run of dims), or through per-dim strides of the collapsed
 *              shape (general case).
 * Indices are uint when numel < 2^31, else ulong. Scalars are float arguments, so one compiled
 * kernel serves every scalar value.
 *
 * -D contract: none (CLT_WAVE / CLT_MAX_WG come from the base options, unused).
 */
#include "common/activations.h"

/* One rounding per operation, as in the C reference: no a*b+c contraction into fma. */
#pragma OPENCL FP_CONTRACT OFF

/* NaN in either operand gives NaN (OpenCL fmin/fmax would return the other operand). */
inline float clt_minf(float a, float b) { return isnan(a) || isnan(b) ? a + b : a < b ? a : b; }
inline float clt_maxf(float a, float b) { return isnan(a) || isnan(b) ? a + b : a > b ? a : b; }
