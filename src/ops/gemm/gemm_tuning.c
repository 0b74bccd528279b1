/* The gemm section of the tuning file: its keys, their checks (ranges and the kernels' #error
 * constraints, against the context's limits) and the merge over the built-in rule and table.
 *   gemm.clblast_min_dim = <int>      the auto rule (gemm_dispatch.h); 0 = never CLBlast
 *   gemm.clblast_min_flop = <number>
 *   gemm.prefer_cpu = 0|1             big shapes to gemm_cpu.cl instead of gemm_tiled.cl
 *   gemm.tiled.<i> = MWG NWG KWG MDIMC NDIMC VW DB   i = 0, 1, 2 (replaces the whole list)
 *   gemm.cpu = RPI NV LOCAL
 *   gemm.small = LX LY                local size of gemm_small
 *   gemm.gemv = F S                   local size of gemm_gemv
 *   gemm.small_volume = <number>      m*n*k at or below which gemm_small runs
 *   gemm.skinny = <int>               min(m, n) at or below which gemm_small runs
 * Every key is optional; what a file leaves out keeps the built-in value. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/gemm/gemm_dispatch.h"
#include "ops/gemm/gemm_params.h"
#include "tune/tuning_file.h"

/* Up to max whitespace-separated integers in [lo, hi]; returns how many, -1 on junk. */
static int parse_ints(const char *s, int *out, int max, long lo, long hi)
{
    int n = 0;
    for (;;) {
        while (*s == ' ')
            s++;
        if (!*s)
            return n;
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || (*end && *end != ' ') || v < lo || v > hi || n == max)
            return -1;
        out[n++] = (int)v;
        s = end;
    }
}

