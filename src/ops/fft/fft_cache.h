/* The FFT plans of a context (a list searched by normalised descriptor). Internal. */
#ifndef CLT_FFT_CACHE_H
#define CLT_FFT_CACHE_H

#include "runtime/runtime.h"

/* Release every plan of ctx (context teardown). */
void clt__fft_cache_destroy(clt_context *ctx);

#endif
