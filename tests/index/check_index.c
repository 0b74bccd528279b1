/* The indexing ops (cltensor_index.h) against plain-C references on fresh random data: embedding
 * and both backward modes (atomic, deterministic: bit-identical runs), gather / scatter /
 * scatter_add along every axis, index_select / index_add, masked_fill with broadcast masks (and
 * its GPU vector path with every fallback: unaligned views, last extents not multiples of 4),
 * one_hot, topk (ties, NaN, k = n, k = 64); out-of-range indices (never write outside a buffer:
 * guard zones around the outputs stay intact), and the error paths. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/common/launch.h"
#include "ref/layout_ref.h"
#include "util/test_util.h"

/* Float sums of up to a few dozen terms in [-1, 1): any order within this of the double sum. */
#define SUM_ATOL 1e-5

static clt_tensor *upf(clt_context *ctx, int nd, const int64_t *s, const float *h)
{
    clt_tensor *t = NULL;
    int64_t n = 1;
    for (int d = 0; d < nd; d++)
        n *= s[d];
    TU_OK(clt_tensor_create_from_host(ctx, CLT_F32, nd, s, h, (size_t)n * 4, &t));
    return t;
}

static clt_tensor *upi(clt_context *ctx, int nd, const int64_t *s, const int32_t *h)
{
    clt_tensor *t = NULL;
    int64_t n = 1;
    for (int d = 0; d < nd; d++)
        n *= s[d];
    TU_OK(clt_tensor_create_from_host(ctx, CLT_I32, nd, s, h, (size_t)n * 4, &t));
    return t;
}

static void *down(const clt_tensor *t)
{
    size_t nb = clt_tensor_nbytes(t);
    void *h = malloc(nb ? nb : 1);
    ck_assert_ptr_nonnull(h);
    TU_OK(clt_tensor_read(t, h, nb));
    return h;
}

static float *rnd(int64_t n)
{
    float *p = malloc((size_t)(n ? n : 1) * 4);
    tu_random_f32(p, (size_t)n, -1.0f, 1.0f);
    return p;
}

/* Ids in [0, v), with every 7th out of range (negative or >= v) when bad. */
static int32_t *ids_of(int64_t n, int32_t v, int bad)
{
    int32_t *p = malloc((size_t)(n ? n : 1) * 4);
    for (int64_t i = 0; i < n; i++)
        p[i] = (int32_t)(tu_rng_next() % (uint64_t)v);
    for (int64_t i = 0; bad && i < n; i += 7)
        p[i] = (i / 7) % 2 ? -1 - (int32_t)(tu_rng_next() % 5) : v + (int32_t)(tu_rng_next() % 5);
    return p;
}

/* A tensor that is a view in the middle of a poisoned buffer: guard elements either side. */
typedef struct guarded {
    clt_tensor *buf, *view;
    int64_t n;
} guarded;
#define GUARD 64

static guarded guarded_f32(clt_context *ctx, int nd, const int64_t *s)
{
    guarded g = {0};
    g.n = 1;
    for (int d = 0; d < nd; d++)
        g.n *= s[d];
    const int64_t total = g.n + 2 * GUARD;
    TU_OK(clt_tensor_create(ctx, CLT_F32, 1, &total, &g.buf));
    tu_poison(g.buf);
    TU_OK(clt_tensor_view(g.buf, GUARD, nd, s, &g.view));
    return g;
}

static void guard_intact(const guarded *g, const char *what)
{
    uint32_t *all = down(g->buf);
    for (int64_t i = 0; i < GUARD; i++) {
        ck_assert_msg(all[i] == 0xffffffffu, "%s: guard before written at %lld", what, (long long)i);
        ck_assert_msg(all[GUARD + g->n + i] == 0xffffffffu, "%s: guard after written", what);
    }
    free(all);
}

static void guarded_free(guarded *g)
{
    clt_tensor_free(g->view);
    clt_tensor_free(g->buf);
}

