/* "Last group finishes" for kernels that split one reduction over several work-groups (norm
 * split statistics): each group publishes its partial to global memory, then calls
 * last_group_arrives, which fences, bumps the group set's counter and tells every item of the
 * group whether it was the last of `groups` to arrive. Only that group goes on to merge the
 * partials (in a fixed order: deterministic, no float atomics), reading them through volatile
 * pointers so no stale cached copy is used, and then calls last_group_reset so the counter is
 * zero for the next launch (the host zeroes counters once, when the workspace is new).
 * Every item of the group must call last_group_arrives (it contains barriers). */
#ifndef CLT_LAST_GROUP_H
#define CLT_LAST_GROUP_H

static inline int last_group_arrives(__global volatile uint *counter, uint groups,
                                     __local volatile int *flag, uint lid)
{
    mem_fence(CLK_GLOBAL_MEM_FENCE); /* this item's partial is visible before the count */
    barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
    if (lid == 0)
        *flag = atomic_inc(counter) == groups - 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    const int last = *flag;
    if (last)
        mem_fence(CLK_GLOBAL_MEM_FENCE); /* the other groups' partials are read after the count */
    return last;
}

static inline void last_group_reset(__global volatile uint *counter, uint lid)
{
    if (lid == 0)
        atomic_xchg(counter, 0u);
}

#endif
