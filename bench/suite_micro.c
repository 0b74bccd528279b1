/* micro suite: single ops at sizes from launch-bound to bandwidth-bound.
 * Parameters: 1-D ops p[0] = n (chain_relu_mul_add is relu(a*b + c), 3 inputs);
 * softmax / rowsum p = {rows, cols}, reducing over the last axis. */
#include "bench_cases.h"

/* One row per size of a 1-D op. */
#define MICRO_SIZES(op, setup)                                                                    \
    {op "/1024", setup, {1024}, 0}, {op "/65536", setup, {65536}, 0},                             \
        {op "/1048576", setup, {1048576}, 0}, {op "/16777216", setup, {16777216}, 0}
/* One row per shape of a row-wise op. */
#define MICRO_ROWS(op, setup)                                                                     \
    {op "/64x1000", setup, {64, 1000}, 0}, {op "/512x1000", setup, {512, 1000}, 0},               \
        {op "/4096x4096", setup, {4096, 4096}, 0}

static const bench_case micro_cases[] = {
    MICRO_SIZES("add", bench_setup_add),
    MICRO_SIZES("mul", bench_setup_mul),
    MICRO_SIZES("relu", bench_setup_relu),
    MICRO_SIZES("sigmoid", bench_setup_sigmoid),
    MICRO_SIZES("tanh", bench_setup_tanh),
    MICRO_SIZES("sum", bench_setup_sum),
    MICRO_SIZES("max", bench_setup_max),
    MICRO_SIZES("chain_relu_mul_add", bench_setup_chain_relu_mul_add),
    MICRO_ROWS("softmax", bench_setup_softmax),
    MICRO_ROWS("rowsum", bench_setup_rowsum),
    /* not in bench/README.md: the backward's long rows, on either side of the 16384 elements a
     * group keeps in registers (softmax.c BWD_MAX_GROUP_ELEMENTS; y and dy are random: the time
     * does not depend on the values) */
    {"softmax_backward/64x16384", bench_setup_softmax_backward, {64, 16384}, 0},
    {"softmax_backward/64x32768", bench_setup_softmax_backward, {64, 32768}, 0},
    /* not in bench/README.md: the copy-bandwidth yardstick for the 16M cases */
    {"copy/16777216", bench_setup_copy, {16777216}, 0},
};

const bench_suite bench_suite_micro = {"micro", micro_cases,
                                       (int)(sizeof micro_cases / sizeof micro_cases[0])};
