#include <string.h>

#include "ref/layout_ref.h"

int64_t ref_strides(int ndim, const int64_t *shape, int64_t *strides)
{
    int64_t s = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        strides[d] = s;
        s *= shape[d];
    }
    return s;
}

/* Coordinates of element i of shape. */
static void coords(int64_t i, int ndim, const int64_t *shape, int64_t *c)
{
    for (int d = ndim - 1; d >= 0; d--) {
        c[d] = i % shape[d];
        i /= shape[d];
    }
}

void ref_strided_copy(const uint32_t *src, int64_t off, int ndim, const int64_t *shape,
                      const int64_t *strides, uint32_t *dst)
{
    int64_t st[8], n = ref_strides(ndim, shape, st), c[8];
    for (int64_t i = 0; i < n; i++) {
        coords(i, ndim, shape, c);
        int64_t o = off;
        for (int d = 0; d < ndim; d++)
            o += c[d] * strides[d];
        dst[i] = src[o];
    }
}

/* The x coordinate an out coordinate reads, or -1 (constant border). */
static int64_t pad_source(int64_t o, int64_t before, int64_t len, int mode)
{
    int64_t x = o - before;
    if (mode == 1) {
        if (x < 0)
            x = -x;
        if (x >= len)
            x = 2 * (len - 1) - x;
    }
    return x >= 0 && x < len ? x : -1;
}

void ref_pad(const uint32_t *x, int ndim, const int64_t *xs, const int64_t *before,
             const int64_t *after, int mode, uint32_t fill, uint32_t *out)
{
    int64_t os[8], ost[8], xst[8], c[8];
    for (int d = 0; d < ndim; d++)
        os[d] = xs[d] + before[d] + after[d];
    int64_t n = ref_strides(ndim, os, ost);
    ref_strides(ndim, xs, xst);
    for (int64_t i = 0; i < n; i++) {
        coords(i, ndim, os, c);
        int64_t o = 0;
        int in = 1;
        for (int d = 0; d < ndim && in; d++) {
            int64_t s = pad_source(c[d], before[d], xs[d], mode);
            in = s >= 0;
            o += s * xst[d];
        }
        out[i] = in ? x[o] : fill;
    }
}

void ref_pad_backward(const float *dy, int ndim, const int64_t *xs, const int64_t *before,
                      const int64_t *after, int mode, double *dx)
{
    int64_t os[8], ost[8], xst[8], c[8];
    for (int d = 0; d < ndim; d++)
        os[d] = xs[d] + before[d] + after[d];
    int64_t n = ref_strides(ndim, os, ost), nx = ref_strides(ndim, xs, xst);
    memset(dx, 0, (size_t)nx * sizeof *dx);
    for (int64_t i = 0; i < n; i++) {
        coords(i, ndim, os, c);
        int64_t o = 0;
        int in = 1;
        for (int d = 0; d < ndim && in; d++) {
            int64_t s = pad_source(c[d], before[d], xs[d], mode);
            in = s >= 0;
            o += s * xst[d];
        }
        if (in)
            dx[o] += dy[i];
    }
}

void ref_broadcast_backward(const float *dy, int ndim, const int64_t *ys, int xndim,
                            const int64_t *xs, double *dx)
{
    int64_t al[8], ast[8], yst[8], c[8];
    for (int d = 0; d < ndim; d++)
        al[d] = d - (ndim - xndim) >= 0 ? xs[d - (ndim - xndim)] : 1;
    int64_t nx = ref_strides(ndim, al, ast), ny = ref_strides(ndim, ys, yst);
    memset(dx, 0, (size_t)nx * sizeof *dx);
    for (int64_t i = 0; i < ny; i++) {
        coords(i, ndim, ys, c);
        int64_t o = 0;
        for (int d = 0; d < ndim; d++)
            o += (al[d] == 1 ? 0 : c[d]) * ast[d];
        dx[o] += dy[i];
    }
}

void ref_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3], k0 = key[0], k1 = key[1];
    for (int r = 0; r < 10; r++) {
        if (r > 0) {
            k0 += 0x9E3779B9u;
            k1 += 0xBB67AE85u;
        }
        uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
        uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
        uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
        c0 = hi1 ^ c1 ^ k0;
        c1 = lo1;
        c2 = hi0 ^ c3 ^ k1;
        c3 = lo0;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}
