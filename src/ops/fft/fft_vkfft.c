/* The VkFFT backend: placeholder until the VkFFT translation unit lands (see below). */
#include "ops/fft/fft_plan.h"

int clt__fft_vkfft_available(void) { return 0; }

clt_status clt__fft_vkfft_make(clt_fft_plan *plan, const char *who)
{
    return clt__fail(plan->ctx, CLT_ERR_UNSUPPORTED, "%s: VkFFT is not built into this library", who);
}

clt_status clt__fft_vkfft_execute(const clt_fft_plan *plan, cl_mem in, size_t in_off, cl_mem out,
                                  size_t out_off, const char *who)
{
    return clt__fft_ours_execute(plan, in, in_off, out, out_off, who);
}

void clt__fft_vkfft_free(clt_fft_plan *plan) { plan->impl = NULL; }
