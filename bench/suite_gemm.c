/* gemm suite: square SGEMM across sizes (GFLOP/s = 2*S^3 / time) and the fused MLP layer
 * relu(A*B + bias). Parameters: matmul p[0] = S; gemm_mlp_bias_relu p = {M, K, N}. */
#include "bench_cases.h"

static const bench_case gemm_cases[] = {
    {"matmul/128", bench_setup_matmul, {128}, 0},
    {"matmul/256", bench_setup_matmul, {256}, 0},
    {"matmul/512", bench_setup_matmul, {512}, 0},
    {"matmul/1024", bench_setup_matmul, {1024}, 0},
    {"matmul/2048", bench_setup_matmul, {2048}, 0},
    {"matmul/4096", bench_setup_matmul, {4096}, BENCH_GPU_ONLY},
    {"matmul/8192", bench_setup_matmul, {8192}, BENCH_GPU_ONLY},
    {"gemm_mlp_bias_relu/64x784x128", bench_setup_gemm_mlp_bias_relu, {64, 784, 128}, 0},
    {"gemm_mlp_bias_relu/256x1024x1024", bench_setup_gemm_mlp_bias_relu, {256, 1024, 1024}, 0},
    {"gemm_mlp_bias_relu/1000x128x128", bench_setup_gemm_mlp_bias_relu, {1000, 128, 128}, 0},
    {"gemm_mlp_bias_relu/8192x512x2048", bench_setup_gemm_mlp_bias_relu, {8192, 512, 2048}, 0},
    /* math modes (bench_gemm_math.c): p = {S, clt_math_mode, dtype}; tensor cores where present */
    {"matmul_tf32/1024", bench_setup_matmul_math, {1024, CLT_MATH_TF32, CLT_F32}, BENCH_GPU_ONLY},
    {"matmul_tf32/2048", bench_setup_matmul_math, {2048, CLT_MATH_TF32, CLT_F32}, BENCH_GPU_ONLY},
    {"matmul_tf32/4096", bench_setup_matmul_math, {4096, CLT_MATH_TF32, CLT_F32}, BENCH_GPU_ONLY},
    {"matmul_tf32/8192", bench_setup_matmul_math, {8192, CLT_MATH_TF32, CLT_F32}, BENCH_GPU_ONLY},
    {"matmul_bf16/1024", bench_setup_matmul_math, {1024, CLT_MATH_FP32, CLT_BF16}, BENCH_GPU_ONLY},
    {"matmul_bf16/2048", bench_setup_matmul_math, {2048, CLT_MATH_FP32, CLT_BF16}, BENCH_GPU_ONLY},
    {"matmul_bf16/4096", bench_setup_matmul_math, {4096, CLT_MATH_FP32, CLT_BF16}, BENCH_GPU_ONLY},
    {"matmul_bf16/8192", bench_setup_matmul_math, {8192, CLT_MATH_FP32, CLT_BF16}, BENCH_GPU_ONLY},
    {"matmul_3xtf32/1024", bench_setup_matmul_math, {1024, CLT_MATH_FP32_3XTF32, CLT_F32}, BENCH_GPU_ONLY},
    {"matmul_3xtf32/2048", bench_setup_matmul_math, {2048, CLT_MATH_FP32_3XTF32, CLT_F32}, BENCH_GPU_ONLY},
    {"matmul_3xtf32/4096", bench_setup_matmul_math, {4096, CLT_MATH_FP32_3XTF32, CLT_F32}, BENCH_GPU_ONLY},
    {"matmul_3xtf32/8192", bench_setup_matmul_math, {8192, CLT_MATH_FP32_3XTF32, CLT_F32}, BENCH_GPU_ONLY},
};

const bench_suite bench_suite_gemm = {"gemm", gemm_cases,
                                      (int)(sizeof gemm_cases / sizeof gemm_cases[0])};
