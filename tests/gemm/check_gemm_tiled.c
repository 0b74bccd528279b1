/* Our GEMM kernels (clt__gemm_tiled, every variant forced through CLT_GEMM_VARIANT, and the automatic
 * choice) against the double reference of ref/gemm_tiled_ref.c: all four transposes, awkward m/n/k
 * (1, primes, non-multiples of every tile), leading dimensions wider than the rows, element offsets
 * (aligned and not), strided batches (stride 0 included), alpha/beta (beta = 0 over NaN), k = 0, long
 * K, each epilogue part, and the error path of an activation that cannot be fused. Elements of C
 * outside the matrices (padding, gaps between batches) must keep their bytes. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/gemm/gemm.h"
#include "ref/gemm_tiled_ref.h"
#include "tensor/tensor.h"
#include "ops/gemm/gemm_params.h"
#include "util/ew_util.h"
#include "util/test_util.h"

/* Tolerances: |got - want| <= GEMM_RTOL * |want| + GEMM_ATOL * scale, scale from gemm_ref_run
 * (sum of |terms|): f32 accumulation of up to 4096 products in any order stays well inside
 * 3e-5 of it on random data; RTOL covers the few-ulp activations. Elements outside the matrices
 * must be bit-identical (scale 0). */
#define GEMM_RTOL 1e-5
#define GEMM_ATOL 3e-5

typedef struct gcase {
    int ta, tb;
    int64_t m, n, k, batch;
    float alpha, beta;
    int64_t off_a, off_b, off_c; /* element offsets */
    int64_t pad;                 /* every ld = row length + pad */
    int share_a, share_b;        /* batch stride 0 */
    clt_bias_mode bias;
    clt_unary_op act;
    int residual;
    int nan_c; /* C starts as NaN everywhere (use with beta = 0) */
} gcase;

static gcase mk(int ta, int tb, int64_t m, int64_t n, int64_t k, int64_t batch, float alpha,
                float beta)
{
    gcase g;
    memset(&g, 0, sizeof g);
    g.ta = ta, g.tb = tb, g.m = m, g.n = n, g.k = k, g.batch = batch, g.alpha = alpha, g.beta = beta;
    return g;
}

static clt_tensor *upload(clt_context *ctx, const float *x, int64_t n)
{
    clt_tensor *t = NULL;
    int64_t shape[1] = {n};
    TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, 1, shape, x, (size_t)n * sizeof(float), &t));
    return t;
}

static uint64_t elem_off(const clt_tensor *t) { return t->offset / sizeof(float); }

