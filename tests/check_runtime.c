/* Runtime contract: version, status and dtype names, device discovery and device selection
 * (clt_device_select and the CLT_DEVICE variable). Contexts are in check_context.c. */
#include <check.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cltensor_cl.h"
#include "util/test_util.h"


/* The context-less error message must mention `needle` (the call or the offending value). */
#define EXPECT_MESSAGE(needle)                                                                      \
    ck_assert_msg(strstr(clt_last_error(NULL), (needle)) != NULL,                                   \
                  "clt_last_error(NULL) = \"%s\" does not mention \"%s\"", clt_last_error(NULL),   \
                  (needle))

static int contains_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n)
            return 1;
    }
    return n == 0;
}

static int device_count(void)
{
    int n = -1;
    TU_EXPECT_STATUS(clt_device_count(&n), CLT_SUCCESS);
    ck_assert_int_ge(n, 1);
    return n;
}

static clt_device_info device_info(int i)
{
    clt_device_info info;
    TU_EXPECT_STATUS(clt_device_get_info(i, &info), CLT_SUCCESS);
    return info;
}

/* Index of the first device of a type, or -1. */
static int first_of_type(clt_device_type type)
{
    int n = device_count();
    for (int i = 0; i < n; i++)
        if (device_info(i).type == type)
            return i;
    return -1;
}

static int first_pocl(void)
{
    int n = device_count();
    for (int i = 0; i < n; i++) {
        clt_device_info info = device_info(i);
        if (info.vendor == CLT_VENDOR_POCL || contains_nocase(info.platform_name, "portable computing"))
            return i;
    }
    return -1;
}

/* Save and restore one environment variable around a test (Check forks, but be tidy anyway). */

START_TEST(version_matches_macros)
{
    char expect[64];
    snprintf(expect, sizeof expect, "%d.%d.%d", CLT_VERSION_MAJOR, CLT_VERSION_MINOR,
             CLT_VERSION_PATCH);
    ck_assert_str_eq(CLT_VERSION_STRING, expect);
    ck_assert_ptr_nonnull(clt_version_string());
    ck_assert_str_eq(clt_version_string(), CLT_VERSION_STRING);
}
END_TEST

START_TEST(status_strings_are_constant_names)
{
    static const struct {
        clt_status st;
        const char *name;
    } table[] = {
        {CLT_SUCCESS, "CLT_SUCCESS"},
        {CLT_ERR_INVALID_ARGUMENT, "CLT_ERR_INVALID_ARGUMENT"},
        {CLT_ERR_INVALID_DTYPE, "CLT_ERR_INVALID_DTYPE"},
        {CLT_ERR_INVALID_SHAPE, "CLT_ERR_INVALID_SHAPE"},
        {CLT_ERR_SIZE_OVERFLOW, "CLT_ERR_SIZE_OVERFLOW"},
        {CLT_ERR_DEVICE_NOT_FOUND, "CLT_ERR_DEVICE_NOT_FOUND"},
        {CLT_ERR_OUT_OF_DEVICE_MEMORY, "CLT_ERR_OUT_OF_DEVICE_MEMORY"},
        {CLT_ERR_OUT_OF_HOST_MEMORY, "CLT_ERR_OUT_OF_HOST_MEMORY"},
        {CLT_ERR_BUILD_FAILED, "CLT_ERR_BUILD_FAILED"},
        {CLT_ERR_OPENCL, "CLT_ERR_OPENCL"},
        {CLT_ERR_NOT_READY, "CLT_ERR_NOT_READY"},
        {CLT_ERR_UNSUPPORTED, "CLT_ERR_UNSUPPORTED"},
        {CLT_ERR_CONTEXT_MISMATCH, "CLT_ERR_CONTEXT_MISMATCH"},
        {CLT_ERR_IO, "CLT_ERR_IO"},
        {CLT_ERR_INVALID_AXIS, "CLT_ERR_INVALID_AXIS"},
        {CLT_ERR_ALIASING, "CLT_ERR_ALIASING"},
        {CLT_ERR_COMM, "CLT_ERR_COMM"},
    };
    /* Stable values: the table order is the numbering. */
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        ck_assert_int_eq((int)table[i].st, (int)i);
        const char *s = clt_status_string(table[i].st);
        ck_assert_ptr_nonnull(s);
        ck_assert_str_eq(s, table[i].name);
    }
    const int unknown[] = {17, 18, 99, -1, 1 << 30};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        const char *s = clt_status_string((clt_status)unknown[i]);
        ck_assert_ptr_nonnull(s);
        ck_assert_str_eq(s, "CLT_ERR_UNKNOWN");
    }
}
END_TEST

