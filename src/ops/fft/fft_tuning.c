/* The fft section of the tuning file: which backend "auto" puts first for a 1-D plan of a given
 * length (fft_table.c), as clt-tune's fft-crossover sweep measured it on the device:
 *   fft.ours = 85 1000            lengths whose batched transforms were fastest on our kernels
 *   fft.vkfft = 64 128 4096       ... on VkFFT
 *   fft.clfft = 1536              ... on clFFT
 * Each key optional; a length in no list keeps the built-in order. A file with another fft.* key, a
 * value that is not 1 .. CLT_FFT_TUNED_MAX lengths in 1 .. 2^31 separated by spaces, or a length in
 * two lists is rejected as a whole (tuning_load.c). A list applies to 1-D plans of every kind (the
 * sweep times complex ones); plans of rank 2 and 3 keep the built-in order: the sweep times batched
 * 1-D transforms only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/fft/fft_plan.h"
#include "tune/tuning_file.h"

static const struct {
    const char *key;
    clt_fft_backend backend;
} lists[] = {
    {"fft.ours", CLT_FFT_OURS},
    {"fft.vkfft", CLT_FFT_VKFFT},
    {"fft.clfft", CLT_FFT_CLFFT},
};
#define N_LISTS (sizeof lists / sizeof lists[0])

/* The lengths of value v into out (at most CLT_FFT_TUNED_MAX). Returns their count, or -1. */
static int parse_lengths(const char *v, int64_t *out)
{
    int count = 0;
    const char *p = v;
    while (*p) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        if (*p < '0' || *p > '9' || count == CLT_FFT_TUNED_MAX)
            return -1;
        char *end;
        long long n = strtoll(p, &end, 10);
        if ((*end && *end != ' ') || n < 1 || n > (1LL << 31))
            return -1;
        out[count++] = n;
        p = end;
    }
    return count ? count : -1;
}

int clt__fft_tuning_apply(const clt_context *ctx, const clt__tuning_entries *e, clt__tuning *t,
                          char *why, size_t cap)
{
    (void)ctx;
    (void)t; /* nothing to merge: fft_table.c reads the lists through clt__tuning_value */
    int64_t seen[N_LISTS][CLT_FFT_TUNED_MAX];
    int counts[N_LISTS] = {0};
    for (int i = 0; i < e->n; i++) {
        const char *k = e->kv[i].key, *v = e->kv[i].value;
        if (strncmp(k, "fft.", 4) != 0)
            continue;
        size_t l = 0;
        while (l < N_LISTS && strcmp(k, lists[l].key) != 0)
            l++;
        if (l == N_LISTS) {
            snprintf(why, cap, "%s = %.60s: unknown key (ours, vkfft, clfft)", k, v);
            return -1;
        }
        counts[l] = parse_lengths(v, seen[l]);
        if (counts[l] < 0) {
            snprintf(why, cap, "%s = %.60s: want 1 to %d lengths in 1 .. 2^31, separated by spaces", k,
                     v, CLT_FFT_TUNED_MAX);
            return -1;
        }
    }
    for (size_t a = 0; a < N_LISTS; a++)
        for (int i = 0; i < counts[a]; i++)
            for (size_t b = a; b < N_LISTS; b++)
                for (int j = b == a ? i + 1 : 0; j < counts[b]; j++)
                    if (seen[a][i] == seen[b][j]) {
                        snprintf(why, cap, "fft: length %lld in %s and %s", (long long)seen[a][i],
                                 lists[a].key, lists[b].key);
                        return -1;
                    }
    return 0;
}

int clt__fft_tuned_first(const clt_context *ctx, int64_t n, clt_fft_backend *backend)
{
    for (size_t l = 0; l < N_LISTS; l++) {
        const char *v = clt__tuning_value(ctx, lists[l].key);
        int64_t len[CLT_FFT_TUNED_MAX];
        int count = v ? parse_lengths(v, len) : 0;
        for (int i = 0; i < count; i++)
            if (len[i] == n) {
                *backend = lists[l].backend;
                return 1;
            }
    }
    return 0;
}

int clt__fft_tuning_entries(const int64_t *n, const char *const *backend, int count,
                            clt__tuning_entries *e)
{
    for (size_t l = 0; l < N_LISTS; l++) {
        char v[CLT_TUNING_VALUE_MAX] = "";
        size_t used = 0;
        int listed = 0;
        for (int i = 0; i < count; i++) {
            if (strcmp(backend[i], lists[l].key + 4) != 0)
                continue;
            if (listed == CLT_FFT_TUNED_MAX)
                return -1;
            int w = snprintf(v + used, sizeof v - used, "%s%lld", listed ? " " : "", (long long)n[i]);
            if (w < 0 || (size_t)w >= sizeof v - used)
                return -1;
            used += (size_t)w;
            listed++;
        }
        if (listed && clt__tuning_set(e, lists[l].key, v) != 0)
            return -1;
    }
    return 0;
}

size_t clt__fft_tuned_text(const clt_context *ctx, char *buf, size_t cap)
{
    size_t used = 0;
    for (size_t l = 0; l < N_LISTS && used < cap; l++) {
        const char *v = clt__tuning_value(ctx, lists[l].key);
        int w = v ? snprintf(buf + used, cap - used, "%s%s first for 1-D %s", used ? "; " : "",
                             clt__fft_backend_name(lists[l].backend), v)
                  : 0;
        used += w > 0 ? (size_t)w : 0;
    }
    return used < cap ? used : cap;
}
