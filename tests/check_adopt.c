/* clt_context_create_from_cl: a cltensor context on the application's own cl_context, device and
 * queue. Buffers and events pass both ways without a copy; the application's objects are retained,
 * never owned; mismatched objects are refused with nothing retained. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cltensor_cl.h"
#include "util/test_util.h"

/* The application's side: its own cl_context and queue on the device the test environment selects. */
typedef struct app_cl {
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
} app_cl;

static cl_device_id test_device(void)
{
    int index;
    TU_OK(clt_device_select(NULL, &index));
    cl_uint np = 0;
    ck_assert_int_eq(clGetPlatformIDs(0, NULL, &np), CL_SUCCESS);
    cl_platform_id platforms[16];
    ck_assert_int_eq(clGetPlatformIDs(np < 16 ? np : 16, platforms, NULL), CL_SUCCESS);
    /* cltensor's flat index runs over platforms in clGetPlatformIDs order, then their devices. */
    for (cl_uint p = 0; p < np && p < 16; p++) {
        cl_uint nd = 0;
        if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) != CL_SUCCESS)
            continue;
        if ((int)nd > index) {
            cl_device_id devices[64];
            ck_assert_int_eq(clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, nd < 64 ? nd : 64,
                                            devices, NULL),
                             CL_SUCCESS);
            return devices[index];
        }
        index -= (int)nd;
    }
    ck_abort_msg("the selected device is not in the platform list");
    return NULL;
}

