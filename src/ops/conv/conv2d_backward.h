/* Conv2D backward internals: the implementations behind clt_conv2d_backward_input/_weight, each
 * given validated tensors and geometry (conv2d_backward.c checks everything first). Internal. */
#ifndef CLT_CONV2D_BACKWARD_H
#define CLT_CONV2D_BACKWARD_H

#include "ops/common/conv_geometry.h"
#include "ops/gemm/gemm.h"

/* Workspace slot of conv backward (split-K partials, column buffers) and its counter head. */
#define CLT__CONVB_WS_SLOT 2
#define CLT__CONVB_COUNTERS 1024u /* uint counters before the data; = MAX_COUNTERS of the kernel */

/* The kernels' geometry argument: (n, ci, h, w, co, kh, kw, ho, wo, sh, sw, pt, pl, dh, dw, groups). */
cl_int16 clt__convb_geom_arg(const clt__conv_geom *g);
/* The output side of a grad-weight GEMM batched over groups (call after the A and B strides are
 * set): C = dw (Co_g x Ci_g*Kh*Kw per group), no bias or activation; strides 0 for one group. */
void clt__convb_dw_target(clt__gemm_problem *p, const clt__conv_geom *g, const clt_tensor *dw);
/* Image n's share of dw: dw (beta 0 for n = 0, else 1) += dy[n] * col^T, col = that image's
 * im2col (Ci*Kh*Kw x Ho*Wo) at col_off floats into col; our GEMM, or CLBlast's (clblast = 1). */
clt_status clt__convb_dw_image(clt_context *ctx, const clt__conv_geom *g, const clt_tensor *dy,
                               int64_t n, cl_mem col, uint64_t col_off, clt_tensor *dw, int clblast,
                               const char *who);

/* Slot 2 with at least data_bytes after the counter head (zeroed when the buffer is new). */
clt_status clt__convb_workspace(clt_context *ctx, size_t data_bytes, const char *who, cl_mem *out);

/* 1-D launch of one item per element (items rounded up to the group size; kernels bound-check). */
clt_status clt__convb_launch_items(clt_context *ctx, cl_kernel k, uint64_t items, const char *who);

/* Our kernels (conv2d_backward_ours.c, cl_kernels/conv/conv2d_backward.cl). CLT_ERR_UNSUPPORTED when
 * no variant fits the device. */
clt_status clt__convb_input_ours(clt_context *ctx, const clt__conv_geom *g, const clt_tensor *dy,
                                 const clt_tensor *w, clt_tensor *dx, const char *who);
clt_status clt__convb_weight_ours(clt_context *ctx, const clt__conv_geom *g, const clt_tensor *dy,
                                  const clt_tensor *x, clt_tensor *dw, const char *who);

/* CLBlast GEMMs plus our column kernels (conv2d_backward_clblast.c, conv2d_backward_col.cl).
 * CLT_ERR_UNSUPPORTED when CLBlast refuses. */
clt_status clt__convb_input_clblast(clt_context *ctx, const clt__conv_geom *g, const clt_tensor *dy,
                                    const clt_tensor *w, clt_tensor *dx, const char *who);
clt_status clt__convb_weight_clblast(clt_context *ctx, const clt__conv_geom *g, const clt_tensor *dy,
                                     const clt_tensor *x, clt_tensor *dw, const char *who);

/* The same structure with our GEMM (clblast = 0) or CLBlast's (1): CPU devices use it as "ours". */
clt_status clt__convb_input_colgemm(clt_context *ctx, const clt__conv_geom *g, const clt_tensor *dy,
                                    const clt_tensor *w, clt_tensor *dx, int clblast, const char *who);
clt_status clt__convb_weight_colgemm(clt_context *ctx, const clt__conv_geom *g, const clt_tensor *dy,
                                     const clt_tensor *x, clt_tensor *dw, int clblast, const char *who);

/* Grad-weight as one split-K GEMM over the batch (conv2d_backward_wgemm.c): a column + dy-copy
 * launch, then our GEMM, per chunk of images whose buffers fit clt__convb_col_cap_bytes (tests
 * lower it). CLT_ERR_UNSUPPORTED (nothing changed) when the workspace does not fit the memory or
 * the GEMM refuses; the caller runs the tiled kernel. */
enum { CLT__CONVB_W_AUTO, CLT__CONVB_W_TILED, CLT__CONVB_W_COLGEMM, CLT__CONVB_W_WINOGRAD, CLT__CONVB_W_STEM };
extern uint64_t clt__convb_col_cap_bytes;
/* CLT_CONVB_WEIGHT_VARIANT=tiled|colgemm|winograd, read per call; anything else:
 * CLT__CONVB_W_AUTO. */
int clt__convb_weight_variant(void);
/* Whether the automatic choice on GPU classes takes the GEMM path for this geometry. */
int clt__convb_weight_gemm_suits(const clt__conv_geom *g);
clt_status clt__convb_weight_gemm(clt_context *ctx, const clt__conv_geom *g, const clt_tensor *dy,
                                  const clt_tensor *x, clt_tensor *dw, const char *who);

/* Grad-weight by Winograd F(4x4, 3x3) (conv2d_backward_winograd.c): 3x3 / stride 1 / dilation 1 /
 * one group; a transform launch and our batched GEMM per chunk of images whose U + V fit
 * clt__convb_winograd_cap_bytes (tests lower it), one output launch. CLT_ERR_UNSUPPORTED (dw
 * untouched) when the geometry does not apply, the workspace does not fit, the planes leave int
 * range or the GEMM refuses; the caller runs the tiled kernel. */
extern uint64_t clt__convb_winograd_cap_bytes;
/* Whether the automatic choice on the NVIDIA class takes it (the forward's Winograd thresholds). */
int clt__convb_weight_winograd_suits(const clt_context *ctx, const clt__conv_geom *g);
clt_status clt__convb_weight_winograd(clt_context *ctx, const clt__conv_geom *g,
                                      const clt_tensor *dy, const clt_tensor *x, clt_tensor *dw,
                                      const char *who);

/* conv2d_backward_cpu.c. Grad-input for stride 1 as a forward convolution with flipped weights
 * (any device class). Grad-weight on CPU devices: the forward's CPU im2col + our GEMM.
 * CLT_ERR_UNSUPPORTED where the shape does not fit (use another path). */
clt_status clt__convb_input_flipped(clt_context *ctx, const clt__conv_geom *g, const clt_tensor *dy,
                                const clt_tensor *w, clt_tensor *dx, const char *who);
clt_status clt__convb_weight_cpu(clt_context *ctx, const clt__conv_geom *g, const clt_tensor *dy,
                                 const clt_tensor *x, clt_tensor *dw, const char *who);

/* Few input channels (conv2d_backward_stem.c, conv2d_stem_dw.cl): Ci 1 .. 4, one group, windows up to 11 x 11,
 * exact fp32; tried first on GPU classes. CLT_ERR_UNSUPPORTED (nothing enqueued) for other shapes or where no
 * tile fits the device. */
clt_status clt__convb_weight_stem(clt_context *ctx, const clt__conv_geom *g, const clt_tensor *dy,
                                  const clt_tensor *x, clt_tensor *dw, const char *who);
/* Its program options (loops unrolled or not), items a group, groups, and partial floats (0: one slot, dw
 * written directly); 0 where it declines g (clt-kernels lists the options through this too). */
int clt__convb_stem_options(const clt_context *ctx, const clt__conv_geom *g, int unroll, char *opts, size_t n,
                            size_t *wg, size_t *groups, size_t *partial_floats);

#endif
