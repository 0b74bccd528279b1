/* Which tiled GEMM config (tune/gemm_params.c) a product runs with and into how many k pieces it is
 * split (gemm_tiled.cl, SPLITK), from the tile grid against the device's compute units. */
#include "ops/gemm/gemm_tiled_choice.h"

int clt__gemm_tiled_fits(const clt_context *ctx, const clt__gemm_tiled_cfg *c)
{
    return clt__gemm_tiled_local_bytes(c) <= ctx->limits.local_mem_budget &&
           (uint64_t)clt__gemm_tiled_wg(c) <= ctx->limits.max_work_group_size;
}

uint64_t clt__gemm_tile_groups(const clt__gemm_problem *p, const clt__gemm_tiled_cfg *c)
{
    return (uint64_t)((p->m + c->mwg - 1) / c->mwg) * (uint64_t)((p->n + c->nwg - 1) / c->nwg) *
           (uint64_t)p->batch;
}

/* Pieces of k that bring the grid of config c to `target` groups, within the split limits
 * (1: none). */
static int split_pieces(const clt__gemm_problem *p, const clt__gemm_tiled_cfg *c, uint64_t target)
{
    uint64_t groups = clt__gemm_tile_groups(p, c);
    int64_t max_pieces = p->k / ((int64_t)c->kwg * MIN_SPLIT_STEPS);
    if (max_pieces > MAX_PIECES)
        max_pieces = MAX_PIECES;
    if (groups >= target || max_pieces < 2 || groups > SPLIT_COUNTERS)
        return 1;
    uint64_t want = (target + groups - 1) / groups;
    return want > (uint64_t)max_pieces ? (int)max_pieces : (int)want;
}

/* The automatic choice, from H200 measurements (split K, ours, in us):
 *   grad-weight 64 x 147 x 100352: 64x64 x128 182.2, 64x32 x128 171.8, 32x32 x64 183.2;
 *   512^3: 32x32 unsplit 27.5, 64x64 x3 25.3, x8 21.0, 128x128 x8 56.7;
 *   256x1024x1024: 32x32 unsplit 49.0, 64x64 x12 39.7, 128x128 x9 64.7;
 *   1000x128x128: 32x32 unsplit (128 groups) 8.7, split in 2 11.2.
 * So: the largest config whose own grid gives every compute unit a group (and is not mostly
 * padding while a smaller config is left); else the first config
 * below 128x128 (a split 128x128 grid runs one starved group per SM) whose grid is
 * under half the compute units and, split toward SPLIT_GROUPS_PER_CU groups per unit, fills them;
 * else the smallest config, split only when its grid is under half the units. */
#define SPLIT_GROUPS_PER_CU 4
/* ... but 2 (rounded down to a power of two) when the tile grid alone is already this big: 512^3
 * (64 tiles of 64x64) ran 15.65-16.06 us in 4 pieces against 16.47-16.96 in 8 over five H200 calls
 * (3 and 6 pieces, uneven chunks of its 32 k steps, 17.3-18.0) */
#define SPLIT_FULL_GRID_TILES 64
#define SPLIT_FULL_GRID_GROUPS_PER_CU 2
/* The area of m x n rounded up to config c's tiles. */
static uint64_t covered_area(const clt__gemm_problem *p, const clt__gemm_tiled_cfg *c)
{
    return (uint64_t)((p->m + c->mwg - 1) / c->mwg * c->mwg) *
           (uint64_t)((p->n + c->nwg - 1) / c->nwg * c->nwg);
}
/* Whether over half of config c's tiles would be padding (a 256-row tile on a 64-row product, as
 * Winograd's 36 products of Co x tiles are): then a smaller config is taken if one fills the grid. */
static int mostly_padding(const clt__gemm_problem *p, const clt__gemm_tiled_cfg *c)
{
    return 2 * (uint64_t)p->m * (uint64_t)p->n < covered_area(p, c);
}
/* A product that is mostly reduction (k >= 16 max(m, n): grad-weight GEMMs) spends nearly all its
 * time in the split tiles, padding included: among the split candidates from `from` on with 64 or
 * more rows per tile, the one covering m x n with the least area (ties: the bigger tile). */
static int reduction_shaped(const clt__gemm_problem *p)
{
    return p->k >= 16 * (p->m > p->n ? p->m : p->n);
}
static int least_padding(const clt_context *ctx, const clt__gemm_problem *p,
                         const clt__gemm_table *t, int from)
{
    int best = from;
    for (int j = from + 1; j < t->n_tiled; j++)
        if (t->tiled[j].mwg >= 64 && clt__gemm_tiled_fits(ctx, &t->tiled[j]) &&
            covered_area(p, &t->tiled[j]) < covered_area(p, &t->tiled[best]))
            best = j;
    return best;
}
int clt__gemm_choose_tiled(const clt_context *ctx, const clt__gemm_problem *p,
                           const clt__gemm_table *t, int *pieces)
{
    uint64_t cus = ctx->dev->entry->info.compute_units ? ctx->dev->entry->info.compute_units : 1;
    int smallest = -1;
    *pieces = 1;
    for (int i = 0; i < t->n_tiled; i++) {
        const clt__gemm_tiled_cfg *c = &t->tiled[i];
        if (!clt__gemm_tiled_fits(ctx, c))
            continue;
        smallest = i;
        uint64_t groups = clt__gemm_tile_groups(p, c);
        if (groups >= cus && !(i + 1 < t->n_tiled && mostly_padding(p, c)))
            return i;
        if (c->mwg * c->nwg < SPLIT_MAX_TILE && 2 * groups < cus) {
            int pick = reduction_shaped(p) ? least_padding(ctx, p, t, i) : i;
            uint64_t per_cu = clt__gemm_tile_groups(p, &t->tiled[pick]) >= SPLIT_FULL_GRID_TILES
                                  ? SPLIT_FULL_GRID_GROUPS_PER_CU
                                  : SPLIT_GROUPS_PER_CU;
            int q = split_pieces(p, &t->tiled[pick], per_cu * cus);
            if (per_cu == SPLIT_FULL_GRID_GROUPS_PER_CU) /* even pieces of a power-of-two k */
                while (q & (q - 1))
                    q &= q - 1;
            if (clt__gemm_tile_groups(p, &t->tiled[pick]) * (uint64_t)q >= cus) {
                *pieces = q;
                return pick;
            }
        }
    }
    if (smallest < 0)
        return t->n_tiled - 1;
    if (2 * clt__gemm_tile_groups(p, &t->tiled[smallest]) < cus)
        *pieces = split_pieces(p, &t->tiled[smallest], SPLIT_GROUPS_PER_CU * cus);
    return smallest;
}
