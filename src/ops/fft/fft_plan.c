/* clt_fft_plan_get: the descriptor checked and normalised, the context's plan cache, the backend
 * chosen (forced, or by the table in fft_table.c) and made; clt_fft_execute's checks. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cltensor_fft.h"
#include "ops/fft/fft_cache.h"
#include "ops/fft/fft_plan.h"
#include "tensor/tensor.h"

struct clt_fft_cache {
    clt_fft_plan *plans;
    unsigned count;
};

void clt_fft_desc_init(clt_fft_desc *desc)
{
    if (!desc)
        return;
    memset(desc, 0, sizeof *desc);
    desc->kind = CLT_FFT_C2C;
    desc->direction = CLT_FFT_FORWARD;
    desc->norm = CLT_FFT_NORM_BACKWARD;
    desc->rank = 1;
    desc->batch = 1;
}

int64_t clt__fft_largest_prime(int64_t n)
{
    int64_t best = 1;
    for (int64_t p = 2; p * p <= n; p++)
        while (n % p == 0) {
            best = p;
            n /= p;
        }
    return n > 1 ? n : best;
}

const char *clt__fft_backend_name(clt_fft_backend b)
{
    switch (b) {
    case CLT_FFT_OURS: return "ours";
    case CLT_FFT_CLFFT: return "clfft";
    case CLT_FFT_VKFFT: return "vkfft";
    }
    return "unknown";
}

static int parse_impl(const char *text)
{
    if (!text || !*text || !strcasecmp(text, "auto"))
        return -1;
    if (!strcasecmp(text, "ours"))
        return CLT_FFT_OURS;
    if (!strcasecmp(text, "clfft"))
        return CLT_FFT_CLFFT;
    if (!strcasecmp(text, "vkfft"))
        return CLT_FFT_VKFFT;
    return -2;
}

/* a * b, or -1 when it overflows int64 (both >= 0). */
static int64_t mul_checked(int64_t a, int64_t b)
{
    if (a != 0 && b > INT64_MAX / a)
        return -1;
    return a * b;
}

/* Contiguous strides for lengths len[0..rank-1]: innermost 1. Returns the distance (product), or
 * -1 on overflow. */
static int64_t contiguous(int rank, const int64_t *len, int64_t *stride)
{
    int64_t s = 1;
    for (int a = rank - 1; a >= 0; a--) {
        stride[a] = s;
        s = mul_checked(s, len[a]);
        if (s < 0)
            return -1;
    }
    return s;
}

/* One past the last element reached: (batch-1) dist + sum (len-1) stride + 1, or -1 on overflow. */
static int64_t span_of(int rank, const int64_t *len, const int64_t *stride, int64_t batch, int64_t dist)
{
    int64_t s = mul_checked(batch - 1, dist);
    for (int a = 0; a < rank && s >= 0; a++) {
        int64_t t = mul_checked(len[a] - 1, stride[a]);
        if (t < 0 || s > INT64_MAX - t)
            return -1;
        s += t;
    }
    return s < 0 || s == INT64_MAX ? -1 : s + 1;
}

static clt_status side_strides(clt_context *ctx, const char *who, const char *side, int rank,
                               const int64_t *len, const int64_t *given, int64_t given_dist,
                               int64_t *stride, int64_t *dist)
{
    int zeros = 0;
    for (int a = 0; a < rank; a++) {
        if (given[a] < 0)
            return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: %s_stride[%d] is %lld (must be >= 0)",
                             who, side, a, (long long)given[a]);
        zeros += given[a] == 0;
    }
    if (given_dist < 0)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: %s_dist is %lld (must be >= 0)", who, side,
                         (long long)given_dist);
    if (zeros != 0 && zeros != rank)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE,
                         "%s: %s strides must be all 0 (contiguous) or all set, got %d of %d zero", who,
                         side, zeros, rank);
    int64_t packed = contiguous(rank, len, stride);
    if (packed < 0)
        return clt__fail(ctx, CLT_ERR_SIZE_OVERFLOW, "%s: %s size overflows", who, side);
    if (zeros == 0)
        memcpy(stride, given, sizeof(int64_t) * (size_t)rank);
    *dist = given_dist ? given_dist : packed;
    return CLT_SUCCESS;
}

