/* GEMM math modes and 16-bit operands against a float64 reference, with tolerances derived from
 * the formats (written once, below), so that the same suite is meaningful on POCL (every mode runs
 * the fp32 kernels there) and on a GPU with tensor cores (where TF32 really rounds):
 *   fp32 accumulation:  T32 = 2 (K + 4) eps32 scale + 8 eps32 (|C| + |residual|)
 *                       (scale = |alpha| sum|a||b| + |beta C| + |bias|, ref/gemm_ref.h)
 *   TF32 inputs:        T32 + 2.01 u_tf32 scale, u_tf32 = 2^-11 (each input rounded to 10 mantissa
 *                       bits, to nearest: relative error <= 2^-11 each, two per product)
 *   3xTF32:             T32: the fp32 path's own bound (proven discriminating: on the adversarial
 *                       inputs a host simulation of plain TF32 breaks it)
 *   f16 / bf16 inputs:  T32 against the exact 16-bit values (their products are exact in fp32)
 *   16-bit C:           (T + u_out |C|)(1 + u_out) + f16's subnormal spacing, u_out = 2^-11 f16,
 *                       2^-8 bf16 (one rounding of the result)
 * Odd shapes, transposes, offsets and padded leading dimensions, bias, activation, residual, beta,
 * clt_gemm / strided-batched / batched / clt_matmul_math, every way of choosing the mode, the
 * profiler's name for the fallback, the environment, and the rejected dtype / mode combinations. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/gemm/gemm.h"
#include "ref/cast_ref.h"
#include "ref/gemm_ref.h"
#include "util/test_util.h"

#define EPS32 1.1920928955078125e-7
#define U_TF32 4.8828125e-4 /* 2^-11 */

typedef enum api { API_GEMM, API_STRIDED, API_BATCHED, API_MATMUL } api;
typedef enum via { VIA_CONTEXT, VIA_EPILOGUE } via;

typedef struct mcase {
    clt_dtype in, out;
    clt_math_mode math;
    via how;
    api call;
    int ta, tb;
    int64_t m, n, k, batch;
    float alpha, beta;
    int bias, residual;
    clt_unary_op act;
    int wide;   /* adversarial: values (1 + u) 2^e, e in [-20, 20], random signs */
    int cancel; /* beta = 1 and C = -(A B) rounded: the result is what the rounding left */
    int align8; /* A and B starts, rows and batches on multiples of 8 elements (mma.sync's 16-bit copies) */
} mcase;

static uint32_t rng32(void) { return (uint32_t)(tu_rng_next() >> 32); }

static float draw(int wide)
{
    float u = (float)(rng32() >> 8) * (1.0f / 16777216.0f); /* [0, 1) */
    if (!wide)
        return 2.0f * u - 1.0f;
    int e = (int)(rng32() % 41u) - 20;
    float v = ldexpf(1.0f + u, e);
    return rng32() & 1u ? -v : v;
}

/* n values of dtype d: host floats (exact values) and the bits to upload. */
static float *values(clt_dtype d, int64_t n, int wide, void **bits)
{
    float *f = malloc((size_t)(n ? n : 1) * sizeof *f);
    size_t es = clt_dtype_size(d);
    *bits = malloc((size_t)(n ? n : 1) * es);
    ck_assert(f && *bits);
    for (int64_t i = 0; i < n; i++) {
        float v = draw(wide);
        if (d == CLT_F32) {
            f[i] = v;
            memcpy((char *)*bits + (size_t)i * 4, &v, 4);
        } else {
            uint16_t h = ref_16bit_from_f32(d, v);
            ((uint16_t *)*bits)[i] = h;
            f[i] = (float)ref_16bit_value(d, h);
        }
    }
    return f;
}

static clt_tensor *upload(clt_context *ctx, clt_dtype d, int64_t n, const void *bits)
{
    clt_tensor *t = NULL;
    TU_OK(clt_tensor_create_from_host(ctx, d, 1, &n, bits, (size_t)n * clt_dtype_size(d), &t));
    return t;
}

static double element(clt_dtype d, const void *bits, int64_t i)
{
    if (d == CLT_F32)
        return ((const float *)bits)[i];
    return ref_16bit_value(d, ((const uint16_t *)bits)[i]);
}

