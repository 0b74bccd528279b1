/* clt_cast against the reference rules (tests/ref/cast_ref.c), bit for bit: every f16 and bf16
 * pattern to every other dtype, f32 edge values (zeros, subnormals, the rounding ties of both 16-bit
 * formats, overflow thresholds, infinities, NaNs with payloads, the i32 range) and random patterns,
 * i32 edges (ties of f32, f16 and bf16 rounding, the extremes); views at odd offsets; errors. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref/cast_ref.h"
#include "util/test_util.h"

static const clt_dtype all_types[] = {CLT_F32, CLT_F16, CLT_BF16, CLT_I32};

/* Element i of a host array of dtype d, as bits. */
static uint32_t get_bits(clt_dtype d, const void *data, size_t i)
{
    if (clt_dtype_size(d) == 2)
        return ((const uint16_t *)data)[i];
    return ((const uint32_t *)data)[i];
}

static void put_bits(clt_dtype d, void *data, size_t i, uint32_t v)
{
    if (clt_dtype_size(d) == 2)
        ((uint16_t *)data)[i] = (uint16_t)v;
    else
        ((uint32_t *)data)[i] = v;
}

/* Cast n elements (bits of dtype `from`) to `to` on the device and compare with the reference. */
static void check_cast(clt_context *ctx, clt_dtype from, clt_dtype to, const void *src, int64_t n)
{
    size_t fs = clt_dtype_size(from), ts = clt_dtype_size(to);
    clt_tensor *s = NULL, *d = NULL;
    TU_OK(clt_tensor_create_from_host(ctx, from, 1, &n, src, (size_t)n * fs, &s));
    TU_OK(clt_tensor_create(ctx, to, 1, &n, &d));
    tu_poison(d);
    TU_OK(clt_cast(s, d));
    void *out = malloc((size_t)n * ts);
    ck_assert_ptr_nonnull(out);
    TU_OK(clt_tensor_read(d, out, (size_t)n * ts));
    for (int64_t i = 0; i < n; i++) {
        uint32_t in = get_bits(from, src, (size_t)i), got = get_bits(to, out, (size_t)i);
        uint32_t want = ref_cast_bits(from, in, to);
        ck_assert_msg(got == want, "%s -> %s of 0x%08x: got 0x%08x, expected 0x%08x",
                      clt_dtype_name(from), clt_dtype_name(to), in, got, want);
    }
    free(out);
    clt_tensor_free(s);
    clt_tensor_free(d);
}

START_TEST(every_16bit_pattern)
{
    clt_context *ctx = tu_context();
    uint16_t *all = malloc(65536 * sizeof *all);
    ck_assert_ptr_nonnull(all);
    for (uint32_t i = 0; i < 65536; i++)
        all[i] = (uint16_t)i;
    const clt_dtype from[] = {CLT_F16, CLT_BF16};
    for (int f = 0; f < 2; f++)
        for (int t = 0; t < 4; t++)
            check_cast(ctx, from[f], all_types[t], all, 65536);
    free(all);
    tu_context_free(ctx);
}
END_TEST

static uint32_t fbits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

START_TEST(f32_edges_and_random)
{
    clt_context *ctx = tu_context();
    enum { RANDOM = 20000 };
    static const uint32_t edges[] = {
        0x00000000u, 0x80000000u, 0x00000001u, 0x80000001u, 0x007FFFFFu, 0x807FFFFFu, 0x00400000u,
        0x00800000u, 0x80800000u, 0x7F7FFFFFu, 0xFF7FFFFFu, 0x7F800000u, 0xFF800000u,
        0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFF800001u, 0x7FA00000u, 0x7FFFFFFFu, 0x7F802000u,
        0x7F810000u, 0xFFBFFFFFu, 0x7F7F8000u, 0x7F7F7FFFu, 0x7F7F8001u, 0x7F7E8000u, 0x3F808000u,
        0x3F818000u, 0x3F808001u, 0x3F807FFFu, 0xBF808000u, 0x00008000u, 0x00018000u, 0x00008001u};
    static const float values[] = {
        1.0f, -1.0f, 1.00048828125f /* 1 + 2^-11: f16 tie to even (down) */,
        1.00146484375f /* 1 + 3 * 2^-11: tie, up */, 2049.0f, 2051.0f, 65504.0f, 65519.0f,
        65519.99609375f, 65520.0f, -65520.0f, 65536.0f, 6.103515625e-05f /* 2^-14 */,
        6.0975551605224609e-05f /* just below 2^-14 */, 5.9604644775390625e-08f /* 2^-24 */,
        2.98023223876953125e-08f /* 2^-25: tie to zero */, 2.9802326e-08f /* just above */,
        8.94069671630859375e-08f /* 1.5 * 2^-24: tie to 2 * 2^-24 */, 1e-30f, -1e-40f, 0.5f,
        2147483520.0f, 2147483648.0f, -2147483648.0f, -2147483904.0f, 1e10f, -1e10f, 0.999999f,
        -0.999999f, 1.5f, -1.5f, 2.5f, -2.5f, 123456.7f, -7.75f, 3.4e38f, FLT_MIN, FLT_EPSILON};
    size_t ne = sizeof edges / sizeof edges[0], nv = sizeof values / sizeof values[0];
    size_t n = ne + nv + RANDOM;
    uint32_t *src = malloc(n * sizeof *src);
    ck_assert_ptr_nonnull(src);
    memcpy(src, edges, sizeof edges);
    for (size_t i = 0; i < nv; i++)
        src[ne + i] = fbits(values[i]);
    tu_random_bytes(src + ne + nv, RANDOM * sizeof *src);
    for (size_t i = ne + nv + RANDOM / 2; i < n; i++) /* half of them near 1 and near 2^-14: ties */
        src[i] = (src[i] & 0x80001FFFu) | (i % 2 ? 0x3F800000u : 0x38800000u) |
                 (src[i] & 0x3u ? 0x1000u : 0u);
    for (int t = 0; t < 4; t++)
        check_cast(ctx, CLT_F32, all_types[t], src, (int64_t)n);
    free(src);
    tu_context_free(ctx);
}
END_TEST

