/* Parser of NVIDIA build logs (ptxas -v lines) into per-kernel resource rows; see nv_resources.h.
 * The forms it reads (ptxas 12/13, NVIDIA OpenCL driver 580):
 *   ptxas info    : Compiling entry function 'conv_im2col' for 'sm_90a'
 *   ptxas info    : Function properties for conv_im2col
 *   ptxas         .     48 bytes stack frame, 12 bytes spill stores, 12 bytes spill loads
 *   ptxas info    : Used 32 registers, used 1 barriers, 8192 bytes smem, 400 bytes cmem[0]
 * Items of the last two may be missing or in another order (older ptxas prints no barriers, kernels
 * without shared memory no smem); unknown items are skipped, unknown ptxas lines ignored. */
#include "tools/nv_resources.h"

#include <stdlib.h>
#include <string.h>

#define COUNT_MAX 1000000000000L /* no resource of a kernel is near a terabyte: larger is garbage */

void clt__nv_table_init(clt__nv_table *t)
{
    memset(t, 0, sizeof *t);
    t->variant = -1;
    t->props_row = -1;
}

void clt__nv_table_free(clt__nv_table *t)
{
    free(t->rows);
    clt__nv_table_init(t);
}

static int name_char(char c, int program)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
        c == '$' || c == '.')
        return 1;
    return program && (c == ':' || c == '-' || c == '+' || c == '/');
}

/* Copies [s, s+n) into dst if it is a plausible name (bounded, no control or quote characters:
 * the table is printed to a terminal). */
static int copy_name(char *dst, size_t cap, const char *s, size_t n, int program)
{
    if (n == 0 || n >= cap)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (!name_char(s[i], program))
            return -1;
    memcpy(dst, s, n);
    dst[n] = '\0';
    return 0;
}

void clt__nv_begin_variant(clt__nv_table *t, int index, const char *program, int failed)
{
    t->variant = index;
    t->program[0] = '\0';
    if (program && copy_name(t->program, sizeof t->program, program, strlen(program), 1) != 0)
        strcpy(t->program, "?");
    t->props_row = -1;
    t->variants++;
    t->build_failures += failed != 0;
}

static const char *skip_spaces(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    return p;
}

static int starts(const char *p, const char *end, const char *word)
{
    size_t n = strlen(word);
    return (size_t)(end - p) >= n && !memcmp(p, word, n);
}

static int contains(const char *p, const char *end, const char *word)
{
    for (; p < end; p++)
        if (starts(p, end, word))
            return 1;
    return 0;
}

/* A decimal count in [0, COUNT_MAX] at *pp (spaces skipped first); advances *pp. -1 when absent. */
static long count_at(const char **pp, const char *end)
{
    const char *p = skip_spaces(*pp, end);
    if (p == end || *p < '0' || *p > '9')
        return -1;
    long v = 0;
    while (p < end && *p >= '0' && *p <= '9') {
        v = v * 10 + (*p - '0');
        if (v > COUNT_MAX)
            return -1;
        p++;
    }
    *pp = p;
    return v;
}

static clt__nv_row *add_row(clt__nv_table *t)
{
    if (t->n >= CLT__NV_ROWS_MAX) {
        t->out_of_memory++;
        return NULL;
    }
    if (t->n == t->cap) {
        int cap = t->cap ? t->cap * 2 : 64;
        clt__nv_row *r = realloc(t->rows, (size_t)cap * sizeof *r);
        if (!r) {
            t->out_of_memory++;
            return NULL;
        }
        t->rows = r;
        t->cap = cap;
    }
    clt__nv_row *r = &t->rows[t->n++];
    memset(r, 0, sizeof *r);
    r->variant = t->variant;
    strcpy(r->program, t->program[0] ? t->program : "-");
    r->registers = r->barriers = r->smem = r->stack = r->spill_stores = r->spill_loads = -1;
    return r;
}

/* 'quoted' at p -> [*s, *s + *n), p advanced past the closing quote. */
static int quoted(const char **pp, const char *end, const char **s, size_t *n)
{
    const char *p = skip_spaces(*pp, end);
    if (p == end || *p != '\'')
        return -1;
    const char *q = memchr(p + 1, '\'', (size_t)(end - p - 1));
    if (!q)
        return -1;
    *s = p + 1;
    *n = (size_t)(q - p - 1);
    *pp = q + 1;
    return 0;
}

