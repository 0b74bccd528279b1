/* Reader of the AMD ISA check's resources.tsv; see isa_report.h. */
#include "tools/isa_report.h"
#include "tools/text_file.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define NFIELDS 12
#define COUNT_MAX 999999999L

static int failf(char *err, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
    return CLT__ISA_BAD;
}

void clt__isa_report_free(clt__isa_report *r)
{
    free(r->rows);
    memset(r, 0, sizeof *r);
}

/* A count in [0, COUNT_MAX]: digits only. */
static int count_field(const char *s, long *v)
{
    if (!*s || strlen(s) > 9)
        return -1;
    long x = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        x = x * 10 + (*s - '0');
    }
    *v = x;
    return x <= COUNT_MAX ? 0 : -1;
}

/* Copies s if it fits and every character passes: identifiers (kernel), program names
 * ("expr:<label>"), options (printable ASCII, spaces allowed). */
static int text_field(char *dst, size_t cap, const char *s, int kind)
{
    size_t n = strlen(s);
    if (n == 0 || n >= cap)
        return -1;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        if (kind >= 1)
            ok |= c == ':' || c == '.' || c == '-' || c == '+' || c == '/';
        if (kind == 2)
            ok |= c >= 0x20 && c < 0x7f;
        if (!ok)
            return -1;
    }
    memcpy(dst, s, n + 1);
    return 0;
}

static int parse_row(char *line, clt__isa_row *row, const char **bad_field)
{
    static const char *names[NFIELDS] = {"index", "use", "program", "kernel", "vgpr", "sgpr", "scratch",
                                         "vgpr_spill", "sgpr_spill", "lds_bytes", "occupancy", "options"};
    char *f[NFIELDS];
    int n = 0;
    for (char *p = line;; n++) {
        if (n == NFIELDS) {
            *bad_field = "(a 13th field)";
            return -1;
        }
        f[n] = p;
        char *tab = strchr(p, '\t');
        if (!tab) {
            n++;
            break;
        }
        *tab = '\0';
        p = tab + 1;
    }
    if (n != NFIELDS) {
        *bad_field = names[n]; /* the first one missing */
        return -1;
    }
    memset(row, 0, sizeof *row);
    long idx;
    long *counts[] = {&row->vgpr, &row->sgpr, &row->scratch, &row->vgpr_spill, &row->sgpr_spill,
                      &row->lds_bytes, &row->occupancy};
    if (count_field(f[0], &idx) != 0 || idx > 1000000)
        return *bad_field = names[0], -1;
    row->index = (int)idx;
    if (!strcmp(f[1], "selected"))
        row->selected = 1;
    else if (strcmp(f[1], "compile-only") != 0)
        return *bad_field = names[1], -1;
    if (text_field(row->program, sizeof row->program, f[2], 1) != 0)
        return *bad_field = names[2], -1;
    if (text_field(row->kernel, sizeof row->kernel, f[3], 0) != 0)
        return *bad_field = names[3], -1;
    for (int i = 0; i < 7; i++)
        if (count_field(f[4 + i], counts[i]) != 0)
            return *bad_field = names[4 + i], -1;
    if (text_field(row->options, sizeof row->options, f[11], 2) != 0)
        return *bad_field = names[11], -1;
    return 0;
}

