/* FFT plans (cltensor_fft.h) against direct float64 DFTs on fresh random data: every kind (C2C both
 * directions, R2C, C2R), ranks 1-3, lengths 1, 2, primes, 85, 1000 and powers of two, batches,
 * explicit strides and distances, in place, every normalisation, round trips, the convenience calls,
 * the clFFT backend where it can serve, and every documented error (nothing changes on error).
 * Accuracy: relative L2 error <= 2e-7 log2(N) + 1e-7, N the transform's total length. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/common/launch.h"
#include "ref/fft_ref.h"
#include "util/test_util.h"

typedef struct fft_case {
    clt_fft_kind kind;
    int dir;
    clt_fft_norm norm;
    int rank;
    int64_t n[3];
    int64_t batch;
    int64_t in_stride[3], out_stride[3]; /* all 0: contiguous */
    int64_t in_dist, out_dist;
    const char *impl;
    int in_place;
    int64_t in_offset; /* elements before the input: it is a view at this offset (not in place) */
} fft_case;

static double tolerance(const fft_case *c)
{
    double total = 1;
    for (int a = 0; a < c->rank; a++)
        total *= (double)c->n[a];
    return 2e-7 * log2(total) + 1e-7;
}

static double norm_scale(const fft_case *c, int dir)
{
    double total = 1;
    for (int a = 0; a < c->rank; a++)
        total *= (double)c->n[a];
    if (c->norm == CLT_FFT_NORM_ORTHO)
        return 1 / sqrt(total);
    if (c->norm == CLT_FFT_NORM_FORWARD)
        return dir < 0 ? 1 / total : 1;
    return dir > 0 ? 1 / total : 1;
}

/* Element index of logical position idx (rank dims, side lengths len) of batch item b. */
static int64_t at(const struct fft_case *c, const int64_t *stride, int64_t dist, const int64_t *len,
                  int64_t b, int64_t e)
{
    int64_t off = b * dist;
    for (int a = c->rank - 1; a >= 0; a--) {
        off += (e % len[a]) * stride[a];
        e /= len[a];
    }
    return off;
}

static void fill_strides(const fft_case *c, const int64_t *len, const int64_t *given, int64_t given_dist,
                         int64_t *stride, int64_t *dist)
{
    int64_t s = 1;
    for (int a = c->rank - 1; a >= 0; a--) {
        stride[a] = given[a] ? given[a] : s;
        s *= len[a];
    }
    *dist = given_dist ? given_dist : s;
}

static int64_t span(const fft_case *c, const int64_t *len, const int64_t *stride, int64_t dist)
{
    int64_t s = (c->batch - 1) * dist;
    for (int a = 0; a < c->rank; a++)
        s += (len[a] - 1) * stride[a];
    return s + 1;
}

/* clFFT and VkFFT read C2R input as a true Hermitian half (clFFT uses the imaginary parts of the DC and
 * Nyquist terms, VkFFT's 2-D C2R the asymmetric parts of those columns, where torch and our kernels
 * drop them): for them the input is the half spectrum of random real data, as irfft meets it after
 * rfft, so the comparison is about the transform. */
static int64_t at(const struct fft_case *c, const int64_t *stride, int64_t dist, const int64_t *len,
                  int64_t b, int64_t e);

static void make_hermitian(const fft_case *c, float *hin, const int64_t *in_len, const int64_t *is,
                           int64_t idist)
{
    int64_t total = 1, half_total = 1;
    for (int a = 0; a < c->rank; a++) {
        total *= c->n[a];
        half_total *= in_len[a];
    }
    double *full = malloc(sizeof(double) * 2 * (size_t)total);
    float *real = malloc(sizeof(float) * (size_t)total);
    for (int64_t b = 0; b < c->batch; b++) {
        tu_random_f32(real, (size_t)total, -1, 1);
        for (int64_t e = 0; e < total; e++) {
            full[2 * e] = real[e];
            full[2 * e + 1] = 0;
        }
        ref_dft(full, c->rank, c->n, -1, 1.0 / sqrt((double)total));
        for (int64_t e = 0; e < half_total; e++) {
            int64_t src = 0, rem = e, mul = 1;
            for (int a = c->rank - 1; a >= 0; a--) {
                src += (rem % in_len[a]) * mul;
                rem /= in_len[a];
                mul *= c->n[a];
            }
            int64_t o = at(c, is, idist, in_len, b, e);
            hin[2 * o] = (float)full[2 * src];
            hin[2 * o + 1] = (float)full[2 * src + 1];
        }
    }
    free(full);
    free(real);
}

