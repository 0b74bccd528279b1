/* How a pass of our FFT backend runs in one launch (fft_shape.c): fft_local where a group's two
 * buffers of whole transforms fit local memory, fft_wide (one transform a group, values in
 * registers) for longer lengths, else the stage kernels (fft_ours.c). Plan-time decisions only.
 * Internal. */
#ifndef CLT_FFT_SHAPE_H
#define CLT_FFT_SHAPE_H

#include <stdint.h>

#include "runtime/runtime.h"

#define CLT_FFT_MAX_STAGES 64

/* One launch of a pass: its kernel (fft_local or fft_wide, also its family's name), the transforms
 * per group, the group size, fft_wide's largest radix and the build options. */
typedef struct clt_fft_launch {
    const char *kernel;
    int T, wg, maxr;
    char options[256];
} clt_fft_launch;

/* An A/B knob (CLT_FFT_LOCAL_WG, CLT_FFT_LOCAL_T, CLT_FFT_MAX_GROUPS): its value when the variable
 * holds a whole number in [lo, hi], else 0 (unset or malformed: the built-in choice stands). */
int clt__fft_knob(const char *name, long lo, long hi);

/* Whether a complex pass of length n runs in one launch on ctx, and how, into *L. flat: both of the
 * pass's sides are contiguous complex transforms (fft_wide compiles that in). running: the shape a
 * plan executes (the A/B knobs and CLT_FFT_LOCAL apply); 0: the built-in shape. */
int clt__fft_one_launch(const clt_context *ctx, int64_t n, int flat, int running, int idx32,
                        clt_fft_launch *L);

/* The one-launch kernel (fft_local or fft_wide, also its family), its build options and group size
 * for a complex pass of length n on ctx, for the kernel variant list; NULL when such a pass keeps
 * the stage kernels. */
const char *clt__fft_local_variant(const clt_context *ctx, int64_t n, int idx32, char *options, size_t size,
                                   int *wg);
/* fft_wide's kernel name, build options and group size for length n on ctx with its default group
 * size cut to ctx's limit, the shape CLT_FFT_LOCAL_WG at that limit runs: the compile-only variants
 * of profiles that keep such lengths on the stage kernels; NULL when fft_wide cannot take n. */
const char *clt__fft_wide_variant(const clt_context *ctx, int64_t n, int idx32, char *options, size_t size,
                                  int *wg);

#endif /* CLT_FFT_SHAPE_H */
