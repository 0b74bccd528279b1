/* Host<->device transfers and asynchronous reads. Each test runs in three modes: the context as the
 * device and profile set it up, then forced through pinned staging (the discrete-GPU path), then
 * forced through map/unmap (the unified-memory path), so both paths run on any device. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "cltensor_cl.h"
#include "memory/transfer_state.h"
#include "util/test_util.h"

#define MODES 3 /* 0: as configured, 1: staged, 2: mapped */

static clt_context *context_in_mode(int mode)
{
    clt_context *ctx = tu_context();
    if (mode == 1)
        ctx->limits.zero_copy = 0;
    else if (mode == 2)
        ctx->limits.zero_copy = 1;
    return ctx;
}

static clt_tensor *make_u8(clt_context *ctx, int64_t n)
{
    clt_tensor *t = NULL;
    TU_OK(clt_tensor_create(ctx, CLT_U8, 1, &n, &t));
    return t;
}

static unsigned char *random_buffer(size_t n)
{
    unsigned char *p = malloc(n ? n : 1);
    ck_assert_ptr_nonnull(p);
    tu_random_bytes(p, n);
    return p;
}

/* A destination that differs from `like` in every byte, so unwritten bytes fail the comparison. */
static unsigned char *poisoned_copy_of(const unsigned char *like, size_t n)
{
    unsigned char *p = malloc(n ? n : 1);
    ck_assert_ptr_nonnull(p);
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)~like[i];
    return p;
}

static void assert_same(const unsigned char *want, const unsigned char *got, size_t n, const char *what)
{
    if (memcmp(want, got, n) == 0)
        return;
    size_t i = 0;
    while (want[i] == got[i])
        i++;
    ck_abort_msg("%s: %zu bytes differ first at byte %zu: want 0x%02x got 0x%02x", what, n, i,
                 want[i], got[i]);
}

static void round_trip(clt_context *ctx, size_t n)
{
    clt_tensor *t = make_u8(ctx, (int64_t)n);
    unsigned char *src = random_buffer(n), *dst = poisoned_copy_of(src, n);
    TU_OK(clt_tensor_write(t, src, n));
    TU_OK(clt_tensor_read(t, dst, n));
    assert_same(src, dst, n, "round trip");
    free(src);
    free(dst);
    clt_tensor_free(t);
}

START_TEST(round_trip_odd_sizes)
{
    static const size_t sizes[] = {1,           3,           255,         256,          257,
                                   4097,        (1 << 20) + 13, (8 << 20) + 1, (24 << 20) + 7,
                                   100000000};
    clt_context *ctx = context_in_mode(_i);
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
        round_trip(ctx, sizes[k]);
    if (_i == 1) /* the staged path really ran */
        ck_assert_ptr_nonnull(ctx->transfer->staging);
    if (_i == 2)
        ck_assert_ptr_null(ctx->transfer->staging);
    tu_context_free(ctx);
}
END_TEST

START_TEST(source_reusable_after_write)
{
    clt_context *ctx = context_in_mode(_i);
    const size_t n = (8 << 20) + 77;
    clt_tensor *t = make_u8(ctx, (int64_t)n);
    unsigned char *src = random_buffer(n), *keep = malloc(n), *dst = poisoned_copy_of(src, n);
    memcpy(keep, src, n);
    TU_OK(clt_tensor_write(t, src, n));
    memset(src, 0xEE, n); /* the write promised to be done with src */
    TU_OK(clt_tensor_read(t, dst, n));
    assert_same(keep, dst, n, "write then clobber source");
    free(src);
    free(keep);
    free(dst);
    clt_tensor_free(t);
    tu_context_free(ctx);
}
END_TEST

START_TEST(offsets_inside_a_buffer)
{
    clt_context *ctx = context_in_mode(_i);
    const size_t n = (8 << 20) + 300, off = 13, len = (8 << 20) + 1;
    clt_tensor *t = make_u8(ctx, (int64_t)n);
    size_t base = 0;
    cl_mem mem = clt_tensor_cl_mem(t, &base);
    unsigned char *a = random_buffer(n), *b = random_buffer(len), *want = malloc(n);
    TU_OK(clt_tensor_write(t, a, n));
    TU_OK(clt__transfer_write(ctx, mem, base + off, b, len));
    memcpy(want, a, n);
    memcpy(want + off, b, len);
    unsigned char *dst = poisoned_copy_of(want, n);
    TU_OK(clt_tensor_read(t, dst, n));
    assert_same(want, dst, n, "patched buffer");
    /* A read that starts and ends inside the buffer, across staging chunks. */
    const size_t roff = 7, rlen = (8 << 20) + 5;
    unsigned char *part = poisoned_copy_of(want + roff, rlen);
    TU_OK(clt__transfer_read(ctx, mem, base + roff, part, rlen));
    assert_same(want + roff, part, rlen, "read at an offset");
    /* Zero bytes: nothing to do, success. */
    TU_OK(clt__transfer_write(ctx, mem, base, a, 0));
    TU_OK(clt__transfer_read(ctx, mem, base, part, 0));
    free(a);
    free(b);
    free(want);
    free(dst);
    free(part);
    clt_tensor_free(t);
    tu_context_free(ctx);
}
END_TEST

