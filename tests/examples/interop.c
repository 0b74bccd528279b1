/* An application that owns its OpenCL context gives it to cltensor: its buffers become tensors
 * without a copy, cltensor's ops run on the application's queue, and an event tells the
 * application's other queue when cltensor's work is done.
 *
 *   cc interop.c $(pkg-config --cflags --libs cltensor) -o interop && ./interop
 */
#include <math.h>
#include <stdio.h>

#include <cltensor.h>
#include <cltensor_cl.h>
#include <cltensor_ops.h>

enum { N = 1000 };

/* The application's own device choice: the first GPU, else the first device of any kind. */
static cl_device_id pick_device(void)
{
    cl_platform_id platforms[8];
    cl_uint np = 0;
    if (clGetPlatformIDs(8, platforms, &np) != CL_SUCCESS)
        return NULL;
    cl_device_id any = NULL;
    for (cl_uint p = 0; p < np && p < 8; p++) {
        cl_device_id d;
        if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_GPU, 1, &d, NULL) == CL_SUCCESS)
            return d;
        if (!any && clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 1, &d, NULL) == CL_SUCCESS)
            any = d;
    }
    return any;
}

int main(void)
{
    cl_int err;
    cl_device_id device = pick_device();
    if (!device) {
        fprintf(stderr, "no OpenCL device\n");
        return 1;
    }
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
    cl_command_queue reader = clCreateCommandQueue(context, device, 0, &err);
    if (err != CL_SUCCESS) {
        fprintf(stderr, "OpenCL setup failed (%d)\n", err);
        return 1;
    }
    static float host[N], result[N];
    for (int i = 0; i < N; i++)
        host[i] = (float)i / N - 0.5f;
    cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof host, host,
                                   &err);
    cl_mem out = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof result, NULL, &err);

    /* cltensor on the application's objects: retained, not owned. */
    clt_context *ctx = NULL;
    clt_status st = clt_context_create_from_cl(context, device, queue, NULL, &ctx);
    if (st != CLT_SUCCESS) {
        fprintf(stderr, "%s\n", clt_last_error(NULL));
        return 1;
    }
    int64_t shape[1] = {N};
    clt_tensor *x = NULL, *y = NULL;
    cl_event done = NULL;
    if ((st = clt_tensor_wrap_cl_mem(ctx, buffer, 0, CLT_F32, 1, shape, &x)) != CLT_SUCCESS ||
        (st = clt_tensor_wrap_cl_mem(ctx, out, 0, CLT_F32, 1, shape, &y)) != CLT_SUCCESS ||
        (st = clt_unary(CLT_TANH, x, 0.0f, y)) != CLT_SUCCESS ||      /* on `queue` */
        (st = clt_context_export_event(ctx, &done)) != CLT_SUCCESS) { /* marker after it */
        fprintf(stderr, "%s\n", clt_last_error(ctx));
        return 1;
    }
    clFlush(queue);
    /* The application's other queue reads the result once cltensor's event completes. */
    err = clEnqueueReadBuffer(reader, out, CL_TRUE, 0, sizeof result, result, 1, &done, NULL);
    double worst = 0;
    for (int i = 0; i < N; i++) {
        double e = fabs(result[i] - tanh((double)host[i]));
        worst = e > worst ? e : worst;
    }
    printf("tanh of the application's buffer through cltensor: largest error %.3g\n", worst);
    clReleaseEvent(done);
    clt_tensor_free(x);
    clt_tensor_free(y);
    clt_context_free(ctx); /* gives back cltensor's references; the application still owns its own */
    clReleaseMemObject(buffer);
    clReleaseMemObject(out);
    clReleaseCommandQueue(reader);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    return err == CL_SUCCESS && worst < 1e-5 ? 0 : 1;
}