START_TEST(embedding_forward_backward)
{
    clt_context *ctx = tu_context();
    static const struct {
        int32_t v;
        int64_t d, t0, t1;
    } cases[] = {{11, 7, 3, 5}, {1, 1, 1, 1}, {37, 128, 2, 13}, {5, 3, 0, 4}, {512, 33, 4, 9},
                 /* tokens past the GPU kernel's 256-token masks, columns past its 64-item groups,
                  * a row hit by a third of the tokens */
                 {3, 65, 7, 101}, {300, 130, 3, 97}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int32_t v = cases[c].v;
        int64_t dim = cases[c].d, ts[2] = {cases[c].t0, cases[c].t1}, T = ts[0] * ts[1];
        int64_t ws[2] = {v, dim}, os[3] = {ts[0], ts[1], dim};
        float *w = rnd(v * dim), *dy = rnd(T * dim);
        int32_t *ids = ids_of(T, v, 1);
        clt_tensor *wt = upf(ctx, 2, ws, w), *it = upi(ctx, 2, ts, ids), *dyt = upf(ctx, 3, os, dy);
        guarded out = guarded_f32(ctx, 3, os);
        TU_OK(clt_embedding(it, wt, out.view));
        float *got = down(out.view);
        for (int64_t t = 0; t < T; t++)
            for (int64_t d = 0; d < dim; d++) {
                float want = ids[t] >= 0 && ids[t] < v ? w[ids[t] * dim + d] : 0.0f;
                ck_assert_msg(got[t * dim + d] == want, "embedding token %lld dim %lld",
                              (long long)t, (long long)d);
            }
        guard_intact(&out, "embedding");
        free(got);
        /* Backward reference in double. */
        double *ref = calloc((size_t)(v * dim), sizeof(double));
        /* the f32 sum's bound: terms x eps x sum of |terms| */
        double *tol = calloc((size_t)(v * dim), sizeof(double));
        int64_t *hits = calloc((size_t)v, sizeof(int64_t));
        for (int64_t t = 0; t < T; t++)
            if (ids[t] >= 0 && ids[t] < v) {
                hits[ids[t]]++;
                for (int64_t d = 0; d < dim; d++) {
                    ref[ids[t] * dim + d] += dy[t * dim + d];
                    tol[ids[t] * dim + d] += fabs(dy[t * dim + d]);
                }
            }
        for (int64_t i = 0; i < v * dim; i++)
            tol[i] = SUM_ATOL + tol[i] * (double)hits[i / dim] * 0x1p-23;
        for (int mode = 0; mode < 2; mode++) {
            guarded dw = guarded_f32(ctx, 2, ws);
            TU_OK(clt_embedding_backward(it, dyt, (clt_embedding_grad_mode)mode, 0, dw.view));
            float *g1 = down(dw.view);
            for (int64_t i = 0; i < v * dim; i++)
                ck_assert_msg(fabs(g1[i] - ref[i]) <= tol[i],
                              "embedding_backward mode %d [%lld]: %g vs %g", mode, (long long)i,
                              (double)g1[i], ref[i]);
            /* accumulate = 1 adds a second copy. */
            TU_OK(clt_embedding_backward(it, dyt, (clt_embedding_grad_mode)mode, 1, dw.view));
            float *g2 = down(dw.view);
            for (int64_t i = 0; i < v * dim; i++)
                ck_assert_msg(fabs(g2[i] - 2 * ref[i]) <= 2 * tol[i], "accumulate mode %d", mode);
            if (mode == 1) { /* deterministic: tokens added in ascending order, in f32 */
                for (int64_t i = 0; i < v * dim; i++) {
                    const int64_t r = i / dim, d = i % dim;
                    float acc = 0.0f;
                    for (int64_t t = 0; t < T; t++)
                        if (ids[t] == r)
                            acc += dy[t * dim + d];
                    ck_assert_msg(memcmp(&acc, &g1[i], 4) == 0, "deterministic order [%lld]",
                                  (long long)i);
                }
            }
            if (mode == 1) { /* deterministic: a rerun gives the same bits */
                TU_OK(clt_embedding_backward(it, dyt, CLT_EMBEDDING_GRAD_DETERMINISTIC, 0, dw.view));
                float *g3 = down(dw.view);
                ck_assert(memcmp(g1, g3, (size_t)(v * dim) * 4) == 0);
                free(g3);
            }
            guard_intact(&dw, "embedding_backward");
            free(g1);
            free(g2);
            guarded_free(&dw);
        }
        free(ref);
        free(tol);
        free(hits);
        guarded_free(&out);
        clt_tensor_free(wt);
        clt_tensor_free(it);
        clt_tensor_free(dyt);
        free(w);
        free(dy);
        free(ids);
    }
    tu_context_free(ctx);
}
END_TEST

