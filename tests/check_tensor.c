/* Tensor contract: creation for every dtype and rank, accessors, validation errors that change
 * nothing, host round trips, copy, reshape views and asynchronous slice reads.
 * Fill and fill_uniform are in check_tensor_fill.c. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "util/test_util.h"


static const clt_dtype all_dtypes[] = {CLT_F32, CLT_F16, CLT_I32, CLT_U8};

static clt_pool_stats stats_of(const clt_context *ctx)
{
    clt_pool_stats s;
    TU_OK(clt_pool_get_stats(ctx, &s));
    return s;
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    ck_assert_ptr_nonnull(p);
    return p;
}

static clt_tensor *from_host(clt_context *ctx, clt_dtype dt, int ndim, const int64_t *shape,
                             const void *data, size_t bytes)
{
    clt_tensor *t = NULL;
    TU_OK(clt_tensor_create_from_host(ctx, dt, ndim, shape, data, bytes, &t));
    return t;
}

static void check_accessors(const clt_tensor *t, clt_context *ctx, clt_dtype dt, int ndim,
                            const int64_t *shape)
{
    int64_t numel = 1;
    for (int i = 0; i < ndim; i++)
        numel *= shape[i];
    ck_assert_ptr_eq(clt_tensor_context(t), ctx);
    ck_assert_int_eq(clt_tensor_dtype(t), dt);
    ck_assert_int_eq(clt_tensor_ndim(t), ndim);
    ck_assert_int_eq(clt_tensor_numel(t), numel);
    ck_assert_uint_eq(clt_tensor_nbytes(t), (size_t)numel * clt_dtype_size(dt));
    int64_t got[CLT_MAX_DIMS + 1];
    for (int i = 0; i <= CLT_MAX_DIMS; i++)
        got[i] = -77;
    ck_assert_int_eq(clt_tensor_shape(t, got), ndim);
    for (int i = 0; i < ndim; i++) {
        ck_assert_int_eq(got[i], shape[i]);
        ck_assert_int_eq(clt_tensor_dim(t, i), shape[i]);
        ck_assert_int_eq(clt_tensor_dim(t, i - ndim), shape[i]);
    }
    ck_assert_int_eq(got[ndim], -77); /* nothing written past ndim */
    ck_assert_int_eq(clt_tensor_dim(t, ndim), -1);
    ck_assert_int_eq(clt_tensor_dim(t, -ndim - 1), -1);
    ck_assert_int_eq(clt_tensor_dim(t, 1 << 20), -1);
}

/* Every dtype, every rank 0..8: accessors, and random bytes survive a write/read round trip. */
START_TEST(create_every_dtype_and_rank)
{
    clt_context *ctx = tu_context();
    for (size_t d = 0; d < 4; d++) {
        for (int ndim = 0; ndim <= CLT_MAX_DIMS; ndim++) {
            int64_t shape[CLT_MAX_DIMS];
            for (int i = 0; i < ndim; i++)
                shape[i] = 1 + (int64_t)(tu_rng_next() % (ndim <= 3 ? 13 : 3));
            clt_tensor *t = NULL;
            TU_OK(clt_tensor_create(ctx, all_dtypes[d], ndim, ndim ? shape : NULL, &t));
            check_accessors(t, ctx, all_dtypes[d], ndim, shape);
            size_t nb = clt_tensor_nbytes(t);
            unsigned char *in = xmalloc(nb), *out = xmalloc(nb);
            tu_random_bytes(in, nb);
            memset(out, 0, nb);
            TU_OK(clt_tensor_write(t, in, nb));
            TU_OK(clt_tensor_read(t, out, nb));
            ck_assert_mem_eq(in, out, nb);
            clt_tensor_free(t);
            free(in);
            free(out);
        }
    }
    tu_context_free(ctx);
}
END_TEST