static void run_case(clt_context *ctx, const fft_case *c)
{
    int r = c->rank;
    int64_t in_len[3], out_len[3], total = 1;
    for (int a = 0; a < r; a++) {
        in_len[a] = out_len[a] = c->n[a];
        total *= c->n[a];
    }
    int64_t half = c->n[r - 1] / 2 + 1;
    if (c->kind == CLT_FFT_R2C)
        out_len[r - 1] = half;
    if (c->kind == CLT_FFT_C2R)
        in_len[r - 1] = half;
    int64_t is[3], os[3], idist, odist;
    fill_strides(c, in_len, c->in_stride, c->in_dist, is, &idist);
    fill_strides(c, out_len, c->out_stride, c->out_dist, os, &odist);
    int in_cplx = c->kind != CLT_FFT_R2C, out_cplx = c->kind != CLT_FFT_C2R;
    int64_t in_span = span(c, in_len, is, idist), out_span = span(c, out_len, os, odist);
    if (c->in_place && out_span > in_span)
        in_span = out_span;
    size_t in_floats = (size_t)in_span * (in_cplx ? 2 : 1);
    size_t out_floats = (size_t)out_span * (out_cplx ? 2 : 1);
    size_t lead = (size_t)c->in_offset * (in_cplx ? 2 : 1);
    float *hall = malloc(sizeof(float) * (lead + in_floats)), *hin = hall + lead;
    float *hout = malloc(sizeof(float) * (c->in_place ? in_floats : out_floats));
    tu_random_f32(hall, lead + in_floats, -1.0f, 1.0f);
    if (c->kind == CLT_FFT_C2R && c->impl && strcmp(c->impl, "ours"))
        make_hermitian(c, hin, in_len, is, idist);
    clt_tensor *tall, *tin, *tout;
    int64_t shape_all = in_span + c->in_offset, shape_in = in_span, shape_out = out_span;
    TU_OK(clt_tensor_create_from_host(ctx, in_cplx ? CLT_C64 : CLT_F32, 1, &shape_all, hall,
                                      sizeof(float) * (lead + in_floats), &tall));
    TU_OK(clt_tensor_view(tall, c->in_offset, 1, &shape_in, &tin));
    if (c->in_place) {
        tout = tin;
    } else {
        TU_OK(clt_tensor_create(ctx, out_cplx ? CLT_C64 : CLT_F32, 1, &shape_out, &tout));
        tu_poison(tout);
    }
    clt_fft_desc d;
    clt_fft_desc_init(&d);
    d.kind = c->kind;
    d.direction = c->dir;
    d.norm = c->norm;
    d.rank = r;
    d.batch = c->batch;
    d.impl = c->impl ? c->impl : "ours";
    for (int a = 0; a < r; a++) {
        d.n[a] = c->n[a];
        d.in_stride[a] = c->in_stride[a];
        d.out_stride[a] = c->out_stride[a];
    }
    d.in_dist = c->in_dist;
    d.out_dist = c->out_dist;
    clt_fft_plan *plan;
    TU_OK(clt_fft_plan_get(ctx, &d, &plan));
    clt_fft_plan *again;
    TU_OK(clt_fft_plan_get(ctx, &d, &again));
    ck_assert_ptr_eq(plan, again); /* cached */
    TU_OK(clt_fft_execute(plan, tin, tout));
    TU_OK(clt_tensor_read(tout, hout, clt_tensor_nbytes(tout)));

    int dir = c->kind == CLT_FFT_R2C ? -1 : c->kind == CLT_FFT_C2R ? 1 : c->dir;
    double scale = norm_scale(c, dir);
    double *work = malloc(sizeof(double) * 2 * (size_t)total);
    double *real = malloc(sizeof(double) * (size_t)total);
    double err = 0, ref_norm = 0;
    int64_t in_elems = 1, out_elems = 1;
    for (int a = 0; a < r; a++) {
        in_elems *= in_len[a];
        out_elems *= out_len[a];
    }
    for (int64_t b = 0; b < c->batch; b++) {
        if (c->kind == CLT_FFT_C2R) {
            for (int64_t e = 0; e < in_elems; e++) {
                int64_t o = at(c, is, idist, in_len, b, e);
                work[2 * e] = hin[2 * o];
                work[2 * e + 1] = hin[2 * o + 1];
            }
            ref_c2r(work, real, r, c->n, scale);
            for (int64_t e = 0; e < out_elems; e++) {
                double got = hout[at(c, os, odist, out_len, b, e)];
                err += (got - real[e]) * (got - real[e]);
                ref_norm += real[e] * real[e];
            }
            continue;
        }
        for (int64_t e = 0; e < total; e++) {
            int64_t o = at(c, is, idist, in_len, b, e);
            work[2 * e] = in_cplx ? hin[2 * o] : hin[o];
            work[2 * e + 1] = in_cplx ? hin[2 * o + 1] : 0;
        }
        ref_dft(work, r, c->n, dir, scale);
        for (int64_t e = 0; e < out_elems; e++) {
            /* position e in the output's (possibly halved) shape -> the full spectrum index */
            int64_t full = 0, rem = e, mul = 1;
            for (int a = r - 1; a >= 0; a--) {
                full += (rem % out_len[a]) * mul;
                rem /= out_len[a];
                mul *= c->n[a];
            }
            int64_t o = at(c, os, odist, out_len, b, e);
            double dr = hout[2 * o] - work[2 * full], di = hout[2 * o + 1] - work[2 * full + 1];
            err += dr * dr + di * di;
            ref_norm += work[2 * full] * work[2 * full] + work[2 * full + 1] * work[2 * full + 1];
        }
    }
    double rel = sqrt(err) / (ref_norm > 0 ? sqrt(ref_norm) : 1);
    ck_assert_msg(rel <= tolerance(c) && !isnan(rel),
                  "kind %d dir %d norm %d rank %d n %lld x %lld x %lld batch %lld impl %s (%s): relative "
                  "L2 error %.3g > %.3g",
                  c->kind, c->dir, c->norm, r, (long long)c->n[0], (long long)(r > 1 ? c->n[1] : 0),
                  (long long)(r > 2 ? c->n[2] : 0), (long long)c->batch, d.impl,
                  clt_fft_plan_backend(plan), rel, tolerance(c));
    free(work);
    free(real);
    free(hall);
    free(hout);
    if (!c->in_place)
        clt_tensor_free(tout);
    clt_tensor_free(tin);
    clt_tensor_free(tall);
}

/* 85, 105 = 3 5 7, 111 = 3 37: odd lengths, whose later fft_rows stages have an odd span (four
 * butterflies in lanes, the rest one by one) and 37 a radix past the lanes' 32 */
static const int64_t lengths_1d[] = {1,   2,   3,   4,    7,    8,    12,   16,  85,
                                     97,  105, 111, 128, 1000, 1024, 1536, 4096};
#define N_LENGTHS (sizeof lengths_1d / sizeof lengths_1d[0])