/* Run one case on ctx; returns nothing, fails the test on any element out of its bound. */
static void run_case(clt_context *ctx, const mcase *c, const char *label)
{
    int64_t batch = c->batch > 0 ? c->batch : 1, pad = c->call == API_MATMUL ? 0 : 3;
    int64_t ar = c->ta ? c->k : c->m, ac = c->ta ? c->m : c->k;
    int64_t br = c->tb ? c->n : c->k, bc = c->tb ? c->k : c->n;
    int64_t lda = ac + pad, ldb = bc + pad, ldc = c->n + pad;
    int64_t a_off = pad ? 2 : 0, b_off = pad ? 1 : 0, c_off = pad ? 3 : 0, roff = 1;
    int64_t as = ar * lda + pad, bs = br * ldb + pad, cs = c->m * ldc + pad;
    if (c->align8 && c->call != API_MATMUL) { /* padded to the next multiple of 8 and 8 more; C stays odd */
        lda = (ac + 7) / 8 * 8 + 8, ldb = (bc + 7) / 8 * 8 + 8;
        a_off = 8, b_off = 16;
        as = ar * lda + 8, bs = br * ldb + 8;
    }
    if (c->call == API_MATMUL)
        as = ar * lda, bs = br * ldb, cs = c->m * ldc;
    int64_t na = a_off + batch * as, nb = b_off + batch * bs, nc = c_off + batch * cs;
    void *abits, *bbits, *cbits, *bias_bits, *rbits;
    float *ha = values(c->in, na, c->wide, &abits), *hb = values(c->in, nb, c->wide, &bbits);
    float *hc = values(c->out, nc, 0, &cbits), *hbias = values(CLT_F32, c->n, 0, &bias_bits);
    float *hr = values(CLT_F32, nc + roff, 0, &rbits);
    if (c->cancel) { /* C = -(A B) in C's dtype: beta = 1 leaves only what rounding left */
        ref_gemm g0 = {c->ta, c->tb, c->m, c->n, c->k, batch, 1.0, 0.0, ha, a_off, lda, as, hb, b_off,
                       ldb, bs, hc, c_off, ldc, cs, NULL, CLT_BIAS_NONE, CLT_IDENTITY, 0.0, NULL, 0, 0,
                       NULL, CLT_IDENTITY, 0, 0};
        double *ab = malloc((size_t)nc * sizeof *ab);
        ck_assert_ptr_nonnull(ab);
        ref_gemm_run(&g0, (size_t)nc, ab, NULL);
        for (int64_t i = 0; i < nc; i++) {
            float v = -(float)ab[i];
            if (c->out == CLT_F32) {
                hc[i] = v;
                memcpy((char *)cbits + (size_t)i * 4, &v, 4);
            } else {
                ((uint16_t *)cbits)[i] = ref_16bit_from_f32(c->out, v);
                hc[i] = (float)ref_16bit_value(c->out, ((uint16_t *)cbits)[i]);
            }
        }
        free(ab);
    }
    if (c->beta == 0.0f) /* C must not be read: NaN there must vanish */
        for (int64_t i = 0; i < nc; i++) {
            if (c->out == CLT_F32)
                ((float *)cbits)[i] = NAN;
            else
                ((uint16_t *)cbits)[i] = c->out == CLT_F16 ? 0x7E00 : 0x7FC0;
        }
    clt_tensor *ta = upload(ctx, c->in, na, abits), *tb = upload(ctx, c->in, nb, bbits);
    clt_tensor *tc = upload(ctx, c->out, nc, cbits);
    clt_tensor *tbias = c->bias ? upload(ctx, CLT_F32, c->n, bias_bits) : NULL;
    clt_tensor *tr = c->residual ? upload(ctx, CLT_F32, nc + roff, rbits) : NULL;
    clt_gemm_epilogue ep;
    clt_gemm_epilogue_init(&ep);
    ep.bias = tbias;
    ep.bias_mode = tbias ? CLT_BIAS_PER_COLUMN : CLT_BIAS_NONE;
    ep.activation = c->act;
    ep.residual = tr;
    ep.residual_offset = roff;
    ep.ldr = ldc;
    if (c->how == VIA_EPILOGUE)
        ep.math = c->math;
    else
        TU_OK(clt_context_set_math_mode(ctx, c->math));
    clt_transpose t1 = c->ta ? CLT_TRANS : CLT_NO_TRANS, t2 = c->tb ? CLT_TRANS : CLT_NO_TRANS;
    clt_status st;
    switch (c->call) {
    case API_GEMM:
        st = clt_gemm(t1, t2, c->m, c->n, c->k, c->alpha, ta, a_off, lda, tb, b_off, ldb, c->beta, tc,
                      c_off, ldc, &ep);
        break;
    case API_STRIDED:
        st = clt_gemm_strided_batched(t1, t2, c->m, c->n, c->k, c->alpha, ta, a_off, lda, as, tb,
                                      b_off, ldb, bs, c->beta, tc, c_off, ldc, cs, batch, &ep);
        break;
    case API_BATCHED: {
        const clt_tensor *av[8], *bv[8];
        clt_tensor *cv[8];
        int64_t ao[8], bo[8], co[8];
        ck_assert_int_le(batch, 8);
        for (int64_t i = 0; i < batch; i++) { /* reversed order: not one strided run */
            int64_t q = batch - 1 - i;
            av[i] = ta, bv[i] = tb, cv[i] = tc;
            ao[i] = a_off + q * as, bo[i] = b_off + q * bs, co[i] = c_off + q * cs;
        }
        st = clt_gemm_batched(t1, t2, c->m, c->n, c->k, c->alpha, av, ao, lda, bv, bo, ldb, c->beta,
                              cv, co, ldc, batch, &ep);
        break;
    }
    default: {
        clt_tensor *va = NULL, *vb = NULL, *vc = NULL;
        int64_t sa[3] = {batch, c->m, c->k}, sb[3] = {batch, c->k, c->n}, sc[3] = {batch, c->m, c->n};
        TU_OK(clt_tensor_reshape(ta, 3, sa, &va));
        TU_OK(clt_tensor_reshape(tb, 3, sb, &vb));
        TU_OK(clt_tensor_reshape(tc, 3, sc, &vc));
        st = clt_matmul_math(va, vb, vc, c->how == VIA_EPILOGUE ? c->math : CLT_MATH_DEFAULT);
        clt_tensor_free(va);
        clt_tensor_free(vb);
        clt_tensor_free(vc);
    }
    }
    TU_OK(clt_context_set_math_mode(ctx, CLT_MATH_DEFAULT));
    ck_assert_msg(st == CLT_SUCCESS, "%s: %s: %s", label, clt_status_string(st), clt_last_error(ctx));
    size_t cbytes = (size_t)nc * clt_dtype_size(c->out);
    void *got = malloc(cbytes);
    ck_assert_ptr_nonnull(got);
    TU_OK(clt_tensor_read(tc, got, cbytes));

    ref_gemm g = {c->ta, c->tb, c->m, c->n, c->k, batch, c->alpha, c->beta, ha, a_off, lda, as,
                  hb, b_off, ldb, bs, hc, c_off, ldc, cs, tbias ? hbias : NULL,
                  tbias ? CLT_BIAS_PER_COLUMN : CLT_BIAS_NONE, c->act, 0.0, tr ? hr : NULL, roff,
                  ldc, NULL, CLT_IDENTITY, 0, 0};
    double *want = malloc((size_t)nc * sizeof(double)), *scale = malloc((size_t)nc * sizeof(double));
    ck_assert(want && scale);
    ref_gemm_run(&g, (size_t)nc, want, scale);
    double u_out = c->out == CLT_F16 ? 4.8828125e-4 : c->out == CLT_BF16 ? 3.90625e-3 : 0.0;
    int tf32 = c->in == CLT_F32 && c->math == CLT_MATH_TF32;
    for (int64_t i = 0; i < nc; i++) {
        int64_t q = i - c_off, bt = q >= 0 ? q / cs : -1, rem = q - bt * cs;
        int addressed = q >= 0 && bt < batch && rem / ldc < c->m && rem % ldc < c->n;
        if (!addressed) {
            ck_assert_msg(memcmp((char *)got + (size_t)i * clt_dtype_size(c->out),
                                 (char *)cbits + (size_t)i * clt_dtype_size(c->out),
                                 clt_dtype_size(c->out)) == 0,
                          "%s: element %lld outside C changed", label, (long long)i);
            continue;
        }
        double resv = tr ? hr[i + roff - c_off] : 0.0; /* residual matrix starts at roff, ldr = ldc */
        if (tr)
            resv = hr[roff + bt * cs + (rem / ldc) * ldc + rem % ldc];
        double tol = 2.0 * (double)(c->k + 4) * EPS32 * scale[i] * 1.2 +
                     8.0 * EPS32 * (fabs(want[i] - resv) + fabs(resv));
        if (tf32)
            tol += 2.01 * U_TF32 * scale[i] * 1.2;
        if (u_out > 0.0)
            tol = (tol + u_out * fabs(want[i])) * (1.0 + u_out) + (c->out == CLT_F16 ? 6e-8 : 1e-38);
        double v = element(c->out, got, i);
        ck_assert_msg(isfinite(v) && fabs(v - want[i]) <= tol + 1e-30,
                      "%s: element %lld = %.9g, expected %.9g (error %.3g, allowed %.3g)", label,
                      (long long)i, v, want[i], fabs(v - want[i]), tol);
    }
    free(want);
    free(scale);
    free(got);
    clt_tensor_free(ta);
    clt_tensor_free(tb);
    clt_tensor_free(tc);
    clt_tensor_free(tbias);
    clt_tensor_free(tr);
    free(ha), free(hb), free(hc), free(hbias), free(hr);
    free(abits), free(bbits), free(cbits), free(bias_bits), free(rbits);
}