/* gather / scatter / scatter_add / index_select / index_add on [3, 5, 7]-ish shapes, every axis. */
START_TEST(gather_scatter_every_axis)
{
    clt_context *ctx = tu_context();
    const int64_t xs[3] = {3, 5, 7};
    for (int axis = 0; axis < 3; axis++) {
        int64_t is[3] = {2, 4, 6}, xst[3], ist[3];
        is[axis] = 9; /* along the axis the index may be longer than x */
        ref_strides(3, xs, xst);
        int64_t ni = ref_strides(3, is, ist), nx = 105;
        float *x = rnd(nx), *src = rnd(ni);
        int32_t *idx = ids_of(ni, (int32_t)xs[axis], 1);
        clt_tensor *xt = upf(ctx, 3, xs, x), *srct = upf(ctx, 3, is, src), *it = upi(ctx, 3, is, idx);
        guarded out = guarded_f32(ctx, 3, is);
        TU_OK(clt_gather(xt, axis, it, out.view));
        float *got = down(out.view);
        double *acc = calloc((size_t)nx, sizeof(double));
        for (int64_t i = 0; i < ni; i++) {
            int64_t c[3], r = i;
            for (int d = 2; d >= 0; d--) {
                c[d] = r % is[d];
                r /= is[d];
            }
            int32_t id = idx[i];
            int in = id >= 0 && id < xs[axis];
            c[axis] = in ? id : 0;
            int64_t o = c[0] * xst[0] + c[1] * xst[1] + c[2] * xst[2];
            ck_assert_msg(got[i] == (in ? x[o] : 0.0f), "gather axis %d element %lld", axis,
                          (long long)i);
            if (in)
                acc[o] += src[i];
        }
        guard_intact(&out, "gather");
        free(got);
        /* scatter_add into x's copy. */
        guarded sx = guarded_f32(ctx, 3, xs);
        TU_OK(clt_tensor_write(sx.view, x, (size_t)nx * 4));
        TU_OK(clt_scatter_add(sx.view, axis, it, srct));
        got = down(sx.view);
        for (int64_t i = 0; i < nx; i++)
            ck_assert_msg(fabs(got[i] - (x[i] + acc[i])) <= SUM_ATOL, "scatter_add axis %d [%lld]",
                          axis, (long long)i);
        guard_intact(&sx, "scatter_add");
        free(got);
        /* scatter (assignment) with unique in-range indices along the axis: a permutation. */
        int64_t ps[3] = {3, 5, 7};
        int64_t np = 105;
        int32_t *perm = malloc((size_t)np * 4);
        float *psrc = rnd(np), *want = malloc((size_t)np * 4);
        for (int64_t i = 0; i < np; i++) {
            int64_t c[3], r = i;
            for (int d = 2; d >= 0; d--) {
                c[d] = r % ps[d];
                r /= ps[d];
            }
            perm[i] = (int32_t)((c[axis] * 2 + 1) % ps[axis]); /* 2 is coprime to 3, 5, 7 */
            c[axis] = perm[i];
            want[c[0] * xst[0] + c[1] * xst[1] + c[2] * xst[2]] = psrc[i];
        }
        clt_tensor *pt = upi(ctx, 3, ps, perm), *pst = upf(ctx, 3, ps, psrc);
        TU_OK(clt_scatter(sx.view, axis, pt, pst));
        got = down(sx.view);
        ck_assert(memcmp(got, want, (size_t)np * 4) == 0);
        free(got);
        /* index_select with a 1-D index (out-of-range entries), index_add its backward. */
        const int64_t nsel = 6;
        int32_t *sel = ids_of(nsel, (int32_t)xs[axis], 1);
        int64_t os[3] = {3, 5, 7}, ost[3];
        os[axis] = nsel;
        int64_t no = ref_strides(3, os, ost);
        clt_tensor *st = upi(ctx, 1, &nsel, sel);
        guarded so = guarded_f32(ctx, 3, os);
        TU_OK(clt_index_select(xt, axis, st, so.view));
        got = down(so.view);
        float *g = rnd(no);
        clt_tensor *gt = upf(ctx, 3, os, g);
        double *acc2 = calloc((size_t)nx, sizeof(double));
        for (int64_t i = 0; i < no; i++) {
            int64_t c[3], r = i;
            for (int d = 2; d >= 0; d--) {
                c[d] = r % os[d];
                r /= os[d];
            }
            int32_t id = sel[c[axis]];
            int in = id >= 0 && id < xs[axis];
            c[axis] = in ? id : 0;
            int64_t o = c[0] * xst[0] + c[1] * xst[1] + c[2] * xst[2];
            ck_assert_msg(got[i] == (in ? x[o] : 0.0f), "index_select axis %d [%lld]", axis,
                          (long long)i);
            if (in)
                acc2[o] += g[i];
        }
        free(got);
        TU_OK(clt_tensor_fill(sx.view, 0.0));
        TU_OK(clt_index_add(sx.view, axis, st, gt));
        got = down(sx.view);
        for (int64_t i = 0; i < nx; i++)
            ck_assert_msg(fabs(got[i] - acc2[i]) <= SUM_ATOL, "index_add axis %d", axis);
        guard_intact(&sx, "index_add");
        guard_intact(&so, "index_select");
        free(got);
        free(g);
        free(acc2);
        free(sel);
        clt_tensor_free(gt);
        clt_tensor_free(st);
        guarded_free(&so);
        clt_tensor_free(pt);
        clt_tensor_free(pst);
        free(perm);
        free(psrc);
        free(want);
        guarded_free(&sx);
        guarded_free(&out);
        clt_tensor_free(xt);
        clt_tensor_free(srct);
        clt_tensor_free(it);
        free(x);
        free(src);
        free(idx);
        free(acc);
    }
    tu_context_free(ctx);
}
END_TEST

