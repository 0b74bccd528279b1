/* A bounded fuzz test of the public API: random (often hostile) arguments to the shape builder,
 * the conv/pool geometry, broadcasting elementwise ops and the expression builder, each checked
 * against an exact model written here (128-bit arithmetic for the geometry): a valid call must give
 * exactly the model's answer, an invalid one must fail with a message that starts with the call's
 * name and leave its outputs untouched. Its own fixed seed (not CLT_TEST_SEED, so every run replays
 * the same calls) and fixed iteration counts bound the work; no clock is read. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/test_util.h"

#define FUZZ_SEED 0x5eedc0ffee15ull
#define GEOMETRY_ITERS 20000
#define SHAPE_ITERS 3000
#define BROADCAST_ITERS 150
#define EXPR_BUILD_ITERS 3000
#define EXPR_EVAL_ITERS 40

typedef __int128 i128;

static uint64_t fuzz_state;
static uint64_t next_u64(void)
{
    uint64_t z = (fuzz_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static int64_t pick(int64_t lo, int64_t hi) { return lo + (int64_t)(next_u64() % (uint64_t)(hi - lo + 1)); }

/* A dimension: mostly small, sometimes 0, negative, near the i32 limit or absurd. */
static int64_t hostile_dim(void)
{
    switch (next_u64() % 12) {
    case 0: return 0;
    case 1: return -pick(1, 3);
    case 2: return INT32_MAX - pick(0, 2);
    case 3: return (int64_t)INT32_MAX + pick(1, 3);
    case 4: return ((int64_t)1 << pick(32, 62)) + pick(-1, 1);
    case 5: return INT64_MAX - pick(0, 1);
    case 6: return INT64_MIN + pick(0, 1);
    default: return pick(1, 9);
    }
}

static int32_t hostile_param(int small_max)
{
    switch (next_u64() % 10) {
    case 0: return 0;
    case 1: return -(int32_t)pick(1, 2);
    case 2: return INT32_MAX - (int32_t)pick(0, 1);
    case 3: return INT32_MIN;
    default: return (int32_t)pick(1, small_max);
    }
}

/* A padding: like hostile_param, shifted down by one so that -1 and 0 are common. */
static int32_t hostile_pad(void)
{
    int32_t v = hostile_param(3);
    return v > INT32_MIN ? v - 1 : v;
}

static void expect_named(const char *who)
{
    const char *msg = clt_last_error(NULL);
    ck_assert_msg(strncmp(msg, who, strlen(who)) == 0, "message \"%s\" does not start with %s", msg,
                  who);
}

/* Exact model of one window axis: -1 when no output. */
static i128 window(i128 in, i128 pads, i128 k, i128 dil, i128 stride)
{
    i128 span = in + pads - dil * (k - 1) - 1;
    return span < 0 ? 0 : span / stride + 1;
}

