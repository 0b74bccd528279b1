/* Work-group tree sums for kernels that run one work-group per row/channel (norm, loss).
 * -D contract: WG, the exact local size, a power of two (the including file checks it).
 * Every item of the group must call these (they contain barriers); each returns the total to all
 * items. The order of additions is fixed (item i's partial, then the tree), so results are
 * deterministic for a given WG. */
#ifndef CLT_GROUP_SUM_H
#define CLT_GROUP_SUM_H

static inline float group_sum1(__local float *buf, float v, uint lid)
{
    buf[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint w = WG / 2; w > 0; w >>= 1) {
        if (lid < w)
            buf[lid] += buf[lid + w];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    float total = buf[0];
    barrier(CLK_LOCAL_MEM_FENCE); /* buf may be reused at once */
    return total;
}

static inline float2 group_sum2(__local float2 *buf, float2 v, uint lid)
{
    buf[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint w = WG / 2; w > 0; w >>= 1) {
        if (lid < w)
            buf[lid] += buf[lid + w];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    float2 total = buf[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return total;
}

#endif