static const clt_math_mode modes[] = {CLT_MATH_FP32, CLT_MATH_TF32, CLT_MATH_FP32_3XTF32};

/* f32 inputs under every mode: shapes at and around tile edges, transposes, epilogues. */
START_TEST(f32_every_mode)
{
    clt_context *ctx = tu_context();
    static const int64_t shapes[][3] = {{1, 1, 1}, {7, 13, 5}, {33, 65, 17}, {64, 64, 64}, {1, 70, 40},
                                        {50, 1, 33}, {17, 19, 0}};
    char label[160];
    for (int md = 0; md < 3; md++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int t = 0; t < 4; t++) {
                mcase c = {CLT_F32, CLT_F32, modes[md], (s + t) % 2 ? VIA_EPILOGUE : VIA_CONTEXT,
                           API_GEMM, t & 1, t >> 1, shapes[s][0], shapes[s][1], shapes[s][2], 1,
                           s % 3 ? 1.0f : -0.75f, t == 3 ? 0.5f : 0.0f, s % 2, t == 2, s % 3 == 1 ? CLT_RELU : CLT_IDENTITY, 0, 0, 0};
                snprintf(label, sizeof label, "%s %lldx%lldx%lld t%d", clt_math_mode_name(modes[md]),
                         (long long)c.m, (long long)c.n, (long long)c.k, t);
                run_case(ctx, &c, label);
            }
    tu_context_free(ctx);
}
END_TEST

/* Which (input, output) dtype pairs this run covers: a POCL build of one 16-bit tiled program takes
 * one to three minutes on a loaded 2-core machine, so each CI profile takes one pair, together
 * covering both load conversions and both store conversions (native: f16 -> f32, its IN16=1 path;
 * gfx902: bf16 -> bf16, IN16=2 and OUT16=2). CLT_GEMM_MATH_ALL=1 (on a GPU, where builds take a
 * second) runs all four pairs on every profile. */
static int pair_selected(const clt_context *ctx, clt_dtype in, clt_dtype out)
{
    const char *all = getenv("CLT_GEMM_MATH_ALL");
    if (all && strcmp(all, "1") == 0)
        return 1;
    clt_context_limits l;
    TU_OK(clt_context_get_limits(ctx, &l));
    if (strcmp(l.profile, "native") == 0)
        return in == CLT_F16 && out == CLT_F32;
    return in == CLT_BF16 && out == CLT_BF16;
}

