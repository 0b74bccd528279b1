/* The elementwise expression engine: clt_expr_* builders, clt__expr_grad, clt_expr_eval (flat and
 * broadcast kernels, offsets, in place, the structure cache) and every unary/binary op's device
 * formula against the double references of tests/ref/activation_ref.c. Error paths are in
 * check_expr_errors.c. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cltensor_cl.h"
#include "ops/elementwise/expr.h"
#include "ref/activation_ref.h"
#include "ref/expr_ref.h"
#include "util/ew_util.h"
#include "util/test_util.h"

/* Tolerances: |got - ref| <= RTOL * |ref| + ATOL. Arithmetic chains of a few ops on inputs in
 * [-2, 2]; transcendental ops (OpenCL allows 3-16 ulp) get a looser relative bound. */
#define ARITH_RTOL 1e-5
#define ARITH_ATOL 1e-5
#define UNARY_RTOL 2e-6
#define UNARY_ATOL 2e-6
#define POW_RTOL 4e-6 /* pow: 16 ulp */

/* ------------------------------------------------------------------ helpers */

static clt_tensor *upload(clt_context *ctx, const host_tensor *h)
{
    clt_tensor *t = NULL;
    TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, h->ndim, h->shape, h->data,
                                      (size_t)h->numel * sizeof(float), &t));
    return t;
}

static clt_tensor *poisoned(clt_context *ctx, int ndim, const int64_t *shape)
{
    clt_tensor *t = NULL;
    TU_OK(clt_tensor_create(ctx, CLT_F32, ndim, shape, &t));
    tu_poison(t);
    return t;
}

/* Evaluate e on host inputs (uploaded here), compare every element of out with ref_eval. */
static void check_expr_on(clt_context *ctx, const clt_expr *e, int root, int nin,
                          const host_tensor *hin, int nsc, const float *sc, int ondim,
                          const int64_t *oshape, double rtol, double atol)
{
    clt_tensor *tin[CLT_EXPR_MAX_INPUTS] = {0};
    for (int k = 0; k < nin; k++)
        tin[k] = hin[k].data ? upload(ctx, &hin[k]) : NULL;
    clt_tensor *out = poisoned(ctx, ondim, oshape);
    int64_t n = clt_tensor_numel(out);
    TU_OK(clt_expr_eval(e, root, nin, (const clt_tensor *const *)tin, nsc, sc, out));
    float *got = malloc((size_t)(n ? n : 1) * sizeof(float));
    ck_assert_ptr_nonnull(got);
    TU_OK(clt_tensor_read(out, got, (size_t)n * sizeof(float)));
    for (int64_t i = 0; i < n; i++) {
        double x[CLT_EXPR_MAX_INPUTS] = {0};
        for (int k = 0; k < nin; k++)
            if (hin[k].data)
                x[k] = bcast_at(&hin[k], ondim, oshape, i);
        double want = ref_eval(e, root, x, sc);
        if (!close_enough(got[i], want, rtol, atol))
            ck_abort_msg("element %lld of %lld: got %.9g, expected %.9g (inputs %.9g %.9g %.9g)",
                         (long long)i, (long long)n, got[i], want, x[0], x[1], x[2]);
    }
    free(got);
    clt_tensor_free(out);
    for (int k = 0; k < nin; k++)
        clt_tensor_free(tin[k]);
}

/* ------------------------------------------------------------------ structure cache */

/* leaky_relu(a*b + c, alpha): the second evaluation, with other data and another alpha, finds the
 * kernel already built (no compile, no disk load): scalars are arguments, not part of the key. */