START_TEST(fuzz_conv_and_pool_geometry)
{
    fuzz_state = FUZZ_SEED;
    for (int it = 0; it < GEOMETRY_ITERS; it++) {
        int64_t x[4], w[4];
        for (int i = 0; i < 4; i++)
            x[i] = hostile_dim(), w[i] = hostile_dim();
        if (next_u64() % 2) /* often a consistent channel count, to reach the later checks */
            w[1] = x[1];
        clt_conv2d_params p;
        clt_conv2d_params_init(&p);
        if (next_u64() % 2) {
            p.stride_h = hostile_param(4), p.stride_w = hostile_param(4);
            p.dilation_h = hostile_param(4), p.dilation_w = hostile_param(4);
            p.pad_top = hostile_pad(), p.pad_bottom = hostile_pad();
            p.pad_left = hostile_pad(), p.pad_right = hostile_pad();
            p.groups = next_u64() % 4 ? 1 : hostile_param(3);
        }
        int valid = p.stride_h >= 1 && p.stride_w >= 1 && p.dilation_h >= 1 && p.dilation_w >= 1 &&
                    p.pad_top >= 0 && p.pad_bottom >= 0 && p.pad_left >= 0 && p.pad_right >= 0;
        for (int i = 0; i < 4; i++)
            valid = valid && x[i] >= 0 && w[i] >= 0 && x[i] <= INT32_MAX && w[i] <= INT32_MAX;
        valid = valid && x[1] >= 1 && p.groups >= 1 && x[1] % p.groups == 0 &&
                w[0] % p.groups == 0 && w[1] == x[1] / p.groups && x[2] >= 1 && x[3] >= 1 &&
                w[0] >= 1 && w[2] >= 1 && w[3] >= 1;
        i128 ho = 0, wo = 0;
        if (valid) {
            ho = window(x[2], (i128)p.pad_top + p.pad_bottom, w[2], p.dilation_h, p.stride_h);
            wo = window(x[3], (i128)p.pad_left + p.pad_right, w[3], p.dilation_w, p.stride_w);
            valid = ho >= 1 && wo >= 1;
        }
        int64_t out[4] = {-7, -7, -7, -7};
        clt_status st = clt_conv2d_output_shape(x, w, &p, out);
        if (valid) {
            ck_assert_msg(st == CLT_SUCCESS, "conv it %d: valid geometry refused: %s", it,
                          clt_last_error(NULL));
            ck_assert_msg(out[0] == x[0] && out[1] == w[0] && out[2] == (int64_t)ho &&
                              out[3] == (int64_t)wo,
                          "conv it %d: shape [%lld %lld %lld %lld]", it, (long long)out[0],
                          (long long)out[1], (long long)out[2], (long long)out[3]);
        } else {
            ck_assert_msg(st != CLT_SUCCESS, "conv it %d: x [%lld %lld %lld %lld] w [%lld %lld %lld "
                          "%lld] accepted as [%lld %lld %lld %lld]", it, (long long)x[0],
                          (long long)x[1], (long long)x[2], (long long)x[3], (long long)w[0],
                          (long long)w[1], (long long)w[2], (long long)w[3], (long long)out[0],
                          (long long)out[1], (long long)out[2], (long long)out[3]);
            ck_assert(out[0] == -7 && out[1] == -7 && out[2] == -7 && out[3] == -7);
            expect_named("clt_conv2d_output_shape");
        }

        clt_pool2d_params q;
        clt_pool2d_params_init(&q, (int32_t)pick(1, 3));
        if (next_u64() % 2) {
            q.kernel_h = hostile_param(4), q.kernel_w = hostile_param(4);
            q.stride_h = hostile_param(4), q.stride_w = hostile_param(4);
            q.pad_top = hostile_pad(), q.pad_bottom = hostile_pad();
            q.pad_left = hostile_pad(), q.pad_right = hostile_pad();
        }
        valid = q.kernel_h >= 1 && q.kernel_w >= 1 && q.stride_h >= 1 && q.stride_w >= 1 &&
                q.pad_top >= 0 && q.pad_bottom >= 0 && q.pad_left >= 0 && q.pad_right >= 0 &&
                q.pad_top < q.kernel_h && q.pad_bottom < q.kernel_h && q.pad_left < q.kernel_w &&
                q.pad_right < q.kernel_w;
        for (int i = 0; i < 4; i++)
            valid = valid && x[i] >= 0 && x[i] <= INT32_MAX;
        if (valid) {
            ho = window(x[2], (i128)q.pad_top + q.pad_bottom, q.kernel_h, 1, q.stride_h);
            wo = window(x[3], (i128)q.pad_left + q.pad_right, q.kernel_w, 1, q.stride_w);
            valid = ho >= 1 && wo >= 1 && (i128)x[2] * x[3] <= INT32_MAX;
        }
        int64_t pout[4] = {-7, -7, -7, -7};
        st = clt_pool2d_output_shape(x, &q, pout);
        if (valid) {
            ck_assert_msg(st == CLT_SUCCESS, "pool it %d: valid geometry refused: %s", it,
                          clt_last_error(NULL));
            ck_assert(pout[0] == x[0] && pout[1] == x[1] && pout[2] == (int64_t)ho &&
                      pout[3] == (int64_t)wo);
        } else {
            ck_assert_msg(st != CLT_SUCCESS, "pool it %d: x [%lld %lld %lld %lld] accepted", it,
                          (long long)x[0], (long long)x[1], (long long)x[2], (long long)x[3]);
            ck_assert(pout[0] == -7 && pout[1] == -7 && pout[2] == -7 && pout[3] == -7);
            expect_named("clt_pool2d_output_shape");
        }
    }
}
END_TEST

