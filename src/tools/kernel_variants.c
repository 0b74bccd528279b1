/* The kernel variants a context's dispatch can select (see kernel_variants.h). Each family's part
 * walks that family's table and formats options with the family's own formatter where one exists;
 * the few option strings still composed inside an op's launch code are composed here the same way,
 * next to a pointer to that code (keep them in step: the ISA check compiles what is listed here). */
#include "tools/kernel_variants.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/attention/attention_internal.h"
#include "ops/common/launch.h"
#include "ops/conv/conv2d.h"
#include "ops/conv/conv2d_backward.h"
#include "ops/conv/conv_params.h"
#include "ops/fft/fft_shape.h"
#include "ops/gemm/gemm_epilogue.h"
#include "ops/gemm/gemm_params.h"
#include "ops/gemm/gemm_tiled_choice.h"
#include "ops/layout/layout_internal.h"
#include "ops/random/random_options.h"
#include "program/program.h"
#include "tools/expr_variants.h"
#include "tools/mlp_variants.h"

static clt_status add(clt__variant_list *l, clt__variant_use use, const char *program,
                      const char *options, int wg, char *source)
{
    for (int i = 0; i < l->n; i++) {
        clt__variant *v = &l->v[i];
        if (!strcmp(v->program, program) && !strcmp(v->options, options) &&
            ((!v->source && !source) || (v->source && source && !strcmp(v->source, source)))) {
            if (use == CLT__VARIANT_SELECTED)
                v->use = use; /* selected by this class as well: the rules apply */
            free(source);
            return CLT_SUCCESS;
        }
    }
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 64;
        clt__variant *nv = realloc(l->v, (size_t)cap * sizeof *nv);
        if (!nv) {
            free(source);
            return CLT_ERR_OUT_OF_HOST_MEMORY;
        }
        l->v = nv;
        l->cap = cap;
    }
    clt__variant *v = &l->v[l->n++];
    memset(v, 0, sizeof *v);
    v->use = use;
    snprintf(v->program, sizeof v->program, "%s", program);
    snprintf(v->options, sizeof v->options, "%s", options);
    v->launch_wg = wg;
    v->source = source;
    return CLT_SUCCESS;
}

/* The activations the GEMM epilogue fuses (gemm_epilogue.c clt__epilogue_act_name). */
static const clt_unary_op fused_acts[] = {CLT_IDENTITY, CLT_RELU,    CLT_GELU_ERF, CLT_GELU_TANH,
                                          CLT_TANH,     CLT_SIGMOID, CLT_SILU};
#define N_FUSED_ACTS (int)(sizeof fused_acts / sizeof fused_acts[0])

/* gemm_tiled.c run(): " -DIDX64=%d[ -DACT=<fn>]" after the family options. */
static void act_suffix(char *buf, size_t cap, int idx64, clt_unary_op act)
{
    const char *name = clt__epilogue_act_name(act);
    snprintf(buf, cap, " -DIDX64=%d%s%s", idx64, *name ? " -DACT=" : "", name);
}

/* The tiled, small/gemv and CPU GEMM kernels of table t (gemm_tiled.c try_tiled / try_cpu /
 * gemm_family_kernel). */
