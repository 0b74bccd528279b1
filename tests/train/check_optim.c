/* clt_adamw_step, clt_sgd_step, their multi-tensor forms and clt_clip_grad_norm against
 * tests/ref/optim_ref in double. Lists of tensors in three layouts: one arena per role (views back
 * to back: one segment), views with gaps in one buffer (a segment per tensor, > 8 of them: several
 * launches), and separately allocated tensors; odd sizes, 1, empty tensors in the list.
 * Tolerances (eps = FLT_EPSILON): the updates 8 eps (1 + |ref|) (a handful of roundings, as
 * check_train.c's Adam); the norm 4 eps (sqrt(n) + 8) |ref|, the clipped grads that plus 4 eps. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "ref/optim_ref.h"
#include "ref/train_ref.h"
#include "util/test_util.h"

#define EPS ((double)FLT_EPSILON)
#define MAXT 24

enum { ARENA, GAPS, SEPARATE };

typedef struct tlist {
    int count;
    int64_t sizes[MAXT], starts[MAXT], total;
    clt_tensor *base[4];
    clt_tensor *t[4][MAXT];
} tlist;

/* Tensors of role r for sizes[], in layout; filled from host[r] (concatenated values). */
static void make_lists(clt_context *ctx, tlist *L, int roles, int layout, float *const *host)
{
    L->total = 0;
    for (int i = 0; i < L->count; i++)
        L->starts[i] = L->total, L->total += L->sizes[i];
    for (int r = 0; r < roles; r++) {
        L->base[r] = NULL;
        if (layout != SEPARATE) {
            int64_t n = L->total + (layout == GAPS ? 3 * L->count : 0) + 1;
            TU_OK(clt_tensor_create(ctx, CLT_F32, 1, &n, &L->base[r]));
        }
        int64_t at = 1; /* an odd start */
        for (int i = 0; i < L->count; i++) {
            int64_t n = L->sizes[i];
            if (layout == SEPARATE)
                TU_OK(clt_tensor_create(ctx, CLT_F32, 1, &n, &L->t[r][i]));
            else
                TU_OK(clt_tensor_view(L->base[r], at - (layout == ARENA && i == 0 ? 1 : 0), 1, &n, &L->t[r][i]));
            at += n + (layout == GAPS ? 3 : 0);
            if (n)
                TU_OK(clt_tensor_write(L->t[r][i], host[r] + L->starts[i], sizeof(float) * (size_t)n));
        }
    }
}

static void read_role(tlist *L, int r, float *out)
{
    for (int i = 0; i < L->count; i++)
        if (L->sizes[i])
            TU_OK(clt_tensor_read(L->t[r][i], out + L->starts[i], sizeof(float) * (size_t)L->sizes[i]));
}

static void free_lists(tlist *L, int roles)
{
    for (int r = 0; r < roles; r++) {
        for (int i = 0; i < L->count; i++)
            clt_tensor_free(L->t[r][i]);
        clt_tensor_free(L->base[r]);
    }
}

static void set_sizes(tlist *L, int count)
{
    static const int64_t pool[] = {7, 1, 0, 129, 31, 1000, 3, 257, 2, 61, 0, 97, 5, 11, 13, 4099, 17, 19, 23, 8, 29, 1, 37, 41};
    L->count = count;
    for (int i = 0; i < count; i++)
        L->sizes[i] = pool[i % (int)(sizeof pool / sizeof pool[0])];
}

static void expect_role(tlist *L, int r, const double *want, const char *what, double tol)
{
    float *got = malloc(sizeof(float) * (size_t)(L->total + 1));
    read_role(L, r, got);
    for (int64_t i = 0; i < L->total; i++)
        ck_assert_msg(fabs(got[i] - want[i]) <= tol * (1 + fabs(want[i])), "%s [%lld] = %.9g, want %.9g", what,
                      (long long)i, got[i], want[i]);
    free(got);
}

