/* CPU-style kernels (gemm_cpu.cl, conv2d_cpu.cl): the NV-wide vector type of a work item's row
 * strip and the RPI-times repetition macro. -D contract: NV (8 or 16), RPI (1..8), set by the
 * including file before this header. */
#ifndef CLT_CPU_ROWS_H
#define CLT_CPU_ROWS_H

#if NV == 16
typedef float16 floatn;
#define VLOADN vload16
#define VSTOREN vstore16
#elif NV == 8
typedef float8 floatn;
#define VLOADN vload8
#define VSTOREN vstore8
#else
#error "NV must be 8 or 16"
#endif
#if RPI < 1 || RPI > 8
#error "RPI must be 1..8"
#endif

/* Repeat X(r) for r = 0 .. RPI-1: accumulators as named variables, never an array (POCL keeps
 * private arrays of vectors on the stack). */
#define ROWS_1(X) X(0)
#define ROWS_2(X) ROWS_1(X) X(1)
#define ROWS_3(X) ROWS_2(X) X(2)
#define ROWS_4(X) ROWS_3(X) X(3)
#define ROWS_5(X) ROWS_4(X) X(4)
#define ROWS_6(X) ROWS_5(X) X(5)
#define ROWS_7(X) ROWS_6(X) X(6)
#define ROWS_8(X) ROWS_7(X) X(7)
#define ROWS_CAT(n) ROWS_##n
#define ROWS_N(n) ROWS_CAT(n)
#define FOR_ROWS ROWS_N(RPI)

#endif