START_TEST(test_cached_by_structure)
{
    clt_context *ctx = tu_context();
    clt_expr *e = NULL;
    TU_OK(clt_expr_create(&e));
    int a = clt_expr_input(e, 0), b = clt_expr_input(e, 1), c = clt_expr_input(e, 2);
    int al = clt_expr_scalar(e, 0);
    int ab = clt_expr_binary(e, CLT_MUL, a, b);
    int s = clt_expr_binary(e, CLT_ADD, ab, c);
    int root = clt_expr_unary(e, CLT_LEAKY_RELU, s, al);
    ck_assert_int_ge(root, 0);
    int64_t shape[2] = {37, 129};
    host_tensor h[3];
    for (int k = 0; k < 3; k++)
        h[k] = host_random(2, shape, -2, 2);
    float alpha = 0.1f;
    check_expr_on(ctx, e, root, 3, h, 1, &alpha, 2, shape, ARITH_RTOL, ARITH_ATOL);
    clt_program_cache_stats before, after;
    TU_OK(clt_program_cache_get_stats(ctx, &before));
    host_free(h, 3);
    for (int k = 0; k < 3; k++)
        h[k] = host_random(2, shape, -2, 2);
    alpha = 0.3f;
    check_expr_on(ctx, e, root, 3, h, 1, &alpha, 2, shape, ARITH_RTOL, ARITH_ATOL);
    TU_OK(clt_program_cache_get_stats(ctx, &after));
    ck_assert_uint_eq(after.source_builds, before.source_builds);
    ck_assert_uint_eq(after.disk_loads, before.disk_loads);
    host_free(h, 3);
    clt_expr_free(e);
    tu_context_free(ctx);
}
END_TEST

/* ------------------------------------------------------------------ random expressions */

/* A pseudo-random expression over inputs 0..2 and scalars 0..1, its structure fixed by `seed` (so
 * the disk cache serves repeated runs; the data is fresh each run). Comparisons and where
 * conditions only read inputs directly, whose values are exact in float and double alike, so a
 * rounding difference upstream can never flip a branch. */
static uint64_t structure_state;
static uint64_t structure_next(void)
{
    structure_state = structure_state * 6364136223846793005ull + 1442695040888963407ull;
    return structure_state >> 33;
}

static int random_expr(clt_expr *e, int nin, uint64_t seed)
{
    structure_state = seed;
    int ids[3];
    for (int k = 0; k < nin; k++)
        ids[k] = clt_expr_input(e, k);
    int s0 = clt_expr_scalar(e, 0), s1 = clt_expr_scalar(e, 1);
    static const clt_binary_op smooth[] = {CLT_ADD, CLT_SUB, CLT_MUL, CLT_MIN, CLT_MAX};
    static const clt_unary_op unary[] = {CLT_RELU, CLT_TANH, CLT_SIGMOID, CLT_ABS, CLT_NEG,
                                         CLT_SIN, CLT_SILU};
    int cur = ids[structure_next() % (uint64_t)nin];
    for (int step = 0; step < 6; step++) {
        int other = ids[structure_next() % (uint64_t)nin];
        switch (structure_next() % 6) {
        case 0:
        case 1: cur = clt_expr_binary(e, smooth[structure_next() % 5], cur, other); break;
        case 2: cur = clt_expr_unary(e, unary[structure_next() % 7], cur, -1); break;
        case 3: cur = clt_expr_binary(e, CLT_MUL, cur, structure_next() % 2 ? s0 : s1); break;
        case 4: {
            int cmp = clt_expr_binary(e, (clt_binary_op)(CLT_LT + structure_next() % 4), ids[0],
                                      ids[nin - 1]);
            cur = clt_expr_where(e, cmp, cur, other);
            break;
        }
        default: cur = clt_expr_unary(e, CLT_LEAKY_RELU, cur, s1); break;
        }
    }
    return cur;
}

typedef struct shape_case {
    int ondim;
    int64_t out[4];
    int ndim[3];
    int64_t in[3][4];
} shape_case;

