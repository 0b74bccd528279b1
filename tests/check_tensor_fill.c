/* clt_tensor_fill (conversion to every dtype: f16 round-to-nearest-even, integer truncation and
 * saturation) and clt_tensor_fill_uniform (range, determinism, distribution). */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cltensor_cl.h"
#include "ref/half_ref.h"
#include "util/test_util.h"


static const int64_t fill_sizes[] = {1, 7, 1000003};

static double random_double(double lo, double hi)
{
    double u = (double)(tu_rng_next() >> 11) * (1.0 / 9007199254740992.0);
    return lo + (hi - lo) * u;
}

/* What fill(value) must store, as the element's bytes. */
static void expected_element(clt_dtype dt, double v, unsigned char out[4])
{
    if (dt == CLT_F32) {
        float f = (float)v;
        memcpy(out, &f, 4);
    } else if (dt == CLT_F16) {
        uint16_t h = ref_float_to_half((float)v); /* callers pass values exact in float */
        memcpy(out, &h, 2);
    } else if (dt == CLT_I32) {
        int32_t i = v >= 2147483647.0 ? INT32_MAX : v <= -2147483648.0 ? INT32_MIN : (int32_t)v;
        memcpy(out, &i, 4);
    } else {
        uint8_t u = v >= 255.0 ? 255 : v <= 0.0 ? 0 : (uint8_t)v;
        out[0] = u;
    }
}

/* Fill n elements of dtype with value after poisoning them, and check every element. */
static void check_fill(clt_context *ctx, clt_dtype dt, int64_t n, double v)
{
    size_t es = clt_dtype_size(dt), nb = (size_t)n * es;
    unsigned char want[4];
    expected_element(dt, v, want);
    clt_tensor *t = NULL;
    TU_OK(clt_tensor_create(ctx, dt, 1, &n, &t));
    unsigned char *buf = malloc(nb);
    ck_assert_ptr_nonnull(buf);
    /* Poison with the complement of the expected bits (0xFF alone would equal u8 255 or i32 -1). */
    for (size_t i = 0; i < nb; i++)
        buf[i] = (unsigned char)~want[i % es];
    TU_OK(clt_tensor_write(t, buf, nb));
    TU_OK(clt_tensor_fill(t, v));
    TU_OK(clt_tensor_read(t, buf, nb));
    int nan_half = dt == CLT_F16 && isnan(v);
    for (int64_t i = 0; i < n; i++) {
        const unsigned char *e = buf + (size_t)i * es;
        if (nan_half) {
            uint16_t h;
            memcpy(&h, e, 2);
            ck_assert_msg(ref_half_is_nan(h), "f16 fill(NaN)[%lld] = 0x%04x", (long long)i, h);
        } else if (memcmp(e, want, es) != 0) {
            uint32_t got = 0, exp = 0;
            memcpy(&got, e, es);
            memcpy(&exp, want, es);
            ck_abort_msg("%s fill(%.17g) of %lld: element %lld = 0x%x, expected 0x%x",
                         clt_dtype_name(dt), v, (long long)n, (long long)i, got, exp);
        }
    }
    clt_tensor_free(t);
    free(buf);
}

static void check_values(clt_context *ctx, clt_dtype dt, const double *vals, size_t nv)
{
    for (size_t k = 0; k < nv; k++)
        for (size_t s = 0; s < 2; s++)
            check_fill(ctx, dt, fill_sizes[s], vals[k]);
    check_fill(ctx, dt, fill_sizes[2], vals[tu_rng_next() % nv]);
}

START_TEST(fill_f32)
{
    clt_context *ctx = tu_context();
    double vals[12] = {0.0, -0.0, 1.0, -1e-40 /* subnormal in f32 */, 3.0e38};
    for (size_t k = 5; k < 12; k++)
        vals[k] = random_double(-1000.0, 1000.0); /* negative and non-integer, rounds to f32 */
    check_values(ctx, CLT_F32, vals, 12);
    tu_context_free(ctx);
}
END_TEST

