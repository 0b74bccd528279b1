/* The buffer pool: size classes, reuse, stats, trim, the memory cap and the device's allocation limit. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "memory/memory.h"
#include "util/test_util.h"

static clt_tensor *make_u8(clt_context *ctx, int64_t n)
{
    clt_tensor *t = NULL;
    TU_OK(clt_tensor_create(ctx, CLT_U8, 1, &n, &t));
    ck_assert_ptr_nonnull(t);
    return t;
}

static clt_pool_stats stats_of(const clt_context *ctx)
{
    clt_pool_stats s;
    memset(&s, 0x5A, sizeof s);
    TU_OK(clt_pool_get_stats(ctx, &s));
    return s;
}

static void assert_stats_equal(const clt_pool_stats *a, const clt_pool_stats *b)
{
    ck_assert_uint_eq(a->bytes_in_use, b->bytes_in_use);
    ck_assert_uint_eq(a->bytes_cached, b->bytes_cached);
    ck_assert_uint_eq(a->peak_bytes_in_use, b->peak_bytes_in_use);
    ck_assert_uint_eq(a->hits, b->hits);
    ck_assert_uint_eq(a->misses, b->misses);
    ck_assert_uint_eq(a->limit, b->limit);
}

START_TEST(class_rounding_properties)
{
    ck_assert_uint_eq(clt__pool_class_bytes(0), 256);
    ck_assert_uint_eq(clt__pool_class_bytes(1), 256);
    ck_assert_uint_eq(clt__pool_class_bytes(256), 256);
    ck_assert_uint_eq(clt__pool_class_bytes(257), 288);
    ck_assert_uint_eq(clt__pool_class_bytes(512), 512);
    ck_assert_uint_eq(clt__pool_class_bytes(513), 576);
    ck_assert_uint_eq(clt__pool_class_bytes((size_t)1 << 30), (size_t)1 << 30);
    size_t prev = 0;
    for (size_t b = 0; b < 70000; b++) {
        size_t c = clt__pool_class_bytes(b);
        ck_assert_uint_ge(c, b);
        ck_assert_uint_le(c, b + b / 8 + 256);
        ck_assert_uint_ge(c, prev);
        ck_assert_uint_eq(clt__pool_class_bytes(c), c); /* a class size is its own class */
        prev = c;
    }
    for (int i = 0; i < 20000; i++) {
        size_t a = (size_t)(tu_rng_next() >> (24 + tu_rng_next() % 32));
        size_t b = a + (size_t)(tu_rng_next() % 5000);
        size_t ca = clt__pool_class_bytes(a), cb = clt__pool_class_bytes(b);
        ck_assert_uint_ge(ca, a);
        ck_assert_uint_le(ca, a + a / 8 + 256);
        ck_assert_uint_le(ca, cb);
        ck_assert_uint_eq(clt__pool_class_bytes(ca), ca);
    }
    for (int e = 9; e < 62; e++) { /* around powers of two */
        size_t p = (size_t)1 << e;
        ck_assert_uint_eq(clt__pool_class_bytes(p), p);
        ck_assert_uint_eq(clt__pool_class_bytes(p + 1), p + p / 8);
        ck_assert_uint_eq(clt__pool_class_bytes(p - 1), p);
    }
    ck_assert_uint_ge(clt__pool_class_bytes(SIZE_MAX), SIZE_MAX);
}
END_TEST

START_TEST(reuse_and_stats)
{
    clt_context *ctx = tu_context();
    clt_pool_stats s0 = stats_of(ctx);
    ck_assert_uint_eq(s0.limit, 0);
    size_t c1000 = clt__pool_class_bytes(1000);
    ck_assert_uint_eq(c1000, 1024);

    clt_tensor *a = make_u8(ctx, 1000);
    clt_pool_stats s1 = stats_of(ctx);
    ck_assert_uint_eq(s1.bytes_in_use, s0.bytes_in_use + c1000);
    ck_assert_uint_eq(s1.bytes_cached, s0.bytes_cached);
    ck_assert_uint_eq(s1.misses, s0.misses + 1);
    ck_assert_uint_eq(s1.hits, s0.hits);
    ck_assert_uint_ge(s1.peak_bytes_in_use, s1.bytes_in_use);

    clt_tensor_free(a);
    clt_pool_stats s2 = stats_of(ctx);
    ck_assert_uint_eq(s2.bytes_in_use, s0.bytes_in_use);
    ck_assert_uint_eq(s2.bytes_cached, s0.bytes_cached + c1000);
    ck_assert_uint_eq(s2.peak_bytes_in_use, s1.peak_bytes_in_use);

    /* Same class (1000 and 1020 both round to 1024): served from the cache. */
    clt_tensor *b = make_u8(ctx, 1020);
    clt_pool_stats s3 = stats_of(ctx);
    ck_assert_uint_eq(s3.hits, s2.hits + 1);
    ck_assert_uint_eq(s3.misses, s2.misses);
    ck_assert_uint_eq(s3.bytes_in_use, s0.bytes_in_use + c1000);
    ck_assert_uint_eq(s3.bytes_cached, s0.bytes_cached);

    /* Another class while b is alive: a miss, and the peak covers both. */
    size_t c5000 = clt__pool_class_bytes(5000);
    clt_tensor *c = make_u8(ctx, 5000);
    clt_pool_stats s4 = stats_of(ctx);
    ck_assert_uint_eq(s4.misses, s3.misses + 1);
    ck_assert_uint_eq(s4.bytes_in_use, s0.bytes_in_use + c1000 + c5000);
    ck_assert_uint_eq(s4.peak_bytes_in_use, s4.bytes_in_use > s1.peak_bytes_in_use
                                                ? s4.bytes_in_use
                                                : s1.peak_bytes_in_use);
    clt_tensor_free(b);
    clt_tensor_free(c);
    clt_pool_stats s5 = stats_of(ctx);
    ck_assert_uint_eq(s5.bytes_in_use, s0.bytes_in_use);
    ck_assert_uint_eq(s5.bytes_cached, s0.bytes_cached + c1000 + c5000);
    ck_assert_uint_eq(s5.peak_bytes_in_use, s4.peak_bytes_in_use);
    tu_context_free(ctx);
}
END_TEST

