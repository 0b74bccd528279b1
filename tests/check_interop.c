/* OpenCL interop contract (cltensor_cl.h): the objects behind a context, wrapped user buffers,
 * exported events and waiting on foreign events. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "cltensor_cl.h"
#include "util/test_util.h"


/* A user buffer on ctx's cl_context holding `bytes` of fresh random data (copied to *host). */
static cl_mem user_buffer(clt_context *ctx, size_t bytes, unsigned char **host)
{
    cl_int err;
    cl_mem buf = clCreateBuffer(clt_context_cl_context(ctx), CL_MEM_READ_WRITE, bytes, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    *host = malloc(bytes);
    ck_assert_ptr_nonnull(*host);
    tu_random_bytes(*host, bytes);
    ck_assert_int_eq(clEnqueueWriteBuffer(clt_context_cl_queue(ctx), buf, CL_TRUE, 0, bytes, *host,
                                          0, NULL, NULL),
                     CL_SUCCESS);
    return buf;
}

static void read_user_buffer(clt_context *ctx, cl_mem buf, void *dst, size_t bytes)
{
    ck_assert_int_eq(clEnqueueReadBuffer(clt_context_cl_queue(ctx), buf, CL_TRUE, 0, bytes, dst, 0,
                                         NULL, NULL),
                     CL_SUCCESS);
}

static cl_uint ref_count(cl_mem m)
{
    cl_uint n = 0;
    ck_assert_int_eq(clGetMemObjectInfo(m, CL_MEM_REFERENCE_COUNT, sizeof n, &n, NULL), CL_SUCCESS);
    return n;
}

START_TEST(context_objects)
{
    clt_context *ctx = tu_context();
    cl_context c = clt_context_cl_context(ctx);
    cl_device_id d = clt_context_cl_device(ctx);
    cl_command_queue q = clt_context_cl_queue(ctx);
    ck_assert_ptr_nonnull(c);
    ck_assert_ptr_nonnull(d);
    ck_assert_ptr_nonnull(q);
    cl_context qc;
    cl_device_id qd;
    cl_command_queue_properties props;
    ck_assert_int_eq(clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof qc, &qc, NULL), CL_SUCCESS);
    ck_assert_int_eq(clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof qd, &qd, NULL), CL_SUCCESS);
    ck_assert_int_eq(clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL),
                     CL_SUCCESS);
    ck_assert_ptr_eq(qc, c);
    ck_assert_ptr_eq(qd, d);
    ck_assert_msg(!(props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE), "the queue must be in order");
    char name[256];
    ck_assert_int_eq(clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof name, name, NULL), CL_SUCCESS);
    clt_device_info info;
    TU_OK(clt_context_device_info(ctx, &info));
    ck_assert_str_eq(name, info.device_name);
    ck_assert_ptr_null(clt_context_cl_context(NULL));
    ck_assert_ptr_null(clt_context_cl_device(NULL));
    ck_assert_ptr_null(clt_context_cl_queue(NULL));
    tu_context_free(ctx);
}
END_TEST