static clt_status gemm_variants(clt_context *ctx, const clt__gemm_table *t, clt__variant_use use,
                                clt__variant_list *l)
{
    clt_status st = CLT_SUCCESS;
    for (int a = 0; a < N_FUSED_ACTS && !st; a++)
        for (int idx64 = 0; idx64 < 2 && !st; idx64++) {
            char suffix[80], opts[400], base[256];
            act_suffix(suffix, sizeof suffix, idx64, fused_acts[a]);
            for (int i = 0; i < t->n_tiled && !st; i++) {
                const clt__gemm_tiled_cfg *c = &t->tiled[i];
                if (!clt__gemm_tiled_fits(ctx, c))
                    continue;
                for (int split = 0; split < 2 && !st; split++) {
                    if (split && c->mwg * c->nwg > SPLIT_MAX_TILE)
                        continue; /* the next config takes its splits (gemm_tiled.c try_tiled;
                                     all but C grids past the split counters at 128x128) */
                    /* big tiles split only when a switch forces it: built, not selected */
                    clt__variant_use u =
                        split && c->mwg * c->nwg >= SPLIT_MAX_TILE ? CLT__VARIANT_COMPILE_ONLY : use;
                    clt__gemm_tiled_options(c, base, sizeof base);
                    if (split)
                        strncat(base, " -DSPLITK=1", sizeof base - strlen(base) - 1);
                    int txw = clt__gemm_tiled_warp_cols(t, c);
                    if (txw > 0)
                        snprintf(base + strlen(base), sizeof base - strlen(base), " -DTXW=%d", txw);
                    snprintf(opts, sizeof opts, "%s%s%s", base, clt__fixed_group_option(ctx), suffix);
                    st = add(l, u, "gemm_tiled", opts, clt__gemm_tiled_wg(c), NULL);
                }
            }
            if (!st) {
                snprintf(opts, sizeof opts, "-DGEMV_WG=%d%s", t->gemv_f * t->gemv_s, suffix);
                st = add(l, use, "gemm", opts, 0, NULL);
            }
            if (!st && (t->prefer_cpu || use == CLT__VARIANT_COMPILE_ONLY)) {
                clt__gemm_cpu_options(&t->cpu, base, sizeof base);
                snprintf(opts, sizeof opts, "%s%s", base, suffix);
                st = add(l, use, "gemm_cpu", opts, 0, NULL);
            }
        }
    return st ? st : add(l, use, "gemm_epilogue", "", 0, NULL);
}

/* conv2d_ours.c (implicit GEMM tiles with CHMAJOR 0/1, the direct kernels, the CPU kernel with 16
 * or 8 pixels per item), conv2d_winograd.c (plain and flipped weights), the backward kernels. */
static clt_status conv_variants(clt_context *ctx, const clt__conv_table *t, int cpu,
                                clt__variant_use use, clt__variant_list *l)
{
    clt_status st = CLT_SUCCESS;
    char opts[320];
    for (int i = 0; i < t->n_tiled && !st && !cpu; i++) {
        const clt__conv_tiled_cfg *c = &t->tiled[i];
        if (clt__conv_tiled_local_bytes(c) > ctx->limits.local_mem_budget ||
            (uint64_t)clt__conv_tiled_wg(c) > ctx->limits.max_work_group_size)
            continue;
        for (int chmajor = 0; chmajor < 2 && !st; chmajor++) {
            clt__conv_tiled_options(c, chmajor, opts, sizeof opts);
            st = add(l, use, "conv2d", opts, clt__conv_tiled_wg(c), NULL);
        }
    }
    static const int pixels[] = {16, 8};
    for (int i = 0; i < 2 && !st && cpu; i++) {
        snprintf(opts, sizeof opts, "-DRPI=%d -DNV=%d", t->cpu_rpi, pixels[i]);
        st = add(l, use, "conv2d_cpu", opts, 0, NULL);
    }
    const char *wino = cpu ? "conv2d_winograd_cpu" : "conv2d_winograd";
    if (!st)
        st = add(l, use, wino, "", 0, NULL);
    if (!st)
        st = add(l, use, wino, "-DWINO_FLIP=1", 0, NULL);
    if (!st)
        st = add(l, use, "conv2d_direct", "", 0, NULL);
    if (!st)
        st = add(l, use, "conv2d_backward_col", "", 0, NULL);
    /* conv2d_stem.c for the usual first layers: ResNet's 7x7 stride 2, the 3x3 stride 2 of MobileNet
     * and EfficientNet, CIFAR's 3x3 stride 1 (its options follow the geometry, as every stem layer's do) */
    static const int64_t stems[3][4] = {{64, 7, 2, 3}, {32, 3, 2, 1}, {64, 3, 1, 1}};
    for (int i = 0; i < 3 && !st && !cpu; i++) {
        clt__conv_geom g = {1, 3, 224, 224, stems[i][0], stems[i][1], stems[i][1], 0, 0, 1, 3, stems[i][0],
                            stems[i][2], stems[i][2], stems[i][3], stems[i][3], stems[i][3], stems[i][3], 1, 1,
                            CLT_MATH_FP32};
        g.ho = g.wo = (224 + 2 * stems[i][3] - stems[i][1]) / stems[i][2] + 1;
        size_t wg, groups;
        if (clt__conv_stem_options(ctx, &g, 1, opts, sizeof opts, &wg, &groups))
            st = add(l, use, "conv2d_stem", opts, (int)wg, NULL);
        g.n = 8; /* the grad-weight's grid keeps partials for a batch (conv2d_backward_stem.c) */
        size_t pf;
        if (!st && clt__convb_stem_options(ctx, &g, 1, opts, sizeof opts, &wg, &groups, &pf))
            st = add(l, use, "conv2d_stem_dw", opts, (int)wg, NULL);
    }
    if (!st && !cpu) {
        if (!(st = add(l, use, "conv2d_backward", CLT__CONVB_DX_OPTS, 256, NULL)))
            st = add(l, use, "conv2d_backward", CLT__CONVB_DW_OPTS, 256, NULL);
        if (!st)
            st = add(l, use, "conv2d_winograd_dw", "", 0, NULL);
    }
    return st;
}

