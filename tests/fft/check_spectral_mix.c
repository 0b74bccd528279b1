/* clt_spectral_mix and its gradients against float64 references (ref/fft_ref.c): fresh random data,
 * awkward sizes (1 channel, odd spectra, modes filling the whole spectrum), tensors at offsets, and
 * every error (nothing changes on error). */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "ref/fft_ref.h"
#include "util/test_util.h"

#define MIX_TOL 1e-5 /* relative L2: sums of up to ~32 complex products in f32 */

static double rel_l2(const float *got, const double *want, size_t n)
{
    double e = 0, r = 0;
    for (size_t i = 0; i < n; i++) {
        e += (got[i] - want[i]) * (got[i] - want[i]);
        r += want[i] * want[i];
    }
    return sqrt(e) / (r > 0 ? sqrt(r) : 1);
}

/* A c64 tensor of `count` complex values, placed `pad` elements into a larger buffer (a view). */
static clt_tensor *upload(clt_context *ctx, int ndim, const int64_t *shape, const float *data, size_t count,
                          int64_t pad, clt_tensor **base)
{
    int64_t total = (int64_t)count + pad;
    float *buf = calloc(2 * (size_t)total, sizeof(float));
    memcpy(buf + 2 * pad, data, sizeof(float) * 2 * count);
    TU_OK(clt_tensor_create_from_host(ctx, CLT_C64, 1, &total, buf, sizeof(float) * 2 * (size_t)total, base));
    clt_tensor *v;
    TU_OK(clt_tensor_view(*base, pad, ndim, shape, &v));
    free(buf);
    return v;
}

static void run_mix(clt_context *ctx, int64_t B, int64_t I, int64_t O, int64_t H, int64_t Wf, int64_t m1,
                    int64_t m2, int64_t pad)
{
    size_t nx = (size_t)(B * I * H * Wf), nw = (size_t)(2 * I * O * m1 * m2), no = (size_t)(B * O * H * Wf);
    float *x = malloc(8 * nx), *w = malloc(8 * nw), *g = malloc(8 * no);
    float *out = malloc(8 * no), *dx = malloc(8 * nx), *dw = malloc(8 * nw);
    tu_random_f32(x, 2 * nx, -1, 1);
    tu_random_f32(w, 2 * nw, -1, 1);
    tu_random_f32(g, 2 * no, -1, 1);
    double *xd = malloc(16 * nx), *wd = malloc(16 * nw), *gd = malloc(16 * no);
    double *rout = malloc(16 * no), *rdx = malloc(16 * nx), *rdw = malloc(16 * nw);
    for (size_t i = 0; i < 2 * nx; i++)
        xd[i] = x[i];
    for (size_t i = 0; i < 2 * nw; i++)
        wd[i] = w[i];
    for (size_t i = 0; i < 2 * no; i++)
        gd[i] = g[i];
    ref_spectral_mix(xd, wd, rout, B, I, O, H, Wf, m1, m2);
    ref_spectral_mix_backward(xd, wd, gd, rdx, rdw, B, I, O, H, Wf, m1, m2);
    int64_t xs[4] = {B, I, H, Wf}, ws[5] = {2, I, O, m1, m2}, os[4] = {B, O, H, Wf};
    clt_tensor *xb, *wb, *gb, *tx, *tw, *tg, *to, *tdx, *tdw;
    tx = upload(ctx, 4, xs, x, nx, pad, &xb);
    tw = upload(ctx, 5, ws, w, nw, pad, &wb);
    tg = upload(ctx, 4, os, g, no, pad, &gb);
    TU_OK(clt_tensor_create(ctx, CLT_C64, 4, os, &to));
    TU_OK(clt_tensor_create(ctx, CLT_C64, 4, xs, &tdx));
    TU_OK(clt_tensor_create(ctx, CLT_C64, 5, ws, &tdw));
    tu_poison(to);
    tu_poison(tdx);
    tu_poison(tdw);
    TU_OK(clt_spectral_mix(tx, tw, to));
    TU_OK(clt_spectral_mix_backward(tx, tw, tg, tdx, tdw));
    TU_OK(clt_tensor_read(to, out, 8 * no));
    TU_OK(clt_tensor_read(tdx, dx, 8 * nx));
    TU_OK(clt_tensor_read(tdw, dw, 8 * nw));
    double e1 = rel_l2(out, rout, 2 * no), e2 = rel_l2(dx, rdx, 2 * nx), e3 = rel_l2(dw, rdw, 2 * nw);
    ck_assert_msg(e1 < MIX_TOL && e2 < MIX_TOL && e3 < MIX_TOL,
                  "B %lld I %lld O %lld H %lld Wf %lld modes %lldx%lld: errors out %g dx %g dw %g",
                  (long long)B, (long long)I, (long long)O, (long long)H, (long long)Wf, (long long)m1,
                  (long long)m2, e1, e2, e3);
    /* only dw wanted */
    tu_poison(tdw);
    TU_OK(clt_spectral_mix_backward(tx, tw, tg, NULL, tdw));
    TU_OK(clt_tensor_read(tdw, dw, 8 * nw));
    ck_assert(rel_l2(dw, rdw, 2 * nw) < MIX_TOL);
    clt_tensor *all[] = {xb, wb, gb, tx, tw, tg, to, tdx, tdw};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        clt_tensor_free(all[i]);
    free(x); free(w); free(g); free(out); free(dx); free(dw);
    free(xd); free(wd); free(gd); free(rout); free(rdx); free(rdw);
}