START_TEST(test_c2c_1d)
{
    clt_context *ctx = tu_context();
    for (size_t i = 0; i < N_LENGTHS; i++)
        for (int dir = -1; dir <= 1; dir += 2) {
            fft_case c = {.kind = CLT_FFT_C2C, .dir = dir, .rank = 1, .n = {lengths_1d[i]}, .batch = 3};
            run_case(ctx, &c);
        }
    tu_context_free(ctx);
}
END_TEST

/* Our backend on GPU-style profiles: lengths up to 2048 whose radices are at most 17 run a pass in
 * one fft_local launch (85 = 5 17, 1000 = 4 2 5 5 5, 7 with its identity stage, 2048, real and
 * 2-D passes too); 97 (a prime above 17) and 4096 keep the stage kernels. CPU-style profiles never
 * run fft_local. The results are checked as everywhere else. */
START_TEST(test_local_path)
{
    clt_context *ctx = tu_profiled_context();
    static const struct {
        clt_fft_kind kind;
        int rank;
        int64_t n[2];
        int local;
    } cases[] = {{CLT_FFT_C2C, 1, {85}, 1},    {CLT_FFT_C2C, 1, {1000}, 1}, {CLT_FFT_C2C, 1, {7}, 1},
                 {CLT_FFT_C2C, 1, {2048}, 1},  {CLT_FFT_R2C, 1, {1000}, 1}, {CLT_FFT_C2R, 1, {85}, 1},
                 {CLT_FFT_C2C, 2, {12, 20}, 1}, {CLT_FFT_C2C, 1, {97}, 0},  {CLT_FFT_C2C, 1, {4096}, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fft_case c = {.kind = cases[i].kind, .dir = cases[i].kind == CLT_FFT_C2R ? 1 : -1,
                      .rank = cases[i].rank, .batch = 37};
        memcpy(c.n, cases[i].n, sizeof c.n);
        const uint64_t before = tu_launches(ctx, NULL, "fft_local");
        run_case(ctx, &c);
        c.in_offset = 3; /* the input a view past the start of its buffer (contiguous batches: one run) */
        run_case(ctx, &c);
        const int ran = tu_launches(ctx, NULL, "fft_local") > before;
        if (clt__cpu_style(ctx))
            ck_assert_msg(!ran, "n %lld: fft_local ran on a CPU-style profile", (long long)c.n[0]);
        else
            ck_assert_msg(ran == cases[i].local, "n %lld: fft_local %s", (long long)c.n[0],
                          cases[i].local ? "did not run" : "ran");
    }
    tu_context_free(ctx);
}
END_TEST

/* fft_wide (lengths past fft_local's buffers, one transform a group, registers between stages):
 * its default shapes take 256 items a group, so the gfx902 profile (256) runs them too; a second
 * round asks for 256 items (CLT_FFT_LOCAL_WG) with CLT_FFT_MAX_GROUPS=2, so groups loop over the
 * transforms: 4096 exchanges complex values in one round (radices 16 16 16), 8192 (32 16 16)
 * floats in two (its 69 KiB of complex values exceed 64 KiB), and so does 4096 with
 * CLT_FFT_WIDE_SPLIT=1 (radices 8 8 8 8); 2310 = 2 3 5 7 11
 * takes odd radices and uneven shares; R2C / C2R, an input view, in place (inverse) and a strided
 * column axis; 16384 (its float buffer past 64 KiB) never runs it. */
START_TEST(test_wide_path)
{
    clt_context *ctx = tu_profiled_context();
    static const struct {
        clt_fft_kind kind;
        int rank;
        int64_t n[2];
        int split;
        int wide; /* 1: fft_wide must run (GPU-style profiles) */
    } cases[] = {{CLT_FFT_C2C, 1, {4096}, 0, 1}, {CLT_FFT_C2C, 1, {4096}, 1, 1},
                 {CLT_FFT_C2C, 1, {8192}, 0, 1}, {CLT_FFT_C2C, 1, {2310}, 0, 1},
                 {CLT_FFT_R2C, 1, {8192}, 0, 1}, {CLT_FFT_C2R, 1, {8192}, 0, 1},
                 {CLT_FFT_C2C, 2, {4096, 3}, 0, 1}, {CLT_FFT_C2C, 1, {16384}, 0, 0}};
    const int gpu = !clt__cpu_style(ctx);
    for (int asked = 0; asked < 2; asked++)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            if (asked) { /* and 2 groups, so that a group loops over the batch's transforms */
                ck_assert(setenv("CLT_FFT_LOCAL_WG", "256", 1) == 0);
                ck_assert(setenv("CLT_FFT_MAX_GROUPS", "2", 1) == 0);
            }
            if (cases[i].split)
                ck_assert(setenv("CLT_FFT_WIDE_SPLIT", "1", 1) == 0);
            fft_case c = {.kind = cases[i].kind, .dir = cases[i].kind == CLT_FFT_C2R ? 1 : -1,
                          .rank = cases[i].rank, .batch = cases[i].n[0] > 4096 ? 1 : 3};
            memcpy(c.n, cases[i].n, sizeof c.n);
            const uint64_t before = tu_launches(ctx, NULL, "fft_wide");
            run_case(ctx, &c);
            /* the reference is a direct DFT: the variations on the shorter lengths only */
            if (c.n[0] <= 4096 && c.rank == 1) {
                c.in_offset = 3;
                run_case(ctx, &c);
                c.in_offset = 0;
                c.in_place = c.kind == CLT_FFT_C2C;
                c.dir = c.kind == CLT_FFT_C2C ? 1 : c.dir;
                run_case(ctx, &c);
            }
            const int ran = tu_launches(ctx, NULL, "fft_wide") > before;
            unsetenv("CLT_FFT_LOCAL_WG");
            unsetenv("CLT_FFT_MAX_GROUPS");
            unsetenv("CLT_FFT_WIDE_SPLIT");
            /* without the knob: where the device takes the default group (fft_shape.c wide_wg: 256
             * items for each of these lengths, an item one butterfly of the largest radix) */
            clt_context_limits lim;
            TU_OK(clt_context_get_limits(ctx, &lim));
            const int expect = gpu && cases[i].wide && (asked || lim.max_work_group_size >= 256);
            ck_assert_msg(ran == expect, "n %lld kind %d (CLT_FFT_LOCAL_WG %s): fft_wide %s",
                          (long long)c.n[0], (int)c.kind, asked ? "256" : "unset",
                          ran ? "ran" : "did not run");
        }
    tu_context_free(ctx);
}
END_TEST

