/* The VkFFT backend (Debian libvkfft-dev 1.2.26, header-only, OpenCL backend): the whole VkFFT
 * header is compiled into this one translation unit and nowhere else. Built only when CMake finds
 * vkFFT.h (CLT_HAVE_VKFFT); otherwise every plan asks the other backends.
 *
 * What it serves: contiguous layouts (the default strides; others go to our kernels), normalisations
 * VkFFT can apply itself (none, or 1/N on the inverse), any length from 2 (VkFFT has Bluestein; it has
 * no plan for a length of 1).
 *   C2C forward, out of place: one app reading `in` (isInputFormatted) and writing `out`.
 *   C2C inverse, or in place: copy in -> out unless in place, then VkFFT in place on `out` (an
 *     out-of-place inverse would work in `in`, which the API promises not to change).
 *   R2C: reads unpadded real rows (inputBufferStride), writes the Hermitian half to `out`.
 *   C2R: VkFFT's C2R overwrites its complex input, so the input is copied to the workspace first and
 *     VkFFT writes the real rows back "to its input buffer" (inverseReturnToInputBuffer), i.e. `out`.
 * Settings from ../shared/notes/fft-h200.md: useLUT=1 (native_sin twiddles reach 7e-7 relative L2
 * error on NVIDIA), numberBatches for batches (1.3.4 breaks size[1] batches), offsets at launch. */
#include "ops/fft/fft_plan.h"

#if defined(CLT_HAVE_VKFFT)

#include <stdlib.h>
#include <string.h>

#include "memory/memory.h"
#include "profile/profile.h"

#define VKFFT_BACKEND 3
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wunused-variable"
#pragma GCC diagnostic ignored "-Wunused-but-set-variable"
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wformat-truncation"
#pragma GCC diagnostic ignored "-Wformat-overflow"
#pragma GCC diagnostic ignored "-Wimplicit-fallthrough"
#pragma GCC diagnostic ignored "-Wstringop-truncation"
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <vkFFT.h>
#pragma GCC diagnostic pop

#define VK_SLOT 6 /* the FFT workspace slot (shared with our kernels: one plan runs at a time) */

enum { VK_FORMATTED = 0, VK_IN_PLACE = 1, VK_R2C = 2, VK_C2R = 3 };

typedef struct vk_state {
    VkFFTApplication app;
    int mode;
    cl_device_id device; /* VkFFT keeps pointers to these */
    cl_context context;
    cl_command_queue queue;
    uint64_t buffer_size, input_size;
    size_t copy_bytes;   /* C2R / C2C inverse: bytes copied before the transform */
} vk_state;

int clt__fft_vkfft_available(void) { return 1; }

static int contiguous(const clt_fft_plan *p)
{
    const clt_fft_key *k = &p->key;
    int64_t si = 1, so = 1;
    for (int a = k->rank - 1; a >= 0; a--) {
        if (k->in_stride[a] != si || k->out_stride[a] != so)
            return 0;
        si *= p->in_len[a];
        so *= p->out_len[a];
    }
    return k->in_dist == si && k->out_dist == so;
}