START_TEST(fill_f16)
{
    clt_context *ctx = tu_context();
    double vals[40] = {1.5,      -2.25,      65504.0,          -65504.0,         65519.0, 65520.0,
                       -70000.0, 0.0,        -0.0,             0x1p-24,          0x1p-25, 0x1.8p-25,
                       0x1p-14,  1.0009765625 /* 1 + 2^-10 */, 1.00048828125 /* tie to even: 1 */,
                       1.00146484375 /* tie to even: 1 + 2^-9 */, NAN, 1e-8};
    size_t nv = 18;
    /* exact midpoints between neighbouring halves: must go to the even one */
    for (; nv < 26; nv++) {
        uint16_t h = (uint16_t)(0x0400 + tu_rng_next() % (0x7BFF - 0x0400));
        float a = ref_half_to_float(h), b = ref_half_to_float((uint16_t)(h + 1));
        vals[nv] = ((double)a + (double)b) / 2.0;
    }
    for (; nv < 40; nv++) {
        float f;
        float hi = nv < 30 ? 1e-4f : nv < 35 ? 4.0f : 70000.0f;
        tu_random_f32(&f, 1, -hi, hi);
        vals[nv] = f; /* exact in float, so float->half is the only rounding */
    }
    check_values(ctx, CLT_F16, vals, nv);
    tu_context_free(ctx);
}
END_TEST

START_TEST(fill_i32)
{
    clt_context *ctx = tu_context();
    double vals[24] = {-3.7,          3.99,          -0.5,         0.0,        1e12,
                       -1e12,         2147483647.0,  2147483647.9, 2147483648.0, -2147483648.0,
                       -2147483648.9, -2147483649.0, 16777217.0,   123456789.75, -987654321.5,
                       INFINITY,      -INFINITY};
    size_t nv = 17;
    for (; nv < 24; nv++)
        vals[nv] = random_double(-3e9, 3e9);
    check_values(ctx, CLT_I32, vals, nv);
    tu_context_free(ctx);
}
END_TEST

START_TEST(fill_u8)
{
    clt_context *ctx = tu_context();
    double vals[16] = {300.0, -5.0, 254.9, 255.0, 255.5, 0.99, -0.99, 1e9, -1e9, 128.5};
    size_t nv = 10;
    for (; nv < 16; nv++)
        vals[nv] = random_double(-50.0, 300.0);
    check_values(ctx, CLT_U8, vals, nv);
    tu_context_free(ctx);
}
END_TEST

/* Filling a wrapped buffer at an offset writes exactly the tensor's bytes, nothing around them. */
START_TEST(fill_wrapped_touches_only_its_bytes)
{
    clt_context *ctx = tu_context();
    static const struct {
        clt_dtype dt;
        size_t offset;
        int64_t count;
    } cases[] = {{CLT_F32, 12, 1000}, {CLT_U8, 3, 5},     {CLT_U8, 1, 1},      {CLT_U8, 5, 1001},
                 {CLT_F16, 2, 999},   {CLT_F16, 6, 3},    {CLT_I32, 28, 13}};
    enum { BYTES = 8192 };
    unsigned char *host = malloc(BYTES), *back = malloc(BYTES);
    ck_assert_ptr_nonnull(host);
    ck_assert_ptr_nonnull(back);
    cl_int err;
    cl_mem buf = clCreateBuffer(clt_context_cl_context(ctx), CL_MEM_READ_WRITE, BYTES, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    cl_command_queue q = clt_context_cl_queue(ctx);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        tu_random_bytes(host, BYTES);
        ck_assert_int_eq(clEnqueueWriteBuffer(q, buf, CL_TRUE, 0, BYTES, host, 0, NULL, NULL),
                         CL_SUCCESS);
        clt_tensor *t = NULL;
        TU_OK(clt_tensor_wrap_cl_mem(ctx, buf, cases[k].offset, cases[k].dt, 1, &cases[k].count, &t));
        double v = cases[k].dt == CLT_U8 ? random_double(0.0, 255.0) : random_double(-9.0, 9.0);
        if (cases[k].dt == CLT_F16)
            v = (float)v;
        TU_OK(clt_tensor_fill(t, v));
        clt_tensor_free(t);
        ck_assert_int_eq(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, BYTES, back, 0, NULL, NULL),
                         CL_SUCCESS);
        size_t es = clt_dtype_size(cases[k].dt);
        size_t end = cases[k].offset + (size_t)cases[k].count * es;
        unsigned char want[4];
        expected_element(cases[k].dt, v, want);
        for (size_t i = 0; i < BYTES; i++) {
            unsigned char exp = i < cases[k].offset || i >= end ? host[i]
                                                                : want[(i - cases[k].offset) % es];
            ck_assert_msg(back[i] == exp, "case %zu (%s at %zu, %lld): byte %zu = 0x%02x, expected 0x%02x",
                          k, clt_dtype_name(cases[k].dt), cases[k].offset,
                          (long long)cases[k].count, i, back[i], exp);
        }
    }
    clReleaseMemObject(buf);
    free(host);
    free(back);
    tu_context_free(ctx);
}
END_TEST

