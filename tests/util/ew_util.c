#include "util/ew_util.h"

#include <check.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/test_util.h"

int64_t ew_numel(const ew_shape *s)
{
    int64_t n = 1;
    for (int d = 0; d < s->ndim; d++)
        n *= s->d[d];
    return n;
}

const char *ew_shape_str(const ew_shape *s)
{
    static char bufs[4][CLT_MAX_DIMS * 21 + 3];
    static int next;
    char *b = bufs[next++ % 4];
    size_t at = (size_t)snprintf(b, sizeof bufs[0], "[");
    for (int d = 0; d < s->ndim; d++)
        at +=
            (size_t)snprintf(b + at, sizeof bufs[0] - at, d ? ",%lld" : "%lld", (long long)s->d[d]);
    snprintf(b + at, sizeof bufs[0] - at, "]");
    return b;
}

int ew_broadcast(int n, const ew_shape *const *in, ew_shape *out)
{
    out->ndim = 0;
    for (int i = 0; i < n; i++)
        if (in[i]->ndim > out->ndim)
            out->ndim = in[i]->ndim;
    for (int d = 0; d < out->ndim; d++) {
        int64_t v = 1;
        for (int i = 0; i < n; i++) {
            int k = d - (out->ndim - in[i]->ndim);
            if (k < 0 || in[i]->d[k] == 1)
                continue;
            if (v != 1 && v != in[i]->d[k])
                return 0;
            v = in[i]->d[k];
        }
        out->d[d] = v;
    }
    return 1;
}

int64_t ew_source(const ew_shape *out, int64_t i, const ew_shape *in)
{
    int64_t src = 0, stride = 1;
    for (int d = out->ndim - 1; d >= 0; d--) {
        int64_t coord = i % out->d[d];
        i /= out->d[d];
        int k = d - (out->ndim - in->ndim);
        if (k < 0)
            break;
        if (in->d[k] != 1)
            src += coord * stride;
        stride *= in->d[k];
    }
    return src;
}

clt_tensor *ew_tensor(clt_context *ctx, const ew_shape *s, const float *x)
{
    clt_tensor *t = NULL;
    TU_OK(clt_tensor_create(ctx, CLT_F32, s->ndim, s->d, &t));
    if (ew_numel(s) > 0)
        TU_OK(clt_tensor_write(t, x, (size_t)ew_numel(s) * sizeof(float)));
    return t;
}

clt_tensor *ew_make(clt_context *ctx, clt_dtype dt, ew_shape s)
{
    clt_tensor *t = NULL;
    TU_OK(clt_tensor_create(ctx, dt, s.ndim, s.d, &t));
    size_t nb = clt_tensor_nbytes(t);
    if (nb) {
        void *x = malloc(nb);
        ck_assert_ptr_nonnull(x);
        tu_random_bytes(x, nb);
        TU_OK(clt_tensor_write(t, x, nb));
        free(x);
    }
    return t;
}

clt_tensor *ew_output(clt_context *ctx, const ew_shape *s)
{
    clt_tensor *t = NULL;
    TU_OK(clt_tensor_create(ctx, CLT_F32, s->ndim, s->d, &t));
    tu_poison(t);
    return t;
}

float *ew_read(const clt_tensor *t)
{
    size_t n = clt_tensor_nbytes(t);
    float *x = malloc(n ? n : sizeof(float));
    ck_assert_ptr_nonnull(x);
    if (n)
        TU_OK(clt_tensor_read(t, x, n));
    return x;
}

float *ew_random(int64_t n, float lo, float hi)
{
    float *x = malloc((size_t)(n ? n : 1) * sizeof(float));
    ck_assert_ptr_nonnull(x);
    tu_random_f32(x, (size_t)n, lo, hi);
    return x;
}

void ew_check_close(const char *what, const float *got, const double *want, const double *scale,
                    int64_t n, double rel, double abs)
{
    for (int64_t i = 0; i < n; i++) {
        double g = got[i], w = want[i];
        if (isfinite(w) && fabs(w) > FLT_MAX)
            w = (double)(float)w; /* what rounding to f32 makes of it: inf or FLT_MAX */
        int ok;
        if (isnan(w))
            ok = isnan(g);
        else if (isinf(w))
            ok = g == w;
        else
            ok = isfinite(g) && fabs(g - w) <= rel * fabs(w) + abs * (scale ? scale[i] : 1.0);
        if (!ok)
            ck_abort_msg("%s: element %lld of %lld = %.9g, expected %.9g (error %.3g, allowed %.3g "
                         "relative + %.3g absolute)",
                         what, (long long)i, (long long)n, g, w, fabs(g - w), rel,
                         abs * (scale ? scale[i] : 1.0));
    }
}

void ew_expect_error(const char *what, clt_status got, clt_status want, const clt_context *ctx,
                     const char *who, const clt_tensor *t, const float *before)
{
    ck_assert_msg(got == want, "%s -> %s, expected %s (%s)", what, clt_status_string(got),
                  clt_status_string(want), clt_last_error(ctx));
    const char *msg = clt_last_error(ctx);
    ck_assert_msg(strstr(msg, who) != NULL, "%s: message \"%s\" does not name %s", what, msg, who);
    if (t) {
        float *after = ew_read(t);
        ck_assert_msg(memcmp(after, before, clt_tensor_nbytes(t)) == 0, "%s: the output changed",
                      what);
        free(after);
    }
}

clt_expr *ew_fma_relu(int *root)
{
    clt_expr *e = NULL;
    TU_OK(clt_expr_create(&e));
    int a = clt_expr_input(e, 0), b = clt_expr_input(e, 1), c = clt_expr_input(e, 2);
    *root = clt_expr_unary(e, CLT_RELU,
                           clt_expr_binary(e, CLT_ADD, clt_expr_binary(e, CLT_MUL, a, b), c), -1);
    ck_assert_int_ge(*root, 0);
    return e;
}