static int entry_line(clt__nv_table *t, const char *p, const char *end)
{
    const char *name, *arch;
    size_t nn, na;
    if (quoted(&p, end, &name, &nn) != 0)
        return 1;
    p = skip_spaces(p, end);
    if (!starts(p, end, "for") || quoted((p += 3, &p), end, &arch, &na) != 0)
        return 1;
    char kernel[CLT__NV_NAME_MAX], a[16];
    if (copy_name(kernel, sizeof kernel, name, nn, 0) != 0 || copy_name(a, sizeof a, arch, na, 0) != 0)
        return 1;
    clt__nv_row *r = add_row(t);
    if (!r)
        return 0; /* counted as out_of_memory */
    strcpy(r->kernel, kernel);
    strcpy(r->arch, a);
    t->props_row = -1;
    return 0;
}

/* "Function properties for NAME": the next stack line is NAME's; only the current kernel's counts
 * (helper functions that stayed calls get their own block, which the kernel's row must not take). */
static int props_line(clt__nv_table *t, const char *p, const char *end)
{
    p = skip_spaces(p, end);
    while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
        end--;
    char name[CLT__NV_NAME_MAX];
    if (copy_name(name, sizeof name, p, (size_t)(end - p), 0) != 0)
        return 1;
    t->props_row = t->n > 0 && !strcmp(t->rows[t->n - 1].kernel, name) ? t->n - 1 : -1;
    return 0;
}

/* Comma-separated "<N> <words>" / "Used <N> registers" items into row fields. Returns 1 when an
 * item has no count or the same field twice. */
static int items(const char *p, const char *end, clt__nv_row *r, int used_line)
{
    int bad = 0;
    while (p < end) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *e = comma ? comma : end;
        const char *q = skip_spaces(p, e);
        if (used_line && (starts(q, e, "Used") || starts(q, e, "used")))
            q += 4;
        long v = count_at(&q, e);
        q = skip_spaces(q, e);
        long *field = NULL;
        if (v < 0)
            bad = 1;
        else if (used_line && starts(q, e, "registers"))
            field = &r->registers;
        else if (used_line && starts(q, e, "barriers"))
            field = &r->barriers;
        else if (used_line && starts(q, e, "bytes smem"))
            field = &r->smem;
        else if (!used_line && starts(q, e, "bytes stack frame"))
            field = &r->stack;
        else if (!used_line && starts(q, e, "bytes spill stores"))
            field = &r->spill_stores;
        else if (!used_line && starts(q, e, "bytes spill loads"))
            field = &r->spill_loads;
        /* else: cmem[i], lmem, gmem: not in the table */
        if (field) {
            if (*field >= 0)
                bad = 1;
            else
                *field = v;
        }
        p = comma ? comma + 1 : end;
    }
    return bad;
}

