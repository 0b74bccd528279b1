/* The case registry of clt-bench: every case of every suite (bench/README.md), by its exact name.
 *
 * Implementing a case = writing one setup function and naming it in the case's row of its suite table
 * (suite_<name>.c). The setup creates the inputs on the device (fresh values: bench_random_f32), and
 * fills a bench_run: a state pointer, run() that ENQUEUES ONE op and never waits, teardown(), and the
 * work of one op (FLOP or bytes) for the GFLOP/s or GB/s column. The timing (warm-up, repetitions,
 * samples, clt_finish) is bench_timing's job, not the case's. A row whose setup is NULL is reported
 * as "not implemented", never dropped. Setups shared by several suites are declared at the end. */
#ifndef BENCH_CASES_H
#define BENCH_CASES_H

#include <stdint.h>

#include "cltensor_all.h"

/* What the run is about: the context and its device. */
typedef struct bench_env {
    clt_context *ctx;
    clt_device_info device;
    clt_context_limits limits;
    uint64_t next_seed; /* advanced by bench_random_f32 so every input is fresh */
    int pinn_layers;    /* pinn suite on the per-layer path (--pinn-path layers), else fused */
} bench_env;

typedef enum bench_unit {
    BENCH_UNIT_NONE = 0, /* time only (latency cases) */
    BENCH_UNIT_BYTES,    /* work is bytes moved per op: GB/s */
    BENCH_UNIT_FLOPS     /* work is floating-point operations per op: GFLOP/s */
} bench_unit;

/* What a setup hands back. Zero-initialised before setup is called. */
typedef struct bench_run {
    void *state;
    clt_status (*run)(void *state);  /* enqueue one op; must not block unless the op itself does */
    void (*teardown)(void *state);   /* free what setup made (also called if a run failed) */
    double work;                     /* per op, in `unit` */
    bench_unit unit;
    char name[64];                   /* set only when the case ran at another size than its name */
    char note[96];                   /* shown in the table and the JSON ("reduced: max alloc") */
} bench_run;

struct bench_case;
/* Returns CLT_SUCCESS or the failing status (clt_last_error(env->ctx) has the message); on failure
 * it has already freed what it made. CLT_ERR_UNSUPPORTED means "skipped on this device". */
typedef clt_status (*bench_setup_fn)(bench_env *env, const struct bench_case *c, bench_run *out);

/* Flags of a case. */
#define BENCH_GPU_ONLY 1u /* skipped on CPU devices (too slow there to be worth the wait) */

typedef struct bench_case {
    const char *name;     /* exact name, shared with the peers: "matmul/256" */
    bench_setup_fn setup; /* NULL: not implemented yet */
    int64_t p[8];         /* parameters, meaning per setup (see each suite table) */
    unsigned flags;
} bench_case;

typedef struct bench_suite {
    const char *name; /* "transfer", "seed", ... */
    const bench_case *cases;
    int count;
} bench_suite;

/* All suites, in the order --suite all runs them. */
extern const bench_suite *const bench_suites[];
extern const int bench_suite_count;
/* The suite of that name, or NULL. */
const bench_suite *bench_find_suite(const char *name);

/* Helpers for setups. */
/* A new f32 tensor of that shape filled with uniform [0, 1) values from a fresh seed. */
clt_status bench_random_f32(bench_env *env, int ndim, const int64_t *shape, clt_tensor **out);
/* Free up to n tensors (NULLs allowed). */
void bench_free_tensors(clt_tensor **ts, int n);

/* The suite tables (suite_<name>.c). */
extern const bench_suite bench_suite_transfer;
extern const bench_suite bench_suite_seed;
extern const bench_suite bench_suite_micro;
extern const bench_suite bench_suite_gemm;
extern const bench_suite bench_suite_conv;
extern const bench_suite bench_suite_nnops;
extern const bench_suite bench_suite_pinn;
extern const bench_suite bench_suite_fft;
extern const bench_suite bench_suite_attention;
extern const bench_suite bench_suite_transformer;
extern const bench_suite bench_suite_cnn;
extern const bench_suite bench_suite_ops;

/* Setups shared between suites (e.g. add in seed and micro) go here, defined in the suite file of
 * their op family. */
/* bench_elementwise.c: 1-D cases p[0] = n; softmax / rowsum p = {rows, cols}. */
clt_status bench_setup_add(bench_env *env, const bench_case *c, bench_run *out);
clt_status bench_setup_mul(bench_env *env, const bench_case *c, bench_run *out);
clt_status bench_setup_relu(bench_env *env, const bench_case *c, bench_run *out);
clt_status bench_setup_sigmoid(bench_env *env, const bench_case *c, bench_run *out);
clt_status bench_setup_tanh(bench_env *env, const bench_case *c, bench_run *out);
clt_status bench_setup_chain_relu_mul_add(bench_env *env, const bench_case *c, bench_run *out);
clt_status bench_setup_sum(bench_env *env, const bench_case *c, bench_run *out);
clt_status bench_setup_mean(bench_env *env, const bench_case *c, bench_run *out);
clt_status bench_setup_max(bench_env *env, const bench_case *c, bench_run *out);
clt_status bench_setup_softmax(bench_env *env, const bench_case *c, bench_run *out);
clt_status bench_setup_softmax_backward(bench_env *env, const bench_case *c, bench_run *out);
clt_status bench_setup_rowsum(bench_env *env, const bench_case *c, bench_run *out);
/* clEnqueueCopyBuffer through clt_tensor_copy: the device's copy bandwidth, the yardstick of the
 * bandwidth-bound cases. */
