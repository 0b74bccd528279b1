/* clt_attention_forward / clt_attention_backward against the double reference of
 * ref/attention_ref.c: every head dim, sequence lengths of 1, primes and non-multiples of every
 * tile, seq_q != seq_k, causal, key lengths (0, partial, out of range), empty batch and empty
 * sequences, tensors at unaligned buffer offsets, explicit and default scale; gradients against the
 * reference's analytic gradients; a second run bit-identical (determinism); every documented
 * error path with nothing enqueued. Every reference case runs on both implementations (row and
 * micro-tiled kernels), and the micro-tiled ones have shapes of their own. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref/attention_ref.h"
#include "util/test_util.h"

/* Tolerances (f32): |got - want| <= RTOL * scale + ATOL, scale from the reference: the same
 * formula in absolute values (so cancellation does not make the bound vanish). Float dot products
 * of up to 128 terms, exp2 of scores up to ~10 (a few ulp, relative), and sums over up to ~100
 * keys give errors a few times 1e-6 of that scale. lse: the error of the scores, ~1e-6 of
 * |lse| + 1. */
#define OUT_RTOL 2e-5
#define GRAD_RTOL 5e-5
#define ATOL 1e-7
#define LSE_TOL 2e-5
#define POISON -777.25f

typedef struct att_case {
    int64_t b, h, sq, sk, d;
    int causal;
    float scale;           /* 0: the default 1/sqrt(d) */
    int n_len;             /* key lengths given (== b), or 0 */
    int32_t lens[3];
    int64_t view_offset;   /* > 0: every tensor a view at this element offset of a larger buffer */
} att_case;

/* Head dim 64 runs only on unaligned views (the vload4 path), 32 and 128 only aligned (float4
 * pointers): one program per head dim keeps the cold compile time down (POCL compiles each for
 * seconds), and the GPT model test shares the d32 one. */
static const att_case cases[] = {
    {1, 1, 1, 1, 32, 0, 0.0f, 0, {0}, 0},
    {2, 3, 17, 17, 64, 1, 0.0f, 0, {0}, 2},
    {1, 2, 37, 23, 128, 0, 0.3f, 0, {0}, 0},
    {1, 1, 23, 37, 128, 1, 0.0f, 0, {0}, 4},
    {3, 1, 5, 70, 32, 0, 0.0f, 3, {3, 0, 1000}, 0},
    {2, 2, 67, 67, 64, 1, 0.0f, 2, {50, -4}, 1},
    {1, 2, 41, 29, 32, 1, -0.5f, 1, {19}, 8},
    {2, 1, 131, 97, 64, 0, 0.0f, 0, {0}, 3},
};
#define N_CASES (sizeof cases / sizeof cases[0])

static clt_context *g_ctx;

static void setup(void) { g_ctx = tu_context(); }
static void teardown(void)
{
    tu_context_free(g_ctx);
    g_ctx = NULL;
}

static size_t count4(int64_t a, int64_t b, int64_t c, int64_t d) { return (size_t)(a * b * c * d); }

/* A tensor of `shape` holding data (or POISON), either alone or as a view at off elements into a
 * larger buffer; *base receives the buffer to free (or NULL). */
static clt_tensor *make(int ndim, const int64_t *shape, const float *data, int64_t off,
                        clt_tensor **base)
{
    size_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= (size_t)shape[i];
    float *fill = malloc((n ? n : 1) * sizeof(float));
    ck_assert_ptr_nonnull(fill);
    for (size_t i = 0; i < n; i++)
        fill[i] = data ? data[i] : POISON;
    clt_tensor *t = NULL;
    *base = NULL;
    if (off > 0) {
        int64_t total = (int64_t)n + off + 5;
        TU_OK(clt_tensor_create(g_ctx, CLT_F32, 1, &total, base));
        TU_OK(clt_tensor_fill(*base, 0.0));
        TU_OK(clt_tensor_view(*base, off, ndim, shape, &t));
    } else
        TU_OK(clt_tensor_create(g_ctx, CLT_F32, ndim, shape, &t));
    if (n)
        TU_OK(clt_tensor_write(t, fill, n * sizeof(float)));
    free(fill);
    return t;
}

