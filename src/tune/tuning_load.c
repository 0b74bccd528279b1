/* Which tuning file a context uses and whether it may: the file's place, its header against the
 * device, the registered section checkers, and what clt_context_get_tuning reports.
 *
 * Only the native profile reads tuning files: a profile such as gfx902 simulates another device, so
 * values measured on the real one (NVIDIA, POCL) must not leak into it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "program/program.h"
#include "ops/conv/conv_dispatch.h"
#include "ops/gemm/gemm_dispatch.h"
#include "ops/gemm/gemm_params.h"
#include "tune/tuning_file.h"

typedef int (*section_apply_fn)(const clt_context *ctx, const clt__tuning_entries *e, clt__tuning *t,
                                char *why, size_t cap);

/* Sections whose entries are checked (any bad value rejects the whole file). A new op family adds
 * its row here ({"conv", clt__conv_tuning_apply}) and reads its values with clt__tuning_value;
 * sections not listed are kept unchecked. */
static const struct {
    const char *name;
    section_apply_fn apply;
} sections[] = {
    {"gemm", clt__gemm_tuning_apply},
    {"conv", clt__conv_tuning_apply},
    {"fft", clt__fft_tuning_apply},
};

static const char *const header_keys[] = {"device", "driver", "platform", "profile", "date",
                                            "command", "library"};
#define N_HEADER_KEYS (sizeof header_keys / sizeof header_keys[0])

/* s without leading/trailing spaces, into out (what the parser does to a value). */
static void trimmed(const char *s, char *out, size_t cap)
{
    while (*s == ' ')
        s++;
    size_t n = strlen(s);
    while (n > 0 && s[n - 1] == ' ')
        n--;
    snprintf(out, cap, "%.*s", (int)n, s);
}

void clt__tuning_default_path(const clt_context *ctx, char *buf, size_t cap)
{
    const clt_device_info *info = &ctx->dev->entry->info;
    buf[0] = '\0';
    if (!ctx->limits.cache_dir[0])
        return;
    uint64_t h = clt__hash64(info->device_name, strlen(info->device_name), 1);
    h = clt__hash64(info->driver_version, strlen(info->driver_version), h);
    h = clt__hash64(info->platform_version, strlen(info->platform_version), h);
    snprintf(buf, cap, "%s/tuning-%016llx.txt", ctx->limits.cache_dir, (unsigned long long)h);
}

int clt__tuning_header(const clt_context *ctx, clt__tuning_entries *e)
{
    const clt_device_info *info = &ctx->dev->entry->info;
    char v[CLT_TUNING_VALUE_MAX];
    int rc = 0;
    trimmed(info->device_name, v, sizeof v);
    rc |= clt__tuning_set(e, "header.device", v);
    trimmed(info->driver_version, v, sizeof v);
    rc |= clt__tuning_set(e, "header.driver", v);
    trimmed(info->platform_version, v, sizeof v);
    rc |= clt__tuning_set(e, "header.platform", v);
    rc |= clt__tuning_set(e, "header.profile", ctx->limits.profile);
    return rc ? -1 : 0;
}

/* The header against this device. Returns 0, or -1 with the reason. */
static int check_header(const clt_context *ctx, const clt__tuning_entries *e, char *why, size_t cap)
{
    for (int i = 0; i < e->n; i++) {
        const char *k = e->kv[i].key;
        if (strncmp(k, "header.", 7) != 0)
            continue;
        size_t j = 0;
        while (j < N_HEADER_KEYS && strcmp(k + 7, header_keys[j]) != 0)
            j++;
        if (j == N_HEADER_KEYS) {
            snprintf(why, cap, "unknown key %s", k);
            return -1;
        }
    }
    clt__tuning_entries *mine = calloc(1, sizeof *mine);
    if (!mine || clt__tuning_header(ctx, mine) != 0) {
        free(mine);
        snprintf(why, cap, "out of host memory");
        return -1;
    }
    static const char *const what[] = {"device", "driver", "platform", "profile"};
    int rc = 0;
    for (int j = 0; j < 4 && rc == 0; j++) {
        const char *theirs = clt__tuning_find(e, mine->kv[j].key);
        if (!theirs) {
            snprintf(why, cap, "no %s in the header", mine->kv[j].key);
            rc = -1;
        } else if (strcmp(theirs, mine->kv[j].value) != 0) {
            snprintf(why, cap, "written for %s \"%.80s\", this is \"%.80s\"", what[j], theirs,
                     mine->kv[j].value);
            rc = -1;
        }
    }
    free(mine);
    if (rc == 0 && (!clt__tuning_find(e, "header.date") || !clt__tuning_find(e, "header.command"))) {
        snprintf(why, cap, "no header.date or header.command");
        rc = -1;
    }
    return rc;
}

