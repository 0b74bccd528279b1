/* Context contract: creation options and their environment variables, limits under each profile,
 * NULL arguments everywhere, independent contexts, error messages. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/test_util.h"




/* clt_context_create must fail with `want`, leave *out NULL and say why, mentioning `needle`. */
static void expect_create_fails(const clt_context_options *opts, clt_status want, const char *needle)
{
    clt_context *ctx = (clt_context *)&want; /* a non-NULL sentinel that must be overwritten */
    clt_status st = clt_context_create(opts, &ctx);
    ck_assert_msg(st == want, "clt_context_create -> %s, expected %s", clt_status_string(st),
                  clt_status_string(want));
    ck_assert_ptr_null(ctx);
    TU_EXPECT_MESSAGE(clt_last_error(NULL), needle);
}

static clt_context_limits limits_of(const clt_context *ctx)
{
    clt_context_limits l;
    memset(&l, 0xCD, sizeof l);
    TU_OK(clt_context_get_limits(ctx, &l));
    return l;
}

static clt_device_info info_of(const clt_context *ctx)
{
    clt_device_info info;
    TU_OK(clt_context_device_info(ctx, &info));
    return info;
}

START_TEST(options_init_means_environment)
{
    clt_context_options o;
    memset(&o, 0xAB, sizeof o);
    clt_context_options_init(&o);
    ck_assert_ptr_null(o.device);
    ck_assert_ptr_null(o.profile);
    ck_assert_uint_eq(o.memory_limit, 0);
    ck_assert_ptr_null(o.kernel_dir);
    ck_assert_ptr_null(o.cache_dir);
    clt_context_options_init(NULL); /* must not crash */
}
END_TEST

START_TEST(create_unknown_device)
{
    clt_context_options o;
    clt_context_options_init(&o);
    o.device = "nonsense-device";
    expect_create_fails(&o, CLT_ERR_DEVICE_NOT_FOUND, "nonsense-device");
    o.device = "99";
    expect_create_fails(&o, CLT_ERR_DEVICE_NOT_FOUND, "99");
}
END_TEST

START_TEST(create_honours_clt_device_env)
{
    char *saved = tu_env_save("CLT_DEVICE");
    int n = 0;
    TU_OK(clt_device_count(&n));
    char last[16];
    snprintf(last, sizeof last, "%d", n - 1);
    setenv("CLT_DEVICE", last, 1);
    clt_context *ctx = tu_context_with(NULL);
    ck_assert_int_eq(info_of(ctx).global_index, n - 1);
    tu_context_free(ctx);

    setenv("CLT_DEVICE", "nonsense-device", 1);
    expect_create_fails(NULL, CLT_ERR_DEVICE_NOT_FOUND, "nonsense-device");
    /* options.device wins over the variable */
    clt_context_options o;
    clt_context_options_init(&o);
    o.device = "0";
    ctx = tu_context_with(&o);
    ck_assert_int_eq(info_of(ctx).global_index, 0);
    clt_device_info direct;
    TU_OK(clt_device_get_info(0, &direct));
    ck_assert_str_eq(info_of(ctx).device_name, direct.device_name);
    tu_context_free(ctx);
    tu_env_restore("CLT_DEVICE", saved);
}
END_TEST

START_TEST(create_bad_profile)
{
    char *saved = tu_env_save("CLT_DEVICE_PROFILE");
    clt_context_options o;
    clt_context_options_init(&o);
    o.profile = "gfx9000";
    expect_create_fails(&o, CLT_ERR_INVALID_ARGUMENT, "gfx9000");
    ck_assert_msg(strncmp(clt_last_error(NULL), "clt_context_create: ", 20) == 0,
                  "message \"%s\" does not start with the call's name", clt_last_error(NULL));
    setenv("CLT_DEVICE_PROFILE", "gfx9000", 1);
    expect_create_fails(NULL, CLT_ERR_INVALID_ARGUMENT, "gfx9000");
    o.profile = "native"; /* the option wins, the bad variable is not consulted */
    clt_context *ctx = tu_context_with(&o);
    ck_assert_str_eq(limits_of(ctx).profile, "native");
    tu_context_free(ctx);
    tu_env_restore("CLT_DEVICE_PROFILE", saved);
}
END_TEST