static float *read_back(const clt_tensor *t)
{
    size_t nb = clt_tensor_nbytes(t);
    float *h = malloc(nb ? nb : 4);
    ck_assert_ptr_nonnull(h);
    if (nb)
        TU_OK(clt_tensor_read(t, h, nb));
    return h;
}

static void expect_close(const char *what, const att_case *c, const float *got, const double *want,
                         const double *scale, size_t n, double rtol)
{
    for (size_t i = 0; i < n; i++) {
        double allowed = rtol * scale[i] + ATOL;
        ck_assert_msg(fabs(got[i] - want[i]) <= allowed,
                      "%s (b%lld h%lld sq%lld sk%lld d%lld causal %d): element %zu = %.9g, "
                      "expected %.9g (allowed %.3g)",
                      what, (long long)c->b, (long long)c->h, (long long)c->sq, (long long)c->sk,
                      (long long)c->d, c->causal, i, got[i], want[i], allowed);
    }
}

static void run_case(const att_case *c)
{
    size_t nq = count4(c->b, c->h, c->sq, c->d), nk = count4(c->b, c->h, c->sk, c->d);
    size_t nl = (size_t)(c->b * c->h * c->sq);
    float *q = malloc((nq + 1) * 4), *k = malloc((nk + 1) * 4), *v = malloc((nk + 1) * 4);
    float *g = malloc((nq + 1) * 4);
    ck_assert(q && k && v && g);
    tu_random_f32(q, nq, -1.0f, 1.0f);
    tu_random_f32(k, nk, -1.0f, 1.0f);
    tu_random_f32(v, nk, -1.0f, 1.0f);
    tu_random_f32(g, nq, -1.0f, 1.0f);
    const int64_t qs[4] = {c->b, c->h, c->sq, c->d}, ks[4] = {c->b, c->h, c->sk, c->d};
    const int64_t ls[3] = {c->b, c->h, c->sq};
    clt_tensor *bases[10];
    clt_tensor *tq = make(4, qs, q, c->view_offset, &bases[0]);
    clt_tensor *tk = make(4, ks, k, c->view_offset, &bases[1]);
    clt_tensor *tv = make(4, ks, v, c->view_offset, &bases[2]);
    clt_tensor *tg = make(4, qs, g, c->view_offset, &bases[3]);
    clt_tensor *to = make(4, qs, NULL, c->view_offset, &bases[4]);
    clt_tensor *tl = make(3, ls, NULL, c->view_offset, &bases[5]);
    clt_tensor *tdq = make(4, qs, NULL, c->view_offset, &bases[6]);
    clt_tensor *tdk = make(4, ks, NULL, c->view_offset, &bases[7]);
    clt_tensor *tdv = make(4, ks, NULL, c->view_offset, &bases[8]);
    bases[9] = NULL;
    clt_attention_options opts = clt_attention_options_default();
    opts.scale = c->scale;
    opts.causal = c->causal;
    clt_tensor *tlen = NULL;
    if (c->n_len) {
        int64_t nb = c->b;
        TU_OK(clt_tensor_create_from_host(g_ctx, CLT_I32, 1, &nb, c->lens, sizeof(int32_t) * nb,
                                          &tlen));
        opts.key_lengths = tlen;
    }
    TU_OK(clt_attention_forward(tq, tk, tv, &opts, to, tl));
    TU_OK(clt_attention_backward(tq, tk, tv, to, tl, tg, &opts, tdq, tdk, tdv));

    ref_attention_shape rs = {(size_t)c->b, (size_t)c->h, (size_t)c->sq, (size_t)c->sk,
                              (size_t)c->d,
                              c->scale != 0.0f ? c->scale : 1.0 / sqrt((double)c->d),
                              c->causal, c->n_len ? c->lens : NULL};
    double *out = malloc((nq + 1) * 8), *out_s = malloc((nq + 1) * 8), *lse = malloc((nl + 1) * 8);
    double *dq = malloc((nq + 1) * 8), *dqs = malloc((nq + 1) * 8);
    double *dk = malloc((nk + 1) * 8), *dks = malloc((nk + 1) * 8);
    double *dv = malloc((nk + 1) * 8), *dvs = malloc((nk + 1) * 8);
    ck_assert(out && out_s && lse && dq && dqs && dk && dks && dv && dvs);
    ref_attention_forward(&rs, q, k, v, out, lse, out_s);
    ref_attention_backward(&rs, q, k, v, g, dq, dk, dv, dqs, dks, dvs);

    float *got = read_back(to);
    expect_close("out", c, got, out, out_s, nq, OUT_RTOL);
    free(got);
    got = read_back(tl);
    for (size_t i = 0; i < nl; i++) {
        if (isinf(lse[i])) {
            ck_assert_msg(isinf(got[i]) && got[i] < 0, "lse %zu = %g, expected -inf", i, got[i]);
            continue;
        }
        ck_assert_msg(fabs(got[i] - lse[i]) <= LSE_TOL * (1.0 + fabs(lse[i])),
                      "lse %zu = %.9g, expected %.9g", i, got[i], lse[i]);
    }
    free(got);
    got = read_back(tdq);
    expect_close("dq", c, got, dq, dqs, nq, GRAD_RTOL);
    free(got);
    got = read_back(tdk);
    expect_close("dk", c, got, dk, dks, nk, GRAD_RTOL);
    free(got);
    got = read_back(tdv);
    expect_close("dv", c, got, dv, dvs, nk, GRAD_RTOL);
    free(got);

    /* Fixed-order sums, no atomics: a second run gives the same bits. */
    clt_tensor *outs[5] = {to, tl, tdq, tdk, tdv};
    float *first[5];
    for (int i = 0; i < 5; i++)
        first[i] = read_back(outs[i]);
    TU_OK(clt_attention_forward(tq, tk, tv, &opts, to, tl));
    TU_OK(clt_attention_backward(tq, tk, tv, to, tl, tg, &opts, tdq, tdk, tdv));
    for (int i = 0; i < 5; i++) {
        got = read_back(outs[i]);
        ck_assert_msg(memcmp(got, first[i], clt_tensor_nbytes(outs[i])) == 0,
                      "output %d differs between two identical runs", i);
        free(got);
        free(first[i]);
    }

    clt_tensor *all[] = {tq, tk, tv, tg, to, tl, tdq, tdk, tdv, tlen};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        clt_tensor_free(all[i]);
    for (int i = 0; i < 10; i++)
        clt_tensor_free(bases[i]);
    free(q), free(k), free(v), free(g);
    free(out), free(out_s), free(lse), free(dq), free(dqs), free(dk), free(dks), free(dv), free(dvs);
}

