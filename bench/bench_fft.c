/* Setups of the fft suite: transforms through cached plans (clt_fft_plan_get once in setup, then
 * clt_fft_execute per op), the FNO spectral convolution (rfft2 -> spectral mix -> irfft2) and the FNO
 * layer (that + 1x1 conv + bias, GELU). Work is 2 x the bytes of the complex side (VkFFT's scripts'
 * GB/s); the FNO rows report time only. The backend is the plan's: CLT_FFT_IMPL (clt-bench --impl
 * ours|clfft|vkfft sets it) forces one, else the built-in table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_cases.h"
#include "bench_startup.h"

#define BATCHED_TOTAL_GPU (512ll << 20)
#define BATCHED_TOTAL_CPU (32ll << 20) /* POCL: the same cases at a size that runs in seconds */

typedef struct fft_state {
    clt_tensor *in, *out, *mid, *spec, *w, *x, *lin, *w1, *b1, *y;
    const clt_fft_plan *plan, *inv;
    int fno; /* 0 transform, 1 spectral conv, 2 layer */
} fft_state;

static void fft_teardown(void *p)
{
    fft_state *s = p;
    if (!s)
        return;
    clt_tensor *ts[10] = {s->in, s->out, s->mid, s->spec, s->w, s->x, s->lin, s->w1, s->b1, s->y};
    bench_free_tensors(ts, 10);
    free(s);
}

static clt_status fft_run(void *p)
{
    fft_state *s = p;
    return clt_fft_execute(s->plan, s->in, s->out);
}

/* A tensor of random complex values ([0, 1) in both parts), n complex elements. */
static clt_status random_c64(bench_env *env, int ndim, const int64_t *shape, clt_tensor **out)
{
    clt_tensor *f;
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    int64_t twice = 2 * n;
    clt_status st = bench_random_f32(env, 1, &twice, &f);
    if (st != CLT_SUCCESS)
        return st;
    st = clt_tensor_create(env->ctx, CLT_C64, ndim, shape, out);
    if (st == CLT_SUCCESS) {
        /* the same bytes: a c64 tensor is interleaved floats */
        size_t bytes = clt_tensor_nbytes(f);
        void *host = malloc(bytes);
        st = host ? clt_tensor_read(f, host, bytes) : CLT_ERR_OUT_OF_HOST_MEMORY;
        if (st == CLT_SUCCESS)
            st = clt_tensor_write(*out, host, bytes);
        free(host);
    }
    clt_tensor_free(f);
    return st;
}

