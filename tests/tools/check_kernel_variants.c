/* The kernel variant list that the AMD ISA check compiles (src/tools/kernel_variants.c) follows the
 * dispatch tables: every tiled GEMM / convolution config of the context's table appears with the
 * table's own option string, nothing is listed twice, every source can be produced, and the
 * profile's rules show (gfx902: softmax keeps at most 8 registers per item). No launches. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "ops/common/launch.h"
#include "ops/conv/conv_params.h"
#include "ops/gemm/gemm_params.h"
#include "ops/gemm/gemm_tiled_choice.h"
#include "ops/mlp/mlp.h"
#include "runtime/runtime.h"
#include "tools/kernel_variants.h"
#include "util/test_util.h"

static int listed(const clt__variant_list *l, const char *program, const char *opts_prefix,
                  clt__variant_use use)
{
    size_t n = strlen(opts_prefix);
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->v[i].program, program) && !strncmp(l->v[i].options, opts_prefix, n) &&
            l->v[i].use == use)
            return 1;
    return 0;
}

START_TEST(test_tables_listed)
{
    clt_context *ctx = tu_context();
    clt__variant_list l;
    ck_assert_int_eq(clt__list_variants(ctx, 1, &l), CLT_SUCCESS);
    ck_assert_int_gt(l.n, 20);
    const clt__gemm_table *gt = clt__gemm_table_for(ctx);
    int tiled = 0;
    for (int i = 0; i < gt->n_tiled; i++) {
        if (!clt__gemm_tiled_fits(ctx, &gt->tiled[i]))
            continue;
        char opts[256];
        clt__gemm_tiled_options(&gt->tiled[i], opts, sizeof opts);
        ck_assert_msg(listed(&l, "gemm_tiled", opts, CLT__VARIANT_SELECTED), "gemm %s missing", opts);
        tiled++;
    }
    ck_assert_int_gt(tiled, 0);
    const clt__conv_table *ct = clt__conv_table_for(ctx);
    if (!ct->prefer_cpu) /* CPU tables: im2col + GEMM or the CPU kernel, tiles only when forced */
        for (int i = 0; i < ct->n_tiled; i++)
            for (int chmajor = 0; chmajor < 2; chmajor++) {
                const clt__conv_tiled_cfg *c = &ct->tiled[i];
                if (clt__conv_tiled_local_bytes(c) > ctx->limits.local_mem_budget ||
                    (uint64_t)clt__conv_tiled_wg(c) > ctx->limits.max_work_group_size)
                    continue;
                char opts[256];
                clt__conv_tiled_options(c, chmajor, opts, sizeof opts);
                ck_assert_msg(listed(&l, "conv2d", opts, CLT__VARIANT_SELECTED), "conv %s missing",
                              opts);
            }
    clt__variant_list_free(&l);
    tu_context_free(ctx);
}
END_TEST

START_TEST(test_distinct_and_sources)
{
    clt_context *ctx = tu_context();
    clt__variant_list l;
    ck_assert_int_eq(clt__list_variants(ctx, 1, &l), CLT_SUCCESS);
    int exprs = 0;
    for (int i = 0; i < l.n; i++) {
        const clt__variant *v = &l.v[i];
        for (int j = 0; j < i; j++)
            ck_assert_msg(strcmp(v->program, l.v[j].program) || strcmp(v->options, l.v[j].options) ||
                              (v->source && l.v[j].source && strcmp(v->source, l.v[j].source)),
                          "listed twice: %s %s", v->program, v->options);
        char *src = NULL;
        ck_assert_int_eq(clt__variant_source(ctx, v, &src), CLT_SUCCESS);
        ck_assert_ptr_nonnull(strstr(src, "__kernel"));
        ck_assert_ptr_null(strstr(src, "#include \"common/")); /* inlined */
        if (!strncmp(v->program, "expr:", 5)) {
            exprs++;
            ck_assert_ptr_nonnull(strstr(src, "expr_kernel"));
        }
        free(src);
    }
    ck_assert_int_ge(exprs, 8); /* every unary op, every derivative, binaries, where */
    clt__variant_list_free(&l);
    tu_context_free(ctx);
}
END_TEST