/* Run one case through clt__gemm_tiled and check all of C's buffer. */
static void run_case(clt_context *ctx, const gcase *g, const char *label)
{
    int64_t ar = g->ta ? g->k : g->m, ac = g->ta ? g->m : g->k;
    int64_t br = g->tb ? g->n : g->k, bc = g->tb ? g->k : g->n;
    int64_t lda = ac + g->pad, ldb = bc + g->pad, ldc = g->n + g->pad, ldr = g->n + 2 * g->pad + 1;
    int64_t span_a = ar ? (ar - 1) * lda + ac : 0, span_b = br ? (br - 1) * ldb + bc : 0;
    int64_t span_c = (g->m - 1) * ldc + g->n, span_r = (g->m - 1) * ldr + g->n;
    int64_t sa = g->share_a ? 0 : span_a + 3, sb = g->share_b ? 0 : span_b + 5, scs = span_r + 2;
    if (span_c + 1 > scs)
        scs = span_c + 1;
    int64_t na = g->off_a + (g->batch - 1) * sa + span_a + 1, nb = g->off_b + (g->batch - 1) * sb + span_b + 1;
    int64_t nc = g->off_c + (g->batch - 1) * scs + span_c + 2, nr = g->off_c + (g->batch - 1) * scs + span_r + 1;
    int64_t nbias = (g->bias == CLT_BIAS_PER_ROW ? g->m : g->n) + 2;

    float *ha = ew_random(na, -1, 1), *hb = ew_random(nb, -1, 1), *hc = ew_random(nc, -2, 2);
    float *hbias = ew_random(nbias, -1, 1), *hr = ew_random(nr, -1, 1);
    if (g->nan_c)
        for (int64_t i = 0; i < nc; i++)
            hc[i] = NAN;
    clt_tensor *ta = upload(ctx, ha, na), *tb = upload(ctx, hb, nb), *tc = upload(ctx, hc, nc);
    clt_tensor *tbias = upload(ctx, hbias, nbias), *tr = upload(ctx, hr, nr);

    clt__gemm_problem p = {0};
    p.ta = g->ta ? CLT_TRANS : CLT_NO_TRANS;
    p.tb = g->tb ? CLT_TRANS : CLT_NO_TRANS;
    p.m = g->m, p.n = g->n, p.k = g->k, p.alpha = g->alpha, p.beta = g->beta;
    p.a = ta->storage->mem, p.a_off = elem_off(ta) + (uint64_t)g->off_a, p.lda = lda;
    p.b = tb->storage->mem, p.b_off = elem_off(tb) + (uint64_t)g->off_b, p.ldb = ldb;
    p.c = tc->storage->mem, p.c_off = elem_off(tc) + (uint64_t)g->off_c, p.ldc = ldc;
    p.batch = g->batch;
    p.a_stride = g->batch > 1 ? sa : 0, p.b_stride = g->batch > 1 ? sb : 0;
    p.c_stride = g->batch > 1 ? scs : 0;
    if (g->bias != CLT_BIAS_NONE)
        p.bias = tbias->storage->mem, p.bias_off = elem_off(tbias) + 1, p.bias_mode = g->bias;
    p.act = g->act, p.act_alpha = 0.1f;
    if (g->residual)
        p.residual = tr->storage->mem, p.residual_off = elem_off(tr) + (uint64_t)g->off_c, p.ldr = ldr;
    TU_OK(clt__gemm_tiled(ctx, &p, "gemm_tiled_test"));

    gemm_ref_args r = {g->ta, g->tb, g->m, g->n, g->k, g->batch, g->alpha, g->beta,
                       ha, g->off_a, lda, p.a_stride, hb, g->off_b, ldb, p.b_stride,
                       hc, g->off_c, ldc, p.c_stride, g->bias ? hbias : NULL, 1, g->bias,
                       g->act, 0.1, g->residual ? hr : NULL, g->off_c, ldr};
    int64_t cnt = g->batch * g->m * g->n;
    double *want = malloc((size_t)cnt * sizeof(double)), *scale = malloc((size_t)cnt * sizeof(double));
    double *full = malloc((size_t)nc * sizeof(double)), *fscale = calloc((size_t)nc, sizeof(double));
    ck_assert(want && scale && full && fscale);
    gemm_ref_run(&r, want, scale);
    for (int64_t i = 0; i < nc; i++)
        full[i] = hc[i];
    for (int64_t bt = 0; bt < g->batch; bt++)
        for (int64_t i = 0; i < g->m; i++)
            for (int64_t j = 0; j < g->n; j++) {
                int64_t at = g->off_c + bt * p.c_stride + i * ldc + j, o = (bt * g->m + i) * g->n + j;
                full[at] = want[o];
                fscale[at] = scale[o];
            }
    float *got = ew_read(tc);
    char what[256];
    snprintf(what, sizeof what, "%s %c%c m=%lld n=%lld k=%lld batch=%lld (profile %s, variant %s)", label,
             g->ta ? 'T' : 'N', g->tb ? 'T' : 'N', (long long)g->m, (long long)g->n, (long long)g->k,
             (long long)g->batch, ctx->limits.profile,
             getenv("CLT_GEMM_VARIANT") ? getenv("CLT_GEMM_VARIANT") : "auto");
    ew_check_close(what, got, full, fscale, nc, GEMM_RTOL, GEMM_ATOL);
    free(got), free(want), free(scale), free(full), free(fscale);
    free(ha), free(hb), free(hc), free(hbias), free(hr);
    clt_tensor_free(ta), clt_tensor_free(tb), clt_tensor_free(tc), clt_tensor_free(tbias),
        clt_tensor_free(tr);
}