START_TEST(masked_fill_and_one_hot)
{
    clt_context *ctx = tu_context();
    const int64_t xs[3] = {4, 3, 17};
    static const struct {
        int nd;
        int64_t s[3];
    } masks[] = {{3, {4, 3, 17}}, {1, {17}}, {2, {3, 1}}, {3, {4, 1, 1}}};
    float *x = rnd(204);
    clt_tensor *xt = upf(ctx, 3, xs, x), *out = NULL;
    TU_OK(clt_tensor_create(ctx, CLT_F32, 3, xs, &out));
    for (size_t m = 0; m < sizeof masks / sizeof masks[0]; m++) {
        int nd = masks[m].nd;
        int64_t n = 1, al[3], ast[3];
        for (int d = 0; d < nd; d++)
            n *= masks[m].s[d];
        for (int d = 0; d < 3; d++)
            al[d] = d - (3 - nd) >= 0 ? masks[m].s[d - (3 - nd)] : 1;
        ref_strides(3, al, ast);
        for (int as_int = 0; as_int < 2; as_int++) {
            float *mf = malloc((size_t)n * 4);
            int32_t *mi = malloc((size_t)n * 4);
            for (int64_t i = 0; i < n; i++) {
                int on = (int)(tu_rng_next() % 2);
                mi[i] = on ? (int32_t)(tu_rng_next() % 100) + 1 : 0;
                mf[i] = on ? (i % 3 ? 1.0f : -2.0f) : (i % 2 ? -0.0f : 0.0f);
            }
            clt_tensor *mt = as_int ? upi(ctx, nd, masks[m].s, mi) : upf(ctx, nd, masks[m].s, mf);
            tu_poison(out);
            TU_OK(clt_masked_fill(xt, mt, -1e9f, out));
            float *got = down(out);
            for (int64_t i = 0; i < 204; i++) {
                int64_t c[3], r = i, o = 0;
                for (int d = 2; d >= 0; d--) {
                    c[d] = r % xs[d];
                    r /= xs[d];
                    o += (al[d] == 1 ? 0 : c[d]) * ast[d];
                }
                int on = as_int ? mi[o] != 0 : mf[o] != 0.0f;
                ck_assert_msg(got[i] == (on ? -1e9f : x[i]), "masked_fill mask %zu [%lld]", m,
                              (long long)i);
            }
            free(got);
            clt_tensor_free(mt);
            free(mf);
            free(mi);
        }
    }
    /* In place. */
    const int64_t one = 1;
    const float on = 1.0f;
    clt_tensor *all = upf(ctx, 1, &one, &on);
    TU_OK(clt_masked_fill(xt, all, 3.0f, xt));
    float *got = down(xt);
    for (int i = 0; i < 204; i++)
        ck_assert(got[i] == 3.0f);
    free(got);
    clt_tensor_free(all);
    /* one_hot with out-of-range ids: all-zero rows. */
    const int64_t ts[2] = {3, 11}, os[3] = {3, 11, 10};
    int32_t *ids = ids_of(33, 10, 1);
    clt_tensor *it = upi(ctx, 2, ts, ids);
    guarded oh = guarded_f32(ctx, 3, os);
    TU_OK(clt_one_hot(it, oh.view));
    float *h = down(oh.view);
    for (int t = 0; t < 33; t++)
        for (int c = 0; c < 10; c++)
            ck_assert(h[t * 10 + c] == (ids[t] == c ? 1.0f : 0.0f));
    guard_intact(&oh, "one_hot");
    free(h);
    free(ids);
    guarded_free(&oh);
    clt_tensor_free(it);
    clt_tensor_free(out);
    clt_tensor_free(xt);
    free(x);
    tu_context_free(ctx);
}
END_TEST

