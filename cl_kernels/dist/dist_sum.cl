/* clt_dist_allreduce within one node (src/dist/node.c): one term of a segment owner's sum over the
 * ranks, taken in rank order so that every rank's bits are the same whoever owns the segment:
 *   dst[i] = (a[i] + b[i]) / div, and the same into dst2 when `both` (the last term: the tensor and
 *   the own staging slot the peers read the result from, in one pass)
 * a is the sum so far (rank 0's data for the first term), b the next rank's data, read straight from
 * that rank's shared staging memory (a CL_MEM_USE_HOST_PTR buffer). div is 1 except in the last term
 * of a mean (the number of ranks): the same division the ring path does. Offsets in elements. */
__kernel void dist_sum(__global float *dst, ulong dst_off, __global float *dst2, ulong dst2_off, int both,
                       __global const float *a, ulong a_off, __global const float *b, ulong b_off, ulong n,
                       float div)
{
    for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) {
        float v = (a[a_off + i] + b[b_off + i]) / div;
        dst[dst_off + i] = v;
        if (both)
            dst2[dst2_off + i] = v;
    }
}
