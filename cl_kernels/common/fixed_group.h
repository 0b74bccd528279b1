/* CLT_FIXED_GROUP(n): the kernel's reqd_work_group_size(n, 1, 1), which the host drops with
 * -DCLT_REQD=0 where a compiler turns the attribute into a register target that costs spills.
 *
 * Why: NVIDIA's front end makes the attribute PTX's .reqntid without a minimum block count; ptxas
 * then lowers a kernel's registers to the count at which one more block fits an SM, even at the
 * price of local-memory spills (bench/results/h200/nv_spills.md: mlp_train 64 -> 48 registers with
 * 48 B of spills). Elsewhere the attribute pays (GEMM 2048 on the H200: 420 against 497 us
 * without it), so on NVIDIA the host builds with it, reads ptxas' log and rebuilds without it only
 * when that build spilled (src/program/fixed_group_build.c). Without the attribute the host still
 * checks the group against the built kernel's limit (CL_KERNEL_WORK_GROUP_SIZE) before a launch.
 * The host finds the programs to guard by the macro's use in the kernel file. AMD keeps the
 * attribute: without it AMD's compiler assumes at most 256 items (cl_kernels/README). */
#ifndef CLT_REQD
#define CLT_REQD 1
#endif
#if CLT_REQD
#define CLT_FIXED_GROUP(n) __attribute__((reqd_work_group_size(n, 1, 1)))
#else
#define CLT_FIXED_GROUP(n)
#endif
