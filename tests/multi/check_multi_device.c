/* clt_tensor_transfer between contexts, on every device present: two contexts of one device
 * (cltensor shares the device's cl_context: one device copy), two contexts adopting one application
 * cl_context (the same direct path), a context on an application's own cl_context (staged through
 * pinned host memory in chunks), and every pair of distinct devices (staged). Data is compared
 * bit for bit; ordering on both queues is checked by overwriting the source at once. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cltensor_cl.h"
#include "cltensor_multi.h"
#include "util/test_util.h"

/* Element counts: empty, 1, a prime, and 5 staging chunks and a bit (slots reused, a short tail). */
static const int64_t sizes[] = {0, 1, 7919, (int64_t)(5 * CLT_TRANSFER_CHUNK_BYTES / 4) + 3};

static clt_context *device_context(int device)
{
    char sel[16];
    snprintf(sel, sizeof sel, "%d", device);
    clt_context_options o;
    clt_context_options_init(&o);
    o.device = sel;
    return tu_context_with(&o);
}

/* An application cl_context and queue on ctx's device, adopted by a new cltensor context. */
typedef struct adopted {
    cl_context cl;
    cl_command_queue q;
    clt_context *ctx;
} adopted;

static adopted adopt_new(clt_context *like, cl_context share)
{
    adopted a = {0};
    cl_int err;
    cl_device_id dev = clt_context_cl_device(like);
    a.cl = share ? share : clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    ck_assert_ptr_nonnull(a.cl);
    if (share)
        clRetainContext(share);
    a.q = clCreateCommandQueue(a.cl, dev, 0, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    TU_OK(clt_context_create_from_cl(a.cl, dev, a.q, NULL, &a.ctx));
    return a;
}

static void adopt_free(adopted *a)
{
    clt_context_free(a->ctx);
    clReleaseCommandQueue(a->q);
    clReleaseContext(a->cl);
}

/* dst <- src for every size; src is overwritten right after the transfer is enqueued, and the
 * destination must still get the old values (src's later work waits for the copy). */
static void check_pair(clt_context *dst_ctx, clt_context *src_ctx, int want_route, const char *label)
{
    ck_assert_int_eq(clt_transfer_route(dst_ctx, src_ctx), want_route);
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        int64_t n = sizes[k];
        clt_tensor *src = NULL, *dst = NULL;
        int64_t two[2] = {n > 1 ? 2 : 1, n > 1 ? n / 2 : n};
        if (n > 1 && n % 2)
            two[0] = 1, two[1] = n; /* shapes may differ: [n] <- [1, n] */
        TU_OK(clt_tensor_create(src_ctx, CLT_F32, 2, two, &src));
        TU_OK(clt_tensor_create(dst_ctx, CLT_F32, 1, &n, &dst));
        tu_poison(dst);
        TU_OK(clt_tensor_fill_uniform(src, tu_rng_next(), -4.f, 4.f));
        float *want = malloc((size_t)n * sizeof *want + 1), *got = malloc((size_t)n * sizeof *got + 1);
        ck_assert(want && got);
        TU_OK(clt_tensor_read(src, want, (size_t)n * sizeof *want));
        TU_OK(clt_tensor_transfer(dst, src));
        TU_OK(clt_tensor_fill(src, 123.0)); /* must land after the copy has read src */
        clt_tensor_free(src);               /* and the buffer may go back to the pool at once */
        TU_OK(clt_tensor_read(dst, got, (size_t)n * sizeof *got));
        ck_assert_msg(memcmp(want, got, (size_t)n * sizeof *got) == 0, "%s: %lld elements differ",
                      label, (long long)n);
        TU_OK(clt_finish(src_ctx));
        free(want);
        free(got);
        clt_tensor_free(dst);
    }
}

START_TEST(transfer_same_device_contexts)
{
    int count = 0;
    TU_OK(clt_device_count(&count));
    for (int d = 0; d < count; d++) {
        clt_context *a = device_context(d), *b = device_context(d);
        check_pair(b, a, 1, "two contexts of one device");
        check_pair(a, a, 0, "one context");
        tu_context_free(b);
        tu_context_free(a);
    }
}
END_TEST