/* kind 0 Adam, 1 AdamW, 2 SGD; multi: the _multi call (else one single call per tensor). */
static void check_step(clt_context *ctx, int kind, int count, int layout, int multi, int64_t step,
                       float momentum, float dampening, int nesterov, float wd)
{
    tlist L;
    set_sizes(&L, count);
    int64_t total = 0;
    for (int i = 0; i < count; i++)
        total += L.sizes[i];
    float *h[4];
    double *d[4];
    for (int r = 0; r < 4; r++) {
        h[r] = malloc(sizeof(float) * (size_t)(total + 1));
        d[r] = malloc(sizeof(double) * (size_t)(total + 1));
    }
    tu_random_f32(h[0], (size_t)total, -2, 2);
    tu_random_f32(h[1], (size_t)total, -1, 1);
    tu_random_f32(h[2], (size_t)total, -0.5f, 0.5f);
    tu_random_f32(h[3], (size_t)total, 0.01f, 1);
    for (int r = 0; r < 4; r++)
        for (int64_t i = 0; i < total; i++)
            d[r][i] = h[r][i];
    int roles = kind == 2 ? 3 : 4;
    make_lists(ctx, &L, roles, layout, h);
    clt_adam_params ap;
    if (kind == 1)
        clt_adamw_params_init(&ap);
    else
        clt_adam_params_init(&ap);
    ap.lr = 0.01f;
    ap.weight_decay = wd;
    clt_sgd_params sp;
    clt_sgd_params_init(&sp);
    sp.lr = 0.05f, sp.momentum = momentum, sp.dampening = dampening, sp.nesterov = nesterov, sp.weight_decay = wd;
    if (multi) {
        if (kind == 0)
            TU_OK(clt_adam_step_multi(count, L.t[0], (const clt_tensor *const *)L.t[1], L.t[2], L.t[3], &ap, step));
        else if (kind == 1)
            TU_OK(clt_adamw_step_multi(count, L.t[0], (const clt_tensor *const *)L.t[1], L.t[2], L.t[3], &ap, step));
        else
            TU_OK(clt_sgd_step_multi(count, L.t[0], (const clt_tensor *const *)L.t[1], momentum > 0 ? L.t[2] : NULL,
                                     &sp, step));
    } else {
        for (int i = 0; i < count; i++) {
            if (kind == 0)
                TU_OK(clt_adam_step(L.t[0][i], L.t[1][i], L.t[2][i], L.t[3][i], &ap, step));
            else if (kind == 1)
                TU_OK(clt_adamw_step(L.t[0][i], L.t[1][i], L.t[2][i], L.t[3][i], &ap, step));
            else
                TU_OK(clt_sgd_step(L.t[0][i], L.t[1][i], momentum > 0 ? L.t[2][i] : NULL, &sp, step));
        }
    }
    if (kind == 0)
        ref_adam_step(total, d[0], d[1], d[2], d[3], ap.lr, ap.beta1, ap.beta2, ap.eps, ap.weight_decay, step);
    else if (kind == 1)
        ref_adamw_step(total, d[0], d[1], d[2], d[3], ap.lr, ap.beta1, ap.beta2, ap.eps, ap.weight_decay, step);
    else
        ref_sgd_step(total, d[0], d[1], d[2], sp.lr, momentum, dampening, wd, nesterov, step);
    expect_role(&L, 0, d[0], kind == 2 ? "sgd param" : "adam param", 8 * EPS);
    expect_role(&L, 1, d[1], "grad (only read)", 0);
    if (kind != 2 || momentum > 0)
        expect_role(&L, 2, d[2], "m / momentum buffer", 8 * EPS);
    if (kind != 2)
        expect_role(&L, 3, d[3], "v", 8 * EPS);
    free_lists(&L, roles);
    for (int r = 0; r < 4; r++)
        free(h[r]), free(d[r]);
}