static const shape_case shape_cases[] = {
    {1, {1}, {1, 1, 1}, {{1}, {1}, {1}}},
    {1, {7}, {1, 1, 1}, {{7}, {7}, {7}}},
    {1, {1000003}, {1, 1, 1}, {{1000003}, {1000003}, {1000003}}},
    {2, {33, 65}, {2, 1, 2}, {{33, 65}, {65}, {1, 65}}},        /* row (bias) */
    {2, {33, 65}, {2, 2, 0}, {{33, 1}, {33, 65}, {0}}},         /* column, 0-dim scalar */
    {3, {3, 4, 5}, {3, 3, 1}, {{3, 1, 5}, {1, 4, 1}, {1}}},     /* middle dim, scalar tensor */
    {4, {3, 3, 5, 7}, {4, 3, 2}, {{3, 1, 5, 1}, {3, 1, 7}, {5, 1}}}, /* tail of 3 */
    {3, {5, 6, 37}, {3, 3, 1}, {{5, 1, 37}, {1, 6, 1}, {1}}},  /* strided rows > a CPU chunk */
    {0, {0}, {0, 0, 0}, {{0}, {0}, {0}}},                        /* 0-dim out */
};

START_TEST(test_random_expressions)
{
    clt_context *ctx = tu_context();
    const shape_case *sc = &shape_cases[_i];
    clt_expr *e = NULL;
    TU_OK(clt_expr_create(&e));
    int root = random_expr(e, 3, 0x5eed0000u + (uint64_t)_i);
    ck_assert_msg(root >= 0, "builder: %s", e->error);
    host_tensor h[3];
    for (int k = 0; k < 3; k++)
        h[k] = host_random(sc->ndim[k], sc->in[k], -2, 2);
    float scalars[2] = {(float)(tu_rng_next() % 7) / 4 - 0.5f, 0.25f};
    check_expr_on(ctx, e, root, 3, h, 2, scalars, sc->ondim, sc->out, ARITH_RTOL, ARITH_ATOL);
    host_free(h, 3);
    clt_expr_free(e);
    tu_context_free(ctx);
}
END_TEST

/* ------------------------------------------------------------------ every op's formula */

/* Folds leaves into one value: element i takes leaves[sel[i]], sel given in binary by inputs
 * first_bit, first_bit+1, ... (0/1 tensors). One kernel then checks every op: one compile, not
 * one per op. */
static int select_tree(clt_expr *e, int *leaves, int n, int first_bit)
{
    for (int bit = first_bit; n > 1; bit++) {
        int b = clt_expr_input(e, bit);
        int m = 0;
        for (int j = 0; j < n; j += 2)
            leaves[m++] = j + 1 < n ? clt_expr_where(e, b, leaves[j + 1], leaves[j]) : leaves[j];
        n = m;
    }
    return leaves[0];
}

#define SELECT_N 4099 /* elements: not a multiple of 4, every op gets ~190 of them */

/* Inputs first_bit.. for element i selecting sel(i) = i % nops. */
static void select_bits(host_tensor *h, int first_bit, int nbits, int nops)
{
    int64_t shape = SELECT_N;
    for (int b = 0; b < nbits; b++) {
        h[first_bit + b] = host_random(1, &shape, 0, 1);
        for (int64_t i = 0; i < SELECT_N; i++)
            h[first_bit + b].data[i] = (float)(((i % nops) >> b) & 1);
    }
}

static float unary_domain_sample(clt_unary_op op)
{
    float x;
    if (op == CLT_LOG || op == CLT_SQRT || op == CLT_RSQRT || op == CLT_RECIPROCAL)
        tu_random_f32(&x, 1, 0.05f, 5.0f);
    else
        tu_random_f32(&x, 1, -6.0f, 6.0f);
    return x;
}