/* Set CLT_GEMM_VARIANT to v (NULL: automatic); returns the saved value for tu_env_restore. */
static char *force_variant(const char *v)
{
    char *saved = tu_env_save("CLT_GEMM_VARIANT");
    if (v)
        setenv("CLT_GEMM_VARIANT", v, 1);
    else
        unsetenv("CLT_GEMM_VARIANT");
    return saved;
}

static const int64_t shapes[][3] = {
    {1, 1, 1},   {2, 3, 7},     {7, 17, 1},   {17, 31, 65},  {64, 64, 64},
    {65, 127, 129}, {129, 65, 31}, {3, 1000, 17}, {1000, 7, 31}, {1, 129, 64}, {127, 1, 65},
};
#define N_SHAPES (sizeof shapes / sizeof shapes[0])

/* Every shape x every transpose, with padding, offsets, alpha and beta, through `variant`. */
static void shapes_through(const char *variant)
{
    char *saved = force_variant(variant);
    clt_context *ctx = tu_context();
    for (size_t s = 0; s < N_SHAPES; s++)
        for (int t = 0; t < 4; t++) {
            gcase g = mk(t >> 1, t & 1, shapes[s][0], shapes[s][1], shapes[s][2], 1, 1.5f, -0.5f);
            g.off_a = (int64_t)(s % 3), g.off_b = (int64_t)(s % 2) * 4, g.off_c = (int64_t)(s % 4);
            g.pad = (int64_t)(s % 3) * 3;
            run_case(ctx, &g, "shapes");
        }
    tu_context_free(ctx);
    tu_env_restore("CLT_GEMM_VARIANT", saved);
}

START_TEST(test_shapes_auto) { shapes_through(NULL); }
END_TEST
START_TEST(test_shapes_tiled) { shapes_through("tiled"); }
END_TEST
START_TEST(test_shapes_cpu) { shapes_through("cpu"); }
END_TEST
START_TEST(test_shapes_small) { shapes_through("small"); }
END_TEST
START_TEST(test_shapes_gemv) { shapes_through("gemv"); }
END_TEST

/* Every tiled configuration of the table (smaller ones are the fallbacks). */
START_TEST(test_tiled_configs)
{
    char *saved = tu_env_save("CLT_GEMM_VARIANT");
    clt_context *ctx = tu_context();
    for (int c = 0; c < clt__gemm_table_for(ctx)->n_tiled; c++) {
        char v[24];
        snprintf(v, sizeof v, "tiled:%d", c);
        setenv("CLT_GEMM_VARIANT", v, 1);
        for (int t = 0; t < 4; t++) {
            gcase g = mk(t >> 1, t & 1, 131, 133, 47, 2, 1.0f, 0.25f);
            g.pad = 4, g.bias = CLT_BIAS_PER_COLUMN, g.residual = 1;
            run_case(ctx, &g, "config");
        }
    }
    tu_context_free(ctx);
    tu_env_restore("CLT_GEMM_VARIANT", saved);
}
END_TEST

/* Split K forced on the configs automatic dispatch splits (all but the largest): pieces that do and
 * do not divide the k slices (the last piece short), batches, beta = 0 over NaN, bias + residual,
 * and the same context reused so that every tile counter must have been reset by the previous
 * launch. One activation case only: each (config, activation) pair is a kernel build, and builds of
 * the GPU kernel are slow on POCL. */
START_TEST(test_split_k)
{
    char *saved = tu_env_save("CLT_GEMM_VARIANT");
    clt_context *ctx = tu_context();
    const int pieces[] = {2, 3, 7};
    int n_tiled = clt__gemm_table_for(ctx)->n_tiled;
    for (int c = n_tiled > 1 ? 1 : 0; c < n_tiled; c++)
        for (int q = 0; q < 3; q++) {
            char v[32];
            snprintf(v, sizeof v, "tiled:%d:%d", c, pieces[q]);
            setenv("CLT_GEMM_VARIANT", v, 1);
            int t = (c + q) % 4;
            gcase g = mk(t >> 1, t & 1, 37 + 31 * q, 70 - 9 * q, 200 + 61 * q, 1 + q % 2, 1.25f,
                         q == 1 ? 0.0f : 0.5f);
            g.nan_c = q == 1, g.pad = q, g.off_c = q;
            g.bias = q == 2 ? CLT_BIAS_PER_ROW : CLT_BIAS_PER_COLUMN, g.residual = q != 1;
            g.act = q == 0 && c == n_tiled - 1 ? CLT_TANH : CLT_IDENTITY;
            run_case(ctx, &g, "split k");
            run_case(ctx, &g, "split k again");
        }
    /* More pieces than k slices: the host trims them to slices that exist. */
    char v[32];
    snprintf(v, sizeof v, "tiled:%d:64", n_tiled - 1);
    setenv("CLT_GEMM_VARIANT", v, 1);
    gcase few = mk(0, 0, 5, 9, 40, 1, 1.0f, 0.0f);
    run_case(ctx, &few, "split k, k short");
    tu_context_free(ctx);
    tu_env_restore("CLT_GEMM_VARIANT", saved);
}
END_TEST