/* Runs a case with CLT_ATTENTION_IMPL set to impl (rows: attention.cl, tiled: attention_tiled.cl),
 * then puts the variable back as it was. */
static void run_case_impl(const att_case *c, const char *impl)
{
    char *saved = tu_env_save("CLT_ATTENTION_IMPL");
    ck_assert(setenv("CLT_ATTENTION_IMPL", impl, 1) == 0);
    run_case(c);
    tu_env_restore("CLT_ATTENTION_IMPL", saved);
}

/* The micro-tiled kernels' own awkward shapes (their tiles are 16..64 rows, 4 rows and 4 keys per
 * item): single rows and keys, lengths below, between and just past tiles, Sq != Sk both ways with
 * causal (keys j > i hidden, whatever the lengths), partial and zero key lengths, unaligned views. */
static const att_case tiled_cases[] = {
    {1, 1, 7, 129, 64, 1, 0.0f, 0, {0}, 1},
    {1, 2, 129, 7, 32, 1, 0.0f, 0, {0}, 0},
    {2, 1, 37, 1, 128, 0, 0.0f, 2, {1, 0}, 0},
    {1, 1, 1, 37, 64, 0, 0.0f, 1, {30}, 3},
    {2, 1, 65, 33, 128, 1, 0.0f, 2, {33, 9}, 0},
};
#define N_TILED (sizeof tiled_cases / sizeof tiled_cases[0])

START_TEST(test_against_reference) { run_case_impl(&cases[_i], "rows"); }
END_TEST

