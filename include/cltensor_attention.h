/**
 * @file
 * cltensor attention: scaled-dot-product attention, forward and backward, flash-style (tiles of
 * K and V in local memory shared by a work-group's query rows, an online softmax, no N x N matrix
 * anywhere in global memory). The forward pass saves only the output and the per-row log-sum-exp;
 * the backward pass recomputes the probabilities from them.
 *
 *   out[b,h,i,:] = sum_j P[i,j] V[b,h,j,:],  P[i,:] = softmax_j(scale * Q[b,h,i,:] . K[b,h,j,:])
 *   lse[b,h,i]   = log sum_j exp(scale * Q[b,h,i,:] . K[b,h,j,:])   (natural log, over unmasked j)
 *
 * Layout: Q, out, dQ, dout [batch, heads, seq_q, head_dim]; K, V, dK, dV [batch, heads, seq_k,
 * head_dim]; lse [batch, heads, seq_q]; all f32, contiguous row-major (strides head_dim, 1 within a
 * row; tensors may start at any element offset of their buffer, i.e. be views). head_dim is 32, 64
 * or 128; seq_q may differ from seq_k; any dimension may be 0.
 *
 * Masks (clt_attention_options):
 *   causal: key j is visible to query i only when j <= i (top-left aligned, as PyTorch's
 *     is_causal = True, also when seq_q != seq_k).
 *   key_lengths: an optional i32 tensor [batch]; in batch b only keys j < key_lengths[b] are
 *     visible (key padding). The device clamps each value to [0, seq_k], so a bad value never
 *     reads outside K or V; validation does not read it (that would block).
 *   A query row that sees no key at all (key length 0, say) gives out = 0, lse = -inf, and zero
 *   gradients (PyTorch gives NaN there).
 *
 * Launches: forward one; backward two (dQ per block of query rows, then dK and dV per block of
 * key rows: the backward never needs atomics, so results are deterministic). D_i = dout_i . out_i
 * is computed inside the kernels: on GPUs the dQ kernel computes it once per query row and leaves
 * it in a context workspace for the dK/dV kernel (b * h * seq_q floats, kept for the context's
 * life); CPU devices compute it in both kernels.
 *
 * Tuning: the tile sizes are build options chosen per device class and head dimension (see
 * src/ops/attention/attention_params.c); CLT_ATTENTION_TILES="fwd_bm,fwd_bn,bwd_bm,bwd_bn" in the
 * environment overrides them for every head dimension (for tuning runs; invalid values are
 * ignored). clt_attention_describe names what a shape would run.
 *
 * Common rules (as in cltensor_ops.h): NULL tensors are CLT_ERR_INVALID_ARGUMENT, tensors of other
 * contexts CLT_ERR_CONTEXT_MISMATCH, a non-f32 tensor (non-i32 key_lengths) CLT_ERR_INVALID_DTYPE,
 * shapes that do not match CLT_ERR_INVALID_SHAPE, an unsupported head_dim CLT_ERR_UNSUPPORTED, a
 * non-finite scale CLT_ERR_INVALID_ARGUMENT, an output overlapping an input or another output
 * CLT_ERR_ALIASING. On any error nothing is enqueued, nothing changes, and clt_last_error(ctx) starts
 * with the call's name. Every call only enqueues.
 */
#ifndef CLTENSOR_ATTENTION_H
#define CLTENSOR_ATTENTION_H

#include "cltensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Options of an attention call. Zero-initialised options are invalid (scale 0 is allowed but
 *  rarely meant): start from clt_attention_options_default. */
typedef struct clt_attention_options {
    float scale;                   /**< multiplies Q.K; 0 selects 1/sqrt(head_dim) */
    int causal;                    /**< nonzero: key j visible to query i only when j <= i */
    const clt_tensor *key_lengths; /**< NULL, or i32 [batch]: keys j >= key_lengths[b] hidden */
} clt_attention_options;

/** scale 0 (1/sqrt(head_dim)), not causal, no key lengths. */
CLT_API clt_attention_options clt_attention_options_default(void);

/** Forward pass: out and lse from q, k, v. opts may be NULL (the defaults). lse may be NULL when
 *  no backward pass follows. out and lse must not overlap q, k, v, key_lengths or each other. */
CLT_API clt_status clt_attention_forward(const clt_tensor *q, const clt_tensor *k,
                                         const clt_tensor *v, const clt_attention_options *opts,
                                         clt_tensor *out, clt_tensor *lse);

/** Backward pass: dq, dk, dv from the forward's inputs, its out and lse, and dout (the gradient of
 *  out), with the same options. The three outputs are overwritten (not accumulated) and must not
 *  overlap any input or each other. */
CLT_API clt_status clt_attention_backward(const clt_tensor *q, const clt_tensor *k,
                                          const clt_tensor *v, const clt_tensor *out,
                                          const clt_tensor *lse, const clt_tensor *dout,
                                          const clt_attention_options *opts, clt_tensor *dq,
                                          clt_tensor *dk, clt_tensor *dv);

/** Writes (at most cap bytes, NUL-terminated) the kernels and tile sizes the calls would use on ctx
 *  for head_dim: "attention d64 fwd bm=64 bn=32 ...". CLT_ERR_INVALID_ARGUMENT for NULL,
 *  CLT_ERR_UNSUPPORTED for another head_dim. */
CLT_API clt_status clt_attention_describe(clt_context *ctx, int64_t head_dim, char *buf,
                                          size_t cap);

#ifdef __cplusplus
}
#endif

#endif /* CLTENSOR_ATTENTION_H */