/* reduce.c get_kernel(): ops 0..8 (7, 8: argmax, argmin), layouts 0..3, float4 loads on GPU rows;
 * WG 256 halved to the context's limits (16 bytes of partials per item). */
static clt_status reduce_variants(clt_context *ctx, int cpu, clt__variant_use use,
                                  clt__variant_list *l)
{
    unsigned wg = 256;
    while (wg > ctx->limits.max_work_group_size && wg > 1)
        wg >>= 1;
    while (wg > 1 && (uint64_t)wg * 16 + 64 > ctx->limits.local_mem_budget)
        wg >>= 1;
    int nv_load = clt__device_class_of(ctx) == CLT__CLASS_NVIDIA && !cpu;
    clt_status st = CLT_SUCCESS;
    for (int op = 0; op <= 8 && !st; op++)
        for (int layout = 0; layout <= 3 && !st; layout++) {
            int contig = cpu && (layout == 0 || layout == 2), cpu_rows = cpu && layout == 0;
            for (int vec4 = 0; vec4 <= (layout == 0 && !cpu) && !st; vec4++) {
                char opts[200];
                snprintf(opts, sizeof opts,
                         "-DRED_OP=%d -DLAYOUT=%d -DWG=%u -DMAX_COUNTERS=%u -DCONTIG=%d -DCPU_ROWS=%d"
                         " -DVEC4=%d -DNV_LOAD=%d",
                         op, layout, cpu_rows ? 1u : wg, 1024u, contig, cpu_rows, vec4,
                         vec4 ? nv_load : 0);
                st = add(l, use, "reduce", opts, cpu_rows ? 0 : (int)wg, NULL);
            }
        }
    return st;
}

/* softmax.c first_plan()/plan_team(): teams of 1, 8, 64 with 8 registers, whole-group teams with
 * 8/16/32 registers (8 at most on AMD) or streaming (0); groups of 256 (1024 for streaming rows
 * where allowed). */
static clt_status softmax_variants(clt_context *ctx, int cpu, clt__variant_use use,
                                   clt__variant_list *l)
{
    if (cpu)
        return add(l, use, "softmax", "-DSM_CPU=1", 0, NULL);
    uint64_t limit = ctx->limits.max_work_group_size, by_local = ctx->limits.local_mem_budget / 8;
    if (by_local < limit)
        limit = by_local;
    unsigned p2 = 1;
    while ((uint64_t)p2 * 2 <= limit)
        p2 *= 2;
    unsigned groups[2] = {p2 < 256 ? p2 : 256, p2 < 1024 ? p2 : 1024};
    clt_status st = CLT_SUCCESS;
    for (int gi = 0; gi < 2 && !st; gi++) {
        unsigned wg = groups[gi];
        if (gi == 1 && wg == groups[0])
            break;
        static const unsigned teams[] = {1, 8, 64};
        char opts[96];
        for (int t = 0; t < 3 && !st && gi == 0; t++)
            if (teams[t] < wg) {
                snprintf(opts, sizeof opts, "-DSM_WG=%u -DSM_TEAM=%u -DSM_K=%u", wg, teams[t], 8u);
                st = add(l, use, "softmax", opts, (int)wg, NULL);
            }
        static const unsigned ks[] = {8, 16, 32, 0};
        unsigned k_cap = clt__device_class_of(ctx) == CLT__CLASS_AMD ? 8 : 32; /* softmax.c max_k */
        /* the big group serves rows longer than 32 x 256: 16 or 32 registers, or streaming */
        for (int k = gi ? 1 : 0; k < 4 && !st; k++) {
            if (ks[k] > k_cap)
                continue;
            snprintf(opts, sizeof opts, "-DSM_WG=%u -DSM_TEAM=%u -DSM_K=%u", wg, wg, ks[k]);
            st = add(l, use, "softmax", opts, (int)wg, NULL);
        }
    }
    return st;
}