START_TEST(dtype_sizes_and_names)
{
    ck_assert_uint_eq(clt_dtype_size(CLT_F32), 4);
    ck_assert_uint_eq(clt_dtype_size(CLT_F16), 2);
    ck_assert_uint_eq(clt_dtype_size(CLT_I32), 4);
    ck_assert_uint_eq(clt_dtype_size(CLT_U8), 1);
    ck_assert_uint_eq(clt_dtype_size(CLT_C64), 8);
    ck_assert_str_eq(clt_dtype_name(CLT_C64), "c64");
    ck_assert_str_eq(clt_dtype_name(CLT_F32), "f32");
    ck_assert_str_eq(clt_dtype_name(CLT_F16), "f16");
    ck_assert_str_eq(clt_dtype_name(CLT_I32), "i32");
    ck_assert_str_eq(clt_dtype_name(CLT_U8), "u8");
    ck_assert_uint_eq(clt_dtype_size(CLT_BF16), 2);
    ck_assert_str_eq(clt_dtype_name(CLT_BF16), "bf16");
    const int bad[] = {0, 7, 99, -1};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_uint_eq(clt_dtype_size((clt_dtype)bad[i]), 0);
        ck_assert_ptr_nonnull(clt_dtype_name((clt_dtype)bad[i]));
        ck_assert_str_eq(clt_dtype_name((clt_dtype)bad[i]), "unknown");
    }
}
END_TEST

START_TEST(device_count_and_null)
{
    ck_assert_int_ge(device_count(), 1);
    TU_EXPECT_STATUS(clt_device_count(NULL), CLT_ERR_INVALID_ARGUMENT);
    EXPECT_MESSAGE("clt_device_count");
}
END_TEST

START_TEST(device_info_is_filled)
{
    int n = device_count();
    for (int i = 0; i < n; i++) {
        clt_device_info info;
        memset(&info, 0xAB, sizeof info);
        TU_EXPECT_STATUS(clt_device_get_info(i, &info), CLT_SUCCESS);
        ck_assert_int_eq(info.global_index, i);
        ck_assert_int_ge(info.platform_index, 0);
        ck_assert_int_ge(info.device_index, 0);
        /* Strings are terminated inside their arrays and not empty. */
        ck_assert_ptr_nonnull(memchr(info.platform_name, 0, sizeof info.platform_name));
        ck_assert_ptr_nonnull(memchr(info.device_name, 0, sizeof info.device_name));
        ck_assert_ptr_nonnull(memchr(info.device_version, 0, sizeof info.device_version));
        ck_assert_ptr_nonnull(memchr(info.opencl_c_version, 0, sizeof info.opencl_c_version));
        ck_assert_uint_gt(strlen(info.platform_name), 0);
        ck_assert_uint_gt(strlen(info.platform_version), 0);
        ck_assert_uint_gt(strlen(info.device_name), 0);
        ck_assert_uint_gt(strlen(info.device_version), 0);
        ck_assert_uint_gt(strlen(info.opencl_c_version), 0);
        ck_assert_uint_gt(info.compute_units, 0);
        ck_assert_uint_gt(info.max_work_group_size, 0);
        ck_assert_uint_gt(info.preferred_work_group_multiple, 0);
        ck_assert_uint_gt(info.local_mem_bytes, 0);
        ck_assert_uint_gt(info.global_mem_bytes, 0);
        ck_assert_uint_gt(info.max_alloc_bytes, 0);
        ck_assert_uint_le(info.max_alloc_bytes, info.global_mem_bytes);
        if (info.vendor != CLT_VENDOR_NVIDIA)
            ck_assert_int_eq(info.has_inline_ptx, 0);
    }
}
END_TEST

