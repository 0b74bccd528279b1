/* Argument checks and kernel-argument helpers shared by the f32 op families that take several
 * tensors, some of them optional (norm, loss, train). Internal. */
#ifndef CLT_F32_ARGS_H
#define CLT_F32_ARGS_H

#include "tensor/tensor.h"

/* t[0..n-1]: every one not NULL unless its bit is set in optional_mask, all in t[0]'s context
 * (t[0] must be required), all f32 except those whose bit is set in non_f32_mask (their dtype is the
 * caller's to check). Failures: "who: <name> is NULL" (CLT_ERR_INVALID_ARGUMENT),
 * CLT_ERR_CONTEXT_MISMATCH, CLT_ERR_INVALID_DTYPE, each naming the argument. */
clt_status clt__f32_check(const char *who, int n, const clt_tensor *const *t, const char *const *names,
                          unsigned optional_mask, unsigned non_f32_mask);

/* The first pair of t[0..n-1] (NULLs skipped) that share bytes, as indices into *i and *j; 0 if none.
 * Pairs where both bits are set in allowed_mask are not reported (inputs may overlap inputs). */
int clt__f32_first_overlap(int n, const clt_tensor *const *t, unsigned allowed_mask, int *i, int *j);

/* Element offset of t in its buffer (0 for NULL). */
static inline cl_ulong clt__f32_off(const clt_tensor *t)
{
    return t ? (cl_ulong)(t->offset / clt_dtype_size(t->dtype)) : 0;
}

/* Binds t's buffer to argument index of k, or the context's placeholder buffer when t is NULL (the
 * kernel is told by a flag never to touch it). */
clt_status clt__f32_set_buffer(clt_context *ctx, cl_kernel k, cl_uint index, const clt_tensor *t,
                               const char *who);
/* Arguments 0 .. n-1 of k: the buffers of t[order[a]] (order NULL: t[a]), as clt__f32_set_buffer. */
clt_status clt__f32_set_buffers(clt_context *ctx, cl_kernel k, const clt_tensor *const *t,
                                const int *order, int n, const char *who);

/* Whether two shapes are equal (ndim and every dim). */
int clt__f32_same_dims(const clt_tensor *a, const clt_tensor *b);

#endif
