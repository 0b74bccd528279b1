/* Philox random numbers (cltensor_random.h): the CPU reference against the published known-answer
 * vector, uniform bit-exact against the CPU reference (odd sizes, offsets, a tensor view), the
 * same bits from contexts of both device profiles, normal bit-exact against the host's float
 * emulation of the kernel (so the same on every device) and (both branches) against Box-Muller in
 * double at awkward sizes and view offsets and its moments, dropout's mask and scaling against the
 * reference (sizes 0, 1, odd; views at aligned and unaligned offsets), its backward, and bad
 * input. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref/layout_ref.h"
#include "util/test_util.h"

/* Normal: log, sqrt (a few ulp each) and random.cl's sin and cos (2 ulp, 1.1e-7 absolute) in f32
 * against double: absolute error of a value up to ~5.6 (the largest sqrt(-2 ln 2^-24)). */
#define NORMAL_ATOL 2e-5

static void ref_words(uint64_t seed, uint64_t offset, uint64_t block, uint32_t w[4])
{
    const uint32_t c[4] = {(uint32_t)block, (uint32_t)(block >> 32), (uint32_t)offset,
                           (uint32_t)(offset >> 32)};
    const uint32_t k[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    ref_philox4x32_10(c, k, w);
}

static float ref_uniform(uint64_t seed, uint64_t offset, uint64_t i, float lo, float hi)
{
    uint32_t w[4];
    ref_words(seed, offset, i / 4, w);
    float u = (float)(w[i % 4] >> 8) * (1.0f / 16777216.0f);
    volatile float width = hi - lo, prod = width * u; /* the kernel rounds each op: no FMA here */
    float v = lo + prod;
    return v < hi ? v : nextafterf(hi, lo);
}

START_TEST(philox_known_answer)
{
    /* Random123's kat_vectors: philox4x32_10 of counter 0, key 0, and of all ones. */
    const uint32_t zc[4] = {0, 0, 0, 0}, zk[2] = {0, 0};
    const uint32_t oc[4] = {~0u, ~0u, ~0u, ~0u}, ok[2] = {~0u, ~0u};
    uint32_t w[4];
    ref_philox4x32_10(zc, zk, w);
    ck_assert_msg(w[0] == 0x6627e8d5u && w[1] == 0xe169c58du && w[2] == 0xbc57ac4cu &&
                      w[3] == 0x9b00dbd8u,
                  "zero vector: %08x %08x %08x %08x", w[0], w[1], w[2], w[3]);
    ref_philox4x32_10(oc, ok, w);
    ck_assert_msg(w[0] == 0x408f276du && w[1] == 0x41c83b0eu && w[2] == 0xa20bc7c6u &&
                      w[3] == 0x6d5451fdu,
                  "ones vector: %08x %08x %08x %08x", w[0], w[1], w[2], w[3]);
}
END_TEST

static void check_uniform(clt_context *ctx, int64_t n, uint64_t seed, uint64_t offset, float lo,
                          float hi)
{
    clt_tensor *t = NULL;
    TU_OK(clt_tensor_create(ctx, CLT_F32, 1, &n, &t));
    tu_poison(t);
    TU_OK(clt_random_uniform(t, seed, offset, lo, hi));
    float *got = malloc((size_t)(n ? n : 1) * 4);
    TU_OK(clt_tensor_read(t, got, (size_t)n * 4));
    for (int64_t i = 0; i < n; i++) {
        float want = ref_uniform(seed, offset, (uint64_t)i, lo, hi);
        ck_assert_msg(memcmp(&got[i], &want, 4) == 0, "uniform n=%lld [%lld]: %.9g vs %.9g",
                      (long long)n, (long long)i, (double)got[i], (double)want);
        ck_assert(got[i] >= lo && got[i] < hi);
    }
    free(got);
    clt_tensor_free(t);
}

START_TEST(uniform_matches_reference)
{
    clt_context *ctx = tu_context();
    uint64_t seed = tu_rng_next(), offset = tu_rng_next();
    check_uniform(ctx, 1, seed, offset, 0.0f, 1.0f);
    check_uniform(ctx, 4099, seed, offset, -3.0f, 5.0f);
    check_uniform(ctx, 7, 0, 0, 0.0f, 1.0f);
    check_uniform(ctx, 0, seed, 1, 0.0f, 1.0f);
    check_uniform(ctx, 1000, ~0ull, ~0ull, 1.0f, 1.0000001f);
    /* A view at an offset: the same numbers as element index, not buffer position. */
    const int64_t all = 100, part = 37;
    clt_tensor *buf = NULL, *view = NULL;
    TU_OK(clt_tensor_create(ctx, CLT_F32, 1, &all, &buf));
    tu_poison(buf);
    TU_OK(clt_tensor_view(buf, 11, 1, &part, &view));
    TU_OK(clt_random_uniform(view, 5, 9, 0.0f, 1.0f));
    float h[100];
    TU_OK(clt_tensor_read(buf, h, sizeof h));
    for (int i = 0; i < 100; i++) {
        if (i < 11 || i >= 48) {
            ck_assert(isnan(h[i]));
        } else {
            float want = ref_uniform(5, 9, (uint64_t)(i - 11), 0.0f, 1.0f);
            ck_assert(memcmp(&h[i], &want, 4) == 0);
        }
    }
    clt_tensor_free(view);
    clt_tensor_free(buf);
    tu_context_free(ctx);
}
END_TEST

START_TEST(same_bits_under_both_profiles)
{
    clt_context_options o;
    clt_context_options_init(&o);
    o.profile = "native";
    clt_context *a = tu_context_with(&o);
    o.profile = "gfx902";
    clt_context *b = tu_context_with(&o);
    /* n: a tail after the CPU normal kernel's 16-element items; kind 2 writes a view at an odd
     * element offset (that kernel's unaligned stores) */
    const int64_t n = 5003, lead = 5, all = n + lead;
    uint64_t seed = tu_rng_next();
    float *ha = malloc(all * 4), *hb = malloc(all * 4);
    for (int kind = 0; kind < 3; kind++) {
        clt_tensor *ba = NULL, *bb = NULL, *ta = NULL, *tb = NULL;
        TU_OK(clt_tensor_create(a, CLT_F32, 1, &all, &ba));
        TU_OK(clt_tensor_create(b, CLT_F32, 1, &all, &bb));
        tu_poison(ba);
        tu_poison(bb);
        TU_OK(clt_tensor_view(ba, kind == 2 ? lead : 0, 1, &n, &ta));
        TU_OK(clt_tensor_view(bb, kind == 2 ? lead : 0, 1, &n, &tb));
        if (kind == 0) {
            TU_OK(clt_random_uniform(ta, seed, 3, -1.0f, 1.0f));
            TU_OK(clt_random_uniform(tb, seed, 3, -1.0f, 1.0f));
        } else {
            TU_OK(clt_random_normal(ta, seed, 3, 0.5f, 2.0f));
            TU_OK(clt_random_normal(tb, seed, 3, 0.5f, 2.0f));
        }
        TU_OK(clt_tensor_read(ba, ha, all * 4));
        TU_OK(clt_tensor_read(bb, hb, all * 4));
        const float *ga = ha + (kind == 2 ? lead : 0), *gb = hb + (kind == 2 ? lead : 0);
        for (int64_t i = 0; i < n; i++)
            ck_assert_msg(memcmp(&ga[i], &gb[i], 4) == 0 && !isnan(ga[i]),
                          "%s [%lld] differs between profiles: %.9g vs %.9g",
                          kind ? "normal" : "uniform", (long long)i, (double)ga[i], (double)gb[i]);
        for (int64_t i = 0; i < all - n; i++) /* nothing outside the view */
            ck_assert(isnan(ha[kind == 2 ? i : n + i]) && isnan(hb[kind == 2 ? i : n + i]));
        clt_tensor_free(ta);
        clt_tensor_free(tb);
        clt_tensor_free(ba);
        clt_tensor_free(bb);
    }
    free(ha);
    free(hb);
    tu_context_free(b);
    tu_context_free(a);
}
END_TEST

/* Element i of clt_random_normal(seed, offset, mean 0, stddev 1) in double: Box-Muller of Philox
 * block i / 4, words (x, y) for elements 4 b (cosine) and 4 b + 1 (sine), (z, w) for 4 b + 2 and
 * 4 b + 3. */
static double ref_normal(uint64_t seed, uint64_t offset, uint64_t i)
{
    uint32_t w[4];
    ref_words(seed, offset, i / 4, w);
    uint32_t a = w[i % 4 / 2 * 2], b = w[i % 4 / 2 * 2 + 1];
    double u1 = ((a >> 8) + 1.0) / 16777216.0, u2 = (b >> 8) / 16777216.0;
    double r = sqrt(-2 * log(u1)), t = 6.283185307179586 * u2;
    return r * (i % 2 ? sin(t) : cos(t));
}

/* clt_random_normal into a view of n elements at element `lead` of a buffer of n + lead + 5:
 * against ref_normal, nothing outside the view written; the values (z, without mean and stddev)
 * into *z when z is not NULL. */
static void check_normal(clt_context *ctx, int64_t n, int64_t lead, uint64_t seed, uint64_t offset,
                         float mean, float stddev, double *z)
{
    const int64_t all = n + lead + 5;
    clt_tensor *buf = NULL, *view = NULL;
    TU_OK(clt_tensor_create(ctx, CLT_F32, 1, &all, &buf));
    tu_poison(buf);
    TU_OK(clt_tensor_view(buf, lead, 1, &n, &view));
    TU_OK(clt_random_normal(view, seed, offset, mean, stddev));
    float *h = malloc((size_t)all * 4);
    TU_OK(clt_tensor_read(buf, h, (size_t)all * 4));
    for (int64_t k = 0; k < all; k++) {
        if (k < lead || k >= lead + n) {
            ck_assert_msg(isnan(h[k]), "normal n=%lld at %lld: [%lld] written", (long long)n,
                          (long long)lead, (long long)k);
            continue;
        }
        int64_t i = k - lead;
        double want = ref_normal(seed, offset, (uint64_t)i);
        ck_assert_msg(fabs(h[k] - (mean + stddev * want)) <= stddev * NORMAL_ATOL + 1e-6,
                      "normal n=%lld at %lld: [%lld] (%s) %.9g vs %.9g", (long long)n,
                      (long long)lead, (long long)i, i % 2 ? "sin" : "cos", (double)h[k],
                      mean + stddev * want);
        if (z)
            z[i] = want;
    }
    free(h);
    clt_tensor_free(view);
    clt_tensor_free(buf);
}

/* random.cl's normal in float on the host, operation for operation (its log and sin/cos
 * polynomials, fmaf, correctly rounded sqrtf, volatile products so that nothing contracts): the
 * device must give these bits exactly, so a seed gives the same numbers on every device. */
static float host_bits_f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint32_t host_bits_u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

static float host_rnd_log(float x)
{
    const int32_t t = (int32_t)(host_bits_u(x) - 0x3f3504f3u);
    const float m = host_bits_f((uint32_t)(t & 0x007fffff) + 0x3f3504f3u);
    const float e = (float)(t >> 23); /* arithmetic shift, as OpenCL's on int */
    volatile float f = m - 1.0f, ff = f * f;
    float q = 8.7348595e-02f;
    q = fmaf(q, f, -1.4307532e-01f);
    q = fmaf(q, f, 1.4917973e-01f);
    q = fmaf(q, f, -1.6570507e-01f);
    q = fmaf(q, f, 1.9962072e-01f);
    q = fmaf(q, f, -2.5001755e-01f);
    q = fmaf(q, f, 3.3339512e-01f);
    q = fmaf(q, f, -4.9999991e-01f);
    const float r = fmaf(ff, q, fmaf(e, 1.428606820309417e-06f, f));
    return fmaf(e, 0.693145751953125f, r);
}

static void host_rnd_sincos(uint32_t k, float *c_out, float *s_out)
{
    const uint32_t j = (k + 0x200000u) >> 22;
    volatile float t = (float)(int32_t)(k - (j << 22)) * 3.7450702e-07f;
    volatile float z = t * t, tz = t * z, zz = z * z;
    const float s = fmaf(tz, fmaf(fmaf(-1.9515285e-04f, z, 8.3321610e-03f), z, -1.6666655e-01f), t);
    const float c = fmaf(zz, fmaf(fmaf(2.4433166e-05f, z, -1.3887316e-03f), z, 4.1666646e-02f),
                         fmaf(-0.5f, z, 1.0f));
    const uint32_t odd = 0u - (j & 1u), cb = host_bits_u(c), sb = host_bits_u(s);
    *c_out = host_bits_f(((sb & odd) | (cb & ~odd)) ^ (((j + 1u) & 2u) << 30));
    *s_out = host_bits_f(((cb & odd) | (sb & ~odd)) ^ ((j & 2u) << 30));
}

static float host_normal_f32(uint64_t seed, uint64_t offset, uint64_t i, float mean, float stddev)
{
    uint32_t w[4];
    ref_words(seed, offset, i / 4, w);
    const uint32_t a = w[i % 4 / 2 * 2], b = w[i % 4 / 2 * 2 + 1];
    volatile float u1 = (float)((a >> 8) + 1u) * (1.0f / 16777216.0f);
    volatile float lg = host_rnd_log(u1), m2 = -2.0f * lg, sq = sqrtf(m2), r = stddev * sq;
    float c, s;
    host_rnd_sincos(b >> 8, &c, &s);
    return fmaf(r, i % 2 ? s : c, mean);
}

START_TEST(normal_same_bits_as_host)
{
    clt_context *ctx = tu_context();
    const int64_t n = 8191; /* odd: a tail after the last whole block */
    const uint64_t seed = tu_rng_next(), offset = tu_rng_next() >> 40;
    clt_tensor *t = NULL;
    TU_OK(clt_tensor_create(ctx, CLT_F32, 1, &n, &t));
    TU_OK(clt_random_normal(t, seed, offset, -0.25f, 1.75f));
    float *h = malloc((size_t)n * 4);
    TU_OK(clt_tensor_read(t, h, (size_t)n * 4));
    for (int64_t i = 0; i < n; i++) {
        const float want = host_normal_f32(seed, offset, (uint64_t)i, -0.25f, 1.75f);
        ck_assert_msg(memcmp(&h[i], &want, 4) == 0, "normal [%lld]: %.9g vs the host's %.9g",
                      (long long)i, (double)h[i], (double)want);
    }
    free(h);
    clt_tensor_free(t);
    tu_context_free(ctx);
}
END_TEST

START_TEST(normal_matches_box_muller)
{
    clt_context *ctx = tu_context();
    const int64_t n = 20011;
    uint64_t seed = tu_rng_next();
    double *z = malloc(n * sizeof *z);
    check_normal(ctx, n, 0, seed, 42, 1.0f, 3.0f, z);
    /* The generator itself: moments of 20011 draws within 5 standard errors, and the cosine and
     * sine of one pair (elements 4 b, 4 b + 1: one radius) uncorrelated. */
    double sum = 0, sq = 0, cross = 0;
    int64_t pairs = 0;
    for (int64_t i = 0; i < n; i++) {
        sum += z[i];
        sq += z[i] * z[i];
        if (i % 4 == 1) {
            cross += z[i - 1] * z[i];
            pairs++;
        }
    }
    double mean = sum / n, var = sq / n - mean * mean;
    ck_assert_msg(fabs(mean) < 5 / sqrt((double)n), "mean %g", mean);
    ck_assert_msg(fabs(var - 1) < 5 * sqrt(2.0 / n), "variance %g", var);
    ck_assert_msg(fabs(cross / pairs) < 5 / sqrt((double)pairs), "pair correlation %g",
                  cross / pairs);
    free(z);
    tu_context_free(ctx);
}
END_TEST

/* Sizes around the 4-element blocks (and the CPU kernel's 32-element items) in views at element
 * offsets that are and are not multiples of 4 and 16 (the kernels' vector and element stores);
 * element i's value depends only on (seed, offset, i): a 5-element call gives the first 5 values of
 * a 4099-element one at another position, to the bit. */
START_TEST(normal_sizes_and_views)
{
    clt_context *ctx = tu_context();
    const int64_t sizes[] = {0, 1, 2, 3, 5, 33, 4099};
    const int64_t leads[] = {0, 1, 3, 4, 6, 16};
    uint64_t seed = tu_rng_next(), offset = tu_rng_next();
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (size_t l = 0; l < sizeof leads / sizeof leads[0]; l++)
            check_normal(ctx, sizes[s], leads[l], seed, offset, -0.5f, 2.0f, NULL);
    const int64_t big = 4099, small = 5, at = 7, room = 12;
    clt_tensor *a = NULL, *buf = NULL, *b = NULL;
    TU_OK(clt_tensor_create(ctx, CLT_F32, 1, &big, &a));
    TU_OK(clt_tensor_create(ctx, CLT_F32, 1, &room, &buf));
    TU_OK(clt_tensor_view(buf, at, 1, &small, &b));
    TU_OK(clt_random_normal(a, seed, offset, 0.0f, 1.0f));
    TU_OK(clt_random_normal(b, seed, offset, 0.0f, 1.0f));
    float *ha = malloc(big * 4), hb[12];
    TU_OK(clt_tensor_read(a, ha, big * 4));
    TU_OK(clt_tensor_read(buf, hb, sizeof hb));
    for (int i = 0; i < small; i++)
        ck_assert_msg(memcmp(&ha[i], &hb[at + i], 4) == 0, "normal [%d]: %.9g vs %.9g", i,
                      (double)ha[i], (double)hb[at + i]);
    free(ha);
    clt_tensor_free(b);
    clt_tensor_free(buf);
    clt_tensor_free(a);
    tu_context_free(ctx);
}
END_TEST

START_TEST(dropout_forward_backward)
{
    clt_context *ctx = tu_context();
    const int64_t s[2] = {37, 101};
    const int64_t n = 37 * 101;
    const float ps[] = {0.0f, 0.1f, 0.5f, 0.9f, 1.0f};
    float *x = malloc(n * 4), *dy = malloc(n * 4), *got = malloc(n * 4);
    uint8_t *mask = malloc(n);
    tu_random_f32(x, n, -2, 2);
    tu_random_f32(dy, n, -2, 2);
    clt_tensor *xt = NULL, *yt = NULL, *mt = NULL, *dyt = NULL, *dxt = NULL;
    TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, 2, s, x, n * 4, &xt));
    TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, 2, s, dy, n * 4, &dyt));
    TU_OK(clt_tensor_create(ctx, CLT_F32, 2, s, &yt));
    TU_OK(clt_tensor_create(ctx, CLT_F32, 2, s, &dxt));
    TU_OK(clt_tensor_create(ctx, CLT_U8, 2, s, &mt));
    for (size_t k = 0; k < sizeof ps / sizeof ps[0]; k++) {
        float p = ps[k], scale = p < 1 ? 1.0f / (1.0f - p) : 0.0f;
        uint64_t seed = tu_rng_next();
        tu_poison(yt);
        tu_poison(mt);
        TU_OK(clt_dropout(xt, p, seed, k, yt, mt));
        TU_OK(clt_tensor_read(yt, got, n * 4));
        TU_OK(clt_tensor_read(mt, mask, n));
        int64_t kept = 0;
        for (int64_t i = 0; i < n; i++) {
            int keep = ref_uniform(seed, k, (uint64_t)i, 0.0f, 1.0f) >= p;
            kept += keep;
            ck_assert_msg(mask[i] == keep, "p=%g mask [%lld]", (double)p, (long long)i);
            float want = keep ? x[i] * scale : 0.0f;
            ck_assert_msg(got[i] == want, "p=%g out [%lld]", (double)p, (long long)i);
        }
        if (p > 0 && p < 1) /* the keep rate within 5 standard errors */
            ck_assert(fabs((double)kept / n - (1 - p)) < 5 * sqrt(p * (1 - p) / n));
        TU_OK(clt_dropout_backward(dyt, mt, p, dxt));
        TU_OK(clt_tensor_read(dxt, got, n * 4));
        for (int64_t i = 0; i < n; i++)
            ck_assert(got[i] == (mask[i] ? dy[i] * scale : 0.0f));
    }
    /* In place. */
    TU_OK(clt_dropout(xt, 0.5f, 1, 2, xt, mt));
    clt_tensor_free(xt);
    clt_tensor_free(yt);
    clt_tensor_free(mt);
    clt_tensor_free(dyt);
    clt_tensor_free(dxt);
    free(x);
    free(dy);
    free(got);
    free(mask);
    tu_context_free(ctx);
}
END_TEST

