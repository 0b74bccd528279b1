/* The tuning file's text format: parse, format, read, write (see tuning_file.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "program/program.h"
#include "tune/tuning_file.h"

#define MAGIC "cltensor-tuning "
#define CHECKSUM_KEY "checksum = "
#define CHECKSUM_SEED 0x74756e696e67ull /* "tuning" */

static int key_ok(const char *k, size_t n)
{
    if (n == 0 || n >= CLT_TUNING_KEY_MAX || k[0] == '.' || k[n - 1] == '.')
        return 0;
    int dot = 0;
    for (size_t i = 0; i < n; i++) {
        char c = k[i];
        if (c == '.')
            dot = 1;
        else if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
            return 0;
    }
    return dot;
}

static int value_ok(const char *v, size_t n)
{
    if (n >= CLT_TUNING_VALUE_MAX)
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f)
            return 0;
    return 1;
}

const char *clt__tuning_find(const clt__tuning_entries *e, const char *key)
{
    for (int i = 0; i < e->n; i++)
        if (!strcmp(e->kv[i].key, key))
            return e->kv[i].value;
    return NULL;
}

int clt__tuning_set(clt__tuning_entries *e, const char *key, const char *value)
{
    size_t vn = strlen(value);
    while (vn > 0 && value[vn - 1] == ' ')
        vn--;
    while (vn > 0 && *value == ' ')
        value++, vn--;
    if (!key_ok(key, strlen(key)) || !value_ok(value, vn))
        return -1;
    int i = 0;
    while (i < e->n && strcmp(e->kv[i].key, key))
        i++;
    if (i == e->n) {
        if (e->n == CLT_TUNING_MAX_ENTRIES)
            return -1;
        e->n++;
        snprintf(e->kv[i].key, sizeof e->kv[i].key, "%s", key);
    }
    memcpy(e->kv[i].value, value, vn);
    e->kv[i].value[vn] = '\0';
    return 0;
}

/* One "key = value" line (no newline) into e. */
static int parse_entry(const char *line, size_t n, clt__tuning_entries *e, char *why, size_t cap)
{
    const char *eq = memchr(line, '=', n);
    if (!eq) {
        snprintf(why, cap, "not a \"key = value\" line");
        return -1;
    }
    size_t kn = (size_t)(eq - line);
    while (kn > 0 && line[kn - 1] == ' ')
        kn--;
    char key[CLT_TUNING_KEY_MAX];
    if (!key_ok(line, kn)) {
        snprintf(why, cap, "bad key \"%.*s\" (want section.name in [a-z0-9_.])", (int)(kn < 40 ? kn : 40),
                 line);
        return -1;
    }
    memcpy(key, line, kn);
    key[kn] = '\0';
    const char *v = eq + 1;
    size_t vn = n - (size_t)(v - line);
    while (vn > 0 && *v == ' ')
        v++, vn--;
    char value[CLT_TUNING_VALUE_MAX];
    if (!value_ok(v, vn)) {
        snprintf(why, cap, "bad value of %s (too long or not printable)", key);
        return -1;
    }
    memcpy(value, v, vn);
    value[vn] = '\0';
    if (clt__tuning_find(e, key)) {
        snprintf(why, cap, "%s given twice", key);
        return -1;
    }
    if (clt__tuning_set(e, key, value) != 0) {
        snprintf(why, cap, "more than %d entries", CLT_TUNING_MAX_ENTRIES);
        return -1;
    }
    return 0;
}

static int parse_checksum(const char *text, size_t at, size_t n, char *why, size_t cap)
{
    const char *hex = text + at + strlen(CHECKSUM_KEY);
    size_t hn = n - strlen(CHECKSUM_KEY);
    char buf[17];
    if (hn != 16) {
        snprintf(why, cap, "malformed checksum line");
        return -1;
    }
    memcpy(buf, hex, 16);
    buf[16] = '\0';
    char *end;
    unsigned long long want = strtoull(buf, &end, 16);
    if (*end || buf[0] == '-' || buf[0] == '+' || buf[0] == ' ') {
        snprintf(why, cap, "malformed checksum line");
        return -1;
    }
    if (clt__hash64(text, at, CHECKSUM_SEED) != (uint64_t)want) {
        snprintf(why, cap, "checksum mismatch (edited or damaged)");
        return -1;
    }
    return 0;
}

