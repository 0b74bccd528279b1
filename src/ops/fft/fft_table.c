/* The FFT backend table: which backend serves a plan under "auto", per device class: a 1-D length
 * the tuning file lists (fft_tuning.c, written by clt-tune's fft-crossover sweep) goes to its
 * measured fastest first; every other plan follows the built-in rows below. The measurements
 * behind each row are in ../shared/notes/fft-h200.md and the fft bench suite.
 *   GPU (NVIDIA, AMD, Intel): VkFFT first (cuFFT parity on the H200 for powers of two and 2-D/3-D,
 *     where clFFT is 4-7x slower and cannot do primes above 13), then our kernels.
 *   CPU (POCL): our kernels (fft_rows) for every plan. History: the first rule, before fft_rows
 *     had lanes, was VkFFT when every axis is at most
 *     8192 long and has no prime factor above 13 (VkFFT's Bluestein path is slower
 *     than our direct odd radices there), else ours. Measured
 *     on POCL (2 shared cores, load ~5; clt-bench --suite fft --impl ours vs --impl vkfft, ms):
 *     batched 1-D 256: 125 vs 72, 1000: 413 vs 105, 4096: 193 vs 130, 8192: 247 vs 191,
 *     rfft2/16x512x512: 220 vs 102, fft3_c2c/128: 187 vs 103, FNO spectral conv 124 vs 81; but
 *     fft_c2c/65536x64 209 vs 418 and batched 85 344 vs 486. VkFFT 1.2.26 also sizes its kernels
 *     from POCL's 2 MiB "local memory" and crashed on a single 2^18 transform there: long axes stay
 *     with our kernels.
 *     Since fft_rows runs its stages in float4 lanes (the first one included), ours leads everywhere
 *     but on the real transforms of rank 2-3, which keep the rule above. Fastest of 1-3 runs, load
 *     3.8-4.4, ms, ours vs vkfft: fft_c2c/1024x4096 22 vs 44, 4096x1024 19 vs 59, 65536x64 29 vs 260,
 *     batched 64-8192 10-23 vs 28-92, 1000 40 vs 43, 1536 17 vs 45, 85 97 vs 193 (vkfft forced),
 *     fft3_c2c/128 49 vs 59; but rfft2/64x256x256 52 vs 39, rfft2/16x512x512 50 vs 41, irfft2 46 vs
 *     55 and 55 vs 55, FNO spectral conv (64x64 rfft2 + irfft2) 36 vs 29, so real transforms of
 *     rank 2-3 kept the rule above. Since fft_rows runs every stage in lanes (strided and half
 *     sides gathered to / scattered from scratch) and each item takes a contiguous share of the
 *     batch through rows that stay in cache, ours leads there too (quiet machine, two runs, ms, ours
 *     vs vkfft): rfft2/64x256x256 27.0, 25.0 vs 46.3, 43.9; irfft2 31.8, 27.3 vs 65.7, 49.9;
 *     rfft2/16x512x512 26.7, 23.9 vs 40.0, 28.4; irfft2 36.0, 32.8 vs 43.7, 57.9; FNO spectral conv
 *     29.1, 24.9 vs 28.4, 24.6 and layer 29.4, 31.4 vs 33.2, 23.3 (ties). */
#include <stdio.h>

#include "ops/fft/fft_plan.h"

/* Whether every axis of key fits fft_local (at most 2048 long, prime factors up to 17) and one of
 * them has a factor VkFFT serves by Bluestein (above 13). */
static int local_beats_bluestein(const clt_fft_key *key)
{
    int bluestein = 0;
    for (int i = 0; i < key->rank; i++) {
        int64_t p = clt__fft_largest_prime(key->n[i]);
        if (key->n[i] > 2048 || p > 17)
            return 0;
        bluestein |= p > 13;
    }
    return bluestein;
}

