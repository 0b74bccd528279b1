/* clt-tune, FFT backends: batched 1-D complex transforms (the bench's fft_batched case: 512 MiB on
 * GPUs, 32 MiB on CPU devices) timed on each backend built in (ours, VkFFT, and clFFT where its
 * radices, 2 3 5 7 11 13, take the length; not with --quick). Each length goes to its fastest
 * backend in the fft section (fft_tuning.c); the built-in choice keeps a length it runs within 1 %
 * of the fastest. Lengths not swept keep the built-in table. */
#include <stdlib.h>
#include <string.h>

#include "ops/fft/fft_plan.h"
#include "tune_sweeps.h"

/* The backends in the order they are timed (ties go to the earlier one only through the built-in
 * rule below). */
static const clt_fft_backend timed[] = {CLT_FFT_OURS, CLT_FFT_VKFFT, CLT_FFT_CLFFT};
#define N_BACKENDS ((int)(sizeof timed / sizeof timed[0]))

/* Whether `b` is timed for length n: VkFFT when built in, clFFT (not with --quick) when its radices take n. */
static int timed_for(const tune_env *env, clt_fft_backend b, int64_t n)
{
    switch (b) {
    case CLT_FFT_OURS: return 1;
    case CLT_FFT_VKFFT: return clt__fft_vkfft_available();
    case CLT_FFT_CLFFT: return !env->quick && clt__fft_largest_prime(n) <= 13;
    }
    return 0;
}

/* Median microseconds of the batched transform of length n on `backend`; -1 on failure. */
static double time_fft(tune_env *env, int64_t n, const char *backend)
{
    const bench_case bc = {"fft_batched", bench_setup_fft, {CLT_FFT_C2C, 1, n, 0, 0, 1, 1}, 0};
    char label[64];
    snprintf(label, sizeof label, "fft %lld on %s", (long long)n, backend);
    setenv("CLT_FFT_IMPL", backend, 1);
    double us = tune_time_case(env, &bc, label);
    unsetenv("CLT_FFT_IMPL");
    return us;
}

/* The backend "auto" picks first for a 1-D transform of length n without a tuning file. */
static const char *builtin_first(tune_env *env, int64_t n)
{
    clt_fft_key key;
    memset(&key, 0, sizeof key);
    key.rank = 1;
    key.n[0] = n;
    key.batch = 1;
    key.backend_forced = -1;
    clt_fft_backend order[3];
    return clt__fft_auto_order(env->ctx, &key, order) > 0 ? clt__fft_backend_name(order[0]) : "ours";
}

int tune_fft_crossover(tune_env *env)
{
    static const int64_t full[] = {64, 128, 256, 512, 1024, 2048, 4096, 8192, 85, 1000, 1536};
    static const int64_t quick[] = {256, 1024, 4096, 85, 1000};
    const int64_t *lengths = env->quick ? quick : full;
    int count = env->quick ? (int)(sizeof quick / sizeof quick[0]) : (int)(sizeof full / sizeof full[0]);
    char *saved = getenv("CLT_FFT_IMPL") ? strdup(getenv("CLT_FFT_IMPL")) : NULL;
    int64_t measured[16];
    const char *winner[16];
    int listed = 0;
    for (int i = 0; i < count; i++) {
        int64_t n = lengths[i];
        const char *first = builtin_first(env, n);
        double us[N_BACKENDS], best = -1;
        int bi = -1, fi = 0;
        printf("  %6lld", (long long)n);
        for (int b = 0; b < N_BACKENDS; b++) {
            const char *name = clt__fft_backend_name(timed[b]);
            us[b] = timed_for(env, timed[b], n) ? time_fft(env, n, name) : -1;
            if (us[b] > 0)
                printf("  %s %9.1f us", name, us[b]);
            if (us[b] > 0 && (bi < 0 || us[b] < best)) {
                best = us[b];
                bi = b;
            }
            if (!strcmp(name, first))
                fi = b;
        }
        if (bi < 0) {
            printf("  (no backend ran)\n");
            continue;
        }
        if (us[fi] > 0 && us[fi] <= 1.01 * best) /* the built-in choice keeps a tie */
            bi = fi;
        const char *chosen = clt__fft_backend_name(timed[bi]);
        printf("  -> %s%s%s%s\n", chosen, bi == fi ? "" : " (built-in: ", bi == fi ? "" : first,
               bi == fi ? "" : ")");
        fflush(stdout);
        measured[listed] = n;
        winner[listed++] = chosen;
    }
    if (saved)
        setenv("CLT_FFT_IMPL", saved, 1);
    free(saved);
    return clt__fft_tuning_entries(measured, winner, listed, env->out) == 0 ? 0 : -1;
}
