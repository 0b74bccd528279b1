/* Direct DFTs in double (twiddles from exact integer products reduced mod n) and the spectral mix. */
#include "ref/fft_ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define REF_PI 3.14159265358979323846

/* tw[2m], tw[2m+1] = cos, sin of dir 2 pi m / n */
static void dft_line(double *x, int64_t n, int64_t stride, double *tmp, const double *tw)
{
    for (int64_t k = 0; k < n; k++) {
        double re = 0, im = 0;
        for (int64_t j = 0; j < n; j++) {
            int64_t m = (j * k) % n;
            double c = tw[2 * m], s = tw[2 * m + 1];
            double xr = x[2 * j * stride], xi = x[2 * j * stride + 1];
            re += xr * c - xi * s;
            im += xr * s + xi * c;
        }
        tmp[2 * k] = re;
        tmp[2 * k + 1] = im;
    }
    for (int64_t k = 0; k < n; k++) {
        x[2 * k * stride] = tmp[2 * k];
        x[2 * k * stride + 1] = tmp[2 * k + 1];
    }
}

void ref_dft(double *x, int rank, const int64_t *n, int dir, double scale)
{
    int64_t total = 1, maxn = 1;
    for (int a = 0; a < rank; a++) {
        total *= n[a];
        if (n[a] > maxn)
            maxn = n[a];
    }
    double *tmp = malloc(sizeof(double) * 2 * (size_t)maxn);
    double *tw = malloc(sizeof(double) * 2 * (size_t)maxn);
    for (int a = 0; a < rank; a++) {
        for (int64_t m = 0; m < n[a]; m++) {
            double ang = dir * 2.0 * REF_PI * (double)m / (double)n[a];
            tw[2 * m] = cos(ang);
            tw[2 * m + 1] = sin(ang);
        }
        int64_t stride = 1;
        for (int b = a + 1; b < rank; b++)
            stride *= n[b];
        int64_t lines = total / n[a];
        for (int64_t l = 0; l < lines; l++) {
            int64_t outer = l / stride, inner = l % stride;
            dft_line(x + 2 * (outer * n[a] * stride + inner), n[a], stride, tmp, tw);
        }
    }
    for (int64_t i = 0; i < 2 * total; i++)
        x[i] *= scale;
    free(tmp);
    free(tw);
}

void ref_c2r(const double *half, double *out, int rank, const int64_t *n, double scale)
{
    int64_t total = 1;
    for (int a = 0; a < rank; a++)
        total *= n[a];
    int64_t last = n[rank - 1], h = last / 2 + 1;
    double *full = malloc(sizeof(double) * 2 * (size_t)total);
    for (int64_t e = 0; e < total; e++) {
        int64_t idx[3] = {0, 0, 0}, rem = e;
        for (int a = rank - 1; a >= 0; a--) {
            idx[a] = rem % n[a];
            rem /= n[a];
        }
        int conj = idx[rank - 1] >= h;
        int64_t src = 0;
        for (int a = 0; a < rank; a++) {
            int64_t len = a == rank - 1 ? h : n[a];
            int64_t i = conj ? (n[a] - idx[a]) % n[a] : idx[a];
            src = src * len + i;
        }
        full[2 * e] = half[2 * src];
        full[2 * e + 1] = conj ? -half[2 * src + 1] : half[2 * src + 1];
    }
    ref_dft(full, rank, n, 1, scale);
    for (int64_t e = 0; e < total; e++)
        out[e] = full[2 * e];
    free(full);
}

/* The weight row of (h, k) for corner c: -1 outside the corners. */
static int64_t corner_row(int64_t h, int64_t H, int64_t m1, int *c)
{
    if (h < m1) {
        *c = 0;
        return h;
    }
    if (h >= H - m1) {
        *c = 1;
        return h - (H - m1);
    }
    return -1;
}

void ref_spectral_mix(const double *x, const double *w, double *out, int64_t B, int64_t I, int64_t O,
                      int64_t H, int64_t Wf, int64_t m1, int64_t m2)
{
    for (int64_t b = 0; b < B; b++)
        for (int64_t o = 0; o < O; o++)
            for (int64_t h = 0; h < H; h++)
                for (int64_t k = 0; k < Wf; k++) {
                    double re = 0, im = 0;
                    int c;
                    int64_t hm = corner_row(h, H, m1, &c);
                    if (hm >= 0 && k < m2)
                        for (int64_t i = 0; i < I; i++) {
                            const double *xv = x + 2 * (((b * I + i) * H + h) * Wf + k);
                            const double *wv = w + 2 * ((((c * I + i) * O + o) * m1 + hm) * m2 + k);
                            re += xv[0] * wv[0] - xv[1] * wv[1];
                            im += xv[0] * wv[1] + xv[1] * wv[0];
                        }
                    double *ov = out + 2 * (((b * O + o) * H + h) * Wf + k);
                    ov[0] = re;
                    ov[1] = im;
                }
}

void ref_spectral_mix_backward(const double *x, const double *w, const double *dout, double *dx,
                               double *dw, int64_t B, int64_t I, int64_t O, int64_t H, int64_t Wf,
                               int64_t m1, int64_t m2)
{
    memset(dx, 0, sizeof(double) * 2 * (size_t)(B * I * H * Wf));
    memset(dw, 0, sizeof(double) * 2 * (size_t)(2 * I * O * m1 * m2));
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < H; h++)
            for (int64_t k = 0; k < m2; k++) {
                int c;
                int64_t hm = corner_row(h, H, m1, &c);
                if (hm < 0)
                    continue;
                for (int64_t i = 0; i < I; i++)
                    for (int64_t o = 0; o < O; o++) {
                        const double *xv = x + 2 * (((b * I + i) * H + h) * Wf + k);
                        const double *wv = w + 2 * ((((c * I + i) * O + o) * m1 + hm) * m2 + k);
                        const double *gv = dout + 2 * (((b * O + o) * H + h) * Wf + k);
                        double *dxv = dx + 2 * (((b * I + i) * H + h) * Wf + k);
                        double *dwv = dw + 2 * ((((c * I + i) * O + o) * m1 + hm) * m2 + k);
                        /* dx += g * conj(w); dw += conj(x) * g */
                        dxv[0] += gv[0] * wv[0] + gv[1] * wv[1];
                        dxv[1] += gv[1] * wv[0] - gv[0] * wv[1];
                        dwv[0] += xv[0] * gv[0] + xv[1] * gv[1];
                        dwv[1] += xv[0] * gv[1] - xv[1] * gv[0];
                    }
            }
}
