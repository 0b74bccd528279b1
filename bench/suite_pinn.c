/* pinn suite: the Helmholtz physics-informed network of bench/README.md (Fourier features 2 -> 128,
 * three tanh layers of 128, linear 2; MSE; Adam lr 1e-3). One "op" is what each case times.
 * Parameters p = {points N, training steps, read the loss every k-th step} (steps 0 = forward only,
 * 1 = one train step with the loss on the host). */
#include "bench_cases.h"

static const bench_case pinn_cases[] = {
    {"pinn_forward/200", bench_setup_pinn, {200, 0, 0}, 0},
    {"pinn_forward/1000", bench_setup_pinn, {1000, 0, 0}, 0},
    {"pinn_forward/10000", bench_setup_pinn, {10000, 0, 0}, 0},
    {"pinn_train_step/200", bench_setup_pinn, {200, 1, 1}, 0},
    {"pinn_train_step/1000", bench_setup_pinn, {1000, 1, 1}, 0},
    {"pinn_train_step/10000", bench_setup_pinn, {10000, 1, 1}, 0},
    {"pinn_100_epochs/200", bench_setup_pinn, {200, 100, 1}, 0},
    {"pinn_100_epochs_deferred10/200", bench_setup_pinn, {200, 100, 10}, 0},
};

const bench_suite bench_suite_pinn = {"pinn", pinn_cases,
                                      (int)(sizeof pinn_cases / sizeof pinn_cases[0])};
