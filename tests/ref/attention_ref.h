/* Plain-C reference of scaled-dot-product attention and its analytic gradients, in double from
 * float inputs, with error scales for tolerances. Layout as include/cltensor_attention.h:
 * q, out, dout [B,H,Sq,D], k, v [B,H,Sk,D], lse [B,H,Sq]. */
#ifndef CLT_ATTENTION_REF_H
#define CLT_ATTENTION_REF_H

#include <stddef.h>
#include <stdint.h>

typedef struct ref_attention_shape {
    size_t b, h, sq, sk, d;
    double scale;
    int causal;
    const int32_t *key_lengths; /* NULL or [b]; values clamped to [0, sk] as the device does */
} ref_attention_shape;

/* out, lse (natural log; -inf for a row that sees no key, whose out is 0) and out_scale: each
 * output element's error scale, sum_j P_ij |v_jd| + |out|. Any output pointer but out may be NULL. */
void ref_attention_forward(const ref_attention_shape *s, const float *q, const float *k,
                           const float *v, double *out, double *lse, double *out_scale);

/* dq, dk, dv of sum(out * dout), computed from the exact P (not from the device's out and lse), and
 * per-element error scales (the same formulas with every term replaced by its absolute value and
 * the row term D_i = dout_i . out_i added in absolute value). */
void ref_attention_backward(const ref_attention_shape *s, const float *q, const float *k,
                            const float *v, const float *dout, double *dq, double *dk, double *dv,
                            double *dq_scale, double *dk_scale, double *dv_scale);

#endif
