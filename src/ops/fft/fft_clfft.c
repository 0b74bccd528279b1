/* The clFFT backend (Debian libclfft 2.12): one baked clFFT plan per cltensor plan, out of place.
 * clFFT's lengths are products of 2, 3, 5, 7, 11 and 13 only, and its planner is not thread-safe:
 * every clFFT call that touches plans runs under one process-wide lock. clFFT takes no buffer
 * offsets and bakes in-place and out-of-place plans separately, so tensors at an offset and in-place
 * calls go to our kernels (the plan's fallback). */
#include "ops/fft/fft_plan.h"

#if defined(CLT_HAVE_CLFFT)

#include <clFFT.h>
#include <pthread.h>
#include <stdlib.h>

#include "profile/profile.h"

static pthread_mutex_t clfft_lock = PTHREAD_MUTEX_INITIALIZER;
static int clfft_ready; /* clfftSetup done; torn down only at process exit */

/* clFFT prints a warning at process exit unless torn down; the library never prints. */
static void clfft_teardown_at_exit(void)
{
    pthread_mutex_lock(&clfft_lock);
    clfftTeardown();
    pthread_mutex_unlock(&clfft_lock);
}

typedef struct clfft_state {
    clfftPlanHandle handle;
} clfft_state;

static clt_status clfft_fail(const clt_fft_plan *plan, clfftStatus e, const char *what, const char *who)
{
    return clt__fail(plan->ctx, e == CLFFT_NOTIMPLEMENTED ? CLT_ERR_UNSUPPORTED : CLT_ERR_OPENCL,
                     "%s: clFFT %s failed (%d)", who, what, (int)e);
}