/* masked_fill's GPU vector path (index_masked_fill_x4) and its fallbacks: x [nd: xs] at element
 * offset xo of a poisoned buffer, the mask [mnd: ms] (f32 or i32) at mo, out at oo (in place:
 * out is x). The buffer around out stays poison; on GPU-style profiles the path taken is
 * asserted (fast: the vector kernel ran). */
typedef struct mf_case {
    int nd, mnd;
    int64_t xs[3], ms[3];
    int64_t xo, mo, oo;
    int fast;
} mf_case;

static clt_tensor *mf_place(clt_context *ctx, clt_dtype dt, int nd, const int64_t *s, int64_t off,
                            int64_t n, clt_tensor **buf)
{
    const int64_t total = off + n + 7;
    clt_tensor *v = NULL;
    TU_OK(clt_tensor_create(ctx, dt, 1, &total, buf));
    tu_poison(*buf);
    TU_OK(clt_tensor_view(*buf, off, nd, s, &v));
    return v;
}

static void run_masked_fill_case(clt_context *ctx, const mf_case *c, int as_int, int in_place)
{
    int64_t n = 1, mn = 1, al[3], ast[3];
    for (int d = 0; d < c->nd; d++)
        n *= c->xs[d];
    for (int d = 0; d < c->mnd; d++)
        mn *= c->ms[d];
    for (int d = 0; d < c->nd; d++)
        al[d] = d - (c->nd - c->mnd) >= 0 ? c->ms[d - (c->nd - c->mnd)] : 1;
    ref_strides(c->nd, al, ast);
    float *x = rnd(n);
    int32_t *mh = malloc((size_t)(mn ? mn : 1) * 4);
    for (int64_t i = 0; i < mn; i++) { /* f32: -0.0 is unset, any other bits set */
        int on = (int)(tu_rng_next() % 2);
        float f = on ? (i % 3 ? 1.0f : -2.0f) : (i % 2 ? -0.0f : 0.0f);
        if (as_int)
            mh[i] = on ? (int32_t)(tu_rng_next() % 100) + 1 : 0;
        else
            memcpy(&mh[i], &f, 4);
    }
    clt_tensor *xb, *mb, *ob = NULL;
    clt_tensor *xt = mf_place(ctx, CLT_F32, c->nd, c->xs, c->xo, n, &xb);
    clt_tensor *mt = mf_place(ctx, as_int ? CLT_I32 : CLT_F32, c->mnd, c->ms, c->mo, mn, &mb);
    clt_tensor *ot = in_place ? xt : mf_place(ctx, CLT_F32, c->nd, c->xs, c->oo, n, &ob);
    if (n)
        TU_OK(clt_tensor_write(xt, x, (size_t)n * 4));
    if (mn)
        TU_OK(clt_tensor_write(mt, mh, (size_t)mn * 4));
    const uint64_t before = tu_launches(ctx, "clt_masked_fill", "index_masked_fill_x4");
    TU_OK(clt_masked_fill(xt, mt, -1e9f, ot));
    const int64_t off = in_place ? c->xo : c->oo, total = off + n + 7;
    float *all = down(in_place ? xb : ob);
    for (int64_t j = 0; j < total; j++) {
        int64_t i = j - off, cc, r = i, o = 0;
        if (i < 0 || i >= n) {
            ck_assert_msg(isnan(all[j]), "masked_fill wrote element %lld outside out",
                          (long long)j);
            continue;
        }
        for (int d = c->nd - 1; d >= 0; d--) {
            cc = r % c->xs[d];
            r /= c->xs[d];
            o += (al[d] == 1 ? 0 : cc) * ast[d];
        }
        float mf;
        memcpy(&mf, &mh[o], 4);
        int on = as_int ? mh[o] != 0 : mf != 0.0f;
        ck_assert_msg(all[j] == (on ? -1e9f : x[i]), "masked_fill x %lldx%lldx%lld element %lld",
                      (long long)c->xs[0], (long long)c->xs[1], (long long)c->xs[2], (long long)i);
    }
    int fast = tu_launches(ctx, "clt_masked_fill", "index_masked_fill_x4") > before;
    ck_assert_msg(fast == (c->fast && !clt__cpu_style(ctx)), "masked_fill x %lld..: vector path %s",
                  (long long)c->xs[0], fast ? "ran" : "did not run");
    free(all);
    free(x);
    free(mh);
    clt_tensor_free(mt);
    clt_tensor_free(mb);
    clt_tensor_free(xt);
    clt_tensor_free(xb);
    if (!in_place) {
        clt_tensor_free(ot);
        clt_tensor_free(ob);
    }
}