START_TEST(wrap_reads_user_data_at_offsets)
{
    clt_context *ctx = tu_context();
    enum { N = 1031 };
    unsigned char *host;
    cl_mem buf = user_buffer(ctx, N * sizeof(float), &host);
    clt_pool_stats before, after;
    TU_OK(clt_pool_get_stats(ctx, &before));

    const size_t offsets[] = {0, 4, 4 * 17, 4 * 1000};
    for (size_t k = 0; k < sizeof offsets / sizeof offsets[0]; k++) {
        size_t off = offsets[k];
        int64_t count = N - (int64_t)(off / 4);
        clt_tensor *t = NULL;
        TU_OK(clt_tensor_wrap_cl_mem(ctx, buf, off, CLT_F32, 1, &count, &t));
        ck_assert_int_eq(clt_tensor_numel(t), count);
        ck_assert_int_eq(clt_tensor_dtype(t), CLT_F32);
        ck_assert_ptr_eq(clt_tensor_context(t), ctx);
        size_t got_off = 12345;
        ck_assert_ptr_eq(clt_tensor_cl_mem(t, &got_off), buf);
        ck_assert_uint_eq(got_off, off);
        float *back = malloc((size_t)count * 4);
        TU_OK(clt_tensor_read(t, back, (size_t)count * 4));
        ck_assert_mem_eq(back, host + off, (size_t)count * 4);
        /* A view keeps the buffer and the offset. */
        int64_t shape2[2] = {1, count};
        clt_tensor *v = NULL;
        TU_OK(clt_tensor_reshape(t, 2, shape2, &v));
        got_off = 12345;
        ck_assert_ptr_eq(clt_tensor_cl_mem(v, &got_off), buf);
        ck_assert_uint_eq(got_off, off);
        clt_tensor_free(t);
        memset(back, 0, (size_t)count * 4);
        TU_OK(clt_tensor_read(v, back, (size_t)count * 4));
        ck_assert_mem_eq(back, host + off, (size_t)count * 4);
        clt_tensor_free(v);
        free(back);
    }
    /* A 2-D shape over part of the buffer. */
    int64_t shape[2] = {7, 13};
    clt_tensor *t = NULL;
    TU_OK(clt_tensor_wrap_cl_mem(ctx, buf, 4 * 3, CLT_F32, 2, shape, &t));
    float part[7 * 13];
    TU_OK(clt_tensor_read(t, part, sizeof part));
    ck_assert_mem_eq(part, host + 12, sizeof part);
    clt_tensor_free(t);
    /* u8 at an odd offset is aligned to its element size. */
    int64_t n8 = 5;
    TU_OK(clt_tensor_wrap_cl_mem(ctx, buf, 3, CLT_U8, 1, &n8, &t));
    unsigned char b8[5];
    TU_OK(clt_tensor_read(t, b8, sizeof b8));
    ck_assert_mem_eq(b8, host + 3, 5);
    clt_tensor_free(t);

    /* Wrapping never touches the pool. */
    TU_OK(clt_finish(ctx));
    TU_OK(clt_pool_get_stats(ctx, &after));
    ck_assert_uint_eq(after.bytes_in_use, before.bytes_in_use);
    ck_assert_uint_eq(after.bytes_cached, before.bytes_cached);
    ck_assert_uint_eq(after.misses, before.misses);
    clReleaseMemObject(buf);
    free(host);
    tu_context_free(ctx);
}
END_TEST

static void expect_wrap_fails(clt_context *ctx, cl_mem buf, size_t off, clt_dtype dt, int ndim,
                              const int64_t *shape, clt_status want)
{
    clt_tensor *t = (clt_tensor *)&want;
    clt_status st = clt_tensor_wrap_cl_mem(ctx, buf, off, dt, ndim, shape, &t);
    ck_assert_msg(st == want, "clt_tensor_wrap_cl_mem(offset %zu, %s) -> %s, expected %s", off,
                  clt_dtype_name(dt), clt_status_string(st), clt_status_string(want));
    ck_assert_ptr_null(t);
    if (ctx)
        ck_assert_msg(strstr(clt_last_error(ctx), "clt_tensor_wrap_cl_mem") != NULL,
                      "message \"%s\" does not name the call", clt_last_error(ctx));
}

