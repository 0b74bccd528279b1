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
    MICRO_SIZES("add", NULL),     MICRO_SIZES("mul", NULL),
    MICRO_SIZES("relu", NULL),    MICRO_SIZES("sigmoid", NULL),
    MICRO_SIZES("tanh", NULL),    MICRO_SIZES("sum", NULL),
    MICRO_SIZES("max", NULL),     MICRO_SIZES("chain_relu_mul_add", NULL),
    MICRO_ROWS("softmax", NULL),  MICRO_ROWS("rowsum", NULL),
};

const bench_suite bench_suite_micro = {"micro", micro_cases,
                                       (int)(sizeof micro_cases / sizeof micro_cases[0])};