static int parse_number(const char *s, double lo, double hi, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !isfinite(v) || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

int clt__gemm_tiled_cfg_ok(const clt_context *ctx, const clt__gemm_tiled_cfg *c, char *why, size_t cap)
{
    int wg = c->mdimc * c->ndimc;
    const char *bad = NULL;
    if (c->mwg < 1 || c->nwg < 1 || c->kwg < 1 || c->mdimc < 1 || c->ndimc < 1 || c->mwg > 1024 ||
        c->nwg > 1024 || c->kwg > 1024 || c->mdimc > 1024 || c->ndimc > 1024)
        bad = "sizes must be 1 .. 1024";
    else if (c->vw != 1 && c->vw != 2 && c->vw != 4)
        bad = "VW must be 1, 2 or 4";
    else if (c->db != 0 && c->db != 1)
        bad = "DB must be 0 or 1";
    else if (c->mwg % (c->mdimc * c->vw) || c->nwg % (c->ndimc * c->vw))
        bad = "MWG (NWG) must be a multiple of MDIMC * VW (NDIMC * VW)";
    else if (c->kwg % c->vw || (c->mwg * c->kwg / c->vw) % wg || (c->nwg * c->kwg / c->vw) % wg)
        bad = "tile vectors must be a multiple of the work-group size";
    else if ((uint64_t)wg > ctx->limits.max_work_group_size)
        bad = "work-group larger than the device allows";
    else if (clt__gemm_tiled_local_bytes(c) > ctx->limits.local_mem_budget)
        bad = "needs more local memory than the device has";
    if (bad)
        snprintf(why, cap, "tiled %d %d %d %d %d %d %d: %s", c->mwg, c->nwg, c->kwg, c->mdimc,
                 c->ndimc, c->vw, c->db, bad);
    return bad == NULL;
}

int clt__gemm_cpu_cfg_ok(const clt_context *ctx, const clt__gemm_cpu_cfg *c, char *why, size_t cap)
{
    const char *bad = NULL;
    if (c->rpi < 1 || c->rpi > 8)
        bad = "RPI must be 1..8";
    else if (c->nv != 8 && c->nv != 16)
        bad = "NV must be 8 or 16";
    else if (c->local < 1 || (uint64_t)c->local > ctx->limits.max_work_group_size)
        bad = "work-group size out of the device's range";
    else if ((uint64_t)256 * (uint64_t)c->nv * 4u > ctx->limits.local_mem_budget)
        bad = "needs more local memory than the device has"; /* KB = 256 rows of the B panel */
    if (bad)
        snprintf(why, cap, "cpu %d %d %d: %s", c->rpi, c->nv, c->local, bad);
    return bad == NULL;
}

/* A local size pair: both >= 1, product within the device's work-group limit (and, for gemv, its
 * reduction buffer within local memory). */
static int pair_ok(const clt_context *ctx, const int v[2], int is_gemv)
{
    uint64_t prod = (uint64_t)v[0] * (uint64_t)v[1];
    return v[0] >= 1 && v[1] >= 1 && prod <= ctx->limits.max_work_group_size &&
           (!is_gemv || prod * 4u <= ctx->limits.local_mem_budget);
}

static int fail(char *why, size_t cap, const char *key, const char *value, const char *what)
{
    snprintf(why, cap, "%s = %s: %s", key, value, what);
    return -1;
}

int clt__gemm_tuning_apply(const clt_context *ctx, const clt__tuning_entries *e, clt__tuning *t,
                           char *why, size_t cap)
{
    clt__gemm_rule rule = *clt__gemm_rule_builtin(ctx);
    clt__gemm_table tab = *clt__gemm_table_builtin(ctx);
    int rule_keys = 0, table_keys = 0;
    unsigned tiled_seen = 0;
    clt__gemm_tiled_cfg tiled[CLT_GEMM_MAX_TILED_CFGS];
    char inner[200];
    for (int i = 0; i < e->n; i++) {
        const char *k = e->kv[i].key, *v = e->kv[i].value;
        if (strncmp(k, "gemm.", 5) != 0)
            continue;
        const char *name = k + 5;
        int iv[7];
        double d;
        if (!strcmp(name, "clblast_min_dim")) {
            if (parse_ints(v, iv, 1, 0, 2147483647L) != 1)
                return fail(why, cap, k, v, "want an integer in 0 .. 2^31-1");
            rule.clblast_min_dim = iv[0];
            rule_keys++;
        } else if (!strcmp(name, "clblast_min_flop")) {
            if (parse_number(v, 0.0, 1e18, &d) != 0)
                return fail(why, cap, k, v, "want a number in 0 .. 1e18");
            rule.clblast_min_flop = d;
            rule_keys++;
        } else if (!strcmp(name, "prefer_cpu")) {
            if (parse_ints(v, iv, 1, 0, 1) != 1)
                return fail(why, cap, k, v, "want 0 or 1");
            tab.prefer_cpu = iv[0];
            table_keys++;
        } else if (!strncmp(name, "tiled.", 6)) {
            int idx = name[6] - '0';
            if (name[7] || idx < 0 || idx >= CLT_GEMM_MAX_TILED_CFGS)
                return fail(why, cap, k, v, "unknown key (tiled.0 .. tiled.3)");
            if (parse_ints(v, iv, 7, 0, 1024) != 7)
                return fail(why, cap, k, v, "want 7 integers MWG NWG KWG MDIMC NDIMC VW DB");
            clt__gemm_tiled_cfg c = {iv[0], iv[1], iv[2], iv[3], iv[4], iv[5], iv[6]};
            if (!clt__gemm_tiled_cfg_ok(ctx, &c, inner, sizeof inner))
                return fail(why, cap, k, v, inner);
            tiled[idx] = c;
            tiled_seen |= 1u << idx;
            table_keys++;
        } else if (!strcmp(name, "cpu")) {
            if (parse_ints(v, iv, 3, 1, 4096) != 3)
                return fail(why, cap, k, v, "want 3 integers RPI NV LOCAL");
            clt__gemm_cpu_cfg c = {iv[0], iv[1], iv[2]};
            if (!clt__gemm_cpu_cfg_ok(ctx, &c, inner, sizeof inner))
                return fail(why, cap, k, v, inner);
            tab.cpu = c;
            table_keys++;
        } else if (!strcmp(name, "small") || !strcmp(name, "gemv")) {
            int gemv = name[0] == 'g';
            if (parse_ints(v, iv, 2, 1, 4096) != 2 || !pair_ok(ctx, iv, gemv))
                return fail(why, cap, k, v, "want 2 local sizes whose product the device allows");
            if (gemv) {
                tab.gemv_f = iv[0];
                tab.gemv_s = iv[1];
            } else {
                tab.small_lx = iv[0];
                tab.small_ly = iv[1];
            }
            table_keys++;
        } else if (!strcmp(name, "small_volume")) {
            if (parse_number(v, 0.0, 1e15, &d) != 0)
                return fail(why, cap, k, v, "want a number in 0 .. 1e15");
            tab.small_volume = d;
            table_keys++;
        } else if (!strcmp(name, "skinny")) {
            if (parse_ints(v, iv, 1, 0, 65536) != 1)
                return fail(why, cap, k, v, "want an integer in 0 .. 65536");
            tab.skinny = iv[0];
            table_keys++;
        } else {
            return fail(why, cap, k, v, "unknown gemm key");
        }
    }
    if (tiled_seen) {
        int n_tiled = 0;
        while (tiled_seen & (1u << n_tiled))
            n_tiled++;
        if (tiled_seen >> n_tiled) {
            snprintf(why, cap, "gemm.tiled.<i> must be numbered from 0 without gaps");
            return -1;
        }
        tab.n_tiled = n_tiled;
        memcpy(tab.tiled, tiled, sizeof tiled[0] * (size_t)n_tiled);
    }
    if (rule_keys) {
        rule.label = "tuning file";
        t->gemm_rule = rule;
        t->has_gemm_rule = 1;
    }
    if (table_keys) {
        tab.name = "tuning file";
        t->gemm_table = tab;
        t->has_gemm_table = 1;
    }
    return 0;
}

int clt__gemm_tuning_entries(const clt__gemm_rule *r, const clt__gemm_table *tb,
                             clt__tuning_entries *e)
{
    char v[CLT_TUNING_VALUE_MAX], k[32];
    int rc = 0;
    snprintf(v, sizeof v, "%lld", (long long)r->clblast_min_dim);
    rc |= clt__tuning_set(e, "gemm.clblast_min_dim", v);
    snprintf(v, sizeof v, "%.17g", r->clblast_min_flop);
    rc |= clt__tuning_set(e, "gemm.clblast_min_flop", v);
    snprintf(v, sizeof v, "%d", tb->prefer_cpu);
    rc |= clt__tuning_set(e, "gemm.prefer_cpu", v);
    for (int i = 0; i < tb->n_tiled; i++) {
        const clt__gemm_tiled_cfg *c = &tb->tiled[i];
        snprintf(k, sizeof k, "gemm.tiled.%d", i);
        snprintf(v, sizeof v, "%d %d %d %d %d %d %d", c->mwg, c->nwg, c->kwg, c->mdimc, c->ndimc,
                 c->vw, c->db);
        rc |= clt__tuning_set(e, k, v);
    }
    snprintf(v, sizeof v, "%d %d %d", tb->cpu.rpi, tb->cpu.nv, tb->cpu.local);
    rc |= clt__tuning_set(e, "gemm.cpu", v);
    snprintf(v, sizeof v, "%d %d", tb->small_lx, tb->small_ly);
    rc |= clt__tuning_set(e, "gemm.small", v);
    snprintf(v, sizeof v, "%d %d", tb->gemv_f, tb->gemv_s);
    rc |= clt__tuning_set(e, "gemm.gemv", v);
    snprintf(v, sizeof v, "%.17g", tb->small_volume);
    rc |= clt__tuning_set(e, "gemm.small_volume", v);
    snprintf(v, sizeof v, "%d", tb->skinny);
    rc |= clt__tuning_set(e, "gemm.skinny", v);
    return rc ? -1 : 0;
}
