/* Conv2D and pooling geometry: the checks every conv/pool call shares, and the numbers its kernels
 * need. Internal. */
#ifndef CLT_CONV_GEOMETRY_H
#define CLT_CONV_GEOMETRY_H

#include "cltensor_conv.h"
#include "runtime/runtime.h"
#include "tensor/tensor.h"

typedef struct clt__conv_geom {
    int64_t n, ci, h, w;  /* x [n, ci, h, w] */
    int64_t co, kh, kw;   /* w [co, ci / groups, kh, kw] */
    int64_t ho, wo;       /* out [n, co, ho, wo] */
    int64_t groups, ci_g, co_g; /* channels per group */
    int64_t sh, sw, pt, pb, pl, pr, dh, dw;
    clt_math_mode math; /* resolved: the params' mode, else the context's (never DEFAULT) */
} clt__conv_geom;

/* Output length of a window sweep: (in + pads - dil * (k - 1) - 1) / stride + 1, or <= 0 when the
 * window does not fit (callers report it). All arguments already validated as in range. */
int64_t clt__window_out(int64_t in, int64_t pads, int64_t k, int64_t dil, int64_t stride);
/* The largest single dimension conv and pooling accept: kernels index in i32, and with every input
 * below 2^31 the int64 geometry (in + pads - dil * (k - 1), h * w, ...) cannot overflow. */
#define CLT__MAX_DIM ((int64_t)INT32_MAX)
/* 1 when every dims[i] <= CLT__MAX_DIM. */
int clt__dims_in_range(const int64_t *dims, int n);

/* Validate params against x and w shapes and fill g. `who` names the public call.
 * CLT_ERR_INVALID_ARGUMENT (NULL p, stride/dilation < 1, padding < 0, groups < 1 or not dividing
 * the channels, a math value outside clt_math_mode), CLT_ERR_INVALID_SHAPE (negative dims, wrong Ci / groups in w, output < 1). */
clt_status clt__conv_geom_make(const clt_context *ctx, const char *who, const int64_t x[4],
                               const int64_t w[4], const clt_conv2d_params *p, clt__conv_geom *g);

/* t is non-NULL, of ctx, f32 and exactly [s0, s1, s2, s3] (`name` in messages). */
clt_status clt__conv_check_tensor(const clt_context *ctx, const char *who, const char *name,
                                  const clt_tensor *t, const int64_t shape[4]);
/* The same for any dtype (pooling's i32 indices). */
clt_status clt__check_tensor4(const clt_context *ctx, const char *who, const char *name,
                              const clt_tensor *t, clt_dtype dtype, const int64_t shape[4]);

/* t (non-NULL) is a 4-D tensor: copy its shape into s, else CLT_ERR_INVALID_SHAPE. */
clt_status clt__conv_shape4(const clt_context *ctx, const char *who, const char *name,
                            const clt_tensor *t, int64_t s[4]);

#endif
