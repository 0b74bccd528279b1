/* Validation of one strided-batched GEMM request (see gemm_check.h). Every element a call would
 * touch is bounded with overflow-checked 64-bit arithmetic before anything is enqueued. */
#include "ops/gemm/gemm_check.h"

#include <string.h>

#include "tensor/tensor.h"

clt_context *clt__gemm_request_ctx(const clt__gemm_request *r)
{
    if (r->c)
        return r->c->ctx;
    if (r->a)
        return r->a->ctx;
    if (r->b)
        return r->b->ctx;
    return NULL;
}

/* off + (batch-1)*stride + (rows-1)*ld + (cols-1) into *last; 0 on overflow. All inputs >= 0,
 * rows, cols, batch >= 1. */
static int last_index(int64_t off, int64_t stride, int64_t batch, int64_t ld, int64_t rows,
                      int64_t cols, int64_t *last)
{
    int64_t s, l, v = off;
    if (__builtin_mul_overflow(batch - 1, stride, &s) || __builtin_add_overflow(v, s, &v) ||
        __builtin_mul_overflow(rows - 1, ld, &l) || __builtin_add_overflow(v, l, &v) ||
        __builtin_add_overflow(v, cols - 1, &v))
        return 0;
    *last = v;
    return 1;
}

/* A stored matrix of rows x cols (its ld covers a row), `batch` of them `stride` apart. */
static clt_status check_matrix(const clt_context *ctx, const char *who, const char *name,
                               const char *ld_name, const clt_tensor *t, int64_t off, int64_t ld,
                               int64_t stride, int64_t rows, int64_t cols, int64_t batch)
{
    int64_t need = cols > 1 ? cols : 1;
    if (ld < need)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT,
                         "%s: %s = %lld is less than %lld, the length of a stored row of %s", who,
                         ld_name, (long long)ld, (long long)need, name);
    if (stride < 0)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: the batch stride of %s is negative (%lld)",
                         who, name, (long long)stride);
    if (rows == 0 || cols == 0 || batch == 0)
        return CLT_SUCCESS; /* nothing of it is addressed */
    if (off < 0)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: %s starts at offset %lld, before its tensor",
                         who, name, (long long)off);
    int64_t last;
    if (!last_index(off, stride, batch, ld, rows, cols, &last) || last >= t->numel)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE,
                         "%s: %s (%lld x %lld stored, offset %lld, %s %lld, batch stride %lld, "
                         "batch %lld) reaches past its tensor of %lld elements",
                         who, name, (long long)rows, (long long)cols, (long long)off, ld_name,
                         (long long)ld, (long long)stride, (long long)batch, (long long)t->numel);
    return CLT_SUCCESS;
}

static clt_status check_tensor(const clt_context *ctx, const char *who, const char *name,
                               const clt_tensor *t)
{
    if (t->ctx != ctx)
        return clt__fail(ctx, CLT_ERR_CONTEXT_MISMATCH, "%s: %s and C belong to different contexts",
                         who, name);
    if (t->dtype != CLT_F32)
        return clt__fail(ctx, CLT_ERR_INVALID_DTYPE, "%s: %s is %s, expected f32", who, name,
                         clt_dtype_name(t->dtype));
    return CLT_SUCCESS;
}

static int is_16bit(clt_dtype d) { return d == CLT_F16 || d == CLT_BF16; }

/* A and B: both f32, both f16 or both bf16; C: f32, or the inputs' 16-bit type. */
static clt_status check_operands(const clt_context *ctx, const char *who, const clt_tensor *a,
                                 const clt_tensor *b, const clt_tensor *c)
{
    const clt_tensor *t[3] = {a, b, c};
    const char *names[3] = {"A", "B", "C"};
    for (int i = 0; i < 3; i++) {
        if (t[i]->ctx != ctx)
            return clt__fail(ctx, CLT_ERR_CONTEXT_MISMATCH, "%s: %s and C belong to different contexts",
                             who, names[i]);
        if (t[i]->dtype != CLT_F32 && !is_16bit(t[i]->dtype))
            return clt__fail(ctx, CLT_ERR_INVALID_DTYPE, "%s: %s is %s, expected f32, f16 or bf16",
                             who, names[i], clt_dtype_name(t[i]->dtype));
    }
    if (a->dtype != b->dtype)
        return clt__fail(ctx, CLT_ERR_INVALID_DTYPE, "%s: A is %s but B is %s (they must match)", who,
                         clt_dtype_name(a->dtype), clt_dtype_name(b->dtype));
    if (c->dtype != CLT_F32 && c->dtype != a->dtype)
        return clt__fail(ctx, CLT_ERR_INVALID_DTYPE,
                         "%s: C is %s with %s inputs (C must be f32 or the inputs' dtype)", who,
                         clt_dtype_name(c->dtype), clt_dtype_name(a->dtype));
    return CLT_SUCCESS;
}

