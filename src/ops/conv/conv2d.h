/* Conv2D internals: the validated forward problem every implementation receives, and the
 * implementations. Validation (shapes, params, aliasing, contexts) is done once, in conv2d_api.c. */
#ifndef CLT_CONV2D_H
#define CLT_CONV2D_H

#include "ops/common/conv_geometry.h"

/* One validated forward convolution, n >= 1. Offsets in elements; bias NULL when there is none. */
typedef struct clt__conv_problem {
    clt__conv_geom g;
    cl_mem x, w, bias, out;
    uint64_t x_off, w_off, bias_off, out_off;
    clt_unary_op act;
    float act_alpha;
    /* 1: w holds the weights of the convolution this one transposes (Co x Ci x Kh x Kw of this
     * problem's Ci x Co, taps reversed), read in place: stride-1 grad-input. Only
     * clt__conv2d_winograd takes it. */
    int w_flipped;
} clt__conv_problem;

/* 2 * N * Co * Ho * Wo * Ci_g * Kh * Kw. */
double clt__conv_flop(const clt__conv_geom *g);

/* A 1x1, stride 1, unpadded, ungrouped convolution: a GEMM per image. */
int clt__conv_is_pointwise(const clt__conv_geom *g);

/* Our kernels (conv2d_ours.c): a GEMM for 1x1, the direct kernel for one input channel per group,
 * else the implicit GEMM (GPU) or the CPU-style direct kernel, by device class. One launch.
 * CLT_ERR_UNSUPPORTED when no variant fits the device or the shape (the caller falls back). */
clt_status clt__conv2d_ours(clt_context *ctx, const clt__conv_problem *p, const char *who);

/* The arguments of the direct-style forward kernels (conv2d.cl, conv2d_cpu.cl, conv2d_direct.cl,
 * conv2d_mma.cl): x, w, bias, out, offsets, geometry, (P, flags, K, extra), act_alpha. */
clt_status clt__conv_set_args(clt_context *ctx, const clt__conv_problem *p, cl_kernel k, int64_t extra,
                              const char *who);

/* Tensor cores (conv2d_mma.c): the implicit GEMM on mma.sync for TF32 / 3xTF32 math, one group.
 * CLT_ERR_UNSUPPORTED (nothing enqueued) on other devices, modes and shapes. */
clt_status clt__conv2d_mma(clt_context *ctx, const clt__conv_problem *p, const char *who);
/* CLT_CONV_MMA (conv2d_mma.c): "0" no tensor-core forward, "1" the mma.sync forms wherever they apply,
 * "gather" the gather form only (both of the latter make wgmma decline, so mma.sync is measured and
 * tested on Hopper too); unset or anything else automatic (wgmma where it applies, no mma.sync). */
typedef enum { CLT__CONV_MMA_AUTO, CLT__CONV_MMA_OFF, CLT__CONV_MMA_ON, CLT__CONV_MMA_GATHER } clt__conv_mma_setting;
clt__conv_mma_setting clt__conv_mma_env(void);
/* Hopper (conv2d_wgmma.c): the implicit GEMM on wgmma for TF32 math, one group, Ci near a multiple of 32.
 * CLT_ERR_UNSUPPORTED (nothing enqueued) on other devices, modes and shapes. */
clt_status clt__conv2d_wgmma(clt_context *ctx, const clt__conv_problem *p, const char *who);
/* Whether clt__conv2d_wgmma takes g (weights not flipped in place) when the workspace fits: the grad-input's
 * flipped forward (conv2d_backward_cpu.c) asks before choosing between it and Winograd reading w in place. */
int clt__conv2d_wgmma_takes(const clt_context *ctx, const clt__conv_geom *g);

/* Few input channels (conv2d_stem.c): Ci 1 .. 4, one group, windows up to 11 x 11, exact fp32 for
 * every math mode; a group stages its input patch and weights in local memory. CLT_ERR_UNSUPPORTED
 * (nothing enqueued) for other shapes, where the tile does not fit the device, or under CLT_CONV_STEM=0. */