START_TEST(empty_request_gets_smallest_class)
{
    clt_context *ctx = tu_context();
    clt_pool_stats s0 = stats_of(ctx);
    clt_block *blk = NULL;
    TU_OK(clt__pool_alloc(ctx, 0, &blk));
    ck_assert_ptr_nonnull(blk);
    ck_assert_ptr_nonnull(blk->mem);
    ck_assert_uint_eq(blk->bytes, 256);
    ck_assert_uint_eq(stats_of(ctx).bytes_in_use, s0.bytes_in_use + 256);
    clt__pool_release(ctx, blk);
    ck_assert_uint_eq(stats_of(ctx).bytes_cached, s0.bytes_cached + 256);
    tu_context_free(ctx);
}
END_TEST

START_TEST(trim_empties_cache)
{
    clt_context *ctx = tu_context();
    clt_tensor *keep = make_u8(ctx, 3000);
    for (int64_t n = 100; n < 200000; n *= 3)
        clt_tensor_free(make_u8(ctx, n));
    clt_pool_stats s0 = stats_of(ctx);
    ck_assert_uint_gt(s0.bytes_cached, 0);
    TU_OK(clt_pool_trim(ctx));
    clt_pool_stats s1 = stats_of(ctx);
    ck_assert_uint_eq(s1.bytes_cached, 0);
    ck_assert_uint_eq(s1.bytes_in_use, s0.bytes_in_use);
    ck_assert_uint_eq(s1.hits, s0.hits);
    ck_assert_uint_eq(s1.misses, s0.misses);
    /* Nothing cached any more: the same size is a miss now. */
    clt_tensor *again = make_u8(ctx, 100);
    ck_assert_uint_eq(stats_of(ctx).misses, s0.misses + 1);
    clt_tensor_free(again);
    clt_tensor_free(keep);

    ck_assert_int_eq(clt_pool_trim(NULL), CLT_ERR_INVALID_ARGUMENT);
    ck_assert_str_ne(clt_last_error(NULL), "");
    clt_pool_stats s;
    ck_assert_int_eq(clt_pool_get_stats(NULL, &s), CLT_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(clt_pool_get_stats(ctx, NULL), CLT_ERR_INVALID_ARGUMENT);
    tu_context_free(ctx);
}
END_TEST

static clt_context *capped_context(uint64_t limit)
{
    clt_context_options opts;
    clt_context_options_init(&opts);
    opts.memory_limit = limit;
    return tu_context_with(&opts);
}

START_TEST(cap_refuses_and_context_survives)
{
    const uint64_t limit = 1 << 20;
    clt_context *ctx = capped_context(limit);
    ck_assert_uint_eq(stats_of(ctx).limit, limit);
    clt_context_limits lim;
    TU_OK(clt_context_get_limits(ctx, &lim));
    ck_assert_uint_eq(lim.memory_limit, limit);

    clt_tensor *a = make_u8(ctx, 512 << 10);
    clt_pool_stats before = stats_of(ctx);
    clt_tensor *big = (clt_tensor *)0x1;
    int64_t n = 768 << 10;
    ck_assert_int_eq(clt_tensor_create(ctx, CLT_U8, 1, &n, &big), CLT_ERR_OUT_OF_DEVICE_MEMORY);
    ck_assert_ptr_null(big);
    ck_assert_msg(strstr(clt_last_error(ctx), "1048576") != NULL, "message: %s", clt_last_error(ctx));
    clt_pool_stats after = stats_of(ctx);
    assert_stats_equal(&before, &after);

    /* Still usable: a tensor that fits works, and holds data. */
    clt_tensor *small = make_u8(ctx, 256 << 10);
    unsigned char *data = malloc(256 << 10), *back = malloc(256 << 10);
    tu_random_bytes(data, 256 << 10);
    TU_OK(clt_tensor_write(small, data, 256 << 10));
    TU_OK(clt_tensor_read(small, back, 256 << 10));
    ck_assert_int_eq(memcmp(data, back, 256 << 10), 0);
    ck_assert_uint_le(stats_of(ctx).bytes_in_use + stats_of(ctx).bytes_cached, limit);
    free(data);
    free(back);
    clt_tensor_free(small);
    clt_tensor_free(a);
    tu_context_free(ctx);
}
END_TEST

START_TEST(cap_trims_cache_then_succeeds)
{
    const uint64_t limit = 1 << 20;
    clt_context *ctx = capped_context(limit);
    clt_tensor_free(make_u8(ctx, 600 << 10));
    clt_tensor_free(make_u8(ctx, 1000)); /* a small cached block */
    clt_pool_stats s0 = stats_of(ctx);
    ck_assert_uint_eq(s0.bytes_cached, clt__pool_class_bytes(600 << 10) + 1024);
    /* 700 KiB is another class and does not fit next to the cache: the cache gives way. */
    clt_tensor *b = make_u8(ctx, 700 << 10);
    clt_pool_stats s1 = stats_of(ctx);
    ck_assert_uint_eq(s1.misses, s0.misses + 1);
    ck_assert_uint_eq(s1.bytes_in_use, s0.bytes_in_use + clt__pool_class_bytes(700 << 10));
    ck_assert_uint_lt(s1.bytes_cached, s0.bytes_cached);
    ck_assert_uint_le(s1.bytes_in_use + s1.bytes_cached, limit);
    clt_tensor_free(b);
    tu_context_free(ctx);
}
END_TEST

START_TEST(cap_from_environment)
{
    setenv("CLT_MEMORY_LIMIT", "1M", 1);
    clt_context *ctx = tu_context();
    ck_assert_uint_eq(stats_of(ctx).limit, 1 << 20);
    clt_tensor *t = (clt_tensor *)0x1;
    int64_t n = 2 << 20;
    ck_assert_int_eq(clt_tensor_create(ctx, CLT_U8, 1, &n, &t), CLT_ERR_OUT_OF_DEVICE_MEMORY);
    ck_assert_ptr_null(t);
    clt_tensor_free(make_u8(ctx, 1000));
    tu_context_free(ctx);

    /* The option wins over the environment. */
    ctx = capped_context(4 << 20);
    ck_assert_uint_eq(stats_of(ctx).limit, 4 << 20);
    clt_tensor_free(make_u8(ctx, n));
    tu_context_free(ctx);

    setenv("CLT_MEMORY_LIMIT", "lots", 1);
    clt_context *bad = (clt_context *)0x1;
    ck_assert_int_eq(clt_context_create(NULL, &bad), CLT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(bad);
    unsetenv("CLT_MEMORY_LIMIT");
}
END_TEST

START_TEST(over_device_max_alloc)
{
    clt_context *ctx = tu_context();
    clt_device_info info;
    TU_OK(clt_context_device_info(ctx, &info));
    ck_assert_uint_gt(info.max_alloc_bytes, 0);
    clt_pool_stats before = stats_of(ctx);
    int64_t n = (int64_t)info.max_alloc_bytes + 1;
    clt_tensor *t = (clt_tensor *)0x1;
    ck_assert_int_eq(clt_tensor_create(ctx, CLT_U8, 1, &n, &t), CLT_ERR_OUT_OF_DEVICE_MEMORY);
    ck_assert_ptr_null(t);
    ck_assert_msg(strstr(clt_last_error(ctx), "bytes") != NULL, "message: %s", clt_last_error(ctx));
    clt_pool_stats after = stats_of(ctx);
    assert_stats_equal(&before, &after);
    clt_tensor_free(make_u8(ctx, 10));
    tu_context_free(ctx);
}
END_TEST

START_TEST(context_free_releases_live_blocks)
{
    clt_context *ctx = tu_context();
    clt_block *blk = NULL;
    TU_OK(clt__pool_alloc(ctx, 4096, &blk));
    TU_OK(clt__pool_alloc(ctx, 100, &blk));
    tu_context_free(ctx); /* must release both without a crash */
}
END_TEST

Suite *memory_suite(void)
{
    Suite *s = suite_create("memory");
    TCase *tc = tcase_create("pool");
    tcase_add_test(tc, class_rounding_properties);
    tcase_add_test(tc, reuse_and_stats);
    tcase_add_test(tc, empty_request_gets_smallest_class);
    tcase_add_test(tc, trim_empties_cache);
    tcase_add_test(tc, cap_refuses_and_context_survives);
    tcase_add_test(tc, cap_trims_cache_then_succeeds);
    tcase_add_test(tc, cap_from_environment);
    tcase_add_test(tc, over_device_max_alloc);
    tcase_add_test(tc, context_free_releases_live_blocks);
    suite_add_tcase(s, tc);
    return s;
}