START_TEST(masked_fill_vector_paths)
{
    clt_context *ctx = tu_profiled_context();
    static const mf_case cases[] = {
        {3, 2, {3, 8, 8}, {8, 8}, 0, 0, 0, 1},     /* a causal-style [s, s] mask: 16-byte mask */
        {3, 2, {2, 5, 8}, {5, 8}, 4, 8, 12, 1},    /* aligned views */
        {3, 2, {2, 5, 8}, {5, 1}, 0, 0, 0, 1},     /* broadcast along the last axis */
        {2, 1, {3, 4}, {1}, 0, 3, 0, 1},           /* one mask element for all */
        {3, 3, {2, 3, 4}, {2, 1, 4}, 0, 0, 0, 1},  /* a broadcast middle axis */
        {3, 2, {2, 5, 8}, {5, 8}, 0, 1, 0, 0},     /* unaligned mask: element-wise */
        {3, 2, {2, 5, 8}, {5, 8}, 3, 0, 0, 0},     /* unaligned x */
        {3, 2, {2, 5, 8}, {5, 8}, 0, 0, 2, 0},     /* unaligned out */
        {2, 2, {7, 13}, {7, 13}, 0, 0, 0, 0},      /* primes: 91 elements */
        {3, 1, {2, 3, 6}, {6}, 0, 0, 0, 0},        /* last extent 6 after merging */
        {2, 2, {1, 1}, {1, 1}, 0, 0, 0, 0},        /* one element */
        {2, 1, {0, 8}, {8}, 0, 0, 0, 0},           /* empty: nothing runs */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int as_int = 0; as_int < 2; as_int++)
            run_masked_fill_case(ctx, &cases[i], as_int, 0);
    run_masked_fill_case(ctx, &cases[1], 0, 1); /* in place */
    tu_context_free(ctx);
}
END_TEST

/* The reference order: value descending (NaN first, -0 == +0), then index ascending. */
static int ranks_before(float a, int ia, float b, int ib)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && (!isnan(b) || ia < ib);
    if (a != b)
        return a > b;
    return ia < ib;
}

static const float *topk_row; /* the row qsort's comparator ranks */

static int topk_cmp(const void *a, const void *b)
{
    int ia = *(const int *)a, ib = *(const int *)b;
    return ranks_before(topk_row[ia], ia, topk_row[ib], ib) ? -1 : ia == ib ? 0 : 1;
}

/* ties: 0 distinct values; 1 few distinct values (both zeros) and a NaN; 2 a constant row but for
 * every 97th element (more equal values than index_topk_radix sorts: its passes over the index
 * bits). */