/* Tensor shapes: valid ones within the cap are created with the model's numel; every other one
 * fails naming clt_tensor_create (overflow, negative dims, bad ndim, over the memory cap). */
START_TEST(fuzz_shape_builder)
{
    fuzz_state = FUZZ_SEED ^ 1;
    clt_context_options o;
    clt_context_options_init(&o);
    o.memory_limit = 1 << 20;
    clt_context *ctx = tu_context_with(&o);
    for (int it = 0; it < SHAPE_ITERS; it++) {
        int ndim = (int)pick(-1, CLT_MAX_DIMS + 1);
        int64_t shape[CLT_MAX_DIMS + 2];
        for (int i = 0; i < CLT_MAX_DIMS + 2; i++)
            shape[i] = next_u64() % 3 ? pick(0, 6) : hostile_dim();
        int valid = ndim >= 0 && ndim <= CLT_MAX_DIMS;
        i128 numel = 1;
        int zero = 0;
        for (int i = 0; valid && i < ndim; i++) {
            valid = shape[i] >= 0;
            zero |= shape[i] == 0;
        }
        for (int i = 0; valid && i < ndim && !zero; i++) {
            numel *= shape[i]; /* <= 2^62 * 2^63: no i128 overflow */
            if (numel > (i128)1 << 62)
                numel = (i128)1 << 62; /* saturate: too big either way */
        }
        if (zero)
            numel = 0;
        clt_tensor *t = (clt_tensor *)&it; /* must be reset to NULL on failure */
        clt_status st = clt_tensor_create(ctx, CLT_F32, ndim, shape, &t);
        if (valid && numel * 4 <= 256 * 1024) {
            ck_assert_msg(st == CLT_SUCCESS, "it %d: ndim %d numel %lld refused: %s", it, ndim,
                          (long long)numel, clt_last_error(ctx));
            ck_assert_int_eq(clt_tensor_numel(t), (int64_t)numel);
            ck_assert_int_eq(clt_tensor_ndim(t), ndim);
            /* A reshape to a random shape succeeds exactly when the counts agree. */
            int rn = (int)pick(0, 3);
            int64_t rs[3];
            i128 rcount = 1;
            for (int i = 0; i < rn; i++)
                rcount *= (rs[i] = pick(0, 5));
            clt_tensor *v = NULL;
            st = clt_tensor_reshape(t, rn, rs, &v);
            ck_assert_msg((st == CLT_SUCCESS) == (rcount == numel), "it %d: reshape %lld -> %lld: %s",
                          it, (long long)numel, (long long)rcount, clt_last_error(ctx));
            if (v)
                clt_tensor_free(v);
            clt_tensor_free(t);
        } else if (!valid || numel * 4 > (i128)(1 << 21)) {
            ck_assert_msg(st != CLT_SUCCESS, "it %d: ndim %d accepted", it, ndim);
            ck_assert_ptr_null(t);
            const char *msg = clt_last_error(ctx);
            ck_assert_msg(strncmp(msg, "clt_tensor_create", 17) == 0, "message \"%s\"", msg);
        } else if (st == CLT_SUCCESS) { /* near the cap: either answer, but a right one */
            ck_assert_int_eq(clt_tensor_numel(t), (int64_t)numel);
            clt_tensor_free(t);
        }
    }
    clt_pool_stats ps;
    TU_OK(clt_pool_get_stats(ctx, &ps));
    ck_assert_uint_eq(ps.bytes_in_use, 0);
    tu_context_free(ctx);
}
END_TEST