START_TEST(create_bad_memory_limit)
{
    char *saved = tu_env_save("CLT_MEMORY_LIMIT");
    const char *bad[] = {"12Q", "-5", "1.5G", "K", "99999999999G", "18446744073709551616"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("CLT_MEMORY_LIMIT", bad[i], 1);
        expect_create_fails(NULL, CLT_ERR_INVALID_ARGUMENT, bad[i]);
    }
    /* options.memory_limit wins: the variable is not consulted */
    setenv("CLT_MEMORY_LIMIT", "12Q", 1);
    clt_context_options o;
    clt_context_options_init(&o);
    o.memory_limit = 3u << 20;
    clt_context *ctx = tu_context_with(&o);
    ck_assert_uint_eq(limits_of(ctx).memory_limit, 3u << 20);
    tu_context_free(ctx);
    tu_env_restore("CLT_MEMORY_LIMIT", saved);
}
END_TEST

START_TEST(memory_limit_suffixes)
{
    char *saved = tu_env_save("CLT_MEMORY_LIMIT");
    static const struct {
        const char *text;
        uint64_t bytes;
    } table[] = {{"123457", 123457}, {"64K", 64ull << 10}, {"512M", 512ull << 20}, {"2G", 2ull << 30}};
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        setenv("CLT_MEMORY_LIMIT", table[i].text, 1);
        clt_context *ctx = tu_context_with(NULL);
        ck_assert_msg(limits_of(ctx).memory_limit == table[i].bytes, "CLT_MEMORY_LIMIT=%s gave %llu",
                      table[i].text, (unsigned long long)limits_of(ctx).memory_limit);
        clt_pool_stats ps;
        TU_OK(clt_pool_get_stats(ctx, &ps));
        ck_assert_uint_eq(ps.limit, table[i].bytes);
        tu_context_free(ctx);
    }
    unsetenv("CLT_MEMORY_LIMIT");
    clt_context *ctx = tu_context_with(NULL);
    ck_assert_uint_eq(limits_of(ctx).memory_limit, 0);
    tu_context_free(ctx);
    tu_env_restore("CLT_MEMORY_LIMIT", saved);
}
END_TEST

START_TEST(limits_native_are_device_values)
{
    clt_context_options o;
    clt_context_options_init(&o);
    o.profile = "native";
    clt_context *ctx = tu_context_with(&o);
    clt_device_info info = info_of(ctx);
    clt_context_limits l = limits_of(ctx);
    ck_assert_str_eq(l.profile, "native");
    ck_assert_uint_eq(l.max_work_group_size, info.max_work_group_size);
    ck_assert_uint_eq(l.local_mem_budget, info.local_mem_bytes);
    ck_assert_int_eq(l.zero_copy != 0, info.unified_memory != 0);
    if (info.vendor == CLT_VENDOR_NVIDIA)
        ck_assert_uint_eq(l.wave_width, 32);
    else if (info.vendor == CLT_VENDOR_AMD && info.type == CLT_DEVICE_GPU)
        ck_assert_uint_eq(l.wave_width, 64);
    else
        ck_assert_uint_eq(l.wave_width, info.preferred_work_group_multiple);
    ck_assert_ptr_nonnull(memchr(l.kernel_dir, 0, sizeof l.kernel_dir));
    ck_assert_ptr_nonnull(memchr(l.cache_dir, 0, sizeof l.cache_dir));
    tu_context_free(ctx);

    /* Unset variable and no option: native. */
    char *saved = tu_env_save("CLT_DEVICE_PROFILE");
    unsetenv("CLT_DEVICE_PROFILE");
    ctx = tu_context_with(NULL);
    ck_assert_str_eq(limits_of(ctx).profile, "native");
    tu_context_free(ctx);
    tu_env_restore("CLT_DEVICE_PROFILE", saved);
}
END_TEST

