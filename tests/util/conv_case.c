/* See conv_case.h. */
#include "util/conv_case.h"

#include <check.h>

void conv_case_make(const int c[16], conv_case *s)
{
    clt_conv2d_params_init(&s->p);
    s->xs[0] = c[0], s->xs[1] = c[1], s->xs[2] = c[3], s->xs[3] = c[4];
    s->ws[0] = c[2], s->ws[1] = c[1] / c[15], s->ws[2] = c[5], s->ws[3] = c[6];
    s->p.stride_h = c[7], s->p.stride_w = c[8], s->p.dilation_h = c[9], s->p.dilation_w = c[10];
    s->p.pad_top = c[11], s->p.pad_bottom = c[12], s->p.pad_left = c[13], s->p.pad_right = c[14];
    s->p.groups = c[15];
    s->rc = ref_conv_make(s->xs, s->ws, &s->p);
    s->ys[0] = c[0], s->ys[1] = c[2], s->ys[2] = ref_conv_ho(&s->rc),
    s->ys[3] = ref_conv_wo(&s->rc);
    ck_assert_msg(s->ys[2] >= 1 && s->ys[3] >= 1, "bad test case");
    s->nx = s->xs[0] * s->xs[1] * s->xs[2] * s->xs[3];
    s->nw = s->ws[0] * s->ws[1] * s->ws[2] * s->ws[3];
    s->ny = s->ys[0] * s->ys[1] * s->ys[2] * s->ys[3];
}