START_TEST(test_r2c_c2r_1d)
{
    clt_context *ctx = tu_context();
    for (size_t i = 0; i < N_LENGTHS; i++) {
        fft_case c = {.kind = CLT_FFT_R2C, .dir = -1, .rank = 1, .n = {lengths_1d[i]}, .batch = 2};
        run_case(ctx, &c);
        c.kind = CLT_FFT_C2R;
        c.dir = 1;
        run_case(ctx, &c);
    }
    /* More rows than fft_rows' work items on a CPU device (16 per compute unit), so each item takes
     * several: R2C then pairs two real rows per complex transform, and an odd batch leaves one
     * alone. */
    clt_device_info info;
    clt_context_device_info(ctx, &info);
    const int64_t rows = 2 * 16 * (int64_t)info.compute_units + 3;
    static const int64_t paired[] = {1, 2, 5, 17, 64, 85, 100};
    for (size_t i = 0; i < sizeof paired / sizeof paired[0]; i++) {
        fft_case c = {.kind = CLT_FFT_R2C, .dir = -1, .rank = 1, .n = {paired[i]}, .batch = rows};
        run_case(ctx, &c);
    }
    tu_context_free(ctx);
}
END_TEST

START_TEST(test_multi_dim)
{
    clt_context *ctx = tu_context();
    static const struct {
        int rank;
        int64_t n[3];
    } shapes[] = {{2, {6, 10}}, {2, {17, 8}}, {2, {1, 5}}, {2, {7, 9}}, {2, {32, 33}},
                  {3, {4, 6, 5}}, {3, {3, 1, 8}}, {3, {8, 8, 8}}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        fft_case c = {.rank = shapes[s].rank, .batch = 2};
        memcpy(c.n, shapes[s].n, sizeof c.n);
        c.kind = CLT_FFT_C2C;
        c.dir = -1;
        run_case(ctx, &c);
        c.dir = 1;
        run_case(ctx, &c);
        c.kind = CLT_FFT_R2C;
        c.dir = -1;
        run_case(ctx, &c);
        c.kind = CLT_FFT_C2R;
        c.dir = 1;
        run_case(ctx, &c);
    }
    tu_context_free(ctx);
}
END_TEST

/* Passes with enough transforms for CPU devices' four-transform lanes (fft_rows's lanes4 takes them when
 * the batch gives every item 4 transforms per scratch row: these batches do up to 16 compute units):
 * strided (column) passes with a width that leaves 3 columns over (131), widths cut by the batch (140,
 * R2C's half 132, C2R's 126), radix 2, 4, 3, 5 and a prime above the registers' radices (37), every
 * kind; contiguous rows of 512 (and of 256, which CPU devices run in the row path, radix 8), 768 (radix 3),
 * 85 and 375 (odd radices 3, 5, 17 through the symmetric odd DFT) in batches that leave 3 and 2 rows over;
 * R2C and C2R rows in pairs, 8 at a time (512, also after / before a column pass), with rows left over for
 * the one-pair path, and C2R pairs of 100 (even: a Nyquist term) and 256 in the one-pair path. */
START_TEST(test_column_lanes)
{
    clt_context *ctx = tu_context();
    static const struct {
        clt_fft_kind kind;
        int rank;
        int64_t n[3];
        int64_t batch;
    } cases[] = {{CLT_FFT_C2C, 2, {12, 131}, 8}, {CLT_FFT_C2C, 3, {10, 6, 140}, 2}, {CLT_FFT_C2C, 2, {37, 130}, 4},
                 {CLT_FFT_C2C, 2, {64, 130}, 4}, {CLT_FFT_R2C, 2, {20, 262}, 4}, {CLT_FFT_C2R, 2, {24, 250}, 4},
                 {CLT_FFT_C2C, 1, {256}, 131},   {CLT_FFT_C2C, 1, {768}, 130},  {CLT_FFT_R2C, 1, {256}, 131},
                 {CLT_FFT_R2C, 2, {70, 512}, 2},  {CLT_FFT_C2C, 1, {85}, 131},   {CLT_FFT_C2C, 1, {375}, 130},
                 {CLT_FFT_C2R, 1, {256}, 131},   {CLT_FFT_C2R, 2, {70, 512}, 2}, {CLT_FFT_C2R, 1, {100}, 9},
                 {CLT_FFT_C2C, 1, {512}, 131},   {CLT_FFT_R2C, 1, {512}, 131},  {CLT_FFT_C2R, 1, {512}, 131}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int dir = -1; dir <= 1; dir += 2) {
            if ((cases[i].kind == CLT_FFT_R2C && dir > 0) || (cases[i].kind == CLT_FFT_C2R && dir < 0))
                continue;
            fft_case c = {.kind = cases[i].kind, .dir = dir, .rank = cases[i].rank, .batch = cases[i].batch};
            memcpy(c.n, cases[i].n, sizeof c.n);
            run_case(ctx, &c);
        }
    tu_context_free(ctx);
}
END_TEST

START_TEST(test_norms)
{
    clt_context *ctx = tu_context();
    clt_fft_norm norms[] = {CLT_FFT_NORM_BACKWARD, CLT_FFT_NORM_ORTHO, CLT_FFT_NORM_FORWARD};
    for (int i = 0; i < 3; i++)
        for (int kind = 0; kind < 3; kind++)
            for (int dir = -1; dir <= 1; dir += 2) {
                if (kind != CLT_FFT_C2C && dir != (kind == CLT_FFT_R2C ? -1 : 1))
                    continue;
                fft_case c = {.kind = (clt_fft_kind)kind, .dir = dir, .norm = norms[i], .rank = 2,
                              .n = {6, 12}, .batch = 2};
                run_case(ctx, &c);
            }
    tu_context_free(ctx);
}
END_TEST

