/* conv suite: NCHW Conv2D with bias, 2*N*Co*Ho*Wo*Ci*Kh*Kw FLOP.
 * Parameters p = {n, c, h, w, o, k, stride, pad} (square images and kernels). */
#include "bench_cases.h"

static const bench_case conv_cases[] = {
    {"conv2d/n8c64h56o64k3s1", bench_setup_conv2d, {8, 64, 56, 56, 64, 3, 1, 1}, 0},
    {"conv2d/n8c3h224o64k7s2", bench_setup_conv2d, {8, 3, 224, 224, 64, 7, 2, 3}, 0},
    {"conv2d/n32c128h28o128k3s1", bench_setup_conv2d, {32, 128, 28, 28, 128, 3, 1, 1}, 0},
    {"conv2d/n8c256h56o64k1s1", bench_setup_conv2d, {8, 256, 56, 56, 64, 1, 1, 0}, 0},
    {"conv2d/n1c64h56o64k3s1", bench_setup_conv2d, {1, 64, 56, 56, 64, 3, 1, 1}, 0},
    /* TF32 math mode on the same forward shapes (bench_gemm_math.c) */
    {"conv2d_tf32/n8c64h56o64k3s1", bench_setup_conv2d_tf32, {8, 64, 56, 56, 64, 3, 1, 1}, BENCH_GPU_ONLY},
    {"conv2d_tf32/n8c3h224o64k7s2", bench_setup_conv2d_tf32, {8, 3, 224, 224, 64, 7, 2, 3}, BENCH_GPU_ONLY},
    {"conv2d_tf32/n32c128h28o128k3s1", bench_setup_conv2d_tf32, {32, 128, 28, 28, 128, 3, 1, 1}, BENCH_GPU_ONLY},
    {"conv2d_tf32/n8c256h56o64k1s1", bench_setup_conv2d_tf32, {8, 256, 56, 56, 64, 1, 1, 0}, BENCH_GPU_ONLY},
    {"conv2d_tf32/n1c64h56o64k3s1", bench_setup_conv2d_tf32, {1, 64, 56, 56, 64, 3, 1, 1}, BENCH_GPU_ONLY},
    /* backward of three of them (bench_conv.c): the stem, a 3x3 body layer, a batch of one */
    {"conv2d_backward_input/n8c64h56o64k3s1", bench_setup_conv2d_backward_input, {8, 64, 56, 56, 64, 3, 1, 1}, 0},
    {"conv2d_backward_weight/n8c64h56o64k3s1", bench_setup_conv2d_backward_weight, {8, 64, 56, 56, 64, 3, 1, 1}, 0},
    {"conv2d_backward_weight/n8c3h224o64k7s2", bench_setup_conv2d_backward_weight, {8, 3, 224, 224, 64, 7, 2, 3}, 0},
    {"conv2d_backward_input/n1c64h56o64k3s1", bench_setup_conv2d_backward_input, {1, 64, 56, 56, 64, 3, 1, 1}, 0},
    {"conv2d_backward_weight/n1c64h56o64k3s1", bench_setup_conv2d_backward_weight, {1, 64, 56, 56, 64, 3, 1, 1}, 0},
    /* the same backward passes in TF32 math (bench_gemm_math.c; cuDNN with TF32 allowed beside them) */
    {"conv2d_tf32_backward_input/n8c64h56o64k3s1", bench_setup_conv2d_tf32_backward_input, {8, 64, 56, 56, 64, 3, 1, 1}, BENCH_GPU_ONLY},
    {"conv2d_tf32_backward_weight/n8c64h56o64k3s1", bench_setup_conv2d_tf32_backward_weight, {8, 64, 56, 56, 64, 3, 1, 1}, BENCH_GPU_ONLY},
    {"conv2d_tf32_backward_weight/n8c3h224o64k7s2", bench_setup_conv2d_tf32_backward_weight, {8, 3, 224, 224, 64, 7, 2, 3}, BENCH_GPU_ONLY},
    {"conv2d_tf32_backward_input/n1c64h56o64k3s1", bench_setup_conv2d_tf32_backward_input, {1, 64, 56, 56, 64, 3, 1, 1}, BENCH_GPU_ONLY},
    {"conv2d_tf32_backward_weight/n1c64h56o64k3s1", bench_setup_conv2d_tf32_backward_weight, {1, 64, 56, 56, 64, 3, 1, 1}, BENCH_GPU_ONLY},
    /* not in bench/README.md: a grad-weight GEMM (1024 x 9216) whose tile grid takes NVIDIA's 256x128
     * config, split in k segments (gemm_tiled.c try_tiled: now on 128x128) */
    {"conv2d_backward_weight/n8c1024h14o1024k3s1", bench_setup_conv2d_backward_weight, {8, 1024, 14, 14, 1024, 3, 1, 1}, 0},
    /* pooling (bench_pool.c): p = {n, c, h, w, k, stride, pad}; ResNet's stem pool and head */
    {"maxpool2d/n8c64h112k3s2", bench_setup_maxpool2d, {8, 64, 112, 112, 3, 2, 1}, 0},
    {"maxpool2d_backward/n8c64h112k3s2", bench_setup_maxpool2d_backward, {8, 64, 112, 112, 3, 2, 1}, 0},
    {"avgpool2d/n8c64h56k3s1", bench_setup_avgpool2d, {8, 64, 56, 56, 3, 1, 1}, 0},
    {"global_avgpool/n32c512h7", bench_setup_global_avgpool, {32, 512, 7, 7}, 0},
};

const bench_suite bench_suite_conv = {"conv", conv_cases,
                                      (int)(sizeof conv_cases / sizeof conv_cases[0])};