START_TEST(wrap_errors)
{
    clt_context *ctx = tu_context();
    enum { N = 100 };
    unsigned char *host;
    cl_mem buf = user_buffer(ctx, N * 4, &host);
    cl_uint refs = ref_count(buf);
    int64_t too_big = N + 1, fits = N, rest = N - 10, bad_dim = -3;
    int64_t huge[CLT_MAX_DIMS + 1] = {(int64_t)1 << 40, (int64_t)1 << 40, 1, 1, 1, 1, 1, 1, 1};
    expect_wrap_fails(ctx, buf, 0, CLT_F32, 1, &too_big, CLT_ERR_INVALID_SHAPE);
    int64_t rest_plus = rest + 1;
    expect_wrap_fails(ctx, buf, 40, CLT_F32, 1, &rest_plus, CLT_ERR_INVALID_SHAPE);
    expect_wrap_fails(ctx, buf, 4 * N + 4, CLT_F32, 1, &fits, CLT_ERR_INVALID_SHAPE);
    int64_t one = 1;
    expect_wrap_fails(ctx, buf, 4 * N, CLT_F32, 1, &one, CLT_ERR_INVALID_SHAPE);
    expect_wrap_fails(ctx, buf, 2, CLT_F32, 1, &one, CLT_ERR_INVALID_ARGUMENT);
    expect_wrap_fails(ctx, buf, 6, CLT_I32, 1, &one, CLT_ERR_INVALID_ARGUMENT);
    expect_wrap_fails(ctx, buf, 1, CLT_F16, 1, &one, CLT_ERR_INVALID_ARGUMENT);
    expect_wrap_fails(ctx, NULL, 0, CLT_F32, 1, &one, CLT_ERR_INVALID_ARGUMENT);
    expect_wrap_fails(ctx, buf, 0, (clt_dtype)0, 1, &one, CLT_ERR_INVALID_DTYPE);
    expect_wrap_fails(ctx, buf, 0, CLT_F32, CLT_MAX_DIMS + 1, huge, CLT_ERR_INVALID_SHAPE);
    expect_wrap_fails(ctx, buf, 0, CLT_F32, 1, &bad_dim, CLT_ERR_INVALID_SHAPE);
    expect_wrap_fails(ctx, buf, 0, CLT_F32, 2, huge, CLT_ERR_SIZE_OVERFLOW);
    expect_wrap_fails(NULL, buf, 0, CLT_F32, 1, &one, CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_STATUS(clt_tensor_wrap_cl_mem(ctx, buf, 0, CLT_F32, 1, &one, NULL),
                  CLT_ERR_INVALID_ARGUMENT);
    ck_assert_uint_eq(ref_count(buf), refs); /* failures retain nothing */

    /* A buffer of another cl_context. */
    cl_device_id dev = clt_context_cl_device(ctx);
    cl_int err;
    cl_context foreign = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    cl_mem fbuf = clCreateBuffer(foreign, CL_MEM_READ_WRITE, 64, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    expect_wrap_fails(ctx, fbuf, 0, CLT_F32, 1, &one, CLT_ERR_CONTEXT_MISMATCH);
    clReleaseMemObject(fbuf);
    clReleaseContext(foreign);

    /* The exact fit works. */
    clt_tensor *t = NULL;
    TU_OK(clt_tensor_wrap_cl_mem(ctx, buf, 40, CLT_F32, 1, &rest, &t));
    clt_tensor_free(t);
    ck_assert_ptr_null(clt_tensor_cl_mem(NULL, NULL));
    clReleaseMemObject(buf);
    free(host);
    tu_context_free(ctx);
}
END_TEST

/* Freeing the tensor releases only its own reference: the user's buffer stays alive and usable. */
START_TEST(wrap_free_keeps_user_buffer)
{
    clt_context *ctx = tu_context();
    enum { N = 333 };
    unsigned char *host;
    cl_mem buf = user_buffer(ctx, N * 4, &host);
    cl_uint refs = ref_count(buf);
    int64_t n = N;
    clt_tensor *t = NULL;
    TU_OK(clt_tensor_wrap_cl_mem(ctx, buf, 0, CLT_F32, 1, &n, &t));
    ck_assert_uint_gt(ref_count(buf), refs); /* retained */
    TU_OK(clt_tensor_fill(t, -1.25));
    clt_tensor_free(t);
    TU_OK(clt_finish(ctx));
    ck_assert_uint_eq(ref_count(buf), refs);
    float back[N];
    read_user_buffer(ctx, buf, back, sizeof back);
    for (int i = 0; i < N; i++)
        ck_assert_float_eq(back[i], -1.25f);
    /* Still writable by the user, and wrappable again. */
    float fresh[N];
    tu_random_f32(fresh, N, -3.0f, 3.0f);
    ck_assert_int_eq(clEnqueueWriteBuffer(clt_context_cl_queue(ctx), buf, CL_TRUE, 0, sizeof fresh,
                                          fresh, 0, NULL, NULL),
                     CL_SUCCESS);
    TU_OK(clt_tensor_wrap_cl_mem(ctx, buf, 0, CLT_F32, 1, &n, &t));
    TU_OK(clt_tensor_read(t, back, sizeof back));
    ck_assert_mem_eq(back, fresh, sizeof fresh);
    clt_tensor_free(t);
    TU_OK(clt_finish(ctx));
    ck_assert_int_eq(clReleaseMemObject(buf), CL_SUCCESS);
    free(host);
    tu_context_free(ctx);
}
END_TEST

/* A wrapped buffer still alive when the context goes: the user's buffer outlives the context. */
START_TEST(wrap_outlives_context)
{
    clt_context *ctx = tu_context();
    cl_context c = clt_context_cl_context(ctx);
    ck_assert_int_eq(clRetainContext(c), CL_SUCCESS);
    unsigned char *host;
    cl_mem buf = user_buffer(ctx, 256, &host);
    cl_uint refs = ref_count(buf);
    int64_t n = 64;
    clt_tensor *t = NULL;
    TU_OK(clt_tensor_wrap_cl_mem(ctx, buf, 0, CLT_F32, 1, &n, &t));
    tu_context_free(ctx); /* releases t too */
    ck_assert_uint_eq(ref_count(buf), refs);
    ck_assert_int_eq(clReleaseMemObject(buf), CL_SUCCESS);
    clReleaseContext(c);
    free(host);
}
END_TEST

/* Two wraps of one buffer: overlapping ranges may not be copied into each other; disjoint ones
 * copy exactly, leaving every other byte of the buffer alone. */
START_TEST(wrap_overlap_is_aliasing)
{
    clt_context *ctx = tu_context();
    enum { N = 1000 };
    unsigned char *host;
    cl_mem buf = user_buffer(ctx, N * 4, &host);
    int64_t count = 300;
    clt_tensor *a = NULL, *b = NULL;
    TU_OK(clt_tensor_wrap_cl_mem(ctx, buf, 4 * 100, CLT_F32, 1, &count, &a));
    TU_OK(clt_tensor_wrap_cl_mem(ctx, buf, 4 * 399, CLT_F32, 1, &count, &b)); /* shares one element */
    TU_EXPECT_STATUS(clt_tensor_copy(b, a), CLT_ERR_ALIASING);
    TU_EXPECT_STATUS(clt_tensor_copy(a, b), CLT_ERR_ALIASING);
    unsigned char *back = malloc(N * 4);
    ck_assert_ptr_nonnull(back);
    read_user_buffer(ctx, buf, back, N * 4);
    ck_assert_mem_eq(back, host, N * 4);
    clt_tensor_free(b);

    TU_OK(clt_tensor_wrap_cl_mem(ctx, buf, 4 * 400, CLT_F32, 1, &count, &b)); /* adjacent */
    TU_OK(clt_tensor_copy(b, a));
    read_user_buffer(ctx, buf, back, N * 4);
    memcpy(host + 4 * 400, host + 4 * 100, 4 * 300);
    ck_assert_mem_eq(back, host, N * 4);
    clt_tensor_free(a);
    clt_tensor_free(b);
    clReleaseMemObject(buf);
    free(back);
    free(host);
    tu_context_free(ctx);
}
END_TEST

/* The buffer and offset of a pool tensor address exactly the tensor's data. */
START_TEST(cl_mem_of_pool_tensor)
{
    clt_context *ctx = tu_context();
    enum { N = 517 };
    float data[N], back[N];
    tu_random_f32(data, N, -9.0f, 9.0f);
    int64_t n = N;
    clt_tensor *t = NULL;
    TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, 1, &n, data, sizeof data, &t));
    size_t off = 999999;
    cl_mem m = clt_tensor_cl_mem(t, &off);
    ck_assert_ptr_nonnull(m);
    size_t size = 0;
    clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof size, &size, NULL);
    ck_assert_uint_ge(size, off + sizeof data);
    ck_assert_int_eq(clEnqueueReadBuffer(clt_context_cl_queue(ctx), m, CL_TRUE, off, sizeof data,
                                         back, 0, NULL, NULL),
                     CL_SUCCESS);
    ck_assert_mem_eq(back, data, sizeof data);
    ck_assert_ptr_eq(clt_tensor_cl_mem(t, NULL), m); /* the offset pointer is optional */
    clt_tensor_free(t);
    tu_context_free(ctx);
}
END_TEST

