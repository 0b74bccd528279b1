/* Tensor handles: creation (pool-backed or wrapping a user cl_mem), views, accessors, release. */
#include <stdlib.h>
#include <string.h>

#include "cltensor_cl.h"
#include "tensor/tensor.h"

size_t clt_dtype_size(clt_dtype dtype)
{
    switch (dtype) {
    case CLT_F32: return 4;
    case CLT_F16: return 2;
    case CLT_I32: return 4;
    case CLT_U8: return 1;
    case CLT_C64: return 8;
    case CLT_BF16: return 2;
    }
    return 0;
}

const char *clt_dtype_name(clt_dtype dtype)
{
    switch (dtype) {
    case CLT_F32: return "f32";
    case CLT_F16: return "f16";
    case CLT_I32: return "i32";
    case CLT_U8: return "u8";
    case CLT_C64: return "c64";
    case CLT_BF16: return "bf16";
    }
    return "unknown";
}

clt_status clt__shape_check(const clt_context *ctx, const char *who, clt_dtype dtype, int ndim,
                            const int64_t *shape, int64_t *numel, size_t *nbytes)
{
    size_t esize = clt_dtype_size(dtype);
    if (esize == 0)
        return clt__fail(ctx, CLT_ERR_INVALID_DTYPE, "%s: unknown dtype %d", who, (int)dtype);
    if (ndim < 0 || ndim > CLT_MAX_DIMS)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: ndim %d outside 0..%d", who, ndim,
                         CLT_MAX_DIMS);
    if (ndim > 0 && !shape)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: shape is NULL with ndim %d", who, ndim);
    int64_t n = 1;
    int overflow = 0;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0)
            return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: dim %d is %lld (must be >= 0)", who, i,
                             (long long)shape[i]);
        if (shape[i] != 0 && n > INT64_MAX / shape[i])
            overflow = 1; /* keep scanning: a later 0 or negative dim decides first */
        else
            n *= shape[i];
    }
    for (int i = 0; i < ndim && overflow; i++)
        if (shape[i] == 0)
            overflow = 0, n = 0;
    if (overflow)
        return clt__fail(ctx, CLT_ERR_SIZE_OVERFLOW, "%s: element count overflows int64", who);
    if ((uint64_t)n > (uint64_t)INT64_MAX / esize || (uint64_t)n > SIZE_MAX / esize)
        return clt__fail(ctx, CLT_ERR_SIZE_OVERFLOW, "%s: %lld elements of %s overflow the byte size",
                         who, (long long)n, clt_dtype_name(dtype));
    *numel = n;
    *nbytes = (size_t)n * esize;
    return CLT_SUCCESS;
}

static clt_tensor *new_handle(clt_context *ctx, clt_storage *storage, size_t offset, clt_dtype dtype,
                              int ndim, const int64_t *shape, int64_t numel, size_t nbytes)
{
    clt_tensor *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->ctx = ctx;
    t->storage = storage;
    t->offset = offset;
    t->dtype = dtype;
    t->ndim = ndim;
    if (ndim > 0)
        memcpy(t->shape, shape, sizeof(int64_t) * (size_t)ndim);
    t->numel = numel;
    t->nbytes = nbytes;
    storage->refs++;
    t->next = ctx->tensors;
    if (ctx->tensors)
        ctx->tensors->prev = t;
    ctx->tensors = t;
    return t;
}

clt_status clt_tensor_create(clt_context *ctx, clt_dtype dtype, int ndim, const int64_t *shape,
                             clt_tensor **out)
{
    CLT_PUBLIC_CALL();
    if (out)
        *out = NULL;
    if (!ctx || !out)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "clt_tensor_create: %s is NULL",
                         ctx ? "out" : "ctx");
    int64_t numel;
    size_t nbytes;
    clt_status st = clt__shape_check(ctx, "clt_tensor_create", dtype, ndim, shape, &numel, &nbytes);
    if (st != CLT_SUCCESS)
        return st;
    clt_storage *s = calloc(1, sizeof *s);
    if (!s)
        return clt__fail(ctx, CLT_ERR_OUT_OF_HOST_MEMORY, "clt_tensor_create: out of host memory");
    if (nbytes == 0) {
        /* An empty tensor takes no pool block (it must succeed at the memory cap): it holds a
         * reference to the context's one shared placeholder buffer, so ops still see a valid
         * cl_mem, and is freed like a wrapped buffer (block NULL). */
        st = clt__pool_empty_mem(ctx, &s->mem);
        if (st == CLT_SUCCESS)
            clRetainMemObject(s->mem);
    } else {
        st = clt__pool_alloc(ctx, nbytes, &s->block);
    }
    if (st != CLT_SUCCESS) {
        free(s);
        return st;
    }
    s->ctx = ctx;
    if (s->block) {
        s->mem = s->block->mem;
        s->bytes = s->block->bytes;
    }
    clt_tensor *t = new_handle(ctx, s, 0, dtype, ndim, shape, numel, nbytes);
    if (!t) {
        if (s->block)
            clt__pool_release(ctx, s->block);
        else
            clReleaseMemObject(s->mem);
        free(s);
        return clt__fail(ctx, CLT_ERR_OUT_OF_HOST_MEMORY, "clt_tensor_create: out of host memory");
    }
    *out = t;
    return CLT_SUCCESS;
}