/* p = {kind (0 c2c, 1 r2c, 2 c2r), rank, n0, n1, n2, batch, batched-total flag} */
static clt_status transform_setup(bench_env *env, const bench_case *c, bench_run *out)
{
    fft_state *s = calloc(1, sizeof *s);
    if (!s)
        return CLT_ERR_OUT_OF_HOST_MEMORY;
    clt_fft_desc d;
    clt_fft_desc_init(&d);
    d.kind = (clt_fft_kind)c->p[0];
    d.rank = (int)c->p[1];
    for (int a = 0; a < d.rank; a++)
        d.n[a] = c->p[2 + a];
    d.batch = c->p[5];
    if (c->p[6]) { /* batched 1-D: the batch fills a total that fits the device */
        int64_t total = env->device.type == CLT_DEVICE_CPU ? BATCHED_TOTAL_CPU : BATCHED_TOTAL_GPU;
        while (total > 1 << 20 && ((uint64_t)total * 4 > env->device.global_mem_bytes ||
                                   (uint64_t)total > env->device.max_alloc_bytes))
            total /= 2;
        d.batch = total / (8 * d.n[0]);
        if (d.batch < 1)
            d.batch = 1;
        snprintf(out->note, sizeof out->note, "batch %lld (%lld MiB)", (long long)d.batch,
                 (long long)((8 * d.n[0] * d.batch) >> 20));
    }
    int64_t shape[4], half_shape[4];
    shape[0] = half_shape[0] = d.batch;
    for (int a = 0; a < d.rank; a++)
        shape[1 + a] = half_shape[1 + a] = d.n[a];
    half_shape[d.rank] = d.n[d.rank - 1] / 2 + 1;
    int ndim = d.rank + 1;
    clt_status st;
    if (d.kind == CLT_FFT_R2C) {
        st = bench_random_f32(env, ndim, shape, &s->in);
        if (st == CLT_SUCCESS)
            st = clt_tensor_create(env->ctx, CLT_C64, ndim, half_shape, &s->out);
    } else if (d.kind == CLT_FFT_C2R) {
        st = random_c64(env, ndim, half_shape, &s->in);
        if (st == CLT_SUCCESS)
            st = clt_tensor_create(env->ctx, CLT_F32, ndim, shape, &s->out);
    } else {
        st = random_c64(env, ndim, shape, &s->in);
        if (st == CLT_SUCCESS)
            st = clt_tensor_create(env->ctx, CLT_C64, ndim, shape, &s->out);
    }
    clt_fft_plan *plan = NULL;
    if (st == CLT_SUCCESS)
        st = clt_fft_plan_get(env->ctx, &d, &plan);
    if (st != CLT_SUCCESS) {
        fft_teardown(s);
        return st;
    }
    s->plan = plan;
    size_t n = strlen(out->note);
    snprintf(out->note + n, sizeof out->note - n, "%s%s", n ? ", " : "", clt_fft_plan_backend(plan));
    double complex_bytes = 8.0 * (double)d.batch;
    for (int a = 0; a < d.rank; a++)
        complex_bytes *= (double)(d.kind == CLT_FFT_C2C || a < d.rank - 1 ? d.n[a] : half_shape[d.rank]);
    out->state = s;
    out->run = fft_run;
    out->teardown = fft_teardown;
    out->unit = BENCH_UNIT_BYTES;
    out->work = 2.0 * complex_bytes;
    return CLT_SUCCESS;
}

clt_status bench_setup_fft(bench_env *env, const bench_case *c, bench_run *out)
{
    return transform_setup(env, c, out);
}

static clt_status fno_run(void *p)
{
    fft_state *s = p;
    clt_status st = clt_fft_execute(s->plan, s->x, s->spec);
    if (st == CLT_SUCCESS)
        st = clt_spectral_mix(s->spec, s->w, s->mid);
    if (st == CLT_SUCCESS)
        st = clt_fft_execute(s->inv, s->mid, s->y);
    if (st == CLT_SUCCESS && s->fno == 2) {
        clt_conv2d_params cp;
        clt_conv2d_params_init(&cp);
        st = clt_conv2d(s->x, s->w1, s->b1, &cp, CLT_IDENTITY, 0.0f, s->lin);
        if (st == CLT_SUCCESS)
            st = clt_add_activation(s->y, s->lin, CLT_GELU_ERF, 0.0f, s->out);
    }
    return st;
}