clt_status clt__fft_vkfft_make(clt_fft_plan *plan, const char *who)
{
    const clt_fft_key *k = &plan->key;
    clt_context *ctx = plan->ctx;
    if (!contiguous(plan))
        return clt__fail(ctx, CLT_ERR_UNSUPPORTED, "%s: the VkFFT backend takes contiguous layouts only",
                         who);
    double total = 1;
    for (int a = 0; a < k->rank; a++) {
        total *= (double)k->n[a];
        if (k->n[a] == 1) /* VkFFT 1.2.26 finds no radix plan for 1 (VKFFT_ERROR_UNSUPPORTED_RADIX) */
            return clt__fail(ctx, CLT_ERR_UNSUPPORTED, "%s: VkFFT cannot do a length of 1", who);
    }
    int normalize = 0;
    if (plan->scale != 1.0) {
        if (k->direction != CLT_FFT_INVERSE || plan->scale != 1.0 / total)
            return clt__fail(ctx, CLT_ERR_UNSUPPORTED,
                             "%s: the VkFFT backend scales only the inverse, by 1/N", who);
        normalize = 1;
    }
    vk_state *s = calloc(1, sizeof *s);
    if (!s)
        return clt__fail(ctx, CLT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", who);
    s->device = ctx->dev->entry->device;
    s->context = ctx->dev->cl_ctx;
    s->queue = ctx->queue;
    s->mode = k->kind == CLT_FFT_R2C   ? VK_R2C
              : k->kind == CLT_FFT_C2R ? VK_C2R
              : k->direction == CLT_FFT_FORWARD ? VK_FORMATTED
                                                : VK_IN_PLACE;
    VkFFTConfiguration cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.FFTdim = (uint64_t)k->rank;
    for (int a = 0; a < k->rank; a++)
        cfg.size[k->rank - 1 - a] = (uint64_t)k->n[a];
    for (int a = k->rank; a < 3; a++)
        cfg.size[a] = 1;
    cfg.numberBatches = (uint64_t)k->batch;
    cfg.device = &s->device;
    cfg.context = &s->context;
    cfg.commandQueue = &s->queue;
    cfg.useLUT = 1;
    cfg.normalize = (uint64_t)normalize;
    cfg.specifyOffsetsAtLaunch = 1;
    uint64_t complex_elems = (uint64_t)k->batch, real_elems = (uint64_t)k->batch;
    for (int a = 0; a < k->rank; a++) {
        real_elems *= (uint64_t)k->n[a];
        complex_elems *= (uint64_t)(k->kind == CLT_FFT_C2C ? plan->in_len[a]
                                    : k->kind == CLT_FFT_R2C ? plan->out_len[a] : plan->in_len[a]);
    }
    s->buffer_size = complex_elems * 8;
    cfg.bufferSize = &s->buffer_size;
    switch (s->mode) {
    case VK_FORMATTED:
        cfg.isInputFormatted = 1;
        s->input_size = s->buffer_size;
        cfg.inputBufferSize = &s->input_size;
        cfg.makeForwardPlanOnly = 1;
        break;
    case VK_IN_PLACE:
        cfg.makeInversePlanOnly = 1;
        s->copy_bytes = (size_t)s->buffer_size;
        break;
    case VK_R2C:
    case VK_C2R:
        cfg.performR2C = 1;
        cfg.isInputFormatted = 1;
        s->input_size = real_elems * 4;
        cfg.inputBufferSize = &s->input_size;
        /* unpadded real rows: strides of the real side, innermost first */
        {
            uint64_t st = 1;
            for (int a = 0; a < 3; a++) {
                st *= cfg.size[a];
                cfg.inputBufferStride[a] = st;
            }
        }
        if (s->mode == VK_R2C) {
            cfg.makeForwardPlanOnly = 1;
        } else {
            cfg.makeInversePlanOnly = 1;
            cfg.inverseReturnToInputBuffer = 1;
            s->copy_bytes = (size_t)s->buffer_size;
        }
        break;
    }
    VkFFTResult r = initializeVkFFT(&s->app, cfg);
    if (r != VKFFT_SUCCESS) {
        free(s);
        return clt__fail(ctx, r == VKFFT_ERROR_FAILED_TO_COMPILE_PROGRAM ? CLT_ERR_BUILD_FAILED
                                                                          : CLT_ERR_UNSUPPORTED,
                         "%s: VkFFT initializeVkFFT failed (%d)", who, (int)r);
    }
    plan->impl = s;
    return CLT_SUCCESS;
}

void clt__fft_vkfft_free(clt_fft_plan *plan)
{
    vk_state *s = plan->impl;
    if (!s)
        return;
    deleteVkFFT(&s->app);
    free(s);
    plan->impl = NULL;
}

clt_status clt__fft_vkfft_execute(const clt_fft_plan *plan, cl_mem in, size_t in_off, cl_mem out,
                                  size_t out_off, const char *who)
{
    vk_state *s = plan->impl;
    clt_context *ctx = plan->ctx;
    int same = in == out && in_off == out_off;
    if (s->mode == VK_FORMATTED && same)
        return clt__fft_ours_execute(plan, in, in_off, out, out_off, who); /* in place forward */
    size_t in_esize = plan->key.kind == CLT_FFT_R2C ? 4 : 8, out_esize = plan->key.kind == CLT_FFT_C2R ? 4 : 8;
    size_t in_bytes = in_off * in_esize, out_bytes = out_off * out_esize;
    VkFFTLaunchParams lp;
    memset(&lp, 0, sizeof lp);
    lp.commandQueue = &s->queue;
    cl_mem buffer = out, input = in;
    cl_int err;
    switch (s->mode) {
    case VK_FORMATTED:
    case VK_R2C:
        lp.inputBuffer = &input;
        lp.inputBufferOffset = in_bytes;
        lp.buffer = &buffer;
        lp.bufferOffset = out_bytes;
        break;
    case VK_IN_PLACE:
        if (!same) {
            err = clEnqueueCopyBuffer(ctx->queue, in, out, in_bytes, out_bytes, s->copy_bytes, 0, NULL,
                                      clt__prof_event(ctx));
            if (err != CL_SUCCESS)
                return clt__cl_fail(ctx, err, "clt_fft_execute: clEnqueueCopyBuffer");
            clt__prof_commit(ctx, who, "vkfft-copy", CLT_PROFILE_TRANSFER, s->copy_bytes);
        }
        lp.buffer = &buffer;
        lp.bufferOffset = out_bytes;
        break;
    case VK_C2R: {
        cl_mem ws;
        int fresh;
        clt_status st = clt__workspace_get(ctx, VK_SLOT, s->copy_bytes, &ws, &fresh);
        if (st != CLT_SUCCESS)
            return st;
        err = clEnqueueCopyBuffer(ctx->queue, in, ws, in_bytes, 0, s->copy_bytes, 0, NULL,
                                  clt__prof_event(ctx));
        if (err != CL_SUCCESS)
            return clt__cl_fail(ctx, err, "clt_fft_execute: clEnqueueCopyBuffer");
        clt__prof_commit(ctx, who, "vkfft-copy", CLT_PROFILE_TRANSFER, s->copy_bytes);
        buffer = ws;
        input = out;
        lp.buffer = &buffer;
        lp.bufferOffset = 0;
        lp.inputBuffer = &input;
        lp.inputBufferOffset = out_bytes;
        break;
    }
    }
    VkFFTResult r = VkFFTAppend(&s->app, plan->key.direction == CLT_FFT_FORWARD ? -1 : 1, &lp);
    if (r != VKFFT_SUCCESS)
        return clt__fail(ctx, CLT_ERR_OPENCL, "%s: VkFFTAppend failed (%d)", who, (int)r);
    return CLT_SUCCESS;
}

#else /* no VkFFT in this build */

int clt__fft_vkfft_available(void) { return 0; }

clt_status clt__fft_vkfft_make(clt_fft_plan *plan, const char *who)
{
    return clt__fail(plan->ctx, CLT_ERR_UNSUPPORTED, "%s: VkFFT is not built into this library", who);
}

clt_status clt__fft_vkfft_execute(const clt_fft_plan *plan, cl_mem in, size_t in_off, cl_mem out,
                                  size_t out_off, const char *who)
{
    return clt__fft_ours_execute(plan, in, in_off, out, out_off, who);
}

void clt__fft_vkfft_free(clt_fft_plan *plan) { plan->impl = NULL; }

#endif