/* train.c train_kernel(): WG 256 halved to the limits. */
static clt_status train_variants(clt_context *ctx, clt__variant_use use, clt__variant_list *l)
{
    size_t wg = 256;
    while (wg > ctx->limits.max_work_group_size && wg > 1)
        wg >>= 1;
    while (wg > 1 && wg * sizeof(float) > ctx->limits.local_mem_budget)
        wg >>= 1;
    char opts[32];
    snprintf(opts, sizeof opts, "-DWG=%zu", wg);
    return add(l, use, "train", opts, (int)wg, NULL);
}

/* The layout, index and random families (src/ops/layout, index, random): fixed kernels; GPUs
 * add the 32-bit layout copy and the work-group topk (256 items), CPUs the per-row topk with its
 * candidate arrays of 8 .. 256 (topk.c) and the lane-parallel random_normal (random.c), NVIDIA
 * random.cl's own log (random.c). */
static clt_status layout_index_random_variants(clt__device_class cls, clt__variant_use use,
                                               clt__variant_list *l)
{
    const int cpu = cls == CLT__CLASS_CPU;
    clt_status st = add(l, use, "layout", "", 0, NULL);
    if (!st && !cpu)
        st = add(l, use, "layout", "-DLT_IDX32=1", 0, NULL);
    if (!st && !cpu && *clt__join_options(LT_JOIN_ILP)) /* layout_concat.c: layout_join4_x4 */
        st = add(l, use, "layout", clt__join_options(LT_JOIN_ILP), 0, NULL);
    if (!st && cpu) /* layout_ops.c: the 64-column bias gradient; layout_slice.c: pad */
        st = add(l, use, "layout_cpu", "", 0, NULL);
    if (!st)
        st = add(l, use, "index", "", 0, NULL);
    if (!st && !cpu)
        st = add(l, use, "index", "-DTK_WG=256", 256, NULL);
    for (unsigned k = 8; !st && cpu && k <= 256; k *= 2) {
        char opts[32];
        snprintf(opts, sizeof opts, "-DTK_KMAX=%u", k);
        st = add(l, use, "index", opts, 0, NULL);
    }
    if (!st) /* the class's own devices: CPU-class ones are CPUs */
        st = add(l, use, "random", clt__random_options(cpu, cpu ? 1 : RANDOM_GPU_ILP), 0, NULL);
    return st;
}

/* norm_common.c clt__norm_kernel, loss_common.c clt__loss_kernel, multi_tensor.c mt_kernel: WG 256
 * (1 on CPU-style devices for norm and loss) halved until `floats_per_item` floats per item fit the
 * local memory budget. */
static clt_status wg_variant(clt_context *ctx, clt__variant_use use, clt__variant_list *l,
                             const char *program, int cpu, size_t floats_per_item)
{
    size_t wg = cpu ? 1 : 256;
    while (wg > ctx->limits.max_work_group_size && wg > 1)
        wg >>= 1;
    while (wg > 1 && wg * floats_per_item * sizeof(float) > ctx->limits.local_mem_budget)
        wg >>= 1;
    char opts[32];
    snprintf(opts, sizeof opts, "-DWG=%zu", wg);
    return add(l, use, program, opts, (int)wg, NULL);
}

/* The norm, loss and multi-tensor optimiser families (issue 20). */
static clt_status nn_variants(clt_context *ctx, int cpu, clt__variant_use use, clt__variant_list *l)
{
    clt_status st = wg_variant(ctx, use, l, "norm", cpu, 2);
    if (!st && !cpu && ctx->limits.max_work_group_size >= 256) /* row_norm.c row_group: rows <= 1024 */
        st = add(l, use, "norm", "-DWG=128", 128, NULL);
    if (!st)
        st = wg_variant(ctx, use, l, "batch_norm", cpu, 2);
    if (!st)
        st = wg_variant(ctx, use, l, "loss", cpu, 6);
    if (!st) /* multi_tensor.c mt_kernel: CPU-style devices add -DMT_CPU=1 (mt_apply_cpu) */
        st = cpu ? add(l, use, "multi_tensor", "-DWG=256 -DMT_CPU=1", 256, NULL)
                 : wg_variant(ctx, use, l, "multi_tensor", 0, 1);
    return st;
}