/* p = {B, C (in = out channels), H, W, m1, m2, layer (0 spectral conv, 1 whole layer)} */
clt_status bench_setup_fno(bench_env *env, const bench_case *c, bench_run *out)
{
    int64_t B = c->p[0], C = c->p[1], H = c->p[2], W = c->p[3], m1 = c->p[4], m2 = c->p[5];
    fft_state *s = calloc(1, sizeof *s);
    if (!s)
        return CLT_ERR_OUT_OF_HOST_MEMORY;
    s->fno = c->p[6] ? 2 : 1;
    int64_t xs[4] = {B, C, H, W}, hs[4] = {B, C, H, W / 2 + 1}, ws[5] = {2, C, C, m1, m2};
    int64_t w1s[4] = {C, C, 1, 1};
    clt_status st = bench_random_f32(env, 4, xs, &s->x);
    if (st == CLT_SUCCESS)
        st = clt_tensor_create(env->ctx, CLT_C64, 4, hs, &s->spec);
    if (st == CLT_SUCCESS)
        st = clt_tensor_create(env->ctx, CLT_C64, 4, hs, &s->mid);
    if (st == CLT_SUCCESS)
        st = random_c64(env, 5, ws, &s->w);
    if (st == CLT_SUCCESS)
        st = clt_tensor_create(env->ctx, CLT_F32, 4, xs, &s->y);
    if (st == CLT_SUCCESS && s->fno == 2) {
        st = bench_random_f32(env, 4, w1s, &s->w1);
        if (st == CLT_SUCCESS)
            st = bench_random_f32(env, 1, &C, &s->b1);
        if (st == CLT_SUCCESS)
            st = clt_tensor_create(env->ctx, CLT_F32, 4, xs, &s->lin);
        if (st == CLT_SUCCESS)
            st = clt_tensor_create(env->ctx, CLT_F32, 4, xs, &s->out);
    }
    clt_fft_desc d;
    clt_fft_desc_init(&d);
    d.kind = CLT_FFT_R2C;
    d.rank = 2;
    d.n[0] = H;
    d.n[1] = W;
    d.batch = B * C;
    clt_fft_plan *fwd = NULL, *inv = NULL;
    if (st == CLT_SUCCESS)
        st = clt_fft_plan_get(env->ctx, &d, &fwd);
    d.kind = CLT_FFT_C2R;
    if (st == CLT_SUCCESS)
        st = clt_fft_plan_get(env->ctx, &d, &inv);
    if (st != CLT_SUCCESS) {
        fft_teardown(s);
        return st;
    }
    s->plan = fwd;
    s->inv = inv;
    snprintf(out->note, sizeof out->note, "%s", clt_fft_plan_backend(fwd));
    out->state = s;
    out->run = fno_run;
    out->teardown = fft_teardown;
    out->unit = BENCH_UNIT_NONE;
    return CLT_SUCCESS;
}

clt_status bench_fft_first_plan(bench_env *env, bench_result *row)
{
    clt_program_cache_stats before, after;
    clt_status st = clt_program_cache_get_stats(env->ctx, &before);
    if (st != CLT_SUCCESS)
        return st;
    const int64_t shape[3] = {64, 256, 256}, half[3] = {64, 256, 129};
    clt_tensor *in = NULL, *out = NULL;
    if ((st = bench_random_f32(env, 3, shape, &in)) != CLT_SUCCESS ||
        (st = clt_tensor_create(env->ctx, CLT_C64, 3, half, &out)) != CLT_SUCCESS ||
        (st = clt_finish(env->ctx)) != CLT_SUCCESS) {
        clt_tensor_free(in);
        return st;
    }
    clt_fft_desc d;
    clt_fft_desc_init(&d);
    d.kind = CLT_FFT_R2C;
    d.rank = 2;
    d.n[0] = d.n[1] = 256;
    d.batch = 64;
    clt_fft_plan *plan = NULL;
    double t0 = bench_now_s();
    st = clt_fft_plan_get(env->ctx, &d, &plan);
    if (st == CLT_SUCCESS)
        st = clt_fft_execute(plan, in, out);
    if (st == CLT_SUCCESS)
        st = clt_finish(env->ctx);
    double t1 = bench_now_s();
    if (st == CLT_SUCCESS)
        st = clt_program_cache_get_stats(env->ctx, &after);
    clt_tensor_free(in);
    clt_tensor_free(out);
    if (st != CLT_SUCCESS)
        return st;
    bench_single_sample(row, "startup/fft_plan", t1 - t0);
    snprintf(row->note, sizeof row->note, "rfft2 64x256x256 made, run, finished; %s, %s",
             after.source_builds > before.source_builds ? "programs compiled from source (cold cache)"
             : after.disk_loads > before.disk_loads     ? "programs loaded from the disk cache"
                                                         : "programs already in memory",
             clt_fft_plan_backend(plan));
    return CLT_SUCCESS;
}