START_TEST(adamw_single_and_multi)
{
    clt_context *ctx = tu_context();
    check_step(ctx, 1, 5, SEPARATE, 0, 1, 0, 0, 0, 0.01f);
    check_step(ctx, 1, 5, SEPARATE, 0, 7, 0, 0, 0, 0.1f);
    for (int layout = ARENA; layout <= SEPARATE; layout++) {
        check_step(ctx, 1, 19, layout, 1, 3, 0, 0, 0, 0.05f);
        check_step(ctx, 0, 19, layout, 1, 2, 0, 0, 0, 0.01f); /* Adam multi: L2 decay */
    }
    check_step(ctx, 1, 1, ARENA, 1, 1, 0, 0, 0, 0.0f);
    tu_context_free(ctx);
}
END_TEST

START_TEST(sgd_single_and_multi)
{
    clt_context *ctx = tu_context();
    check_step(ctx, 2, 4, SEPARATE, 0, 1, 0, 0, 0, 0); /* plain */
    check_step(ctx, 2, 4, SEPARATE, 0, 1, 0.9f, 0, 0, 0.01f); /* first step: buf = g */
    check_step(ctx, 2, 4, SEPARATE, 0, 5, 0.9f, 0.3f, 0, 0.01f);
    check_step(ctx, 2, 4, SEPARATE, 0, 5, 0.8f, 0, 1, 0); /* Nesterov */
    for (int layout = ARENA; layout <= SEPARATE; layout++) {
        check_step(ctx, 2, 21, layout, 1, 2, 0.9f, 0.1f, 0, 0.001f);
        check_step(ctx, 2, 21, layout, 1, 1, 0.5f, 0, 1, 0);
        check_step(ctx, 2, 9, layout, 1, 3, 0, 0, 0, 0.1f);
    }
    tu_context_free(ctx);
}
END_TEST

static void check_clip(clt_context *ctx, int count, int layout, double max_factor, int with_out)
{
    tlist L;
    set_sizes(&L, count);
    int64_t total = 0;
    for (int i = 0; i < count; i++)
        total += L.sizes[i];
    float *h = malloc(sizeof(float) * (size_t)(total + 1));
    double *d = malloc(sizeof(double) * (size_t)(total + 1));
    tu_random_f32(h, (size_t)total, -1, 1);
    double norm = 0;
    for (int64_t i = 0; i < total; i++)
        d[i] = h[i], norm += d[i] * d[i];
    norm = sqrt(norm);
    float *hs[1] = {h};
    make_lists(ctx, &L, 1, layout, hs);
    clt_tensor *out = NULL;
    if (with_out) {
        TU_OK(clt_tensor_create(ctx, CLT_F32, 0, NULL, &out));
        tu_poison(out);
    }
    float max_norm = (float)(norm * max_factor);
    TU_OK(clt_clip_grad_norm(count, L.t[0], max_norm, out));
    double want = ref_clip_grad_norm(total, d, max_norm);
    double tol = 4 * EPS * (sqrt((double)total) + 8);
    if (out) {
        float got;
        TU_OK(clt_tensor_read(out, &got, sizeof got));
        ck_assert_msg(fabs(got - want) <= tol * want + 1e-30, "clip norm %.9g, want %.9g", got, want);
    }
    float *g = malloc(sizeof(float) * (size_t)(total + 1));
    read_role(&L, 0, g);
    for (int64_t i = 0; i < total; i++) {
        if (max_factor >= 1.5) /* no clipping: the grads are untouched, bit for bit */
            ck_assert_msg(g[i] == h[i], "clip changed grad [%lld]: %.9g, was %.9g", (long long)i, g[i], h[i]);
        else
            ck_assert_msg(fabs(g[i] - d[i]) <= (tol + 4 * EPS) * fabs(d[i]) + 1e-30,
                          "clipped grad [%lld] = %.9g, want %.9g", (long long)i, g[i], d[i]);
    }
    free_lists(&L, 1);
    clt_tensor_free(out);
    free(h), free(d), free(g);
}