START_TEST(test_tiled_against_reference)
{
    run_case_impl(_i < (int)N_CASES ? &cases[_i] : &tiled_cases[_i - (int)N_CASES], "tiled");
}
END_TEST

/* The same cases with dQ in its own kernel (CLT_ATTENTION_DQ=separate) rather than added by the
 * dK/dV kernel in key-group order (the default where the tiles allow it). */
START_TEST(test_tiled_separate_dq)
{
    char *saved = tu_env_save("CLT_ATTENTION_DQ");
    ck_assert(setenv("CLT_ATTENTION_DQ", "separate", 1) == 0);
    run_case_impl(_i < (int)N_CASES ? &cases[_i] : &tiled_cases[_i - (int)N_CASES], "tiled");
    tu_env_restore("CLT_ATTENTION_DQ", saved);
}
END_TEST

/* Empty batch, empty query and key sequences: nothing to read, outputs of the right (zero or
 * defined) values. seq_q = 0 with keys: dk and dv are zero; seq_k = 0: out 0, lse -inf, dq 0. */
START_TEST(test_empty)
{
    const att_case empties[] = {
        {0, 2, 5, 5, 64, 0, 0.0f, 0, {0}, 0},
        {1, 2, 0, 9, 32, 1, 0.0f, 0, {0}, 0},
        {2, 1, 4, 0, 32, 0, 0.0f, 0, {0}, 0},
    };
    for (size_t i = 0; i < sizeof empties / sizeof empties[0]; i++)
        run_case(&empties[i]);
}
END_TEST

/* q, k, v, out, lse and grads of one small case, for the error tests. */
typedef struct err_set {
    clt_tensor *q, *k, *v, *o, *l, *g, *dq, *dk, *dv;
} err_set;

static err_set err_make(int64_t d)
{
    const int64_t s4[4] = {1, 2, 5, d}, s3[3] = {1, 2, 5};
    clt_tensor *unused;
    err_set e;
    e.q = make(4, s4, NULL, 0, &unused);
    e.k = make(4, s4, NULL, 0, &unused);
    e.v = make(4, s4, NULL, 0, &unused);
    e.o = make(4, s4, NULL, 0, &unused);
    e.l = make(3, s3, NULL, 0, &unused);
    e.g = make(4, s4, NULL, 0, &unused);
    e.dq = make(4, s4, NULL, 0, &unused);
    e.dk = make(4, s4, NULL, 0, &unused);
    e.dv = make(4, s4, NULL, 0, &unused);
    return e;
}

static void err_free(err_set *e)
{
    clt_tensor *all[] = {e->q, e->k, e->v, e->o, e->l, e->g, e->dq, e->dk, e->dv};
    for (size_t i = 0; i < 9; i++)
        clt_tensor_free(all[i]);
}

/* An output still holds the poison: the failed call wrote nothing. */
static void expect_untouched(const clt_tensor *t)
{
    TU_OK(clt_finish(g_ctx));
    float *h = read_back(t);
    for (int64_t i = 0; i < clt_tensor_numel(t); i++)
        ck_assert_msg(h[i] == POISON, "element %lld changed by a failed call", (long long)i);
    free(h);
}

#define EXPECT_FAIL(call, status, who)                                                             \
    do {                                                                                           \
        TU_EXPECT_STATUS(call, status);                                                            \
        ck_assert_msg(strncmp(clt_last_error(g_ctx), who, strlen(who)) == 0,                      \
                      "message \"%s\" does not start with %s", clt_last_error(g_ctx), who);       \
    } while (0)