static clt_tensor *random_tensor(clt_context *ctx, int ndim, const int64_t *shape, float **host)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    *host = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    for (int64_t i = 0; i < n; i++)
        (*host)[i] = (float)pick(-8, 8) * 0.25f;
    clt_tensor *t = NULL;
    TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, ndim, shape, *host, (size_t)n * sizeof(float),
                                      &t));
    return t;
}

/* Flat index into a tensor of shape s (ndim n) for output coordinate idx of the broadcast shape. */
static int64_t bcast_index(const int64_t *s, int n, const int64_t *idx, int out_n)
{
    int64_t flat = 0;
    for (int i = 0; i < n; i++) {
        int64_t c = idx[out_n - n + i];
        flat = flat * s[i] + (s[i] == 1 ? 0 : c);
    }
    return flat;
}

START_TEST(fuzz_broadcasting)
{
    fuzz_state = FUZZ_SEED ^ 2;
    clt_context *ctx = tu_context();
    for (int it = 0; it < BROADCAST_ITERS; it++) {
        int na = (int)pick(0, 4), nb = (int)pick(0, 4), no = na > nb ? na : nb;
        int64_t sa[4], sb[4], so[4];
        for (int i = 0; i < 4; i++)
            sa[i] = pick(0, 3) == 0 ? 1 : pick(0, 3), sb[i] = pick(0, 3) == 0 ? 1 : pick(0, 3);
        if (next_u64() % 2) /* mostly compatible: copy a's dims into b where both exist */
            for (int i = 0; i < na && i < nb; i++)
                if (next_u64() % 2)
                    sb[nb - 1 - i] = next_u64() % 3 ? sa[na - 1 - i] : 1;
        int ok = 1;
        for (int i = 0; i < no; i++) {
            int64_t da = i < no - na ? 1 : sa[i - (no - na)], db = i < no - nb ? 1 : sb[i - (no - nb)];
            ok = ok && (da == db || da == 1 || db == 1);
            so[i] = da == 1 ? db : da;
        }
        int wrong_out = ok && no > 0 && next_u64() % 5 == 0;
        if (wrong_out)
            so[pick(0, no - 1)] += 1;
        float *ha, *hb, *ho;
        clt_tensor *a = random_tensor(ctx, na, sa, &ha), *b = random_tensor(ctx, nb, sb, &hb);
        clt_tensor *out = random_tensor(ctx, no, so, &ho);
        int64_t n = 1;
        for (int i = 0; i < no; i++)
            n *= so[i];
        clt_status st = clt_add(a, b, out);
        float *got = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
        TU_OK(clt_tensor_read(out, got, (size_t)n * sizeof(float)));
        if (ok && !wrong_out) {
            ck_assert_msg(st == CLT_SUCCESS, "it %d: %s", it, clt_last_error(ctx));
            int64_t idx[4];
            for (int64_t f = 0; f < n; f++) {
                int64_t r = f;
                for (int i = no - 1; i >= 0; i--)
                    idx[i] = r % so[i], r /= so[i];
                float want = ha[bcast_index(sa, na, idx, no)] + hb[bcast_index(sb, nb, idx, no)];
                ck_assert_msg(got[f] == want, "it %d: out[%lld] = %g, expected %g", it,
                              (long long)f, got[f], want);
            }
        } else {
            ck_assert_msg(st == CLT_ERR_INVALID_SHAPE, "it %d: incompatible shapes gave %s", it,
                          clt_status_string(st));
            TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_add");
            ck_assert_int_eq(memcmp(got, ho, (size_t)n * sizeof(float)), 0);
        }
        free(got), free(ha), free(hb), free(ho);
        clt_tensor_free(a), clt_tensor_free(b), clt_tensor_free(out);
    }
    tu_context_free(ctx);
}
END_TEST