START_TEST(i32_edges_and_random)
{
    clt_context *ctx = tu_context();
    enum { RANDOM = 20000 };
    static const int32_t edges[] = {0,        1,         -1,        INT_MAX,   INT_MIN,   INT_MAX - 1,
                                    INT_MIN + 1, 16777216, 16777217, 16777219, -16777217, 2049,
                                    2051,     2053,      65504,     65519,     65520,     65535,
                                    -65520,   257,       259,       261,       -259,      2147483520,
                                    2147483584, 2147483585, 1 << 30,  -(1 << 30), 33554435, 65537};
    size_t ne = sizeof edges / sizeof edges[0], n = ne + RANDOM;
    uint32_t *src = malloc(n * sizeof *src);
    ck_assert_ptr_nonnull(src);
    memcpy(src, edges, sizeof edges);
    tu_random_bytes(src + ne, RANDOM * sizeof *src);
    for (size_t i = ne + RANDOM / 2; i < n; i++) /* small magnitudes too: the f16 range */
        src[i] = (uint32_t)((int32_t)(src[i] % 140001u) - 70000);
    for (int t = 0; t < 4; t++)
        check_cast(ctx, CLT_I32, all_types[t], src, (int64_t)n);
    free(src);
    tu_context_free(ctx);
}
END_TEST

/* Views at odd element offsets in both buffers: the offsets are counted in each dtype's elements,
 * and nothing around the destination view is written. */
START_TEST(views_at_offsets)
{
    clt_context *ctx = tu_context();
    for (int f = 0; f < 4; f++)
        for (int t = 0; t < 4; t++) {
            clt_dtype from = all_types[f], to = all_types[t];
            int64_t total = 37, n = 29, so = 3, dof = 5;
            size_t fs = clt_dtype_size(from), ts = clt_dtype_size(to);
            unsigned char src[37 * 4], before[37 * 4], after[37 * 4];
            for (int64_t i = 0; i < total; i++) /* finite values of every dtype */
                put_bits(from, src, (size_t)i,
                         from == CLT_I32 ? (uint32_t)(i * 7919 - 100)
                         : from == CLT_F32 ? fbits((float)(i - 18) * 1.37f)
                                           : ref_16bit_from_f32(from, (float)(i - 18) * 1.37f));
            tu_random_bytes(before, sizeof before);
            clt_tensor *s = NULL, *d = NULL, *sv = NULL, *dv = NULL;
            TU_OK(clt_tensor_create_from_host(ctx, from, 1, &total, src, (size_t)total * fs, &s));
            TU_OK(clt_tensor_create_from_host(ctx, to, 1, &total, before, (size_t)total * ts, &d));
            TU_OK(clt_tensor_view(s, so, 1, &n, &sv));
            TU_OK(clt_tensor_view(d, dof, 1, &n, &dv));
            TU_OK(clt_cast(sv, dv));
            TU_OK(clt_tensor_read(d, after, (size_t)total * ts));
            for (int64_t i = 0; i < total; i++) {
                uint32_t got = get_bits(to, after, (size_t)i);
                uint32_t want = i >= dof && i < dof + n
                                    ? ref_cast_bits(from, get_bits(from, src, (size_t)(i - dof + so)), to)
                                    : get_bits(to, before, (size_t)i);
                ck_assert_msg(got == want, "%s -> %s view: element %lld = 0x%x, expected 0x%x",
                              clt_dtype_name(from), clt_dtype_name(to), (long long)i, got, want);
            }
            clt_tensor_free(sv);
            clt_tensor_free(dv);
            clt_tensor_free(s);
            clt_tensor_free(d);
        }
    tu_context_free(ctx);
}
END_TEST