START_TEST(scalar_tensor)
{
    clt_context *ctx = tu_context();
    float v, back = 0;
    tu_random_f32(&v, 1, -100.0f, 100.0f);
    clt_tensor *t = from_host(ctx, CLT_F32, 0, NULL, &v, sizeof v);
    check_accessors(t, ctx, CLT_F32, 0, NULL);
    ck_assert_int_eq(clt_tensor_numel(t), 1);
    ck_assert_int_eq(clt_tensor_dim(t, 0), -1);
    ck_assert_int_eq(clt_tensor_dim(t, -1), -1);
    TU_OK(clt_tensor_read(t, &back, sizeof back));
    ck_assert_mem_eq(&back, &v, sizeof v);
    clt_tensor_free(t);
    /* A shape pointer is ignored for ndim 0. */
    int64_t ignored[1] = {-5};
    TU_OK(clt_tensor_create(ctx, CLT_U8, 0, ignored, &t));
    ck_assert_int_eq(clt_tensor_numel(t), 1);
    ck_assert_uint_eq(clt_tensor_nbytes(t), 1);
    clt_tensor_free(t);
    tu_context_free(ctx);
}
END_TEST

START_TEST(empty_tensors)
{
    clt_context *ctx = tu_context();
    const int64_t shapes[][3] = {{0, 1, 1}, {3, 0, 5}, {(int64_t)1 << 40, 0, 1}, {7, 11, 0}};
    const int ndims[] = {1, 3, 2, 3};
    for (size_t k = 0; k < 4; k++) {
        for (size_t d = 0; d < 4; d++) {
            clt_tensor *t = NULL;
            TU_OK(clt_tensor_create(ctx, all_dtypes[d], ndims[k], shapes[k], &t));
            check_accessors(t, ctx, all_dtypes[d], ndims[k], shapes[k]);
            ck_assert_int_eq(clt_tensor_numel(t), 0);
            ck_assert_uint_eq(clt_tensor_nbytes(t), 0);
            unsigned char dummy[4] = {1, 2, 3, 4};
            TU_OK(clt_tensor_write(t, dummy, 0));
            TU_OK(clt_tensor_read(t, dummy, 0));
            ck_assert_int_eq(dummy[0], 1);
            TU_EXPECT_STATUS(clt_tensor_write(t, dummy, 1), CLT_ERR_INVALID_ARGUMENT);
            TU_EXPECT_STATUS(clt_tensor_read(t, dummy, 1), CLT_ERR_INVALID_ARGUMENT);
            TU_OK(clt_tensor_fill(t, 1.0));
            clt_tensor *u = NULL;
            TU_OK(clt_tensor_create(ctx, all_dtypes[d], 1, shapes[0], &u));
            TU_OK(clt_tensor_copy(u, t));
            clt_tensor_free(u);
            clt_tensor_free(t);
            TU_OK(clt_tensor_create_from_host(ctx, all_dtypes[d], ndims[k], shapes[k], dummy, 0, &t));
            ck_assert_int_eq(clt_tensor_numel(t), 0);
            clt_tensor_free(t);
        }
    }
    TU_OK(clt_finish(ctx));
    tu_context_free(ctx);
}
END_TEST

/* A failing create must return `want`, set *out to NULL, leave the pool as it was, and say why. */
static void expect_create_fails(clt_context *ctx, clt_dtype dt, int ndim, const int64_t *shape,
                                clt_status want, const char *what, int also_from_host)
{
    clt_pool_stats before = stats_of(ctx);
    clt_tensor *t = (clt_tensor *)&before;
    clt_status st = clt_tensor_create(ctx, dt, ndim, shape, &t);
    ck_assert_msg(st == want, "%s: clt_tensor_create -> %s, expected %s (%s)", what,
                  clt_status_string(st), clt_status_string(want), clt_last_error(ctx));
    ck_assert_msg(t == NULL, "%s: *out not NULL after a failure", what);
    ck_assert_msg(strstr(clt_last_error(ctx), "clt_tensor_create") != NULL,
                  "%s: message \"%s\" does not name the call", what, clt_last_error(ctx));
    clt_pool_stats after = stats_of(ctx);
    ck_assert_msg(memcmp(&before, &after, sizeof before) == 0, "%s: pool stats changed", what);

    if (!also_from_host)
        return;
    /* The same through create_from_host (with a buffer that is big enough to read). */
    unsigned char data[64];
    t = (clt_tensor *)&before;
    st = clt_tensor_create_from_host(ctx, dt, ndim, shape, data, sizeof data, &t);
    ck_assert_msg(st == want, "%s: clt_tensor_create_from_host -> %s, expected %s", what,
                  clt_status_string(st), clt_status_string(want));
    ck_assert_ptr_null(t);
    after = stats_of(ctx);
    ck_assert_msg(memcmp(&before, &after, sizeof before) == 0, "%s: pool stats changed", what);
}

