/* Setup of the Conv2D cases (conv and seed suites): conv2d/n{N}c{C}h{H}o{O}k{K}s{S} = clt_conv2d of
 * x [N, C, H, W] with w [O, C, K, K], bias [O], stride S, padding p[7] on every side, no
 * activation (as the PyTorch peer: F.conv2d(x, w, bias, stride, padding)). Work is
 * 2*N*O*Ho*Wo*C*K*K FLOP (the bias adds are not counted). Which implementation runs is the
 * context's (clt-bench --impl sets conv_impl too). p = {n, c, h, w, o, k, stride, pad}.
 * conv2d_backward_input / _weight: the same shapes, dx = clt_conv2d_backward_input(dy, w) and
 * dw = clt_conv2d_backward_weight(dy, x) (as torch's convolution_backward with one output mask
 * bit); the same FLOP count. */
#include <stdlib.h>

#include "bench_cases.h"

enum { CONV_FWD, CONV_BWD_INPUT, CONV_BWD_WEIGHT };

typedef struct conv_state {
    clt_tensor *x, *w, *bias, *out;
    clt_conv2d_params p;
    int mode;
} conv_state;

static void conv_teardown(void *p)
{
    conv_state *s = p;
    if (!s)
        return;
    clt_tensor *ts[4] = {s->x, s->w, s->bias, s->out};
    bench_free_tensors(ts, 4);
    free(s);
}

static clt_status conv_run(void *p)
{
    conv_state *s = p;
    if (s->mode == CONV_BWD_INPUT) /* out = dy, x = dx */
        return clt_conv2d_backward_input(s->out, s->w, &s->p, s->x);
    if (s->mode == CONV_BWD_WEIGHT) /* out = dy, w = dw */
        return clt_conv2d_backward_weight(s->out, s->x, &s->p, s->w);
    return clt_conv2d(s->x, s->w, s->bias, &s->p, CLT_IDENTITY, 0.0f, s->out);
}

static clt_status setup(bench_env *env, const bench_case *c, bench_run *out, int mode)
{
    conv_state *s = calloc(1, sizeof *s);
    if (!s)
        return CLT_ERR_OUT_OF_HOST_MEMORY;
    s->mode = mode;
    clt_conv2d_params_init(&s->p);
    s->p.stride_h = s->p.stride_w = (int32_t)c->p[6];
    s->p.pad_top = s->p.pad_bottom = s->p.pad_left = s->p.pad_right = (int32_t)c->p[7];
    int64_t xs[4] = {c->p[0], c->p[1], c->p[2], c->p[3]}, ws[4] = {c->p[4], c->p[1], c->p[5], c->p[5]};
    int64_t os[4];
    clt_status st = clt_conv2d_output_shape(xs, ws, &s->p, os);
    if (st == CLT_SUCCESS)
        st = bench_random_f32(env, 4, xs, &s->x);
    if (st == CLT_SUCCESS)
        st = bench_random_f32(env, 4, ws, &s->w);
    if (st == CLT_SUCCESS)
        st = bench_random_f32(env, 1, &ws[0], &s->bias);
    if (st == CLT_SUCCESS)
        st = mode == CONV_FWD ? clt_tensor_create(env->ctx, CLT_F32, 4, os, &s->out)
                              : bench_random_f32(env, 4, os, &s->out);
    if (st != CLT_SUCCESS) {
        conv_teardown(s);
        return st;
    }
    out->state = s;
    out->run = conv_run;
    out->teardown = conv_teardown;
    out->unit = BENCH_UNIT_FLOPS;
    out->work = 2.0 * (double)os[0] * (double)os[1] * (double)os[2] * (double)os[3] *
                (double)c->p[1] * (double)c->p[5] * (double)c->p[5];
    return CLT_SUCCESS;
}

clt_status bench_setup_conv2d(bench_env *env, const bench_case *c, bench_run *out)
{
    return setup(env, c, out, CONV_FWD);
}

clt_status bench_setup_conv2d_backward_input(bench_env *env, const bench_case *c, bench_run *out)
{
    return setup(env, c, out, CONV_BWD_INPUT);
}

clt_status bench_setup_conv2d_backward_weight(bench_env *env, const bench_case *c, bench_run *out)
{
    return setup(env, c, out, CONV_BWD_WEIGHT);
}