clt_status clt__fft_clfft_make(clt_fft_plan *plan, const char *who)
{
    const clt_fft_key *k = &plan->key;
    for (int a = 0; a < k->rank; a++)
        if (clt__fft_largest_prime(k->n[a]) > 13)
            return clt__fail(plan->ctx, CLT_ERR_UNSUPPORTED,
                             "%s: clFFT cannot do length %lld (a prime factor above 13)", who,
                             (long long)k->n[a]);
    clfft_state *s = calloc(1, sizeof *s);
    if (!s)
        return clt__fail(plan->ctx, CLT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", who);
    /* clFFT orders dimensions innermost first */
    size_t len[3], istr[3], ostr[3];
    for (int a = 0; a < k->rank; a++) {
        int c = k->rank - 1 - a;
        len[c] = (size_t)k->n[a];
        istr[c] = (size_t)k->in_stride[a];
        ostr[c] = (size_t)k->out_stride[a];
    }
    clfftDim dim = k->rank == 1 ? CLFFT_1D : k->rank == 2 ? CLFFT_2D : CLFFT_3D;
    clfftLayout in_layout = k->kind == CLT_FFT_R2C ? CLFFT_REAL
                            : k->kind == CLT_FFT_C2R ? CLFFT_HERMITIAN_INTERLEAVED
                                                     : CLFFT_COMPLEX_INTERLEAVED;
    clfftLayout out_layout = k->kind == CLT_FFT_R2C ? CLFFT_HERMITIAN_INTERLEAVED
                             : k->kind == CLT_FFT_C2R ? CLFFT_REAL
                                                      : CLFFT_COMPLEX_INTERLEAVED;
    pthread_mutex_lock(&clfft_lock);
    clfftStatus e = CLFFT_SUCCESS;
    const char *what = "clfftSetup";
    if (!clfft_ready) {
        clfftSetupData setup;
        e = clfftInitSetupData(&setup);
        if (e == CLFFT_SUCCESS)
            e = clfftSetup(&setup);
        if (e == CLFFT_SUCCESS) {
            clfft_ready = 1;
            atexit(clfft_teardown_at_exit);
        }
    }
    int created = 0;
    if (e == CLFFT_SUCCESS) {
        what = "clfftCreateDefaultPlan";
        e = clfftCreateDefaultPlan(&s->handle, plan->ctx->dev->cl_ctx, dim, len);
        created = e == CLFFT_SUCCESS;
    }
    if (e == CLFFT_SUCCESS && (what = "clfftSetPlanPrecision", 1))
        e = clfftSetPlanPrecision(s->handle, CLFFT_SINGLE);
    if (e == CLFFT_SUCCESS && (what = "clfftSetLayout", 1))
        e = clfftSetLayout(s->handle, in_layout, out_layout);
    if (e == CLFFT_SUCCESS && (what = "clfftSetResultLocation", 1))
        e = clfftSetResultLocation(s->handle, CLFFT_OUTOFPLACE);
    if (e == CLFFT_SUCCESS && (what = "clfftSetPlanInStride", 1))
        e = clfftSetPlanInStride(s->handle, dim, istr);
    if (e == CLFFT_SUCCESS && (what = "clfftSetPlanOutStride", 1))
        e = clfftSetPlanOutStride(s->handle, dim, ostr);
    if (e == CLFFT_SUCCESS && (what = "clfftSetPlanDistance", 1))
        e = clfftSetPlanDistance(s->handle, (size_t)k->in_dist, (size_t)k->out_dist);
    if (e == CLFFT_SUCCESS && (what = "clfftSetPlanBatchSize", 1))
        e = clfftSetPlanBatchSize(s->handle, (size_t)k->batch);
    /* clFFT scales each direction; ours says which direction scales by how much */
    float fwd = k->direction == CLT_FFT_FORWARD ? (float)plan->scale : 1.0f;
    float inv = k->direction == CLT_FFT_INVERSE ? (float)plan->scale : 1.0f;
    if (e == CLFFT_SUCCESS && (what = "clfftSetPlanScale", 1))
        e = clfftSetPlanScale(s->handle, CLFFT_FORWARD, fwd);
    if (e == CLFFT_SUCCESS)
        e = clfftSetPlanScale(s->handle, CLFFT_BACKWARD, inv);
    if (e == CLFFT_SUCCESS && (what = "clfftBakePlan", 1))
        e = clfftBakePlan(s->handle, 1, &plan->ctx->queue, NULL, NULL);
    if (e != CLFFT_SUCCESS && created)
        clfftDestroyPlan(&s->handle);
    pthread_mutex_unlock(&clfft_lock);
    if (e != CLFFT_SUCCESS) {
        free(s);
        return clfft_fail(plan, e, what, who);
    }
    plan->impl = s;
    return CLT_SUCCESS;
}

void clt__fft_clfft_free(clt_fft_plan *plan)
{
    clfft_state *s = plan->impl;
    if (!s)
        return;
    pthread_mutex_lock(&clfft_lock);
    clfftDestroyPlan(&s->handle);
    pthread_mutex_unlock(&clfft_lock);
    free(s);
    plan->impl = NULL;
}

clt_status clt__fft_clfft_execute(const clt_fft_plan *plan, cl_mem in, size_t in_off, cl_mem out,
                                  size_t out_off, const char *who)
{
    if (in_off != 0 || out_off != 0 || in == out)
        return clt__fft_ours_execute(plan, in, in_off, out, out_off, who);
    clfft_state *s = plan->impl;
    clt_context *ctx = plan->ctx;
    cl_event *ev = clt__prof_event(ctx);
    clfftStatus e = clfftEnqueueTransform(s->handle,
                                          plan->key.direction == CLT_FFT_FORWARD ? CLFFT_FORWARD
                                                                                 : CLFFT_BACKWARD,
                                          1, &ctx->queue, 0, NULL, ev, &in, &out, NULL);
    if (e != CLFFT_SUCCESS)
        return clfft_fail(plan, e, "clfftEnqueueTransform", who);
    clt__prof_commit(ctx, who, "clfft", CLT_PROFILE_KERNEL, 0);
    return CLT_SUCCESS;
}

#else /* built without clFFT */

clt_status clt__fft_clfft_make(clt_fft_plan *plan, const char *who)
{
    return clt__fail(plan->ctx, CLT_ERR_UNSUPPORTED, "%s: clFFT is not built into this library", who);
}

clt_status clt__fft_clfft_execute(const clt_fft_plan *plan, cl_mem in, size_t in_off, cl_mem out,
                                  size_t out_off, const char *who)
{
    return clt__fft_ours_execute(plan, in, in_off, out, out_off, who);
}

void clt__fft_clfft_free(clt_fft_plan *plan) { plan->impl = NULL; }

#endif
