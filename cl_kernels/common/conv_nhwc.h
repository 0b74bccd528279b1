/* The channels-last input staging the tensor-core convolutions share (conv/conv2d_mma.cl's NHWC form,
 * conv/conv2d_wgmma.cl): x copied to [N][pixels][channels], a k slice of 16 is 16 channels of one tap,
 * so each output pixel's share of a slice is four 16-byte chunks of one input pixel.
 *
 * An item keeps, per chunk u it copies, base[u] (the image's start plus the window origin's pixel,
 * times the pixel stride, plus the chunk's channels) and iy0[u] / ix0[u] (the window origin; far outside
 * every image past the last output pixel); the tap (ky, kx) and channel offset tci of the slice being
 * staged are the same for the whole group. */
#ifndef CLT_CONV_NHWC_H
#define CLT_CONV_NHWC_H

/* Copy the N chunks of the slice at tap (tky, tkx), channel tci: COPY(u, src, bytes) with bytes 16, or 0
 * (zero fill, src any valid address) where the tap falls outside the image. PS: the pixel stride. */
#define CONV_NHWC_CHUNKS(N, COPY, PS)                                                              \
    do {                                                                                           \
        const int dy_ = tky * DH, dx_ = tkx * DW, toff_ = (dy_ * W + dx_) * (PS) + tci;            \
        _Pragma("unroll") for (int u = 0; u < (N); u++) {                                          \
            const int iy = iy0[u] + dy_, ix = ix0[u] + dx_;                                        \
            const int in = (uint)iy < (uint)H && (uint)ix < (uint)W;                               \
            COPY(u, in ? x + cbase[u] + toff_ : x, in ? 16u : 0u);                                 \
        }                                                                                          \
    } while (0)

/* The next slice: 16 channels on, or the next tap (kx first) once CH channels are done. */
#define CONV_NHWC_NEXT(CH)                                                                         \
    do {                                                                                           \
        tci += 16;                                                                                 \
        if (tci == (CH)) {                                                                         \
            tci = 0;                                                                               \
            if (++tkx == KW) {                                                                     \
                tkx = 0;                                                                           \
                tky++;                                                                             \
            }                                                                                      \
        }                                                                                          \
    } while (0)

#endif