START_TEST(test_strided)
{
    clt_context *ctx = tu_context();
    /* 1-D along a column: stride 3, batches 40 apart on input; output stride 2, batches 30 apart */
    fft_case c1 = {.kind = CLT_FFT_C2C, .dir = -1, .rank = 1, .n = {12}, .batch = 4, .in_stride = {3},
                   .out_stride = {2}, .in_dist = 40, .out_dist = 30};
    run_case(ctx, &c1);
    c1.n[0] = 13;
    c1.dir = 1;
    run_case(ctx, &c1);
    /* interleaved batches: batch stride 1, element stride = batch */
    fft_case c2 = {.kind = CLT_FFT_C2C, .dir = -1, .rank = 1, .n = {10}, .batch = 5, .in_stride = {5},
                   .in_dist = 1, .out_stride = {5}, .out_dist = 1};
    run_case(ctx, &c2);
    /* 2-D with padded rows, R2C and C2R */
    fft_case c3 = {.kind = CLT_FFT_R2C, .dir = -1, .rank = 2, .n = {6, 10}, .batch = 3,
                   .in_stride = {12, 1}, .in_dist = 80, .out_stride = {7, 1}, .out_dist = 45};
    run_case(ctx, &c3);
    fft_case c4 = {.kind = CLT_FFT_C2R, .dir = 1, .rank = 2, .n = {6, 10}, .batch = 3,
                   .in_stride = {7, 1}, .in_dist = 45, .out_stride = {1, 6}, .out_dist = 70};
    run_case(ctx, &c4);
    /* CPU row kernel: strided first and last stages around contiguous middle stages in float4 lanes
     * (64 = 4 4 4; 1000 = 4 2 5 5 5; 68 = 4 17, radix 17 in lanes; 148 = 4 37, radix 37 past the
     * lane registers), single transforms and a batch */
    static const int64_t lane_n[] = {64, 1000, 68, 148};
    for (size_t i = 0; i < sizeof lane_n / sizeof lane_n[0]; i++) {
        fft_case c = {.kind = CLT_FFT_C2C, .dir = i % 2 ? 1 : -1, .rank = 1, .n = {lane_n[i]}, .batch = 1,
                      .in_stride = {3}, .out_stride = {2}, .in_dist = 3 * lane_n[i] + 1,
                      .out_dist = 2 * lane_n[i] + 3};
        run_case(ctx, &c);
        c.batch = 3;
        c.in_stride[0] = c.out_stride[0] = 1;
        c.in_dist = lane_n[i] + 5;
        c.out_dist = lane_n[i];
        run_case(ctx, &c);
    }
    /* 3-D transposed axes */
    fft_case c5 = {.kind = CLT_FFT_C2C, .dir = 1, .rank = 3, .n = {3, 4, 5}, .batch = 2,
                   .in_stride = {1, 3, 12}, .in_dist = 60, .out_stride = {20, 5, 1}, .out_dist = 61};
    run_case(ctx, &c5);
    tu_context_free(ctx);
}
END_TEST

START_TEST(test_in_place)
{
    clt_context *ctx = tu_context();
    static const int64_t n[] = {1, 7, 64, 97, 1000};
    for (size_t i = 0; i < sizeof n / sizeof n[0]; i++) {
        fft_case c = {.kind = CLT_FFT_C2C, .dir = -1, .rank = 1, .n = {n[i]}, .batch = 3, .in_place = 1};
        run_case(ctx, &c);
    }
    fft_case c2 = {.kind = CLT_FFT_C2C, .dir = 1, .rank = 2, .n = {5, 8}, .batch = 2, .in_place = 1,
                   .norm = CLT_FFT_NORM_ORTHO};
    run_case(ctx, &c2);
    fft_case c3 = {.kind = CLT_FFT_C2C, .dir = -1, .rank = 3, .n = {3, 3, 3}, .batch = 1, .in_place = 1};
    run_case(ctx, &c3);
    tu_context_free(ctx);
}
END_TEST

/* clFFT: lengths of 2, 3, 5, 7 (its radices); lengths with a larger prime are UNSUPPORTED. Baking
 * costs seconds per plan on POCL, so few plans. */
START_TEST(test_clfft)
{
    clt_context *ctx = tu_context();
    clt_fft_desc probe;
    clt_fft_desc_init(&probe);
    probe.n[0] = 8;
    probe.impl = "clfft";
    clt_fft_plan *p8;
    if (clt_fft_plan_get(ctx, &probe, &p8) == CLT_ERR_UNSUPPORTED) { /* built without clFFT */
        TU_EXPECT_MESSAGE(clt_last_error(ctx), "not built");
        tu_context_free(ctx);
        return;
    }
    fft_case c1 = {.kind = CLT_FFT_C2C, .dir = -1, .rank = 1, .n = {60}, .batch = 3, .impl = "clfft"};
    run_case(ctx, &c1);
    fft_case c2 = {.kind = CLT_FFT_R2C, .dir = -1, .rank = 2, .n = {8, 12}, .batch = 2, .impl = "clfft",
                   .norm = CLT_FFT_NORM_ORTHO};
    run_case(ctx, &c2);
    fft_case c3 = {.kind = CLT_FFT_C2R, .dir = 1, .rank = 1, .n = {16}, .batch = 2, .impl = "clfft"};
    run_case(ctx, &c3);
    clt_fft_desc d;
    clt_fft_desc_init(&d);
    d.n[0] = 85; /* 5 x 17 */
    d.impl = "clfft";
    clt_fft_plan *plan = (clt_fft_plan *)&d;
    TU_EXPECT_STATUS(clt_fft_plan_get(ctx, &d, &plan), CLT_ERR_UNSUPPORTED);
    ck_assert_ptr_null(plan);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_fft_plan_get");
    d.impl = NULL; /* auto always finds a backend */
    TU_OK(clt_fft_plan_get(ctx, &d, &plan));
    tu_context_free(ctx);
}
END_TEST

