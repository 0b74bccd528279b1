/* Elementwise expressions: the prelude of every kernel the expression engine generates
 * (src/ops/elementwise/expr_codegen.c). The engine prepends this file (with its includes inlined) to the
 * generated text, which defines
 *     static inline T expr_f(<one T per used input>, <one float per used scalar>)
 * (T = float, or floatW in the cpu layout) and one kernel, expr_kernel, in one of three layouts:
 *   flat:      every input has out's layout; each work item takes float4 chunks in a grid-stride
 *              loop (vector loads when every buffer starts 16-byte aligned, vload4 otherwise),
 *              then a scalar tail of numel % 4 elements;
 *   broadcast: the same float4 chunks for out and for inputs of out's layout; per element, the
 *              other inputs are read as in[0] (one element, hoisted), in[(i / D) % M]
 *              (contiguous over a run of dims), or through per-dim strides of the collapsed
 *              shape (general case).
 *   cpu:       (CPU devices, -DCLT_EW_VEC=W) expr_f works on floatW vectors (W consecutive
 *              elements per work item, no loop). POCL runs a work-group as a loop over its items and
 *              only vectorises scalar code across items when it is straight-line: a bounds check or a
 *              grid-stride loop defeats it, and calls to exp/tanh never vectorise that way. Explicit
 *              floatW values reach SLEEF's vector math instead, and the bounds check is made uniform:
 *              every group that lies wholly inside [0, n) takes the unchecked path, only the last
 *              one checks per item. Inputs in out's layout are read as floatW through typed pointers
 *              (vloadW is much slower on POCL) when every offset is a multiple of W. Broadcast
 *              inputs cost one index division per chunk, not per element: a chunk inside one run
 *              of D reads one element, inside one period of M a contiguous vloadW, inside one
 *              innermost row (general case) lanes o + l * stride; chunks across such a boundary
 *              are gathered lane by lane into a private array.
 * Indices are uint when numel < 2^31, else ulong. Scalars are float arguments, so one compiled
 * kernel serves every scalar value.
 *
 * Streaming stores (cpu layout, -DCLT_EW_NT=1, chosen by the host when the op's footprint exceeds
 * the device's cache): the aligned floatW store of out goes through clang's non-temporal store
 * (POCL compiles with clang; OpenCL C itself has no such store), which skips the read-for-ownership
 * of out's lines (numbers in src/ops/elementwise/expr_eval.c: add/16M -27%, relu/16M -30% on POCL; in cache
 * they lose, hence the threshold). No fence here: POCL signals a finished command with
 * locked instructions, which drain the write-combining buffers on x86.
 *
 * -D contract: CLT_EW_VEC (4, 8 or 16) selects the cpu layout and defines the clt_v* functions
 * below, the floatW versions of common/activations.h (same formulas, same NaN behaviour); without
 * it, nothing here is vector code (CLT_WAVE / CLT_MAX_WG come from the base options, unused).
 * CLT_EW_NT (0 / 1; 1 needs CLT_EW_VEC): streaming stores of out (plain stores without clang).
 */
#include "common/activations.h"

/* One rounding per operation, as in the C reference: no a*b+c contraction into fma. */
#pragma OPENCL FP_CONTRACT OFF

/* NaN in either operand gives NaN (OpenCL fmin/fmax would return the other operand). */
static inline float clt_minf(float a, float b) { return isnan(a) || isnan(b) ? a + b : a < b ? a : b; }
static inline float clt_maxf(float a, float b) { return isnan(a) || isnan(b) ? a + b : a > b ? a : b; }

#ifndef CLT_EW_NT
#define CLT_EW_NT 0 // 1: non-temporal floatW stores of out (cpu layout, aligned offsets)
#endif
#if CLT_EW_NT && !defined(CLT_EW_VEC)
#error "CLT_EW_NT needs CLT_EW_VEC"
#endif

#ifdef CLT_EW_VEC
#if CLT_EW_VEC == 4
#define CLT_VF float4
#define CLT_VLOAD vload4
#define CLT_VSTORE vstore4
#elif CLT_EW_VEC == 8
#define CLT_VF float8
#define CLT_VLOAD vload8
#define CLT_VSTORE vstore8
#elif CLT_EW_VEC == 16
#define CLT_VF float16
#define CLT_VLOAD vload16
#define CLT_VSTORE vstore16
#else
#error "CLT_EW_VEC must be 4, 8 or 16"
#endif

