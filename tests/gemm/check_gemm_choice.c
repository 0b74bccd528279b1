/* The tiled GEMM's automatic config and split choice (clt__gemm_choose_tiled) on the built-in NVIDIA
 * table, with the context's compute units set to the H200's 132: the rules of gemm_tiled_choice.c
 * and the table on the shapes they were measured on. Pure host logic, no launches. */
#include <check.h>

#include "ops/gemm/gemm_tiled_choice.h"
#include "ops/gemm/gemm_params.h"
#include "runtime/runtime.h"
#include "util/test_util.h"

#define NVIDIA_TABLE (clt__gemm_table_of_class(CLT__CLASS_NVIDIA))

static void expect_choice(clt_context *ctx, int64_t m, int64_t n, int64_t k, int want_cfg,
                          int want_pieces)
{
    clt__gemm_problem p = {0};
    p.m = m, p.n = n, p.k = k, p.batch = 1;
    int pieces = -1, cfg = clt__gemm_choose_tiled(ctx, &p, NVIDIA_TABLE, &pieces);
    ck_assert_msg(cfg == want_cfg && pieces == want_pieces,
                  "%lld x %lld x %lld: config %d x%d pieces, want %d x%d", (long long)m,
                  (long long)n, (long long)k, cfg, pieces, want_cfg, want_pieces);
}

START_TEST(test_choice_h200_shapes)
{
    clt_context *ctx = tu_context();
    clt_device_entry *entry = (clt_device_entry *)ctx->dev->entry; /* this test's child only */
    uint32_t saved = entry->info.compute_units;
    entry->info.compute_units = 132;
    for (int i = 0; i < NVIDIA_TABLE->n_tiled; i++)
        if (!clt__gemm_tiled_fits(ctx, &NVIDIA_TABLE->tiled[i])) {
            entry->info.compute_units = saved;
            tu_context_free(ctx);
            return; /* a device too small for the table: nothing to check */
        }
    expect_choice(ctx, 4096, 4096, 4096, 0, 1);   /* 512 groups of 256x128 */
    expect_choice(ctx, 2048, 2048, 2048, 1, 1);   /* 128 groups of 256x128 < 132: 128x128 */
    expect_choice(ctx, 512, 512, 512, 2, 4);      /* 64 tiles of 64x64: 2 groups per CU */
    expect_choice(ctx, 64, 576, 25088, 2, 59);    /* grad-weight n8c64: 64x64 fits n exactly */
    expect_choice(ctx, 64, 147, 100352, 3, 106);  /* the stem's: least padding, 64x32 */
    expect_choice(ctx, 64, 147, 1024, 4, 16);     /* not reduction-shaped, k too short to fill the
                                                     CUs on 64-row tiles: 32x32 split */
    entry->info.compute_units = saved;
    tu_context_free(ctx);
}
END_TEST

/* The warp layout each config of the NVIDIA table is built with: 8 x 4 blocks where the config can
 * take them, the default rows where they would equal it or do not fit. */
START_TEST(test_warp_cols)
{
    const clt__gemm_table *t = NVIDIA_TABLE;
    const int want[] = {8, 8, 8, 0, 0};
    ck_assert_int_eq(t->n_tiled, 5);
    for (int i = 0; i < t->n_tiled; i++)
        ck_assert_msg(clt__gemm_tiled_warp_cols(t, &t->tiled[i]) == want[i], "config %d: TXW %d, want %d",
                      i, clt__gemm_tiled_warp_cols(t, &t->tiled[i]), want[i]);
    const clt__gemm_tiled_cfg narrow = {64, 64, 16, 2, 16, 4, 1}; /* 32 / 8 rows > 2 */
    ck_assert_int_eq(clt__gemm_tiled_warp_cols(t, &narrow), 0);
    clt__gemm_table plain = *t;
    plain.warp_cols = 0;
    ck_assert_int_eq(clt__gemm_tiled_warp_cols(&plain, &t->tiled[0]), 0);
}
END_TEST

Suite *gemm_choice_suite(void)
{
    Suite *s = suite_create("gemm_choice");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_choice_h200_shapes);
    tcase_add_test(tc, test_warp_cols);
    suite_add_tcase(s, tc);
    return s;
}