START_TEST(writes_apply_in_order)
{
    clt_context *ctx = context_in_mode(_i);
    const size_t n = (1 << 20) + 13;
    clt_tensor *t = make_u8(ctx, (int64_t)n);
    unsigned char *last = NULL;
    for (int k = 0; k < 7; k++) { /* more writes than staging chunks, no read in between */
        free(last);
        last = random_buffer(n);
        TU_OK(clt_tensor_write(t, last, n));
    }
    unsigned char *dst = poisoned_copy_of(last, n);
    TU_OK(clt_tensor_read(t, dst, n));
    assert_same(last, dst, n, "last of several writes");
    free(last);
    free(dst);
    clt_tensor_free(t);
    tu_context_free(ctx);
}
END_TEST

START_TEST(async_reads_see_writes_in_queue_order)
{
    clt_context *ctx = context_in_mode(_i);
    static const size_t sizes[] = {64, 4097}; /* a ring slot and a malloc'ed buffer */
    for (int s = 0; s < 2; s++) {
        size_t n = sizes[s];
        clt_tensor *t = make_u8(ctx, (int64_t)n);
        unsigned char *a = random_buffer(n), *b = poisoned_copy_of(a, n);
        clt_future *fa = NULL, *fb = NULL;
        TU_OK(clt_tensor_write(t, a, n));
        TU_OK(clt_tensor_read_async(t, 0, (int64_t)n, &fa));
        TU_OK(clt_tensor_write(t, b, n));
        TU_OK(clt_tensor_read_async(t, 0, (int64_t)n, &fb));
        unsigned char *got = malloc(n);
        memcpy(got, b, n);
        TU_OK(clt_future_get(fa, got, n));
        assert_same(a, got, n, "first future");
        memcpy(got, a, n);
        TU_OK(clt_future_get(fb, got, n));
        assert_same(b, got, n, "second future");
        clt_future_free(fa);
        clt_future_free(fb);
        free(a);
        free(b);
        free(got);
        clt_tensor_free(t);
    }
    tu_context_free(ctx);
}
END_TEST

START_TEST(many_scalar_reads_outgrow_the_ring)
{
    clt_context *ctx = context_in_mode(_i);
    enum { N = 1000 };
    int64_t n = N;
    clt_tensor *t = NULL;
    TU_OK(clt_tensor_create(ctx, CLT_I32, 1, &n, &t));
    int32_t *vals = malloc(N * sizeof *vals);
    tu_random_bytes(vals, N * sizeof *vals);
    TU_OK(clt_tensor_write(t, vals, N * sizeof *vals));
    clt_future **fs = calloc(N, sizeof *fs);
    for (int i = 0; i < N; i++) /* all alive at once: more than the ring has slots */
        TU_OK(clt_tensor_read_async(t, i, 1, &fs[i]));
    TU_OK(clt_finish(ctx));
    for (int i = 0; i < N; i++) {
        ck_assert_int_eq(clt_future_poll(fs[i]), CLT_SUCCESS);
        int32_t v = ~vals[i];
        TU_OK(clt_future_get(fs[i], &v, sizeof v));
        ck_assert_int_eq(v, vals[i]);
    }
    for (int i = 0; i < N; i++)
        clt_future_free(fs[i]);
    free(fs);
    free(vals);
    clt_tensor_free(t);
    tu_context_free(ctx);
}
END_TEST

START_TEST(streaming_scalar_reads)
{
    /* A training loop: write a new loss each step, read it asynchronously, look a few steps later. */
    clt_context *ctx = context_in_mode(_i);
    clt_tensor *loss = NULL;
    TU_OK(clt_tensor_create(ctx, CLT_F32, 0, NULL, &loss));
    enum { STEPS = 1000, WINDOW = 5 };
    clt_future *window[WINDOW] = {0};
    float written[WINDOW];
    for (int step = 0; step < STEPS + WINDOW; step++) {
        int w = step % WINDOW;
        if (window[w]) {
            float got = -1.0f;
            TU_OK(clt_future_get(window[w], &got, sizeof got));
            ck_assert_msg(got == written[w], "step %d: got %g, want %g", step - WINDOW, got,
                          written[w]);
            clt_future_free(window[w]);
            window[w] = NULL;
        }
        if (step < STEPS) {
            float v;
            tu_random_f32(&v, 1, -100.0f, 100.0f);
            written[w] = v;
            TU_OK(clt_tensor_write(loss, &v, sizeof v));
            TU_OK(clt_tensor_read_async(loss, 0, 1, &window[w]));
        }
    }
    clt_tensor_free(loss);
    tu_context_free(ctx);
}
END_TEST