/* The fused MLP programs listed are the ones a real network takes: a PINN of width 32 created on
 * the fused path has each of its shapes (big tiles; small ones on GPU profiles) listed, with the
 * group it launches, and the optimizer kernel is there. */
START_TEST(test_mlp_listed)
{
    clt_context *ctx = tu_context();
    clt__variant_list l;
    ck_assert_int_eq(clt__list_variants(ctx, 1, &l), CLT_SUCCESS);
    clt_mlp_desc d;
    clt_mlp_desc_init(&d);
    d.encoding = CLT_MLP_ENCODING_FOURIER, d.fourier_features = 32, d.layers = 4;
    d.path = CLT_MLP_PATH_FUSED;
    for (int i = 0; i < 4; i++)
        d.widths[i] = i == 3 ? 2 : 32, d.activations[i] = i == 3 ? CLT_IDENTITY : CLT_TANH;
    int64_t bs[2] = {2, 32};
    clt_tensor *B;
    ck_assert_int_eq(clt_tensor_create(ctx, CLT_F32, 2, bs, &B), CLT_SUCCESS);
    ck_assert_int_eq(clt_tensor_fill(B, 1.0), CLT_SUCCESS);
    clt_mlp *mlp;
    ck_assert_int_eq(clt_mlp_create(ctx, &d, B, 1, &mlp), CLT_SUCCESS);
    ck_assert_int_ge(mlp->variants, 1);
    if (!clt__cpu_style(ctx))
        ck_assert_int_eq(mlp->variants, 2);
    for (int v = 0; v < mlp->variants; v++) {
        int found = 0;
        for (int i = 0; i < l.n; i++)
            found |= !strcmp(l.v[i].program, "mlp_fused") &&
                     !strcmp(l.v[i].options, mlp->cfg[v].options) &&
                     l.v[i].launch_wg == mlp->cfg[v].wg && l.v[i].use == CLT__VARIANT_SELECTED;
        ck_assert_msg(found, "mlp_fused %s missing", mlp->cfg[v].options);
    }
    char upd[32];
    clt__mlp_update_options(ctx, upd, sizeof upd, NULL);
    ck_assert(listed(&l, "mlp_update", upd, CLT__VARIANT_SELECTED));
    clt_mlp_free(mlp);
    clt_tensor_free(B);
    clt__variant_list_free(&l);
    tu_context_free(ctx);
}
END_TEST

/* The AMD rules as the list shows them: softmax at most 8 registers per item, no SPLITK on tiles
 * the automatic choice never splits, every launch group within the profile's 256 items. */
START_TEST(test_amd_rules)
{
    clt_context *ctx = tu_context();
    if (clt__device_class_of(ctx) != CLT__CLASS_AMD) {
        tu_context_free(ctx);
        return; /* the gfx902 run checks it */
    }
    clt__variant_list l;
    ck_assert_int_eq(clt__list_variants(ctx, 1, &l), CLT_SUCCESS);
    for (int i = 0; i < l.n; i++) {
        const clt__variant *v = &l.v[i];
        if (v->use != CLT__VARIANT_SELECTED)
            continue;
        ck_assert_int_le(v->launch_wg, 256);
        if (!strcmp(v->program, "softmax"))
            ck_assert_msg(strstr(v->options, "-DSM_K=0") || strstr(v->options, "-DSM_K=8"), "%s",
                          v->options);
        if (!strcmp(v->program, "gemm_tiled") && strstr(v->options, "-DSPLITK=1"))
            ck_assert_ptr_null(strstr(v->options, "-DMWG=128 -DNWG=128"));
    }
    clt__variant_list_free(&l);
    tu_context_free(ctx);
}
END_TEST

Suite *kernel_variants_suite(void)
{
    Suite *s = suite_create("kernel_variants");
    TCase *tc = tcase_create("list");
    tcase_add_test(tc, test_tables_listed);
    tcase_add_test(tc, test_distinct_and_sources);
    tcase_add_test(tc, test_amd_rules);
    tcase_add_test(tc, test_mlp_listed);
    suite_add_tcase(s, tc);
    return s;
}