/* Dropout of n elements through views at element offsets xo, oo (f32) and mo (u8) of larger
 * buffers: whole-block vector accesses when all three are multiples of 4, element accesses else,
 * and the tail of n % 4; nothing outside the views written. */
static void check_dropout_view(clt_context *ctx, int64_t n, int64_t xo, int64_t oo, int64_t mo)
{
    const int64_t all = n + 16;
    const float p = 0.3f, scale = 1.0f / (1.0f - p);
    const uint64_t seed = tu_rng_next(), offset = tu_rng_next();
    float *x = malloc((size_t)all * 4), *got = malloc((size_t)all * 4);
    uint8_t *mask = malloc((size_t)all);
    tu_random_f32(x, (size_t)all, -2, 2);
    clt_tensor *xb = NULL, *ob = NULL, *mb = NULL, *xv = NULL, *ov = NULL, *mv = NULL;
    TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, 1, &all, x, (size_t)all * 4, &xb));
    TU_OK(clt_tensor_create(ctx, CLT_F32, 1, &all, &ob));
    TU_OK(clt_tensor_create(ctx, CLT_U8, 1, &all, &mb));
    tu_poison(ob);
    TU_OK(clt_tensor_fill(mb, 7.0));
    TU_OK(clt_tensor_view(xb, xo, 1, &n, &xv));
    TU_OK(clt_tensor_view(ob, oo, 1, &n, &ov));
    TU_OK(clt_tensor_view(mb, mo, 1, &n, &mv));
    TU_OK(clt_dropout(xv, p, seed, offset, ov, mv));
    TU_OK(clt_tensor_read(ob, got, (size_t)all * 4));
    TU_OK(clt_tensor_read(mb, mask, (size_t)all));
    for (int64_t i = 0; i < all; i++) {
        if (i < oo || i >= oo + n) {
            ck_assert_msg(isnan(got[i]), "dropout n=%lld: out [%lld] written", (long long)n,
                          (long long)i);
        } else {
            int keep = ref_uniform(seed, offset, (uint64_t)(i - oo), 0.0f, 1.0f) >= p;
            float want = keep ? x[xo + i - oo] * scale : 0.0f;
            ck_assert_msg(memcmp(&got[i], &want, 4) == 0,
                          "dropout n=%lld offsets %lld %lld %lld: out [%lld]", (long long)n,
                          (long long)xo, (long long)oo, (long long)mo, (long long)(i - oo));
        }
        int64_t m = i - mo;
        int keep = m >= 0 && m < n ? ref_uniform(seed, offset, (uint64_t)m, 0.0f, 1.0f) >= p : 7;
        ck_assert_msg(mask[i] == keep, "dropout n=%lld: mask byte %lld", (long long)n,
                      (long long)i);
    }
    clt_tensor_free(xv);
    clt_tensor_free(ov);
    clt_tensor_free(mv);
    clt_tensor_free(xb);
    clt_tensor_free(ob);
    clt_tensor_free(mb);
    free(x);
    free(got);
    free(mask);
}