/* Forward (grad = 0) or derivative from x (grad = 1) of every clt_unary_op. */
static void check_all_unary(int grad)
{
    clt_context *ctx = tu_context();
    clt_expr *e = NULL;
    TU_OK(clt_expr_create(&e));
    int x = clt_expr_input(e, 0), alpha = clt_expr_scalar(e, 0);
    int leaves[REF_UNARY_OP_COUNT];
    for (int op = 0; op < REF_UNARY_OP_COUNT; op++) {
        int al = ref_unary_has_alpha((clt_unary_op)op) ? alpha : -1;
        leaves[op] = grad ? clt__expr_grad(e, (clt_unary_op)op, x, al, 0)
                          : clt_expr_unary(e, (clt_unary_op)op, x, al);
    }
    int root = select_tree(e, leaves, REF_UNARY_OP_COUNT, 1);
    ck_assert_msg(root >= 0, "builder: %s", e->error);
    host_tensor h[6];
    int64_t shape = SELECT_N;
    h[0] = host_random(1, &shape, 0, 1);
    for (int64_t i = 0; i < SELECT_N; i++)
        h[0].data[i] = unary_domain_sample((clt_unary_op)(i % REF_UNARY_OP_COUNT));
    select_bits(h, 1, 5, REF_UNARY_OP_COUNT);
    float a = 0.7f;
    check_expr_on(ctx, e, root, 6, h, 1, &a, 1, &shape, UNARY_RTOL, UNARY_ATOL);
    host_free(h, 6);
    clt_expr_free(e);
    tu_context_free(ctx);
}

START_TEST(test_unary_forward) { check_all_unary(0); }
END_TEST

START_TEST(test_unary_derivative) { check_all_unary(1); }
END_TEST

/* Derivatives computed from the forward output y (the ops that allow it). */
START_TEST(test_unary_derivative_from_y)
{
    static const clt_unary_op ops[] = {CLT_EXP, CLT_TANH, CLT_SIGMOID, CLT_RELU, CLT_LEAKY_RELU};
    const int nops = 5;
    clt_context *ctx = tu_context();
    clt_expr *e = NULL;
    TU_OK(clt_expr_create(&e));
    int y = clt_expr_input(e, 0), alpha = clt_expr_scalar(e, 0);
    int leaves[5];
    for (int k = 0; k < nops; k++)
        leaves[k] = clt__expr_grad(e, ops[k], y, ops[k] == CLT_LEAKY_RELU ? alpha : -1, 1);
    int root = select_tree(e, leaves, nops, 1);
    ck_assert_msg(root >= 0, "builder: %s", e->error);
    host_tensor h[4];
    int64_t shape = SELECT_N;
    h[0] = host_random(1, &shape, 0, 1);
    float a = 0.2f;
    for (int64_t i = 0; i < SELECT_N; i++) {
        float xv;
        tu_random_f32(&xv, 1, -6.0f, 6.0f);
        h[0].data[i] = (float)ref_unary(ops[i % nops], xv, a);
    }
    select_bits(h, 1, 3, nops);
    check_expr_on(ctx, e, root, 4, h, 1, &a, 1, &shape, UNARY_RTOL, UNARY_ATOL);
    host_free(h, 4);
    clt_expr_free(e);
    tu_context_free(ctx);
}
END_TEST

/* Every clt_binary_op, with NaNs and exact ties sprinkled in. */
START_TEST(test_binary_ops)
{
    clt_context *ctx = tu_context();
    clt_expr *e = NULL;
    TU_OK(clt_expr_create(&e));
    int a = clt_expr_input(e, 0), b = clt_expr_input(e, 1);
    int leaves[REF_BINARY_OP_COUNT];
    for (int op = 0; op < REF_BINARY_OP_COUNT; op++)
        leaves[op] = clt_expr_binary(e, (clt_binary_op)op, a, b);
    int root = select_tree(e, leaves, REF_BINARY_OP_COUNT, 2);
    ck_assert_msg(root >= 0, "builder: %s", e->error);
    host_tensor h[6];
    int64_t shape = SELECT_N;
    h[0] = host_random(1, &shape, -3, 3);
    h[1] = host_random(1, &shape, -3, 3);
    for (int64_t i = 0; i < SELECT_N; i++) {
        clt_binary_op op = (clt_binary_op)(i % REF_BINARY_OP_COUNT);
        if (op == CLT_POW)
            tu_random_f32(&h[0].data[i], 1, 0.1f, 3.0f);
        if (op == CLT_DIV && fabsf(h[1].data[i]) < 0.25f)
            h[1].data[i] += 0.5f;
        if (i % 7 == 3)
            h[1].data[i] = h[0].data[i]; /* ties for comparisons, min and max */
        if (i % 17 == 5)
            h[0].data[i] = NAN;
        if (i % 19 == 6)
            h[1].data[i] = NAN;
    }
    select_bits(h, 2, 4, REF_BINARY_OP_COUNT);
    check_expr_on(ctx, e, root, 6, h, 0, NULL, 1, &shape, POW_RTOL, 1e-7);
    host_free(h, 6);
    clt_expr_free(e);
    tu_context_free(ctx);
}
END_TEST

