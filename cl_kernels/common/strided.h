/* A strided index description shared by the layout and index kernels, passed by value as one kernel
 * argument (the host mirror is clt__sd in src/ops/common/strided.h: every field is 64-bit, so both
 * sides lay it out alike). A kernel walks `count` elements of an n-d box `shape` (row-major, last
 * axis fastest); element coordinates map into operand A through strides `a` (plus a_off) and into
 * operand B through `b` (plus b_off). c, d, e are per-kernel extras (slice start/step, pad sizes,
 * a second box): each kernel's banner says what it puts there. Strides are in elements, >= 0. */
#ifndef CLT_COMMON_STRIDED_H
#define CLT_COMMON_STRIDED_H

#define CLT_SD_MAX 8

typedef struct clt_sd {
    long ndim, count, a_off, b_off, e0, e1;
    long shape[CLT_SD_MAX];
    long a[CLT_SD_MAX];
    long b[CLT_SD_MAX];
    long c[CLT_SD_MAX];
    long d[CLT_SD_MAX];
    long e[CLT_SD_MAX];
} clt_sd;

/* Every loop over the axes runs over all CLT_SD_MAX of them, fully unrolled, skipping those at or
 * past ndim (a uniform branch): so every array index is a constant and the description stays in
 * scalar registers. A loop bounded by ndim indexes the arrays at run time, and AMD's compiler then
 * copies the whole argument to scratch memory (440 bytes per lane, measured on gfx902). */

/* arr[i] for a run-time i < CLT_SD_MAX, by constant indices only (arr: a field of the description). */
#define CLT_SD_PICK(arr, i)                                                                        \
    ((i) == 0 ? (arr)[0] : (i) == 1 ? (arr)[1] : (i) == 2 ? (arr)[2] : (i) == 3 ? (arr)[3]         \
     : (i) == 4 ? (arr)[4] : (i) == 5 ? (arr)[5] : (i) == 6 ? (arr)[6] : (arr)[7])

/* Offsets in A and B of element i of the box. */
static inline void clt_sd_offsets(const clt_sd *s, long i, long *ao, long *bo)
{
    long a = s->a_off, b = s->b_off;
    const int nd = (int)s->ndim;
#pragma unroll
    for (int d = CLT_SD_MAX - 1; d >= 0; d--) {
        if (d >= nd)
            continue;
        long n = s->shape[d];
        long q = i / n, c = i - q * n;
        a += c * s->a[d];
        b += c * s->b[d];
        i = q;
    }
    *ao = a;
    *bo = b;
}

#endif
