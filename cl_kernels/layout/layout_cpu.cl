/* Layout kernels for CPU devices only (POCL), in a program of their own: their vector accumulators
 * would not fit a GPU's register budget, and a GPU never selects them.
 *
 * layout_sum_leading_cpu64: the bias gradient of layout_sum_leading_cpu (layout.cl) with 64
 *   adjacent columns per work item: dy is [e1 rows, count columns] contiguous from a_off, dx
 *   [count] from b_off. Four float16 accumulators, rows in order (the same order as
 *   layout_sum_broadcast and layout_sum_leading_cpu, so the same bits). Each row gives an item four
 *   64-byte lines instead of one: the strided sweep down the rows streams better (bias_grad/8192x512
 *   on POCL: 0.91 ms with 16 columns per item, see src/ops/layout/layout_ops.c). A partial last
 *   block goes 16 columns at a time, then one by one.
 *
 * -D contract: none.
 */
#include "common/strided.h"

#define SUM_ACC(q) float16 acc##q = (float16)(0.0f);
#define SUM_ROW(q) acc##q += vload16(q, row);
#define SUM_STORE(q) vstore16(acc##q, q, out);

__kernel void layout_sum_leading_cpu64(__global float *dst, __global const float *src, clt_sd s)
{
    /* the description's fields in locals: POCL reloads the argument block after stores to dst */
    const long cols = s.count, rows = s.e1, a_off = s.a_off, b_off = s.b_off;
    const long chunks = (cols + 63) / 64;
    for (long c = get_global_id(0); c < chunks; c += get_global_size(0)) {
        long c0 = c * 64;
        if (c0 + 64 <= cols) {
            SUM_ACC(0) SUM_ACC(1) SUM_ACC(2) SUM_ACC(3)
            for (long r = 0; r < rows; r++) {
                __global const float *row = src + a_off + r * cols + c0;
                SUM_ROW(0) SUM_ROW(1) SUM_ROW(2) SUM_ROW(3)
            }
            __global float *out = dst + b_off + c0;
            SUM_STORE(0) SUM_STORE(1) SUM_STORE(2) SUM_STORE(3)
            continue;
        }
        for (; c0 + 16 <= cols; c0 += 16) {
            SUM_ACC(0)
            for (long r = 0; r < rows; r++) {
                __global const float *row = src + a_off + r * cols + c0;
                SUM_ROW(0)
            }
            __global float *out = dst + b_off + c0;
            SUM_STORE(0)
        }
        for (long j = c0; j < cols; j++) {
            float acc = 0.0f;
            for (long r = 0; r < rows; r++)
                acc += src[a_off + r * cols + j];
            dst[b_off + j] = acc;
        }
    }
}
