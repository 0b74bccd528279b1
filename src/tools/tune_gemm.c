/* clt-tune, GEMM kernel parameters: for each path of gemm_tiled.c (large: gemm_tiled.cl on GPUs or
 * gemm_cpu.cl on CPU devices; small: gemm_small; GEMV) a short list of candidates per device class,
 * each checked against the device limits, timed on a few shapes with that path forced
 * (CLT_GEMM_VARIANT). The built-in value is candidate 0 and stays unless another beats it by more
 * than NOISE on the sum of per-shape times relative to the best. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tune_sweeps.h"

#define NOISE 0.03
#define MAX_CANDS 12
#define MAX_SHAPES 3

typedef struct gemm_state {
    clt_tensor *a, *b, *c;
    int64_t m, n, k;
} gemm_state;

static clt_status gemm_run(void *p)
{
    gemm_state *s = p;
    return clt_gemm(CLT_NO_TRANS, CLT_NO_TRANS, s->m, s->n, s->k, 1.0f, s->a, 0, s->k, s->b, 0, s->n,
                    0.0f, s->c, 0, s->n, NULL);
}

double tune_time_gemm(tune_env *env, int64_t m, int64_t n, int64_t k)
{
    gemm_state s = {NULL, NULL, NULL, m, n, k};
    int64_t sa[2] = {m, k}, sb[2] = {k, n}, sc[2] = {m, n};
    clt_context *ctx = env->ctx;
    if (ctx->error)
        ctx->error[0] = '\0'; /* a refused variant leaves its message here, see below */
    clt_status st = clt_tensor_create(ctx, CLT_F32, 2, sa, &s.a);
    if (!st)
        st = clt_tensor_create(ctx, CLT_F32, 2, sb, &s.b);
    if (!st)
        st = clt_tensor_create(ctx, CLT_F32, 2, sc, &s.c);
    if (!st)
        st = clt_tensor_fill_uniform(s.a, env->seed++, -1.0f, 1.0f);
    if (!st)
        st = clt_tensor_fill_uniform(s.b, env->seed++, -1.0f, 1.0f);
    bench_run r = {0};
    r.state = &s;
    r.run = gemm_run;
    bench_timing t = {0};
    if (!st)
        st = bench_measure(ctx, &r, &env->timing, &t);
    clt_tensor_free(s.a);
    clt_tensor_free(s.b);
    clt_tensor_free(s.c);
    env->measurements++;
    if (st != CLT_SUCCESS) {
        fprintf(stderr, "clt-tune: %lldx%lldx%lld: %s: %s\n", (long long)m, (long long)n,
                (long long)k, clt_status_string(st), clt_last_error(ctx));
        return -1.0;
    }
    /* The forced variant could not run (e.g. the built kernel allows fewer items per group) and
     * dispatch fell back to the other implementation: that is not this candidate's time. */
    if (ctx->error && strstr(ctx->error, "no GEMM kernel variant fits")) {
        fprintf(stderr, "clt-tune: %lldx%lldx%lld: candidate refused: %s\n", (long long)m,
                (long long)n, (long long)k, ctx->error);
        return -1.0;
    }
    return t.us_median;
}

/* Index of the best candidate by the sum over shapes of time / best time of that shape; a
 * candidate that failed on any shape is out. Candidate 0 (built-in) wins ties within NOISE. */
static int pick(double us[MAX_CANDS][MAX_SHAPES], int nc, int ns)
{
    double best_shape[MAX_SHAPES];
    for (int s = 0; s < ns; s++) {
        best_shape[s] = INFINITY;
        for (int c = 0; c < nc; c++)
            if (us[c][s] > 0 && us[c][s] < best_shape[s])
                best_shape[s] = us[c][s];
    }
    double score[MAX_CANDS];
    int best = -1;
    for (int c = 0; c < nc; c++) {
        score[c] = 0;
        for (int s = 0; s < ns; s++)
            score[c] += us[c][s] > 0 ? us[c][s] / best_shape[s] : INFINITY;
        if (isfinite(score[c]) && (best < 0 || score[c] < score[best]))
            best = c;
    }
    if (best > 0 && isfinite(score[0]) && score[best] > score[0] * (1.0 - NOISE))
        best = 0;
    return best;
}

typedef void (*install_fn)(clt__gemm_table *t, const int *cand);

/* Time every candidate (installed by fn into the trial table) on the shapes with `variant` forced;
 * return the winner's index (-1 when none ran). */