clt_status clt_tensor_create_from_host(clt_context *ctx, clt_dtype dtype, int ndim,
                                       const int64_t *shape, const void *data, size_t bytes,
                                       clt_tensor **out)
{
    CLT_PUBLIC_CALL();
    if (out)
        *out = NULL;
    if (!ctx || !out || (!data && bytes > 0))
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "clt_tensor_create_from_host: %s is NULL",
                         !ctx ? "ctx" : !out ? "out" : "data");
    int64_t numel;
    size_t nbytes;
    clt_status st =
        clt__shape_check(ctx, "clt_tensor_create_from_host", dtype, ndim, shape, &numel, &nbytes);
    if (st != CLT_SUCCESS)
        return st;
    if (bytes != nbytes)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT,
                         "clt_tensor_create_from_host: %zu bytes given, the shape needs %zu", bytes,
                         nbytes);
    clt_tensor *t;
    if ((st = clt_tensor_create(ctx, dtype, ndim, shape, &t)) != CLT_SUCCESS)
        return st;
    if ((st = clt_tensor_write(t, data, bytes)) != CLT_SUCCESS) {
        clt_tensor_free(t);
        return st;
    }
    *out = t;
    return CLT_SUCCESS;
}

clt_status clt_tensor_wrap_cl_mem(clt_context *ctx, cl_mem buffer, size_t offset_bytes,
                                  clt_dtype dtype, int ndim, const int64_t *shape, clt_tensor **out)
{
    CLT_PUBLIC_CALL();
    if (out)
        *out = NULL;
    if (!ctx || !out || !buffer)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "clt_tensor_wrap_cl_mem: %s is NULL",
                         !ctx ? "ctx" : !out ? "out" : "buffer");
    int64_t numel;
    size_t nbytes;
    clt_status st = clt__shape_check(ctx, "clt_tensor_wrap_cl_mem", dtype, ndim, shape, &numel, &nbytes);
    if (st != CLT_SUCCESS)
        return st;
    cl_context owner = NULL;
    size_t size = 0;
    cl_int err = clGetMemObjectInfo(buffer, CL_MEM_CONTEXT, sizeof owner, &owner, NULL);
    if (err == CL_SUCCESS)
        err = clGetMemObjectInfo(buffer, CL_MEM_SIZE, sizeof size, &size, NULL);
    if (err != CL_SUCCESS)
        return clt__cl_fail(ctx, err, "clt_tensor_wrap_cl_mem: clGetMemObjectInfo(buffer)");
    if (owner != ctx->dev->cl_ctx)
        return clt__fail(ctx, CLT_ERR_CONTEXT_MISMATCH,
                         "clt_tensor_wrap_cl_mem: buffer belongs to another cl_context than the "
                         "context's (see clt_context_cl_context)");
    if (offset_bytes % clt_dtype_size(dtype) != 0)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT,
                         "clt_tensor_wrap_cl_mem: offset %zu is not a multiple of the %s element size",
                         offset_bytes, clt_dtype_name(dtype));
    if (offset_bytes > size || nbytes > size - offset_bytes)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE,
                         "clt_tensor_wrap_cl_mem: shape needs %zu bytes from offset %zu, the buffer "
                         "has %zu", nbytes, offset_bytes, size);
    clt_storage *s = calloc(1, sizeof *s);
    if (!s)
        return clt__fail(ctx, CLT_ERR_OUT_OF_HOST_MEMORY, "clt_tensor_wrap_cl_mem: out of host memory");
    s->ctx = ctx;
    s->mem = buffer;
    s->bytes = size;
    clt_tensor *t = new_handle(ctx, s, offset_bytes, dtype, ndim, shape, numel, nbytes);
    if (!t) {
        free(s);
        return clt__fail(ctx, CLT_ERR_OUT_OF_HOST_MEMORY, "clt_tensor_wrap_cl_mem: out of host memory");
    }
    clRetainMemObject(buffer);
    *out = t;
    return CLT_SUCCESS;
}

void clt_tensor_free(clt_tensor *t)
{
    if (!t)
        return;
    if (t->prev)
        t->prev->next = t->next;
    else
        t->ctx->tensors = t->next;
    if (t->next)
        t->next->prev = t->prev;
    clt_storage *s = t->storage;
    if (--s->refs == 0) {
        /* Work already enqueued on this memory stays ordered before any reuse (in-order queue). */
        if (s->block)
            clt__pool_release(s->ctx, s->block);
        else
            clReleaseMemObject(s->mem);
        free(s);
    }
    free(t);
}

int clt__tensors_overlap(const clt_tensor *a, const clt_tensor *b)
{
    if (a->storage->mem != b->storage->mem || a->nbytes == 0 || b->nbytes == 0)
        return 0;
    return a->offset < b->offset + b->nbytes && b->offset < a->offset + a->nbytes;
}

void clt__tensor_release_all(clt_context *ctx)
{
    while (ctx->tensors)
        clt_tensor_free(ctx->tensors);
}

