/* Kernel sources: cl_kernels/<folder>/<family>.cl from kernel_dir or from the copies embedded at build time,
 * with `#include "..."` lines replaced by the header text. Inlining here (rather than passing -I to
 * the compiler) keeps embedded and on-disk sources identical in behaviour and makes the source
 * string that the cache keys on complete. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program/program.h"

/* Deep enough for any sane header chain; guards the stack against a pathological tree. */
#define MAX_INCLUDE_DEPTH 32
#define MAX_INCLUDED 256

int clt__embedded_source_count(void)
{
    return clt__embedded_file_count;
}

const char *clt__embedded_source_name(int i)
{
    if (i < 0 || i >= clt__embedded_file_count)
        return NULL;
    return clt__embedded_files[i].name;
}

const clt_embedded_file *clt__embedded_source_find(const char *name)
{
    for (int i = 0; i < clt__embedded_file_count; i++)
        if (strcmp(clt__embedded_files[i].name, name) == 0)
            return &clt__embedded_files[i];
    return NULL;
}

/* The path of <family>.cl under cl_kernels/: the embedded table knows which op folder holds it
 * ("gemm/gemm_tiled.cl"); a family it does not know is looked for at the top ("x.cl"). The same path
 * serves a CLT_KERNEL_DIR tree, which mirrors cl_kernels/. */
static void family_file(const char *family, char *file, size_t cap)
{
    snprintf(file, cap, "%s.cl", family);
    size_t n = strlen(file);
    for (int i = 0; i < clt__embedded_file_count; i++) {
        const char *name = clt__embedded_files[i].name;
        size_t len = strlen(name);
        if (len > n && name[len - n - 1] == '/' && strcmp(name + len - n, file) == 0 &&
            len < cap) {
            memcpy(file, name, len + 1);
            return;
        }
    }
}

typedef struct text_buf {
    char *data;
    size_t len, cap;
} text_buf;

static int buf_append(text_buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->data, cap);
        if (!p)
            return 0;
        b->data = p;
        b->cap = cap;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 1;
}

typedef struct inliner {
    const clt_context *ctx;
    const char *kernel_dir; /* NULL or "" = embedded */
    const char *family;
    text_buf out;
    char *included[MAX_INCLUDED]; /* names already inlined, each once */
    int n_included;
} inliner;