START_TEST(create_errors_change_nothing)
{
    clt_context *ctx = tu_context();
    clt_tensor *keep = NULL; /* something live, so stats are not trivially zero */
    int64_t ks[1] = {1009};
    TU_OK(clt_tensor_create(ctx, CLT_F32, 1, ks, &keep));
    int64_t ok[CLT_MAX_DIMS + 1] = {2, 3, 1, 1, 1, 1, 1, 1, 1};
    int64_t neg[3] = {4, -1, 5};
    int64_t elem_overflow[2] = {(int64_t)1 << 40, (int64_t)1 << 40};
    int64_t byte_overflow[2] = {(int64_t)1 << 31, (int64_t)1 << 31}; /* 2^62 elements */
    int64_t max_dim[1] = {INT64_MAX};
    int64_t max_pair[2] = {INT64_MAX, 2};
    expect_create_fails(ctx, CLT_F32, -1, ok, CLT_ERR_INVALID_SHAPE, "ndim -1", 1);
    expect_create_fails(ctx, CLT_F32, CLT_MAX_DIMS + 1, ok, CLT_ERR_INVALID_SHAPE, "ndim 9", 1);
    expect_create_fails(ctx, CLT_F32, 3, neg, CLT_ERR_INVALID_SHAPE, "negative dim", 1);
    expect_create_fails(ctx, CLT_F32, 2, NULL, CLT_ERR_INVALID_ARGUMENT, "NULL shape", 1);
    expect_create_fails(ctx, (clt_dtype)0, 2, ok, CLT_ERR_INVALID_DTYPE, "dtype 0", 1);
    expect_create_fails(ctx, (clt_dtype)99, 2, ok, CLT_ERR_INVALID_DTYPE, "dtype 99", 1);
    expect_create_fails(ctx, CLT_F32, 2, elem_overflow, CLT_ERR_SIZE_OVERFLOW, "numel overflow", 1);
    expect_create_fails(ctx, CLT_U8, 2, elem_overflow, CLT_ERR_SIZE_OVERFLOW, "u8 numel overflow", 1);
    expect_create_fails(ctx, CLT_F32, 2, byte_overflow, CLT_ERR_SIZE_OVERFLOW, "f32 bytes overflow", 1);
    expect_create_fails(ctx, CLT_F16, 2, byte_overflow, CLT_ERR_SIZE_OVERFLOW, "f16 bytes overflow", 1);
    expect_create_fails(ctx, CLT_F32, 1, max_dim, CLT_ERR_SIZE_OVERFLOW, "INT64_MAX f32", 1);
    expect_create_fails(ctx, CLT_U8, 2, max_pair, CLT_ERR_SIZE_OVERFLOW, "INT64_MAX x 2", 1);
    /* Representable but far beyond the device: refused, and the context stays usable. */
    expect_create_fails(ctx, CLT_U8, 2, byte_overflow, CLT_ERR_OUT_OF_DEVICE_MEMORY, "2^62 bytes", 0);

    TU_EXPECT_STATUS(clt_tensor_create(ctx, CLT_F32, 2, ok, NULL), CLT_ERR_INVALID_ARGUMENT);
    clt_tensor *t = (clt_tensor *)ok;
    TU_EXPECT_STATUS(clt_tensor_create(NULL, CLT_F32, 2, ok, &t), CLT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(t);

    float data[1009], back[1009];
    tu_random_f32(data, 1009, -1.0f, 1.0f);
    TU_OK(clt_tensor_write(keep, data, sizeof data));
    TU_OK(clt_tensor_read(keep, back, sizeof back));
    ck_assert_mem_eq(data, back, sizeof data);
    clt_tensor_free(keep);
    tu_context_free(ctx);
}
END_TEST

static void round_trip(clt_context *ctx, clt_dtype dt, int64_t n, int random_bits)
{
    size_t nb = (size_t)n * clt_dtype_size(dt);
    unsigned char *in = xmalloc(nb), *out = xmalloc(nb);
    if (random_bits)
        tu_random_bytes(in, nb); /* includes NaN payloads and subnormals for floats */
    else
        tu_random_f32((float *)in, (size_t)n, -1e6f, 1e6f);
    memset(out, 0x5A, nb);
    clt_tensor *t = from_host(ctx, dt, 1, &n, in, nb);
    TU_OK(clt_tensor_read(t, out, nb));
    ck_assert_msg(memcmp(in, out, nb) == 0, "%s round trip of %lld elements is not bit-exact",
                  clt_dtype_name(dt), (long long)n);
    clt_tensor_free(t);
    free(in);
    free(out);
}

START_TEST(create_from_host_round_trip)
{
    clt_context *ctx = tu_context();
    const int64_t sizes[] = {1, 7, 1000003};
    for (size_t k = 0; k < 3; k++) {
        round_trip(ctx, CLT_F32, sizes[k], 0);
        for (size_t d = 0; d < 4; d++)
            round_trip(ctx, all_dtypes[d], sizes[k], 1);
    }
    /* bytes must equal the tensor's size */
    float data[12];
    int64_t shape[2] = {3, 4};
    const size_t wrong[] = {0, sizeof data - 1, sizeof data + 1, sizeof data / 2};
    for (size_t k = 0; k < 4; k++) {
        clt_pool_stats before = stats_of(ctx);
        clt_tensor *t = (clt_tensor *)data;
        TU_EXPECT_STATUS(clt_tensor_create_from_host(ctx, CLT_F32, 2, shape, data, wrong[k], &t),
                      CLT_ERR_INVALID_ARGUMENT);
        ck_assert_ptr_null(t);
        clt_pool_stats after = stats_of(ctx);
        ck_assert_mem_eq(&before, &after, sizeof before);
        ck_assert_ptr_nonnull(strstr(clt_last_error(ctx), "clt_tensor_create_from_host"));
    }
    tu_context_free(ctx);
}
END_TEST

START_TEST(write_read_wrong_sizes)
{
    clt_context *ctx = tu_context();
    enum { N = 37 };
    int32_t data[N], back[N], other[N + 1];
    tu_random_bytes(data, sizeof data);
    int64_t shape[1] = {N};
    clt_tensor *t = from_host(ctx, CLT_I32, 1, shape, data, sizeof data);
    tu_random_bytes(other, sizeof other);
    const size_t wrong[] = {0, sizeof data - 1, sizeof data + 1, sizeof data + 4, 1};
    for (size_t k = 0; k < 5; k++) {
        TU_EXPECT_STATUS(clt_tensor_write(t, other, wrong[k]), CLT_ERR_INVALID_ARGUMENT);
        ck_assert_ptr_nonnull(strstr(clt_last_error(ctx), "clt_tensor_write"));
        memset(back, 0x77, sizeof back);
        TU_EXPECT_STATUS(clt_tensor_read(t, back, wrong[k] < sizeof back ? wrong[k] : sizeof back - 1),
                      CLT_ERR_INVALID_ARGUMENT);
        ck_assert_ptr_nonnull(strstr(clt_last_error(ctx), "clt_tensor_read"));
        for (int i = 0; i < N; i++)
            ck_assert_int_eq(back[i], 0x77777777); /* dst untouched */
    }
    TU_OK(clt_tensor_read(t, back, sizeof back));
    ck_assert_mem_eq(back, data, sizeof data); /* tensor untouched */
    clt_tensor_free(t);
    tu_context_free(ctx);
}
END_TEST

static void copy_round(clt_context *ctx, clt_dtype dt, int64_t n)
{
    size_t nb = (size_t)n * clt_dtype_size(dt);
    unsigned char *in = xmalloc(nb), *out = xmalloc(nb);
    tu_random_bytes(in, nb);
    clt_tensor *src = from_host(ctx, dt, 1, &n, in, nb), *dst = NULL;
    TU_OK(clt_tensor_create(ctx, dt, 1, &n, &dst));
    tu_poison(dst);
    TU_OK(clt_tensor_copy(dst, src));
    TU_OK(clt_tensor_read(dst, out, nb));
    ck_assert_msg(memcmp(in, out, nb) == 0, "%s copy of %lld elements is not bit-exact",
                  clt_dtype_name(dt), (long long)n);
    TU_OK(clt_tensor_read(src, out, nb));
    ck_assert_mem_eq(in, out, nb);
    clt_tensor_free(src);
    clt_tensor_free(dst);
    free(in);
    free(out);
}

START_TEST(copy_bit_exact)
{
    clt_context *ctx = tu_context();
    const int64_t sizes[] = {1, 7, 1000003};
    for (size_t k = 0; k < 3; k++)
        for (size_t d = 0; d < 4; d++)
            copy_round(ctx, all_dtypes[d], sizes[k]);
    tu_context_free(ctx);
}
END_TEST

START_TEST(copy_shapes_and_errors)
{
    clt_context *ctx = tu_context();
    float data[42], back[42], poison[42];
    tu_random_f32(data, 42, -7.0f, 7.0f);
    int64_t s67[2] = {6, 7}, s237[3] = {2, 3, 7}, s42[1] = {42}, s41[1] = {41};
    clt_tensor *a = from_host(ctx, CLT_F32, 2, s67, data, sizeof data), *b = NULL, *c = NULL;
    TU_OK(clt_tensor_create(ctx, CLT_F32, 3, s237, &b));
    tu_poison(b);
    TU_OK(clt_tensor_copy(b, a));
    TU_OK(clt_tensor_read(b, back, sizeof back));
    ck_assert_mem_eq(back, data, sizeof data);

    /* errors leave dst as it was */
    tu_random_f32(poison, 42, 100.0f, 200.0f);
    TU_OK(clt_tensor_write(b, poison, sizeof poison));
    TU_OK(clt_tensor_create(ctx, CLT_I32, 1, s42, &c));
    TU_EXPECT_STATUS(clt_tensor_copy(c, a), CLT_ERR_INVALID_DTYPE);
    TU_EXPECT_STATUS(clt_tensor_copy(a, c), CLT_ERR_INVALID_DTYPE);
    ck_assert_ptr_nonnull(strstr(clt_last_error(ctx), "clt_tensor_copy"));
    clt_tensor_free(c);
    TU_OK(clt_tensor_create(ctx, CLT_F32, 1, s41, &c));
    TU_EXPECT_STATUS(clt_tensor_copy(c, a), CLT_ERR_INVALID_SHAPE);
    TU_EXPECT_STATUS(clt_tensor_copy(b, c), CLT_ERR_INVALID_SHAPE);
    TU_OK(clt_tensor_read(b, back, sizeof back));
    ck_assert_mem_eq(back, poison, sizeof poison);

    /* onto itself: a no-op */
    TU_OK(clt_tensor_copy(a, a));
    TU_OK(clt_tensor_read(a, back, sizeof back));
    ck_assert_mem_eq(back, data, sizeof data);

    /* a reshape view covers exactly the same memory: the copy is the identity (header contract),
     * in both directions, and the data stays intact */
    clt_tensor *v = NULL;
    TU_OK(clt_tensor_reshape(a, 1, s42, &v));
    TU_OK(clt_tensor_copy(v, a));
    TU_OK(clt_tensor_copy(a, v));
    TU_OK(clt_tensor_read(a, back, sizeof back));
    ck_assert_mem_eq(back, data, sizeof data);
    clt_tensor_free(v);
    clt_tensor_free(a);
    clt_tensor_free(b);
    clt_tensor_free(c);
    tu_context_free(ctx);
}
END_TEST

START_TEST(reshape_views)
{
    clt_context *ctx = tu_context();
    enum { N = 210 };
    float data[N], back[N], fresh[N];
    tu_random_f32(data, N, -3.0f, 3.0f);
    int64_t base_shape[2] = {14, 15};
    clt_tensor *t = from_host(ctx, CLT_F32, 2, base_shape, data, sizeof data), *v = NULL;

    int64_t infer[3] = {2, -1, 7};
    TU_OK(clt_tensor_reshape(t, 3, infer, &v));
    int64_t want[3] = {2, 15, 7};
    check_accessors(v, ctx, CLT_F32, 3, want);
    TU_OK(clt_tensor_read(v, back, sizeof back));
    ck_assert_mem_eq(back, data, sizeof data);
    /* shared memory, both directions */
    tu_random_f32(fresh, N, 10.0f, 20.0f);
    TU_OK(clt_tensor_write(t, fresh, sizeof fresh));
    TU_OK(clt_tensor_read(v, back, sizeof back));
    ck_assert_mem_eq(back, fresh, sizeof fresh);
    TU_OK(clt_tensor_fill(v, -0.5));
    TU_OK(clt_tensor_read(t, back, sizeof back));
    for (int i = 0; i < N; i++)
        ck_assert_float_eq(back[i], -0.5f);
    check_accessors(t, ctx, CLT_F32, 2, base_shape); /* the base keeps its shape */
    clt_tensor_free(v);

    int64_t first_inferred[2] = {-1, 1};
    TU_OK(clt_tensor_reshape(t, 2, first_inferred, &v));
    ck_assert_int_eq(clt_tensor_dim(v, 0), N);
    clt_tensor_free(v);

    int64_t two_infer[2] = {-1, -1}, mismatch[2] = {7, 31}, not_divisible[2] = {-1, 4};
    int64_t neg[2] = {-2, -105}, zero[2] = {0, 210};
    int64_t nine[CLT_MAX_DIMS + 1] = {210, 1, 1, 1, 1, 1, 1, 1, 1};
    struct {
        int ndim;
        const int64_t *shape;
        clt_status want;
    } bad[] = {{2, two_infer, CLT_ERR_INVALID_SHAPE},     {2, mismatch, CLT_ERR_INVALID_SHAPE},
               {2, not_divisible, CLT_ERR_INVALID_SHAPE}, {2, neg, CLT_ERR_INVALID_SHAPE},
               {2, zero, CLT_ERR_INVALID_SHAPE},          {CLT_MAX_DIMS + 1, nine, CLT_ERR_INVALID_SHAPE},
               {-1, nine, CLT_ERR_INVALID_SHAPE},         {0, NULL, CLT_ERR_INVALID_SHAPE}};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        clt_pool_stats before = stats_of(ctx);
        v = (clt_tensor *)data;
        clt_status st = clt_tensor_reshape(t, bad[k].ndim, bad[k].shape, &v);
        ck_assert_msg(st == bad[k].want, "bad reshape %zu -> %s", k, clt_status_string(st));
        ck_assert_ptr_null(v);
        ck_assert_ptr_nonnull(strstr(clt_last_error(ctx), "clt_tensor_reshape"));
        clt_pool_stats after = stats_of(ctx);
        ck_assert_mem_eq(&before, &after, sizeof before);
    }
    /* ndim 0 from a one-element tensor */
    int64_t one[1] = {1};
    clt_tensor *s = from_host(ctx, CLT_F32, 1, one, data, sizeof(float));
    TU_OK(clt_tensor_reshape(s, 0, NULL, &v));
    ck_assert_int_eq(clt_tensor_ndim(v), 0);
    ck_assert_int_eq(clt_tensor_numel(v), 1);
    clt_tensor_free(v);
    clt_tensor_free(s);
    clt_tensor_free(t);
    tu_context_free(ctx);
}
END_TEST