START_TEST(dropout_sizes_and_views)
{
    clt_context *ctx = tu_context();
    const int64_t sizes[] = {0, 1, 3, 4, 7, 4099};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        check_dropout_view(ctx, sizes[i], 0, 0, 0);
        check_dropout_view(ctx, sizes[i], 4, 8, 12); /* vector accesses at offsets */
        check_dropout_view(ctx, sizes[i], 1, 6, 3);  /* element accesses */
        check_dropout_view(ctx, sizes[i], 4, 8, 2);  /* only the mask misaligned */
    }
    tu_context_free(ctx);
}
END_TEST

START_TEST(bad_input)
{
    clt_context *ctx = tu_context();
    const int64_t s[1] = {10}, t[1] = {11};
    clt_tensor *f = NULL, *g = NULL, *m = NULL, *i = NULL;
    TU_OK(clt_tensor_create(ctx, CLT_F32, 1, s, &f));
    TU_OK(clt_tensor_create(ctx, CLT_F32, 1, t, &g));
    TU_OK(clt_tensor_create(ctx, CLT_U8, 1, s, &m));
    TU_OK(clt_tensor_create(ctx, CLT_I32, 1, s, &i));
    TU_OK(clt_tensor_fill(f, 4.0));
    TU_EXPECT_STATUS(clt_random_uniform(NULL, 1, 2, 0, 1), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_STATUS(clt_random_uniform(f, 1, 2, 1, 1), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_random_uniform");
    TU_EXPECT_STATUS(clt_random_uniform(i, 1, 2, 0, 1), CLT_ERR_INVALID_DTYPE);
    TU_EXPECT_STATUS(clt_random_normal(f, 1, 2, 0, -1), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_random_normal");
    TU_EXPECT_STATUS(clt_dropout(f, 1.5f, 1, 2, f, m), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_dropout");
    TU_EXPECT_STATUS(clt_dropout(f, 0.5f, 1, 2, g, m), CLT_ERR_INVALID_SHAPE);
    TU_EXPECT_STATUS(clt_dropout(f, 0.5f, 1, 2, f, i), CLT_ERR_INVALID_DTYPE);
    TU_EXPECT_STATUS(clt_dropout(f, 0.5f, 1, 2, f, NULL), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_STATUS(clt_dropout_backward(f, m, NAN, f), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_dropout_backward");
    float h[10];
    TU_OK(clt_tensor_read(f, h, sizeof h));
    for (int k = 0; k < 10; k++)
        ck_assert(h[k] == 4.0f);
    clt_tensor_free(f);
    clt_tensor_free(g);
    clt_tensor_free(m);
    clt_tensor_free(i);
    tu_context_free(ctx);
}
END_TEST

Suite *random_suite(void)
{
    Suite *s = suite_create("random");
    TCase *tc = tcase_create("random");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, philox_known_answer);
    tcase_add_test(tc, uniform_matches_reference);
    tcase_add_test(tc, same_bits_under_both_profiles);
    tcase_add_test(tc, normal_matches_box_muller);
    tcase_add_test(tc, normal_same_bits_as_host);
    tcase_add_test(tc, normal_sizes_and_views);
    tcase_add_test(tc, dropout_forward_backward);
    tcase_add_test(tc, dropout_sizes_and_views);
    tcase_add_test(tc, bad_input);
    suite_add_tcase(s, tc);
    return s;
}