START_TEST(transfer_shared_cl_context)
{
    int count = 0;
    TU_OK(clt_device_count(&count));
    for (int d = 0; d < count; d++) {
        clt_context *like = device_context(d);
        adopted a = adopt_new(like, NULL);
        adopted b = adopt_new(like, a.cl);
        check_pair(b.ctx, a.ctx, 1, "two contexts adopting one cl_context");
        adopt_free(&b);
        adopt_free(&a);
        tu_context_free(like);
    }
}
END_TEST

START_TEST(transfer_staged_between_cl_contexts)
{
    int count = 0;
    TU_OK(clt_device_count(&count));
    for (int d = 0; d < count; d++) {
        clt_context *own = device_context(d);
        adopted app = adopt_new(own, NULL);
        check_pair(app.ctx, own, 2, "to an application's cl_context");
        check_pair(own, app.ctx, 2, "from an application's cl_context");
        adopt_free(&app);
        tu_context_free(own);
    }
}
END_TEST

START_TEST(transfer_between_devices)
{
    int count = 0;
    TU_OK(clt_device_count(&count));
    for (int s = 0; s < count; s++)
        for (int d = 0; d < count; d++) {
            if (s == d)
                continue;
            clt_context *a = device_context(s), *b = device_context(d);
            check_pair(b, a, clt_context_cl_context(a) == clt_context_cl_context(b) ? 1 : 2,
                       "between devices");
            tu_context_free(b);
            tu_context_free(a);
        }
}
END_TEST

START_TEST(transfer_rejects_bad_input)
{
    clt_context *a = tu_context(), *b = tu_context();
    adopted app = adopt_new(a, NULL);
    int64_t n = 5, m = 6;
    clt_tensor *x = NULL, *y = NULL, *z = NULL, *w = NULL;
    TU_OK(clt_tensor_create(a, CLT_F32, 1, &n, &x));
    TU_OK(clt_tensor_create(app.ctx, CLT_F32, 1, &m, &y));
    TU_OK(clt_tensor_create(app.ctx, CLT_I32, 1, &n, &z));
    TU_OK(clt_tensor_create(b, CLT_F32, 1, &n, &w));
    TU_EXPECT_STATUS(clt_tensor_transfer(NULL, x), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_STATUS(clt_tensor_transfer(y, NULL), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_STATUS(clt_tensor_transfer(y, x), CLT_ERR_INVALID_SHAPE);
    TU_EXPECT_MESSAGE(clt_last_error(app.ctx), "clt_tensor_transfer");
    TU_EXPECT_STATUS(clt_tensor_transfer(z, x), CLT_ERR_INVALID_DTYPE);
    TU_EXPECT_MESSAGE(clt_last_error(app.ctx), "clt_tensor_transfer");
    ck_assert_int_eq(clt_transfer_route(NULL, a), -1);
    /* Two contexts sharing a cl_context may wrap one buffer: a partial overlap is refused. */
    adopted app2 = adopt_new(a, app.cl);
    cl_int err;
    cl_mem buf = clCreateBuffer(app.cl, CL_MEM_READ_WRITE, 64, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    clt_tensor *p = NULL, *q = NULL;
    TU_OK(clt_tensor_wrap_cl_mem(app.ctx, buf, 0, CLT_F32, 1, &n, &p));
    TU_OK(clt_tensor_wrap_cl_mem(app2.ctx, buf, 8, CLT_F32, 1, &n, &q));
    TU_EXPECT_STATUS(clt_tensor_transfer(q, p), CLT_ERR_ALIASING);
    clt_tensor_free(p);
    clt_tensor_free(q);
    clReleaseMemObject(buf);
    (void)w;
    adopt_free(&app2);
    adopt_free(&app);
    tu_context_free(b);
    tu_context_free(a);
}
END_TEST

Suite *multi_device_suite(void)
{
    Suite *s = suite_create("multi_device");
    TCase *tc = tcase_create("transfer");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, transfer_same_device_contexts);
    tcase_add_test(tc, transfer_shared_cl_context);
    tcase_add_test(tc, transfer_staged_between_cl_contexts);
    tcase_add_test(tc, transfer_between_devices);
    tcase_add_test(tc, transfer_rejects_bad_input);
    suite_add_tcase(s, tc);
    return s;
}