/* The warp layouts of gemm_tiled.cl (TXW: 8 x 4 and 4 x 8 blocks of items per 32-wide warp, the
 * NVIDIA table's warp_cols) on a 16 x 16-item config forced onto whatever table the device has,
 * plain and split, every transpose, edges, bias and residual. */
START_TEST(test_warp_layouts)
{
    const char *names[] = {"CLT_GEMM_VARIANT", "CLT_GEMM_EXPERIMENT_CFG", "CLT_GEMM_KERNEL_OPTS"};
    char *saved[3];
    for (int i = 0; i < 3; i++)
        saved[i] = tu_env_save(names[i]);
    setenv("CLT_GEMM_EXPERIMENT_CFG", "64,64,16,16,16,4,1", 1);
    clt_context *ctx = tu_context();
    const struct { const char *opts, *variant; } runs[] = {{"-DTXW=8", "tiled:0"}, {"-DTXW=4", "tiled:0:3"}};
    for (int r = 0; r < 2; r++) {
        setenv("CLT_GEMM_KERNEL_OPTS", runs[r].opts, 1);
        setenv("CLT_GEMM_VARIANT", runs[r].variant, 1);
        for (int t = 0; t < 4; t++) {
            gcase g = mk(t >> 1, t & 1, 131, 77, 150, 1 + r, 1.0f, 0.5f);
            g.pad = 3, g.off_c = 1, g.bias = CLT_BIAS_PER_COLUMN, g.residual = 1;
            run_case(ctx, &g, runs[r].opts);
        }
    }
    tu_context_free(ctx);
    for (int i = 0; i < 3; i++)
        tu_env_restore(names[i], saved[i]);
}
END_TEST

static const char *variants[] = {"tiled", "cpu", "small", "gemv", NULL};
#define N_VARIANTS 5

/* beta = 0 over a C full of NaN: C is written, never read; aligned and unaligned C. */
START_TEST(test_beta_zero_nan)
{
    const char *v = variants[_i];
    char *saved = force_variant(v);
    clt_context *ctx = tu_context();
    for (int t = 0; t < 4; t++) {
        gcase g = mk(t >> 1, t & 1, 67, 45, 33, 2, 0.75f, 0.0f);
        g.nan_c = 1, g.off_c = t, g.pad = t;
        run_case(ctx, &g, "beta0");
    }
    tu_context_free(ctx);
    tu_env_restore("CLT_GEMM_VARIANT", saved);
}
END_TEST

/* Each epilogue part, per variant: bias per column, per row, residual, one activation; then every
 * activation once through the automatic choice. */
START_TEST(test_epilogue)
{
    const char *v = variants[_i];
    char *saved = force_variant(v);
    clt_context *ctx = tu_context();
    const clt_bias_mode modes[3] = {CLT_BIAS_PER_COLUMN, CLT_BIAS_PER_ROW, CLT_BIAS_NONE};
    for (int b = 0; b < 3; b++)
        for (int res = 0; res < 2; res++) {
            gcase g = mk(b & 1, res, 33, 70, 19, 2, 1.25f, b == 1 ? 0.0f : 0.5f);
            g.bias = modes[b], g.residual = res, g.act = CLT_GELU_ERF, g.pad = 1 + b;
            g.off_c = 4 * res;
            run_case(ctx, &g, "epilogue");
        }
    if (!v) {
        const clt_unary_op acts[] = {CLT_IDENTITY, CLT_RELU, CLT_GELU_ERF, CLT_GELU_TANH,
                                     CLT_TANH,     CLT_SIGMOID, CLT_SILU};
        for (size_t a = 0; a < sizeof acts / sizeof acts[0]; a++) {
            gcase g = mk(0, 0, 40, 72, 24, 1, 1.0f, 1.0f);
            g.act = acts[a], g.bias = CLT_BIAS_PER_COLUMN, g.residual = 1;
            run_case(ctx, &g, "activation");
        }
    }
    tu_context_free(ctx);
    tu_env_restore("CLT_GEMM_VARIANT", saved);
}
END_TEST