/* The backend "auto" picks (fft_table.c): ours on CPU devices; on GPUs ours where VkFFT would run
 * Bluestein and fft_local takes every axis (85 = 5 x 17, 2-D 17 x 34) and on NVIDIA for 1-D 1000,
 * else VkFFT where it is built in (64, 4096, 97 = a prime above fft_local's radices, 1000 elsewhere).
 * Each plan also runs against the reference. */
START_TEST(test_auto_backend)
{
    clt_context *ctx = tu_context();
    clt_device_info info;
    TU_OK(clt_context_device_info(ctx, &info));
    int gpu = info.type != CLT_DEVICE_CPU;
    clt_fft_desc probe;
    clt_fft_desc_init(&probe);
    probe.n[0] = 64;
    probe.impl = "vkfft";
    clt_fft_plan *plan;
    int vkfft = clt_fft_plan_get(ctx, &probe, &plan) == CLT_SUCCESS;
    static const struct {
        int rank;
        int64_t n[2];
        int local; /* 1: ours on every GPU, 2: on NVIDIA's */
    } cases[] = {{1, {85, 0}, 1},   {2, {17, 34}, 1}, {1, {64, 0}, 0},
                 {1, {4096, 0}, 0}, {1, {97, 0}, 0},  {1, {1000, 0}, 2}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        clt_fft_desc d;
        clt_fft_desc_init(&d);
        d.rank = cases[i].rank;
        for (int r = 0; r < d.rank; r++)
            d.n[r] = cases[i].n[r];
        TU_OK(clt_fft_plan_get(ctx, &d, &plan));
        int local = cases[i].local == 1 || (cases[i].local == 2 && info.vendor == CLT_VENDOR_NVIDIA);
        const char *want = !gpu || local || !vkfft ? "ours" : "vkfft";
        ck_assert_msg(!strcmp(clt_fft_plan_backend(plan), want), "auto for %lld (rank %d): %s, expected %s",
                      (long long)cases[i].n[0], d.rank, clt_fft_plan_backend(plan), want);
        fft_case c = {.kind = CLT_FFT_C2C, .dir = -1, .rank = cases[i].rank,
                      .n = {cases[i].n[0], cases[i].n[1]}, .batch = 3};
        run_case(ctx, &c);
    }
    tu_context_free(ctx);
}
END_TEST

/* VkFFT where it is built in (every kind, odd and prime lengths, 2-D, 3-D); otherwise asking for it is
 * UNSUPPORTED. */
START_TEST(test_vkfft)
{
    clt_context *ctx = tu_context();
    clt_fft_desc d;
    clt_fft_desc_init(&d);
    d.n[0] = 64;
    d.impl = "vkfft";
    clt_fft_plan *plan;
    clt_status st = clt_fft_plan_get(ctx, &d, &plan);
    if (st == CLT_ERR_UNSUPPORTED) {
        TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_fft_plan_get");
        tu_context_free(ctx);
        return;
    }
    TU_OK(st);
    ck_assert_str_eq(clt_fft_plan_backend(plan), "vkfft");
    d.n[0] = 1; /* VkFFT has no plan for a length of 1 */
    TU_EXPECT_STATUS(clt_fft_plan_get(ctx, &d, &plan), CLT_ERR_UNSUPPORTED);
    static const int64_t n[] = {2, 8, 85, 97, 1000, 4096};
    for (size_t i = 0; i < sizeof n / sizeof n[0]; i++)
        for (int kind = 0; kind < 3; kind++) {
            fft_case c = {.kind = (clt_fft_kind)kind, .dir = kind == CLT_FFT_C2R ? 1 : -1, .rank = 1,
                          .n = {n[i]}, .batch = 3, .impl = "vkfft"};
            run_case(ctx, &c);
            if (kind == CLT_FFT_C2C) {
                c.dir = 1;
                run_case(ctx, &c);
            }
        }
    fft_case c2 = {.kind = CLT_FFT_R2C, .dir = -1, .rank = 2, .n = {16, 20}, .batch = 2, .impl = "vkfft"};
    run_case(ctx, &c2);
    c2.kind = CLT_FFT_C2R;
    c2.dir = 1;
    run_case(ctx, &c2);
    fft_case c3 = {.kind = CLT_FFT_C2C, .dir = -1, .rank = 3, .n = {8, 6, 10}, .batch = 1, .impl = "vkfft"};
    run_case(ctx, &c3);
    tu_context_free(ctx);
}
END_TEST