/* The view keeps the storage alive: data readable, pool memory in use until the last view goes. */
START_TEST(view_outlives_base)
{
    clt_context *ctx = tu_context();
    enum { N = 3003 }; /* 3 * 7 * 11 * 13 */
    float data[N], back[N];
    tu_random_f32(data, N, -1.0f, 1.0f);
    int64_t n = N, shape2[2] = {3, -1}, shape3[3] = {-1, 1, 1};
    clt_pool_stats s0 = stats_of(ctx);
    clt_tensor *t = from_host(ctx, CLT_F32, 1, &n, data, sizeof data), *v = NULL, *w = NULL;
    clt_pool_stats s1 = stats_of(ctx);
    uint64_t held = s1.bytes_in_use - s0.bytes_in_use;
    ck_assert_uint_ge(held, sizeof data);
    TU_OK(clt_tensor_reshape(t, 2, shape2, &v));
    TU_OK(clt_tensor_reshape(v, 3, shape3, &w)); /* a view of a view */
    clt_pool_stats s2 = stats_of(ctx);
    ck_assert_uint_eq(s2.bytes_in_use, s1.bytes_in_use); /* views allocate nothing */
    ck_assert_uint_eq(s2.misses + s2.hits, s1.misses + s1.hits);

    clt_tensor_free(t);
    clt_pool_stats s3 = stats_of(ctx);
    ck_assert_uint_eq(s3.bytes_in_use, s1.bytes_in_use);
    ck_assert_uint_eq(s3.bytes_cached, s1.bytes_cached);
    TU_OK(clt_tensor_read(v, back, sizeof back));
    ck_assert_mem_eq(back, data, sizeof data);

    clt_tensor_free(v);
    clt_pool_stats s4 = stats_of(ctx);
    ck_assert_uint_eq(s4.bytes_in_use, s1.bytes_in_use);
    memset(back, 0, sizeof back);
    TU_OK(clt_tensor_read(w, back, sizeof back));
    ck_assert_mem_eq(back, data, sizeof data);

    clt_tensor_free(w);
    clt_pool_stats s5 = stats_of(ctx);
    ck_assert_uint_eq(s5.bytes_in_use, s0.bytes_in_use);
    ck_assert_uint_eq(s5.bytes_cached, s0.bytes_cached + held);
    tu_context_free(ctx);
}
END_TEST