/* The flat list is clGetPlatformIDs order, then clGetDeviceIDs order, and the probed values are
 * what OpenCL reports. */
START_TEST(device_info_matches_opencl)
{
    cl_uint np = 0;
    ck_assert_int_eq(clGetPlatformIDs(0, NULL, &np), CL_SUCCESS);
    cl_platform_id plats[16];
    if (np > 16)
        np = 16;
    ck_assert_int_eq(clGetPlatformIDs(np, plats, NULL), CL_SUCCESS);
    int g = 0;
    for (cl_uint p = 0; p < np; p++) {
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) != CL_SUCCESS)
            continue;
        cl_device_id devs[32];
        if (nd > 32)
            nd = 32;
        ck_assert_int_eq(clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, nd, devs, NULL), CL_SUCCESS);
        for (cl_uint d = 0; d < nd; d++, g++) {
            clt_device_info info = device_info(g);
            ck_assert_int_eq(info.platform_index, (int)p);
            ck_assert_int_eq(info.device_index, (int)d);
            char name[256];
            ck_assert_int_eq(clGetDeviceInfo(devs[d], CL_DEVICE_NAME, sizeof name, name, NULL),
                             CL_SUCCESS);
            ck_assert_str_eq(info.device_name, name);
            cl_uint cu;
            clGetDeviceInfo(devs[d], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu, NULL);
            ck_assert_uint_eq(info.compute_units, cu);
            size_t wg;
            clGetDeviceInfo(devs[d], CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof wg, &wg, NULL);
            ck_assert_uint_eq(info.max_work_group_size, wg);
            cl_ulong lm, gm, ma;
            clGetDeviceInfo(devs[d], CL_DEVICE_LOCAL_MEM_SIZE, sizeof lm, &lm, NULL);
            clGetDeviceInfo(devs[d], CL_DEVICE_GLOBAL_MEM_SIZE, sizeof gm, &gm, NULL);
            clGetDeviceInfo(devs[d], CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof ma, &ma, NULL);
            ck_assert_uint_eq(info.local_mem_bytes, lm);
            ck_assert_uint_eq(info.global_mem_bytes, gm);
            ck_assert_uint_eq(info.max_alloc_bytes, ma);
            cl_device_local_mem_type lt;
            clGetDeviceInfo(devs[d], CL_DEVICE_LOCAL_MEM_TYPE, sizeof lt, &lt, NULL);
            ck_assert_int_eq(info.local_mem_is_global != 0, lt == CL_GLOBAL);
            cl_device_type type;
            clGetDeviceInfo(devs[d], CL_DEVICE_TYPE, sizeof type, &type, NULL);
            if (type & CL_DEVICE_TYPE_GPU)
                ck_assert_int_eq(info.type, CLT_DEVICE_GPU);
            else if (type & CL_DEVICE_TYPE_CPU)
                ck_assert_int_eq(info.type, CLT_DEVICE_CPU);
            else if (type & CL_DEVICE_TYPE_ACCELERATOR)
                ck_assert_int_eq(info.type, CLT_DEVICE_ACCELERATOR);
            if (type & CL_DEVICE_TYPE_CPU)
                ck_assert_int_ne(info.unified_memory, 0); /* "host and device share memory (CPU)" */
            char ext[8192] = "";
            clGetDeviceInfo(devs[d], CL_DEVICE_EXTENSIONS, sizeof ext, ext, NULL);
            ck_assert_int_eq(info.has_fp64 != 0, strstr(ext, "cl_khr_fp64") != NULL);
            char pname[256];
            clGetPlatformInfo(plats[p], CL_PLATFORM_NAME, sizeof pname, pname, NULL);
            ck_assert_str_eq(info.platform_name, pname);
            if (contains_nocase(pname, "portable computing language"))
                ck_assert_int_eq(info.vendor, CLT_VENDOR_POCL);
        }
    }
    ck_assert_int_eq(g, device_count());
}
END_TEST

