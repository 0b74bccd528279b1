/* The GPU fast paths of the layout ops and their fallbacks, against the plain-C references of
 * ref/layout_ref.c: layout_copy_x4 (permute (0,2,1,3), slices, 16-byte or strided loads),
 * layout_join4_x4 (concat / split / stack in 16-byte units) and layout_pad_planes (padding of the
 * last two axes only). Each case runs with its tensors as views at an offset inside a poisoned
 * buffer (aligned to 4 elements or not), so a path that writes outside its view, or takes the
 * vector path at an unaligned place, fails; on GPU-style profiles (gfx902) each case also asserts
 * which path ran (the profiler names the kernel), so a lost fast path fails too. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/common/launch.h"
#include "ref/layout_ref.h"
#include "util/test_util.h"

#define SLACK 9 /* poisoned elements after each view */

/* A tensor `shape` at element offset `off` of a poisoned buffer of off + n + SLACK elements,
 * holding `data` (n elements) unless NULL. */
typedef struct placed {
    clt_tensor *buf, *t;
    int64_t off, n;
} placed;

static placed place(clt_context *ctx, int nd, const int64_t *shape, int64_t off, const void *data)
{
    placed p = {.off = off, .n = 1};
    for (int d = 0; d < nd; d++)
        p.n *= shape[d];
    const int64_t total = off + p.n + SLACK;
    TU_OK(clt_tensor_create(ctx, CLT_F32, 1, &total, &p.buf));
    tu_poison(p.buf);
    TU_OK(clt_tensor_view(p.buf, off, nd, shape, &p.t));
    if (data && p.n)
        TU_OK(clt_tensor_write(p.t, data, (size_t)p.n * 4));
    return p;
}

static void unplace(placed *p)
{
    clt_tensor_free(p->t);
    clt_tensor_free(p->buf);
}

/* The view holds want (bit for bit); the rest of its buffer is still poison. */
static void expect_placed(const placed *p, const uint32_t *want, const char *what)
{
    const int64_t total = p->off + p->n + SLACK;
    uint32_t *all = malloc((size_t)total * 4);
    ck_assert_ptr_nonnull(all);
    TU_OK(clt_tensor_read(p->buf, all, (size_t)total * 4));
    for (int64_t i = 0; i < total; i++) {
        int inside = i >= p->off && i < p->off + p->n;
        uint32_t w = inside ? want[i - p->off] : 0xffffffffu;
        ck_assert_msg(all[i] == w, "%s: element %lld of the buffer (view at %lld): %08x, want %08x",
                      what, (long long)i, (long long)p->off, all[i], w);
    }
    free(all);
}

static uint32_t *rnd_bits(int64_t n)
{
    float *h = malloc((size_t)(n ? n : 1) * 4);
    ck_assert_ptr_nonnull(h);
    tu_random_f32(h, (size_t)n, -1.0f, 1.0f);
    return (uint32_t *)h;
}

/* On GPU-style profiles: a kernel whose name contains impl ran for op since the profiler counted
 * `before` of them, exactly when want; CPU-style profiles never take these paths. */
static void expect_path(clt_context *ctx, const char *op, const char *impl, int want,
                        uint64_t before, const char *what)
{
    int fast = tu_launches(ctx, op, impl) > before;
    if (clt__cpu_style(ctx))
        ck_assert_msg(!fast, "%s: %s ran on a CPU-style profile", what, impl);
    else
        ck_assert_msg(fast == want, "%s: %s %s", what, impl, want ? "did not run" : "ran");
}

/* ------------------------------------------------------------------ copies */

/* permute / slice of x (nd <= 4, at offset xo) into out (at offset oo): the box is out's shape,
 * x read at x_off + sum(coord * src_str). */
typedef struct copy_case {
    int nd;
    int64_t xs[4];
    int kind; /* 0 permute by perm, 1 slice by start/step */
    int perm[4];
    int64_t start[4], step[4];
    int64_t xo, oo;
    int fast; /* layout_copy_x4 expected on GPU-style profiles */
} copy_case;