clt_status clt__conv2d_stem(clt_context *ctx, const clt__conv_problem *p, const char *who);
/* The shapes both few-channel kernels (this one and conv2d_backward_stem.c's grad-weight) take: one group,
 * Ci <= 4, at most 121 taps (every tap is unrolled). */
int clt__conv_stem_shape(const clt__conv_geom *g);
/* Whether they unroll their loops: not on CPU devices (POCL, whatever the profile), where the unrolled body
 * compiled for 45 s a program and ran 10x slower; unrolling changes code size, not results. */
int clt__conv_stem_unroll(const clt_context *ctx);
/* Its program options (taps unrolled or not), items a group and groups for g; 0 where it declines g
 * (clt-kernels builds the options it lists through this too). */
int clt__conv_stem_options(const clt_context *ctx, const clt__conv_geom *g, int unroll, char *opts, size_t n,
                           size_t *wg, size_t *groups);

/* im2col (our kernel, into workspace slot 1) + CLBlast GEMM with the bias/activation epilogue
 * (conv2d_clblast.c). CLT_ERR_UNSUPPORTED when CLBlast refuses. */
clt_status clt__conv2d_clblast(clt_context *ctx, const clt__conv_problem *p, const char *who);

/* The same with CLBlast's GEMM (clblast = 1) or ours (0, clt__gemm_tiled: CPU devices use it as
 * ours, chunked to about the last-level cache). */
clt_status clt__conv2d_colgemm(clt_context *ctx, const clt__conv_problem *p, int clblast,
                               const char *who);

/* Column bytes per chunk of images on CPU devices (forward and weight gradient); a variable so
 * tests can force several chunks. */
extern uint64_t clt__conv_cpu_chunk_bytes;

/* Columns of images img0 .. img0 + nimg - 1 of p->x into col (from element 0): per image the
 * (Ci*Kh*Kw) x (Ho*Wo) matrix, zeros in the padding. The CPU-style kernel on CPU devices. */
clt_status clt__conv2d_im2col(clt_context *ctx, const clt__conv_problem *p, cl_mem col,
                              int64_t img0, int64_t nimg, const char *who);

/* Winograd F(4x4, 3x3) (conv2d_winograd.c): transform, batched GEMM (ours), output transform:
 * three launches per chunk of images (V + M + U capped at clt__conv_winograd_cap_bytes; a
 * variable so tests can force chunks). CLT_ERR_UNSUPPORTED when the shape does not apply or our
 * GEMM refuses (the caller falls back). */
clt_status clt__conv2d_winograd(clt_context *ctx, const clt__conv_problem *p, const char *who);
/* Whether clt__conv2d_ours takes Winograd for g (CLT_CONV_VARIANT, else the class thresholds). */
int clt__conv_winograd_chosen(const clt_context *ctx, const clt__conv_geom *g);
extern uint64_t clt__conv_winograd_cap_bytes;
/* 3x3, stride 1, dilation 1, one group. */
int clt__conv_winograd_applies(const clt__conv_geom *g);
/* CLT_SUCCESS when Winograd applies to g, else CLT_ERR_UNSUPPORTED with a message for `who`. */
clt_status clt__conv_winograd_require(clt_context *ctx, const clt__conv_geom *g, const char *who);
/* Whether our automatic choice on ctx takes Winograd (it applies and the device class's
 * thresholds in tune/conv_params.c pass). */
int clt__conv_winograd_auto(const clt_context *ctx, const clt__conv_geom *g);
/* Images per chunk of a Winograd pass (forward and grad-weight): as many of n as fit cap_bytes
 * beside `fixed` floats held for the whole call, per_image floats each; at least 1. */
int64_t clt__conv_winograd_chunk(uint64_t cap_bytes, uint64_t fixed, uint64_t per_image, int64_t n);

#endif