static void check_topk(clt_context *ctx, int64_t rows, int64_t n, int k, int ties)
{
    int64_t xs[2] = {rows, n}, os[2] = {rows, k};
    float *x = rnd(rows * n);
    for (int64_t i = 0; ties == 1 && i < rows * n; i++)
        x[i] = (float)(int)(x[i] * 4) * 0.25f; /* few distinct values, both zeros */
    for (int64_t i = 0; ties == 2 && i < rows * n; i++)
        if (i % 97 != 5)
            x[i] = 0.5f; /* one value; every 97th stays random in [-1, 1] */
    if (ties == 1 && rows * n > 3)
        x[3] = NAN;
    clt_tensor *xt = upf(ctx, 2, xs, x), *vt = NULL, *it = NULL;
    TU_OK(clt_tensor_create(ctx, CLT_F32, 2, os, &vt));
    TU_OK(clt_tensor_create(ctx, CLT_I32, 2, os, &it));
    tu_poison(vt);
    tu_poison(it);
    TU_OK(clt_topk(xt, k, vt, it));
    float *v = down(vt);
    int32_t *ix = down(it);
    int *order = malloc((size_t)n * sizeof(int));
    for (int64_t r = 0; r < rows; r++) {
        const float *row = x + r * n;
        for (int i = 0; i < n; i++)
            order[i] = i;
        topk_row = row; /* the reference order: a total order, so any sort gives it */
        qsort(order, (size_t)n, sizeof(int), topk_cmp);
        for (int j = 0; j < k; j++) {
            ck_assert_msg(ix[r * k + j] == order[j],
                          "topk %lldx%lld k %d row %lld rank %d: index %d, want %d",
                          (long long)rows, (long long)n, k, (long long)r, j, ix[r * k + j],
                          order[j]);
            ck_assert(memcmp(&v[r * k + j], &row[order[j]], 4) == 0);
        }
    }
    free(order);
    free(v);
    free(ix);
    free(x);
    clt_tensor_free(xt);
    clt_tensor_free(vt);
    clt_tensor_free(it);
}

START_TEST(topk_rows)
{
    clt_context *ctx = tu_context();
    check_topk(ctx, 3, 1, 1, 0);
    check_topk(ctx, 5, 37, 5, 0);
    check_topk(ctx, 2, 300, 64, 0);
    check_topk(ctx, 7, 13, 13, 1);
    check_topk(ctx, 4, 601, 17, 1);
    check_topk(ctx, 0, 9, 3, 0);
    /* rows past the radix select's early gather (512): passes over value bits, then index bits */
    check_topk(ctx, 3, 4099, 64, 0);
    check_topk(ctx, 2, 1021, 1, 0);
    check_topk(ctx, 2, 777, 777, 1);   /* k = n */
    check_topk(ctx, 3, 2503, 300, 1);  /* many equal values, NaN first */
    check_topk(ctx, 2, 6007, 40, 2);   /* 5900 equal values: 16 passes */
    check_topk(ctx, 2, 6007, 2048, 2); /* the radix path's largest k */
    check_topk(ctx, 1, 2600, 2049, 0); /* above it: one pass per rank */
    /* indices only (values NULL). */
    const int64_t xs[2] = {2, 5}, os[2] = {2, 2};
    const float x[10] = {1, 5, 5, 2, 0, -1, -3, 7, 7, 7};
    clt_tensor *xt = upf(ctx, 2, xs, x), *it = NULL;
    TU_OK(clt_tensor_create(ctx, CLT_I32, 2, os, &it));
    TU_OK(clt_topk(xt, 2, NULL, it));
    int32_t got[4];
    TU_OK(clt_tensor_read(it, got, sizeof got));
    ck_assert(got[0] == 1 && got[1] == 2 && got[2] == 2 && got[3] == 3);
    clt_tensor_free(it);
    clt_tensor_free(xt);
    tu_context_free(ctx);
}
END_TEST

#define EXPECT_ERR(call, status, who)                                                              \
    do {                                                                                           \
        TU_EXPECT_STATUS(call, status);                                                            \
        TU_EXPECT_MESSAGE(clt_last_error(ctx), who);                                               \
    } while (0)

