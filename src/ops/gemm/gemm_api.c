/* Public GEMM entry points: validate once (gemm_check.c), build the clt__gemm_problem and hand it
 * to the dispatcher (tune/gemm_dispatch.c), which picks our tiled kernels or CLBlast. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/gemm/gemm_check.h"
#include "tensor/tensor.h"
#include "ops/gemm/gemm_dispatch.h"

void clt_gemm_epilogue_init(clt_gemm_epilogue *e)
{
    if (!e)
        return;
    memset(e, 0, sizeof *e);
    e->bias_mode = CLT_BIAS_NONE;
    e->activation = CLT_IDENTITY;
}

static clt_status run_request(const char *who, const clt__gemm_request *r)
{
    clt_status st = clt__gemm_check_request(who, r);
    if (st == CLT_SUCCESS)
        st = clt__gemm_check_aliasing(who, r);
    if (st != CLT_SUCCESS || r->m == 0 || r->n == 0 || r->batch == 0)
        return st;
    clt__gemm_problem p;
    clt__gemm_problem_from(r, &p);
    return clt__gemm_dispatch(r->c->ctx, &p, who);
}

clt_status clt_gemm(clt_transpose ta, clt_transpose tb, int64_t m, int64_t n, int64_t k, float alpha,
                    const clt_tensor *a, int64_t a_offset, int64_t lda, const clt_tensor *b,
                    int64_t b_offset, int64_t ldb, float beta, clt_tensor *c, int64_t c_offset,
                    int64_t ldc, const clt_gemm_epilogue *epilogue)
{
    CLT_PUBLIC_CALL();
    clt__gemm_request r = {ta, tb, m, n, k, alpha, beta, a, b, c, a_offset, lda, 0, b_offset, ldb, 0,
                           c_offset, ldc, 0, 1, epilogue, CLT_MATH_DEFAULT};
    return run_request("clt_gemm", &r);
}

clt_status clt_gemm_strided_batched(clt_transpose ta, clt_transpose tb, int64_t m, int64_t n,
                                    int64_t k, float alpha, const clt_tensor *a, int64_t a_offset,
                                    int64_t lda, int64_t a_stride, const clt_tensor *b,
                                    int64_t b_offset, int64_t ldb, int64_t b_stride, float beta,
                                    clt_tensor *c, int64_t c_offset, int64_t ldc, int64_t c_stride,
                                    int64_t batch, const clt_gemm_epilogue *epilogue)
{
    CLT_PUBLIC_CALL();
    clt__gemm_request r = {ta, tb, m, n, k, alpha, beta, a, b, c, a_offset, lda, a_stride,
                           b_offset, ldb, b_stride, c_offset, ldc, c_stride, batch, epilogue,
                           CLT_MATH_DEFAULT};
    return run_request("clt_gemm_strided_batched", &r);
}

static clt_status matmul(const char *who, const clt_tensor *a, const clt_tensor *b, clt_tensor *out,
                         clt_math_mode math);

clt_status clt_matmul(const clt_tensor *a, const clt_tensor *b, clt_tensor *out)
{
    CLT_PUBLIC_CALL();
    return matmul("clt_matmul", a, b, out, CLT_MATH_DEFAULT);
}

clt_status clt_matmul_math(const clt_tensor *a, const clt_tensor *b, clt_tensor *out,
                           clt_math_mode math)
{
    CLT_PUBLIC_CALL();
    return matmul("clt_matmul_math", a, b, out, math);
}

static clt_status matmul(const char *who, const clt_tensor *a, const clt_tensor *b, clt_tensor *out,
                         clt_math_mode math)
{
    clt_context *ctx = out ? out->ctx : a ? a->ctx : b ? b->ctx : NULL;
    if (!a || !b || !out)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", who,
                         !a ? "a" : !b ? "b" : "out");
    if (a->ctx != ctx || b->ctx != ctx)
        return clt__fail(ctx, CLT_ERR_CONTEXT_MISMATCH, "%s: %s and out belong to different contexts",
                         who, a->ctx != ctx ? "a" : "b");
    int batched = a->ndim == 3;
    int shapes_ok = (a->ndim == 2 && b->ndim == 2 && out->ndim == 2) ||
                    (batched && (b->ndim == 2 || (b->ndim == 3 && b->shape[0] == a->shape[0])) &&
                     out->ndim == 3 && out->shape[0] == a->shape[0]);
    if (shapes_ok) {
        int64_t ka = a->shape[a->ndim - 1], kb = b->shape[b->ndim - 2];
        shapes_ok = ka == kb && out->shape[out->ndim - 2] == a->shape[a->ndim - 2] &&
                    out->shape[out->ndim - 1] == b->shape[b->ndim - 1];
    }
    if (!shapes_ok)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE,
                         "%s: shapes do not fit (a %dD, b %dD, out %dD): want a [M, K] @ b [K, N] -> "
                         "out [M, N], or a [B, M, K] @ b [B, K, N] or [K, N] -> out [B, M, N]",
                         who, a->ndim, b->ndim, out->ndim);
    int64_t bt = batched ? a->shape[0] : 1;
    int64_t m = a->shape[a->ndim - 2], k = a->shape[a->ndim - 1], n = b->shape[b->ndim - 1];
    int64_t lda = k > 1 ? k : 1, ldb = n > 1 ? n : 1;
    clt__gemm_request r = {CLT_NO_TRANS, CLT_NO_TRANS, m, n, k, 1.0f, 0.0f, a, b, out,
                           0, lda, m * k, 0, ldb, b->ndim == 3 ? k * n : 0, 0, ldb, m * n, bt, NULL,
                           math}; /* dtypes: checked with the request, as for clt_gemm */
    return run_request(who, &r);
}
