/**
 * @file
 * cltensor random numbers: a counter-based generator (Philox 4x32-10), so that a result depends
 * only on (seed, offset, element index): not on the device, the grid or the device profile.
 *
 * Streams: element i of a call with (seed, offset) takes Philox block i / 4 (uniform, dropout and
 * normal) with the counter (block, offset) and the key seed (cl_kernels/common/philox.h has the
 * exact words): element i's value depends only on (seed, offset, i), not on where the tensor lies
 * in its buffer. Use a new offset (or seed) for each call whose numbers must be independent,
 * e.g. the training step number. Uniform values (24 random bits) are bit-identical on every
 * device; normal values go through log, sqrt, sin and cos and may differ in the last bits between
 * devices.
 *
 * f32 outputs; dropout masks are CLT_U8 (1 = kept). Contiguous tensors; one launch per call; only
 * enqueues. Empty tensors enqueue nothing. On any error nothing is enqueued and clt_last_error(ctx)
 * names the call.
 */
#ifndef CLTENSOR_RANDOM_H
#define CLTENSOR_RANDOM_H

#include "cltensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out[i] = lo + (hi - lo) * u_i, u_i = (word >> 8) / 2^24, kept in [lo, hi). Needs lo < hi, both
 *  finite (else CLT_ERR_INVALID_ARGUMENT). */
CLT_API clt_status clt_random_uniform(clt_tensor *out, uint64_t seed, uint64_t offset, float lo,
                                      float hi);
/** Box-Muller, both branches: words (x, y) of block b give u1 = ((x >> 8) + 1) / 2^24 in (0, 1],
 *  u2 = (y >> 8) / 2^24, r = sqrt(-2 ln u1), out[4b] = mean + stddev * r cos(2 pi u2) and
 *  out[4b + 1] = mean + stddev * r sin(2 pi u2); words (z, w) give out[4b + 2] and out[4b + 3] the
 *  same way. stddev >= 0, both finite. */
CLT_API clt_status clt_random_normal(clt_tensor *out, uint64_t seed, uint64_t offset, float mean,
                                     float stddev);
/** Dropout: mask[i] = (u_i >= p) with u_i the uniform of clt_random_uniform(seed, offset) on [0, 1);
 *  out[i] = mask[i] ? x[i] / (1 - p) : 0. 0 <= p <= 1 (p = 1 drops everything). x, out f32 of one
 *  shape (out may be x), mask u8 of that shape. */
CLT_API clt_status clt_dropout(const clt_tensor *x, float p, uint64_t seed, uint64_t offset,
                               clt_tensor *out, clt_tensor *mask);
/** Backward of clt_dropout: dx[i] = mask[i] ? dy[i] / (1 - p) : 0 (dx may be dy). */
CLT_API clt_status clt_dropout_backward(const clt_tensor *dy, const clt_tensor *mask, float p,
                                        clt_tensor *dx);

#ifdef __cplusplus
}
#endif

#endif /* CLTENSOR_RANDOM_H */