static int sweep(tune_env *env, const char *label, const char *variant, install_fn fn,
                 const int cands[][7], int nc, const int64_t shapes[][3], int ns)
{
    double us[MAX_CANDS][MAX_SHAPES];
    clt__gemm_table saved = env->trial->gemm_table;
    setenv("CLT_GEMM_VARIANT", variant, 1);
    for (int c = 0; c < nc; c++) {
        fn(&env->trial->gemm_table, cands[c]);
        printf("  %s", label);
        for (int j = 0; j < 7 && cands[c][j] >= 0; j++)
            printf(" %d", cands[c][j]);
        printf(":");
        for (int s = 0; s < ns; s++) {
            us[c][s] = tune_time_gemm(env, shapes[s][0], shapes[s][1], shapes[s][2]);
            double gf = 2.0 * (double)shapes[s][0] * (double)shapes[s][1] * (double)shapes[s][2];
            if (us[c][s] > 0)
                printf("  %lldx%lldx%lld %.1f us (%.1f GFLOP/s)", (long long)shapes[s][0],
                       (long long)shapes[s][1], (long long)shapes[s][2], us[c][s], gf / us[c][s] / 1e3);
            else
                printf("  %lldx%lldx%lld failed", (long long)shapes[s][0], (long long)shapes[s][1],
                       (long long)shapes[s][2]);
        }
        printf("\n");
        fflush(stdout);
        env->trial->gemm_table = saved;
    }
    unsetenv("CLT_GEMM_VARIANT");
    int best = pick(us, nc, ns);
    if (best >= 0)
        fn(&env->trial->gemm_table, cands[best]);
    return best;
}

static void install_tiled(clt__gemm_table *t, const int *c)
{
    clt__gemm_tiled_cfg cfg = {c[0], c[1], c[2], c[3], c[4], c[5], c[6]};
    t->tiled[0] = cfg;
}

static void install_cpu(clt__gemm_table *t, const int *c)
{
    clt__gemm_cpu_cfg cfg = {c[0], c[1], c[2]};
    t->cpu = cfg;
}

static void install_small(clt__gemm_table *t, const int *c)
{
    t->small_lx = c[0];
    t->small_ly = c[1];
}

static void install_gemv(clt__gemm_table *t, const int *c)
{
    t->gemv_f = c[0];
    t->gemv_s = c[1];
}

/* Candidate lists (-1 ends a row): the built-in value is prepended at run time. */
static const int tiled_cands[][7] = {
    /* bigger tiles first (--quick tries the first few): fewer loads per FMA, one group per SM */
    {256, 128, 8, 16, 16, 4, 1},  {128, 128, 16, 16, 16, 4, 1}, {128, 256, 16, 16, 16, 4, 1},
    {256, 128, 16, 32, 16, 4, 1}, {128, 256, 16, 16, 32, 4, 1}, {128, 128, 32, 16, 16, 4, 1},
    {128, 128, 16, 16, 8, 4, 1},  {128, 128, 16, 16, 16, 4, 0}, {128, 128, 8, 16, 16, 4, 1},
    {128, 64, 16, 16, 16, 4, 1},  {64, 128, 16, 16, 16, 4, 1},  {64, 64, 16, 16, 16, 4, 1},
    {64, 64, 32, 8, 8, 4, 1},
};
static const int cpu_cands[][7] = {
    {4, 16, 16, -1}, {8, 8, 16, -1}, {6, 16, 32, -1}, {4, 16, 8, -1}, {6, 8, 16, -1},
};
static const int small_gpu[][7] = {{32, 8, -1}, {16, 16, -1}, {64, 4, -1}, {32, 4, -1}, {16, 8, -1}};
static const int small_cpu[][7] = {{16, 1, -1}, {32, 1, -1}, {8, 8, -1}, {64, 1, -1}, {8, 1, -1}};
/* Same product per class: GEMV_WG (a build option) stays the same, so no extra compiles. */
static const int gemv_gpu[][7] = {{32, 8, -1}, {64, 4, -1}, {16, 16, -1}, {128, 2, -1}, {8, 32, -1}};
static const int gemv_cpu[][7] = {{8, 8, -1}, {16, 4, -1}, {4, 16, -1}, {32, 2, -1}, {64, 1, -1}};

static int same_cand(const int *a, const int *b)
{
    for (int j = 0; j < 7 && (a[j] >= 0 || b[j] >= 0); j++)
        if (a[j] != b[j])
            return 0;
    return 1;
}

/* builtin + the listed candidates that pass check (ok), at most MAX_CANDS, quick: at most 4. */
static int candidates(tune_env *env, const int builtin[7], const int list[][7], int n,
                      int (*ok)(tune_env *, const int *), int out[MAX_CANDS][7])
{
    int nc = 0, cap = env->quick ? 4 : MAX_CANDS;
    memcpy(out[nc++], builtin, sizeof out[0]);
    for (int i = 0; i < n && nc < cap; i++) {
        if (same_cand(list[i], builtin) || (ok && !ok(env, list[i])))
            continue;
        memcpy(out[nc++], list[i], sizeof out[0]);
    }
    return nc;
}

static int tiled_ok(tune_env *env, const int *c)
{
    clt__gemm_tiled_cfg cfg = {c[0], c[1], c[2], c[3], c[4], c[5], c[6]};
    char why[200];
    return clt__gemm_tiled_cfg_ok(env->ctx, &cfg, why, sizeof why);
}

static int cpu_ok(tune_env *env, const int *c)
{
    clt__gemm_cpu_cfg cfg = {c[0], c[1], c[2]};
    char why[200];
    return clt__gemm_cpu_cfg_ok(env->ctx, &cfg, why, sizeof why);
}

static int pair_ok(tune_env *env, const int *c)
{
    return (uint64_t)c[0] * (uint64_t)c[1] <= env->ctx->limits.max_work_group_size;
}

