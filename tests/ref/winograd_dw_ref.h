/* The rounding scale of Conv2D grad-weight by Winograd F(4x4, 3x3) (3x3, stride 1, one group), for
 * the tolerance of check_conv2d_backward_winograd.c. It uses only the magnitudes of the transform
 * matrices; the expected values come from the direct reference (conv_backward_ref.c). */
#ifndef CLT_REF_WINOGRAD_DW_REF_H
#define CLT_REF_WINOGRAD_DW_REF_H

#include "ref/conv_ref.h"

/* ts [co, ci, 3, 3] = |G^T| (sum over images and 4x4 blocks of dy of (|A| |Dy| |A|^T) .*
 * (|B^T| |D| |B|)) |G|, D the block's 6x6 patch of x (zeros outside): what every rounding of the
 * transforms, the GEMM and the output transform is relative to (first order). */
void ref_winograd_dw_scale(const ref_conv *c, const float *dy, const float *x, double *ts);

#endif