static void check_gfx902_limits(const clt_context *ctx)
{
    clt_device_info info = info_of(ctx);
    clt_context_limits l = limits_of(ctx);
    ck_assert_str_eq(l.profile, "gfx902");
    uint64_t wg = info.max_work_group_size < 256 ? info.max_work_group_size : 256;
    ck_assert_uint_le(l.max_work_group_size, 256);
    ck_assert_uint_eq(l.max_work_group_size, wg);
    ck_assert_uint_eq(l.wave_width, 64);
    uint64_t lm = info.local_mem_bytes < 65536 ? info.local_mem_bytes : 65536;
    ck_assert_uint_eq(l.local_mem_budget, lm);
    ck_assert_int_eq(l.zero_copy, 1);
}

START_TEST(limits_gfx902_by_option_and_env)
{
    char *saved = tu_env_save("CLT_DEVICE_PROFILE");
    unsetenv("CLT_DEVICE_PROFILE");
    clt_context_options o;
    clt_context_options_init(&o);
    o.profile = "gfx902";
    clt_context *ctx = tu_context_with(&o);
    check_gfx902_limits(ctx);
    tu_context_free(ctx);

    setenv("CLT_DEVICE_PROFILE", "gfx902", 1);
    ctx = tu_context_with(NULL);
    check_gfx902_limits(ctx);
    tu_context_free(ctx);
    o.profile = "native"; /* the option wins over the variable */
    ctx = tu_context_with(&o);
    ck_assert_str_eq(limits_of(ctx).profile, "native");
    tu_context_free(ctx);
    tu_env_restore("CLT_DEVICE_PROFILE", saved);
}
END_TEST

START_TEST(limits_directories)
{
    char *saved_cache = tu_env_save("CLT_CACHE_DIR"), *saved_xdg = tu_env_save("XDG_CACHE_HOME");
    char *saved_home = tu_env_save("HOME"), *saved_kdir = tu_env_save("CLT_KERNEL_DIR");
    char *dir = tu_make_temp_dir();
    char expect[600];
    clt_context_options o;
    clt_context_options_init(&o);

    o.cache_dir = "off";
    clt_context *ctx = tu_context_with(&o);
    ck_assert_str_eq(limits_of(ctx).cache_dir, "");
    tu_context_free(ctx);

    o.cache_dir = dir;
    ctx = tu_context_with(&o);
    ck_assert_str_eq(limits_of(ctx).cache_dir, dir);
    tu_context_free(ctx);

    o.cache_dir = NULL;
    setenv("CLT_CACHE_DIR", dir, 1);
    ctx = tu_context_with(&o);
    ck_assert_str_eq(limits_of(ctx).cache_dir, dir);
    tu_context_free(ctx);

    unsetenv("CLT_CACHE_DIR");
    setenv("XDG_CACHE_HOME", dir, 1);
    ctx = tu_context_with(&o);
    snprintf(expect, sizeof expect, "%s/cltensor", dir);
    ck_assert_str_eq(limits_of(ctx).cache_dir, expect);
    tu_context_free(ctx);

    unsetenv("XDG_CACHE_HOME");
    setenv("HOME", dir, 1);
    ctx = tu_context_with(&o);
    snprintf(expect, sizeof expect, "%s/.cache/cltensor", dir);
    ck_assert_str_eq(limits_of(ctx).cache_dir, expect);
    tu_context_free(ctx);

    unsetenv("CLT_KERNEL_DIR");
    o.cache_dir = "off";
    ctx = tu_context_with(&o);
    ck_assert_str_eq(limits_of(ctx).kernel_dir, "");
    tu_context_free(ctx);
    o.kernel_dir = dir;
    ctx = tu_context_with(&o);
    ck_assert_str_eq(limits_of(ctx).kernel_dir, dir);
    tu_context_free(ctx);

    tu_remove_dir(dir);
    free(dir);
    tu_env_restore("CLT_CACHE_DIR", saved_cache);
    tu_env_restore("XDG_CACHE_HOME", saved_xdg);
    tu_env_restore("HOME", saved_home);
    tu_env_restore("CLT_KERNEL_DIR", saved_kdir);
}
END_TEST