int clt__isa_report_read(const char *path, const char *target, clt__isa_report *r, char *err,
                         size_t errcap)
{
    memset(r, 0, sizeof *r);
    char *buf = NULL;
    size_t len = 0;
    int st = clt__read_text_file(path, CLT__ISA_FILE_MAX, &buf, &len, err, errcap);
    if (st == CLT__TEXT_ABSENT)
        return CLT__ISA_ABSENT;
    if (st != CLT__TEXT_OK)
        return CLT__ISA_BAD;
    snprintf(r->target, sizeof r->target, "%s", target);
    char head[64];
    snprintf(head, sizeof head, "#cltensor-isa-resources v1 %s", target);
    int lineno = 0;
    st = CLT__ISA_OK;
    for (char *p = buf; p < buf + len && st == CLT__ISA_OK; lineno++) {
        char *nl = memchr(p, '\n', (size_t)(buf + len - p));
        char *e = nl ? nl : buf + len;
        size_t n = (size_t)(e - p);
        *e = '\0';
        char *line = p;
        p = e + 1;
        if (n > 0 && line[n - 1] == '\r')
            line[--n] = '\0';
        if (n > CLT__ISA_LINE_MAX) {
            st = failf(err, errcap, "%s: line %d: %zu characters, more than %d", path, lineno + 1, n,
                       CLT__ISA_LINE_MAX);
        } else if (lineno == 0) {
            if (strcmp(line, head) != 0) {
                if (!strncmp(line, "#cltensor-isa-resources v1 ", 27))
                    st = failf(err, errcap, "%s: a report for %.20s, not %s", path, line + 27, target);
                else
                    st = failf(err, errcap, "%s: line 1: not \"%s\" (not an ISA resource report of "
                               "this version)", path, head);
            }
        } else if (n == 0 || line[0] == '#') {
            continue;
        } else {
            if (r->n == r->cap) {
                int cap = r->cap ? r->cap * 2 : 64;
                clt__isa_row *rows = realloc(r->rows, (size_t)cap * sizeof *rows);
                if (!rows) {
                    st = failf(err, errcap, "%s: out of host memory", path);
                    break;
                }
                r->rows = rows;
                r->cap = cap;
            }
            const char *field = "";
            if (parse_row(line, &r->rows[r->n], &field) != 0)
                st = failf(err, errcap, "%s: line %d: field %s missing or invalid", path, lineno + 1,
                           field);
            else
                r->n++;
        }
    }
    if (st == CLT__ISA_OK && lineno == 0)
        st = failf(err, errcap, "%s: empty", path);
    free(buf);
    if (st != CLT__ISA_OK)
        clt__isa_report_free(r);
    return st;
}

static int same_variant(const clt__isa_row *row, const clt__variant *v, const char *base)
{
    size_t b = strlen(base);
    if (strcmp(row->program, v->program) != 0 || strncmp(row->options, base, b) != 0)
        return 0;
    const char *rest = row->options + b;
    if (!*v->options)
        return !*rest;
    return rest[0] == ' ' && !strcmp(rest + 1, v->options);
}

int clt__isa_report_mark_stale(clt__isa_report *r, const clt__variant_list *l, const char *base)
{
    int stale = 0;
    for (int i = 0; i < r->n; i++) {
        int found = 0;
        for (int j = 0; j < l->n && !found; j++)
            found = same_variant(&r->rows[i], &l->v[j], base);
        r->rows[i].stale = !found;
        stale += !found;
    }
    r->missing = 0;
    for (int j = 0; j < l->n; j++) {
        int found = 0;
        for (int i = 0; i < r->n && !found; i++)
            found = same_variant(&r->rows[i], &l->v[j], base);
        r->missing += !found;
    }
    return stale;
}

void clt__isa_report_print(FILE *f, const clt__isa_report *r, const char *path)
{
    fprintf(f, "%4s %-12s %-22s %-34s %5s %5s %7s %6s %6s %6s %4s\n", "#", "use", "program", "kernel",
            "VGPR", "SGPR", "scratch", "vspill", "sspill", "LDS", "occ");
    int stale = 0, variants = 0, last = -1;
    for (int i = 0; i < r->n; i++) {
        const clt__isa_row *w = &r->rows[i];
        fprintf(f, "%4d %-12s %-22s %-34s %5ld %5ld %7ld %6ld %6ld %6ld %4ld%s\n", w->index,
                w->selected ? "selected" : "compile-only", w->program, w->kernel, w->vgpr, w->sgpr,
                w->scratch, w->vgpr_spill, w->sgpr_spill, w->lds_bytes, w->occupancy,
                w->stale ? "  STALE (the tables no longer select these options)" : "");
        stale += w->stale;
        variants += w->index != last;
        last = w->index;
    }
    fprintf(f, "isa-resources %s from %s: %d kernels of %d variants, %d stale rows, %d variants the "
            "tables select now without a row (not compiled: ISA_SCOPE=breadth, or an older report)\n",
            r->target, path, r->n, variants, stale, r->missing);
}