START_TEST(test_mix)
{
    clt_context *ctx = tu_context();
    run_mix(ctx, 2, 3, 4, 8, 5, 2, 3, 0);
    run_mix(ctx, 1, 1, 1, 1, 1, 0, 0, 0);   /* no modes: all zero */
    run_mix(ctx, 3, 5, 2, 10, 6, 5, 6, 3); /* corners fill the spectrum; views at an offset */
    run_mix(ctx, 2, 32, 32, 16, 9, 4, 4, 1);
    run_mix(ctx, 1, 7, 3, 13, 7, 3, 2, 0);
    run_mix(ctx, 2, 5, 3, 12, 11, 3, 9, 2); /* CPU row kernel: two groups of 4 modes, one over, views */
    tu_context_free(ctx);
}
END_TEST

START_TEST(test_mix_errors)
{
    clt_context *ctx = tu_context();
    int64_t xs[4] = {2, 3, 8, 5}, ws[5] = {2, 3, 4, 2, 3}, os[4] = {2, 4, 8, 5};
    int64_t bad_w[5] = {2, 3, 4, 5, 3}, bad_o[4] = {2, 3, 8, 5};
    clt_tensor *x, *w, *o, *wbad, *obad, *xr;
    TU_OK(clt_tensor_create(ctx, CLT_C64, 4, xs, &x));
    TU_OK(clt_tensor_create(ctx, CLT_C64, 5, ws, &w));
    TU_OK(clt_tensor_create(ctx, CLT_C64, 4, os, &o));
    TU_OK(clt_tensor_create(ctx, CLT_C64, 5, bad_w, &wbad));
    TU_OK(clt_tensor_create(ctx, CLT_C64, 4, bad_o, &obad));
    TU_OK(clt_tensor_create(ctx, CLT_F32, 4, xs, &xr));
    tu_poison(o);
    TU_EXPECT_STATUS(clt_spectral_mix(x, wbad, o), CLT_ERR_INVALID_SHAPE); /* 2*5 > 8 */
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_spectral_mix");
    TU_EXPECT_STATUS(clt_spectral_mix(x, w, obad), CLT_ERR_INVALID_SHAPE);
    TU_EXPECT_STATUS(clt_spectral_mix(xr, w, o), CLT_ERR_INVALID_DTYPE);
    TU_EXPECT_STATUS(clt_spectral_mix(x, w, NULL), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_STATUS(clt_spectral_mix_backward(x, w, o, x, NULL), CLT_ERR_ALIASING);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_spectral_mix_backward");
    TU_EXPECT_STATUS(clt_spectral_mix_backward(x, w, obad, NULL, NULL), CLT_ERR_INVALID_SHAPE);
    size_t n = clt_tensor_nbytes(o);
    unsigned char *got = malloc(n);
    TU_OK(clt_tensor_read(o, got, n));
    for (size_t i = 0; i < n; i++)
        ck_assert_int_eq(got[i], 0xFF);
    free(got);
    clt_tensor *all[] = {x, w, o, wbad, obad, xr};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        clt_tensor_free(all[i]);
    tu_context_free(ctx);
}
END_TEST

Suite *spectral_mix_suite(void)
{
    Suite *s = suite_create("spectral_mix");
    TCase *tc = tcase_create("spectral_mix");
    tcase_add_test(tc, test_mix);
    tcase_add_test(tc, test_mix_errors);
    suite_add_tcase(s, tc);
    return s;
}
