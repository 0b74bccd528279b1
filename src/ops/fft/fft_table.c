/* The FFT backend table: which backend serves a plan under "auto", per device class. Built in (no
 * tuning file yet); the measurements behind each row are in ../shared/notes/fft-h200.md and the
 * fft bench suite.
 *   GPU (NVIDIA, AMD, Intel): VkFFT first (cuFFT parity on the H200 for powers of two and 2-D/3-D,
 *     where clFFT is 4-7x slower and cannot do primes above 13), then our kernels.
 *   CPU (POCL): VkFFT when every axis is at most CPU_VKFFT_MAX_AXIS long, else our kernels. Measured
 *     on POCL (2 shared cores, loaded machine; clt-bench --suite fft, ours vs --impl vkfft, ms):
 *     batched 1-D 256: 523 vs 123, 1024: 537 vs 137, 1000: 1487 vs 236, rfft2/64x256x256: 1009 vs
 *     272, fft3_c2c/128: 632 vs 245, FNO spectral conv 352 vs 152; but fft_c2c/4096x1024 376 vs 496
 *     and 65536x64 889 vs 1324. VkFFT 1.2.26 also sizes its kernels from POCL's 2 MiB "local
 *     memory" and crashed on a single 2^18 transform there: long axes stay with our kernels. */
#include <string.h>

#include "ops/fft/fft_plan.h"

#define CPU_VKFFT_MAX_AXIS 2048

int clt__fft_auto_order(const clt_context *ctx, const clt_fft_key *key, clt_fft_backend order[3])
{
    int count = 0;
    if (ctx->dev->entry->info.type == CLT_DEVICE_CPU) {
        int short_axes = 1;
        for (int a = 0; a < key->rank; a++)
            short_axes &= key->n[a] <= CPU_VKFFT_MAX_AXIS;
        if (short_axes && clt__fft_vkfft_available())
            order[count++] = CLT_FFT_VKFFT;
        order[count++] = CLT_FFT_OURS;
        return count;
    }
    if (clt__fft_vkfft_available())
        order[count++] = CLT_FFT_VKFFT;
    order[count++] = CLT_FFT_OURS;
    return count;
}