START_TEST(export_event_completes_after_finish)
{
    clt_context *ctx = tu_context();
    enum { N = 100003 };
    int64_t n = N;
    clt_tensor *t = NULL;
    TU_OK(clt_tensor_create(ctx, CLT_F32, 1, &n, &t));
    TU_OK(clt_tensor_fill(t, 3.0));
    cl_event ev = NULL;
    TU_OK(clt_context_export_event(ctx, &ev));
    ck_assert_ptr_nonnull(ev);
    TU_OK(clt_finish(ctx));
    cl_int status = -1;
    ck_assert_int_eq(clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status,
                                    NULL),
                     CL_SUCCESS);
    ck_assert_int_eq(status, CL_COMPLETE);
    cl_context ec;
    clGetEventInfo(ev, CL_EVENT_CONTEXT, sizeof ec, &ec, NULL);
    ck_assert_ptr_eq(ec, clt_context_cl_context(ctx));
    ck_assert_int_eq(clReleaseEvent(ev), CL_SUCCESS);

    /* Also from an idle context, and waitable with clWaitForEvents. */
    TU_OK(clt_context_export_event(ctx, &ev));
    ck_assert_int_eq(clWaitForEvents(1, &ev), CL_SUCCESS);
    ck_assert_int_eq(clReleaseEvent(ev), CL_SUCCESS);

    TU_EXPECT_STATUS(clt_context_export_event(NULL, &ev), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_STATUS(clt_context_export_event(ctx, NULL), CLT_ERR_INVALID_ARGUMENT);
    clt_tensor_free(t);
    tu_context_free(ctx);
}
END_TEST

