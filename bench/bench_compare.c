#include "bench_compare.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_RUNS 16
#define MAX_CASES 512

typedef struct compare_table {
    char runs[MAX_RUNS][256]; /* column titles: "peer @ device (profile)", as built below */
    int nruns;
    char cases[MAX_CASES][64];
    int ncases;
    double us[MAX_CASES][MAX_RUNS]; /* 0 = not measured */
} compare_table;

/* The string value of "key" in obj (escapes decoded by the parser) into out; 1 if it is a string. */
static int json_string(const cJSON *obj, const char *key, char *out, size_t cap)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!cJSON_IsString(v) || !v->valuestring)
        return 0;
    snprintf(out, cap, "%s", v->valuestring);
    return 1;
}

static int find_or_add(char (*names)[64], int *count, int max, const char *name)
{
    for (int i = 0; i < *count; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    if (*count == max)
        return -1;
    snprintf(names[*count], 64, "%.63s", name);
    return (*count)++;
}

static int run_column(compare_table *t, const char *title)
{
    for (int i = 0; i < t->nruns; i++)
        if (strcmp(t->runs[i], title) == 0)
            return i;
    if (t->nruns == MAX_RUNS)
        return -1;
    snprintf(t->runs[t->nruns], sizeof t->runs[0], "%s", title);
    return t->nruns++;
}

/* One JSON object per line (clt-bench's and the peers' --json). Lines that are not an object with a
 * string "case" and a positive number "us" (not measured, failed, junk, truncated) are skipped. */
static int read_file(compare_table *t, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) != -1) {
        cJSON *obj = cJSON_Parse(line);
        char peer[64] = "?", device[96] = "?", profile[32] = "", name[64];
        const cJSON *us = cJSON_GetObjectItemCaseSensitive(obj, "us");
        if (!cJSON_IsObject(obj) || !json_string(obj, "case", name, sizeof name) ||
            !cJSON_IsNumber(us) || !(us->valuedouble > 0.0)) {
            cJSON_Delete(obj);
            continue;
        }
        json_string(obj, "peer", peer, sizeof peer);
        json_string(obj, "device", device, sizeof device);
        json_string(obj, "profile", profile, sizeof profile);
        char title[256]; /* peer + device + profile and separators always fit */
        if (profile[0] && strcmp(profile, "native") != 0)
            snprintf(title, sizeof title, "%s @ %s (%s)", peer, device, profile);
        else
            snprintf(title, sizeof title, "%s @ %s", peer, device);
        int col = run_column(t, title);
        int row = find_or_add(t->cases, &t->ncases, MAX_CASES, name);
        if (col >= 0 && row >= 0)
            t->us[row][col] = us->valuedouble;
        cJSON_Delete(obj);
    }
    free(line);
    fclose(f);
    return 0;
}

static void print_table(const compare_table *t, FILE *out)
{
    fprintf(out, "| case |");
    for (int r = 0; r < t->nruns; r++)
        fprintf(out, " %s (us) |", t->runs[r]);
    fprintf(out, " fastest | by |\n| --- |");
    for (int r = 0; r < t->nruns; r++)
        fprintf(out, " ---: |");
    fprintf(out, " --- | ---: |\n");
    for (int c = 0; c < t->ncases; c++) {
        int best = -1, second = -1;
        for (int r = 0; r < t->nruns; r++) {
            double v = t->us[c][r];
            if (v <= 0)
                continue;
            if (best < 0 || v < t->us[c][best]) {
                second = best;
                best = r;
            } else if (second < 0 || v < t->us[c][second]) {
                second = r;
            }
        }
        fprintf(out, "| %s |", t->cases[c]);
        for (int r = 0; r < t->nruns; r++) {
            if (t->us[c][r] > 0)
                fprintf(out, " %.2f |", t->us[c][r]);
            else
                fprintf(out, " - |");
        }
        if (best >= 0 && second >= 0)
            fprintf(out, " %s | %.2fx |\n", t->runs[best], t->us[c][second] / t->us[c][best]);
        else
            fprintf(out, " %s | |\n", best >= 0 ? t->runs[best] : "-");
    }
}

/* Gnuplot input: one row per case measured by at least one run, one column per run ("-" when
 * missing), then a script drawing grouped bars on a log axis (sizes span decades). */
static int draw_png(const compare_table *t, const char *png)
{
    char data[] = "/tmp/clt-compare-XXXXXX";
    int fd = mkstemp(data);
    if (fd < 0) {
        perror("clt-bench: temp file");
        return -1;
    }
    FILE *d = fdopen(fd, "w");
    for (int c = 0; c < t->ncases; c++) {
        fprintf(d, "\"%s\"", t->cases[c]);
        for (int r = 0; r < t->nruns; r++)
            t->us[c][r] > 0 ? fprintf(d, " %g", t->us[c][r]) : fprintf(d, " -");
        fputc('\n', d);
    }
    fclose(d);
    FILE *g = popen("gnuplot", "w");
    if (!g) {
        fprintf(stderr, "clt-bench: cannot run gnuplot (apt-get install gnuplot-nox)\n");
        remove(data);
        return -1;
    }
    int width = 300 + 28 * t->ncases;
    fprintf(g, "set terminal pngcairo noenhanced size %d,720 font 'sans,9'\nset output '%s'\nset bmargin 11\nset rmargin 8\n", width, png);
    fprintf(g, "set datafile missing '-'\nset style data histograms\nset style histogram clustered gap 1\n"
               "set style fill solid 0.8 border -1\nset logscale y\nset ylabel 'time per op (us), log scale'\n"
               "set grid ytics\nset xtics rotate by -60 scale 0 font 'sans,8'\nset key top left\n"
               "set title 'median time per op: lower is better'\nplot ");
    for (int r = 0; r < t->nruns; r++)
        fprintf(g, "%s'%s' using %d:xtic(1) title '%s'", r ? ", " : "", data, r + 2, t->runs[r]);
    fputc('\n', g);
    int rc = pclose(g);
    remove(data);
    if (rc != 0) {
        fprintf(stderr, "clt-bench: gnuplot failed (status %d)\n", rc);
        return -1;
    }
    return 0;
}

int bench_compare(int nfiles, char *const *files, const char *png, FILE *out)
{
    compare_table *t = calloc(1, sizeof *t);
    if (!t) {
        fprintf(stderr, "clt-bench: out of host memory\n");
        return -1;
    }
    int rc = 0;
    for (int i = 0; i < nfiles && rc == 0; i++)
        rc = read_file(t, files[i]);
    if (rc == 0)
        print_table(t, out);
    if (rc == 0 && png)
        rc = draw_png(t, png);
    free(t);
    return rc;
}
