/* The torch.fft-style convenience calls: a plan over the trailing axes of contiguous tensors (every
 * leading axis a batch), from the context's cache, then clt_fft_execute. */
#include <string.h>

#include "cltensor_fft.h"
#include "tensor/tensor.h"

static clt_status run(const char *who, const clt_tensor *in, clt_tensor *out, clt_fft_kind kind,
                      clt_fft_direction dir, int rank, clt_fft_norm norm)
{
    if (!in || !out)
        return clt__fail(in ? in->ctx : out ? out->ctx : NULL, CLT_ERR_INVALID_ARGUMENT,
                         "%s: %s is NULL", who, in ? "out" : "in");
    clt_context *ctx = in->ctx;
    if (out->ctx != ctx)
        return clt__fail(ctx, CLT_ERR_CONTEXT_MISMATCH, "%s: in and out belong to different contexts",
                         who);
    if (rank < 1 || rank > CLT_FFT_MAX_RANK)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: rank %d outside 1..%d", who, rank,
                         CLT_FFT_MAX_RANK);
    if (in->ndim < rank || out->ndim != in->ndim)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE,
                         "%s: in has %d dims and out %d, both need the same number >= %d", who,
                         in->ndim, out->ndim, rank);
    int lead = in->ndim - rank;
    int64_t batch = 1;
    for (int a = 0; a < in->ndim; a++) {
        int halved = a == in->ndim - 1 && kind != CLT_FFT_C2C;
        if (!halved && in->shape[a] != out->shape[a])
            return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: in dim %d is %lld, out's %lld", who, a,
                             (long long)in->shape[a], (long long)out->shape[a]);
        if (a < lead)
            batch *= in->shape[a];
    }
    if (in->numel == 0 || out->numel == 0) {
        if (in->numel != out->numel)
            return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: in has %lld elements, out %lld", who,
                             (long long)in->numel, (long long)out->numel);
        return CLT_SUCCESS; /* an empty batch: nothing to transform */
    }
    clt_fft_desc d;
    clt_fft_desc_init(&d);
    d.kind = kind;
    d.direction = dir;
    d.norm = norm;
    d.rank = rank;
    d.batch = batch;
    for (int a = 0; a < rank; a++)
        d.n[a] = (kind == CLT_FFT_C2R ? out : in)->shape[lead + a];
    int64_t last_in = in->shape[in->ndim - 1], last_out = out->shape[out->ndim - 1];
    if (kind == CLT_FFT_R2C && last_out != last_in / 2 + 1)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: out's last dim is %lld, expected %lld", who,
                         (long long)last_out, (long long)(last_in / 2 + 1));
    if (kind == CLT_FFT_C2R && last_in != last_out / 2 + 1)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: in's last dim is %lld, expected %lld for n %lld",
                         who, (long long)last_in, (long long)(last_out / 2 + 1), (long long)last_out);
    clt_fft_plan *plan;
    clt_status st = clt_fft_plan_get(ctx, &d, &plan);
    if (st != CLT_SUCCESS)
        return st;
    st = clt_fft_execute(plan, in, out);
    return st;
}

clt_status clt_fft(const clt_tensor *in, clt_tensor *out, clt_fft_norm norm)
{
    CLT_PUBLIC_CALL();
    return run("clt_fft", in, out, CLT_FFT_C2C, CLT_FFT_FORWARD, 1, norm);
}

clt_status clt_ifft(const clt_tensor *in, clt_tensor *out, clt_fft_norm norm)
{
    CLT_PUBLIC_CALL();
    return run("clt_ifft", in, out, CLT_FFT_C2C, CLT_FFT_INVERSE, 1, norm);
}

clt_status clt_rfft(const clt_tensor *in, clt_tensor *out, clt_fft_norm norm)
{
    CLT_PUBLIC_CALL();
    return run("clt_rfft", in, out, CLT_FFT_R2C, CLT_FFT_FORWARD, 1, norm);
}

clt_status clt_irfft(const clt_tensor *in, clt_tensor *out, clt_fft_norm norm)
{
    CLT_PUBLIC_CALL();
    return run("clt_irfft", in, out, CLT_FFT_C2R, CLT_FFT_INVERSE, 1, norm);
}

clt_status clt_fft2(const clt_tensor *in, clt_tensor *out, clt_fft_norm norm)
{
    CLT_PUBLIC_CALL();
    return run("clt_fft2", in, out, CLT_FFT_C2C, CLT_FFT_FORWARD, 2, norm);
}

clt_status clt_rfft2(const clt_tensor *in, clt_tensor *out, clt_fft_norm norm)
{
    CLT_PUBLIC_CALL();
    return run("clt_rfft2", in, out, CLT_FFT_R2C, CLT_FFT_FORWARD, 2, norm);
}

clt_status clt_irfft2(const clt_tensor *in, clt_tensor *out, clt_fft_norm norm)
{
    CLT_PUBLIC_CALL();
    return run("clt_irfft2", in, out, CLT_FFT_C2R, CLT_FFT_INVERSE, 2, norm);
}

clt_status clt_fftn(const clt_tensor *in, clt_tensor *out, int rank, clt_fft_direction dir,
                    clt_fft_norm norm)
{
    CLT_PUBLIC_CALL();
    if (dir != CLT_FFT_FORWARD && dir != CLT_FFT_INVERSE)
        return clt__fail(in ? in->ctx : NULL, CLT_ERR_INVALID_ARGUMENT,
                         "clt_fftn: direction %d (expected -1 or 1)", (int)dir);
    return run("clt_fftn", in, out, CLT_FFT_C2C, dir, rank, norm);
}
