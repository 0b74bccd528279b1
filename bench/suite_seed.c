/* seed suite: the exact cases of the benchmark that started the project (bench/README.md). Their setups
 * are shared with the micro, gemm and conv suites (declare them in bench_cases.h when written).
 * Parameters: matmul p[0] = S (S x S times S x S); 1-D ops p[0] = n;
 * conv2d p = {n, c, h, w, o, k, stride, pad}. */
#include "bench_cases.h"

static const bench_case seed_cases[] = {
    {"matmul/256", bench_setup_matmul, {256}, 0},
    {"matmul/512", bench_setup_matmul, {512}, 0},
    {"add/100000", bench_setup_add, {100000}, 0},
    {"mul/100000", bench_setup_mul, {100000}, 0},
    {"add/1000000", bench_setup_add, {1000000}, 0},
    {"mul/1000000", bench_setup_mul, {1000000}, 0},
    {"relu/1000000", bench_setup_relu, {1000000}, 0},
    {"sigmoid/1000000", bench_setup_sigmoid, {1000000}, 0},
    {"sum/1000000", bench_setup_sum, {1000000}, 0},
    {"mean/1000000", bench_setup_mean, {1000000}, 0},
    {"conv2d/n1c16h64o32k3s1", bench_setup_conv2d, {1, 16, 64, 64, 32, 3, 1, 1}, 0},
};

const bench_suite bench_suite_seed = {"seed", seed_cases,
                                      (int)(sizeof seed_cases / sizeof seed_cases[0])};