/* Work enqueued after clt_context_wait_event(user event) runs only once the event is set. */
START_TEST(wait_event_holds_work_until_user_event)
{
    clt_context *ctx = tu_context();
    enum { N = 4099 };
    int64_t n = N;
    float data[N], back[N];
    tu_random_f32(data, N, -4.0f, 4.0f);
    clt_tensor *t = NULL;
    TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, 1, &n, data, sizeof data, &t));
    float value;
    tu_random_f32(&value, 1, 10.0f, 20.0f);
    cl_int err;
    cl_event ue = clCreateUserEvent(clt_context_cl_context(ctx), &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    TU_OK(clt_context_wait_event(ctx, ue));
    TU_OK(clt_tensor_fill(t, value));
    clt_future *f = NULL;
    TU_OK(clt_tensor_read_async(t, 0, N, &f));
    cl_event marker = NULL;
    TU_OK(clt_context_export_event(ctx, &marker));
    TU_OK(clt_flush(ctx));
    cl_int status = -1;
    clGetEventInfo(marker, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
    ck_assert_int_ne(status, CL_COMPLETE);
    TU_EXPECT_STATUS(clt_future_poll(f), CLT_ERR_NOT_READY);

    ck_assert_int_eq(clSetUserEventStatus(ue, CL_COMPLETE), CL_SUCCESS);
    TU_OK(clt_future_wait(f));
    TU_OK(clt_future_get(f, back, sizeof back));
    for (int i = 0; i < N; i++)
        ck_assert_float_eq(back[i], value);
    TU_OK(clt_finish(ctx));
    clGetEventInfo(marker, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
    ck_assert_int_eq(status, CL_COMPLETE);
    clReleaseEvent(marker);
    clReleaseEvent(ue);
    clt_future_free(f);

    TU_EXPECT_STATUS(clt_context_wait_event(NULL, ue), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_STATUS(clt_context_wait_event(ctx, NULL), CLT_ERR_INVALID_ARGUMENT);
    clt_tensor_free(t);
    tu_context_free(ctx);
}
END_TEST

Suite *interop_suite(void)
{
    Suite *s = suite_create("interop");
    TCase *tc = tcase_create("interop");
    tcase_add_test(tc, context_objects);
    tcase_add_test(tc, wrap_reads_user_data_at_offsets);
    tcase_add_test(tc, wrap_errors);
    tcase_add_test(tc, wrap_free_keeps_user_buffer);
    tcase_add_test(tc, wrap_outlives_context);
    tcase_add_test(tc, wrap_overlap_is_aliasing);
    tcase_add_test(tc, cl_mem_of_pool_tensor);
    tcase_add_test(tc, export_event_completes_after_finish);
    tcase_add_test(tc, wait_event_holds_work_until_user_event);
    suite_add_tcase(s, tc);
    return s;
}
