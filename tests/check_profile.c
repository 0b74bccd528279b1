/* The profiler (cltensor_profile.h): rows per (op, impl) with the right names, counts, kinds and
 * bytes for a run of a few ops (elementwise, GEMM tiled and CLBlast, a reduction, transfers both
 * ways, a device copy); each row's kernel + transfer + host time equals the sum of its commands'
 * QUEUED -> END spans; the Chrome trace is well-formed JSON with one "X" event per command; reset;
 * the bounded memory under 20000 launches; the staged transfer path. Error paths and the row cap:
 * check_profile_errors.c. Nothing here reads a clock: times are only compared with each other. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"
#include "runtime/runtime.h"
#include "util/test_util.h"

#define N_EW 1000
#define N_COPY (1 << 20)
#define GEMM_S 33
#define MAX_ROWS 64

typedef struct rows {
    clt_profile_entry e[MAX_ROWS];
    size_t n;
} rows;

static void get_rows(clt_context *ctx, rows *r)
{
    TU_OK(clt_profile_get(ctx, r->e, MAX_ROWS, &r->n));
    ck_assert_uint_le(r->n, MAX_ROWS);
}

/* The row of op whose impl starts with `prefix` ("" = any), or NULL. */
static const clt_profile_entry *find(const rows *r, const char *op, const char *prefix)
{
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->e[i].op, op) == 0 && strncmp(r->e[i].impl, prefix, strlen(prefix)) == 0)
            return &r->e[i];
    return NULL;
}

/* Sums over every row of one op. */
static void op_totals(const rows *r, const char *op, uint64_t *count, uint64_t *bytes)
{
    *count = *bytes = 0;
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->e[i].op, op) == 0) {
            *count += r->e[i].count;
            *bytes += r->e[i].bytes;
        }
}

static void gemm(clt_context *ctx, const char *impl, clt_tensor *a, clt_tensor *b, clt_tensor *c)
{
    snprintf(ctx->limits.gemm_impl, sizeof ctx->limits.gemm_impl, "%s", impl);
    TU_OK(clt_gemm(CLT_NO_TRANS, CLT_NO_TRANS, GEMM_S, GEMM_S, GEMM_S, 1.0f, a, 0, GEMM_S, b, 0,
                   GEMM_S, 0.0f, c, 0, GEMM_S, NULL));
}

/* The run of the first tests: 3 adds, 1 tiled + 2 CLBlast GEMMs, 1 sum, a write, a read, a copy. */
static void run_mix(clt_context *ctx)
{
    clt_tensor *x = tu_uniform_1d(ctx, N_EW), *y = tu_uniform_1d(ctx, N_EW);
    clt_tensor *z = tu_uniform_1d(ctx, N_EW);
    clt_tensor *ga = tu_uniform_1d(ctx, GEMM_S * GEMM_S), *gb = tu_uniform_1d(ctx, GEMM_S * GEMM_S);
    clt_tensor *gc = tu_uniform_1d(ctx, GEMM_S * GEMM_S), *s = NULL;
    clt_tensor *big = tu_uniform_1d(ctx, N_COPY), *big2 = tu_uniform_1d(ctx, N_COPY);
    TU_OK(clt_tensor_create(ctx, CLT_F32, 0, NULL, &s));
    float *host = malloc(N_EW * sizeof *host);
    tu_random_f32(host, N_EW, 0.0f, 1.0f);
    TU_OK(clt_profile_collect(ctx));
    TU_OK(clt_profile_reset(ctx));

    for (int i = 0; i < 3; i++)
        TU_OK(clt_add(x, y, z));
    gemm(ctx, "tiled", ga, gb, gc);
    gemm(ctx, "clblast", ga, gb, gc);
    gemm(ctx, "clblast", ga, gb, gc);
    TU_OK(clt_reduce(CLT_REDUCE_SUM, x, 0, NULL, 0, s));
    TU_OK(clt_tensor_write(x, host, N_EW * sizeof *host));
    TU_OK(clt_tensor_read(z, host, N_EW * sizeof *host));
    TU_OK(clt_tensor_copy(big2, big));
    TU_OK(clt_profile_collect(ctx));
    free(host);
    clt_tensor *all[] = {x, y, z, ga, gb, gc, s, big, big2};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        clt_tensor_free(all[i]);
}