/* ------------------------------------------------------------------ memory layouts */

static void read_all(const clt_tensor *t, float *dst)
{
    TU_OK(clt_tensor_read(t, dst, clt_tensor_nbytes(t)));
}

/* Inputs and out wrapped at element offsets 3 and 4 + n (not multiples of 4) of one buffer, and
 * at multiples of 4: flat and broadcast kernels. */
static void check_offsets(int64_t first, int broadcast)
{
    clt_context *ctx = tu_context();
    const int64_t rows = 13, cols = 77, n = rows * cols;
    int64_t total = 3 * n + 64; /* room for the gaps below */
    clt_tensor *big = NULL;
    TU_OK(clt_tensor_create(ctx, CLT_F32, 1, &total, &big));
    tu_poison(big);
    cl_mem mem = clt_tensor_cl_mem(big, NULL);
    int64_t shape[2] = {rows, cols};
    int64_t bshape[1] = {cols};
    host_tensor ha = host_random(2, shape, -2, 2);
    host_tensor hb = broadcast ? host_random(1, bshape, -2, 2) : host_random(2, shape, -2, 2);
    clt_tensor *ta = NULL, *tb = NULL, *out = NULL;
    /* Gaps keep every offset a multiple of 4 when first is, and odd otherwise. */
    int64_t gap = first % 4 ? 1 : 4 - n % 4, ob = first + n + gap, oo = ob + n + gap + 4;
    TU_OK(clt_tensor_wrap_cl_mem(ctx, mem, (size_t)first * 4, CLT_F32, 2, shape, &ta));
    TU_OK(clt_tensor_wrap_cl_mem(ctx, mem, (size_t)ob * 4, CLT_F32, broadcast ? 1 : 2,
                                 broadcast ? bshape : shape, &tb));
    TU_OK(clt_tensor_wrap_cl_mem(ctx, mem, (size_t)oo * 4, CLT_F32, 2, shape, &out));
    TU_OK(clt_tensor_write(ta, ha.data, clt_tensor_nbytes(ta)));
    TU_OK(clt_tensor_write(tb, hb.data, clt_tensor_nbytes(tb)));
    clt_expr *e = NULL;
    TU_OK(clt_expr_create(&e));
    int root = clt_expr_binary(e, CLT_SUB, clt_expr_input(e, 0), clt_expr_input(e, 1));
    const clt_tensor *in[2] = {ta, tb};
    TU_OK(clt_expr_eval(e, root, 2, in, 0, NULL, out));
    float *got = malloc((size_t)n * sizeof(float));
    read_all(out, got);
    for (int64_t i = 0; i < n; i++) {
        float want = ha.data[i] - (broadcast ? hb.data[i % cols] : hb.data[i]);
        ck_assert_msg(got[i] == want, "offset %lld, element %lld: %g != %g", (long long)first,
                      (long long)i, got[i], want);
    }
    /* Neighbours of out untouched (still poison). */
    float edge[2];
    clt_tensor *before = NULL, *after = NULL;
    int64_t one = 1;
    TU_OK(clt_tensor_wrap_cl_mem(ctx, mem, (size_t)(oo - 1) * 4, CLT_F32, 1, &one,
                                 &before));
    TU_OK(clt_tensor_wrap_cl_mem(ctx, mem, (size_t)(oo + n) * 4, CLT_F32, 1, &one,
                                 &after));
    read_all(before, &edge[0]);
    read_all(after, &edge[1]);
    ck_assert(isnan(edge[0]) && isnan(edge[1]));
    free(got);
    free(ha.data);
    free(hb.data);
    clt_expr_free(e);
    tu_context_free(ctx);
}

