/* Double-precision references for the FFT family: direct DFTs (no FFT algorithm, O(n^2) per line)
 * and the FNO spectral mix with its analytic gradients. Complex arrays are interleaved doubles. */
#ifndef CLT_FFT_REF_H
#define CLT_FFT_REF_H

#include <stdint.h>

/* In place over one contiguous batch item of rank 1..3 (n[0] outermost): the DFT with
 * exp(dir 2 pi i jk/n) along every axis, then scaled by `scale`. */
void ref_dft(double *x, int rank, const int64_t *n, int dir, double scale);

/* C2R reference: half (rank dims, last n[rank-1]/2+1, interleaved) to real out (n), by building the
 * full spectrum (x[k] for k <= n/2 on the last axis, conj(x[-k]) above) and an inverse DFT. */
void ref_c2r(const double *half, double *out, int rank, const int64_t *n, double scale);

/* out[b,o,h,k] of clt_spectral_mix (cltensor_fft.h) and its gradients, shapes as documented there. */
void ref_spectral_mix(const double *x, const double *w, double *out, int64_t B, int64_t I, int64_t O,
                      int64_t H, int64_t Wf, int64_t m1, int64_t m2);
void ref_spectral_mix_backward(const double *x, const double *w, const double *dout, double *dx,
                               double *dw, int64_t B, int64_t I, int64_t O, int64_t H, int64_t Wf,
                               int64_t m1, int64_t m2);

#endif