/* Forward then inverse gives the input back (C2C and R2C/C2R, default norm). */
START_TEST(test_round_trip)
{
    clt_context *ctx = tu_context();
    int64_t shape[3] = {3, 20, 17};
    size_t n = 3 * 20 * 17;
    float *x = malloc(sizeof(float) * n), *back = malloc(sizeof(float) * n);
    tu_random_f32(x, n, -1, 1);
    clt_tensor *real, *spec, *out;
    int64_t hshape[3] = {3, 20, 9};
    TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, 3, shape, x, sizeof(float) * n, &real));
    TU_OK(clt_tensor_create(ctx, CLT_C64, 3, hshape, &spec));
    TU_OK(clt_tensor_create(ctx, CLT_F32, 3, shape, &out));
    TU_OK(clt_rfft2(real, spec, CLT_FFT_NORM_BACKWARD));
    TU_OK(clt_irfft2(spec, out, CLT_FFT_NORM_BACKWARD));
    TU_OK(clt_tensor_read(out, back, sizeof(float) * n));
    double err = 0, ref = 0;
    for (size_t i = 0; i < n; i++) {
        err += (back[i] - x[i]) * (double)(back[i] - x[i]);
        ref += x[i] * (double)x[i];
    }
    ck_assert_msg(sqrt(err / ref) < 2e-6, "rfft2/irfft2 round trip error %g", sqrt(err / ref));
    /* C2C: fft then ifft in place on a c64 tensor */
    float *z = malloc(sizeof(float) * 2 * n), *zb = malloc(sizeof(float) * 2 * n);
    tu_random_f32(z, 2 * n, -1, 1);
    clt_tensor *tz;
    TU_OK(clt_tensor_create_from_host(ctx, CLT_C64, 3, shape, z, sizeof(float) * 2 * n, &tz));
    TU_OK(clt_fft(tz, tz, CLT_FFT_NORM_ORTHO));
    TU_OK(clt_ifft(tz, tz, CLT_FFT_NORM_ORTHO));
    TU_OK(clt_fftn(tz, tz, 3, CLT_FFT_FORWARD, CLT_FFT_NORM_FORWARD));
    TU_OK(clt_fftn(tz, tz, 3, CLT_FFT_INVERSE, CLT_FFT_NORM_FORWARD));
    TU_OK(clt_tensor_read(tz, zb, sizeof(float) * 2 * n));
    err = ref = 0;
    for (size_t i = 0; i < 2 * n; i++) {
        err += (zb[i] - z[i]) * (double)(zb[i] - z[i]);
        ref += z[i] * (double)z[i];
    }
    ck_assert_msg(sqrt(err / ref) < 4e-6, "fft/ifft/fftn round trip error %g", sqrt(err / ref));
    clt_tensor_free(real);
    clt_tensor_free(spec);
    clt_tensor_free(out);
    clt_tensor_free(tz);
    free(x);
    free(back);
    free(z);
    free(zb);
    tu_context_free(ctx);
}
END_TEST

/* The convenience calls against the reference: rfft / irfft on [4, 30], fft2 on [2, 6, 7]. */
START_TEST(test_convenience)
{
    clt_context *ctx = tu_context();
    int64_t rs[2] = {4, 30}, hs[2] = {4, 16};
    float x[120], h[128];
    tu_random_f32(x, 120, -1, 1);
    clt_tensor *tr, *th;
    TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, 2, rs, x, sizeof x, &tr));
    TU_OK(clt_tensor_create(ctx, CLT_C64, 2, hs, &th));
    TU_OK(clt_rfft(tr, th, CLT_FFT_NORM_BACKWARD));
    TU_OK(clt_tensor_read(th, h, sizeof h));
    double work[60];
    for (int b = 0; b < 4; b++) {
        for (int j = 0; j < 30; j++) {
            work[2 * j] = x[b * 30 + j];
            work[2 * j + 1] = 0;
        }
        int64_t n = 30;
        ref_dft(work, 1, &n, -1, 1.0);
        for (int k = 0; k < 16; k++) {
            ck_assert(fabs(h[b * 32 + 2 * k] - work[2 * k]) < 1e-5);
            ck_assert(fabs(h[b * 32 + 2 * k + 1] - work[2 * k + 1]) < 1e-5);
        }
    }
    float y[120];
    TU_OK(clt_irfft(th, tr, CLT_FFT_NORM_BACKWARD));
    TU_OK(clt_tensor_read(tr, y, sizeof y));
    for (int i = 0; i < 120; i++)
        ck_assert_msg(fabs(y[i] - x[i]) < 1e-5, "irfft(rfft(x))[%d] = %g, x = %g", i, y[i], x[i]);
    clt_tensor_free(tr);
    clt_tensor_free(th);
    tu_context_free(ctx);
}
END_TEST

/* Reads tensor t and checks it still holds `want` bytes. */
static void expect_unchanged(clt_tensor *t, const void *want)
{
    size_t n = clt_tensor_nbytes(t);
    void *got = malloc(n);
    TU_OK(clt_tensor_read(t, got, n));
    ck_assert_msg(memcmp(got, want, n) == 0, "a failed call changed its output");
    free(got);
}