START_TEST(test_offsets_unaligned) { check_offsets(3, 0); check_offsets(3, 1); }
END_TEST

START_TEST(test_offsets_aligned) { check_offsets(8, 0); check_offsets(8, 1); }
END_TEST

/* out == input 0 (same tensor), flat and with a broadcast bias. */
START_TEST(test_in_place)
{
    clt_context *ctx = tu_context();
    int root;
    clt_expr *e = ew_fma_relu(&root);
    int64_t shape[2] = {29, 31}, bshape[1] = {31};
    for (int broadcast = 0; broadcast < 2; broadcast++) {
        host_tensor h[3];
        h[0] = host_random(2, shape, -2, 2);
        h[1] = broadcast ? host_random(1, bshape, -2, 2) : host_random(2, shape, -2, 2);
        h[2] = host_random(2, shape, -2, 2);
        clt_tensor *t[3];
        for (int k = 0; k < 3; k++)
            t[k] = upload(ctx, &h[k]);
        TU_OK(clt_expr_eval(e, root, 3, (const clt_tensor *const *)t, 0, NULL, t[0]));
        float got[29 * 31];
        read_all(t[0], got);
        for (int64_t i = 0; i < 29 * 31; i++) {
            double x[3] = {h[0].data[i], bcast_at(&h[1], 2, shape, i), h[2].data[i]};
            double want = ref_eval(e, root, x, NULL);
            ck_assert_msg(close_enough(got[i], want, ARITH_RTOL, ARITH_ATOL), "%lld: %g vs %g",
                          (long long)i, got[i], want);
        }
        for (int k = 0; k < 3; k++)
            clt_tensor_free(t[k]);
        host_free(h, 3);
    }
    clt_expr_free(e);
    tu_context_free(ctx);
}
END_TEST

/* Inputs the expression does not read may be NULL; empty tensors enqueue nothing and succeed. */
START_TEST(test_null_unused_and_empty)
{
    clt_context *ctx = tu_context();
    clt_expr *e = NULL;
    TU_OK(clt_expr_create(&e));
    int root = clt_expr_unary(e, CLT_EXP, clt_expr_input(e, 2), -1);
    int64_t shape = 10;
    host_tensor h[3] = {{0}, {0}, host_random(1, &shape, -1, 1)};
    check_expr_on(ctx, e, root, 3, h, 0, NULL, 1, &shape, UNARY_RTOL, UNARY_ATOL);
    int64_t zero[2] = {0, 5}, zrow[1] = {5};
    clt_tensor *z = poisoned(ctx, 2, zero), *zin = poisoned(ctx, 2, zero), *row = poisoned(ctx, 1, zrow);
    const clt_tensor *in[3] = {NULL, NULL, zin};
    TU_OK(clt_expr_eval(e, root, 3, in, 0, NULL, z));
    in[2] = row; /* [5] broadcasts to [0, 5] */
    TU_OK(clt_expr_eval(e, root, 3, in, 0, NULL, z));
    clt_tensor_free(z);
    clt_tensor_free(zin);
    clt_tensor_free(row);
    free(h[2].data);
    clt_expr_free(e);
    tu_context_free(ctx);
}
END_TEST

Suite *expr_suite(void)
{
    Suite *s = suite_create("expr");
    TCase *tc = tcase_create("expr");
    tcase_add_test(tc, test_cached_by_structure);
    tcase_add_loop_test(tc, test_random_expressions, 0,
                        (int)(sizeof shape_cases / sizeof shape_cases[0]));
    tcase_add_test(tc, test_unary_forward);
    tcase_add_test(tc, test_unary_derivative);
    tcase_add_test(tc, test_unary_derivative_from_y);
    tcase_add_test(tc, test_binary_ops);
    tcase_add_test(tc, test_offsets_unaligned);
    tcase_add_test(tc, test_offsets_aligned);
    tcase_add_test(tc, test_in_place);
    tcase_add_test(tc, test_null_unused_and_empty);
    suite_add_tcase(s, tc);
    return s;
}
