/* clt_profile_write_trace: the trace ring as Chrome-trace JSON (the "JSON Object Format" that
 * chrome://tracing and Perfetto load): metadata naming two tracks, then one complete ("X") event per
 * recorded command. Written to a temporary name and renamed, so a failed write leaves nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profiler_state.h"

#define TID_KERNELS 1
#define TID_TRANSFERS 2

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\')
            fprintf(f, "\\%c", *c);
        else if (*c < 0x20)
            fprintf(f, "\\u%04x", *c);
        else
            fputc(*c, f);
    }
    fputc('"', f);
}

static void write_events(FILE *f, const clt_context *ctx, size_t n)
{
    fputs("{\"traceEvents\":[\n", f);
    fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,\"args\":{\"name\":");
    json_string(f, ctx->dev->entry->info.device_name);
    fputs("}},\n", f);
    fprintf(f, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%d,"
               "\"args\":{\"name\":\"kernels\"}},\n", TID_KERNELS);
    fprintf(f, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%d,"
               "\"args\":{\"name\":\"transfers\"}}", TID_TRANSFERS);
    /* Device clock in ns; the trace starts at the earliest enqueue it holds. */
    uint64_t origin = UINT64_MAX;
    clt__prof_span s;
    for (size_t i = 0; i < n; i++)
        if (clt__prof_trace_at(ctx, i, &s) && !s.failed && s.queued < origin)
            origin = s.queued;
    for (size_t i = 0; i < n; i++) {
        if (!clt__prof_trace_at(ctx, i, &s) || s.failed)
            continue; /* failed: no times */
        int kernel = s.kind == CLT_PROFILE_KERNEL;
        fputs(",\n{\"name\":", f);
        json_string(f, s.op);
        fprintf(f, ",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,"
                   "\"args\":{\"impl\":",
                kernel ? "kernel" : "transfer", kernel ? TID_KERNELS : TID_TRANSFERS,
                (double)(s.start - origin) / 1e3, (double)(s.end - s.start) / 1e3);
        json_string(f, s.impl);
        fprintf(f, ",\"queued_us\":%.3f", (double)(s.start - s.queued) / 1e3);
        if (!kernel)
            fprintf(f, ",\"bytes\":%llu", (unsigned long long)s.bytes);
        fputs("}}", f);
    }
    fputs("\n],\"displayTimeUnit\":\"ns\"}\n", f);
}

clt_status clt_profile_write_trace(clt_context *ctx, const char *path)
{
    CLT_PUBLIC_CALL();
    static const char who[] = "clt_profile_write_trace";
    struct clt_profiler *p = NULL;
    clt_status st = clt__prof_need(ctx, who, &p);
    if (st != CLT_SUCCESS)
        return st;
    if (!path || !*path)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: path is %s", who, path ? "empty" : "NULL");
    clt__prof_resolve(p, 0);
    size_t len = strlen(path);
    char *tmp = malloc(len + 16);
    if (!tmp)
        return clt__fail(ctx, CLT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", who);
    snprintf(tmp, len + 16, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        free(tmp);
        return clt__fail(ctx, CLT_ERR_IO, "%s: cannot create %s.tmp", who, path);
    }
    write_events(f, ctx, p->trace_count);
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        remove(tmp);
        free(tmp);
        return clt__fail(ctx, CLT_ERR_IO, "%s: cannot write %s", who, path);
    }
    free(tmp);
    return CLT_SUCCESS;
}
