/* Work-group sums for kernels that run one work-group per row/channel (norm, loss, optimisers).
 * -D contract: WG, the exact local size, a power of two (the including file checks it).
 * Every item of the group must call these (they contain barriers); each returns the total to all
 * items. The order of additions is fixed, so results are deterministic for a given WG.
 *
 * Groups of 32 items or more sum in two levels with three barriers: lane l < 16 adds the partials
 * l, l + 16, l + 32, ... (adjacent lanes, adjacent words: no bank conflicts) into buf[l], then
 * every item adds buf[0 .. 15] in order (one broadcast read each). 16, not 32, lanes: compilers
 * hoist the second level's reads, and 32 float2s took gfx902's rownorm_dparams_segs and
 * batchnorm_grad_split to 65-68 VGPRs (3 waves per SIMD); an unroll pragma there crashed POCL. A tree over WG items waited at
 * log2(WG) + 2 barriers: 10 at 256, twice per row in the norm forward, whose rows of 1024 floats
 * then took ~20 us at 4096 rows on an H200 (PyTorch 15 us) with memory nowhere near busy. Smaller
 * groups keep the tree. */
#ifndef CLT_GROUP_SUM_H
#define CLT_GROUP_SUM_H

#define GS_LANES 16 /* first-level lanes; WG >= 2 * GS_LANES takes the two-level form */

#define GROUP_SUM_BODY(T)                                                                         \
    {                                                                                             \
        buf[lid] = v;                                                                             \
        barrier(CLK_LOCAL_MEM_FENCE);                                                             \
        if (WG >= 2 * GS_LANES) {                                                                 \
            if (lid < GS_LANES) { /* buf[lid] is read by this lane alone: overwritten in place */ \
                T a = buf[lid];                                                                   \
                for (uint j = lid + GS_LANES; j < WG; j += GS_LANES)                              \
                    a += buf[j];                                                                  \
                buf[lid] = a;                                                                     \
            }                                                                                     \
            barrier(CLK_LOCAL_MEM_FENCE);                                                         \
            T total = buf[0];                                                                     \
            for (uint j = 1; j < GS_LANES; j++)                                                   \
                total += buf[j];                                                                  \
            barrier(CLK_LOCAL_MEM_FENCE); /* buf may be reused at once */                         \
            return total;                                                                         \
        }                                                                                         \
        for (uint w = WG / 2; w > 0; w >>= 1) {                                                   \
            if (lid < w)                                                                          \
                buf[lid] += buf[lid + w];                                                         \
            barrier(CLK_LOCAL_MEM_FENCE);                                                         \
        }                                                                                         \
        T total = buf[0];                                                                         \
        barrier(CLK_LOCAL_MEM_FENCE);                                                             \
        return total;                                                                             \
    }

static inline float group_sum1(__local float *buf, float v, uint lid) GROUP_SUM_BODY(float)

static inline float2 group_sum2(__local float2 *buf, float2 v, uint lid) GROUP_SUM_BODY(float2)

#endif
