/* clt_gemm_batched: `batch` GEMMs of one shape, each with its own tensors. Every entry is validated
 * like a single clt_gemm; aliasing is checked across all entries at once (a sort and one sweep);
 * runs of consecutive entries whose A, B and C lie in one buffer each, a constant distance apart,
 * go out as one strided-batched launch (the usual case: views of one activation tensor). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/gemm/gemm_check.h"
#include "tensor/tensor.h"
#include "ops/gemm/gemm_dispatch.h"

#define WHO "clt_gemm_batched"

typedef struct interval {
    clt__gemm_extent e;
    int64_t entry; /* -1: the bias */
    char what;     /* 'A', 'B', 'C' or 'b' (bias) */
} interval;

static int by_mem_then_first(const void *x, const void *y)
{
    const interval *a = x, *b = y;
    if (a->e.mem != b->e.mem)
        return (uintptr_t)a->e.mem < (uintptr_t)b->e.mem ? -1 : 1;
    return a->e.first < b->e.first ? -1 : a->e.first > b->e.first;
}

/* Any C interval meeting any other interval (input or C) of the same buffer. */
static clt_status check_all_aliasing(clt_context *ctx, const clt__gemm_request *rs, int64_t batch)
{
    interval *iv = malloc((size_t)(3 * batch + 1) * sizeof *iv);
    if (!iv)
        return clt__fail(ctx, CLT_ERR_OUT_OF_HOST_MEMORY, WHO ": out of host memory");
    size_t n = 0;
    for (int64_t i = 0; i < batch; i++) {
        clt__gemm_extent e[3];
        clt__gemm_extents(&rs[i], &e[0], &e[1], &e[2]);
        for (int j = 0; j < 3; j++)
            if (e[j].used)
                iv[n++] = (interval){e[j], i, "ABC"[j]};
    }
    clt__gemm_extent bias, res;
    clt__gemm_epilogue_extents(&rs[0], &bias, &res);
    if (bias.used)
        iv[n++] = (interval){bias, -1, 'b'};
    qsort(iv, n, sizeof *iv, by_mem_then_first);
    clt_status st = CLT_SUCCESS;
    const interval *last_in = NULL, *last_out = NULL; /* reaching furthest so far in this buffer */
    for (size_t i = 0; i < n && st == CLT_SUCCESS; i++) {
        const interval *cur = &iv[i];
        if (i > 0 && iv[i - 1].e.mem != cur->e.mem)
            last_in = last_out = NULL;
        const interval *hit = last_out && last_out->e.last >= cur->e.first ? last_out
                            : cur->what == 'C' && last_in && last_in->e.last >= cur->e.first ? last_in
                                                                                             : NULL;
        if (hit) {
            const interval *c = cur->what == 'C' ? cur : hit, *o = cur->what == 'C' ? hit : cur;
            if (o->what == 'b')
                st = clt__fail(ctx, CLT_ERR_ALIASING, WHO ": C of entry %lld overlaps the bias",
                               (long long)c->entry);
            else
                st = clt__fail(ctx, CLT_ERR_ALIASING, WHO ": C of entry %lld overlaps %c of entry %lld",
                               (long long)c->entry, o->what, (long long)o->entry);
        }
        const interval **slot = cur->what == 'C' ? &last_out : &last_in;
        if (!*slot || (*slot)->e.last < cur->e.last)
            *slot = cur;
    }
    free(iv);
    return st;
}

/* Element distance between two extents' starts if they share a buffer and it is >= 0. */
static int step_between(const clt__gemm_extent *x, const clt__gemm_extent *y, int64_t *step)
{
    if (x->mem != y->mem || y->first < x->first)
        return 0;
    *step = (int64_t)(y->first - x->first);
    return 1;
}

/* Entry i's start of A, B, C in their buffers (for entries whose A/B are unused the start is 0). */
static void starts(const clt__gemm_problem *p, clt__gemm_extent s[3])
{
    s[0] = (clt__gemm_extent){p->a, p->a_off, 0, 1};
    s[1] = (clt__gemm_extent){p->b, p->b_off, 0, 1};
    s[2] = (clt__gemm_extent){p->c, p->c_off, 0, 1};
}