/* Store v as the q-th floatW of p (p's offset a multiple of W). */
#if CLT_EW_NT && defined(__clang__)
#define CLT_VSTREAM(q, p, v) __builtin_nontemporal_store((v), (__global CLT_VF *)(p) + (q))
#else
#define CLT_VSTREAM(q, p, v) (((__global CLT_VF *)(p))[q] = (v))
#endif

/* Vector twins of the scalar functions: select(else, then, cond) for every a ? b : c, with the
 * comparison written as in the scalar form so NaN takes the same branch. */
#define CLT_VK(c) ((CLT_VF)(c))

static inline CLT_VF clt_vminf(CLT_VF a, CLT_VF b)
{
    return select(select(b, a, a < b), a + b, isnan(a) | isnan(b));
}
static inline CLT_VF clt_vmaxf(CLT_VF a, CLT_VF b)
{
    return select(select(b, a, a > b), a + b, isnan(a) | isnan(b));
}
#define CLT_VBOOL(c) select(CLT_VK(0.0f), CLT_VK(1.0f), c)

static inline CLT_VF clt_vsigmoidf(CLT_VF x)
{
    CLT_VF e = exp(-fabs(x));
    return select(e / (1.0f + e), 1.0f / (1.0f + e), x >= 0.0f);
}
static inline CLT_VF clt_vsign(CLT_VF x)
{
    CLT_VF s = select(select(CLT_VK(0.0f), CLT_VK(-1.0f), x < 0.0f), CLT_VK(1.0f), x > 0.0f);
    return select(s, x, isnan(x));
}

static inline CLT_VF clt_vact_identity(CLT_VF x, CLT_VF alpha) { return x; }
static inline CLT_VF clt_vact_neg(CLT_VF x, CLT_VF alpha) { return -x; }
static inline CLT_VF clt_vact_abs(CLT_VF x, CLT_VF alpha) { return fabs(x); }
static inline CLT_VF clt_vact_sign(CLT_VF x, CLT_VF alpha) { return clt_vsign(x); }
static inline CLT_VF clt_vact_exp(CLT_VF x, CLT_VF alpha) { return exp(x); }
static inline CLT_VF clt_vact_log(CLT_VF x, CLT_VF alpha) { return log(x); }
static inline CLT_VF clt_vact_sqrt(CLT_VF x, CLT_VF alpha) { return sqrt(x); }
static inline CLT_VF clt_vact_rsqrt(CLT_VF x, CLT_VF alpha) { return rsqrt(x); }
static inline CLT_VF clt_vact_reciprocal(CLT_VF x, CLT_VF alpha) { return 1.0f / x; }
static inline CLT_VF clt_vact_square(CLT_VF x, CLT_VF alpha) { return x * x; }
static inline CLT_VF clt_vact_sin(CLT_VF x, CLT_VF alpha) { return sin(x); }
static inline CLT_VF clt_vact_cos(CLT_VF x, CLT_VF alpha) { return cos(x); }
static inline CLT_VF clt_vact_tanh(CLT_VF x, CLT_VF alpha) { return tanh(x); }
static inline CLT_VF clt_vact_sigmoid(CLT_VF x, CLT_VF alpha) { return clt_vsigmoidf(x); }
static inline CLT_VF clt_vact_relu(CLT_VF x, CLT_VF alpha) { return select(x, CLT_VK(0.0f), x < 0.0f); }
static inline CLT_VF clt_vact_leaky_relu(CLT_VF x, CLT_VF alpha) { return select(x, alpha * x, x < 0.0f); }
static inline CLT_VF clt_vact_elu(CLT_VF x, CLT_VF alpha)
{
    return select(x, alpha * expm1(x), x < 0.0f);
}
static inline CLT_VF clt_vact_gelu_erf(CLT_VF x, CLT_VF alpha)
{
    return 0.5f * x * (1.0f + erf(x * CLT_RSQRT_2));
}
static inline CLT_VF clt_vact_gelu_tanh(CLT_VF x, CLT_VF alpha)
{
    CLT_VF u = CLT_SQRT_2_OVER_PI * (x + CLT_GELU_TANH_C * x * x * x);
    return 0.5f * x * (1.0f + tanh(u));
}
static inline CLT_VF clt_vact_silu(CLT_VF x, CLT_VF alpha) { return x * clt_vsigmoidf(x); }
static inline CLT_VF clt_vact_softplus(CLT_VF x, CLT_VF alpha)
{
    return fmax(x, 0.0f) + log1p(exp(-fabs(x)));
}
static inline CLT_VF clt_vact_hardswish(CLT_VF x, CLT_VF alpha)
{
    return x * clamp(x + 3.0f, 0.0f, 6.0f) / 6.0f;
}