/* Strided batches with a shared (stride 0) A or B, k = 0, and long K. */
START_TEST(test_batches_and_k)
{
    const char *v = variants[_i];
    char *saved = force_variant(v);
    clt_context *ctx = tu_context();
    for (int share = 0; share < 3; share++) {
        gcase g = mk(share == 1, share == 2, 29, 37, 41, 3, 1.0f, 0.5f);
        g.share_a = share == 1, g.share_b = share == 2, g.residual = 1, g.pad = 2;
        run_case(ctx, &g, "batch");
    }
    gcase k0 = mk(0, 1, 17, 33, 0, 2, 2.0f, 0.5f);
    k0.bias = CLT_BIAS_PER_ROW, k0.act = CLT_RELU, k0.residual = 1;
    run_case(ctx, &k0, "k=0");
    gcase longk = mk(1, 0, 65, 33, 4096, 1, 1.0f, 0.0f);
    longk.pad = 1;
    run_case(ctx, &longk, "long k");
    gcase longk2 = mk(0, 1, 3, 129, 4096, 1, 0.5f, 1.0f);
    run_case(ctx, &longk2, "long k");
    tu_context_free(ctx);
    tu_env_restore("CLT_GEMM_VARIANT", saved);
}
END_TEST

/* An activation the epilogue cannot fuse: CLT_ERR_UNSUPPORTED naming the call, C untouched. */
START_TEST(test_unsupported_activation)
{
    clt_context *ctx = tu_context();
    float h[16] = {0};
    clt_tensor *a = upload(ctx, h, 16), *c = upload(ctx, h, 16);
    clt__gemm_problem p = {0};
    p.m = p.n = p.k = 4, p.lda = p.ldb = p.ldc = 4, p.batch = 1, p.alpha = 1.0f;
    p.a = p.b = a->storage->mem, p.c = c->storage->mem, p.c_off = elem_off(c);
    p.a_off = p.b_off = elem_off(a);
    p.act = CLT_EXP;
    float *before = ew_read(c);
    ew_expect_error("clt__gemm_tiled(EXP)", clt__gemm_tiled(ctx, &p, "gemm_tiled_test"),
                    CLT_ERR_UNSUPPORTED, ctx, "gemm_tiled_test", c, before);
    p.act = CLT_IDENTITY, p.m = 0;
    TU_OK(clt__gemm_tiled(ctx, &p, "gemm_tiled_test")); /* empty: nothing to do */
    free(before);
    clt_tensor_free(a), clt_tensor_free(c);
    tu_context_free(ctx);
}
END_TEST

Suite *gemm_tiled_suite(void)
{
    Suite *s = suite_create("gemm_tiled");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, test_shapes_auto);
    tcase_add_test(tc, test_shapes_tiled);
    tcase_add_test(tc, test_shapes_cpu);
    tcase_add_test(tc, test_shapes_small);
    tcase_add_test(tc, test_shapes_gemv);
    tcase_add_test(tc, test_tiled_configs);
    tcase_add_test(tc, test_split_k);
    tcase_add_test(tc, test_warp_layouts);
    tcase_add_loop_test(tc, test_beta_zero_nan, 0, N_VARIANTS);
    tcase_add_loop_test(tc, test_epilogue, 0, N_VARIANTS);
    tcase_add_loop_test(tc, test_batches_and_k, 0, N_VARIANTS);
    tcase_add_test(tc, test_unsupported_activation);
    suite_add_tcase(s, tc);
    return s;
}
