/* The FFT backend table: which backend serves a plan under "auto", per device class. Built in (no
 * tuning file yet); the measurements behind each row are in ../shared/notes/fft-h200.md and the
 * fft bench suite.
 *   GPU (NVIDIA, AMD, Intel): VkFFT first (cuFFT parity on the H200 for powers of two and 2-D/3-D,
 *     where clFFT is 4-7x slower and cannot do primes above 13), then our kernels.
 *   CPU (POCL): VkFFT when every axis is at most CPU_VKFFT_MAX_AXIS long and has no prime factor
 *     above 13 (VkFFT's Bluestein path is slower than our direct odd radices there), else ours. Measured
 *     on POCL (2 shared cores, load ~5; clt-bench --suite fft --impl ours vs --impl vkfft, ms):
 *     batched 1-D 256: 125 vs 72, 1000: 413 vs 105, 4096: 193 vs 130, 8192: 247 vs 191,
 *     rfft2/16x512x512: 220 vs 102, fft3_c2c/128: 187 vs 103, FNO spectral conv 124 vs 81; but
 *     fft_c2c/65536x64 209 vs 418 and batched 85 344 vs 486. VkFFT 1.2.26 also sizes its kernels
 *     from POCL's 2 MiB "local memory" and crashed on a single 2^18 transform there: long axes stay
 *     with our kernels.
 *     Since fft_rows runs its middle stages in float4 lanes, rank-1 transforms of a power-of-two length
 *     go to ours (every stage but the first in lanes); fastest of 2 A/B runs, load 4.8-6.0, ms, ours
 *     vs vkfft: fft_c2c/1024x4096 41 vs 45, 4096x1024 40 vs 87, 65536x64 62 vs 132, batched 64 23 vs
 *     44, 128 30 vs 47, 256 40 vs 32, 512-2048 within 25% either way, 4096 35 vs 71, 8192 44 vs 95.
 *     Other lengths and ranks 2-3 keep the rule above (VkFFT led or tied there). */
#include <string.h>

#include "ops/fft/fft_plan.h"

#define CPU_VKFFT_MAX_AXIS 8192

int clt__fft_auto_order(const clt_context *ctx, const clt_fft_key *key, clt_fft_backend order[3])
{
    int count = 0;
    if (ctx->dev->entry->info.type == CLT_DEVICE_CPU) {
        int short_axes = 1;
        for (int a = 0; a < key->rank; a++)
            short_axes &= key->n[a] <= CPU_VKFFT_MAX_AXIS && clt__fft_largest_prime(key->n[a]) <= 13;
        int pow2_1d = key->rank == 1 && clt__fft_largest_prime(key->n[0]) <= 2;
        if (short_axes && !pow2_1d && clt__fft_vkfft_available())
            order[count++] = CLT_FFT_VKFFT;
        order[count++] = CLT_FFT_OURS;
        return count;
    }
    if (clt__fft_vkfft_available())
        order[count++] = CLT_FFT_VKFFT;
    order[count++] = CLT_FFT_OURS;
    return count;
}