START_TEST(clip_grad_norm_on_device)
{
    clt_context *ctx = tu_context();
    for (int layout = ARENA; layout <= SEPARATE; layout++) {
        check_clip(ctx, 19, layout, 0.25, 1);
        check_clip(ctx, 19, layout, 2.0, 1);
        check_clip(ctx, 3, layout, 0.5, 0);
    }
    check_clip(ctx, 1, ARENA, 0.1, 1);
    /* an empty list: the norm is 0 */
    clt_tensor *out;
    TU_OK(clt_tensor_create(ctx, CLT_F32, 0, NULL, &out));
    tu_poison(out);
    TU_OK(clt_clip_grad_norm(0, NULL, 1.0f, out));
    float got;
    TU_OK(clt_tensor_read(out, &got, sizeof got));
    ck_assert_msg(got == 0.0f, "norm of nothing %g", got);
    tu_context_free(ctx);
}
END_TEST

START_TEST(optimisers_reject_bad_input)
{
    clt_context *ctx = tu_context();
    int64_t n = 8, m5 = 5;
    clt_tensor *p, *g, *b, *wrong, *i32, *arena, *v1, *v2;
    TU_OK(clt_tensor_create(ctx, CLT_F32, 1, &n, &p));
    TU_OK(clt_tensor_create(ctx, CLT_F32, 1, &n, &g));
    TU_OK(clt_tensor_create(ctx, CLT_F32, 1, &n, &b));
    TU_OK(clt_tensor_create(ctx, CLT_F32, 1, &m5, &wrong));
    TU_OK(clt_tensor_create(ctx, CLT_I32, 1, &n, &i32));
    int64_t twelve = 12;
    TU_OK(clt_tensor_create(ctx, CLT_F32, 1, &twelve, &arena));
    TU_OK(clt_tensor_view(arena, 0, 1, &n, &v1));
    TU_OK(clt_tensor_view(arena, 4, 1, &n, &v2)); /* overlaps v1 */
    float ones[8] = {1, 1, 1, 1, 1, 1, 1, 1}, got[8];
    TU_OK(clt_tensor_write(p, ones, sizeof ones));
    clt_sgd_params sp;
    clt_sgd_params_init(&sp);
    sp.momentum = 0.9f;
#define P_UNCHANGED(who)                                                                           \
    do {                                                                                           \
        TU_EXPECT_MESSAGE(clt_last_error(ctx), who);                                               \
        TU_OK(clt_tensor_read(p, got, sizeof got));                                                \
        for (int i_ = 0; i_ < 8; i_++)                                                             \
            ck_assert_msg(got[i_] == 1.0f, "%s changed param", who);                               \
    } while (0)
    TU_EXPECT_STATUS(clt_sgd_step(p, g, NULL, &sp, 1), CLT_ERR_INVALID_ARGUMENT); /* momentum needs a buffer */
    P_UNCHANGED("clt_sgd_step");
    TU_EXPECT_STATUS(clt_sgd_step(p, wrong, b, &sp, 1), CLT_ERR_INVALID_SHAPE);
    P_UNCHANGED("clt_sgd_step");
    TU_EXPECT_STATUS(clt_sgd_step(p, i32, b, &sp, 1), CLT_ERR_INVALID_DTYPE);
    P_UNCHANGED("clt_sgd_step");
    TU_EXPECT_STATUS(clt_sgd_step(p, g, b, &sp, 0), CLT_ERR_INVALID_ARGUMENT);
    P_UNCHANGED("clt_sgd_step");
    TU_EXPECT_STATUS(clt_sgd_step(p, g, p, &sp, 1), CLT_ERR_ALIASING);
    P_UNCHANGED("clt_sgd_step");
    sp.nesterov = 1, sp.dampening = 0.5f;
    TU_EXPECT_STATUS(clt_sgd_step(p, g, b, &sp, 1), CLT_ERR_INVALID_ARGUMENT);
    P_UNCHANGED("clt_sgd_step");
    TU_EXPECT_STATUS(clt_sgd_step(p, g, b, NULL, 1), CLT_ERR_INVALID_ARGUMENT);
    P_UNCHANGED("clt_sgd_step");
    clt_adam_params ap;
    clt_adamw_params_init(&ap);
    ap.beta1 = 1.0f;
    TU_EXPECT_STATUS(clt_adamw_step(p, g, b, wrong, &ap, 1), CLT_ERR_INVALID_ARGUMENT);
    P_UNCHANGED("clt_adamw_step");
    clt_adamw_params_init(&ap);
    TU_EXPECT_STATUS(clt_adamw_step(p, g, b, wrong, &ap, 1), CLT_ERR_INVALID_SHAPE);
    P_UNCHANGED("clt_adamw_step");
    clt_tensor *pl[2] = {p, v1}, *ml[2] = {b, v2}, *vl[2] = {g, wrong};
    const clt_tensor *gl[2] = {g, g};
    TU_EXPECT_STATUS(clt_adamw_step_multi(-1, pl, gl, ml, vl, &ap, 1), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_MESSAGE(clt_last_error(NULL), "clt_adamw_step_multi");
    TU_EXPECT_STATUS(clt_adamw_step_multi(2, pl, gl, ml, NULL, &ap, 1), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_STATUS(clt_adamw_step_multi(2, pl, gl, ml, vl, &ap, 1), CLT_ERR_INVALID_SHAPE);
    P_UNCHANGED("clt_adamw_step_multi");
    clt_tensor *vl2[2] = {wrong, wrong};
    (void)vl2;
    clt_tensor *bl[2] = {b, v2};
    sp.nesterov = 0, sp.dampening = 0;
    TU_EXPECT_STATUS(clt_sgd_step_multi(2, pl, gl, bl, &sp, 1), CLT_ERR_ALIASING); /* v1 overlaps v2 */
    P_UNCHANGED("clt_sgd_step_multi");
    clt_tensor *nl[2] = {p, NULL};
    TU_EXPECT_STATUS(clt_sgd_step_multi(2, nl, gl, bl, &sp, 1), CLT_ERR_INVALID_ARGUMENT);
    P_UNCHANGED("clt_sgd_step_multi");
    clt_tensor *cl2[2] = {p, p};
    TU_EXPECT_STATUS(clt_clip_grad_norm(2, cl2, 1.0f, NULL), CLT_ERR_ALIASING);
    P_UNCHANGED("clt_clip_grad_norm");
    clt_tensor *cl1[1] = {p};
    TU_EXPECT_STATUS(clt_clip_grad_norm(1, cl1, -1.0f, NULL), CLT_ERR_INVALID_ARGUMENT);
    P_UNCHANGED("clt_clip_grad_norm");
    TU_EXPECT_STATUS(clt_clip_grad_norm(1, cl1, 1.0f, wrong), CLT_ERR_INVALID_SHAPE);
    P_UNCHANGED("clt_clip_grad_norm");
    clt_tensor *il[1] = {i32};
    TU_EXPECT_STATUS(clt_clip_grad_norm(1, il, 1.0f, NULL), CLT_ERR_INVALID_DTYPE);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_clip_grad_norm");
    tu_context_free(ctx);
}
END_TEST

Suite *optim_suite(void)
{
    Suite *s = suite_create("optim");
    TCase *tc = tcase_create("optim");
    tcase_add_test(tc, adamw_single_and_multi);
    tcase_add_test(tc, sgd_single_and_multi);
    tcase_add_test(tc, clip_grad_norm_on_device);
    tcase_add_test(tc, optimisers_reject_bad_input);
    suite_add_tcase(s, tc);
    return s;
}
