/* Failures inside shared layers (program build, buffer pool, workspace) reached through public
 * calls: the status is the documented one and clt_last_error starts with "<public call>:", the
 * name the caller used, not the layer's own ("device allocation: ...", "build log: ..."). */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cltensor_all.h"
#include "runtime/runtime.h"
#include "util/test_util.h"

static void assert_named(const clt_context *ctx, const char *call)
{
    const char *msg = clt_last_error(ctx);
    size_t n = strlen(call);
    ck_assert_msg(strncmp(msg, call, n) == 0 && msg[n] == ':', "expected \"%s: ...\", got \"%.300s\"",
                  call, msg);
}

/* One op of each family that compiles kernels, on three 37-element F32 tensors. */
static void expect_build_failures(clt_context *ctx, clt_tensor *a, clt_tensor *b, clt_tensor *c,
                                  clt_status want)
{
    TU_EXPECT_STATUS(clt_add(a, b, c), want);
    assert_named(ctx, "clt_add");
    TU_EXPECT_STATUS(clt_unary(CLT_TANH, a, 0.0f, c), want);
    assert_named(ctx, "clt_unary");
    TU_EXPECT_STATUS(clt_gemm(CLT_NO_TRANS, CLT_NO_TRANS, 1, 1, 1, 1.0f, a, 0, 1, b, 0, 1, 0.0f, c,
                              0, 1, NULL),
                     want);
    assert_named(ctx, "clt_gemm");
    TU_EXPECT_STATUS(clt_softmax(a, c), want);
    assert_named(ctx, "clt_softmax");
    clt_tensor *sum;
    TU_OK(clt_tensor_create(ctx, CLT_F32, 0, NULL, &sum));
    TU_EXPECT_STATUS(clt_reduce(CLT_REDUCE_SUM, a, 0, NULL, 0, sum), want);
    assert_named(ctx, "clt_reduce");
    clt_tensor_free(sum);
    TU_EXPECT_STATUS(clt_tensor_fill(c, 2.0), want);
    assert_named(ctx, "clt_tensor_fill");
}

/* kernel_dir holding every kernel source broken (build failures), or none at all (the sources
 * cannot be read): each op fails with its documented status, named, and writes nothing. */
START_TEST(build_failures_name_the_call)
{
    for (int empty = 0; empty < 2; empty++) {
        char *kdir = tu_make_temp_dir();
        if (!empty)
            tu_write_kernel_tree(kdir, "");
        clt_context_options o;
        clt_context_options_init(&o);
        o.kernel_dir = kdir;
        clt_context *ctx = tu_context_with(&o);
        const int64_t n = 37;
        float host[37];
        for (int i = 0; i < n; i++)
            host[i] = (float)i - 11.5f;
        clt_tensor *a, *b, *c; /* from host data: filling on the device would need a kernel */
        TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, 1, &n, host, sizeof host, &a));
        TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, 1, &n, host, sizeof host, &b));
        TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, 1, &n, host, sizeof host, &c));
        expect_build_failures(ctx, a, b, c, empty ? CLT_ERR_IO : CLT_ERR_BUILD_FAILED);
        float back[37];
        TU_OK(clt_tensor_read(c, back, sizeof back));
        for (int i = 0; i < n; i++)
            ck_assert_float_eq(back[i], host[i]); /* nothing written */
        clt_tensor_free(a), clt_tensor_free(b), clt_tensor_free(c);
        tu_context_free(ctx);
        tu_remove_dir(kdir);
        free(kdir);
    }
}
END_TEST

enum { CAP = 1024 * 1024, MAX_FILLERS = 1024 };

/* Fills the rest of ctx's pool cap with tensors, large ones first, until even the smallest is
 * refused (named by clt_tensor_create, CLT_ERR_OUT_OF_DEVICE_MEMORY); returns how many it made. */
static int fill_pool(clt_context *ctx, clt_tensor **fillers)
{
    static const int64_t sizes[] = {16384, 1024, 64, 1};
    int nf = 0;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        clt_status st;
        while (nf < MAX_FILLERS &&
               (st = clt_tensor_create(ctx, CLT_F32, 1, &sizes[s], &fillers[nf])) == CLT_SUCCESS)
            nf++;
        ck_assert_int_lt(nf, MAX_FILLERS);
        ck_assert_int_eq(st, CLT_ERR_OUT_OF_DEVICE_MEMORY);
        assert_named(ctx, "clt_tensor_create");
    }
    return nf;
}

/* A pool at its cap: a tensor too large, and a reduction whose input and output fit but whose
 * chunk-group workspace does not, both CLT_ERR_OUT_OF_DEVICE_MEMORY named by the public call. */
START_TEST(pool_and_workspace_failures_name_the_call)
{
    clt_context_options o;
    clt_context_options_init(&o);
    o.memory_limit = CAP;
    clt_context *ctx = tu_context_with(&o);

    clt_tensor *big;
    const int64_t too_many = CAP; /* CAP floats: four times the cap */
    TU_EXPECT_STATUS(clt_tensor_create(ctx, CLT_F32, 1, &too_many, &big),
                     CLT_ERR_OUT_OF_DEVICE_MEMORY);
    assert_named(ctx, "clt_tensor_create");

    /* One long row: the reduction splits it into chunk groups, which need the workspace. */
    const int64_t n = 65536;
    clt_tensor *x = tu_uniform_1d(ctx, n), *out;
    TU_OK(clt_tensor_create(ctx, CLT_F32, 0, NULL, &out));
    TU_OK(clt_tensor_fill(out, 3.0));
    static clt_tensor *fillers[MAX_FILLERS];
    int nf = fill_pool(ctx, fillers);

    TU_EXPECT_STATUS(clt_reduce(CLT_REDUCE_SUM, x, 0, NULL, 0, out), CLT_ERR_OUT_OF_DEVICE_MEMORY);
    assert_named(ctx, "clt_reduce");
    float h;
    TU_OK(clt_tensor_read(out, &h, sizeof h));
    ck_assert_float_eq(h, 3.0f); /* nothing written */

    for (int i = 0; i < nf; i++)
        clt_tensor_free(fillers[i]);
    clt_tensor_free(x), clt_tensor_free(out);
    tu_context_free(ctx);
}
END_TEST