START_TEST(context_device_info_is_selected_device)
{
    clt_context *ctx = tu_context();
    int sel = -1;
    TU_OK(clt_device_select(NULL, &sel));
    clt_device_info a = info_of(ctx), b;
    TU_OK(clt_device_get_info(sel, &b));
    ck_assert_int_eq(a.global_index, sel);
    ck_assert_str_eq(a.device_name, b.device_name);
    ck_assert_str_eq(a.platform_name, b.platform_name);
    ck_assert_uint_eq(a.local_mem_bytes, b.local_mem_bytes);
    tu_context_free(ctx);
}
END_TEST

START_TEST(free_null_is_noop)
{
    clt_context_free(NULL);
    clt_tensor_free(NULL);
    clt_future_free(NULL);
}
END_TEST

START_TEST(finish_and_flush_idle)
{
    clt_context *ctx = tu_context();
    TU_OK(clt_finish(ctx));
    TU_OK(clt_flush(ctx));
    TU_OK(clt_finish(ctx));
    ck_assert_str_eq(clt_last_error(ctx), "");
    tu_context_free(ctx);
}
END_TEST

START_TEST(two_contexts_are_independent)
{
    clt_context *a = tu_context(), *b = tu_context();
    ck_assert_ptr_ne(a, b);
    enum { N = 1013 };
    float da[N], db[N], back[N];
    tu_random_f32(da, N, -5.0f, 5.0f);
    tu_random_f32(db, N, -5.0f, 5.0f);
    int64_t shape[1] = {N};
    clt_tensor *ta = NULL, *tb = NULL;
    TU_OK(clt_tensor_create_from_host(a, CLT_F32, 1, shape, da, sizeof da, &ta));
    TU_OK(clt_tensor_create_from_host(b, CLT_F32, 1, shape, db, sizeof db, &tb));
    ck_assert_ptr_eq(clt_tensor_context(ta), a);
    ck_assert_ptr_eq(clt_tensor_context(tb), b);

    TU_EXPECT_STATUS(clt_tensor_copy(tb, ta), CLT_ERR_CONTEXT_MISMATCH);
    TU_EXPECT_STATUS(clt_tensor_copy(ta, tb), CLT_ERR_CONTEXT_MISMATCH);
    TU_OK(clt_tensor_read(tb, back, sizeof back));
    ck_assert_mem_eq(back, db, sizeof db);
    TU_OK(clt_tensor_read(ta, back, sizeof back));
    ck_assert_mem_eq(back, da, sizeof da);

    /* Pools are per context. */
    clt_pool_stats sa, sb;
    TU_OK(clt_pool_get_stats(a, &sa));
    TU_OK(clt_pool_get_stats(b, &sb));
    ck_assert_uint_ge(sa.bytes_in_use, sizeof da);
    ck_assert_uint_ge(sb.bytes_in_use, sizeof db);
    clt_tensor_free(ta);
    TU_OK(clt_pool_get_stats(b, &sb));
    ck_assert_uint_ge(sb.bytes_in_use, sizeof db);
    ck_assert_uint_eq(sb.bytes_cached, 0);

    /* Freeing one context leaves the other working. */
    tu_context_free(a);
    TU_OK(clt_tensor_fill(tb, 2.5));
    TU_OK(clt_tensor_read(tb, back, sizeof back));
    for (int i = 0; i < N; i++)
        ck_assert_float_eq(back[i], 2.5f);
    clt_tensor_free(tb);
    tu_context_free(b);
}
END_TEST

