/* Helpers shared by the test suites: contexts, fresh random data, poisoned outputs, temp dirs. */
#ifndef CLT_TEST_UTIL_H
#define CLT_TEST_UTIL_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cltensor_all.h"

/* Fail the test with the library's message when a call does not succeed. */
#define TU_OK(call)                                                                        \
    do {                                                                                   \
        clt_status tu_st_ = (call);                                                        \
        ck_assert_msg(tu_st_ == CLT_SUCCESS, "%s -> %s: %s", #call,                        \
                      clt_status_string(tu_st_), clt_last_error(tu_ctx_for_msg()));        \
    } while (0)

/* Expect a call to return `want` (any status, success included). */
#define TU_EXPECT_STATUS(call, want)                                                               \
    do {                                                                                           \
        clt_status tu_st_ = (call);                                                                \
        ck_assert_msg(tu_st_ == (want), "%s -> %s, expected %s", #call, clt_status_string(tu_st_), \
                      clt_status_string(want));                                                    \
    } while (0)

/* Expect an error message to mention `needle` (the call's name, the bad value). */
#define TU_EXPECT_MESSAGE(msg, needle)                                                             \
    ck_assert_msg(strstr((msg), (needle)) != NULL, "error message \"%s\" does not mention \"%s\"", \
                  (msg), (needle))

/* Save an environment variable (heap copy or NULL) and put it back (freeing the copy). */
char *tu_env_save(const char *name);
void tu_env_restore(const char *name, char *saved);

/* A context on the device and profile the environment selects (CLT_DEVICE, CLT_DEVICE_PROFILE).
 * Also remembered for TU_OK messages; free it with tu_context_free. */
clt_context *tu_context(void);
/* Same, with explicit options. */
clt_context *tu_context_with(const clt_context_options *opts);
void tu_context_free(clt_context *ctx);
clt_context *tu_ctx_for_msg(void);

/* The run's random seed: $CLT_TEST_SEED, else fresh from /dev/urandom; printed once so that a
 * failure can be replayed. Each call to tu_rng_next advances one process-wide generator. */
uint64_t tu_seed(void);
uint64_t tu_rng_next(void);
/* Uniform floats in [lo, hi), fresh each call. */
void tu_random_f32(float *x, size_t n, float lo, float hi);
void tu_random_bytes(void *x, size_t n);

/* Set every byte of t to 0xFF (a NaN pattern for floats) so unwritten outputs fail comparisons. */
void tu_poison(clt_tensor *t);

/* A context on the test device with the profiler on. */
clt_context *tu_profiled_context(void);
/* A 1-D f32 tensor of n elements, uniform in [0, 1) from the test's random stream. */
clt_tensor *tu_uniform_1d(clt_context *ctx, int64_t n);

/* Launches the profiler recorded on ctx (a context with the profiler on; collects first) whose
 * implementation name contains impl, of the public call op (NULL: any). */
uint64_t tu_launches(clt_context *ctx, const char *op, const char *impl);

/* A fresh empty directory under /tmp; the returned string is heap memory. */
char *tu_make_temp_dir(void);
/* rm -r of a directory made by tu_make_temp_dir. */
void tu_remove_dir(const char *dir);
/* Writes every embedded kernel source under dir (a CLT_KERNEL_DIR tree), appending an #error line
 * to each whose name starts with broken ("gemm/": the GEMM family, "": all of them). */
void tu_write_kernel_tree(const char *dir, const char *broken);

#endif