static int valid_math(clt_math_mode m)
{
    return m == CLT_MATH_DEFAULT || m == CLT_MATH_FP32 || m == CLT_MATH_TF32 ||
           m == CLT_MATH_FP32_3XTF32;
}

int clt__gemm_dact_code(clt_unary_op op)
{
    switch (op) {
    case CLT_TANH: return CLT__GEMM_DACT_TANH;
    case CLT_SIGMOID: return CLT__GEMM_DACT_SIGMOID;
    case CLT_RELU: return CLT__GEMM_DACT_RELU;
    default: return 0;
    }
}

static clt_status check_dact(const clt_context *ctx, const char *who, const clt__gemm_request *r)
{
    const clt_gemm_epilogue *ep = r->ep;
    if (!clt__gemm_dact_code(ep->dact))
        return clt__fail(ctx, CLT_ERR_UNSUPPORTED,
                         "%s: epilogue dact %d is not supported (TANH, SIGMOID, RELU are)", who,
                         (int)ep->dact);
    if (ep->activation != CLT_IDENTITY || ep->residual)
        return clt__fail(ctx, CLT_ERR_UNSUPPORTED,
                         "%s: epilogue dact_y cannot be combined with %s", who,
                         ep->residual ? "a residual" : "an activation");
    clt_status st = check_tensor(ctx, who, "dact_y", ep->dact_y);
    if (st == CLT_SUCCESS)
        st = check_matrix(ctx, who, "dact_y", "lddy", ep->dact_y, ep->dact_offset, ep->lddy,
                          r->c_stride, r->m, r->n, r->batch);
    return st;
}

static clt_status check_epilogue(const clt_context *ctx, const char *who, const clt__gemm_request *r)
{
    const clt_gemm_epilogue *ep = r->ep;
    if (!ep)
        return CLT_SUCCESS;
    clt_status st;
    if (ep->bias_mode != CLT_BIAS_NONE && ep->bias_mode != CLT_BIAS_PER_COLUMN &&
        ep->bias_mode != CLT_BIAS_PER_ROW)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: unknown epilogue bias_mode %d", who,
                         (int)ep->bias_mode);
    if ((ep->bias_mode == CLT_BIAS_NONE) != (ep->bias == NULL))
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT,
                         ep->bias ? "%s: epilogue bias given with bias_mode CLT_BIAS_NONE"
                                  : "%s: epilogue bias_mode needs a bias tensor, bias is NULL",
                         who);
    if (ep->bias) {
        if ((st = check_tensor(ctx, who, "bias", ep->bias)) != CLT_SUCCESS)
            return st;
        int64_t len = ep->bias_mode == CLT_BIAS_PER_COLUMN ? r->n : r->m;
        if (ep->bias->numel != len)
            return clt__fail(ctx, CLT_ERR_INVALID_SHAPE,
                             "%s: bias has %lld elements, expected %lld (%s)", who,
                             (long long)ep->bias->numel, (long long)len,
                             ep->bias_mode == CLT_BIAS_PER_COLUMN ? "per column: n" : "per row: m");
    }
    if (!clt__epilogue_act_name(ep->activation))
        return clt__fail(ctx, CLT_ERR_UNSUPPORTED,
                         "%s: epilogue activation %d is not supported (IDENTITY, RELU, GELU_ERF, "
                         "GELU_TANH, TANH, SIGMOID, SILU are)",
                         who, (int)ep->activation);
    if (ep->residual) {
        if ((st = check_tensor(ctx, who, "residual", ep->residual)) != CLT_SUCCESS)
            return st;
        if ((st = check_matrix(ctx, who, "residual", "ldr", ep->residual, ep->residual_offset,
                               ep->ldr, r->c_stride, r->m, r->n, r->batch)) != CLT_SUCCESS)
            return st;
    }
    if (ep->dact_y)
        return check_dact(ctx, who, r);
    return CLT_SUCCESS;
}