START_TEST(create_free_many_times)
{
    enum { N = 257 };
    float data[N], back[N];
    int64_t shape[1] = {N};
    for (int i = 0; i < 50; i++) {
        clt_context *ctx = tu_context();
        clt_tensor *t = NULL;
        tu_random_f32(data, N, -1.0f, 1.0f);
        TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, 1, shape, data, sizeof data, &t));
        TU_OK(clt_tensor_read(t, back, sizeof back));
        ck_assert_mem_eq(data, back, sizeof data);
        if (i % 2)
            clt_tensor_free(t); /* otherwise the context releases it */
        tu_context_free(ctx);
    }
    clt_context *ctx = tu_context();
    clt_pool_stats ps;
    TU_OK(clt_pool_get_stats(ctx, &ps));
    ck_assert_uint_eq(ps.bytes_in_use, 0);
    ck_assert_uint_eq(ps.bytes_cached, 0);
    ck_assert_uint_eq(ps.peak_bytes_in_use, 0);
    ck_assert_uint_eq(ps.hits, 0);
    ck_assert_uint_eq(ps.misses, 0);
    tu_context_free(ctx);
}
END_TEST

START_TEST(last_error_names_the_call)
{
    clt_context *ctx = tu_context();
    ck_assert_ptr_nonnull(clt_last_error(ctx));
    ck_assert_str_eq(clt_last_error(ctx), "");
    int64_t shape[2] = {3, -4};
    clt_tensor *t = NULL;
    TU_EXPECT_STATUS(clt_tensor_create(ctx, CLT_F32, 2, shape, &t), CLT_ERR_INVALID_SHAPE);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_tensor_create");
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "-4");
    TU_EXPECT_STATUS(clt_tensor_create(ctx, (clt_dtype)99, 2, shape, &t), CLT_ERR_INVALID_DTYPE);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "99");
    /* Another context's message is its own. */
    clt_context *other = tu_context();
    ck_assert_str_eq(clt_last_error(other), "");
    tu_context_free(other);
    tu_context_free(ctx);
}
END_TEST

static void *thread_last_error(void *arg)
{
    const char *msg = clt_last_error(NULL);
    return msg != NULL && msg[0] == 0 ? arg : NULL;
}

/* The context-less message belongs to the calling thread. */
START_TEST(last_error_null_is_per_thread)
{
    int idx;
    TU_EXPECT_STATUS(clt_device_select("nonsense-device", &idx), CLT_ERR_DEVICE_NOT_FOUND);
    ck_assert_str_ne(clt_last_error(NULL), "");
    pthread_t th;
    void *clean = NULL;
    ck_assert_int_eq(pthread_create(&th, NULL, thread_last_error, &idx), 0);
    ck_assert_int_eq(pthread_join(th, &clean), 0);
    ck_assert_msg(clean != NULL, "a new thread sees another thread's clt_last_error(NULL)");
    TU_EXPECT_MESSAGE(clt_last_error(NULL), "nonsense-device");
}
END_TEST

Suite *context_suite(void)
{
    Suite *s = suite_create("context");
    TCase *tc = tcase_create("options");
    tcase_add_test(tc, options_init_means_environment);
    tcase_add_test(tc, create_unknown_device);
    tcase_add_test(tc, create_honours_clt_device_env);
    tcase_add_test(tc, create_bad_profile);
    tcase_add_test(tc, create_bad_memory_limit);
    tcase_add_test(tc, memory_limit_suffixes);
    suite_add_tcase(s, tc);
    tc = tcase_create("limits");
    tcase_add_test(tc, limits_native_are_device_values);
    tcase_add_test(tc, limits_gfx902_by_option_and_env);
    tcase_add_test(tc, limits_directories);
    tcase_add_test(tc, context_device_info_is_selected_device);
    suite_add_tcase(s, tc);
    tc = tcase_create("lifecycle");
    tcase_add_test(tc, free_null_is_noop);
    tcase_add_test(tc, finish_and_flush_idle);
    tcase_add_test(tc, two_contexts_are_independent);
    tcase_add_test(tc, create_free_many_times);
    tcase_add_test(tc, last_error_names_the_call);
    tcase_add_test(tc, last_error_null_is_per_thread);
    suite_add_tcase(s, tc);
    return s;
}