clt_status bench_setup_copy(bench_env *env, const bench_case *c, bench_run *out);
/* bench_gemm.c: matmul p[0] = S; gemm_mlp_bias_relu p = {M, K, N}. */
clt_status bench_setup_matmul(bench_env *env, const bench_case *c, bench_run *out);
/* bench_gemm_math.c: matmul p = {S, clt_math_mode, clt_dtype}; conv2d_tf32 p as conv2d. */
clt_status bench_setup_matmul_math(bench_env *env, const bench_case *c, bench_run *out);
clt_status bench_setup_conv2d_tf32(bench_env *env, const bench_case *c, bench_run *out);
clt_status bench_setup_conv2d_tf32_backward_input(bench_env *env, const bench_case *c, bench_run *out);
clt_status bench_setup_conv2d_tf32_backward_weight(bench_env *env, const bench_case *c, bench_run *out);
clt_status bench_setup_gemm_mlp_bias_relu(bench_env *env, const bench_case *c, bench_run *out);
/* bench_conv.c: conv2d p = {n, c, h, w, o, k, stride, pad}. */
clt_status bench_setup_conv2d(bench_env *env, const bench_case *c, bench_run *out);
/* The same shapes through clt_conv2d_backward_input (dx from dy, w) and _weight (dw from dy, x). */
clt_status bench_setup_conv2d_backward_input(bench_env *env, const bench_case *c, bench_run *out);
clt_status bench_setup_conv2d_backward_weight(bench_env *env, const bench_case *c, bench_run *out);
/* bench_pool.c: p = {n, c, h, w, k, stride, pad} (global average: {n, c, h, w}). */
clt_status bench_setup_maxpool2d(bench_env *env, const bench_case *c, bench_run *out);
clt_status bench_setup_maxpool2d_backward(bench_env *env, const bench_case *c, bench_run *out);
clt_status bench_setup_avgpool2d(bench_env *env, const bench_case *c, bench_run *out);
clt_status bench_setup_global_avgpool(bench_env *env, const bench_case *c, bench_run *out);
/* bench_pinn.c: p = {points, steps (0: forward only), read the loss every k-th step}. */
clt_status bench_setup_pinn(bench_env *env, const bench_case *c, bench_run *out);
/* bench_fft.c: transforms p = {kind, rank, n0, n1, n2, batch, batched-total flag}; FNO
 * p = {B, channels, H, W, m1, m2, whole layer}. */
clt_status bench_setup_fft(bench_env *env, const bench_case *c, bench_run *out);
clt_status bench_setup_fno(bench_env *env, const bench_case *c, bench_run *out);

/* bench_ops.c: the ops suite (layout, indexing, random); parameters in suite_ops.c. */
clt_status bench_setup_permute_0213(bench_env *env, const bench_case *c, bench_run *out);
clt_status bench_setup_transpose_last2(bench_env *env, const bench_case *c, bench_run *out);
clt_status bench_setup_slice_step2(bench_env *env, const bench_case *c, bench_run *out);
clt_status bench_setup_concat3_last(bench_env *env, const bench_case *c, bench_run *out);
clt_status bench_setup_pad_reflect_hw(bench_env *env, const bench_case *c, bench_run *out);
clt_status bench_setup_broadcast_backward_rows(bench_env *env, const bench_case *c, bench_run *out);
clt_status bench_setup_embedding(bench_env *env, const bench_case *c, bench_run *out);
clt_status bench_setup_embedding_bwd_atomic(bench_env *env, const bench_case *c, bench_run *out);
clt_status bench_setup_embedding_bwd_det(bench_env *env, const bench_case *c, bench_run *out);
clt_status bench_setup_masked_fill_causal(bench_env *env, const bench_case *c, bench_run *out);
clt_status bench_setup_topk(bench_env *env, const bench_case *c, bench_run *out);
clt_status bench_setup_dropout(bench_env *env, const bench_case *c, bench_run *out);
clt_status bench_setup_random_uniform(bench_env *env, const bench_case *c, bench_run *out);
clt_status bench_setup_random_normal(bench_env *env, const bench_case *c, bench_run *out);

/* bench_models.c: the transformer and cnn suites, p = {batch, steps, deferred loss read}. */
clt_status bench_setup_transformer(bench_env *env, const bench_case *c, bench_run *out);
clt_status bench_setup_cnn(bench_env *env, const bench_case *c, bench_run *out);

#endif