static void run_copy(clt_context *ctx, const copy_case *c)
{
    int nd = c->nd;
    int64_t os[4], xst[4], str[4], off = 0;
    ref_strides(nd, c->xs, xst);
    for (int d = 0; d < nd; d++) {
        if (c->kind == 0) {
            os[d] = c->xs[c->perm[d]];
            str[d] = xst[c->perm[d]];
        } else {
            os[d] = (c->xs[d] - 1 - c->start[d]) / c->step[d] + 1;
            str[d] = xst[d] * c->step[d];
            off += c->start[d] * xst[d];
        }
    }
    int64_t n = 1, m = 1;
    for (int d = 0; d < nd; d++)
        n *= c->xs[d], m *= os[d];
    uint32_t *h = rnd_bits(n), *want = malloc((size_t)(m ? m : 1) * 4);
    ref_strided_copy(h, off, nd, os, str, want);
    placed x = place(ctx, nd, c->xs, c->xo, h), out = place(ctx, nd, os, c->oo, NULL);
    const char *op = c->kind == 0 ? "clt_permute" : "clt_slice";
    const uint64_t before = tu_launches(ctx, op, "layout_copy_x4");
    TU_OK(c->kind == 0 ? clt_permute(x.t, c->perm, out.t)
                       : clt_slice(x.t, c->start, c->step, out.t));
    expect_placed(&out, want, op);
    char what[96];
    snprintf(what, sizeof what, "%s of %lldx%lld.. at %lld into %lld", op, (long long)c->xs[0],
             (long long)c->xs[1], (long long)c->xo, (long long)c->oo);
    expect_path(ctx, op, "layout_copy_x4", c->fast, before, what);
    unplace(&x);
    unplace(&out);
    free(h);
    free(want);
}

START_TEST(copy_x4_and_fallbacks)
{
    clt_context *ctx = tu_profiled_context();
    static const copy_case cases[] = {
        /* permute (0,2,1,3): contiguous rows of the last axis, 16-byte loads and stores */
        {4, {2, 5, 3, 8}, 0, {0, 2, 1, 3}, {0}, {0}, 0, 0, 1},
        {4, {3, 7, 2, 4}, 0, {0, 2, 1, 3}, {0}, {0}, 4, 8, 1},
        {4, {1, 3, 5, 12}, 0, {0, 2, 1, 3}, {0}, {0}, 0, 4, 1},
        /* x at an unaligned offset: 16-byte stores, element loads */
        {4, {2, 5, 3, 8}, 0, {0, 2, 1, 3}, {0}, {0}, 3, 0, 1},
        /* out unaligned, last axis 7 or 1, a prime shape: the element-wise copy */
        {4, {2, 5, 3, 8}, 0, {0, 2, 1, 3}, {0}, {0}, 0, 2, 0},
        {4, {2, 5, 3, 7}, 0, {0, 2, 1, 3}, {0}, {0}, 0, 0, 0},
        {4, {3, 2, 5, 1}, 0, {0, 2, 1, 3}, {0}, {0}, 0, 0, 0},
        {3, {5, 7, 11}, 0, {1, 0, 2}, {0}, {0}, 0, 0, 0},
        /* empty: nothing runs */
        {4, {2, 0, 3, 8}, 0, {0, 2, 1, 3}, {0}, {0}, 0, 0, 0},
        /* slices: step 2 (strided loads), step 3, a contiguous window at an aligned start (16-byte
         * loads), an unaligned one (element loads), odd output widths (element-wise) */
        {2, {9, 16}, 1, {0}, {0, 0}, {2, 2}, 0, 0, 1},
        {2, {6, 15}, 1, {0}, {1, 0}, {2, 2}, 0, 4, 1},
        {2, {5, 12}, 1, {0}, {0, 1}, {1, 3}, 0, 0, 1},
        {3, {2, 6, 12}, 1, {0}, {0, 1, 4}, {1, 1, 1}, 0, 0, 1},
        {3, {2, 6, 13}, 1, {0}, {0, 1, 1}, {1, 2, 1}, 0, 0, 1},
        {2, {9, 14}, 1, {0}, {0, 0}, {2, 2}, 0, 0, 0},
        {2, {7, 13}, 1, {0}, {1, 2}, {3, 1}, 5, 1, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_copy(ctx, &cases[i]);
    /* A stride-2 view whose last element used is the next-to-last of its buffer: the paired
     * 16-byte loads may only run while the element after it is inside the buffer. */
    const int64_t bn = 15;
    uint32_t *h = rnd_bits(bn), want[8];
    clt_tensor *base = NULL;
    TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, 1, &bn, h, (size_t)bn * 4, &base));
    clt_strided_view v = {.base = base, .offset = 0, .ndim = 2, .shape = {2, 4}, .strides = {8, 2}};
    ref_strided_copy(h, 0, 2, v.shape, v.strides, want);
    placed out = place(ctx, 2, v.shape, 0, NULL);
    const uint64_t before = tu_launches(ctx, "clt_copy_strided", "layout_copy_x4");
    TU_OK(clt_copy_strided(&v, out.t));
    expect_placed(&out, want, "copy_strided by 2 to the buffer's end");
    expect_path(ctx, "clt_copy_strided", "layout_copy_x4", 1, before, "copy_strided by 2");
    unplace(&out);
    clt_tensor_free(base);
    free(h);
    tu_context_free(ctx);
}
END_TEST