/* The mechanism itself, on layers whose failures (host memory, OpenCL enqueue) cannot be provoked
 * on demand: stand-ins for public entry points, named by __func__ as the real ones are. */
static clt_status clt_probe_inner(clt_context *ctx, const char *layer_message)
{
    CLT_PUBLIC_CALL();
    return clt__fail(ctx, CLT_ERR_OUT_OF_HOST_MEMORY, "%s", layer_message);
}

static clt_status clt_probe_outer(clt_context *ctx, const char *layer_message)
{
    CLT_PUBLIC_CALL();
    clt_status st = clt_probe_inner(ctx, layer_message); /* a public call made by another */
    ck_assert_str_eq(clt__public_call(), "clt_probe_outer"); /* still the outer one after it */
    return st;
}

START_TEST(layer_messages_take_the_outermost_public_name)
{
    clt_context *ctx = tu_context();
    ck_assert_ptr_null(clt__public_call());
    TU_EXPECT_STATUS(clt_probe_inner(ctx, "program cache: out of host memory"),
                     CLT_ERR_OUT_OF_HOST_MEMORY);
    ck_assert_str_eq(clt_last_error(ctx), "clt_probe_inner: program cache: out of host memory");
    ck_assert_ptr_null(clt__public_call()); /* restored on return */
    /* Already named: not doubled. */
    TU_EXPECT_STATUS(clt_probe_inner(ctx, "clt_probe_inner: x is NULL"), CLT_ERR_OUT_OF_HOST_MEMORY);
    ck_assert_str_eq(clt_last_error(ctx), "clt_probe_inner: x is NULL");
    /* Nested: the outermost caller's name, once. */
    TU_EXPECT_STATUS(clt_probe_outer(ctx, "kernel map: out of host memory"),
                     CLT_ERR_OUT_OF_HOST_MEMORY);
    ck_assert_str_eq(clt_last_error(ctx), "clt_probe_outer: kernel map: out of host memory");
    /* Without a context: the thread's slot, same rule. */
    TU_EXPECT_STATUS(clt_probe_inner(NULL, "device list: out of host memory"),
                     CLT_ERR_OUT_OF_HOST_MEMORY);
    ck_assert_str_eq(clt_last_error(NULL), "clt_probe_inner: device list: out of host memory");
    ck_assert_ptr_null(clt__public_call());
    tu_context_free(ctx);
}
END_TEST

/* Two threads inside public calls at once, failing on one shared context in turn and each on the
 * thread slot: each message carries its own thread's call name. */
static pthread_barrier_t both_inside;

static clt_status clt_probe_thread_a(clt_context *ctx, char *seen, size_t cap)
{
    CLT_PUBLIC_CALL();
    pthread_barrier_wait(&both_inside);
    clt_status st = clt__fail(NULL, CLT_ERR_OPENCL, "enqueue: CL_OUT_OF_RESOURCES (-5)");
    snprintf(seen, cap, "%s", clt_last_error(NULL));
    pthread_barrier_wait(&both_inside);
    (void)ctx;
    return st;
}

static clt_status clt_probe_thread_b(clt_context *ctx, char *seen, size_t cap)
{
    CLT_PUBLIC_CALL();
    pthread_barrier_wait(&both_inside);
    clt_status st = clt__fail(NULL, CLT_ERR_OPENCL, "enqueue: CL_OUT_OF_RESOURCES (-5)");
    snprintf(seen, cap, "%s", clt_last_error(NULL));
    pthread_barrier_wait(&both_inside);
    (void)ctx;
    return st;
}

static void *run_b(void *arg)
{
    char *seen = arg;
    clt_probe_thread_b(NULL, seen, 128);
    return NULL;
}

START_TEST(public_call_names_are_per_thread)
{
    ck_assert_int_eq(pthread_barrier_init(&both_inside, NULL, 2), 0);
    char seen_a[128], seen_b[128];
    pthread_t tb;
    ck_assert_int_eq(pthread_create(&tb, NULL, run_b, seen_b), 0);
    TU_EXPECT_STATUS(clt_probe_thread_a(NULL, seen_a, sizeof seen_a), CLT_ERR_OPENCL);
    ck_assert_int_eq(pthread_join(tb, NULL), 0);
    pthread_barrier_destroy(&both_inside);
    ck_assert_str_eq(seen_a, "clt_probe_thread_a: enqueue: CL_OUT_OF_RESOURCES (-5)");
    ck_assert_str_eq(seen_b, "clt_probe_thread_b: enqueue: CL_OUT_OF_RESOURCES (-5)");
    ck_assert_ptr_null(clt__public_call());
}
END_TEST

Suite *error_names_suite(void)
{
    Suite *s = suite_create("error_names");
    TCase *tc = tcase_create("names");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, build_failures_name_the_call);
    tcase_add_test(tc, pool_and_workspace_failures_name_the_call);
    tcase_add_test(tc, layer_messages_take_the_outermost_public_name);
    tcase_add_test(tc, public_call_names_are_per_thread);
    suite_add_tcase(s, tc);
    return s;
}