/* Reads kernel_dir/name. 1 = read, 0 = does not exist, -1 = exists but unreadable (errno kept). */
static int read_disk(const char *dir, const char *name, char **data, size_t *len)
{
    char path[1200];
    int n = snprintf(path, sizeof path, "%s/%s", dir, name);
    if (n <= 0 || (size_t)n >= sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    char why[64];
    FILE *f = clt__fopen_regular(path, why, sizeof why); /* a FIFO there must not block us */
    if (!f)
        return errno == ENOENT || errno == ENOTDIR ? 0 : -1;
    text_buf b = {0};
    char chunk[8192];
    size_t got;
    int ok = 1;
    while (ok && (got = fread(chunk, 1, sizeof chunk, f)) > 0)
        ok = buf_append(&b, chunk, got);
    if (ferror(f) || !ok || !buf_append(&b, "", 0)) {
        int saved = ok ? EIO : ENOMEM;
        fclose(f);
        free(b.data);
        errno = saved;
        return -1;
    }
    fclose(f);
    *data = b.data;
    *len = b.len;
    return 1;
}

/* One file's text, from disk or the embedded table. *owned is set when *data must be freed. */
static int fetch(const inliner *in, const char *name, const char **data, size_t *len, char **owned)
{
    *owned = NULL;
    if (in->kernel_dir && *in->kernel_dir) {
        int r = read_disk(in->kernel_dir, name, owned, len);
        *data = *owned;
        return r;
    }
    const clt_embedded_file *e = clt__embedded_source_find(name);
    if (!e)
        return 0;
    *data = (const char *)e->data;
    *len = e->length;
    return 1;
}

/* If `line` is `#include "name"` (any spacing), copies name into buf and returns 1. */
static int parse_include(const char *line, size_t n, char *buf, size_t cap)
{
    size_t i = 0;
    while (i < n && (line[i] == ' ' || line[i] == '\t'))
        i++;
    if (i >= n || line[i++] != '#')
        return 0;
    while (i < n && (line[i] == ' ' || line[i] == '\t'))
        i++;
    if (n - i < 7 || strncmp(line + i, "include", 7) != 0)
        return 0;
    i += 7;
    while (i < n && (line[i] == ' ' || line[i] == '\t'))
        i++;
    if (i >= n || line[i++] != '"')
        return 0;
    size_t start = i;
    while (i < n && line[i] != '"')
        i++;
    if (i >= n || i == start || i - start >= cap)
        return 0;
    memcpy(buf, line + start, i - start);
    buf[i - start] = '\0';
    return 1;
}

static int already_included(const inliner *in, const char *name)
{
    for (int i = 0; i < in->n_included; i++)
        if (strcmp(in->included[i], name) == 0)
            return 1;
    return 0;
}

static clt_status inline_file(inliner *in, const char *name, const char *data, size_t len,
                              int depth);

/* Resolve `target` as C does: next to the including file first, then from the kernel root. */
static clt_status include_header(inliner *in, const char *from, const char *target, int depth)
{
    char candidates[2][512];
    int n_candidates = 0;
    const char *slash = strrchr(from, '/');
    if (slash) {
        int n = snprintf(candidates[n_candidates], sizeof candidates[0], "%.*s/%s",
                         (int)(slash - from), from, target);
        if (n > 0 && (size_t)n < sizeof candidates[0])
            n_candidates++;
    }
    snprintf(candidates[n_candidates++], sizeof candidates[0], "%s", target);

    const char *where = in->kernel_dir && *in->kernel_dir ? in->kernel_dir : "the embedded sources";
    for (int c = 0; c < n_candidates; c++) {
        const char *name = candidates[c];
        if (already_included(in, name))
            return CLT_SUCCESS;
        const char *data;
        size_t len;
        char *owned;
        int r = fetch(in, name, &data, &len, &owned);
        if (r == 0)
            continue;
        if (r < 0)
            return clt__fail(in->ctx, CLT_ERR_IO, "kernel source %s: cannot read %s/%s: %s", from,
                             where, name,
                             errno == EINVAL ? "not a regular file" : strerror(errno));
        clt_status st = inline_file(in, name, data, len, depth + 1);
        free(owned);
        return st;
    }
    return clt__fail(in->ctx, CLT_ERR_IO,
                     "kernel source %s (family '%s'): #include \"%s\" not found in %s", from,
                     in->family, target, where);
}

static clt_status inline_file(inliner *in, const char *name, const char *data, size_t len,
                              int depth)
{
    if (depth > MAX_INCLUDE_DEPTH || in->n_included >= MAX_INCLUDED)
        return clt__fail(in->ctx, CLT_ERR_IO, "kernel source %s: includes nested too deeply", name);
    in->included[in->n_included] = strdup(name);
    if (!in->included[in->n_included])
        return clt__fail(in->ctx, CLT_ERR_OUT_OF_HOST_MEMORY, "kernel source: out of host memory");
    in->n_included++;

    size_t pos = 0;
    while (pos < len) {
        const char *line = data + pos;
        const char *nl = memchr(line, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - line) + 1 : len - pos;
        char target[256];
        if (parse_include(line, n, target, sizeof target)) {
            clt_status st = include_header(in, name, target, depth);
            if (st != CLT_SUCCESS)
                return st;
            /* Headers need not end with a newline; the next line must start on its own. */
            if (in->out.len && in->out.data[in->out.len - 1] != '\n' &&
                !buf_append(&in->out, "\n", 1))
                return clt__fail(in->ctx, CLT_ERR_OUT_OF_HOST_MEMORY,
                                 "kernel source: out of host memory");
        } else if (!buf_append(&in->out, line, n)) {
            return clt__fail(in->ctx, CLT_ERR_OUT_OF_HOST_MEMORY,
                             "kernel source: out of host memory");
        }
        pos += n;
    }
    return CLT_SUCCESS;
}

static int valid_family(const char *family)
{
    if (!family || !*family || strlen(family) > 100)
        return 0;
    for (const char *p = family; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_')
            return 0;
    return 1;
}

clt_status clt__kernel_source(const clt_context *ctx, const char *family, const char *kernel_dir,
                              char **out, size_t *length)
{
    *out = NULL;
    if (length)
        *length = 0;
    if (!valid_family(family))
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT,
                         "kernel source: family '%s' is not a name of letters, digits and '_'",
                         family ? family : "(null)");
    inliner in = {.ctx = ctx, .kernel_dir = kernel_dir, .family = family};
    char file[128];
    family_file(family, file, sizeof file);
    const char *data;
    size_t len;
    char *owned;
    int r = fetch(&in, file, &data, &len, &owned);
    clt_status st = CLT_SUCCESS;
    if (r == 0 && kernel_dir && *kernel_dir)
        st = clt__fail(ctx, CLT_ERR_IO, "kernel source: %s/%s does not exist (family '%s')",
                       kernel_dir, file, family);
    else if (r == 0)
        st = clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT,
                       "kernel source: unknown family '%s' (no %s among the embedded sources)",
                       family, file);
    else if (r < 0)
        st = clt__fail(ctx, CLT_ERR_IO, "kernel source: cannot read %s/%s: %s", kernel_dir, file,
                       errno == EINVAL ? "not a regular file" : strerror(errno));
    else
        st = inline_file(&in, file, data, len, 0);
    free(owned);
    for (int i = 0; i < in.n_included; i++)
        free(in.included[i]);
    if (st == CLT_SUCCESS && !in.out.data && !buf_append(&in.out, "", 0))
        st = clt__fail(ctx, CLT_ERR_OUT_OF_HOST_MEMORY, "kernel source: out of host memory");
    if (st != CLT_SUCCESS) {
        free(in.out.data);
        return st;
    }
    *out = in.out.data;
    if (length)
        *length = in.out.len;
    return CLT_SUCCESS;
}