void clt__tuning_apply(const clt_context *ctx, const char *path, const clt__tuning_entries *e,
                       clt__tuning *t)
{
    memset(t, 0, sizeof *t);
    snprintf(t->path, sizeof t->path, "%s", path);
    char why[sizeof t->why];
    int rc = check_header(ctx, e, why, sizeof why);
    for (size_t i = 0; rc == 0 && i < sizeof sections / sizeof sections[0]; i++)
        rc = sections[i].apply(ctx, e, t, why, sizeof why);
    if (rc != 0) {
        memset(t, 0, sizeof *t);
        snprintf(t->path, sizeof t->path, "%s", path);
        t->source = CLT_TUNING_IGNORED;
        snprintf(t->why, sizeof t->why, "%s", why);
        return;
    }
    t->source = CLT_TUNING_FILE;
    t->entries = *e;
    snprintf(t->date, sizeof t->date, "%s", clt__tuning_find(e, "header.date"));
}

int clt__tuning_load(clt_context *ctx)
{
    clt__tuning *t = calloc(1, sizeof *t);
    clt__tuning_entries *e = calloc(1, sizeof *e);
    if (!t || !e) {
        free(t);
        free(e);
        return -1;
    }
    ctx->tuning = t;
    const char *env = getenv("CLT_TUNING_FILE");
    if (env && !strcmp(env, "off")) {
        snprintf(t->why, sizeof t->why, "tuning files off (CLT_TUNING_FILE=off)");
    } else {
        if (env && *env)
            snprintf(t->path, sizeof t->path, "%s", env);
        else
            clt__tuning_default_path(ctx, t->path, sizeof t->path);
        char why[sizeof t->why];
        if (!t->path[0]) {
            snprintf(t->why, sizeof t->why, "no cache directory (CLT_CACHE_DIR=off)");
        } else if (access(t->path, F_OK) != 0 && !(env && *env)) {
            snprintf(t->why, sizeof t->why, "no tuning file at %.230s", t->path);
        } else if (strcmp(ctx->limits.profile, "native") != 0) {
            t->source = CLT_TUNING_IGNORED;
            snprintf(t->why, sizeof t->why,
                     "profile %s simulates another device: built-in tables only", ctx->limits.profile);
        } else if (clt__tuning_read(t->path, e, why, sizeof why) != 0) {
            t->source = CLT_TUNING_IGNORED;
            snprintf(t->why, sizeof t->why, "%s", why);
        } else {
            char path[sizeof t->path];
            snprintf(path, sizeof path, "%s", t->path);
            clt__tuning_apply(ctx, path, e, t);
        }
    }
    free(e);
    if (t->source == CLT_TUNING_FILE)
        clt__log("tuning file %s (written %s) in force", t->path, t->date);
    else if (t->source == CLT_TUNING_IGNORED)
        clt__log("tuning file %s ignored: %s", t->path, t->why);
    return 0;
}

void clt__tuning_free(clt__tuning *t) { free(t); }

const char *clt__tuning_value(const clt_context *ctx, const char *key)
{
    if (!ctx->tuning || ctx->tuning->source != CLT_TUNING_FILE)
        return NULL;
    return clt__tuning_find(&ctx->tuning->entries, key);
}

clt_status clt_context_get_tuning(const clt_context *ctx, clt_tuning_info *info)
{
    CLT_PUBLIC_CALL();
    if (!ctx || !info)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "clt_context_get_tuning: %s is NULL",
                         ctx ? "info" : "ctx");
    memset(info, 0, sizeof *info);
    const clt__tuning *t = ctx->tuning;
    snprintf(info->builtin, sizeof info->builtin, "%s", clt__gemm_rule_builtin(ctx)->label);
    if (!t) {
        snprintf(info->reason, sizeof info->reason, "not loaded");
        return CLT_SUCCESS;
    }
    info->source = t->source;
    snprintf(info->path, sizeof info->path, "%s", t->path);
    snprintf(info->written, sizeof info->written, "%s", t->date);
    snprintf(info->reason, sizeof info->reason, "%s", t->why);
    return CLT_SUCCESS;
}