clt_status clt_tensor_reshape(const clt_tensor *t, int ndim, const int64_t *shape, clt_tensor **out)
{
    CLT_PUBLIC_CALL();
    if (out)
        *out = NULL;
    if (!t || !out)
        return clt__fail(t ? t->ctx : NULL, CLT_ERR_INVALID_ARGUMENT, "clt_tensor_reshape: %s is NULL",
                         t ? "out" : "t");
    clt_context *ctx = t->ctx;
    if (ndim > 0 && !shape)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "clt_tensor_reshape: shape is NULL with ndim %d",
                         ndim);
    if (ndim < 0 || ndim > CLT_MAX_DIMS)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "clt_tensor_reshape: ndim %d outside 0..%d", ndim,
                         CLT_MAX_DIMS);
    int64_t dims[CLT_MAX_DIMS];
    int infer = -1;
    int64_t known = 1;
    for (int i = 0; i < ndim; i++) {
        dims[i] = shape[i];
        if (shape[i] == -1) {
            if (infer >= 0)
                return clt__fail(ctx, CLT_ERR_INVALID_SHAPE,
                                 "clt_tensor_reshape: more than one dim is -1 (dims %d and %d)", infer, i);
            infer = i;
        } else if (shape[i] < 0) {
            return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "clt_tensor_reshape: dim %d is %lld", i,
                             (long long)shape[i]);
        } else if (shape[i] != 0 && known > INT64_MAX / shape[i]) {
            return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "clt_tensor_reshape: shape overflows");
        } else {
            known *= shape[i];
        }
    }
    if (infer >= 0) {
        if (known == 0 || t->numel % known != 0)
            return clt__fail(ctx, CLT_ERR_INVALID_SHAPE,
                             "clt_tensor_reshape: cannot infer dim %d: %lld elements over %lld", infer,
                             (long long)t->numel, (long long)known);
        dims[infer] = t->numel / known;
        known = t->numel;
    }
    if (known != t->numel)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE,
                         "clt_tensor_reshape: new shape has %lld elements, the tensor %lld",
                         (long long)known, (long long)t->numel);
    clt_tensor *v = new_handle(ctx, t->storage, t->offset, t->dtype, ndim, dims, t->numel, t->nbytes);
    if (!v)
        return clt__fail(ctx, CLT_ERR_OUT_OF_HOST_MEMORY, "clt_tensor_reshape: out of host memory");
    *out = v;
    return CLT_SUCCESS;
}

clt_status clt_tensor_view(const clt_tensor *t, int64_t offset, int ndim, const int64_t *shape,
                           clt_tensor **out)
{
    CLT_PUBLIC_CALL();
    static const char *who = "clt_tensor_view";
    if (out)
        *out = NULL;
    if (!t || !out)
        return clt__fail(t ? t->ctx : NULL, CLT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", who,
                         t ? "out" : "t");
    clt_context *ctx = t->ctx;
    if (offset < 0)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: offset %lld is negative", who,
                         (long long)offset);
    int64_t numel;
    size_t nbytes;
    clt_status st = clt__shape_check(ctx, who, t->dtype, ndim, shape, &numel, &nbytes);
    if (st != CLT_SUCCESS)
        return st;
    if (offset > t->numel || numel > t->numel - offset)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE,
                         "%s: elements [%lld, %lld + %lld) outside the tensor's %lld", who,
                         (long long)offset, (long long)offset, (long long)numel, (long long)t->numel);
    size_t start = t->offset + (size_t)offset * clt_dtype_size(t->dtype);
    clt_tensor *v = new_handle(ctx, t->storage, start, t->dtype, ndim, shape, numel, nbytes);
    if (!v)
        return clt__fail(ctx, CLT_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", who);
    *out = v;
    return CLT_SUCCESS;
}

cl_mem clt_tensor_cl_mem(const clt_tensor *t, size_t *offset_bytes)
{
    if (!t)
        return NULL;
    if (offset_bytes)
        *offset_bytes = t->offset;
    return t->storage->mem;
}

clt_context *clt_tensor_context(const clt_tensor *t) { return t ? t->ctx : NULL; }
clt_dtype clt_tensor_dtype(const clt_tensor *t) { return t ? t->dtype : (clt_dtype)0; }
int clt_tensor_ndim(const clt_tensor *t) { return t ? t->ndim : -1; }
int64_t clt_tensor_numel(const clt_tensor *t) { return t ? t->numel : 0; }
size_t clt_tensor_nbytes(const clt_tensor *t) { return t ? t->nbytes : 0; }

int64_t clt_tensor_dim(const clt_tensor *t, int axis)
{
    CLT_PUBLIC_CALL();
    if (!t)
        return -1;
    if (axis < 0)
        axis += t->ndim;
    return axis >= 0 && axis < t->ndim ? t->shape[axis] : -1;
}

int clt_tensor_shape(const clt_tensor *t, int64_t *shape)
{
    if (!t)
        return -1;
    if (shape && t->ndim > 0)
        memcpy(shape, t->shape, sizeof(int64_t) * (size_t)t->ndim);
    return t->ndim;
}