/* attention.c pick_kernel: the micro-tiled kernels GPU classes select by default, per head dim,
 * kernel and alignment. CPU devices keep attention.cl's row kernels unless CLT_ATTENTION_IMPL says
 * otherwise; of those the CPU programs (the *_cpu kernels, get_kernel's -DATT_CPU=1) are listed. */
static clt_status attention_variants(clt_context *ctx, int cpu, clt__variant_use use,
                                     clt__variant_list *l)
{
    static const int dims[3] = {32, 64, 128};
    clt_status st = CLT_SUCCESS;
    for (int di = 0; di < 3 * ATT_KERNELS && !st && cpu; di++) {
        att_kernel w = (att_kernel)(di / 3);
        att_tiles t = clt__attention_tiles(ctx, w, dims[di % 3]);
        for (int aligned = 0; aligned < 2 && !st; aligned++) {
            char opts[160];
            snprintf(opts, sizeof opts,
                     "-DATT_D=%d -DATT_BM=%u -DATT_BN=%u -DATT_ALIGNED=%d -DATT_UNROLL=0 -DATT_CPU=1",
                     dims[di % 3], t.bm, t.bn, aligned);
            st = add(l, use, "attention", opts, (int)clt__attention_group(w, t), NULL);
        }
    }
    for (int di = 0; di < 3 && !st && !cpu; di++)
        for (int w = 0; w < ATT_KERNELS && !st; w++) {
            att_mtiles m;
            if (!clt__attention_mtiles(ctx, (att_kernel)w, dims[di], &m))
                continue;
            for (int aligned = 0; aligned < 2 && !st; aligned++) {
                char opts[200];
                clt__attention_tiled_options(ctx, (att_kernel)w, dims[di], m, aligned, 1, opts,
                                             sizeof opts);
                st = add(l, use, "attention_tiled", opts, (int)clt__attention_tiled_group(m), NULL);
                /* the fused backward's row deltas and dK/dV-with-dQ kernels (attention.c) */
                if (!st && w == ATT_BWD_DKDV && clt__attention_dq_mode(m) == ATT_DQ_FUSED) {
                    clt__attention_fused_options(ctx, 1, dims[di], m, aligned, 1, opts, sizeof opts);
                    st = add(l, use, "attention_tiled", opts, (int)ATT_DELTA_GROUP, NULL);
                    if (!st) {
                        clt__attention_fused_options(ctx, 0, dims[di], m, aligned, 1, opts,
                                                     sizeof opts);
                        st = add(l, use, "attention_tiled", opts,
                                 (int)clt__attention_tiled_group(m), NULL);
                    }
                }
            }
        }
    return st;
}

/* fft_ours.c stage_options: fft_stage per special radix (0 = the generic stage) and index width; CPU
 * devices (clt__cpu_style) build fft_rows instead, per index width; spectral_mix.c takes no
 * options. VkFFT's kernels are generated by VkFFT at plan time (fft_vkfft.c): outside this list. */