static float *uniform(clt_context *ctx, int64_t n, uint64_t seed, float lo, float hi)
{
    clt_tensor *t = NULL;
    TU_OK(clt_tensor_create(ctx, CLT_F32, 1, &n, &t));
    tu_poison(t);
    TU_OK(clt_tensor_fill_uniform(t, seed, lo, hi));
    float *x = malloc((size_t)n * sizeof(float));
    ck_assert_ptr_nonnull(x);
    TU_OK(clt_tensor_read(t, x, (size_t)n * sizeof(float)));
    clt_tensor_free(t);
    return x;
}

static void check_range(const float *x, int64_t n, float lo, float hi)
{
    for (int64_t i = 0; i < n; i++)
        ck_assert_msg(x[i] >= lo && x[i] < hi, "uniform[%lld] = %.9g outside [%.9g, %.9g)",
                      (long long)i, (double)x[i], (double)lo, (double)hi);
}

START_TEST(fill_uniform_range_and_distribution)
{
    clt_context *ctx = tu_context();
    enum { N = 1000003 };
    float lo, width;
    tu_random_f32(&lo, 1, -3.0f, 3.0f);
    tu_random_f32(&width, 1, 0.5f, 2.0f);
    float hi = lo + width;
    uint64_t seed = tu_rng_next();
    float *x = uniform(ctx, N, seed, lo, hi);
    check_range(x, N, lo, hi);
    double sum = 0;
    int64_t bins[10] = {0};
    for (int64_t i = 0; i < N; i++) {
        sum += x[i];
        int b = (int)((x[i] - lo) / (hi - lo) * 10.0f);
        bins[b < 0 ? 0 : b > 9 ? 9 : b]++;
    }
    double mean = sum / N, mid = ((double)lo + (double)hi) / 2;
    ck_assert_msg(fabs(mean - mid) < 0.01, "mean %.6f, expected %.6f", mean, mid);
    for (int b = 0; b < 10; b++)
        ck_assert_msg(llabs(bins[b] - N / 10) < N / 10 * 15 / 1000, "bin %d holds %lld of %d", b,
                      (long long)bins[b], N);

    /* the same seed gives the same values; another seed (also one differing in the high bits
     * only) gives different ones */
    float *y = uniform(ctx, N, seed, lo, hi);
    ck_assert_mem_eq(x, y, (size_t)N * sizeof(float));
    const uint64_t others[] = {seed + 1, seed ^ (1ull << 40), seed ^ (1ull << 63)};
    for (size_t k = 0; k < 3; k++) {
        float *z = uniform(ctx, N, others[k], lo, hi);
        int64_t same = 0;
        for (int64_t i = 0; i < N; i++)
            same += x[i] == z[i];
        ck_assert_msg(same < N / 100, "seed 0x%llx and 0x%llx share %lld of %d values",
                      (unsigned long long)seed, (unsigned long long)others[k], (long long)same, N);
        free(z);
    }
    free(x);
    free(y);
    tu_context_free(ctx);
}
END_TEST