/* f16 and bf16 inputs with f32 and 16-bit C, through every call, modes too. */
START_TEST(f16_bf16_operands)
{
    clt_context *ctx = tu_context();
    const clt_dtype ins[] = {CLT_F16, CLT_BF16};
    /* small products: every profile runs them on its smallest tile config (one program per dtype
     * pair); the larger product below takes a bigger config where the profile has one */
    static const int64_t shapes[][3] = {{1, 1, 1}, {5, 3, 7}, {33, 31, 17}, {1, 40, 50}};
    char label[160];
    clt_dtype big_in = 0, big_out = 0;
    for (int d = 0; d < 2; d++)
        for (int o = 0; o < 2; o++) {
            clt_dtype out = o ? ins[d] : CLT_F32;
            if (!pair_selected(ctx, ins[d], out))
                continue;
            big_in = ins[d], big_out = out;
            for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
                for (int call = 0; call < 4; call++) {
                    int t = (int)(s + (size_t)call) % 4;
                    if (call == API_MATMUL)
                        t = 0;
                    mcase c = {ins[d], out, modes[(s + (size_t)call) % 3],
                               call % 2 ? VIA_EPILOGUE : VIA_CONTEXT, (api)call, t & 1, t >> 1,
                               shapes[s][0], shapes[s][1], shapes[s][2], call == API_GEMM ? 1 : 3,
                               call == API_MATMUL ? 1.0f : 0.5f,
                               call == API_MATMUL || s % 2 ? 0.0f : -1.25f,
                               call != API_MATMUL && s % 2 == 0, call == API_GEMM && s % 2,
                               CLT_IDENTITY, 0, 0, 0}; /* activations: one more program each
                                                       (the epilogue code is the f32 one) */
                    snprintf(label, sizeof label, "%s->%s call %d %lldx%lldx%lld t%d",
                             clt_dtype_name(c.in), clt_dtype_name(c.out), call, (long long)c.m,
                             (long long)c.n, (long long)c.k, t);
                    run_case(ctx, &c, label);
                }
        }
    clt_context_limits l;
    TU_OK(clt_context_get_limits(ctx, &l));
    if (strcmp(l.profile, "native") == 0 || getenv("CLT_GEMM_MATH_ALL")) {
        mcase big = {big_in, big_out, CLT_MATH_TF32, VIA_EPILOGUE, API_GEMM, 1, 0, 70, 140, 40, 1,
                     1.0f, 0.5f, 1, 1, CLT_IDENTITY, 0, 0, 0};
        run_case(ctx, &big, "70x140x40 tn");
    }
    tu_context_free(ctx);
}
END_TEST

/* Wide exponents (2^-20 .. 2^21) and cancellation: 3xTF32 must keep the fp32 bound, TF32 its own;
 * and the fp32 bound is shown to catch plain TF32 on these very inputs (host simulation), so a
 * 3xTF32 that degenerated to TF32 would fail here on a GPU with tensor cores. */
START_TEST(adversarial_3xtf32)
{
    clt_context *ctx = tu_context();
    int64_t m = 9, n = 11, k = 64;
    char label[96];
    for (int md = 0; md < 3; md++)
        for (int cancel = 0; cancel < 2; cancel++) {
            mcase c = {CLT_F32, CLT_F32, modes[md], VIA_EPILOGUE, API_GEMM, cancel, 0, m, n, k, 1,
                       1.0f, cancel ? 1.0f : 0.0f, 0, 0, CLT_IDENTITY, 1, cancel, 0};
            snprintf(label, sizeof label, "adversarial %s%s", clt_math_mode_name(modes[md]),
                     cancel ? " cancelling" : "");
            run_case(ctx, &c, label);
        }
    /* The discrimination proof, on the host: TF32-rounded inputs break the fp32 bound. */
    float *a = malloc((size_t)(m * k) * sizeof *a), *b = malloc((size_t)(k * n) * sizeof *b);
    float *at = malloc((size_t)(m * k) * sizeof *at), *bt = malloc((size_t)(k * n) * sizeof *bt);
    double *exact = malloc((size_t)(m * n) * sizeof *exact), *tf = malloc((size_t)(m * n) * sizeof *tf);
    double *scale = malloc((size_t)(m * n) * sizeof *scale);
    ck_assert(a && b && at && bt && exact && tf && scale);
    for (int64_t i = 0; i < m * k; i++)
        at[i] = ref_round_tf32(a[i] = draw(1));
    for (int64_t i = 0; i < k * n; i++)
        bt[i] = ref_round_tf32(b[i] = draw(1));
    float *cz = calloc((size_t)(m * n), sizeof *cz); /* C before the call (beta = 0: unread) */
    ck_assert_ptr_nonnull(cz);
    ref_gemm g = {0, 0, m, n, k, 1, 1.0, 0.0, a, 0, k, 0, b, 0, n, 0, cz, 0, n, 0, NULL,
                  CLT_BIAS_NONE, CLT_IDENTITY, 0.0, NULL, 0, 0, NULL, CLT_IDENTITY, 0, 0};
    ref_gemm_run(&g, (size_t)(m * n), exact, scale);
    g.a = at, g.b = bt;
    ref_gemm_run(&g, (size_t)(m * n), tf, NULL);
    int broken = 0;
    for (int64_t i = 0; i < m * n; i++)
        broken += fabs(tf[i] - exact[i]) > 2.0 * (double)(k + 4) * EPS32 * scale[i] * 1.2 +
                                               8.0 * EPS32 * fabs(exact[i]);
    ck_assert_msg(broken > m * n / 2, "TF32 rounding broke the fp32 bound in only %d of %lld elements",
                  broken, (long long)(m * n));
    free(a), free(b), free(at), free(bt), free(exact), free(tf), free(scale), free(cz);
    tu_context_free(ctx);
}
END_TEST

/* Without tensor cores every mode IS the fp32 path: bit-identical results, and the profiler says
 * which implementation ran. */