static inline CLT_VF clt_vdact_identity(CLT_VF v, CLT_VF alpha) { return CLT_VK(1.0f); }
static inline CLT_VF clt_vdact_neg(CLT_VF v, CLT_VF alpha) { return CLT_VK(-1.0f); }
static inline CLT_VF clt_vdact_abs(CLT_VF v, CLT_VF alpha) { return clt_vsign(v); }
static inline CLT_VF clt_vdact_sign(CLT_VF v, CLT_VF alpha) { return CLT_VK(0.0f); }
static inline CLT_VF clt_vdact_exp(CLT_VF v, CLT_VF alpha) { return v; }
static inline CLT_VF clt_vdact_log(CLT_VF v, CLT_VF alpha) { return 1.0f / v; }
static inline CLT_VF clt_vdact_sqrt(CLT_VF v, CLT_VF alpha) { return 0.5f / sqrt(v); }
static inline CLT_VF clt_vdact_rsqrt(CLT_VF v, CLT_VF alpha) { return -0.5f * rsqrt(v) / v; }
static inline CLT_VF clt_vdact_reciprocal(CLT_VF v, CLT_VF alpha)
{
    CLT_VF r = 1.0f / v;
    return -(r * r);
}
static inline CLT_VF clt_vdact_square(CLT_VF v, CLT_VF alpha) { return 2.0f * v; }
static inline CLT_VF clt_vdact_sin(CLT_VF v, CLT_VF alpha) { return cos(v); }
static inline CLT_VF clt_vdact_cos(CLT_VF v, CLT_VF alpha) { return -sin(v); }
static inline CLT_VF clt_vdact_tanh(CLT_VF v, CLT_VF alpha) { return 1.0f - v * v; }
static inline CLT_VF clt_vdact_sigmoid(CLT_VF v, CLT_VF alpha) { return v * (1.0f - v); }
static inline CLT_VF clt_vdact_relu(CLT_VF v, CLT_VF alpha) { return CLT_VBOOL(v > 0.0f); }
static inline CLT_VF clt_vdact_leaky_relu(CLT_VF v, CLT_VF alpha)
{
    return select(alpha, CLT_VK(1.0f), v > 0.0f);
}
static inline CLT_VF clt_vdact_elu(CLT_VF v, CLT_VF alpha)
{
    return select(alpha * exp(v), CLT_VK(1.0f), v > 0.0f);
}
static inline CLT_VF clt_vdact_gelu_erf(CLT_VF v, CLT_VF alpha)
{
    CLT_VF cdf = 0.5f * (1.0f + erf(v * CLT_RSQRT_2));
    return cdf + v * CLT_RSQRT_2PI * exp(-0.5f * v * v);
}
static inline CLT_VF clt_vdact_gelu_tanh(CLT_VF v, CLT_VF alpha)
{
    CLT_VF u = CLT_SQRT_2_OVER_PI * (v + CLT_GELU_TANH_C * v * v * v);
    CLT_VF t = tanh(u);
    CLT_VF du = CLT_SQRT_2_OVER_PI * (1.0f + 3.0f * CLT_GELU_TANH_C * v * v);
    return 0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * du;
}
static inline CLT_VF clt_vdact_silu(CLT_VF v, CLT_VF alpha)
{
    CLT_VF s = clt_vsigmoidf(v);
    return s * (1.0f + v * (1.0f - s));
}
static inline CLT_VF clt_vdact_softplus(CLT_VF v, CLT_VF alpha) { return clt_vsigmoidf(v); }
static inline CLT_VF clt_vdact_hardswish(CLT_VF v, CLT_VF alpha)
{
    CLT_VF mid = select(CLT_VK(1.0f), (2.0f * v + 3.0f) / 6.0f, v <= 3.0f);
    return select(mid, CLT_VK(0.0f), v < -3.0f);
}
#endif