static clt_status normalise(clt_context *ctx, const clt_fft_desc *d, clt_fft_key *k, int64_t *in_len,
                            int64_t *out_len, const char *who)
{
    memset(k, 0, sizeof *k);
    if (d->kind != CLT_FFT_C2C && d->kind != CLT_FFT_R2C && d->kind != CLT_FFT_C2R)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: unknown kind %d", who, (int)d->kind);
    if (d->kind == CLT_FFT_C2C && d->direction != CLT_FFT_FORWARD && d->direction != CLT_FFT_INVERSE)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: direction %d (expected -1 or 1)", who,
                         (int)d->direction);
    if (d->norm != CLT_FFT_NORM_BACKWARD && d->norm != CLT_FFT_NORM_ORTHO &&
        d->norm != CLT_FFT_NORM_FORWARD)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: unknown norm %d", who, (int)d->norm);
    if (d->rank < 1 || d->rank > CLT_FFT_MAX_RANK)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: rank %d outside 1..%d", who, d->rank,
                         CLT_FFT_MAX_RANK);
    const char *impl = d->impl ? d->impl : getenv("CLT_FFT_IMPL");
    int forced = parse_impl(impl);
    if (forced == -2)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT,
                         "%s: impl \"%s\" (expected ours, clfft, vkfft or auto)", who, impl);
    int rank = d->rank;
    for (int a = 0; a < rank; a++)
        if (d->n[a] < 1)
            return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: n[%d] is %lld (must be >= 1)", who, a,
                             (long long)d->n[a]);
    if (d->batch < 1)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: batch is %lld (must be >= 1)", who,
                         (long long)d->batch);
    k->kind = d->kind;
    k->direction = d->kind == CLT_FFT_C2C ? d->direction
                   : d->kind == CLT_FFT_R2C ? CLT_FFT_FORWARD : CLT_FFT_INVERSE;
    k->norm = d->norm;
    k->rank = rank;
    k->backend_forced = forced;
    k->batch = d->batch;
    for (int a = 0; a < rank; a++) {
        k->n[a] = d->n[a];
        in_len[a] = out_len[a] = d->n[a];
    }
    int64_t half = d->n[rank - 1] / 2 + 1;
    if (d->kind == CLT_FFT_R2C)
        out_len[rank - 1] = half;
    if (d->kind == CLT_FFT_C2R)
        in_len[rank - 1] = half;
    clt_status st = side_strides(ctx, who, "in", rank, in_len, d->in_stride, d->in_dist, k->in_stride,
                                 &k->in_dist);
    if (st == CLT_SUCCESS)
        st = side_strides(ctx, who, "out", rank, out_len, d->out_stride, d->out_dist, k->out_stride,
                          &k->out_dist);
    return st;
}

static double norm_scale(const clt_fft_key *k)
{
    double total = 1;
    for (int a = 0; a < k->rank; a++)
        total *= (double)k->n[a];
    switch (k->norm) {
    case CLT_FFT_NORM_ORTHO: return 1.0 / sqrt(total);
    case CLT_FFT_NORM_FORWARD: return k->direction == CLT_FFT_FORWARD ? 1.0 / total : 1.0;
    case CLT_FFT_NORM_BACKWARD: return k->direction == CLT_FFT_INVERSE ? 1.0 / total : 1.0;
    }
    return 1.0;
}

static void backend_free(clt_fft_plan *p)
{
    if (p->impl && p->backend == CLT_FFT_CLFFT)
        clt__fft_clfft_free(p);
    if (p->impl && p->backend == CLT_FFT_VKFFT)
        clt__fft_vkfft_free(p);
    p->impl = NULL;
    clt__fft_ours_free(p);
}

static clt_status backend_make(clt_fft_plan *p, clt_fft_backend b, const char *who)
{
    p->backend = b;
    switch (b) {
    case CLT_FFT_OURS: return CLT_SUCCESS; /* p->ours is the state */
    case CLT_FFT_CLFFT: return clt__fft_clfft_make(p, who);
    case CLT_FFT_VKFFT: return clt__fft_vkfft_make(p, who);
    }
    return CLT_ERR_UNSUPPORTED;
}

void clt__fft_cache_destroy(clt_context *ctx)
{
    if (!ctx || !ctx->fft)
        return;
    clt_fft_plan *p = ctx->fft->plans;
    while (p) {
        clt_fft_plan *next = p->next;
        backend_free(p);
        free(p);
        p = next;
    }
    free(ctx->fft);
    ctx->fft = NULL;
}

