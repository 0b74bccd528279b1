/* The FFT backend table: which backend serves a plan under "auto", per device class. Built in (no
 * tuning file yet); the measurements behind each row are in ../shared/notes/fft-h200.md and the
 * fft bench suite.
 *   GPU (NVIDIA, AMD, Intel): VkFFT first (cuFFT parity on the H200 for every length, where clFFT is
 *     4-7x slower and cannot do primes above 13), then our kernels.
 *   CPU (POCL) and the gfx902 profile on a CPU: our kernels first. VkFFT sizes its kernels from the
 *     device's reported local memory, which POCL reports as 2+ MiB of global memory, and crashed on a
 *     2^18 transform there; clFFT bakes for seconds per plan on POCL. */
#include <string.h>

#include "ops/fft/fft_plan.h"

int clt__fft_auto_order(const clt_context *ctx, const clt_fft_key *key, clt_fft_backend order[3])
{
    (void)key;
    int count = 0;
    if (ctx->dev->entry->info.type == CLT_DEVICE_CPU) {
        order[count++] = CLT_FFT_OURS;
        return count;
    }
    if (clt__fft_vkfft_available())
        order[count++] = CLT_FFT_VKFFT;
    order[count++] = CLT_FFT_OURS;
    return count;
}