START_TEST(rows_name_each_op)
{
    clt_context *ctx = tu_profiled_context();
    run_mix(ctx);
    rows r;
    get_rows(ctx, &r);
    char report[8192];
    TU_OK(clt_profile_report(ctx, report, sizeof report));

    const clt_profile_entry *e = find(&r, "clt_add", "");
    ck_assert_msg(e && e->count == 3 && e->kind == CLT_PROFILE_KERNEL, "clt_add row:\n%s", report);
    ck_assert_msg(strncmp(e->impl, "clblast", 7) && e->impl[0], "clt_add impl \"%s\"", e->impl);
    e = find(&r, "clt_gemm", "gemm_");
    ck_assert_msg(e && e->count == 1 && e->kind == CLT_PROFILE_KERNEL, "tiled GEMM row:\n%s", report);
    e = find(&r, "clt_gemm", "clblast:sgemm");
    ck_assert_msg(e && e->count == 2 && e->kind == CLT_PROFILE_KERNEL, "CLBlast row:\n%s", report);
    uint64_t count, bytes;
    op_totals(&r, "clt_gemm", &count, &bytes);
    ck_assert_msg(count == 3, "clt_gemm: %llu commands\n%s", (unsigned long long)count, report);
    e = find(&r, "clt_reduce", "");
    ck_assert_msg(e != NULL, "no clt_reduce row:\n%s", report);
    for (size_t i = 0; i < r.n; i++)
        if (strcmp(r.e[i].op, "clt_reduce") == 0 && r.e[i].kind == CLT_PROFILE_KERNEL)
            ck_assert_uint_eq(r.e[i].count, 1);

    /* Transfers: bytes counted once per transfer, whichever path (map/unmap or copies) it took. */
    op_totals(&r, "clt_tensor_write", &count, &bytes);
    ck_assert_msg(count >= 1 && bytes == N_EW * sizeof(float), "write rows:\n%s", report);
    op_totals(&r, "clt_tensor_read", &count, &bytes);
    ck_assert_msg(count >= 1 && bytes == N_EW * sizeof(float), "read rows:\n%s", report);
    e = find(&r, "clt_tensor_copy", "copy");
    ck_assert_msg(e && e->count == 1 && e->bytes == (uint64_t)N_COPY * sizeof(float), "copy:\n%s",
                  report);
    /* A transfer-only op has transfer time and no kernel time. */
    ck_assert_uint_eq(e->kernel_ns, 0);
    ck_assert_uint_gt(e->transfer_ns, 0);
    for (size_t i = 0; i < r.n; i++) {
        ck_assert_msg(r.e[i].failed == 0, "%s/%s failed", r.e[i].op, r.e[i].impl);
        if (r.e[i].kind == CLT_PROFILE_KERNEL)
            ck_assert_msg(r.e[i].transfer_ns == 0 && r.e[i].bytes == 0, "%s", r.e[i].impl);
        else
            ck_assert_msg(r.e[i].kernel_ns == 0, "%s/%s", r.e[i].op, r.e[i].impl);
    }
    ck_assert_msg(strstr(report, "clt_gemm") && strstr(report, "total"), "%s", report);
    tu_context_free(ctx);
}
END_TEST

/* kernel + transfer + host of each row = the sum of QUEUED -> END of its recorded commands; kernel +
 * transfer + idle over all rows = first START -> last END (the device timeline of the run). */
START_TEST(split_adds_up_to_spans)
{
    clt_context *ctx = tu_profiled_context();
    run_mix(ctx);
    rows r;
    get_rows(ctx, &r);
    clt_profile_stats st;
    TU_OK(clt_profile_get_stats(ctx, &st));
    ck_assert_uint_eq(st.trace_dropped, 0);
    ck_assert_uint_eq(st.pending, 0);
    uint64_t all = 0, busy_idle = 0;
    for (size_t i = 0; i < r.n; i++) {
        all += r.e[i].count;
        busy_idle += r.e[i].kernel_ns + r.e[i].transfer_ns + r.e[i].idle_ns;
    }
    ck_assert_uint_eq(st.commands, all);
    ck_assert_uint_eq(st.trace_records, all);
    for (size_t i = 0; i < r.n; i++) {
        const clt_profile_entry *e = &r.e[i];
        uint64_t spans = 0, n = 0;
        clt__prof_span s;
        for (size_t k = 0; clt__prof_trace_at(ctx, k, &s); k++) {
            if (strcmp(s.op, e->op) || strcmp(s.impl, e->impl))
                continue;
            ck_assert(s.queued <= s.start && s.start <= s.end);
            spans += s.end - s.queued;
            n++;
        }
        ck_assert_uint_eq(n, e->count);
        ck_assert_msg(e->kernel_ns + e->transfer_ns + e->host_ns == spans,
                      "%s/%s: kernel %llu + transfer %llu + host %llu != spans %llu", e->op, e->impl,
                      (unsigned long long)e->kernel_ns, (unsigned long long)e->transfer_ns,
                      (unsigned long long)e->host_ns, (unsigned long long)spans);
    }
    clt__prof_span first, last;
    ck_assert(clt__prof_trace_at(ctx, 0, &first) && clt__prof_trace_at(ctx, all - 1, &last));
    ck_assert_msg(busy_idle == last.end - first.start,
                  "kernel + transfer + idle %llu ns, timeline %llu ns (commands overlap?)",
                  (unsigned long long)busy_idle, (unsigned long long)(last.end - first.start));
    tu_context_free(ctx);
}
END_TEST