int clt__nv_parse_line(clt__nv_table *t, const char *line, size_t len)
{
    const char *nul = memchr(line, '\0', len);
    const char *end = nul ? nul : line + len;
    if (end > line && end[-1] == '\r')
        end--;
    if (end - line > CLT__NV_LINE_MAX) {
        t->over_long++;
        return 1;
    }
    const char *p = skip_spaces(line, end);
    if (starts(p, end, "== ")) { /* the report's own header: "== <index> <program> <options>" */
        p += 3;
        long idx = count_at(&p, end);
        const char *prog = skip_spaces(p, end), *pe = prog;
        while (pe < end && *pe != ' ' && *pe != '\t')
            pe++;
        char name[CLT__NV_NAME_MAX];
        if (idx < 0 || idx > CLT__NV_ROWS_MAX || copy_name(name, sizeof name, prog, (size_t)(pe - prog), 1)) {
            t->malformed++;
            clt__nv_begin_variant(t, -1, NULL, 0);
            return 1;
        }
        static const char failed[] = "BUILD FAILED";
        int f = (size_t)(end - pe) >= sizeof failed - 1 && !memcmp(end - (sizeof failed - 1), failed, sizeof failed - 1);
        clt__nv_begin_variant(t, (int)idx, name, f);
        return 0;
    }
    if (!starts(p, end, "ptxas"))
        return 0; /* compiler warnings, the driver's own lines */
    p = skip_spaces(p + 5, end);
    if (starts(p, end, "info")) {
        p = skip_spaces(p + 4, end);
        if (p == end || *p != ':')
            return t->malformed++, 1;
        p++;
    } else if (p < end && *p == '.') {
        p++;
    } else {
        return 0; /* ptxas warning / error / fatal: the build status says what failed */
    }
    p = skip_spaces(p, end);
    int bad = 0;
    if (starts(p, end, "Compiling entry function"))
        bad = entry_line(t, p + 24, end);
    else if (starts(p, end, "Function properties for"))
        bad = props_line(t, p + 23, end);
    else if (starts(p, end, "Used")) {
        if (t->n == 0 || t->rows[t->n - 1].registers >= 0) /* no kernel open, or a second Used line */
            bad = 1;
        else
            bad = items(p, end, &t->rows[t->n - 1], 1);
    } else if (contains(p, end, "stack frame") || contains(p, end, "spill")) {
        if (t->props_row >= 0) {
            clt__nv_row *r = &t->rows[t->props_row];
            if (r->stack >= 0 || r->spill_stores >= 0 || r->spill_loads >= 0)
                bad = 1;
            else
                bad = items(p, end, r, 0);
            t->props_row = -1;
        }
    }
    t->malformed += bad;
    return bad;
}

void clt__nv_parse_text(clt__nv_table *t, const char *text, size_t len)
{
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl ? nl : end;
        clt__nv_parse_line(t, p, (size_t)(e - p));
        p = nl ? nl + 1 : end;
    }
}

static int spills(const clt__nv_row *r)
{
    return r->spill_stores > 0 || r->spill_loads > 0;
}

int clt__nv_kernels_with_spills(const clt__nv_table *t)
{
    int n = 0;
    for (int i = 0; i < t->n; i++)
        n += spills(&t->rows[i]);
    return n;
}

static void cell(FILE *f, long v, int width)
{
    if (v < 0)
        fprintf(f, " %*s", width, "-");
    else
        fprintf(f, " %*ld", width, v);
}

void clt__nv_print_header(FILE *f)
{
    fprintf(f, "%4s %-22s %-34s %-7s %4s %6s %5s %6s %6s\n", "#", "program", "kernel", "arch", "regs",
            "smem", "stack", "spillS", "spillL");
}

void clt__nv_print_table(FILE *f, const clt__nv_table *t)
{
    clt__nv_print_header(f);
    clt__nv_print_rows(f, t, 0, t->n);
}

void clt__nv_print_rows(FILE *f, const clt__nv_table *t, int from, int to)
{
    for (int i = from < 0 ? 0 : from; i < to && i < t->n; i++) {
        const clt__nv_row *r = &t->rows[i];
        if (r->variant >= 0)
            fprintf(f, "%4d", r->variant);
        else
            fprintf(f, "%4s", "-");
        fprintf(f, " %-22s %-34s %-7s", r->program, r->kernel, r->arch);
        cell(f, r->registers, 4);
        cell(f, r->smem, 6);
        cell(f, r->stack, 5);
        cell(f, r->spill_stores, 6);
        cell(f, r->spill_loads, 6);
        fputs(spills(r) ? "  SPILLS\n" : "\n", f);
    }
}

void clt__nv_print_summary(FILE *f, const clt__nv_table *t)
{
    fprintf(f, "nv-resources: %d variants, %d kernels, %d with spills, %d build failures", t->variants,
            t->n, clt__nv_kernels_with_spills(t), t->build_failures);
    if (t->malformed)
        fprintf(f, ", %d malformed ptxas lines", t->malformed);
    if (t->over_long)
        fprintf(f, ", %d over-long lines skipped", t->over_long);
    if (t->out_of_memory)
        fprintf(f, ", %d kernels not recorded (out of memory or over %d)", t->out_of_memory,
                CLT__NV_ROWS_MAX);
    fputc('\n', f);
}