#define COUNT(a) (int)(sizeof(a) / sizeof((a)[0]))

int tune_gemm_params(tune_env *env)
{
    clt__gemm_table *t = &env->trial->gemm_table;
    int cands[MAX_CANDS][7], nc, best;
    /* On GPUs config 0 only runs grids that fill the device (smaller tiles or split K take the
     * rest), so its candidates are judged on a big square product alone: on the H200 a 128x64 tile
     * won a 2048^3 + 256x2048^2 sweep and then ran 4096^3 20% slower than 128x128. */
    int64_t s = env->gpu ? 4096 : (env->quick ? 512 : 1024);
    int64_t large[2][3] = {{s, s, s}, {256, s, s}};
    int n_large = env->gpu ? 1 : 2;
    if (t->prefer_cpu) {
        int b[7] = {t->cpu.rpi, t->cpu.nv, t->cpu.local, -1, -1, -1, -1};
        nc = candidates(env, b, cpu_cands, COUNT(cpu_cands), cpu_ok, cands);
        best = sweep(env, "large (gemm_cpu RPI NV LOCAL)", "cpu", install_cpu,
                     (const int(*)[7])cands, nc, (const int64_t(*)[3])large, 2);
    } else {
        const clt__gemm_tiled_cfg *c = &t->tiled[0];
        int b[7] = {c->mwg, c->nwg, c->kwg, c->mdimc, c->ndimc, c->vw, c->db};
        nc = candidates(env, b, tiled_cands, COUNT(tiled_cands), tiled_ok, cands);
        int n_tiled = t->n_tiled;
        t->n_tiled = 1; /* a refused candidate must fail, not quietly run the next config */
        best = sweep(env, "large (gemm_tiled MWG NWG KWG MDIMC NDIMC VW DB)", "tiled:0",
                     install_tiled, (const int(*)[7])cands, nc, (const int64_t(*)[3])large, n_large);
        t->n_tiled = n_tiled;
    }
    if (best < 0)
        return -1;

    int64_t small[2][3] = {{64, 64, 64}, {8, 1024, 1024}};
    if (!env->gpu) {
        int64_t cpu_small[2][3] = {{32, 32, 32}, {8, 64, 64}};
        memcpy(small, cpu_small, sizeof small);
    }
    int bs[7] = {t->small_lx, t->small_ly, -1, -1, -1, -1, -1};
    nc = candidates(env, bs, env->gpu ? small_gpu : small_cpu, 5, pair_ok, cands);
    if (sweep(env, "small (LX LY)", "small", install_small, (const int(*)[7])cands, nc,
              (const int64_t(*)[3])small, 2) < 0)
        return -1;

    int64_t g = env->gpu ? (env->quick ? 2048 : 4096) : 1024;
    int64_t gemv[2][3] = {{1, g, g}, {g, 1, g}};
    int bg[7] = {t->gemv_f, t->gemv_s, -1, -1, -1, -1, -1};
    nc = candidates(env, bg, env->gpu ? gemv_gpu : gemv_cpu, 5, pair_ok, cands);
    if (sweep(env, "gemv (F S)", "gemv", install_gemv, (const int(*)[7])cands, nc,
              (const int64_t(*)[3])gemv, 2) < 0)
        return -1;
    env->trial->has_gemm_table = 1;
    return tune_gemm_entries(env);
}

static void drop_key(clt__tuning_entries *e, const char *key)
{
    for (int i = 0; i < e->n; i++)
        if (!strcmp(e->kv[i].key, key)) {
            memmove(&e->kv[i], &e->kv[i + 1], sizeof e->kv[0] * (size_t)(e->n - i - 1));
            e->n--;
            return;
        }
}

int tune_gemm_entries(tune_env *env)
{
    /* Only what this device can run: the reader rejects a file with anything else, and a built-in
     * entry the device cannot run (a tile too big for its local memory) is skipped anyway. */
    clt__gemm_table t = *clt__gemm_table_for(env->ctx);
    char why[200];
    int n = 0;
    for (int i = 0; i < t.n_tiled; i++)
        if (clt__gemm_tiled_cfg_ok(env->ctx, &t.tiled[i], why, sizeof why))
            t.tiled[n++] = t.tiled[i];
    t.n_tiled = n;
    for (int i = 0; i < CLT_GEMM_MAX_TILED_CFGS; i++) {
        char k[32];
        snprintf(k, sizeof k, "gemm.tiled.%d", i);
        drop_key(env->out, k);
    }
    if (clt__gemm_tuning_entries(clt__gemm_rule_for(env->ctx), &t, env->out) != 0)
        return -1;
    int small[2] = {t.small_lx, t.small_ly}, gemv[2] = {t.gemv_f, t.gemv_s};
    if (!clt__gemm_cpu_cfg_ok(env->ctx, &t.cpu, why, sizeof why))
        drop_key(env->out, "gemm.cpu");
    if (!pair_ok(env, small))
        drop_key(env->out, "gemm.small");
    if (!pair_ok(env, gemv))
        drop_key(env->out, "gemm.gemv");
    return 0;
}
