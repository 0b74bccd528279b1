/* ops suite: layout, indexing and random ops at transformer / CNN shapes (issue 20). Parameters
 * per setup (bench_ops.c): permute_0213 p = x's 4 dims (out swaps axes 1 and 2: heads split);
 * transpose_last2 p = x's 3 dims; slice_step2 p = {rows, cols} (x[::2, ::2]); concat3_last p = the
 * 3 dims of each of 3 inputs; pad_reflect p = NCHW (1 each side of H, W); bias_grad p = {rows, cols}
 * (sum over rows); embedding* p = {vocab, dim, tokens}; masked_fill_causal p = {batch*heads, seq};
 * topk p = {rows, n, k}; dropout / uniform / normal p[0] = n. */
#include "bench_cases.h"

static const bench_case ops_cases[] = {
    {"permute_0213/8x1024x8x64", bench_setup_permute_0213, {8, 1024, 8, 64}, 0},
    {"transpose_last2/64x512x64", bench_setup_transpose_last2, {64, 512, 64}, 0},
    {"transpose_last2/1x4096x4096", bench_setup_transpose_last2, {1, 4096, 4096}, 0},
    {"slice_step2/4096x4096", bench_setup_slice_step2, {4096, 4096}, 0},
    {"concat3_last/8x1024x256", bench_setup_concat3_last, {8, 1024, 256}, 0},
    {"pad_reflect/8x64x56x56", bench_setup_pad_reflect_hw, {8, 64, 56, 56}, 0},
    {"bias_grad/8192x512", bench_setup_broadcast_backward_rows, {8192, 512}, 0},
    {"embedding/512x128x1024", bench_setup_embedding, {512, 128, 1024}, 0},
    {"embedding_backward_atomic/512x128x1024", bench_setup_embedding_bwd_atomic, {512, 128, 1024}, 0},
    {"embedding_backward_det/512x128x1024", bench_setup_embedding_bwd_det, {512, 128, 1024}, 0},
    {"masked_fill_causal/64x512", bench_setup_masked_fill_causal, {64, 512}, 0},
    {"topk/64x32000k64", bench_setup_topk, {64, 32000, 64}, 0},
    {"topk/64x32000k1", bench_setup_topk, {64, 32000, 1}, 0},
    {"dropout/16777216", bench_setup_dropout, {16777216}, 0},
    {"random_uniform/16777216", bench_setup_random_uniform, {16777216}, 0},
    {"random_normal/16777216", bench_setup_random_normal, {16777216}, 0},
};

const bench_suite bench_suite_ops = {"ops", ops_cases, (int)(sizeof ops_cases / sizeof ops_cases[0])};