START_TEST(fallback_is_fp32_and_named)
{
    clt_context *ctx = tu_profiled_context();
    int64_t m = 23, n = 29, k = 31, na = m * k, nb = k * n, nc = m * n;
    void *ab, *bb, *cb;
    float *ha = values(CLT_F32, na, 1, &ab), *hb = values(CLT_F32, nb, 1, &bb), *hc = values(CLT_F32, nc, 0, &cb);
    clt_tensor *ta = upload(ctx, CLT_F32, na, ab), *tb = upload(ctx, CLT_F32, nb, bb);
    clt_tensor *tc = upload(ctx, CLT_F32, nc, cb);
    float *res[3];
    int cores = clt_device_has_tensor_cores(ctx);
    for (int md = 0; md < 3; md++) {
        clt_gemm_epilogue ep;
        clt_gemm_epilogue_init(&ep);
        ep.math = modes[md];
        TU_OK(clt_profile_reset(ctx));
        TU_OK(clt_gemm(CLT_NO_TRANS, CLT_NO_TRANS, m, n, k, 1.0f, ta, 0, k, tb, 0, n, 0.0f, tc, 0, n, &ep));
        TU_OK(clt_profile_collect(ctx));
        clt_profile_entry rows[16];
        size_t count = 0;
        TU_OK(clt_profile_get(ctx, rows, 16, &count));
        ck_assert_uint_ge(count, 1);
        int named = 0;
        for (size_t r = 0; r < count && r < 16; r++)
            if (strcmp(rows[r].op, "clt_gemm") == 0)
                named = modes[md] == CLT_MATH_FP32 ? strstr(rows[r].impl, "tensor") == NULL
                        : cores ? 1 /* the tensor-core kernel's name, or the fallback's */
                                : strstr(rows[r].impl, "no tensor cores") != NULL;
        ck_assert_msg(named, "mode %s: the profiler does not name the path (first row %s / %s)",
                      clt_math_mode_name(modes[md]), rows[0].op, rows[0].impl);
        res[md] = malloc((size_t)nc * sizeof(float));
        ck_assert_ptr_nonnull(res[md]);
        TU_OK(clt_tensor_read(tc, res[md], (size_t)nc * sizeof(float)));
    }
    if (!cores)
        for (int md = 1; md < 3; md++)
            ck_assert_msg(memcmp(res[0], res[md], (size_t)nc * sizeof(float)) == 0,
                          "%s without tensor cores differs from fp32", clt_math_mode_name(modes[md]));
    for (int md = 0; md < 3; md++)
        free(res[md]);
    clt_tensor_free(ta), clt_tensor_free(tb), clt_tensor_free(tc);
    free(ha), free(hb), free(hc), free(ab), free(bb), free(cb);
    tu_context_free(ctx);
}
END_TEST