clt_status clt_fft_plan_get(clt_context *ctx, const clt_fft_desc *desc, clt_fft_plan **out)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_fft_plan_get";
    if (out)
        *out = NULL;
    if (!ctx || !desc || !out)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", who,
                         !ctx ? "ctx" : !desc ? "desc" : "out");
    clt_fft_key key;
    int64_t in_len[CLT_FFT_MAX_RANK] = {0}, out_len[CLT_FFT_MAX_RANK] = {0};
    clt_status st = normalise(ctx, desc, &key, in_len, out_len, who);
    if (st != CLT_SUCCESS)
        return st;
    if (!ctx->fft) {
        ctx->fft = calloc(1, sizeof *ctx->fft);
        if (!ctx->fft)
            return clt__fail(ctx, CLT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", who);
    }
    for (clt_fft_plan *p = ctx->fft->plans; p; p = p->next)
        if (!memcmp(&p->key, &key, sizeof key)) {
            *out = p;
            return CLT_SUCCESS;
        }
    clt_fft_plan *p = calloc(1, sizeof *p);
    if (!p)
        return clt__fail(ctx, CLT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", who);
    p->ctx = ctx;
    p->key = key;
    memcpy(p->in_len, in_len, sizeof in_len);
    memcpy(p->out_len, out_len, sizeof out_len);
    p->in_span = span_of(key.rank, in_len, key.in_stride, key.batch, key.in_dist);
    p->out_span = span_of(key.rank, out_len, key.out_stride, key.batch, key.out_dist);
    if (p->in_span < 0 || p->out_span < 0) {
        free(p);
        return clt__fail(ctx, CLT_ERR_SIZE_OVERFLOW, "%s: the strides reach past 2^63 elements", who);
    }
    p->scale = norm_scale(&key);
    st = clt__fft_ours_make(p, who);
    if (st == CLT_SUCCESS) {
        if (key.backend_forced >= 0) {
            st = backend_make(p, (clt_fft_backend)key.backend_forced, who);
        } else {
            clt_fft_backend order[3];
            int count = clt__fft_auto_order(ctx, &key, order);
            st = CLT_ERR_UNSUPPORTED;
            for (int i = 0; i < count && st != CLT_SUCCESS; i++)
                st = backend_make(p, order[i], who);
            if (st != CLT_SUCCESS) /* ours serves every plan */
                st = backend_make(p, CLT_FFT_OURS, who);
        }
    }
    if (st != CLT_SUCCESS) {
        backend_free(p);
        free(p);
        return st;
    }
    clt__log("%s: new plan (%s) on the %s backend", who,
             key.kind == CLT_FFT_C2C ? "c2c" : key.kind == CLT_FFT_R2C ? "r2c" : "c2r",
             clt__fft_backend_name(p->backend));
    p->next = ctx->fft->plans;
    ctx->fft->plans = p;
    ctx->fft->count++;
    *out = p;
    return CLT_SUCCESS;
}

const char *clt_fft_plan_backend(const clt_fft_plan *plan)
{
    return plan ? clt__fft_backend_name(plan->backend) : "none";
}

static clt_status check_side(const clt_fft_plan *p, const clt_tensor *t, clt_dtype want, int64_t span,
                             const char *side, const char *who)
{
    if (t->ctx != p->ctx)
        return clt__fail(p->ctx, CLT_ERR_CONTEXT_MISMATCH, "%s: %s belongs to another context", who,
                         side);
    if (t->dtype != want)
        return clt__fail(p->ctx, CLT_ERR_INVALID_DTYPE, "%s: %s is %s, this plan needs %s", who, side,
                         clt_dtype_name(t->dtype), clt_dtype_name(want));
    if (t->numel < span)
        return clt__fail(p->ctx, CLT_ERR_INVALID_SHAPE,
                         "%s: %s has %lld elements, the plan's strides reach %lld", who, side,
                         (long long)t->numel, (long long)span);
    return CLT_SUCCESS;
}

clt_status clt_fft_execute(const clt_fft_plan *plan, const clt_tensor *in, clt_tensor *out)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_fft_execute";
    if (!plan || !in || !out)
        return clt__fail(plan ? plan->ctx : in ? in->ctx : out ? out->ctx : NULL,
                         CLT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", who,
                         !plan ? "plan" : !in ? "in" : "out");
    const clt_fft_key *k = &plan->key;
    clt_dtype in_type = k->kind == CLT_FFT_R2C ? CLT_F32 : CLT_C64;
    clt_dtype out_type = k->kind == CLT_FFT_C2R ? CLT_F32 : CLT_C64;
    clt_status st = check_side(plan, in, in_type, plan->in_span, "in", who);
    if (st == CLT_SUCCESS)
        st = check_side(plan, out, out_type, plan->out_span, "out", who);
    if (st != CLT_SUCCESS)
        return st;
    if (clt__tensors_overlap(in, out)) {
        int same = in->offset == out->offset && k->kind == CLT_FFT_C2C &&
                   !memcmp(k->in_stride, k->out_stride, sizeof k->in_stride) && k->in_dist == k->out_dist;
        if (!same)
            return clt__fail(plan->ctx, CLT_ERR_ALIASING,
                             "%s: in and out overlap (in place needs C2C, the same memory and strides)",
                             who);
    }
    size_t in_off = in->offset / clt_dtype_size(in_type), out_off = out->offset / clt_dtype_size(out_type);
    switch (plan->backend) {
    case CLT_FFT_CLFFT:
        return clt__fft_clfft_execute(plan, in->storage->mem, in_off, out->storage->mem, out_off, who);
    case CLT_FFT_VKFFT:
        return clt__fft_vkfft_execute(plan, in->storage->mem, in_off, out->storage->mem, out_off, who);
    case CLT_FFT_OURS: break;
    }
    return clt__fft_ours_execute(plan, in->storage->mem, in_off, out->storage->mem, out_off, who);
}