/* Launch entries in runs that are strided batches. */
static clt_status launch_grouped(clt_context *ctx, const clt__gemm_request *rs, int64_t batch)
{
    int64_t i = 0;
    while (i < batch) {
        clt__gemm_problem p, q;
        clt__gemm_problem_from(&rs[i], &p);
        clt__gemm_extent s0[3], s1[3];
        starts(&p, s0);
        int64_t step[3] = {0, 0, 0}, g = 1;
        for (; i + g < batch; g++) {
            clt__gemm_problem_from(&rs[i + g], &q);
            starts(&q, s1);
            int64_t d[3];
            int ok = 1;
            for (int j = 0; j < 3 && ok; j++)
                ok = step_between(&s0[j], &s1[j], &d[j]) &&
                     (g == 1 || d[j] == step[j] * g) && (j < 2 || d[j] > 0);
            if (!ok)
                break;
            if (g == 1)
                memcpy(step, d, sizeof step);
        }
        if (g > 1) {
            p.batch = g;
            p.a_stride = step[0];
            p.b_stride = step[1];
            p.c_stride = step[2];
        }
        clt_status st = clt__gemm_dispatch(ctx, &p, WHO);
        if (st != CLT_SUCCESS)
            return st;
        i += g;
    }
    return CLT_SUCCESS;
}

clt_status clt_gemm_batched(clt_transpose ta, clt_transpose tb, int64_t m, int64_t n, int64_t k,
                            float alpha, const clt_tensor *const *a, const int64_t *a_offsets,
                            int64_t lda, const clt_tensor *const *b, const int64_t *b_offsets,
                            int64_t ldb, float beta, clt_tensor *const *c, const int64_t *c_offsets,
                            int64_t ldc, int64_t batch, const clt_gemm_epilogue *epilogue)
{
    CLT_PUBLIC_CALL();
    clt_context *ctx = c && batch > 0 && c[0] ? c[0]->ctx : NULL;
    if (batch < 0) {
        /* The arrays' length is unknown then, but a caller asks clt_last_error of the context of
         * the C it passed: the message goes to the context-less slot and to c[0]'s context. */
        clt__fail(NULL, CLT_ERR_INVALID_SHAPE, WHO ": batch is negative (%lld)", (long long)batch);
        if (c && c[0])
            clt__fail(c[0]->ctx, CLT_ERR_INVALID_SHAPE, WHO ": batch is negative (%lld)",
                      (long long)batch);
        return CLT_ERR_INVALID_SHAPE;
    }
    if (batch == 0)
        return CLT_SUCCESS;
    if (!a || !b || !c || !a_offsets || !b_offsets || !c_offsets)
        return clt__fail(ctx, CLT_ERR_INVALID_ARGUMENT, WHO ": the %s array is NULL",
                         !a ? "a" : !b ? "b" : !c ? "c" : !a_offsets ? "a_offsets"
                         : !b_offsets ? "b_offsets" : "c_offsets");
    if (epilogue && (epilogue->residual || epilogue->dact_y))
        return clt__fail(ctx, CLT_ERR_UNSUPPORTED,
                         WHO ": an epilogue %s is not supported here (use clt_gemm or "
                             "clt_gemm_strided_batched)",
                         epilogue->residual ? "residual" : "dact_y");
    clt__gemm_request *rs = malloc((size_t)batch * sizeof *rs);
    if (!rs)
        return clt__fail(ctx, CLT_ERR_OUT_OF_HOST_MEMORY, WHO ": out of host memory");
    clt_status st = CLT_SUCCESS;
    char who[64];
    for (int64_t i = 0; i < batch && st == CLT_SUCCESS; i++) {
        rs[i] = (clt__gemm_request){ta, tb, m, n, k, alpha, beta, a[i], b[i], c[i],
                                    a_offsets[i], lda, 0, b_offsets[i], ldb, 0,
                                    c_offsets[i], ldc, 0, 1, epilogue, CLT_MATH_DEFAULT};
        snprintf(who, sizeof who, WHO " (entry %lld)", (long long)i);
        st = clt__gemm_check_request(who, &rs[i]);
        /* Every entry must live in the first entry's context. */
        if (st == CLT_SUCCESS && i > 0 && c[i]->ctx != c[0]->ctx)
            st = clt__fail(c[0]->ctx, CLT_ERR_CONTEXT_MISMATCH,
                           "%s: its tensors and entry 0's belong to different contexts", who);
    }
    if (st == CLT_SUCCESS && m > 0 && n > 0) {
        ctx = c[0]->ctx;
        st = check_all_aliasing(ctx, rs, batch);
        if (st == CLT_SUCCESS)
            st = launch_grouped(ctx, rs, batch);
    }
    free(rs);
    return st;
}