static clt_status fft_variants(clt_context *ctx, int cpu, clt__variant_use use, clt__variant_list *l)
{
    static const int radices[] = {0, 2, 3, 4, 5, 7};
    /* fft_local and fft_wide are built per length at plan time; these stand for the rest (the bench
     * suite's batched lengths: radices 2, 4, 5, 17 and 3; 4096 and 8192 fft_wide's one and two
     * rounds, compile-only where the profile keeps them on the stage kernels: 8192 on gfx902) */
    static const int64_t local_lengths[] = {64, 85, 1000, 1536, 2048, 4096, 8192};
    clt_status st = CLT_SUCCESS;
    for (int i = 0; i < 7 && !st && !cpu; i++)
        for (int idx32 = 0; idx32 < 2 && !st; idx32++) {
            char opts[256];
            int wg;
            const char *kernel = clt__fft_local_variant(ctx, local_lengths[i], idx32, opts, sizeof opts, &wg);
            if (kernel)
                st = add(l, use, kernel, opts, wg, NULL);
            else if ((kernel = clt__fft_wide_variant(ctx, local_lengths[i], idx32, opts, sizeof opts, &wg)))
                st = add(l, CLT__VARIANT_COMPILE_ONLY, kernel, opts, wg, NULL);
        }
    for (int idx32 = 0; idx32 < 2 && cpu && !st; idx32++)
        st = add(l, use, "fft_rows", idx32 ? "-DFFT_IDX=int" : "-DFFT_IDX=long", 0, NULL);
    for (int r = 0; r < 6 && !cpu && !st; r++)
        for (int idx32 = 0; idx32 < 2 && !st; idx32++) {
            char opts[48];
            snprintf(opts, sizeof opts, "-DFFT_RADIX=%d -DFFT_IDX=%s", radices[r], idx32 ? "int" : "long");
            st = add(l, use, "fft_stockham", opts, 0, NULL);
        }
    return st ? st : add(l, use, "spectral_mix", "", 0, NULL);
}

static clt_status class_variants(clt_context *ctx, clt__device_class cls, clt__variant_use use,
                                 clt__variant_list *l)
{
    int cpu = cls == CLT__CLASS_CPU;
    const clt__gemm_table *gt = use == CLT__VARIANT_SELECTED ? clt__gemm_table_for(ctx)
                                                             : clt__gemm_table_of_class(cls);
    clt_status st = gemm_variants(ctx, gt, use, l);
    if (!st)
        st = conv_variants(ctx, clt__conv_table_of_class(cls), cpu, use, l);
    if (!st)
        st = reduce_variants(ctx, cpu, use, l);
    if (!st)
        st = softmax_variants(ctx, cpu, use, l);
    if (!st)
        st = train_variants(ctx, use, l);
    if (!st)
        st = nn_variants(ctx, cpu, use, l);
    if (!st)
        st = attention_variants(ctx, cpu, use, l);
    if (!st)
        st = fft_variants(ctx, cpu, use, l);
    if (!st)
        st = add(l, use, cpu ? "pool2d_cpu" : "pool2d", "", 0, NULL);
    if (!st && cpu) /* pool2d_global.c: small planes on CPU devices, else the GPU kernel */
        st = add(l, use, "pool2d", "", 0, NULL);
    if (!st)
        st = add(l, use, "tensor", "", 0, NULL);
    if (!st) /* src/dist/node.c: the node path's sums (built with CLT_WITH_MPI; listed always) */
        st = add(l, use, "dist_sum", "", 0, NULL);
    if (!st)
        st = layout_index_random_variants(cls, use, l);
    if (!st)
        st = clt__expr_variants(ctx, cpu, use, l, add);
    if (!st) /* every class: auto runs silu networks fused even on CPU devices */
        st = clt__mlp_variants(ctx, use, l, add);
    return st;
}

clt_status clt__list_variants(clt_context *ctx, int cpu_too, clt__variant_list *list)
{
    memset(list, 0, sizeof *list);
    clt__device_class cls = clt__device_class_of(ctx);
    if (cls == CLT__CLASS_CPU && !clt__cpu_style(ctx))
        cls = CLT__CLASS_DEFAULT;
    clt_status st = class_variants(ctx, cls, CLT__VARIANT_SELECTED, list);
    if (!st && cpu_too && cls != CLT__CLASS_CPU)
        st = class_variants(ctx, CLT__CLASS_CPU, CLT__VARIANT_COMPILE_ONLY, list);
    if (st)
        clt__variant_list_free(list);
    return st;
}

void clt__variant_list_free(clt__variant_list *list)
{
    for (int i = 0; i < list->n; i++)
        free(list->v[i].source);
    free(list->v);
    memset(list, 0, sizeof *list);
}

clt_status clt__variant_source(clt_context *ctx, const clt__variant *v, char **out)
{
    if (v->source) {
        *out = strdup(v->source);
        return *out ? CLT_SUCCESS : CLT_ERR_OUT_OF_HOST_MEMORY;
    }
    size_t len;
    return clt__kernel_source(ctx, v->program, ctx->limits.kernel_dir, out, &len);
}