START_TEST(test_forward_errors)
{
    err_set e = err_make(32);
    const char *who = "clt_attention_forward";
    EXPECT_FAIL(clt_attention_forward(NULL, e.k, e.v, NULL, e.o, e.l), CLT_ERR_INVALID_ARGUMENT,
                who);
    EXPECT_FAIL(clt_attention_forward(e.q, e.k, e.v, NULL, NULL, e.l), CLT_ERR_INVALID_ARGUMENT,
                who);
    /* wrong dtype */
    const int64_t s4[4] = {1, 2, 5, 32};
    clt_tensor *qi = NULL;
    TU_OK(clt_tensor_create(g_ctx, CLT_I32, 4, s4, &qi));
    EXPECT_FAIL(clt_attention_forward(qi, e.k, e.v, NULL, e.o, e.l), CLT_ERR_INVALID_DTYPE, who);
    clt_tensor_free(qi);
    /* k with other heads, v with another length than k, lse of the wrong shape */
    clt_tensor *unused, *k3 = make(4, (int64_t[]){1, 3, 5, 32}, NULL, 0, &unused);
    EXPECT_FAIL(clt_attention_forward(e.q, k3, e.v, NULL, e.o, e.l), CLT_ERR_INVALID_SHAPE, who);
    clt_tensor *v6 = make(4, (int64_t[]){1, 2, 6, 32}, NULL, 0, &unused);
    EXPECT_FAIL(clt_attention_forward(e.q, e.k, v6, NULL, e.o, e.l), CLT_ERR_INVALID_SHAPE, who);
    clt_tensor *l4 = make(3, (int64_t[]){1, 2, 4}, NULL, 0, &unused);
    EXPECT_FAIL(clt_attention_forward(e.q, e.k, e.v, NULL, e.o, l4), CLT_ERR_INVALID_SHAPE, who);
    clt_tensor *q3 = make(3, (int64_t[]){2, 5, 32}, NULL, 0, &unused);
    EXPECT_FAIL(clt_attention_forward(q3, e.k, e.v, NULL, e.o, e.l), CLT_ERR_INVALID_SHAPE, who);
    /* head dim 48 */
    clt_tensor *q48 = make(4, (int64_t[]){1, 2, 5, 48}, NULL, 0, &unused);
    EXPECT_FAIL(clt_attention_forward(q48, q48, q48, NULL, e.o, e.l), CLT_ERR_UNSUPPORTED, who);
    /* scale NaN; key lengths of the wrong dtype and shape */
    clt_attention_options o = clt_attention_options_default();
    o.scale = NAN;
    EXPECT_FAIL(clt_attention_forward(e.q, e.k, e.v, &o, e.o, e.l), CLT_ERR_INVALID_ARGUMENT, who);
    o = clt_attention_options_default();
    o.key_lengths = e.l;
    EXPECT_FAIL(clt_attention_forward(e.q, e.k, e.v, &o, e.o, NULL), CLT_ERR_INVALID_DTYPE, who);
    clt_tensor *len2 = NULL;
    int64_t two = 2;
    TU_OK(clt_tensor_create(g_ctx, CLT_I32, 1, &two, &len2));
    o.key_lengths = len2;
    EXPECT_FAIL(clt_attention_forward(e.q, e.k, e.v, &o, e.o, e.l), CLT_ERR_INVALID_SHAPE, who);
    /* out aliasing q, lse inside out */
    EXPECT_FAIL(clt_attention_forward(e.q, e.k, e.v, NULL, e.q, e.l), CLT_ERR_ALIASING, who);
    clt_tensor *lv = NULL;
    TU_OK(clt_tensor_view(e.o, 3, 3, (int64_t[]){1, 2, 5}, &lv));
    EXPECT_FAIL(clt_attention_forward(e.q, e.k, e.v, NULL, e.o, lv), CLT_ERR_ALIASING, who);
    /* another context */
    clt_context *other = tu_context();
    clt_tensor *qo = NULL;
    TU_OK(clt_tensor_create(other, CLT_F32, 4, s4, &qo));
    TU_EXPECT_STATUS(clt_attention_forward(qo, e.k, e.v, NULL, e.o, e.l),
                     CLT_ERR_CONTEXT_MISMATCH);
    clt_tensor_free(qo);
    tu_context_free(other);
    expect_untouched(e.o);
    expect_untouched(e.l);
    clt_tensor_free(lv);
    clt_tensor *frees[] = {k3, v6, l4, q3, q48, len2};
    for (size_t i = 0; i < 6; i++)
        clt_tensor_free(frees[i]);
    err_free(&e);
}
END_TEST