/* Minimal JSON well-formedness: strings closed, {} and [] balanced and properly nested. */
static int json_balanced(const char *s)
{
    char stack[64];
    int depth = 0, in_string = 0;
    for (; *s; s++) {
        if (in_string) {
            if (*s == '\\' && s[1])
                s++;
            else if (*s == '"')
                in_string = 0;
        } else if (*s == '"') {
            in_string = 1;
        } else if (*s == '{' || *s == '[') {
            if (depth == (int)sizeof stack)
                return 0;
            stack[depth++] = *s;
        } else if (*s == '}' || *s == ']') {
            if (depth == 0 || stack[--depth] != (*s == '}' ? '{' : '['))
                return 0;
        }
    }
    return depth == 0 && !in_string;
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)size + 1);
    ck_assert_uint_eq(fread(text, 1, (size_t)size, f), (size_t)size);
    text[size] = '\0';
    fclose(f);
    return text;
}

static size_t count_of(const char *text, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

START_TEST(trace_is_json_with_one_event_per_command)
{
    clt_context *ctx = tu_profiled_context();
    run_mix(ctx);
    clt_profile_stats st;
    TU_OK(clt_profile_get_stats(ctx, &st));
    char *dir = tu_make_temp_dir();
    char path[512];
    snprintf(path, sizeof path, "%s/trace.json", dir);
    TU_OK(clt_profile_write_trace(ctx, path));
    char *text = read_file(path);
    ck_assert_msg(strncmp(text, "{\"traceEvents\":[", 16) == 0, "%.80s", text);
    ck_assert_msg(json_balanced(text), "trace is not balanced JSON");
    ck_assert_uint_eq(count_of(text, "\"ph\":\"X\""), st.trace_records);
    ck_assert_uint_eq(count_of(text, "\"name\":\"clt_gemm\""), 3);
    ck_assert_uint_eq(count_of(text, "\"cat\":\"kernel\"") + count_of(text, "\"cat\":\"transfer\""),
                      st.trace_records);
    free(text);

    /* A directory that does not exist: CLT_ERR_IO, nothing written. */
    snprintf(path, sizeof path, "%s/no/such/dir/trace.json", dir);
    TU_EXPECT_STATUS(clt_profile_write_trace(ctx, path), CLT_ERR_IO);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_profile_write_trace");
    tu_remove_dir(dir);
    free(dir);
    tu_context_free(ctx);
}
END_TEST

START_TEST(reset_empties)
{
    clt_context *ctx = tu_profiled_context();
    run_mix(ctx);
    TU_OK(clt_profile_reset(ctx));
    rows r;
    get_rows(ctx, &r);
    ck_assert_uint_eq(r.n, 0);
    clt_profile_stats st;
    TU_OK(clt_profile_get_stats(ctx, &st));
    ck_assert(st.commands == 0 && st.pending == 0 && st.trace_records == 0 && st.rows == 0);
    /* Work after the reset is recorded alone. */
    clt_tensor *x = tu_uniform_1d(ctx, 17);
    TU_OK(clt_profile_reset(ctx));
    TU_OK(clt_add(x, x, x));
    TU_OK(clt_profile_collect(ctx));
    get_rows(ctx, &r);
    ck_assert_uint_eq(r.n, 1);
    ck_assert_str_eq(r.e[0].op, "clt_add");
    ck_assert_uint_eq(r.e[0].count, 1);
    clt_tensor_free(x);
    tu_context_free(ctx);
}
END_TEST

/* 20000 launches with a trace cap of 1000: the rows count all, the trace keeps the latest 1000, and
 * no more than CLT_PROFILE_MAX_PENDING events ever wait. */
START_TEST(many_commands_stay_bounded)
{
    enum { LAUNCHES = 20000, CAP = 1000 };
    clt_context *ctx = tu_profiled_context();
    clt_tensor *x = tu_uniform_1d(ctx, 1);
    clt__prof_set_trace_cap(ctx, CAP);
    TU_OK(clt_profile_collect(ctx));
    TU_OK(clt_profile_reset(ctx));
    for (int i = 0; i < LAUNCHES; i++)
        TU_OK(clt_add(x, x, x));
    TU_OK(clt_profile_collect(ctx));
    rows r;
    get_rows(ctx, &r);
    ck_assert_uint_eq(r.n, 1);
    ck_assert_uint_eq(r.e[0].count, LAUNCHES);
    clt_profile_stats st;
    TU_OK(clt_profile_get_stats(ctx, &st));
    ck_assert_uint_eq(st.commands, LAUNCHES);
    ck_assert_uint_eq(st.trace_cap, CAP);
    ck_assert_uint_eq(st.trace_records, CAP);
    ck_assert_uint_eq(st.trace_dropped, LAUNCHES - CAP);
    ck_assert_uint_le(clt__prof_pending_peak(ctx), CLT_PROFILE_MAX_PENDING);
    /* The trace keeps the latest commands, in queue order. */
    clt__prof_span prev, s;
    ck_assert(clt__prof_trace_at(ctx, 0, &prev));
    for (size_t k = 1; clt__prof_trace_at(ctx, k, &s); k++) {
        ck_assert_uint_le(prev.queued, s.queued);
        prev = s;
    }
    clt_tensor_free(x);
    tu_context_free(ctx);
}
END_TEST

/* The staging path of discrete devices (forced here on a zero-copy device) and asynchronous reads. */
START_TEST(staged_transfers)
{
    clt_context *ctx = tu_profiled_context();
    ctx->limits.zero_copy = 0;
    const int64_t n = 3 * 1024 * 1024 + 5; /* more than one staging chunk */
    clt_tensor *x = tu_uniform_1d(ctx, n);
    float *host = malloc((size_t)n * sizeof *host);
    tu_random_f32(host, (size_t)n, 0.0f, 1.0f);
    TU_OK(clt_profile_collect(ctx));
    TU_OK(clt_profile_reset(ctx));
    TU_OK(clt_tensor_write(x, host, (size_t)n * sizeof *host));
    TU_OK(clt_tensor_read(x, host, (size_t)n * sizeof *host));
    clt_future *f = NULL;
    TU_OK(clt_tensor_read_async(x, 0, 3, &f));
    TU_OK(clt_future_wait(f));
    clt_future_free(f);
    TU_OK(clt_profile_collect(ctx));
    rows r;
    get_rows(ctx, &r);
    const clt_profile_entry *w = find(&r, "clt_tensor_write", "write");
    const clt_profile_entry *rd = find(&r, "clt_tensor_read", "read");
    const clt_profile_entry *a = find(&r, "clt_tensor_read_async", "read");
    ck_assert(w && rd && a);
    ck_assert_uint_eq(w->bytes, (uint64_t)n * sizeof(float));
    ck_assert_uint_eq(rd->bytes, (uint64_t)n * sizeof(float));
    ck_assert_uint_ge(w->count, 1);
    ck_assert_uint_eq(a->count, 1);
    ck_assert_uint_eq(a->bytes, 3 * sizeof(float));
    ck_assert(w->kind == CLT_PROFILE_TRANSFER && w->kernel_ns == 0);
    free(host);
    clt_tensor_free(x);
    tu_context_free(ctx);
}
END_TEST


Suite *profile_suite(void)
{
    Suite *s = suite_create("profile");
    TCase *tc = tcase_create("profile");
    tcase_add_test(tc, rows_name_each_op);
    tcase_add_test(tc, split_adds_up_to_spans);
    tcase_add_test(tc, trace_is_json_with_one_event_per_command);
    tcase_add_test(tc, reset_empties);
    tcase_add_test(tc, many_commands_stay_bounded);
    tcase_add_test(tc, staged_transfers);
    suite_add_tcase(s, tc);
    return s;
}