START_TEST(mode_settings)
{
    char *saved = tu_env_save("CLT_MATH");
    clt_math_mode m;
    setenv("CLT_MATH", "tf32", 1);
    clt_context *ctx = tu_context();
    TU_OK(clt_context_get_math_mode(ctx, &m));
    ck_assert_int_eq(m, CLT_MATH_TF32);
    TU_OK(clt_context_set_math_mode(ctx, CLT_MATH_FP32_3XTF32));
    TU_OK(clt_context_get_math_mode(ctx, &m));
    ck_assert_int_eq(m, CLT_MATH_FP32_3XTF32);
    TU_OK(clt_context_set_math_mode(ctx, CLT_MATH_DEFAULT)); /* back to the creation's mode */
    TU_OK(clt_context_get_math_mode(ctx, &m));
    ck_assert_int_eq(m, CLT_MATH_TF32);
    TU_EXPECT_STATUS(clt_context_set_math_mode(ctx, (clt_math_mode)9), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_context_set_math_mode");
    TU_OK(clt_context_get_math_mode(ctx, &m));
    ck_assert_int_eq(m, CLT_MATH_TF32);
    TU_EXPECT_STATUS(clt_context_get_math_mode(NULL, &m), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_STATUS(clt_context_set_math_mode(NULL, CLT_MATH_FP32), CLT_ERR_INVALID_ARGUMENT);
    char buf[8192];
    TU_OK(clt_context_describe_dispatch(ctx, buf, sizeof buf));
    TU_EXPECT_MESSAGE(buf, "math mode: tf32");
    TU_EXPECT_MESSAGE(buf, "tensor cores: ");
    tu_context_free(ctx);
    clt_context_options o;
    clt_context_options_init(&o);
    o.math = CLT_MATH_FP32; /* the option wins over the environment */
    ctx = tu_context_with(&o);
    TU_OK(clt_context_get_math_mode(ctx, &m));
    ck_assert_int_eq(m, CLT_MATH_FP32);
    clt_context_limits l;
    TU_OK(clt_context_get_limits(ctx, &l));
    ck_assert_int_eq(l.math, CLT_MATH_FP32);
    tu_context_free(ctx);
    clt_context *bad = NULL;
    setenv("CLT_MATH", "tf16", 1);
    TU_EXPECT_STATUS(clt_context_create(NULL, &bad), CLT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(bad);
    TU_EXPECT_MESSAGE(clt_last_error(NULL), "CLT_MATH");
    TU_EXPECT_MESSAGE(clt_last_error(NULL), "clt_context_create");
    setenv("CLT_MATH", "3xtf32", 1);
    o.math = (clt_math_mode)0;
    ctx = tu_context_with(&o);
    TU_OK(clt_context_get_math_mode(ctx, &m));
    ck_assert_int_eq(m, CLT_MATH_FP32_3XTF32);
    tu_context_free(ctx);
    o.math = (clt_math_mode)7;
    TU_EXPECT_STATUS(clt_context_create(&o, &bad), CLT_ERR_INVALID_ARGUMENT);
    tu_env_restore("CLT_MATH", saved);
    ck_assert_str_eq(clt_math_mode_name(CLT_MATH_FP32_3XTF32), "3xtf32");
    ck_assert_str_eq(clt_math_mode_name((clt_math_mode)42), "unknown");
}
END_TEST

/* Rejected dtype and mode combinations: the status, a message naming the call, C unchanged. */
START_TEST(bad_combinations)
{
    clt_context *ctx = tu_context();
    int64_t n = 16;
    clt_tensor *f32 = NULL, *f16 = NULL, *bf = NULL, *i32 = NULL, *c32 = NULL, *c16 = NULL, *cbf = NULL;
    TU_OK(clt_tensor_create(ctx, CLT_F32, 1, &n, &f32));
    TU_OK(clt_tensor_create(ctx, CLT_F16, 1, &n, &f16));
    TU_OK(clt_tensor_create(ctx, CLT_BF16, 1, &n, &bf));
    TU_OK(clt_tensor_create(ctx, CLT_I32, 1, &n, &i32));
    TU_OK(clt_tensor_create(ctx, CLT_F32, 1, &n, &c32));
    TU_OK(clt_tensor_create(ctx, CLT_F16, 1, &n, &c16));
    TU_OK(clt_tensor_create(ctx, CLT_BF16, 1, &n, &cbf));
    clt_tensor *fills[6] = {f32, f16, bf, c32, c16, cbf};
    for (int i = 0; i < 6; i++)
        TU_OK(clt_tensor_fill(fills[i], i < 3 ? 1.0 : 7.0));
    const struct {
        const clt_tensor *a, *b;
        clt_tensor *c;
        const char *what;
    } bad[] = {{f16, bf, c32, "bf16"}, {bf, f16, c32, "f16"},  {i32, i32, c32, "i32"},
               {f32, f32, c16, "f16"}, {f16, f16, cbf, "bf16"}, {bf, bf, c16, "f16"},
               {f32, f16, c32, "f16"}, {f16, f16, i32, "i32"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        TU_EXPECT_STATUS(clt_gemm(CLT_NO_TRANS, CLT_NO_TRANS, 4, 4, 4, 1.0f, bad[i].a, 0, 4, bad[i].b, 0,
                                  4, 0.0f, bad[i].c, 0, 4, NULL),
                         CLT_ERR_INVALID_DTYPE);
        TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_gemm:");
        TU_EXPECT_MESSAGE(clt_last_error(ctx), bad[i].what);
        TU_EXPECT_STATUS(clt_gemm_strided_batched(CLT_NO_TRANS, CLT_NO_TRANS, 2, 2, 2, 1.0f, bad[i].a, 0,
                                                  2, 4, bad[i].b, 0, 2, 4, 0.0f, bad[i].c, 0, 2, 4, 2,
                                                  NULL),
                         CLT_ERR_INVALID_DTYPE);
        TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_gemm_strided_batched");
        int64_t z = 0;
        TU_EXPECT_STATUS(clt_gemm_batched(CLT_NO_TRANS, CLT_NO_TRANS, 4, 4, 4, 1.0f, &bad[i].a, &z, 4,
                                          &bad[i].b, &z, 4, 0.0f, &bad[i].c, &z, 4, 1, NULL),
                         CLT_ERR_INVALID_DTYPE);
        TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_gemm_batched");
    }
    clt_tensor *m_a = NULL, *m_b = NULL, *m_c = NULL;
    int64_t s44[2] = {4, 4};
    TU_OK(clt_tensor_reshape(f16, 2, s44, &m_a));
    TU_OK(clt_tensor_reshape(bf, 2, s44, &m_b));
    TU_OK(clt_tensor_reshape(c32, 2, s44, &m_c));
    TU_EXPECT_STATUS(clt_matmul(m_a, m_b, m_c), CLT_ERR_INVALID_DTYPE);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_matmul");
    TU_EXPECT_STATUS(clt_matmul_math(m_a, m_a, m_c, (clt_math_mode)5), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_matmul_math");
    /* a bad mode in the epilogue; a 16-bit bias */
    clt_gemm_epilogue ep;
    clt_gemm_epilogue_init(&ep);
    ep.math = (clt_math_mode)-1;
    TU_EXPECT_STATUS(clt_gemm(CLT_NO_TRANS, CLT_NO_TRANS, 4, 4, 4, 1.0f, f16, 0, 4, f16, 0, 4, 0.0f, c32,
                              0, 4, &ep),
                     CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "math mode");
    clt_gemm_epilogue_init(&ep);
    ep.bias = f16;
    ep.bias_mode = CLT_BIAS_PER_ROW;
    int64_t four = 4;
    clt_tensor *b16 = NULL;
    TU_OK(clt_tensor_view(f16, 0, 1, &four, &b16));
    ep.bias = b16;
    TU_EXPECT_STATUS(clt_gemm(CLT_NO_TRANS, CLT_NO_TRANS, 4, 4, 4, 1.0f, f16, 0, 4, f16, 0, 4, 0.0f, c32,
                              0, 4, &ep),
                     CLT_ERR_INVALID_DTYPE);
    /* nothing was written */
    float back32[16];
    uint16_t back16[16];
    TU_OK(clt_tensor_read(c32, back32, sizeof back32));
    for (int i = 0; i < 16; i++)
        ck_assert_float_eq(back32[i], 7.0f);
    TU_OK(clt_tensor_read(c16, back16, sizeof back16));
    for (int i = 0; i < 16; i++)
        ck_assert_uint_eq(back16[i], 0x4700);
    TU_OK(clt_tensor_read(cbf, back16, sizeof back16));
    for (int i = 0; i < 16; i++)
        ck_assert_uint_eq(back16[i], 0x40E0);
    clt_tensor_free(b16), clt_tensor_free(m_a), clt_tensor_free(m_b), clt_tensor_free(m_c);
    clt_tensor_free(f32), clt_tensor_free(f16), clt_tensor_free(bf), clt_tensor_free(i32);
    clt_tensor_free(c32), clt_tensor_free(c16), clt_tensor_free(cbf);
    tu_context_free(ctx);
}
END_TEST

/* Whether the profile since the last reset ran the kernel `name`. */
static int ran_kernel(clt_context *ctx, const char *name)
{
    TU_OK(clt_profile_collect(ctx));
    clt_profile_entry rows[64];
    size_t count = 0;
    TU_OK(clt_profile_get(ctx, rows, 64, &count));
    int ran = 0;
    for (size_t r = 0; r < count && r < 64; r++)
        ran |= strcmp(rows[r].impl, name) == 0;
    return ran;
}

/* The wgmma kernel the configuration names: gemm_wgmma_bulk.cl by default, gemm_wgmma.cl for a
 * CLT_GEMM_WGMMA_CFG of its numbers ("wgs,mt,bk,stages,waitn"). */
static const char *wgmma_kernel(void)
{
    const char *cfg = getenv("CLT_GEMM_WGMMA_CFG");
    return cfg && cfg[0] >= '0' && cfg[0] <= '9' ? "gemm_wgmma" : "gemm_wgmma_bulk";
}

/* The sm_90a wgmma path at every size (CLT_GEMM_WGMMA=1; by default it takes only products of 2048^3 and
 * more): TF32 and 3xTF32 cases across its 128-row/column tiles and its 32-wide k padding, every transpose, epilogues
 * and batches. On an sm_90 device the profiler must name its kernel
 * (the switch really took the products there); elsewhere it must stay out of the way. */
START_TEST(wgmma_switch)
{
    char *saved = tu_env_save("CLT_GEMM_WGMMA");
    setenv("CLT_GEMM_WGMMA", "1", 1);
    clt_context *ctx = tu_profiled_context();
    int sm90 = clt__device_nv_sm(ctx) == 90;
    static const int64_t shapes[][4] = {{1, 1, 1, 1},     {129, 257, 33, 1}, {200, 131, 67, 3},
                                        {64, 128, 32, 2}, {300, 17, 200, 1}, {5, 300, 31, 1}};
    static const api calls[] = {API_GEMM, API_STRIDED, API_BATCHED, API_MATMUL};
    char label[160];
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int t = 0; t < 4; t++) {
            api call = shapes[s][3] > 1 ? calls[1 + (s + t) % 2] : t == 3 ? API_MATMUL : API_GEMM;
            int plain = call == API_MATMUL;
            mcase c = {CLT_F32, CLT_F32, CLT_MATH_TF32, plain ? VIA_CONTEXT : VIA_EPILOGUE, call,
                       plain ? 0 : t & 1, plain ? 0 : t >> 1, shapes[s][0], shapes[s][1], shapes[s][2],
                       shapes[s][3], plain ? 1.0f : s % 2 ? -0.75f : 1.25f, plain || t == 1 ? 0.0f : 0.5f,
                       !plain && s % 2, !plain && call != API_BATCHED && t == 2, !plain && s % 3 == 1 ? CLT_RELU : CLT_IDENTITY, 0, 0, 0};
            for (int split = 0; split < 2; split++) {
                /* 3xTF32 (the pack kernel's three segments) on wide exponents, cancelling once: the fp32
                 * bound, which plain TF32 breaks on such inputs (adversarial_3xtf32) */
                if (split) {
                    c.math = CLT_MATH_FP32_3XTF32;
                    c.wide = 1;
                    c.cancel = call == API_GEMM && !c.bias && !c.residual && c.act == CLT_IDENTITY;
                    if (c.cancel)
                        c.beta = 1.0f;
                }
                snprintf(label, sizeof label, "wgmma %s %lldx%lldx%lld batch %lld t%d call %d",
                         clt_math_mode_name(c.math), (long long)c.m, (long long)c.n, (long long)c.k,
                         (long long)c.batch, t, (int)call);
                TU_OK(clt_profile_reset(ctx));
                run_case(ctx, &c, label);
                int ran = ran_kernel(ctx, wgmma_kernel());
                ck_assert_msg(ran == sm90, "%s: the wgmma kernel %s", label, ran ? "ran off sm_90" : "did not run");
            }
        }
    tu_context_free(ctx);
    tu_env_restore("CLT_GEMM_WGMMA", saved);
}
END_TEST

/* f16 / bf16 operands on tensor cores at every size (CLT_GEMM_MMA_ALL=1): first mma.sync (CLT_GEMM_WGMMA=0,
 * operands aligned to 8 elements as its 16-byte copies need), then on sm_90 wgmma (CLT_GEMM_WGMMA=1,
 * unaligned operands: its packing takes any layout), f32 and 16-bit C, every transpose, epilogues,
 * batches, shapes across the 64/128 tiles and the 32/64-element k slices. The profiler must name the
 * kernel where the device has it (the switches really took the products), and no tensor-core kernel
 * elsewhere; other devices run the pairs their f16_bf16_operands test builds (one program each). */
START_TEST(tensor_cores_16bit)
{
    char *saved_all = tu_env_save("CLT_GEMM_MMA_ALL"), *saved_wgmma = tu_env_save("CLT_GEMM_WGMMA");
    setenv("CLT_GEMM_MMA_ALL", "1", 1);
    clt_context *ctx = tu_profiled_context();
    int cores = clt_device_has_tensor_cores(ctx), sm90 = clt__device_nv_sm(ctx) == 90;
    static const int64_t shapes[][4] = {{1, 1, 8, 1},    {129, 257, 40, 1}, {200, 131, 72, 3},
                                        {64, 128, 32, 2}, {17, 300, 200, 1}, {300, 5, 33, 1}};
    static const clt_dtype ins[] = {CLT_F16, CLT_BF16};
    static const api calls_batched[] = {API_STRIDED, API_BATCHED};
    char label[160];
    for (int path = 0; path < 2; path++) {
        if (path == 1 && !sm90)
            break;
        setenv("CLT_GEMM_WGMMA", path ? "1" : "0", 1);
        for (int d = 0; d < 2; d++)
            for (int o = 0; o < 2; o++) {
                clt_dtype out = o ? ins[d] : CLT_F32;
                if (!cores && !pair_selected(ctx, ins[d], out))
                    continue;
                for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
                    int t = (int)(s + (size_t)(2 * d + o)) % 4;
                    api call = shapes[s][3] > 1 ? calls_batched[(s + (size_t)o) % 2] : API_GEMM;
                    mcase c = {ins[d], out, modes[(s + (size_t)d) % 3], s % 2 ? VIA_EPILOGUE : VIA_CONTEXT, call,
                               t & 1, t >> 1, shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3],
                               s % 2 ? -0.75f : 1.25f, t == 1 ? 0.0f : 0.5f, s % 2, call == API_GEMM && t == 2,
                               /* one activation program per path (GPU builds are slow) */
                               d == 1 && o == 1 && s % 3 == 1 ? CLT_RELU : CLT_IDENTITY, 0, 0, path == 0};
                    snprintf(label, sizeof label, "%s %s->%s %lldx%lldx%lld batch %lld t%d call %d",
                             path ? "wgmma" : "mma.sync", clt_dtype_name(c.in), clt_dtype_name(c.out),
                             (long long)c.m, (long long)c.n, (long long)c.k, (long long)c.batch, t, (int)call);
                    char kernel[32]; /* mma.sync: one kernel per transpose pair */
                    snprintf(kernel, sizeof kernel, "%s", wgmma_kernel());
                    if (!path)
                        snprintf(kernel, sizeof kernel, "gemm_mma16_%c%c", c.ta ? 't' : 'n', c.tb ? 't' : 'n');
                    TU_OK(clt_profile_reset(ctx));
                    run_case(ctx, &c, label);
                    int ran = ran_kernel(ctx, kernel);
                    ck_assert_msg(ran == cores, "%s: the tensor-core kernel %s", label,
                                  ran ? "ran on a device without tensor cores" : "did not run");
                }
            }
    }
    tu_context_free(ctx);
    tu_env_restore("CLT_GEMM_MMA_ALL", saved_all);
    tu_env_restore("CLT_GEMM_WGMMA", saved_wgmma);
}
END_TEST

/* f32 operands on mma.sync (gemm_mma.cl) at every size (CLT_GEMM_MMA_ALL=1, CLT_GEMM_WGMMA=0) under its
 * automatic choice (64-row warp tiles) and forced shapes of 32-row warp tiles
 * (CLT_GEMM_MMA=wm,wn,stages,round,2: 2 x 2, 2 x 1, 1 x 4 warps), TF32 and 3xTF32, every transpose, epilogues,
 * batches, m across the 32/64-row tiles. The profiler must name the kernel where the device has tensor
 * cores; elsewhere the same calls run the fp32 kernels within the same bounds. */
START_TEST(tensor_cores_f32)
{
    char *saved_all = tu_env_save("CLT_GEMM_MMA_ALL"), *saved_wgmma = tu_env_save("CLT_GEMM_WGMMA"),
         *saved_cfg = tu_env_save("CLT_GEMM_MMA");
    setenv("CLT_GEMM_MMA_ALL", "1", 1);
    setenv("CLT_GEMM_WGMMA", "0", 1);
    clt_context *ctx = tu_profiled_context();
    const int cores = clt_device_has_tensor_cores(ctx);
    static const char *const cfgs[] = {NULL, "2,2,3", "2,1,4", "1,4,2"};
    static const int64_t shapes[][4] = {{64, 200, 48, 3}, {33, 130, 17, 1}, {1, 70, 40, 1}, {65, 129, 31, 2}};
    char label[160], cfg[32];
    for (size_t f = 0; f < sizeof cfgs / sizeof cfgs[0]; f++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            const int t = (int)(s + f) % 4;
            const clt_math_mode mode = (s + f) % 2 ? CLT_MATH_FP32_3XTF32 : CLT_MATH_TF32;
            if (cfgs[f]) {
                snprintf(cfg, sizeof cfg, "%s,%d,2", cfgs[f], mode == CLT_MATH_TF32 ? 4 : 5);
                setenv("CLT_GEMM_MMA", cfg, 1);
            } else {
                unsetenv("CLT_GEMM_MMA");
            }
            const api call = shapes[s][3] > 1 ? (f % 2 ? API_STRIDED : API_BATCHED) : API_GEMM;
            mcase c = {CLT_F32, CLT_F32, mode, s % 2 ? VIA_EPILOGUE : VIA_CONTEXT, call, t & 1, t >> 1,
                       shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3], s % 2 ? -0.75f : 1.25f,
                       t == 1 ? 0.0f : 0.5f, s % 2, call == API_GEMM && t == 2,
                       f == 1 && s == 1 ? CLT_RELU : CLT_IDENTITY, 0, 0, 0};
            snprintf(label, sizeof label, "mma.sync f32 %s (CLT_GEMM_MMA %s) %lldx%lldx%lld batch %lld t%d call %d",
                     clt_math_mode_name(mode), cfgs[f] ? cfg : "unset", (long long)c.m, (long long)c.n,
                     (long long)c.k, (long long)c.batch, t, (int)call);
            char kernel[32];
            snprintf(kernel, sizeof kernel, "gemm_mma_%c%c", c.ta ? 't' : 'n', c.tb ? 't' : 'n');
            TU_OK(clt_profile_reset(ctx));
            run_case(ctx, &c, label);
            const int ran = ran_kernel(ctx, kernel);
            ck_assert_msg(ran == cores, "%s: the tensor-core kernel %s", label,
                          ran ? "ran on a device without tensor cores" : "did not run");
        }
    tu_context_free(ctx);
    tu_env_restore("CLT_GEMM_MMA_ALL", saved_all);
    tu_env_restore("CLT_GEMM_WGMMA", saved_wgmma);
    tu_env_restore("CLT_GEMM_MMA", saved_cfg);
}
END_TEST

Suite *gemm_math_suite(void)
{
    Suite *s = suite_create("gemm_math");
    const struct {
        const char *name;
        const TTest *test;
    } cases[] = {{"f32_every_mode", f32_every_mode},       {"f16_bf16_operands", f16_bf16_operands},
                 {"adversarial_3xtf32", adversarial_3xtf32}, {"fallback", fallback_is_fp32_and_named},
                 {"mode_settings", mode_settings},         {"bad_combinations", bad_combinations},
                 {"wgmma_switch", wgmma_switch},           {"tensor_cores_16bit", tensor_cores_16bit},
                 {"tensor_cores_f32", tensor_cores_f32}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        TCase *tc = tcase_create(cases[i].name);
        tcase_set_timeout(tc, 300);
        tcase_add_test(tc, cases[i].test);
        suite_add_tcase(s, tc);
    }
    return s;
}