START_TEST(future_argument_errors)
{
    clt_context *ctx = context_in_mode(_i);
    int64_t n = 16;
    clt_tensor *t = NULL;
    TU_OK(clt_tensor_create(ctx, CLT_F32, 1, &n, &t));
    float vals[16], got[16];
    tu_random_f32(vals, 16, -1.0f, 1.0f);
    TU_OK(clt_tensor_write(t, vals, sizeof vals));
    clt_future *f = NULL;
    TU_OK(clt_tensor_read_async(t, 3, 5, &f));
    clt_status st = clt_future_poll(f);
    ck_assert_msg(st == CLT_SUCCESS || st == CLT_ERR_NOT_READY, "poll -> %s", clt_status_string(st));
    TU_OK(clt_finish(ctx));
    ck_assert_int_eq(clt_future_poll(f), CLT_SUCCESS);
    TU_OK(clt_future_wait(f));

    unsigned char poison[sizeof got];
    memset(poison, 0xFF, sizeof poison);
    memcpy(got, poison, sizeof got);
    ck_assert_int_eq(clt_future_get(f, got, 4 * sizeof(float)), CLT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(clt_last_error(ctx), "clt_future_get"));
    ck_assert_int_eq(clt_future_get(f, got, 6 * sizeof(float)), CLT_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(clt_future_get(f, NULL, 5 * sizeof(float)), CLT_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(memcmp(got, poison, sizeof got), 0); /* failed calls wrote nothing */
    TU_OK(clt_future_get(f, got, 5 * sizeof(float)));
    ck_assert_int_eq(memcmp(got, vals + 3, 5 * sizeof(float)), 0);
    TU_OK(clt_future_get(f, got, 5 * sizeof(float))); /* may be read again */
    clt_future_free(f);

    ck_assert_int_eq(clt_future_poll(NULL), CLT_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(clt_future_wait(NULL), CLT_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(clt_future_get(NULL, got, 4), CLT_ERR_INVALID_ARGUMENT);
    clt_future_free(NULL);

    /* An empty read is complete at once. */
    size_t base;
    cl_mem mem = clt_tensor_cl_mem(t, &base);
    TU_OK(clt__future_read(ctx, mem, base, 0, &f));
    ck_assert_int_eq(clt_future_poll(f), CLT_SUCCESS);
    TU_OK(clt_future_get(f, NULL, 0));
    clt_future_free(f);
    clt_tensor_free(t);
    tu_context_free(ctx);
}
END_TEST

START_TEST(context_free_releases_live_futures)
{
    clt_context *ctx = context_in_mode(_i);
    int64_t n = 300;
    clt_tensor *t = NULL;
    TU_OK(clt_tensor_create(ctx, CLT_U8, 1, &n, &t));
    unsigned char data[300];
    tu_random_bytes(data, sizeof data);
    TU_OK(clt_tensor_write(t, data, sizeof data));
    clt_future *small = NULL, *large = NULL;
    TU_OK(clt_tensor_read_async(t, 0, 8, &small));
    TU_OK(clt_tensor_read_async(t, 0, 300, &large));
    clt_tensor_free(t);
    tu_context_free(ctx); /* waits for both reads and frees them: no crash, no use after free */
}
END_TEST

Suite *transfer_suite(void)
{
    Suite *s = suite_create("transfer");
    TCase *tc = tcase_create("transfer");
    tcase_add_loop_test(tc, round_trip_odd_sizes, 0, MODES);
    tcase_add_loop_test(tc, source_reusable_after_write, 0, MODES);
    tcase_add_loop_test(tc, offsets_inside_a_buffer, 0, MODES);
    tcase_add_loop_test(tc, writes_apply_in_order, 0, MODES);
    suite_add_tcase(s, tc);
    TCase *fut = tcase_create("future");
    tcase_add_loop_test(fut, async_reads_see_writes_in_queue_order, 0, MODES);
    tcase_add_loop_test(fut, many_scalar_reads_outgrow_the_ring, 0, MODES);
    tcase_add_loop_test(fut, streaming_scalar_reads, 0, MODES);
    tcase_add_loop_test(fut, future_argument_errors, 0, MODES);
    tcase_add_loop_test(fut, context_free_releases_live_futures, 0, MODES);
    suite_add_tcase(s, fut);
    return s;
}
