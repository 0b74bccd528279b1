/* JSON lines and the markdown table. */
#include "bench_report.h"
#include "json_out.h"

#include <stdlib.h>
#include <string.h>


void bench_report_init(bench_report *rep, FILE *json, const char *peer, const char *device,
                       const char *profile) {
    memset(rep, 0, sizeof *rep);
    rep->json = json;
    rep->peer = peer;
    rep->device = device;
    rep->profile = profile;
}

/* Rate in its unit (GB/s or GFLOP/s) from work per op and microseconds per op. */
static double rate(const bench_result *r) {
    return r->timing.us_median > 0 ? r->work / (r->timing.us_median * 1e3) : 0.0;
}

static const char *status_word(bench_outcome o) {
    switch (o) {
    case BENCH_NOT_IMPLEMENTED: return "not_implemented";
    case BENCH_SKIPPED: return "skipped";
    case BENCH_FAILED: return "failed";
    default: return "ok";
    }
}

static void write_json(const bench_report *rep, const bench_result *r) {
    FILE *f = rep->json;
    fputs("{\"peer\":", f);
    json_out_string(f, rep->peer);
    fputs(",\"device\":", f);
    json_out_string(f, rep->device);
    fputs(",\"profile\":", f);
    json_out_string(f, rep->profile);
    fputs(",\"case\":", f);
    json_out_string(f, r->name);
    if (r->outcome == BENCH_OK) {
        fprintf(f, ",\"us\":%.3f,\"us_min\":%.3f,\"us_max\":%.3f,\"samples\":%d,\"reps\":%ld",
                r->timing.us_median, r->timing.us_min, r->timing.us_max, r->timing.samples,
                r->timing.reps);
        if (r->timing.has_split)
            fprintf(f, ",\"kernel_us\":%.3f,\"transfer_us\":%.3f,\"host_us\":%.3f,\"idle_us\":%.3f",
                    r->timing.kernel_us, r->timing.transfer_us, r->timing.host_us,
                    r->timing.idle_us);
        if (r->unit == BENCH_UNIT_BYTES)
            fprintf(f, ",\"bytes\":%.0f,\"gbps\":%.3f", r->work, rate(r));
        else if (r->unit == BENCH_UNIT_FLOPS)
            fprintf(f, ",\"flop\":%.0f,\"gflops\":%.3f", r->work, rate(r));
    } else {
        fprintf(f, ",\"status\":\"%s\"", status_word(r->outcome));
    }
    if (r->note[0]) {
        fputs(r->outcome == BENCH_FAILED ? ",\"error\":" : ",\"note\":", f);
        json_out_string(f, r->note);
    }
    fputs("}\n", f);
    fflush(f);
}

int bench_report_add(bench_report *rep, const bench_result *res) {
    if (rep->count == rep->cap) {
        int cap = rep->cap ? rep->cap * 2 : 64;
        bench_result *rows = realloc(rep->rows, (size_t)cap * sizeof *rows);
        if (!rows)
            return -1;
        rep->rows = rows;
        rep->cap = cap;
    }
    rep->rows[rep->count++] = *res;
    write_json(rep, res);
    return 0;
}

/* A note fit for one table cell: first line only, no '|'. */
static void cell_text(const char *in, char *out, size_t cap) {
    size_t n = 0;
    for (; *in && *in != '\n' && n + 1 < cap; in++)
        out[n++] = (*in == '|') ? '/' : *in;
    out[n] = '\0';
}

void bench_report_table(const bench_report *rep, FILE *out) {
    int split = 0; /* the profiler's columns, when any row has them */
    for (int i = 0; i < rep->count; i++)
        split |= rep->rows[i].outcome == BENCH_OK && rep->rows[i].timing.has_split;
    fprintf(out, "\n%s on %s (profile %s)\n\n", rep->peer, rep->device, rep->profile);
    if (split)
        fprintf(out, "| case | us | kernel_us | transfer_us | host_us | idle_us | GB/s or GFLOP/s "
                     "| note |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n");
    else
        fprintf(out, "| case | us | GB/s or GFLOP/s | note |\n| --- | ---: | ---: | --- |\n");
    for (int i = 0; i < rep->count; i++) {
        const bench_result *r = &rep->rows[i];
        char note[256];
        cell_text(r->note, note, sizeof note);
        if (r->outcome != BENCH_OK) {
            const char *word = r->outcome == BENCH_NOT_IMPLEMENTED ? "not implemented"
                               : r->outcome == BENCH_SKIPPED       ? "skipped"
                                                                   : "FAILED";
            fprintf(out, "| %s | - |%s - | %s%s%s |\n", r->name, split ? " - | - | - | - |" : "", word,
                    note[0] ? ": " : "", note);
            continue;
        }
        char rate_text[48] = "-";
        if (r->unit == BENCH_UNIT_BYTES)
            snprintf(rate_text, sizeof rate_text, "%.2f GB/s", rate(r));
        else if (r->unit == BENCH_UNIT_FLOPS)
            snprintf(rate_text, sizeof rate_text, "%.2f GFLOP/s", rate(r));
        fprintf(out, "| %s | %.2f |", r->name, r->timing.us_median);
        if (split && r->timing.has_split)
            fprintf(out, " %.2f | %.2f | %.2f | %.2f |", r->timing.kernel_us,
                    r->timing.transfer_us, r->timing.host_us, r->timing.idle_us);
        else if (split)
            fprintf(out, " - | - | - | - |");
        fprintf(out, " %s | %s |\n", rate_text, note);
    }
    fflush(out);
}

void bench_report_free(bench_report *rep) {
    free(rep->rows);
    rep->rows = NULL;
    rep->count = rep->cap = 0;
}