/* 1-D lengths whose plans put our kernels first on NVIDIA GPUs, ahead of VkFFT (512 MiB batched, us,
 * ours vs VkFFT, bench/RESULTS.md): 1000 (radices 8 5 5 5 in fft_local): H200 362-368 vs 397-398 in
 * three runs of two calls, H100 397 vs 405. Lengths measured where VkFFT leads or ties (H200, stop
 * 45): 64-2048 by 2-43 % (1024 265 vs 348, 2048 259 vs 371), 4096 274 vs 316, 8192 398-400 vs
 * 406-407, 1536 295 vs 348. */
static const int64_t nvidia_ours_first[] = {1000};

static int nvidia_prefers_ours(const clt_context *ctx, const clt_fft_key *key)
{
    if (ctx->dev->entry->info.vendor != CLT_VENDOR_NVIDIA || key->rank != 1)
        return 0;
    for (size_t i = 0; i < sizeof nvidia_ours_first / sizeof nvidia_ours_first[0]; i++)
        if (key->n[0] == nvidia_ours_first[i])
            return 1;
    return 0;
}

/* Append b to order unless it is there already or cannot be built in. */
static void push(clt_fft_backend *order, int *count, clt_fft_backend b)
{
    if (b == CLT_FFT_VKFFT && !clt__fft_vkfft_available())
        return;
    for (int i = 0; i < *count; i++)
        if (order[i] == b)
            return;
    order[(*count)++] = b;
}

int clt__fft_auto_order(const clt_context *ctx, const clt_fft_key *key, clt_fft_backend order[3])
{
    int count = 0;
    /* a 1-D length the tuning file lists (clt-tune's fft-crossover sweep): its fastest first */
    clt_fft_backend tuned;
    if (key->rank == 1 && clt__fft_tuned_first(ctx, key->n[0], &tuned))
        push(order, &count, tuned);
    if (ctx->dev->entry->info.type == CLT_DEVICE_CPU) {
        push(order, &count, CLT_FFT_OURS);
        return count;
    }
    /* GPUs: VkFFT first, but our kernels first where VkFFT falls back to Bluestein and fft_local
     * takes every axis: batched 85 = 5 x 17, 512 MiB, H100: fft_local 736 us, VkFFT 1009 (H200,
     * fft_local's first form: 599.6 vs 1014.6; cuFFT 261) (bench/RESULTS.md, fft), and on NVIDIA
     * for the lengths of nvidia_ours_first. */
    if (local_beats_bluestein(key) || nvidia_prefers_ours(ctx, key))
        push(order, &count, CLT_FFT_OURS);
    push(order, &count, CLT_FFT_VKFFT);
    push(order, &count, CLT_FFT_OURS);
    return count;
}

void clt__fft_describe(const clt_context *ctx, char *buf, size_t cap)
{
    const char *bluestein = "where an axis has the prime factor 17 (VkFFT's Bluestein) and every axis is "
                            "at most 2048 long with primes up to 17";
    const clt_device_info *info = &ctx->dev->entry->info;
    char tuned[512];
    int listed = clt__fft_tuned_text(ctx, tuned, sizeof tuned) > 0;
    int used = snprintf(buf, cap, "fft auto rule: %s%s", listed ? "tuning file: " : "built-in: ",
                        listed ? tuned : "");
    if (used < 0 || (size_t)used >= cap)
        return;
    const char *rest = listed ? "; otherwise " : "";
    if (info->type == CLT_DEVICE_CPU) {
        snprintf(buf + used, cap - (size_t)used, "%sours\n", rest);
        return;
    }
    used += snprintf(buf + used, cap - (size_t)used, "%s%s; ours first %s", rest,
                     clt__fft_vkfft_available() ? "VkFFT first" : "ours (VkFFT not built in)", bluestein);
    size_t rows = info->vendor == CLT_VENDOR_NVIDIA ? sizeof nvidia_ours_first / sizeof nvidia_ours_first[0] : 0;
    for (size_t i = 0; i < rows && (size_t)used < cap; i++)
        used += snprintf(buf + used, cap - (size_t)used, "%s%lld", i ? " " : ", and for 1-D ",
                         (long long)nvidia_ours_first[i]);
    if ((size_t)used < cap)
        snprintf(buf + used, cap - (size_t)used, "\n");
}