/* ------------------------------------------------------------------ concat / split / stack */

/* Concat n pieces (extents ext[i] along axis of a 3-D shape base, at offsets offs[i]) into out
 * (offset oo), check, then split out back into fresh pieces. fast: layout_join4_x4 expected. */
static void run_concat(clt_context *ctx, const int64_t *base, int axis, int n, const int64_t *ext,
                       const int64_t *offs, int64_t oo, int fast)
{
    placed xs[6], outs[6];
    uint32_t *h[6];
    const clt_tensor *xt[6];
    clt_tensor *ot[6];
    int64_t os[3] = {base[0], base[1], base[2]}, total = 0;
    for (int i = 0; i < n; i++)
        total += ext[i];
    os[axis] = total;
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; d++)
        outer *= base[d];
    for (int d = axis + 1; d < 3; d++)
        inner *= base[d];
    uint32_t *want = malloc((size_t)(outer * total * inner + 1) * 4);
    int64_t at = 0;
    for (int i = 0; i < n; i++) {
        int64_t s[3] = {base[0], base[1], base[2]};
        s[axis] = ext[i];
        h[i] = rnd_bits(outer * ext[i] * inner);
        xs[i] = place(ctx, 3, s, offs[i], h[i]);
        outs[i] = place(ctx, 3, s, offs[i], NULL);
        xt[i] = xs[i].t;
        ot[i] = outs[i].t;
        for (int64_t o = 0; o < outer; o++)
            for (int64_t k = 0; k < ext[i] * inner; k++)
                want[(o * total + at) * inner + k] = h[i][o * ext[i] * inner + k];
        at += ext[i];
    }
    placed out = place(ctx, 3, os, oo, NULL);
    uint64_t before = tu_launches(ctx, "clt_concat", "layout_join4_x4");
    TU_OK(clt_concat(n, xt, axis, out.t));
    expect_placed(&out, want, "concat");
    char what[96];
    snprintf(what, sizeof what, "concat of %d pieces [%lld, ..] on axis %d", n, (long long)ext[0],
             axis);
    expect_path(ctx, "clt_concat", "layout_join4_x4", fast, before, what);
    before = tu_launches(ctx, "clt_split", "layout_join4_x4");
    TU_OK(clt_split(out.t, axis, n, ot));
    for (int i = 0; i < n; i++)
        expect_placed(&outs[i], h[i], "split");
    expect_path(ctx, "clt_split", "layout_join4_x4", fast, before, what);
    for (int i = 0; i < n; i++) {
        unplace(&xs[i]);
        unplace(&outs[i]);
        free(h[i]);
    }
    unplace(&out);
    free(want);
}

START_TEST(join_x4_and_fallbacks)
{
    clt_context *ctx = tu_profiled_context();
    const int64_t b3[3] = {3, 5, 0}, zero[6] = {0};
    /* the last axis, rows of 4, 8, 12 (and an empty piece): 16-byte units */
    const int64_t e1[4] = {4, 8, 0, 12}, o1[4] = {4, 0, 8, 12};
    run_concat(ctx, b3, 2, 4, e1, o1, 0, 1);
    /* 6 pieces: two launches, both in 16-byte units */
    const int64_t e2[6] = {4, 4, 8, 4, 16, 4};
    run_concat(ctx, b3, 2, 6, e2, zero, 4, 1);
    /* rows of 6, a piece at an unaligned offset, out unaligned: per element */
    const int64_t e3[2] = {4, 6}, o3[2] = {0, 1};
    run_concat(ctx, b3, 2, 2, e3, zero, 0, 0);
    run_concat(ctx, b3, 2, 2, e1, o3, 0, 0);
    run_concat(ctx, b3, 2, 2, e1, zero, 2, 0);
    /* a middle axis with inner = 4 (any extent is a multiple of 4 elements), and inner = 7 */
    const int64_t b4[3] = {3, 0, 4}, b7[3] = {2, 0, 7}, e4[3] = {1, 3, 2};
    run_concat(ctx, b4, 1, 3, e4, zero, 0, 1);
    run_concat(ctx, b7, 1, 3, e4, zero, 0, 0);
    /* stack of 4 pieces [5, 4] on a middle axis: 16-byte units; of [3, 3]: per element */
    for (int k = 0; k < 2; k++) {
        const int64_t s[2] = {k ? 3 : 5, k ? 3 : 4}, os[3] = {s[0], 4, s[1]};
        placed xs[4], out = place(ctx, 3, os, 0, NULL);
        uint32_t *h[4], *want = malloc((size_t)(4 * s[0] * s[1]) * 4);
        const clt_tensor *xt[4];
        for (int i = 0; i < 4; i++) {
            h[i] = rnd_bits(s[0] * s[1]);
            xs[i] = place(ctx, 2, s, 0, h[i]);
            xt[i] = xs[i].t;
            for (int64_t r = 0; r < s[0]; r++)
                memcpy(want + (r * 4 + i) * s[1], h[i] + r * s[1], (size_t)s[1] * 4);
        }
        const uint64_t before = tu_launches(ctx, "clt_stack", "layout_join4_x4");
        TU_OK(clt_stack(4, xt, 1, out.t));
        expect_placed(&out, want, "stack");
        expect_path(ctx, "clt_stack", "layout_join4_x4", !k, before, "stack");
        for (int i = 0; i < 4; i++) {
            unplace(&xs[i]);
            free(h[i]);
        }
        unplace(&out);
        free(want);
    }
    tu_context_free(ctx);
}
END_TEST

