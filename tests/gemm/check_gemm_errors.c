/* Every error path of include/cltensor_gemm.h: the status, a message that names the call (and the
 * culprit), and C unchanged (nothing was enqueued). */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/gemm_test.h"
#include "util/test_util.h"

typedef struct fixture {
    clt_context *ctx;
    clt_tensor *a, *b, *c, *bias4, *res;
    float hc[64];
} fixture;

/* A, B, C: 64 elements each, used as 4x4 row-major matrices; bias of 4, residual of 64. */
static void setup(fixture *f)
{
    f->ctx = gt_context("auto");
    float h[64];
    tu_random_f32(h, 64, -1, 1);
    f->a = gt_tensor(f->ctx, 64, h);
    f->b = gt_tensor(f->ctx, 64, h);
    tu_random_f32(f->hc, 64, -1, 1);
    f->c = gt_tensor(f->ctx, 64, f->hc);
    f->bias4 = gt_tensor(f->ctx, 4, h);
    f->res = gt_tensor(f->ctx, 64, h);
}

static void teardown(fixture *f)
{
    clt_tensor *all[5] = {f->a, f->b, f->c, f->bias4, f->res};
    for (int i = 0; i < 5; i++)
        clt_tensor_free(all[i]);
    tu_context_free(f->ctx);
}

static void expect_fail(fixture *f, clt_status got, clt_status want, const char *who,
                        const char *needle, int line)
{
    ck_assert_msg(got == want, "line %d: %s, expected %s (%s)", line, clt_status_string(got),
                  clt_status_string(want), clt_last_error(f->ctx));
    const char *msg = clt_last_error(f->ctx);
    ck_assert_msg(strstr(msg, who) != NULL, "line %d: message \"%s\" does not name %s", line, msg, who);
    if (needle)
        ck_assert_msg(strstr(msg, needle) != NULL, "line %d: message \"%s\" does not mention %s", line,
                      msg, needle);
    float *now = gt_read(f->c);
    ck_assert_msg(memcmp(now, f->hc, sizeof f->hc) == 0, "line %d: C changed after a failed call", line);
    free(now);
}
#define FAIL_GEMM(call, want, needle) expect_fail(&f, (call), (want), "clt_gemm", (needle), __LINE__)
#define FAIL_AS(who, call, want, needle) expect_fail(&f, (call), (want), (who), (needle), __LINE__)

#define NN CLT_NO_TRANS, CLT_NO_TRANS