clt_status clt__gemm_check_request(const char *who, const clt__gemm_request *r)
{
    clt_context *ctx = clt__gemm_request_ctx(r);
    if (!r->a || !r->b || !r->c)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", who,
                         !r->a ? "a" : !r->b ? "b" : "c");
    clt_status st;
    if ((st = check_operands(ctx, who, r->a, r->b, r->c)) != CLT_SUCCESS)
        return st;
    if (!valid_math(r->math) || (r->ep && !valid_math(r->ep->math)))
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: math mode %d is not a clt_math_mode", who,
                         (int)(valid_math(r->math) ? r->ep->math : r->math));
    if ((r->ta != CLT_NO_TRANS && r->ta != CLT_TRANS) || (r->tb != CLT_NO_TRANS && r->tb != CLT_TRANS))
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, "%s: unknown clt_transpose %d", who,
                         (int)(r->ta != CLT_NO_TRANS && r->ta != CLT_TRANS ? r->ta : r->tb));
    if (r->m < 0 || r->n < 0 || r->k < 0 || r->batch < 0)
        return clt__fail(ctx, CLT_ERR_INVALID_SHAPE, "%s: negative size (m %lld, n %lld, k %lld, batch %lld)",
                         who, (long long)r->m, (long long)r->n, (long long)r->k, (long long)r->batch);
    if ((st = check_epilogue(ctx, who, r)) != CLT_SUCCESS)
        return st;
    /* A and B are only addressed when there is a product to form. */
    int64_t kk = r->m && r->n ? r->k : 0;
    int at = r->ta == CLT_TRANS, bt = r->tb == CLT_TRANS;
    if ((st = check_matrix(ctx, who, at ? "A (transposed)" : "A", "lda", r->a, r->a_off, r->lda,
                           r->a_stride, at ? kk : r->m, at ? r->m : kk, r->batch)) ||
        (st = check_matrix(ctx, who, bt ? "B (transposed)" : "B", "ldb", r->b, r->b_off, r->ldb,
                           r->b_stride, bt ? r->n : kk, bt ? kk : r->n, r->batch)) ||
        (st = check_matrix(ctx, who, "C", "ldc", r->c, r->c_off, r->ldc, r->c_stride, r->m, r->n,
                           r->batch)))
        return st;
    return CLT_SUCCESS;
}

/* ------------------------------------------------------------------------------- aliasing */

static clt__gemm_extent extent_of(const clt_tensor *t, int64_t off, int64_t ld, int64_t stride,
                                  int64_t rows, int64_t cols, int64_t batch)
{
    clt__gemm_extent e = {t->storage->mem, 0, 0, 0};
    if (rows == 0 || cols == 0 || batch == 0)
        return e;
    uint64_t esize = clt_dtype_size(t->dtype);
    int64_t last = 0;
    last_index(off, stride, batch, ld, rows, cols, &last); /* checked already */
    e.first = t->offset + (uint64_t)off * esize;
    e.last = t->offset + ((uint64_t)last + 1) * esize - 1;
    e.used = 1;
    return e;
}

void clt__gemm_extents(const clt__gemm_request *r, clt__gemm_extent *a, clt__gemm_extent *b,
                       clt__gemm_extent *c)
{
    int64_t kk = r->m && r->n ? r->k : 0;
    int at = r->ta == CLT_TRANS, bt = r->tb == CLT_TRANS;
    *a = extent_of(r->a, r->a_off, r->lda, r->a_stride, at ? kk : r->m, at ? r->m : kk, r->batch);
    *b = extent_of(r->b, r->b_off, r->ldb, r->b_stride, bt ? r->n : kk, bt ? kk : r->n, r->batch);
    *c = extent_of(r->c, r->c_off, r->ldc, r->c_stride, r->m, r->n, r->batch);
}

void clt__gemm_epilogue_extents(const clt__gemm_request *r, clt__gemm_extent *bias,
                                clt__gemm_extent *residual)
{
    bias->used = residual->used = 0;
    if (!r->ep || r->m == 0 || r->n == 0 || r->batch == 0)
        return;
    if (r->ep->bias)
        *bias = extent_of(r->ep->bias, 0, 1, 0, 1, r->ep->bias->numel, 1);
    if (r->ep->residual)
        *residual = extent_of(r->ep->residual, r->ep->residual_offset, r->ep->ldr, r->c_stride,
                              r->m, r->n, r->batch);
    else if (r->ep->dact_y) /* never both (check_dact) */
        *residual = extent_of(r->ep->dact_y, r->ep->dact_offset, r->ep->lddy, r->c_stride, r->m,
                              r->n, r->batch);
}

static int overlap(const clt__gemm_extent *x, const clt__gemm_extent *y)
{
    return x->used && y->used && x->mem == y->mem && x->first <= y->last && y->first <= x->last;
}