START_TEST(errors_change_nothing)
{
    clt_context *ctx = tu_context();
    int64_t n = 8, m = 9;
    float host[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, back[9];
    clt_tensor *f = NULL, *h = NULL, *u = NULL, *big = NULL, *c = NULL;
    TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, 1, &n, host, sizeof(float) * 8, &f));
    TU_OK(clt_tensor_create(ctx, CLT_F16, 1, &n, &h));
    TU_OK(clt_tensor_create(ctx, CLT_U8, 1, &n, &u));
    TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, 1, &m, host, sizeof host, &big));
    TU_OK(clt_tensor_create(ctx, CLT_C64, 1, &n, &c));
    TU_EXPECT_STATUS(clt_cast(NULL, h), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_cast");
    TU_EXPECT_STATUS(clt_cast(f, NULL), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_STATUS(clt_cast(f, u), CLT_ERR_INVALID_DTYPE);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "u8");
    TU_EXPECT_STATUS(clt_cast(c, f), CLT_ERR_INVALID_DTYPE);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_cast");
    TU_EXPECT_STATUS(clt_cast(big, h), CLT_ERR_INVALID_SHAPE);
    /* f32 -> f16 into the upper half of itself: overlap */
    clt_tensor *lo = NULL;
    int64_t four = 4;
    TU_OK(clt_tensor_view(big, 0, 1, &four, &lo));
    clt_tensor *alias16 = NULL;
    TU_OK(clt_tensor_reshape(big, 1, &m, &alias16));
    TU_EXPECT_STATUS(clt_cast(big, alias16), CLT_SUCCESS); /* same dtype, same elements: identity */
    clt_tensor *lo2 = NULL;
    TU_OK(clt_tensor_view(big, 1, 1, &four, &lo2));
    TU_EXPECT_STATUS(clt_cast(lo, lo2), CLT_ERR_ALIASING);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_cast");
    TU_OK(clt_tensor_read(big, back, sizeof back));
    ck_assert_mem_eq(back, host, sizeof host);
    clt_tensor *other = NULL;
    clt_context *ctx2 = tu_context();
    TU_OK(clt_tensor_create(ctx2, CLT_F16, 1, &n, &other));
    TU_EXPECT_STATUS(clt_cast(f, other), CLT_ERR_CONTEXT_MISMATCH);
    /* empty: nothing to do */
    int64_t zero = 0;
    clt_tensor *e1 = NULL, *e2 = NULL;
    TU_OK(clt_tensor_create(ctx, CLT_I32, 1, &zero, &e1));
    TU_OK(clt_tensor_create(ctx, CLT_BF16, 1, &zero, &e2));
    TU_OK(clt_cast(e1, e2));
    clt_tensor_free(e1);
    clt_tensor_free(e2);
    clt_tensor_free(other);
    tu_context_free(ctx2);
    clt_tensor_free(lo);
    clt_tensor_free(lo2);
    clt_tensor_free(alias16);
    clt_tensor_free(f);
    clt_tensor_free(h);
    clt_tensor_free(u);
    clt_tensor_free(big);
    clt_tensor_free(c);
    tu_context_free(ctx);
}
END_TEST

/* bf16 tensors work like f16 for storage: fill rounds to nearest even, write/read keep the bits. */
START_TEST(bf16_storage)
{
    clt_context *ctx = tu_context();
    int64_t n = 5;
    clt_tensor *t = NULL;
    TU_OK(clt_tensor_create(ctx, CLT_BF16, 1, &n, &t));
    ck_assert_uint_eq(clt_tensor_nbytes(t), 10);
    ck_assert_str_eq(clt_dtype_name(CLT_BF16), "bf16");
    const double vals[] = {1.0 + 1.0 / 256.0 /* tie: down */, 1.0 + 3.0 / 256.0 /* tie: up */,
                           -3.4e38, 1e39, NAN, 1e-40, 0.1};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        TU_OK(clt_tensor_fill(t, vals[i]));
        uint16_t back[5];
        TU_OK(clt_tensor_read(t, back, sizeof back));
        uint16_t want = isnan(vals[i]) ? 0x7FC0 : (uint16_t)ref_encode_binary(vals[i], 7, 8);
        for (int j = 0; j < 5; j++)
            ck_assert_msg(back[j] == want, "fill(%g): 0x%04x, expected 0x%04x", vals[i], back[j], want);
    }
    uint16_t w[5] = {0x3F80, 0x7FC1, 0x0001, 0xFF80, 0x1234}, r[5];
    TU_OK(clt_tensor_write(t, w, sizeof w));
    TU_OK(clt_tensor_read(t, r, sizeof r));
    ck_assert_mem_eq(w, r, sizeof w);
    clt_tensor_free(t);
    tu_context_free(ctx);
}
END_TEST

Suite *cast_suite(void)
{
    Suite *s = suite_create("cast");
    TCase *tc = tcase_create("cast");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, every_16bit_pattern);
    tcase_add_test(tc, f32_edges_and_random);
    tcase_add_test(tc, i32_edges_and_random);
    tcase_add_test(tc, views_at_offsets);
    tcase_add_test(tc, errors_change_nothing);
    tcase_add_test(tc, bf16_storage);
    suite_add_tcase(s, tc);
    return s;
}
