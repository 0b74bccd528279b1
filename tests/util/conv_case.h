/* One Conv2D test case from a row of 16 ints {n, ci, co, h, w, kh, kw, sh, sw, dh, dw, pt, pb, pl,
 * pr, groups}: tensor shapes, public params, the reference's geometry and element counts. Shared by
 * the grad-weight suites (column GEMM, Winograd). */
#ifndef CLT_TEST_CONV_CASE_H
#define CLT_TEST_CONV_CASE_H

#include <stdint.h>

#include "cltensor_conv.h"
#include "ref/conv_ref.h"

typedef struct conv_case {
    int64_t xs[4], ws[4], ys[4], nx, nw, ny; /* x, w, y = dy shapes and element counts */
    clt_conv2d_params p;
    ref_conv rc;
} conv_case;

/* Fills s from row c; fails the test when the row's output would be empty. */
void conv_case_make(const int c[16], conv_case *s);

#endif
