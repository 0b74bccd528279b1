/* clt_spectral_mix and its backward: shape checks, one launch per output (kernels in
 * cl_kernels/fft/spectral_mix.cl; tensor byte offsets passed as element offsets). */
#include "cltensor_fft.h"
#include "ops/common/launch.h"
#include "program/program.h"
#include "tensor/tensor.h"

#define MIX_FAMILY "spectral_mix"

typedef struct mix_dims {
    int64_t B, I, O, H, Wf, m1, m2;
} mix_dims;

static clt_status check_c64(clt_context *ctx, const clt_tensor *t, const char *name, int ndim,
                            const char *who)
{
    if (t->ctx != ctx)
        return clt__fail(ctx, CLT_ERR_CONTEXT_MISMATCH, "%s: %s belongs to another context", who, name);
    if (t->dtype != CLT_C64)
        return clt__fail(ctx, CLT_ERR_INVALID_DTYPE, "%s: %s is %s, expected c64", who, name,
                         clt_dtype_name(t->dtype));
    if (t->ndim != ndim)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: %s has %d dims, expected %d", who, name,
                         t->ndim, ndim);
    return CLT_SUCCESS;
}

static clt_status check_shape(clt_context *ctx, const clt_tensor *t, const char *name, const int64_t *want,
                              const char *who)
{
    for (int a = 0; a < t->ndim; a++)
        if (t->shape[a] != want[a])
            return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: %s dim %d is %lld, expected %lld", who, name,
                             a, (long long)t->shape[a], (long long)want[a]);
    return CLT_SUCCESS;
}

/* x and w fix the dims; 2 m1 <= H, m2 <= Wf. */
static clt_status mix_dims_of(clt_context *ctx, const clt_tensor *x, const clt_tensor *w, mix_dims *d,
                              const char *who)
{
    clt_status st;
    if ((st = check_c64(ctx, x, "x", 4, who)) || (st = check_c64(ctx, w, "w", 5, who)))
        return st;
    d->B = x->shape[0];
    d->I = x->shape[1];
    d->H = x->shape[2];
    d->Wf = x->shape[3];
    d->O = w->shape[2];
    d->m1 = w->shape[3];
    d->m2 = w->shape[4];
    if (w->shape[0] != 2 || w->shape[1] != d->I)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE,
                         "%s: w is [%lld, %lld, ...], expected [2, %lld (x's channels), O, m1, m2]", who,
                         (long long)w->shape[0], (long long)w->shape[1], (long long)d->I);
    if (2 * d->m1 > d->H || d->m2 > d->Wf)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE,
                         "%s: modes %lld x %lld do not fit the spectrum %lld x %lld (need 2 m1 <= H, m2 <= Wf)",
                         who, (long long)d->m1, (long long)d->m2, (long long)d->H, (long long)d->Wf);
    return CLT_SUCCESS;
}

static clt_status launch(clt_context *ctx, const char *name, cl_mem a, size_t a_off, cl_mem b, size_t b_off,
                         cl_mem out, size_t out_off, const mix_dims *d, uint64_t items, const char *who)
{
    cl_kernel k;
    clt_status st = clt__kernel_get(ctx, MIX_FAMILY, "", name, &k);
    if (st != CLT_SUCCESS)
        return st;
    cl_mem bufs[3] = {a, b, out};
    cl_long offs[3] = {(cl_long)(a_off / 8), (cl_long)(b_off / 8), (cl_long)(out_off / 8)};
    cl_long dims[7] = {d->B, d->I, d->O, d->H, d->Wf, d->m1, d->m2};
    for (int i = 0; i < 3 && st == CLT_SUCCESS; i++)
        if ((st = clt__set_arg(ctx, k, (cl_uint)(2 * i), sizeof(cl_mem), &bufs[i], who)) == CLT_SUCCESS)
            st = clt__set_arg(ctx, k, (cl_uint)(2 * i + 1), sizeof(cl_long), &offs[i], who);
    for (int i = 0; i < 7 && st == CLT_SUCCESS; i++)
        st = clt__set_arg(ctx, k, (cl_uint)(6 + i), sizeof(cl_long), &dims[i], who);
    if (st == CLT_SUCCESS)
        st = clt__launch_1d(ctx, k, items, who);
    return st;
}