START_TEST(gemm_arguments)
{
    fixture f;
    setup(&f);
    FAIL_GEMM(clt_gemm(NN, 4, 4, 4, 1, NULL, 0, 4, f.b, 0, 4, 0, f.c, 0, 4, NULL),
              CLT_ERR_INVALID_ARGUMENT, "a is NULL");
    FAIL_GEMM(clt_gemm(NN, 4, 4, 4, 1, f.a, 0, 4, NULL, 0, 4, 0, f.c, 0, 4, NULL),
              CLT_ERR_INVALID_ARGUMENT, "b is NULL");
    TU_EXPECT_STATUS(clt_gemm(NN, 4, 4, 4, 1, f.a, 0, 4, f.b, 0, 4, 0, NULL, 0, 4, NULL),
                     CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_MESSAGE(clt_last_error(f.ctx), "c is NULL");
    FAIL_GEMM(clt_gemm((clt_transpose)7, CLT_NO_TRANS, 4, 4, 4, 1, f.a, 0, 4, f.b, 0, 4, 0, f.c, 0,
                       4, NULL),
              CLT_ERR_INVALID_ARGUMENT, "clt_transpose");
    FAIL_GEMM(clt_gemm(NN, -1, 4, 4, 1, f.a, 0, 4, f.b, 0, 4, 0, f.c, 0, 4, NULL),
              CLT_ERR_INVALID_SHAPE, "negative");
    FAIL_GEMM(clt_gemm(NN, 4, 4, -2, 1, f.a, 0, 4, f.b, 0, 4, 0, f.c, 0, 4, NULL),
              CLT_ERR_INVALID_SHAPE, "negative");
    /* leading dimensions below the stored row length (op(A) transposed: A is k x m) */
    FAIL_GEMM(clt_gemm(NN, 4, 4, 4, 1, f.a, 0, 3, f.b, 0, 4, 0, f.c, 0, 4, NULL),
              CLT_ERR_INVALID_ARGUMENT, "lda");
    FAIL_GEMM(clt_gemm(CLT_TRANS, CLT_NO_TRANS, 5, 4, 2, 1, f.a, 0, 4, f.b, 0, 4, 0, f.c, 0, 5, NULL),
              CLT_ERR_INVALID_ARGUMENT, "lda");
    FAIL_GEMM(clt_gemm(NN, 4, 4, 4, 1, f.a, 0, 4, f.b, 0, 2, 0, f.c, 0, 4, NULL),
              CLT_ERR_INVALID_ARGUMENT, "ldb");
    FAIL_GEMM(clt_gemm(NN, 4, 4, 4, 1, f.a, 0, 4, f.b, 0, 4, 0, f.c, 0, 3, NULL),
              CLT_ERR_INVALID_ARGUMENT, "ldc");
    /* elements outside their tensors: offsets, ld, negative offsets, overflowing products */
    FAIL_GEMM(clt_gemm(NN, 4, 4, 4, 1, f.a, 49, 4, f.b, 0, 4, 0, f.c, 0, 4, NULL),
              CLT_ERR_INVALID_SHAPE, "A");
    FAIL_GEMM(clt_gemm(NN, 4, 4, 4, 1, f.a, 0, 4, f.b, 0, 21, 0, f.c, 0, 4, NULL),
              CLT_ERR_INVALID_SHAPE, "B");
    FAIL_GEMM(clt_gemm(NN, 4, 4, 4, 1, f.a, 0, 4, f.b, 0, 4, 0, f.c, 60, 4, NULL),
              CLT_ERR_INVALID_SHAPE, "C");
    FAIL_GEMM(clt_gemm(NN, 4, 4, 4, 1, f.a, -1, 4, f.b, 0, 4, 0, f.c, 0, 4, NULL),
              CLT_ERR_INVALID_SHAPE, "before its tensor");
    FAIL_GEMM(clt_gemm(NN, 4, 4, 4, 1, f.a, 0, INT64_MAX / 2, f.b, 0, 4, 0, f.c, 0, 4, NULL),
              CLT_ERR_INVALID_SHAPE, "A");
    FAIL_GEMM(clt_gemm(NN, INT64_MAX, 1, 1, 1, f.a, 0, 1, f.b, 0, 1, 0, f.c, 0, 1, NULL),
              CLT_ERR_INVALID_SHAPE, NULL);
    teardown(&f);
}
END_TEST

START_TEST(gemm_tensors)
{
    fixture f;
    setup(&f);
    clt_context *other = gt_context("auto");
    float h[64] = {0};
    clt_tensor *foreign = gt_tensor(other, 64, h);
    FAIL_GEMM(clt_gemm(NN, 4, 4, 4, 1, foreign, 0, 4, f.b, 0, 4, 0, f.c, 0, 4, NULL),
              CLT_ERR_CONTEXT_MISMATCH, "A");
    int64_t n = 64;
    clt_tensor *ints;
    TU_OK(clt_tensor_create(f.ctx, CLT_I32, 1, &n, &ints));
    FAIL_GEMM(clt_gemm(NN, 4, 4, 4, 1, f.a, 0, 4, ints, 0, 4, 0, f.c, 0, 4, NULL),
              CLT_ERR_INVALID_DTYPE, "i32");
    /* aliasing: C over A, C over B */
    FAIL_GEMM(clt_gemm(NN, 4, 4, 4, 1, f.c, 0, 4, f.b, 0, 4, 0, f.c, 8, 4, NULL), CLT_ERR_ALIASING,
              "C overlaps A");
    FAIL_GEMM(clt_gemm(NN, 2, 2, 2, 1, f.a, 0, 2, f.c, 3, 2, 0, f.c, 0, 2, NULL), CLT_ERR_ALIASING,
              "C overlaps B");
    clt_tensor_free(ints);
    clt_tensor_free(foreign);
    tu_context_free(other);
    teardown(&f);
}
END_TEST

START_TEST(gemm_epilogue_errors)
{
    fixture f;
    setup(&f);
    clt_gemm_epilogue ep;
    clt_gemm_epilogue_init(&ep);
    ep.bias_mode = CLT_BIAS_PER_ROW;
    FAIL_GEMM(clt_gemm(NN, 4, 4, 4, 1, f.a, 0, 4, f.b, 0, 4, 0, f.c, 0, 4, &ep),
              CLT_ERR_INVALID_ARGUMENT, "bias is NULL");
    clt_gemm_epilogue_init(&ep);
    ep.bias = f.bias4;
    FAIL_GEMM(clt_gemm(NN, 4, 4, 4, 1, f.a, 0, 4, f.b, 0, 4, 0, f.c, 0, 4, &ep),
              CLT_ERR_INVALID_ARGUMENT, "CLT_BIAS_NONE");
    ep.bias_mode = (clt_bias_mode)9;
    FAIL_GEMM(clt_gemm(NN, 4, 4, 4, 1, f.a, 0, 4, f.b, 0, 4, 0, f.c, 0, 4, &ep),
              CLT_ERR_INVALID_ARGUMENT, "bias_mode");
    ep.bias_mode = CLT_BIAS_PER_COLUMN; /* n = 5 wants 5 */
    FAIL_GEMM(clt_gemm(NN, 4, 5, 4, 1, f.a, 0, 4, f.b, 0, 5, 0, f.c, 0, 5, &ep),
              CLT_ERR_INVALID_SHAPE, "bias");
    ep.bias_mode = CLT_BIAS_PER_ROW; /* m = 3 wants 3 */
    FAIL_GEMM(clt_gemm(NN, 3, 4, 4, 1, f.a, 0, 4, f.b, 0, 4, 0, f.c, 0, 4, &ep),
              CLT_ERR_INVALID_SHAPE, "bias");
    clt_gemm_epilogue_init(&ep);
    ep.activation = CLT_EXP;
    FAIL_GEMM(clt_gemm(NN, 4, 4, 4, 1, f.a, 0, 4, f.b, 0, 4, 0, f.c, 0, 4, &ep), CLT_ERR_UNSUPPORTED,
              "activation");
    ep.activation = (clt_unary_op)99;
    FAIL_GEMM(clt_gemm(NN, 4, 4, 4, 1, f.a, 0, 4, f.b, 0, 4, 0, f.c, 0, 4, &ep), CLT_ERR_UNSUPPORTED,
              "activation");
    clt_gemm_epilogue_init(&ep);
    ep.residual = f.res;
    ep.ldr = 3;
    FAIL_GEMM(clt_gemm(NN, 4, 4, 4, 1, f.a, 0, 4, f.b, 0, 4, 0, f.c, 0, 4, &ep),
              CLT_ERR_INVALID_ARGUMENT, "ldr");
    ep.ldr = 4;
    ep.residual_offset = 50;
    FAIL_GEMM(clt_gemm(NN, 4, 4, 4, 1, f.a, 0, 4, f.b, 0, 4, 0, f.c, 0, 4, &ep),
              CLT_ERR_INVALID_SHAPE, "residual");
    /* C overlapping the bias or the residual */
    clt_gemm_epilogue_init(&ep);
    ep.bias = f.c;
    ep.bias_mode = CLT_BIAS_PER_COLUMN;
    FAIL_GEMM(clt_gemm(NN, 1, 64, 1, 1, f.a, 0, 1, f.b, 0, 64, 0, f.c, 0, 64, &ep), CLT_ERR_ALIASING,
              "bias");
    clt_gemm_epilogue_init(&ep);
    ep.residual = f.c;
    ep.ldr = 4;
    FAIL_GEMM(clt_gemm(NN, 4, 4, 4, 1, f.a, 0, 4, f.b, 0, 4, 0, f.c, 0, 4, &ep), CLT_ERR_ALIASING,
              "residual");
    teardown(&f);
}
END_TEST

START_TEST(strided_errors)
{
    fixture f;
    setup(&f);
    const char *w = "clt_gemm_strided_batched";
    FAIL_AS(w, clt_gemm_strided_batched(NN, 2, 2, 2, 1, f.a, 0, 2, -4, f.b, 0, 2, 4, 0, f.c, 0, 2, 4,
                                        2, NULL),
            CLT_ERR_INVALID_ARGUMENT, "stride");
    FAIL_AS(w, clt_gemm_strided_batched(NN, 2, 2, 2, 1, f.a, 0, 2, 4, f.b, 0, 2, 4, 0, f.c, 0, 2, 4,
                                        -1, NULL),
            CLT_ERR_INVALID_SHAPE, "batch");
    /* B's 17th matrix runs past its 64 elements (B is checked before C) */
    FAIL_AS(w, clt_gemm_strided_batched(NN, 2, 2, 2, 1, f.a, 0, 2, 0, f.b, 0, 2, 4, 0, f.c, 0, 2, 4,
                                        17, NULL),
            CLT_ERR_INVALID_SHAPE, "B");
    /* C matrices overlapping each other: stride 1, and stride 0 */
    FAIL_AS(w, clt_gemm_strided_batched(NN, 2, 2, 2, 1, f.a, 0, 2, 0, f.b, 0, 2, 0, 0, f.c, 0, 2, 1,
                                        2, NULL),
            CLT_ERR_ALIASING, "overlap");
    FAIL_AS(w, clt_gemm_strided_batched(NN, 2, 2, 2, 1, f.a, 0, 2, 0, f.b, 0, 2, 0, 0, f.c, 0, 2, 0,
                                        2, NULL),
            CLT_ERR_ALIASING, "overlap");
    /* C matrices side by side in one row-major [2, 4] block (stride 2, ldc 4) do not overlap */
    TU_OK(clt_gemm_strided_batched(NN, 2, 2, 2, 1, f.a, 0, 2, 4, f.b, 0, 2, 4, 0, f.c, 0, 4, 2, 2,
                                   NULL));
    teardown(&f);
}
END_TEST

START_TEST(batched_errors)
{
    fixture f;
    setup(&f);
    const char *w = "clt_gemm_batched";
    const clt_tensor *as[2] = {f.a, f.a}, *bs[2] = {f.b, f.b};
    clt_tensor *cs[2] = {f.c, f.c};
    int64_t ao[2] = {0, 16}, bo[2] = {0, 16}, co[2] = {0, 16};
    /* batch < 0: the message is in the context-less slot (and in c[0]'s context: edge_cases) */
    TU_EXPECT_STATUS(clt_gemm_batched(NN, 4, 4, 4, 1, as, ao, 4, bs, bo, 4, 0, cs, co, 4, -1, NULL),
                     CLT_ERR_INVALID_SHAPE);
    TU_EXPECT_MESSAGE(clt_last_error(NULL), "clt_gemm_batched: batch is negative");
    FAIL_AS(w, clt_gemm_batched(NN, 4, 4, 4, 1, as, NULL, 4, bs, bo, 4, 0, cs, co, 4, 2, NULL),
            CLT_ERR_INVALID_ARGUMENT, "a_offsets");
    FAIL_AS(w, clt_gemm_batched(NN, 4, 4, 4, 1, as, ao, 4, bs, bo, 4, 0, NULL, co, 4, 2, NULL),
            CLT_ERR_INVALID_ARGUMENT, "c");
    clt_gemm_epilogue ep;
    clt_gemm_epilogue_init(&ep);
    ep.residual = f.res;
    ep.ldr = 4;
    FAIL_AS(w, clt_gemm_batched(NN, 4, 4, 4, 1, as, ao, 4, bs, bo, 4, 0, cs, co, 4, 2, &ep),
            CLT_ERR_UNSUPPORTED, "residual");
    int64_t bad[2] = {0, 50};
    FAIL_AS(w, clt_gemm_batched(NN, 4, 4, 4, 1, as, bad, 4, bs, bo, 4, 0, cs, co, 4, 2, NULL),
            CLT_ERR_INVALID_SHAPE, "(entry 1)");
    /* C of entry 1 over entry 0's C, and over entry 0's A */
    int64_t co_clash[2] = {0, 8};
    FAIL_AS(w, clt_gemm_batched(NN, 4, 4, 4, 1, as, ao, 4, bs, bo, 4, 0, cs, co_clash, 4, 2, NULL),
            CLT_ERR_ALIASING, "overlaps C");
    const clt_tensor *as2[2] = {f.a, f.c};
    int64_t ao2[2] = {0, 0}, co2[2] = {0, 32}; /* entry 1 reads A from entry 0's C */
    FAIL_AS(w, clt_gemm_batched(NN, 4, 4, 4, 1, as2, ao2, 4, bs, bo, 4, 0, cs, co2, 4, 2, NULL),
            CLT_ERR_ALIASING, "A of entry 1");
    clt_context *other = gt_context("auto");
    float h[64] = {0};
    clt_tensor *foreign = gt_tensor(other, 64, h);
    clt_tensor *cs3[2] = {f.c, foreign};
    const clt_tensor *as3[2] = {f.a, foreign}, *bs3[2] = {f.b, foreign};
    FAIL_AS(w, clt_gemm_batched(NN, 4, 4, 4, 1, as3, ao, 4, bs3, bo, 4, 0, cs3, co, 4, 2, NULL),
            CLT_ERR_CONTEXT_MISMATCH, "(entry 1)");
    clt_tensor_free(foreign);
    tu_context_free(other);
    teardown(&f);
}
END_TEST

START_TEST(matmul_errors)
{
    fixture f;
    setup(&f);
    const char *w = "clt_matmul";
    int64_t s88[2] = {8, 8}, s4x16[2] = {4, 16}, s2x4x8[3] = {2, 4, 8};
    clt_tensor *a, *b, *b2, *a3, *out;
    TU_OK(clt_tensor_reshape(f.a, 2, s88, &a));
    TU_OK(clt_tensor_reshape(f.b, 2, s88, &b));
    TU_OK(clt_tensor_reshape(f.b, 2, s4x16, &b2));
    TU_OK(clt_tensor_reshape(f.a, 3, s2x4x8, &a3));
    TU_OK(clt_tensor_reshape(f.c, 2, s88, &out));
    FAIL_AS(w, clt_matmul(NULL, b, out), CLT_ERR_INVALID_ARGUMENT, "a is NULL");
    FAIL_AS(w, clt_matmul(a, b2, out), CLT_ERR_INVALID_SHAPE, NULL);  /* K 8 vs 4 */
    FAIL_AS(w, clt_matmul(a3, b, out), CLT_ERR_INVALID_SHAPE, NULL);  /* out must be 3-D */
    FAIL_AS(w, clt_matmul(out, b, out), CLT_ERR_ALIASING, "C overlaps A");
    int64_t n = 64;
    clt_tensor *ints, *ints2;
    TU_OK(clt_tensor_create(f.ctx, CLT_I32, 1, &n, &ints));
    TU_OK(clt_tensor_reshape(ints, 2, s88, &ints2));
    FAIL_AS(w, clt_matmul(a, ints2, out), CLT_ERR_INVALID_DTYPE, "i32");
    clt_tensor *all[7] = {a, b, b2, a3, out, ints, ints2};
    for (int i = 0; i < 7; i++)
        clt_tensor_free(all[i]);
    teardown(&f);
}
END_TEST

Suite *gemm_errors_suite(void)
{
    Suite *s = suite_create("gemm_errors");
    TCase *tc = tcase_create("errors");
    tcase_add_test(tc, gemm_arguments);
    tcase_add_test(tc, gemm_tensors);
    tcase_add_test(tc, gemm_epilogue_errors);
    tcase_add_test(tc, strided_errors);
    tcase_add_test(tc, batched_errors);
    tcase_add_test(tc, matmul_errors);
    suite_add_tcase(s, tc);
    return s;
}