/* ------------------------------------------------------------------ pad */

typedef struct pad_case {
    int nd, mode;
    int64_t xs[4], before[4], after[4];
    int64_t xo, oo;
    int planes; /* layout_pad_planes expected on GPU-style profiles */
} pad_case;

START_TEST(pad_planes_and_fallbacks)
{
    clt_context *ctx = tu_profiled_context();
    static const pad_case cases[] = {
        /* H and W of NCHW, reflect and constant, at offsets */
        {4, 1, {2, 3, 5, 6}, {0, 0, 1, 2}, {0, 0, 3, 1}, 0, 0, 1},
        {4, 0, {2, 3, 5, 6}, {0, 0, 2, 0}, {0, 0, 0, 3}, 3, 1, 1},
        {2, 1, {7, 4}, {3, 1}, {2, 3}, 0, 5, 1},
        /* only the last axis; only the next-to-last; a 1-D tensor */
        {3, 1, {3, 4, 5}, {0, 0, 2}, {0, 0, 4}, 0, 0, 1},
        {3, 0, {3, 4, 5}, {0, 1, 0}, {0, 2, 0}, 1, 0, 1},
        {1, 1, {9}, {4}, {8}, 0, 0, 1},
        /* constant pad of an empty axis: all fill */
        {2, 0, {3, 0}, {0, 2}, {0, 1}, 0, 0, 1},
        /* a padded axis before the last two, nothing padded: the general kernel / copy */
        {3, 1, {3, 4, 5}, {1, 0, 1}, {2, 0, 0}, 0, 0, 0},
        {4, 0, {2, 3, 5, 6}, {0, 1, 0, 1}, {0, 0, 0, 0}, 0, 0, 0},
        {2, 0, {3, 4}, {0, 0}, {0, 0}, 0, 0, 0},
    };
    const float value = -3.5f;
    uint32_t fill;
    memcpy(&fill, &value, 4);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const pad_case *c = &cases[i];
        int64_t os[4], n = 1, m = 1;
        for (int d = 0; d < c->nd; d++) {
            os[d] = c->xs[d] + c->before[d] + c->after[d];
            n *= c->xs[d];
            m *= os[d];
        }
        uint32_t *h = rnd_bits(n), *want = malloc((size_t)m * 4);
        ref_pad(h, c->nd, c->xs, c->before, c->after, c->mode, fill, want);
        placed x = place(ctx, c->nd, c->xs, c->xo, h), out = place(ctx, c->nd, os, c->oo, NULL);
        const uint64_t before = tu_launches(ctx, "clt_pad", "layout_pad_planes");
        TU_OK(clt_pad(x.t, c->before, c->after, (clt_pad_mode)c->mode, value, out.t));
        expect_placed(&out, want, "pad");
        char what[64];
        snprintf(what, sizeof what, "pad case %zu", i);
        expect_path(ctx, "clt_pad", "layout_pad_planes", c->planes, before, what);
        unplace(&x);
        unplace(&out);
        free(h);
        free(want);
    }
    tu_context_free(ctx);
}
END_TEST

Suite *layout_paths_suite(void)
{
    Suite *s = suite_create("layout_paths");
    TCase *tc = tcase_create("layout_paths");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, copy_x4_and_fallbacks);
    tcase_add_test(tc, join_x4_and_fallbacks);
    tcase_add_test(tc, pad_planes_and_fallbacks);
    suite_add_tcase(s, tc);
    return s;
}