START_TEST(bad_input)
{
    clt_context *ctx = tu_context();
    const int64_t ws[2] = {10, 4}, ts[1] = {6}, os[2] = {6, 4}, bad[2] = {6, 5};
    clt_tensor *w = NULL, *ids = NULL, *fids = NULL, *out = NULL, *wrong = NULL;
    TU_OK(clt_tensor_create(ctx, CLT_F32, 2, ws, &w));
    TU_OK(clt_tensor_create(ctx, CLT_I32, 1, ts, &ids));
    TU_OK(clt_tensor_create(ctx, CLT_F32, 1, ts, &fids));
    TU_OK(clt_tensor_create(ctx, CLT_F32, 2, os, &out));
    TU_OK(clt_tensor_create(ctx, CLT_F32, 2, bad, &wrong));
    TU_OK(clt_tensor_fill(out, 5.0));
    TU_OK(clt_tensor_fill(w, 5.0));
    EXPECT_ERR(clt_embedding(NULL, w, out), CLT_ERR_INVALID_ARGUMENT, "clt_embedding");
    EXPECT_ERR(clt_embedding(fids, w, out), CLT_ERR_INVALID_DTYPE, "clt_embedding");
    EXPECT_ERR(clt_embedding(ids, w, wrong), CLT_ERR_INVALID_SHAPE, "clt_embedding");
    EXPECT_ERR(clt_embedding(ids, ids, out), CLT_ERR_INVALID_DTYPE, "clt_embedding");
    EXPECT_ERR(clt_embedding_backward(ids, out, (clt_embedding_grad_mode)5, 0, w),
               CLT_ERR_INVALID_ARGUMENT, "clt_embedding_backward");
    EXPECT_ERR(clt_embedding_backward(ids, wrong, CLT_EMBEDDING_GRAD_ATOMIC, 0, w),
               CLT_ERR_INVALID_SHAPE, "clt_embedding_backward");
    EXPECT_ERR(clt_gather(w, 2, ids, out), CLT_ERR_INVALID_AXIS, "clt_gather");
    EXPECT_ERR(clt_gather(w, 0, fids, out), CLT_ERR_INVALID_DTYPE, "clt_gather");
    EXPECT_ERR(clt_gather(w, 0, ids, out), CLT_ERR_INVALID_SHAPE, "clt_gather");
    EXPECT_ERR(clt_scatter_add(out, -3, ids, w), CLT_ERR_INVALID_AXIS, "clt_scatter_add");
    EXPECT_ERR(clt_index_select(w, 1, ids, out), CLT_ERR_INVALID_SHAPE, "clt_index_select");
    EXPECT_ERR(clt_index_add(w, 0, ids, w), CLT_ERR_INVALID_SHAPE, "clt_index_add");
    EXPECT_ERR(clt_masked_fill(out, w, 0, out), CLT_ERR_INVALID_SHAPE, "clt_masked_fill");
    EXPECT_ERR(clt_masked_fill(out, NULL, 0, out), CLT_ERR_INVALID_ARGUMENT, "clt_masked_fill");
    EXPECT_ERR(clt_one_hot(ids, w), CLT_ERR_INVALID_SHAPE, "clt_one_hot");
    EXPECT_ERR(clt_one_hot(fids, out), CLT_ERR_INVALID_DTYPE, "clt_one_hot");
    EXPECT_ERR(clt_topk(w, 0, out, NULL), CLT_ERR_INVALID_ARGUMENT, "clt_topk");
    EXPECT_ERR(clt_topk(w, 5, w, NULL), CLT_ERR_INVALID_ARGUMENT, "clt_topk");
    EXPECT_ERR(clt_topk(w, 2, NULL, NULL), CLT_ERR_INVALID_ARGUMENT, "clt_topk");
    EXPECT_ERR(clt_topk(w, 2, out, NULL), CLT_ERR_INVALID_SHAPE, "clt_topk");
    float h[24], hw[40];
    TU_OK(clt_tensor_read(out, h, sizeof h));
    TU_OK(clt_tensor_read(w, hw, sizeof hw));
    for (int i = 0; i < 24; i++)
        ck_assert(h[i] == 5.0f);
    for (int i = 0; i < 40; i++)
        ck_assert(hw[i] == 5.0f);
    clt_tensor_free(w);
    clt_tensor_free(ids);
    clt_tensor_free(fids);
    clt_tensor_free(out);
    clt_tensor_free(wrong);
    tu_context_free(ctx);
}
END_TEST

Suite *index_suite(void)
{
    Suite *s = suite_create("index");
    TCase *tc = tcase_create("index");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, embedding_forward_backward);
    tcase_add_test(tc, gather_scatter_every_axis);
    tcase_add_test(tc, masked_fill_and_one_hot);
    tcase_add_test(tc, masked_fill_vector_paths);
    tcase_add_test(tc, topk_rows);
    tcase_add_test(tc, bad_input);
    suite_add_tcase(s, tc);
    return s;
}