clt_status clt_spectral_mix(const clt_tensor *x, const clt_tensor *w, clt_tensor *out)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_spectral_mix";
    if (!x || !w || !out)
        return clt__fail(x ? x->ctx : w ? w->ctx : out ? out->ctx : NULL, CLT_ERR_INVALID_ARGUMENT,
                         "%s: %s is NULL", who, !x ? "x" : !w ? "w" : "out");
    clt_context *ctx = x->ctx;
    mix_dims d;
    clt_status st = mix_dims_of(ctx, x, w, &d, who);
    if (st == CLT_SUCCESS)
        st = check_c64(ctx, out, "out", 4, who);
    int64_t want[4] = {d.B, d.O, d.H, d.Wf};
    if (st == CLT_SUCCESS)
        st = check_shape(ctx, out, "out", want, who);
    if (st != CLT_SUCCESS)
        return st;
    if (clt__tensors_overlap(out, x) || clt__tensors_overlap(out, w))
        return clt__fail(ctx, CLT_ERR_ALIASING, "%s: out overlaps %s", who,
                         clt__tensors_overlap(out, x) ? "x" : "w");
    if (out->numel == 0)
        return CLT_SUCCESS;
    /* CPU devices: a work item per output row (the kernel file says why); GPUs: one per element */
    if (ctx->dev->entry->info.type == CLT_DEVICE_CPU)
        return launch(ctx, "spectral_mix_rows", x->storage->mem, x->offset, w->storage->mem, w->offset,
                      out->storage->mem, out->offset, &d, (uint64_t)(d.B * d.O * d.H), who);
    return launch(ctx, "spectral_mix", x->storage->mem, x->offset, w->storage->mem, w->offset,
                  out->storage->mem, out->offset, &d, (uint64_t)out->numel, who);
}

clt_status clt_spectral_mix_backward(const clt_tensor *x, const clt_tensor *w, const clt_tensor *dout,
                                     clt_tensor *dx, clt_tensor *dw)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_spectral_mix_backward";
    if (!x || !w || !dout)
        return clt__fail(x ? x->ctx : w ? w->ctx : dout ? dout->ctx : NULL, CLT_ERR_INVALID_ARGUMENT,
                         "%s: %s is NULL", who, !x ? "x" : !w ? "w" : "dout");
    clt_context *ctx = x->ctx;
    mix_dims d;
    clt_status st = mix_dims_of(ctx, x, w, &d, who);
    int64_t want_out[4] = {d.B, d.O, d.H, d.Wf};
    if (st == CLT_SUCCESS && (st = check_c64(ctx, dout, "dout", 4, who)) == CLT_SUCCESS)
        st = check_shape(ctx, dout, "dout", want_out, who);
    if (st == CLT_SUCCESS && dx && (st = check_c64(ctx, dx, "dx", 4, who)) == CLT_SUCCESS)
        st = check_shape(ctx, dx, "dx", x->shape, who);
    if (st == CLT_SUCCESS && dw && (st = check_c64(ctx, dw, "dw", 5, who)) == CLT_SUCCESS)
        st = check_shape(ctx, dw, "dw", w->shape, who);
    if (st != CLT_SUCCESS)
        return st;
    const clt_tensor *ins[3] = {x, w, dout};
    clt_tensor *outs[2] = {dx, dw};
    for (int o = 0; o < 2; o++)
        for (int i = 0; outs[o] && i < 3; i++)
            if (clt__tensors_overlap(outs[o], ins[i]))
                return clt__fail(ctx, CLT_ERR_ALIASING, "%s: %s overlaps an input", who, o ? "dw" : "dx");
    if (dx && dw && clt__tensors_overlap(dx, dw))
        return clt__fail(ctx, CLT_ERR_ALIASING, "%s: dx overlaps dw", who);
    if (dx && dx->numel > 0)
        st = launch(ctx, "spectral_mix_dx", w->storage->mem, w->offset, dout->storage->mem, dout->offset,
                    dx->storage->mem, dx->offset, &d, (uint64_t)dx->numel, who);
    if (st == CLT_SUCCESS && dw && dw->numel > 0)
        st = launch(ctx, "spectral_mix_dw", x->storage->mem, x->offset, dout->storage->mem, dout->offset,
                    dw->storage->mem, dw->offset, &d, (uint64_t)dw->numel, who);
    return st;
}
