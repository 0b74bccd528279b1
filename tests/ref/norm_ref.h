/* Plain-C double references for the normalisation ops (include/cltensor_norm.h). */
#ifndef CLT_REF_NORM_REF_H
#define CLT_REF_NORM_REF_H

#include <stdint.h>

/* Row normalisation as in cl_kernels/norm/norm.cl: R rows of L; the affine parameter of element i
 * of row r is (r % G) * (L / S) + i / S (layer norm: S = G = 1; group norm: S = HW, G = groups).
 * rms: no mean. gamma, beta may be NULL. mean, rstd [R] may be NULL. */
void ref_rownorm_forward(int64_t R, int64_t L, int64_t S, int64_t G, int rms, const double *x,
                         const double *gamma, const double *beta, double eps, double *y, double *mean,
                         double *rstd);
/* Its analytic gradients (statistics recomputed in double): dx [R*L], dgamma, dbeta [params]
 * (each may be NULL); abs_dg / abs_db (may be NULL) receive sum |dy * xhat| and sum |dy| per
 * parameter, the scale of the rounding in a float sum. */
void ref_rownorm_backward(int64_t R, int64_t L, int64_t S, int64_t G, int rms, const double *dy,
                          const double *x, const double *gamma, double eps, double *dx,
                          double *dgamma, double *dbeta, double *abs_dg, double *abs_db);

/* Batch norm over x [N, C, HW]. training: batch stats (biased var), running stats updated with the
 * unbiased var (when run_mean given); else the running stats. save_mean / save_rstd [C] may be NULL. */
void ref_batch_norm(int64_t N, int64_t C, int64_t HW, int training, const double *x,
                    const double *gamma, const double *beta, double *run_mean, double *run_var,
                    double momentum, double eps, double *y, double *save_mean, double *save_rstd);
/* Its analytic gradients from the given mean and rstd per channel. */
void ref_batch_norm_backward(int64_t N, int64_t C, int64_t HW, int training, const double *dy,
                             const double *x, const double *gamma, const double *mean,
                             const double *rstd, double *dx, double *dgamma, double *dbeta);

#endif