START_TEST(fill_uniform_small_and_narrow)
{
    clt_context *ctx = tu_context();
    uint64_t seed = tu_rng_next();
    for (int64_t n = 1; n <= 7; n += 6) {
        float *x = uniform(ctx, n, seed, -1.0f, 1.0f);
        check_range(x, n, -1.0f, 1.0f);
        free(x);
    }
    /* Two representable values: hi itself must never appear (lo + (hi-lo)*u rounds up to hi). */
    float lo = 1.0f, hi = nextafterf(nextafterf(1.0f, 2.0f), 2.0f);
    float *x = uniform(ctx, 100003, seed, lo, hi);
    check_range(x, 100003, lo, hi);
    free(x);
    /* Large magnitudes and a range crossing zero. */
    x = uniform(ctx, 100003, seed, -1e30f, 1e30f);
    check_range(x, 100003, -1e30f, 1e30f);
    free(x);
    tu_context_free(ctx);
}
END_TEST

/* The same seed gives the same values on every device: at least under both profiles here. */
START_TEST(fill_uniform_same_under_profiles)
{
    clt_context_options o;
    clt_context_options_init(&o);
    o.profile = "native";
    clt_context *a = tu_context_with(&o);
    uint64_t seed = tu_rng_next();
    float *x = uniform(a, 300007, seed, -2.0f, 5.0f);
    tu_context_free(a);
    o.profile = "gfx902";
    clt_context *b = tu_context_with(&o);
    float *y = uniform(b, 300007, seed, -2.0f, 5.0f);
    ck_assert_mem_eq(x, y, 300007 * sizeof(float));
    tu_context_free(b);
    free(x);
    free(y);
}
END_TEST

START_TEST(fill_uniform_errors)
{
    clt_context *ctx = tu_context();
    const clt_dtype bad[] = {CLT_F16, CLT_I32, CLT_U8};
    int64_t n = 101;
    for (size_t k = 0; k < 3; k++) {
        size_t nb = (size_t)n * clt_dtype_size(bad[k]);
        unsigned char data[404], back[404];
        tu_random_bytes(data, nb);
        clt_tensor *t = NULL;
        TU_OK(clt_tensor_create_from_host(ctx, bad[k], 1, &n, data, nb, &t));
        TU_EXPECT_STATUS(clt_tensor_fill_uniform(t, 7, 0.0f, 1.0f), CLT_ERR_INVALID_DTYPE);
        ck_assert_ptr_nonnull(strstr(clt_last_error(ctx), "clt_tensor_fill_uniform"));
        TU_OK(clt_tensor_read(t, back, nb));
        ck_assert_mem_eq(back, data, nb);
        clt_tensor_free(t);
    }
    /* An empty range cannot hold a value. */
    float data[101], back[101];
    tu_random_f32(data, 101, -1.0f, 1.0f);
    clt_tensor *t = NULL;
    TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, 1, &n, data, sizeof data, &t));
    TU_EXPECT_STATUS(clt_tensor_fill_uniform(t, 7, 2.0f, 1.0f), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_STATUS(clt_tensor_fill_uniform(t, 7, NAN, 1.0f), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_STATUS(clt_tensor_fill_uniform(t, 7, 0.0f, NAN), CLT_ERR_INVALID_ARGUMENT);
    TU_OK(clt_tensor_read(t, back, sizeof back));
    ck_assert_mem_eq(back, data, sizeof data);
    clt_tensor_free(t);
    tu_context_free(ctx);
}
END_TEST

Suite *tensor_fill_suite(void)
{
    Suite *s = suite_create("tensor_fill");
    TCase *tc = tcase_create("fill");
    tcase_add_test(tc, fill_f32);
    tcase_add_test(tc, fill_f16);
    tcase_add_test(tc, fill_i32);
    tcase_add_test(tc, fill_u8);
    tcase_add_test(tc, fill_wrapped_touches_only_its_bytes);
    suite_add_tcase(s, tc);
    tc = tcase_create("uniform");
    tcase_add_test(tc, fill_uniform_range_and_distribution);
    tcase_add_test(tc, fill_uniform_small_and_narrow);
    tcase_add_test(tc, fill_uniform_same_under_profiles);
    tcase_add_test(tc, fill_uniform_errors);
    suite_add_tcase(s, tc);
    return s;
}