START_TEST(device_info_out_of_range)
{
    int n = device_count();
    const int bad[] = {-1, n, n + 1, 1 << 30, -(1 << 30)};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        clt_device_info info, before;
        memset(&info, 0x5A, sizeof info);
        before = info;
        TU_EXPECT_STATUS(clt_device_get_info(bad[i], &info), CLT_ERR_INVALID_ARGUMENT);
        EXPECT_MESSAGE("clt_device_get_info");
        ck_assert_msg(memcmp(&info, &before, sizeof info) == 0,
                      "clt_device_get_info(%d) modified its output on failure", bad[i]);
    }
    TU_EXPECT_STATUS(clt_device_get_info(0, NULL), CLT_ERR_INVALID_ARGUMENT);
    EXPECT_MESSAGE("clt_device_get_info");
}
END_TEST

static void expect_select(const char *sel, int want)
{
    int got = -7;
    clt_status st = clt_device_select(sel, &got);
    ck_assert_msg(st == CLT_SUCCESS, "clt_device_select(\"%s\") -> %s: %s", sel ? sel : "(null)",
                  clt_status_string(st), clt_last_error(NULL));
    ck_assert_msg(got == want, "clt_device_select(\"%s\") = %d, expected %d", sel ? sel : "(null)",
                  got, want);
}

static void expect_not_found(const char *sel)
{
    int got = -7;
    clt_status st = clt_device_select(sel, &got);
    ck_assert_msg(st == CLT_ERR_DEVICE_NOT_FOUND, "clt_device_select(\"%s\") -> %s (index %d)", sel,
                  clt_status_string(st), got);
    ck_assert_msg(got == -7, "clt_device_select(\"%s\") wrote %d on failure", sel, got);
    EXPECT_MESSAGE(sel);
}

START_TEST(select_by_index_and_pair)
{
    int n = device_count();
    expect_select("0", 0);
    expect_select("0:0", 0);
    char buf[32];
    for (int i = 0; i < n; i++) {
        clt_device_info info = device_info(i);
        snprintf(buf, sizeof buf, "%d", i);
        expect_select(buf, i);
        snprintf(buf, sizeof buf, "%d:%d", info.platform_index, info.device_index);
        expect_select(buf, i);
    }
}
END_TEST

START_TEST(select_out_of_range)
{
    int n = device_count();
    cl_uint np = 0;
    ck_assert_int_eq(clGetPlatformIDs(0, NULL, &np), CL_SUCCESS);
    char buf[32];
    snprintf(buf, sizeof buf, "%d", n);
    expect_not_found(buf);
    expect_not_found("99");
    snprintf(buf, sizeof buf, "%u:0", np);
    expect_not_found(buf);
    expect_not_found("5:0");
    /* one past the last device of platform 0 */
    int on_platform0 = 0;
    for (int i = 0; i < n; i++)
        on_platform0 += device_info(i).platform_index == 0;
    snprintf(buf, sizeof buf, "0:%d", on_platform0);
    expect_not_found(buf);
    expect_not_found("0:9");
    expect_not_found("nonsense-device");
}
END_TEST

START_TEST(select_by_type)
{
    int cpu = first_of_type(CLT_DEVICE_CPU);
    int gpu = first_of_type(CLT_DEVICE_GPU);
    int acc = first_of_type(CLT_DEVICE_ACCELERATOR);
    if (cpu >= 0)
        expect_select("cpu", cpu);
    else
        expect_not_found("cpu");
    if (gpu >= 0)
        expect_select("gpu", gpu);
    else
        expect_not_found("gpu");
    if (acc >= 0)
        expect_select("accelerator", acc);
    else
        expect_not_found("accelerator");
}
END_TEST

/* On this CI POCL is the (CPU) device: "cpu" and "pocl" must both find it. */
START_TEST(select_pocl_case_insensitive)
{
    int pocl = first_pocl();
    if (pocl < 0)
        return; /* not a POCL machine */
    ck_assert_int_eq(device_info(pocl).type, CLT_DEVICE_CPU);
    expect_select("cpu", first_of_type(CLT_DEVICE_CPU));
    expect_select("pocl", pocl);
    expect_select("POCL", pocl);
    expect_select("PoCl", pocl);
}
END_TEST