int clt__tuning_parse(const char *text, size_t len, clt__tuning_entries *out, char *why, size_t cap)
{
    out->n = 0;
    if (len == 0 || len > CLT_TUNING_MAX_BYTES || memchr(text, '\0', len)) {
        snprintf(why, cap, len == 0 ? "empty file" : "not a text file of at most %d bytes",
                 CLT_TUNING_MAX_BYTES);
        return -1;
    }
    if (memchr(text, '\r', len)) {
        /* Said first: otherwise "1\r" reads as "format version 1, this library reads 1". */
        snprintf(why, cap, "CR line endings (a DOS/Windows-converted file); the format is LF only");
        return -1;
    }
    size_t pos = 0;
    int line_no = 0, checked = 0;
    while (pos < len) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        if (!nl) {
            snprintf(why, cap, "line %d: no newline at the end (truncated?)", line_no + 1);
            return -1;
        }
        size_t n = (size_t)(nl - (text + pos));
        const char *line = text + pos;
        line_no++;
        if (checked) {
            snprintf(why, cap, "line %d: text after the checksum", line_no);
            return -1;
        }
        if (line_no == 1) {
            size_t mn = strlen(MAGIC);
            if (n <= mn || memcmp(line, MAGIC, mn) != 0) {
                snprintf(why, cap, "not a cltensor tuning file (no \"cltensor-tuning\" line)");
                return -1;
            }
            char ver[16];
            snprintf(ver, sizeof ver, "%.*s", (int)(n - mn < 15 ? n - mn : 15), line + mn);
            if (strcmp(ver, "1") != 0) {
                snprintf(why, cap, "format version %s, this library reads %d", ver,
                         CLT_TUNING_FORMAT_VERSION);
                return -1;
            }
        } else if (n >= strlen(CHECKSUM_KEY) && !memcmp(line, CHECKSUM_KEY, strlen(CHECKSUM_KEY))) {
            if (parse_checksum(text, pos, n, why, cap) != 0)
                return -1;
            checked = 1;
        } else if (n > 0 && line[0] != '#') {
            char inner[200];
            if (parse_entry(line, n, out, inner, sizeof inner) != 0) {
                snprintf(why, cap, "line %d: %s", line_no, inner);
                return -1;
            }
        }
        pos += n + 1;
    }
    if (!checked) {
        snprintf(why, cap, "no checksum line (truncated?)");
        return -1;
    }
    return 0;
}

char *clt__tuning_format(const clt__tuning_entries *e)
{
    size_t cap = 256 + (size_t)e->n * (CLT_TUNING_KEY_MAX + CLT_TUNING_VALUE_MAX + 4);
    char *s = malloc(cap);
    if (!s)
        return NULL;
    size_t used = (size_t)snprintf(s, cap, "%s%d\n# written by clt-tune; edits break the checksum, "
                                   "and a file that does not check is ignored\n",
                                   MAGIC, CLT_TUNING_FORMAT_VERSION);
    for (int i = 0; i < e->n; i++)
        used += (size_t)snprintf(s + used, cap - used, "%s = %s\n", e->kv[i].key, e->kv[i].value);
    snprintf(s + used, cap - used, "%s%016llx\n", CHECKSUM_KEY,
             (unsigned long long)clt__hash64(s, used, CHECKSUM_SEED));
    return s;
}

/* mkdir -p of path's directory. */
static void make_parent_dirs(const char *path)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        mkdir(dir, 0700); /* failures show up when the file is created */
        *p = '/';
    }
}

int clt__tuning_write(const char *path, const clt__tuning_entries *e, char *why, size_t cap)
{
    char *text = clt__tuning_format(e);
    if (!text) {
        snprintf(why, cap, "out of host memory");
        return -1;
    }
    char temp[1100];
    snprintf(temp, sizeof temp, "%s.%ld.tmp", path, (long)getpid());
    make_parent_dirs(path);
    FILE *f = fopen(temp, "wx");
    int ok = f != NULL;
    if (f) {
        ok = fputs(text, f) >= 0;
        ok = (fclose(f) == 0) && ok;
    }
    if (ok && rename(temp, path) != 0)
        ok = 0;
    if (!ok) {
        snprintf(why, cap, "cannot write %s: %s", f ? path : temp, strerror(errno));
        unlink(temp);
    }
    free(text);
    return ok ? 0 : -1;
}

int clt__tuning_read(const char *path, clt__tuning_entries *out, char *why, size_t cap)
{
    out->n = 0;
    /* A FIFO or device named by CLT_TUNING_FILE must be refused, not waited on. */
    FILE *f = clt__fopen_regular(path, why, cap);
    if (!f)
        return -1;
    char *buf = malloc(CLT_TUNING_MAX_BYTES + 1);
    if (!buf) {
        fclose(f);
        snprintf(why, cap, "out of host memory");
        return -1;
    }
    size_t n = fread(buf, 1, CLT_TUNING_MAX_BYTES + 1, f);
    int err = ferror(f);
    fclose(f);
    int rc = -1;
    if (err)
        snprintf(why, cap, "cannot read: %s", strerror(errno));
    else
        rc = clt__tuning_parse(buf, n, out, why, cap);
    free(buf);
    return rc;
}