/* Do C matrices d batches apart share an element? d*stride = di*ldc + dj with |di| < m, |dj| < n
 * has, since n <= ldc, at most the two candidates di = floor and floor + 1. */
static int batches_collide(int64_t m, int64_t n, int64_t ldc, int64_t stride, int64_t batch)
{
    if (batch < 2 || m == 0 || n == 0)
        return 0;
    if (stride >= (m - 1) * ldc + n) /* the common case: disjoint address ranges */
        return 0;
    if (stride == 0)
        return 1;
    for (int64_t d = 1; d < batch; d++) {
        int64_t q = d * stride / ldc, rem = d * stride % ldc;
        if (q > m - 1)
            return 0; /* larger d only move further apart */
        if (rem <= n - 1 || (q + 1 <= m - 1 && ldc - rem <= n - 1))
            return 1;
    }
    return 0;
}

clt_status clt__gemm_check_aliasing(const char *who, const clt__gemm_request *r)
{
    clt_context *ctx = r->c->ctx;
    clt__gemm_extent a, b, c, bias, res;
    clt__gemm_extents(r, &a, &b, &c);
    clt__gemm_epilogue_extents(r, &bias, &res);
    const char *hit = overlap(&c, &a) ? "A" : overlap(&c, &b) ? "B" : overlap(&c, &bias) ? "bias"
                      : overlap(&c, &res) ? (r->ep->residual ? "residual" : "dact_y") : NULL;
    if (hit)
        return clt__fail(ctx, CLT_ERR_ALIASING, "%s: C overlaps %s", who, hit);
    if (batches_collide(r->m, r->n, r->ldc, r->c_stride, r->batch))
        return clt__fail(ctx, CLT_ERR_ALIASING,
                         "%s: C's batch stride %lld makes C matrices overlap (m %lld, n %lld, ldc %lld)",
                         who, (long long)r->c_stride, (long long)r->m, (long long)r->n,
                         (long long)r->ldc);
    return CLT_SUCCESS;
}

/* ------------------------------------------------------------------------------- problem */

static uint64_t elem_base(const clt_tensor *t) { return t->offset / clt_dtype_size(t->dtype); }

void clt__gemm_problem_from(const clt__gemm_request *r, clt__gemm_problem *p)
{
    memset(p, 0, sizeof *p);
    p->ta = r->ta;
    p->tb = r->tb;
    p->m = r->m;
    p->n = r->n;
    p->k = r->k;
    p->alpha = r->alpha;
    p->beta = r->beta;
    p->a = r->a->storage->mem;
    p->b = r->b->storage->mem;
    p->c = r->c->storage->mem;
    int product = r->k && r->m && r->n; /* A and B unchecked (unused) otherwise */
    p->a_off = elem_base(r->a) + (uint64_t)(product ? r->a_off : 0);
    p->b_off = elem_base(r->b) + (uint64_t)(product ? r->b_off : 0);
    p->c_off = elem_base(r->c) + (uint64_t)r->c_off;
    p->lda = r->lda;
    p->ldb = r->ldb;
    p->ldc = r->ldc;
    p->batch = r->batch;
    if (r->batch > 1) {
        p->a_stride = r->a_stride;
        p->b_stride = r->b_stride;
        p->c_stride = r->c_stride;
    }
    p->a_dtype = r->a->dtype;
    p->b_dtype = r->b->dtype;
    p->c_dtype = r->c->dtype;
    clt_math_mode m = r->ep && r->ep->math != CLT_MATH_DEFAULT ? r->ep->math : r->math;
    p->math = m != CLT_MATH_DEFAULT ? m : r->c->ctx->math;
    p->act = CLT_IDENTITY;
    p->bias_mode = CLT_BIAS_NONE;
    const clt_gemm_epilogue *ep = r->ep;
    if (!ep)
        return;
    if (ep->bias) {
        p->bias = ep->bias->storage->mem;
        p->bias_off = elem_base(ep->bias);
        p->bias_mode = ep->bias_mode;
    }
    p->act = ep->activation;
    p->act_alpha = ep->activation_alpha;
    if (ep->residual) {
        p->residual = ep->residual->storage->mem;
        p->residual_off = elem_base(ep->residual) + (uint64_t)ep->residual_offset;
        p->ldr = ep->ldr;
    } else if (ep->dact_y) {
        p->residual = ep->dact_y->storage->mem;
        p->residual_off = elem_base(ep->dact_y) + (uint64_t)ep->dact_offset;
        p->ldr = ep->lddy;
        p->dact = clt__gemm_dact_code(ep->dact);
    }
}
