/* Helpers of the elementwise and activation suites: f32 tensors from host data, NumPy broadcasting
 * on the host, tolerance checks, and checks that a failed call changed nothing. */
#ifndef CLT_EW_UTIL_H
#define CLT_EW_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "cltensor_all.h"
#include "cltensor_ops.h"

/* A shape: ndim and dims (ndim 0 = a 0-d scalar tensor). */
typedef struct ew_shape {
    int ndim;
    int64_t d[CLT_MAX_DIMS];
} ew_shape;

int64_t ew_numel(const ew_shape *s);
/* "[2,3]" into a static rotating buffer (for messages). */
const char *ew_shape_str(const ew_shape *s);

/* The broadcast shape of n shapes into *out; returns 0 when they do not broadcast. */
int ew_broadcast(int n, const ew_shape *const *in, ew_shape *out);
/* Flat index into a tensor of shape `in` of the element that broadcasts to flat index i of `out`.
 */
int64_t ew_source(const ew_shape *out, int64_t i, const ew_shape *in);

/* A tensor of dtype dt and shape s holding random bytes. */
clt_tensor *ew_make(clt_context *ctx, clt_dtype dt, ew_shape s);

/* An f32 tensor of shape s holding x (numel(s) floats; x may be NULL when empty). */
clt_tensor *ew_tensor(clt_context *ctx, const ew_shape *s, const float *x);
/* An f32 output tensor of shape s, poisoned (every byte 0xFF: NaN) so unwritten elements fail. */
clt_tensor *ew_output(clt_context *ctx, const ew_shape *s);
/* A heap copy of t's f32 data (at least one element allocated). */
float *ew_read(const clt_tensor *t);
/* n fresh uniform floats in [lo, hi) on the heap (at least one allocated). */
float *ew_random(int64_t n, float lo, float hi);

/* Element-wise check: got[i] must be NaN where want[i] is NaN, the same infinity where want[i] is
 * infinite, and else within rel * |want| + abs * scale[i] (scale NULL: 1). Fails naming `what` and
 * the first bad element. */
void ew_check_close(const char *what, const float *got, const double *want, const double *scale,
                    int64_t n, double rel, double abs);

/* The call returned `want`, its message (clt_last_error(ctx)) names `who`, and t still holds
 * `before` (from ew_read taken before the call; t may be NULL to skip that part). */
void ew_expect_error(const char *what, clt_status got, clt_status want, const clt_context *ctx,
                     const char *who, const clt_tensor *t, const float *before);

/* A shape literal: S(2, 3) is {2, {2, 3}}. */
// clang-format off
#define S(...) {sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t), {__VA_ARGS__}}
// clang-format on
/* An f32 tensor of random bytes of shape S(...) on the local `ctx`. */
#define F32(...) ew_make(ctx, CLT_F32, (ew_shape)S(__VA_ARGS__))

/* The call fails with `want`, clt_last_error(ctx) names `who`, and `out` (may be NULL) keeps its
 * bytes. Uses the local `ctx`. */
#define EXPECT_FAIL(want, who, out, call)                                                          \
    do {                                                                                           \
        float *before_ = (out) ? ew_read(out) : NULL;                                              \
        clt_status st_ = (call);                                                                   \
        ew_expect_error(#call, st_, want, ctx, who, out, before_);                                 \
        free(before_);                                                                             \
    } while (0)

/* relu(a*b + c) over inputs 0, 1, 2 (the chain_relu_mul_add expression); *root = its node. */
clt_expr *ew_fma_relu(int *root);

#endif