/* A substring of "platform name / device name" in any case, including one across the " / ". */
START_TEST(select_by_name_substring)
{
    int n = device_count();
    for (int i = 0; i < n; i++) {
        clt_device_info info = device_info(i);
        /* The last 3 chars of the platform name, the separator, the first 3 of the device name. */
        char sub[300];
        size_t pl = strlen(info.platform_name);
        snprintf(sub, sizeof sub, "%s / %.3s", info.platform_name + (pl > 3 ? pl - 3 : 0),
                 info.device_name);
        for (char *c = sub; *c; c++)
            *c = (char)((c - sub) % 2 ? toupper((unsigned char)*c) : tolower((unsigned char)*c));
        int want = -1;
        for (int j = 0; j < n && want < 0; j++) {
            clt_device_info o = device_info(j);
            char ob[300];
            snprintf(ob, sizeof ob, "%s / %s", o.platform_name, o.device_name);
            if (contains_nocase(ob, sub))
                want = j;
        }
        expect_select(sub, want);
        int got = -1;
        TU_EXPECT_STATUS(clt_device_select(info.device_name, &got), CLT_SUCCESS);
        ck_assert_int_le(got, i);
        ck_assert_str_eq(device_info(got).device_name, info.device_name);
    }
}
END_TEST

START_TEST(select_default_is_gpu_then_cpu)
{
    char *saved = tu_env_save("CLT_DEVICE");
    unsetenv("CLT_DEVICE");
    int gpu = first_of_type(CLT_DEVICE_GPU);
    int cpu = first_of_type(CLT_DEVICE_CPU);
    int want = gpu >= 0 ? gpu : cpu >= 0 ? cpu : 0;
    expect_select(NULL, want);
    expect_select("", want);
    TU_EXPECT_STATUS(clt_device_select("0", NULL), CLT_ERR_INVALID_ARGUMENT);
    EXPECT_MESSAGE("clt_device_select");
    tu_env_restore("CLT_DEVICE", saved);
}
END_TEST

START_TEST(select_honours_clt_device_env)
{
    char *saved = tu_env_save("CLT_DEVICE");
    int n = device_count();
    char buf[32];
    snprintf(buf, sizeof buf, "%d", n - 1);
    setenv("CLT_DEVICE", buf, 1);
    expect_select(NULL, n - 1);
    expect_select("", n - 1);
    expect_select("0", 0); /* an explicit selection ignores the variable */
    setenv("CLT_DEVICE", "nonsense-device", 1);
    int got = -7;
    TU_EXPECT_STATUS(clt_device_select(NULL, &got), CLT_ERR_DEVICE_NOT_FOUND);
    ck_assert_int_eq(got, -7);
    EXPECT_MESSAGE("nonsense-device");
    expect_select("0", 0);
    tu_env_restore("CLT_DEVICE", saved);
}
END_TEST

Suite *runtime_suite(void)
{
    Suite *s = suite_create("runtime");
    TCase *tc = tcase_create("names");
    tcase_add_test(tc, version_matches_macros);
    tcase_add_test(tc, status_strings_are_constant_names);
    tcase_add_test(tc, dtype_sizes_and_names);
    suite_add_tcase(s, tc);
    tc = tcase_create("devices");
    tcase_add_test(tc, device_count_and_null);
    tcase_add_test(tc, device_info_is_filled);
    tcase_add_test(tc, device_info_matches_opencl);
    tcase_add_test(tc, device_info_out_of_range);
    suite_add_tcase(s, tc);
    tc = tcase_create("select");
    tcase_add_test(tc, select_by_index_and_pair);
    tcase_add_test(tc, select_out_of_range);
    tcase_add_test(tc, select_by_type);
    tcase_add_test(tc, select_pocl_case_insensitive);
    tcase_add_test(tc, select_by_name_substring);
    tcase_add_test(tc, select_default_is_gpu_then_cpu);
    tcase_add_test(tc, select_honours_clt_device_env);
    suite_add_tcase(s, tc);
    return s;
}
