/* transformer and cnn suites: the end-to-end models of issue 20 (bench_models.c; the PyTorch peer
 * runs the identical models). p = {batch, steps, deferred loss read}. */
#include "bench_cases.h"

static const bench_case transformer_cases[] = {
    {"transformer_train_step/b8", bench_setup_transformer, {8, 1, 0}, 0},
    {"transformer_100_steps_deferred/b8", bench_setup_transformer, {8, 100, 1}, BENCH_GPU_ONLY},
    {"transformer_train_step/b2", bench_setup_transformer, {2, 1, 0}, 0},
};

const bench_suite bench_suite_transformer = {
    "transformer", transformer_cases, (int)(sizeof transformer_cases / sizeof transformer_cases[0])};

static const bench_case cnn_cases[] = {
    {"cnn_train_step/b32", bench_setup_cnn, {32, 1, 0}, 0},
    {"cnn_100_steps_deferred/b32", bench_setup_cnn, {32, 100, 1}, BENCH_GPU_ONLY},
    {"cnn_train_step/b8", bench_setup_cnn, {8, 1, 0}, 0},
};

const bench_suite bench_suite_cnn = {"cnn", cnn_cases, (int)(sizeof cnn_cases / sizeof cnn_cases[0])};