static app_cl app_open(cl_command_queue_properties props)
{
    app_cl app;
    cl_int err;
    app.device = test_device();
    app.context = clCreateContext(NULL, 1, &app.device, NULL, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    app.queue = clCreateCommandQueue(app.context, app.device, props, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    return app;
}

static void app_close(app_cl *app)
{
    ck_assert_int_eq(clReleaseCommandQueue(app->queue), CL_SUCCESS);
    ck_assert_int_eq(clReleaseContext(app->context), CL_SUCCESS);
}

static cl_uint context_refs(cl_context c)
{
    cl_uint n = 0;
    ck_assert_int_eq(clGetContextInfo(c, CL_CONTEXT_REFERENCE_COUNT, sizeof n, &n, NULL), CL_SUCCESS);
    return n;
}

static cl_uint queue_refs(cl_command_queue q)
{
    cl_uint n = 0;
    ck_assert_int_eq(clGetCommandQueueInfo(q, CL_QUEUE_REFERENCE_COUNT, sizeof n, &n, NULL), CL_SUCCESS);
    return n;
}

/* An application buffer of n floats filled (through plain OpenCL) with fresh random values. */
static cl_mem app_buffer(app_cl *app, size_t n, float *host)
{
    cl_int err;
    cl_mem m = clCreateBuffer(app->context, CL_MEM_READ_WRITE, n * sizeof(float), NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    if (host) {
        tu_random_f32(host, n, -2.0f, 2.0f);
        ck_assert_int_eq(clEnqueueWriteBuffer(app->queue, m, CL_TRUE, 0, n * sizeof(float), host, 0,
                                              NULL, NULL),
                         CL_SUCCESS);
    }
    return m;
}

static clt_tensor *wrap(clt_context *ctx, cl_mem m, int64_t n)
{
    clt_tensor *t;
    TU_OK(clt_tensor_wrap_cl_mem(ctx, m, 0, CLT_F32, 1, &n, &t));
    return t;
}

START_TEST(adopted_context_uses_the_application_objects)
{
    app_cl app = app_open(0);
    clt_context *ctx;
    TU_OK(clt_context_create_from_cl(app.context, app.device, app.queue, NULL, &ctx));
    ck_assert_ptr_eq(clt_context_cl_context(ctx), app.context);
    ck_assert_ptr_eq(clt_context_cl_device(ctx), app.device);
    ck_assert_ptr_eq(clt_context_cl_queue(ctx), app.queue);
    clt_device_info info;
    TU_OK(clt_context_device_info(ctx, &info));
    char name[128];
    ck_assert_int_eq(clGetDeviceInfo(app.device, CL_DEVICE_NAME, sizeof name, name, NULL), CL_SUCCESS);
    ck_assert_str_eq(info.device_name, name);
    clt_context_free(ctx);
    app_close(&app);
}
END_TEST

/* The application's buffers in, an op, the result read by plain OpenCL on the application's queue. */
START_TEST(op_on_application_buffers)
{
    app_cl app = app_open(0);
    clt_context *ctx;
    TU_OK(clt_context_create_from_cl(app.context, app.device, app.queue, NULL, &ctx));
    static const size_t sizes[] = {1, 13, 1031};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        size_t n = sizes[k];
        float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *got = malloc(n * sizeof *got);
        ck_assert(a && b && got);
        cl_mem ma = app_buffer(&app, n, a), mb = app_buffer(&app, n, b), mo = app_buffer(&app, n, NULL);
        clt_tensor *ta = wrap(ctx, ma, (int64_t)n), *tb = wrap(ctx, mb, (int64_t)n);
        clt_tensor *to = wrap(ctx, mo, (int64_t)n);
        TU_OK(clt_add(ta, tb, to));
        TU_OK(clt_unary(CLT_RELU, to, 0.0f, to));
        /* Enqueued on the application's queue, in order: a blocking read there sees the result. */
        ck_assert_int_eq(clEnqueueReadBuffer(app.queue, mo, CL_TRUE, 0, n * sizeof(float), got, 0,
                                             NULL, NULL),
                         CL_SUCCESS);
        for (size_t i = 0; i < n; i++) {
            double want = (double)a[i] + (double)b[i];
            want = want > 0 ? want : 0;
            ck_assert_msg(fabs(got[i] - want) <= 1e-6 * (1 + fabs(want)), "n=%zu i=%zu got %g want %g",
                          n, i, got[i], want);
        }
        clt_tensor_free(ta);
        clt_tensor_free(tb);
        clt_tensor_free(to);
        clReleaseMemObject(ma);
        clReleaseMemObject(mb);
        clReleaseMemObject(mo);
        free(a);
        free(b);
        free(got);
    }
    clt_context_free(ctx);
    app_close(&app);
}
END_TEST

/* cltensor's event gates the application's second queue; the application's user event gates
 * cltensor's work. */
START_TEST(events_both_ways)
{
    app_cl app = app_open(0);
    cl_int err;
    cl_command_queue other = clCreateCommandQueue(app.context, app.device, 0, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    clt_context *ctx;
    TU_OK(clt_context_create_from_cl(app.context, app.device, app.queue, NULL, &ctx));
    enum { N = 4099 };
    float *x = malloc(N * sizeof *x), *got = malloc(N * sizeof *got);
    ck_assert(x && got);
    cl_mem mx = app_buffer(&app, N, x), mo = app_buffer(&app, N, NULL);
    clt_tensor *tx = wrap(ctx, mx, N), *to = wrap(ctx, mo, N);

    /* Application -> cltensor: nothing of cltensor's runs before the user event completes. */
    cl_event gate = clCreateUserEvent(app.context, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    TU_OK(clt_context_wait_event(ctx, gate));
    TU_OK(clt_unary(CLT_SQUARE, tx, 0.0f, to));
    cl_event done;
    TU_OK(clt_context_export_event(ctx, &done));
    TU_OK(clt_flush(ctx));
    cl_int state;
    ck_assert_int_eq(clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof state, &state, NULL),
                     CL_SUCCESS);
    ck_assert_int_ne(state, CL_COMPLETE);
    ck_assert_int_eq(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);

    /* cltensor -> application: a read on another queue of the application waits for cltensor's op. */
    ck_assert_int_eq(clEnqueueReadBuffer(other, mo, CL_TRUE, 0, N * sizeof(float), got, 1, &done, NULL),
                     CL_SUCCESS);
    for (int i = 0; i < N; i++)
        ck_assert_msg(fabs(got[i] - (double)x[i] * x[i]) <= 1e-6 * (1 + (double)x[i] * x[i]),
                      "i=%d got %g want %g", i, got[i], (double)x[i] * x[i]);
    clReleaseEvent(done);
    clReleaseEvent(gate);
    clt_tensor_free(tx);
    clt_tensor_free(to);
    clReleaseMemObject(mx);
    clReleaseMemObject(mo);
    clt_context_free(ctx);
    clReleaseCommandQueue(other);
    free(x);
    free(got);
    app_close(&app);
}
END_TEST

/* Retained, not owned: the application may drop its references at once; clt_context_free gives
 * cltensor's back. */
START_TEST(retained_not_owned)
{
    app_cl app = app_open(0);
    cl_uint ctx_before = context_refs(app.context), queue_before = queue_refs(app.queue);
    clt_context *ctx;
    TU_OK(clt_context_create_from_cl(app.context, app.device, app.queue, NULL, &ctx));
    ck_assert_uint_gt(context_refs(app.context), ctx_before);
    ck_assert_uint_eq(queue_refs(app.queue), queue_before + 1);
    /* A second cltensor context on the same objects, freed first, leaves the first working. */
    clt_context *second;
    TU_OK(clt_context_create_from_cl(app.context, app.device, app.queue, NULL, &second));
    clt_context_free(second);

    /* The application keeps an extra reference to check the counts after cltensor lets go. */
    clRetainContext(app.context);
    clRetainCommandQueue(app.queue);
    app_close(&app);
    enum { N = 257 };
    float got[N];
    int64_t n = N;
    clt_tensor *t;
    TU_OK(clt_tensor_create(ctx, CLT_F32, 1, &n, &t));
    TU_OK(clt_tensor_fill(t, 1.5));
    TU_OK(clt_tensor_read(t, got, sizeof got));
    for (int i = 0; i < N; i++)
        ck_assert_float_eq(got[i], 1.5f);
    clt_tensor_free(t);
    clt_context_free(ctx);
    /* The driver may still hold the queue through commands it has not released yet (POCL frees
     * finished commands on its worker threads, seen once as a count of 2 for 1): let them drain,
     * then give it a bounded while to let go. cltensor itself holds nothing after the free. */
    ck_assert_int_eq(clFinish(app.queue), CL_SUCCESS);
    for (int i = 0; i < 200 && queue_refs(app.queue) != queue_before; i++)
        nanosleep(&(struct timespec){.tv_sec = 0, .tv_nsec = 5000000}, NULL);
    ck_assert_uint_eq(queue_refs(app.queue), queue_before);
    ck_assert_uint_eq(context_refs(app.context), ctx_before);
    app_close(&app);
}
END_TEST

/* A refused call: the status, a message naming the call and the argument, *out NULL, no reference. */
static void expect_refused(cl_context c, cl_device_id d, cl_command_queue q,
                           const clt_context_options *opts, clt_status want, const char *needle)
{
    cl_uint refs = c ? context_refs(c) : 0;
    clt_context *ctx = (clt_context *)&refs; /* not NULL: the call must clear it */
    TU_EXPECT_STATUS(clt_context_create_from_cl(c, d, q, opts, &ctx), want);
    ck_assert_ptr_null(ctx);
    const char *msg = clt_last_error(NULL);
    ck_assert_msg(strncmp(msg, "clt_context_create_from_cl: ", 28) == 0, "message \"%s\"", msg);
    TU_EXPECT_MESSAGE(msg, needle);
    if (c)
        ck_assert_uint_eq(context_refs(c), refs);
}

START_TEST(bad_input_is_refused)
{
    app_cl app = app_open(0), other = app_open(0);
    clt_context *ctx;
    TU_EXPECT_STATUS(clt_context_create_from_cl(app.context, app.device, app.queue, NULL, NULL),
                     CLT_ERR_INVALID_ARGUMENT);
    expect_refused(NULL, app.device, app.queue, NULL, CLT_ERR_INVALID_ARGUMENT, "context is NULL");
    expect_refused(app.context, NULL, app.queue, NULL, CLT_ERR_INVALID_ARGUMENT, "device is NULL");
    expect_refused(app.context, app.device, NULL, NULL, CLT_ERR_INVALID_ARGUMENT, "queue is NULL");
    /* The queue of another cl_context (same device). */
    expect_refused(app.context, app.device, other.queue, NULL, CLT_ERR_CONTEXT_MISMATCH,
                   "another cl_context");
    /* A bad option is refused as clt_context_create refuses it. */
    clt_context_options opts;
    clt_context_options_init(&opts);
    opts.gemm_impl = "fastest";
    expect_refused(app.context, app.device, app.queue, &opts, CLT_ERR_INVALID_ARGUMENT, "fastest");
    clt_context_options_init(&opts);
    opts.profile = "gfx9000";
    expect_refused(app.context, app.device, app.queue, &opts, CLT_ERR_INVALID_ARGUMENT, "gfx9000");
    /* The profiler asked for on a queue without timestamps. */
    clt_context_options_init(&opts);
    opts.profiler = 1;
    expect_refused(app.context, app.device, app.queue, &opts, CLT_ERR_UNSUPPORTED,
                   "CL_QUEUE_PROFILING_ENABLE");
    /* The same on a queue with timestamps works, with the profiler on. */
    app_cl prof = app_open(CL_QUEUE_PROFILING_ENABLE);
    TU_OK(clt_context_create_from_cl(prof.context, prof.device, prof.queue, &opts, &ctx));
    clt_context_limits limits;
    TU_OK(clt_context_get_limits(ctx, &limits));
    ck_assert_int_eq(limits.profiler, 1);
    clt_context_free(ctx);
    app_close(&prof);
    app_close(&other);
    app_close(&app);
}
END_TEST

/* A device that is not one of the context's: the context is made on a sub-device of the test
 * device (whose root device is then not in it), or on another device when there is one. */
START_TEST(device_not_in_context)
{
    app_cl app = app_open(0);
    cl_device_id root = app.device;
    cl_device_id sub[2] = {NULL, NULL};
    cl_uint nsub = 0;
    cl_uint cus = 0;
    ck_assert_int_eq(clGetDeviceInfo(root, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cus, &cus, NULL),
                     CL_SUCCESS);
    cl_device_partition_property props[] = {CL_DEVICE_PARTITION_EQUALLY, 1, 0};
    cl_int perr = cus >= 2 ? clCreateSubDevices(root, props, 2, sub, &nsub) : CL_INVALID_VALUE;
    if (perr == CL_SUCCESS && nsub >= 1) {
        cl_int err;
        cl_context subctx = clCreateContext(NULL, 1, &sub[0], NULL, NULL, &err);
        ck_assert_int_eq(err, CL_SUCCESS);
        cl_command_queue subq = clCreateCommandQueue(subctx, sub[0], 0, &err);
        ck_assert_int_eq(err, CL_SUCCESS);
        /* The root device with the sub-device's context and queue. POCL lists the root device as
         * the sub-device context's device: the refusal then comes from the queue's device. */
        cl_device_id listed = NULL;
        ck_assert_int_eq(clGetContextInfo(subctx, CL_CONTEXT_DEVICES, sizeof listed, &listed, NULL),
                         CL_SUCCESS);
        expect_refused(subctx, root, subq, NULL, CLT_ERR_CONTEXT_MISMATCH,
                       listed == root ? "queue is on another device" : "not a device of context");
        /* The root device with the sub-device's context and the root's queue of another context. */
        expect_refused(subctx, root, app.queue, NULL, CLT_ERR_CONTEXT_MISMATCH,
                       listed == root ? "another cl_context" : "not a device of context");
        /* The sub-device itself is not a platform device cltensor knows. */
        expect_refused(subctx, sub[0], subq, NULL, CLT_ERR_DEVICE_NOT_FOUND, "sub-device");
        clReleaseCommandQueue(subq);
        clReleaseContext(subctx);
        for (cl_uint i = 0; i < nsub && i < 2; i++)
            clReleaseDevice(sub[i]);
    } else {
        /* No sub-devices here: a context on another device of the same platform. */
        cl_platform_id platform;
        ck_assert_int_eq(clGetDeviceInfo(root, CL_DEVICE_PLATFORM, sizeof platform, &platform, NULL),
                         CL_SUCCESS);
        cl_device_id devices[8];
        cl_uint nd = 0;
        ck_assert_int_eq(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 8, devices, &nd), CL_SUCCESS);
        cl_device_id other = NULL;
        for (cl_uint i = 0; i < nd && i < 8; i++)
            if (devices[i] != root)
                other = devices[i];
        if (!other) {
            /* Or a device of another platform. */
            cl_platform_id plats[8];
            cl_uint np = 0;
            ck_assert_int_eq(clGetPlatformIDs(8, plats, &np), CL_SUCCESS);
            for (cl_uint p = 0; p < np && p < 8 && !other; p++) {
                cl_uint n2 = 0;
                if (plats[p] != platform &&
                    clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 1, &other, &n2) != CL_SUCCESS)
                    other = NULL;
            }
        }
        cl_int err;
        if (other) {
            cl_context octx = clCreateContext(NULL, 1, &other, NULL, NULL, &err);
            ck_assert_int_eq(err, CL_SUCCESS);
            expect_refused(octx, root, app.queue, NULL, CLT_ERR_CONTEXT_MISMATCH,
                           "not a device of context");
            clReleaseContext(octx);
        } else {
            /* One device, no sub-devices, no other platform (a one-GPU NVIDIA machine): no context
             * without the test device can exist here, so the nearest refusal is checked instead:
             * the application's context with a queue of a second context on the same device. */
            cl_context octx = clCreateContext(NULL, 1, &root, NULL, NULL, &err);
            ck_assert_int_eq(err, CL_SUCCESS);
            cl_command_queue oq = clCreateCommandQueue(octx, root, 0, &err);
            ck_assert_int_eq(err, CL_SUCCESS);
            expect_refused(app.context, root, oq, NULL, CLT_ERR_CONTEXT_MISMATCH,
                           "another cl_context");
            clReleaseCommandQueue(oq);
            clReleaseContext(octx);
        }
    }
    app_close(&app);
}
END_TEST

/* The out-of-order queue of an application is refused (cltensor's ops rely on the queue's order). */
START_TEST(out_of_order_queue_is_refused)
{
    cl_device_id device = test_device();
    cl_command_queue_properties caps = 0;
    ck_assert_int_eq(clGetDeviceInfo(device, CL_DEVICE_QUEUE_PROPERTIES, sizeof caps, &caps, NULL),
                     CL_SUCCESS);
    if (!(caps & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE))
        return; /* the device cannot make one: nothing to refuse */
    app_cl app = app_open(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
    expect_refused(app.context, app.device, app.queue, NULL, CLT_ERR_UNSUPPORTED, "out of order");
    app_close(&app);
}
END_TEST

Suite *adopt_suite(void)
{
    Suite *s = suite_create("adopt");
    TCase *tc = tcase_create("adopt");
    tcase_add_test(tc, adopted_context_uses_the_application_objects);
    tcase_add_test(tc, op_on_application_buffers);
    tcase_add_test(tc, events_both_ways);
    tcase_add_test(tc, retained_not_owned);
    tcase_add_test(tc, bad_input_is_refused);
    tcase_add_test(tc, device_not_in_context);
    tcase_add_test(tc, out_of_order_queue_is_refused);
    suite_add_tcase(s, tc);
    return s;
}