START_TEST(read_async_slices_and_bounds)
{
    clt_context *ctx = tu_context();
    enum { N = 1009 };
    float data[N], back[N + 1];
    tu_random_f32(data, N, -50.0f, 50.0f);
    int64_t n = N;
    clt_tensor *t = from_host(ctx, CLT_F32, 1, &n, data, sizeof data);
    const int64_t slices[][2] = {{0, 1}, {0, N}, {N - 1, 1}, {17, 500}, {3, 7}};
    for (size_t k = 0; k < sizeof slices / sizeof slices[0]; k++) {
        clt_future *f = NULL;
        int64_t first = slices[k][0], count = slices[k][1];
        TU_OK(clt_tensor_read_async(t, first, count, &f));
        memset(back, 0xFF, sizeof back);
        TU_OK(clt_future_get(f, back, (size_t)count * sizeof(float)));
        ck_assert_msg(memcmp(back, data + first, (size_t)count * sizeof(float)) == 0,
                      "slice [%lld, +%lld) differs", (long long)first, (long long)count);
        uint32_t past;
        memcpy(&past, &back[count], sizeof past);
        ck_assert_uint_eq(past, 0xFFFFFFFFu); /* nothing written past count */
        TU_EXPECT_STATUS(clt_future_get(f, back, (size_t)count * sizeof(float) + 4),
                      CLT_ERR_INVALID_ARGUMENT);
        clt_future_free(f);
    }
    const int64_t bad[][2] = {{-1, 1}, {0, N + 1}, {N, 1},        {N - 5, 6},
                              {1, -1}, {N + 3, 0}, {INT64_MAX, 2}, {2, INT64_MAX}};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        clt_future *f = (clt_future *)data;
        clt_status st = clt_tensor_read_async(t, bad[k][0], bad[k][1], &f);
        ck_assert_msg(st == CLT_ERR_INVALID_ARGUMENT, "read_async(%lld, %lld) -> %s",
                      (long long)bad[k][0], (long long)bad[k][1], clt_status_string(st));
        ck_assert_ptr_null(f);
        ck_assert_ptr_nonnull(strstr(clt_last_error(ctx), "clt_tensor_read_async"));
    }
    clt_tensor_free(t);
    tu_context_free(ctx);
}
END_TEST

Suite *tensor_suite(void)
{
    Suite *s = suite_create("tensor");
    TCase *tc = tcase_create("create");
    tcase_add_test(tc, create_every_dtype_and_rank);
    tcase_add_test(tc, scalar_tensor);
    tcase_add_test(tc, empty_tensors);
    tcase_add_test(tc, create_errors_change_nothing);
    tcase_add_test(tc, create_from_host_round_trip);
    tcase_add_test(tc, write_read_wrong_sizes);
    suite_add_tcase(s, tc);
    tc = tcase_create("copy_reshape");
    tcase_add_test(tc, copy_bit_exact);
    tcase_add_test(tc, copy_shapes_and_errors);
    tcase_add_test(tc, reshape_views);
    tcase_add_test(tc, view_outlives_base);
    tcase_add_test(tc, read_async_slices_and_bounds);
    suite_add_tcase(s, tc);
    return s;
}