/* ------------------------------------------------------------------ expressions */

typedef struct model_node {
    int kind; /* 0 input, 1 scalar, 2 unary, 3 binary, 4 where */
    int op, a, b, c;
} model_node;

static double model_eval(const model_node *m, int id, const double *in, const double *sc)
{
    const model_node *n = &m[id];
    switch (n->kind) {
    case 0: return in[n->op];
    case 1: return sc[n->op];
    case 2: {
        double v = model_eval(m, n->a, in, sc);
        return n->op == CLT_NEG ? -v : n->op == CLT_ABS ? fabs(v) : (v < 0 ? 0 : v);
    }
    case 3: {
        double u = model_eval(m, n->a, in, sc), v = model_eval(m, n->b, in, sc);
        return n->op == CLT_ADD ? u + v : n->op == CLT_SUB ? u - v : u * v;
    }
    default:
        return model_eval(m, n->a, in, sc) != 0.0 ? model_eval(m, n->b, in, sc)
                                                  : model_eval(m, n->c, in, sc);
    }
}

/* Builder calls with bad arguments return -1 and poison the expression (eval then fails naming
 * clt_expr_eval); good ones return fresh ids. */
START_TEST(fuzz_expression_builder)
{
    fuzz_state = FUZZ_SEED ^ 3;
    for (int it = 0; it < EXPR_BUILD_ITERS; it++) {
        clt_expr *e = NULL;
        TU_OK(clt_expr_create(&e));
        int nodes = 0, bad = 0, calls = (int)pick(1, 12);
        for (int c = 0; c < calls; c++) {
            int r, expect_bad;
            switch (next_u64() % 5) {
            case 0: {
                int idx = (int)pick(-2, CLT_EXPR_MAX_INPUTS + 1);
                expect_bad = idx < 0 || idx >= CLT_EXPR_MAX_INPUTS;
                r = clt_expr_input(e, idx);
                break;
            }
            case 1: {
                int idx = (int)pick(-2, CLT_EXPR_MAX_SCALARS + 1);
                expect_bad = idx < 0 || idx >= CLT_EXPR_MAX_SCALARS;
                r = clt_expr_scalar(e, idx);
                break;
            }
            case 2: {
                int a = (int)pick(-2, nodes + 1);
                expect_bad = a < 0 || a >= nodes;
                r = clt_expr_unary(e, next_u64() % 2 ? CLT_RELU : CLT_NEG, a, -1);
                break;
            }
            case 3: {
                int a = (int)pick(-1, nodes), b = (int)pick(-1, nodes);
                int op = (int)pick(-1, 13);
                expect_bad = a < 0 || a >= nodes || b < 0 || b >= nodes || op < 0 || op > 12;
                r = clt_expr_binary(e, (clt_binary_op)op, a, b);
                break;
            }
            default: {
                int a = (int)pick(-1, nodes), b = (int)pick(-1, nodes), d = (int)pick(-1, nodes);
                expect_bad = a < 0 || a >= nodes || b < 0 || b >= nodes || d < 0 || d >= nodes;
                r = clt_expr_where(e, a, b, d);
                break;
            }
            }
            if (expect_bad || nodes >= CLT_EXPR_MAX_NODES) {
                ck_assert_msg(r == -1 || !expect_bad, "it %d: a bad builder call returned %d", it, r);
                bad |= r == -1;
            } else {
                ck_assert_msg(r == nodes, "it %d: builder call returned %d, expected %d", it, r,
                              nodes);
            }
            if (r >= 0)
                nodes++;
        }
        (void)bad;
        clt_expr_free(e);
    }
}
END_TEST