START_TEST(test_errors)
{
    clt_context *ctx = tu_context();
    clt_fft_desc d;
    clt_fft_desc_init(&d);
    clt_fft_plan *plan = NULL;
    /* length 0, batch 0, rank 4, bad kind / norm / direction / impl, negative or mixed strides */
    TU_EXPECT_STATUS(clt_fft_plan_get(ctx, &d, &plan), CLT_ERR_INVALID_SHAPE); /* n[0] == 0 */
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_fft_plan_get");
    d.n[0] = 8;
    d.batch = 0;
    TU_EXPECT_STATUS(clt_fft_plan_get(ctx, &d, &plan), CLT_ERR_INVALID_SHAPE);
    d.batch = 1;
    d.rank = 4;
    TU_EXPECT_STATUS(clt_fft_plan_get(ctx, &d, &plan), CLT_ERR_INVALID_SHAPE);
    d.rank = 1;
    d.kind = (clt_fft_kind)7;
    TU_EXPECT_STATUS(clt_fft_plan_get(ctx, &d, &plan), CLT_ERR_INVALID_ARGUMENT);
    d.kind = CLT_FFT_C2C;
    d.direction = (clt_fft_direction)0;
    TU_EXPECT_STATUS(clt_fft_plan_get(ctx, &d, &plan), CLT_ERR_INVALID_ARGUMENT);
    d.direction = CLT_FFT_FORWARD;
    d.norm = (clt_fft_norm)5;
    TU_EXPECT_STATUS(clt_fft_plan_get(ctx, &d, &plan), CLT_ERR_INVALID_ARGUMENT);
    d.norm = CLT_FFT_NORM_BACKWARD;
    d.impl = "cufft";
    TU_EXPECT_STATUS(clt_fft_plan_get(ctx, &d, &plan), CLT_ERR_INVALID_ARGUMENT);
    d.impl = "ours";
    d.in_stride[0] = -1;
    TU_EXPECT_STATUS(clt_fft_plan_get(ctx, &d, &plan), CLT_ERR_INVALID_SHAPE);
    d.rank = 2;
    d.n[1] = 4;
    d.in_stride[0] = 4;
    d.in_stride[1] = 0; /* one stride set, one not */
    TU_EXPECT_STATUS(clt_fft_plan_get(ctx, &d, &plan), CLT_ERR_INVALID_SHAPE);
    d.in_stride[0] = 0;
    d.in_dist = -3;
    TU_EXPECT_STATUS(clt_fft_plan_get(ctx, &d, &plan), CLT_ERR_INVALID_SHAPE);
    TU_EXPECT_STATUS(clt_fft_plan_get(NULL, &d, &plan), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_STATUS(clt_fft_plan_get(ctx, NULL, &plan), CLT_ERR_INVALID_ARGUMENT);

    /* execute: wrong dtypes (a real plan on complex data), tensors too small, overlap */
    clt_fft_desc_init(&d);
    d.kind = CLT_FFT_R2C;
    d.n[0] = 16;
    d.batch = 2;
    d.impl = "ours";
    TU_OK(clt_fft_plan_get(ctx, &d, &plan));
    int64_t n32 = 32, n18 = 18, n17 = 17;
    clt_tensor *c32, *c18, *r32, *c17;
    TU_OK(clt_tensor_create(ctx, CLT_C64, 1, &n32, &c32));
    TU_OK(clt_tensor_create(ctx, CLT_C64, 1, &n18, &c18));
    TU_OK(clt_tensor_create(ctx, CLT_C64, 1, &n17, &c17));
    TU_OK(clt_tensor_create(ctx, CLT_F32, 1, &n32, &r32));
    tu_poison(c18);
    tu_poison(c17);
    unsigned char poison[18 * 8];
    memset(poison, 0xFF, sizeof poison);
    TU_EXPECT_STATUS(clt_fft_execute(plan, c32, c18), CLT_ERR_INVALID_DTYPE); /* complex into R2C */
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_fft_execute");
    expect_unchanged(c18, poison);
    TU_EXPECT_STATUS(clt_fft_execute(plan, r32, c17), CLT_ERR_INVALID_SHAPE); /* needs 18 */
    expect_unchanged(c17, poison);
    TU_EXPECT_STATUS(clt_fft_execute(plan, r32, r32), CLT_ERR_INVALID_DTYPE);
    TU_EXPECT_STATUS(clt_fft_execute(NULL, r32, c18), CLT_ERR_INVALID_ARGUMENT);
    /* an R2C plan in place (overlap) */
    clt_tensor *view;
    TU_OK(clt_tensor_view(c32, 0, 1, &n32, &view));
    clt_fft_desc_init(&d);
    d.n[0] = 16;
    d.impl = "ours";
    d.in_stride[0] = 2; /* in place with different strides */
    TU_OK(clt_fft_plan_get(ctx, &d, &plan));
    TU_EXPECT_STATUS(clt_fft_execute(plan, c32, view), CLT_ERR_ALIASING);
    /* convenience shapes */
    int64_t s_in[2] = {2, 16}, s_bad[2] = {2, 10}, s_half[2] = {2, 9};
    clt_tensor *a, *b, *h;
    TU_OK(clt_tensor_create(ctx, CLT_C64, 2, s_in, &a));
    TU_OK(clt_tensor_create(ctx, CLT_C64, 2, s_bad, &b));
    TU_OK(clt_tensor_create(ctx, CLT_C64, 2, s_half, &h));
    TU_EXPECT_STATUS(clt_fft(a, b, CLT_FFT_NORM_BACKWARD), CLT_ERR_INVALID_SHAPE);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_fft");
    TU_EXPECT_STATUS(clt_rfft(a, h, CLT_FFT_NORM_BACKWARD), CLT_ERR_INVALID_DTYPE); /* complex input */
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_rfft");
    TU_EXPECT_STATUS(clt_irfft(b, a, CLT_FFT_NORM_BACKWARD), CLT_ERR_INVALID_SHAPE); /* 10 != 16/2+1 */
    TU_EXPECT_STATUS(clt_fftn(a, a, 3, CLT_FFT_FORWARD, CLT_FFT_NORM_BACKWARD), CLT_ERR_INVALID_SHAPE);
    TU_EXPECT_STATUS(clt_tensor_fill(a, 1.0), CLT_ERR_INVALID_DTYPE);
    clt_tensor_free(a);
    clt_tensor_free(b);
    clt_tensor_free(h);
    clt_tensor_free(view);
    clt_tensor_free(c32);
    clt_tensor_free(c18);
    clt_tensor_free(c17);
    clt_tensor_free(r32);
    tu_context_free(ctx);
}
END_TEST

Suite *fft_suite(void)
{
    Suite *s = suite_create("fft");
    TCase *tc = tcase_create("fft");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_c2c_1d);
    tcase_add_test(tc, test_local_path);
    tcase_add_test(tc, test_wide_path);
    tcase_add_test(tc, test_r2c_c2r_1d);
    tcase_add_test(tc, test_multi_dim);
    tcase_add_test(tc, test_column_lanes);
    tcase_add_test(tc, test_norms);
    tcase_add_test(tc, test_strided);
    tcase_add_test(tc, test_in_place);
    tcase_add_test(tc, test_round_trip);
    tcase_add_test(tc, test_convenience);
    tcase_add_test(tc, test_clfft);
    tcase_add_test(tc, test_vkfft);
    tcase_add_test(tc, test_auto_backend);
    tcase_add_test(tc, test_errors);
    suite_add_tcase(s, tc);
    return s;
}
