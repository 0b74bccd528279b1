/* The list of suites and the small helpers that case setups share. */
#include "bench_cases.h"

#include <string.h>

const bench_suite *const bench_suites[] = {
    &bench_suite_transfer, &bench_suite_seed, &bench_suite_micro,
    &bench_suite_gemm,     &bench_suite_conv, &bench_suite_pinn,
    &bench_suite_fft,
    &bench_suite_attention,
    &bench_suite_transformer,
    &bench_suite_cnn,
    &bench_suite_ops,
    &bench_suite_nnops,
};
const int bench_suite_count = (int)(sizeof bench_suites / sizeof bench_suites[0]);

const bench_suite *bench_find_suite(const char *name) {
    for (int i = 0; i < bench_suite_count; i++)
        if (strcmp(bench_suites[i]->name, name) == 0)
            return bench_suites[i];
    return NULL;
}

clt_status bench_random_f32(bench_env *env, int ndim, const int64_t *shape, clt_tensor **out) {
    clt_status st = clt_tensor_create(env->ctx, CLT_F32, ndim, shape, out);
    if (st != CLT_SUCCESS)
        return st;
    st = clt_tensor_fill_uniform(*out, env->next_seed++, 0.0f, 1.0f);
    if (st != CLT_SUCCESS) {
        clt_tensor_free(*out);
        *out = NULL;
    }
    return st;
}

void bench_free_tensors(clt_tensor **ts, int n) {
    for (int i = 0; i < n; i++) {
        clt_tensor_free(ts[i]);
        ts[i] = NULL;
    }
}