/* Random well-formed expressions evaluated on random broadcast inputs, against the double model. */
START_TEST(fuzz_expression_eval)
{
    fuzz_state = FUZZ_SEED ^ 4;
    clt_context *ctx = tu_context();
    for (int it = 0; it < EXPR_EVAL_ITERS; it++) {
        clt_expr *e = NULL;
        TU_OK(clt_expr_create(&e));
        model_node m[CLT_EXPR_MAX_NODES];
        int n = 0;
        for (int i = 0; i < 3; i++, n++) {
            m[n] = (model_node){0, i, 0, 0, 0};
            ck_assert_int_eq(clt_expr_input(e, i), n);
        }
        m[n] = (model_node){1, 0, 0, 0, 0};
        ck_assert_int_eq(clt_expr_scalar(e, 0), n++);
        int extra = (int)pick(1, 10);
        for (int k = 0; k < extra; k++, n++) {
            int kind = (int)pick(2, 4), a = (int)pick(0, n - 1), b = (int)pick(0, n - 1),
                c = (int)pick(0, n - 1);
            int r;
            if (kind == 2) {
                int ops[3] = {CLT_NEG, CLT_ABS, CLT_RELU}, op = ops[pick(0, 2)];
                m[n] = (model_node){2, op, a, 0, 0};
                r = clt_expr_unary(e, (clt_unary_op)op, a, -1);
            } else if (kind == 3) {
                int ops[3] = {CLT_ADD, CLT_SUB, CLT_MUL}, op = ops[pick(0, 2)];
                m[n] = (model_node){3, op, a, b, 0};
                r = clt_expr_binary(e, (clt_binary_op)op, a, b);
            } else {
                m[n] = (model_node){4, 0, a, b, c};
                r = clt_expr_where(e, a, b, c);
            }
            ck_assert_int_eq(r, n);
        }
        /* Inputs: [2, 3], [3] and [2, 1] broadcast to [2, 3]; values in quarters (exact sums). */
        int64_t s0[2] = {2, 3}, s1[1] = {3}, s2[2] = {2, 1}, so[2] = {2, 3};
        float *h0, *h1, *h2, *hout;
        clt_tensor *t0 = random_tensor(ctx, 2, s0, &h0), *t1 = random_tensor(ctx, 1, s1, &h1);
        clt_tensor *t2 = random_tensor(ctx, 2, s2, &h2), *out = random_tensor(ctx, 2, so, &hout);
        const clt_tensor *ins[3] = {t0, t1, t2};
        float scalar = (float)pick(-4, 4) * 0.5f;
        TU_OK(clt_expr_eval(e, n - 1, 3, ins, 1, &scalar, out));
        float got[6];
        TU_OK(clt_tensor_read(out, got, sizeof got));
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 3; j++) {
                double in[3] = {h0[i * 3 + j], h1[j], h2[i]}, sc[1] = {scalar};
                double want = model_eval(m, n - 1, in, sc);
                ck_assert_msg(fabs(got[i * 3 + j] - want) <= 1e-5 * (1.0 + fabs(want)),
                              "it %d: out[%d][%d] = %g, expected %g", it, i, j, got[i * 3 + j],
                              want);
            }
        free(h0), free(h1), free(h2), free(hout);
        clt_tensor_free(t0), clt_tensor_free(t1), clt_tensor_free(t2), clt_tensor_free(out);
        clt_expr_free(e);
    }
    tu_context_free(ctx);
}
END_TEST

Suite *fuzz_suite(void)
{
    Suite *s = suite_create("fuzz");
    TCase *tc = tcase_create("api");
    tcase_add_test(tc, fuzz_conv_and_pool_geometry);
    tcase_add_test(tc, fuzz_shape_builder);
    tcase_add_test(tc, fuzz_broadcasting);
    tcase_add_test(tc, fuzz_expression_builder);
    tcase_add_test(tc, fuzz_expression_eval);
    suite_add_tcase(s, tc);
    return s;
}
