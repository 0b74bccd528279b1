/* The public profiler calls (cltensor_profile.h) except the trace export: collect, rows, stats,
 * the text report, reset. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "profile/profiler_state.h"

/* The profiler of ctx, or a failure naming the call and how to turn the profiler on. */
clt_status clt__prof_need(clt_context *ctx, const char *who, struct clt_profiler **out)
{
    if (!ctx)
        return clt__fail(NULL, CLT_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", who);
    if (!ctx->prof)
        return clt__fail(ctx, CLT_ERR_UNSUPPORTED,
                         "%s: the profiler is off on this context; turn it on with CLT_PROFILE=1 or "
                         "clt_context_options.profiler = 1 when creating the context", who);
    *out = ctx->prof;
    return CLT_SUCCESS;
}

clt_status clt_profile_collect(clt_context *ctx)
{
    CLT_PUBLIC_CALL();
    struct clt_profiler *p = NULL;
    clt_status st = clt__prof_need(ctx, "clt_profile_collect", &p);
    if (st != CLT_SUCCESS)
        return st;
    cl_int err = clFinish(ctx->queue);
    clt__prof_resolve(p, 1);
    return err == CL_SUCCESS ? CLT_SUCCESS : clt__cl_fail(ctx, err, "clt_profile_collect: clFinish");
}

clt_status clt_profile_get(clt_context *ctx, clt_profile_entry *entries, size_t cap, size_t *count)
{
    CLT_PUBLIC_CALL();
    static const char who[] = "clt_profile_get";
    struct clt_profiler *p = NULL;
    clt_status st = clt__prof_need(ctx, who, &p);
    if (st != CLT_SUCCESS)
        return st;
    if (!count || (!entries && cap > 0))
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", who,
                         count ? "entries" : "count");
    clt__prof_resolve(p, 0);
    for (size_t i = 0; i < p->n_rows && i < cap; i++)
        entries[i] = p->rows[i].e;
    *count = p->n_rows;
    return CLT_SUCCESS;
}

clt_status clt_profile_get_stats(clt_context *ctx, clt_profile_stats *stats)
{
    CLT_PUBLIC_CALL();
    static const char who[] = "clt_profile_get_stats";
    struct clt_profiler *p = NULL;
    clt_status st = clt__prof_need(ctx, who, &p);
    if (st != CLT_SUCCESS)
        return st;
    if (!stats)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: stats is NULL", who);
    clt__prof_resolve(p, 0);
    *stats = (clt_profile_stats){.commands = p->commands, .pending = p->pending_count,
                                 .rows = p->n_rows, .trace_records = p->trace_count,
                                 .trace_cap = p->trace_cap, .trace_dropped = p->trace_dropped,
                                 .stalls = p->stalls};
    return CLT_SUCCESS;
}

clt_status clt_profile_reset(clt_context *ctx)
{
    CLT_PUBLIC_CALL();
    struct clt_profiler *p = NULL;
    clt_status st = clt__prof_need(ctx, "clt_profile_reset", &p);
    if (st != CLT_SUCCESS)
        return st;
    clt__prof_clear(p);
    return CLT_SUCCESS;
}

/* snprintf at the end of buf; keeps going (truncated) when full. */
typedef struct text_out {
    char *buf;
    size_t size, len;
} text_out;

static void out_printf(text_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out_printf(text_out *o, const char *fmt, ...)
{
    if (o->len >= o->size - 1)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o->buf + o->len, o->size - o->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        o->len = (size_t)n >= o->size - o->len ? o->size - 1 : o->len + (size_t)n;
}

static void out_row(text_out *o, const char *op, const char *impl, const char *kind,
                    const clt_profile_entry *e)
{
    out_printf(o, "%-24s %-28s %-8s %9llu %12.3f %12.3f %12.3f %12.3f", op, impl, kind,
               (unsigned long long)e->count, (double)e->kernel_ns / 1e3,
               (double)e->transfer_ns / 1e3, (double)e->host_ns / 1e3, (double)e->idle_ns / 1e3);
    if (e->failed)
        out_printf(o, "  (%llu failed)", (unsigned long long)e->failed);
    out_printf(o, "\n");
}

clt_status clt_profile_report(clt_context *ctx, char *buf, size_t size)
{
    CLT_PUBLIC_CALL();
    static const char who[] = "clt_profile_report";
    struct clt_profiler *p = NULL;
    clt_status st = clt__prof_need(ctx, who, &p);
    if (st != CLT_SUCCESS)
        return st;
    if (!buf || size == 0)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: %s", who,
                         buf ? "size is 0" : "buf is NULL");
    clt__prof_resolve(p, 0);
    text_out o = {buf, size, 0};
    buf[0] = '\0';
    out_printf(&o, "%-24s %-28s %-8s %9s %12s %12s %12s %12s\n", "op", "impl", "kind", "count",
               "kernel_us", "transfer_us", "host_us", "idle_us");
    clt_profile_entry total = {.count = 0};
    for (uint32_t i = 0; i < p->n_rows; i++) {
        const clt_profile_entry *e = &p->rows[i].e;
        out_row(&o, e->op, e->impl, e->kind == CLT_PROFILE_KERNEL ? "kernel" : "transfer", e);
        total.count += e->count;
        total.kernel_ns += e->kernel_ns;
        total.transfer_ns += e->transfer_ns;
        total.host_ns += e->host_ns;
        total.idle_ns += e->idle_ns;
        total.failed += e->failed;
    }
    out_row(&o, "total", "", "", &total);
    out_printf(&o, "commands %llu, pending %llu, trace %llu (cap %llu, %llu dropped), stalls %llu\n",
               (unsigned long long)p->commands, (unsigned long long)p->pending_count,
               (unsigned long long)p->trace_count, (unsigned long long)p->trace_cap,
               (unsigned long long)p->trace_dropped, (unsigned long long)p->stalls);
    return CLT_SUCCESS;
}