START_TEST(test_backward_errors)
{
    err_set e = err_make(64);
    const char *who = "clt_attention_backward";
    EXPECT_FAIL(clt_attention_backward(e.q, e.k, e.v, e.o, NULL, e.g, NULL, e.dq, e.dk, e.dv),
                CLT_ERR_INVALID_ARGUMENT, who);
    EXPECT_FAIL(clt_attention_backward(e.q, e.k, e.v, e.o, e.l, e.g, NULL, e.dq, e.dk, NULL),
                CLT_ERR_INVALID_ARGUMENT, who);
    clt_tensor *unused, *dk6 = make(4, (int64_t[]){1, 2, 6, 64}, NULL, 0, &unused);
    EXPECT_FAIL(clt_attention_backward(e.q, e.k, e.v, e.o, e.l, e.g, NULL, e.dq, dk6, e.dv),
                CLT_ERR_INVALID_SHAPE, who);
    EXPECT_FAIL(clt_attention_backward(e.q, e.k, e.v, e.o, e.l, e.g, NULL, e.dq, e.dk, e.dk),
                CLT_ERR_ALIASING, who);
    EXPECT_FAIL(clt_attention_backward(e.q, e.k, e.v, e.o, e.l, e.g, NULL, e.g, e.dk, e.dv),
                CLT_ERR_ALIASING, who);
    clt_attention_options o = clt_attention_options_default();
    o.scale = INFINITY;
    EXPECT_FAIL(clt_attention_backward(e.q, e.k, e.v, e.o, e.l, e.g, &o, e.dq, e.dk, e.dv),
                CLT_ERR_INVALID_ARGUMENT, who);
    expect_untouched(e.dq);
    expect_untouched(e.dk);
    expect_untouched(e.dv);
    clt_tensor_free(dk6);
    err_free(&e);
}
END_TEST

START_TEST(test_describe)
{
    char buf[160];
    char *saved = tu_env_save("CLT_ATTENTION_IMPL");
    setenv("CLT_ATTENTION_IMPL", "rows", 1);
    TU_OK(clt_attention_describe(g_ctx, 64, buf, sizeof buf));
    TU_EXPECT_MESSAGE(buf, "attention d64 rows fwd bm=");
    setenv("CLT_ATTENTION_IMPL", "tiled", 1);
    TU_OK(clt_attention_describe(g_ctx, 128, buf, sizeof buf));
    TU_EXPECT_MESSAGE(buf, "attention d128 tiled fwd br=");
    ck_assert_msg(strstr(buf, "; dq fused into dkdv") != NULL, "describe: %s", buf);
    char *saved_dq = tu_env_save("CLT_ATTENTION_DQ");
    setenv("CLT_ATTENTION_DQ", "separate", 1);
    TU_OK(clt_attention_describe(g_ctx, 64, buf, sizeof buf));
    ck_assert_msg(strstr(buf, "; dq separate") != NULL, "describe: %s", buf);
    tu_env_restore("CLT_ATTENTION_DQ", saved_dq);
    tu_env_restore("CLT_ATTENTION_IMPL", saved);
    TU_EXPECT_STATUS(clt_attention_describe(g_ctx, 96, buf, sizeof buf), CLT_ERR_UNSUPPORTED);
    TU_EXPECT_MESSAGE(clt_last_error(g_ctx), "clt_attention_describe");
    TU_EXPECT_STATUS(clt_attention_describe(NULL, 64, buf, sizeof buf), CLT_ERR_INVALID_ARGUMENT);
}
END_TEST

Suite *attention_suite(void)
{
    Suite *s = suite_create("attention");
    TCase *tc = tcase_create("attention");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_against_reference, 0, (int)N_CASES);
    tcase_add_loop_test(tc, test_tiled_against_reference, 0, (int)(N_CASES + N_TILED));
    tcase_add_loop_test(tc, test_tiled_separate_dq, 0, (int)(N_CASES + N_TILED));
    tcase_add_test(tc, test_empty);
    tcase_add_test(tc, test_forward_errors);
    tcase_add_test(tc, test_backward_errors);
    tcase_add_test(tc, test_describe);
    suite_add_tcase(s, tc);
    return s;
}
