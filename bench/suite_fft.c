/* fft suite: the cases of issue 16's table (complex64 unless said; GB/s = 2 x complex bytes / time),
 * batched 1-D lengths at a fixed total (512 MiB on GPUs, 32 MiB on CPU devices, halved until it fits),
 * and the FNO spectral convolution and layer (time only).
 * Transform p = {kind (0 c2c, 1 r2c, 2 c2r), rank, n0, n1, n2, batch, batched-total flag};
 * FNO p = {B, channels, H, W, m1, m2, whole layer}. */
#include "bench_cases.h"

#define C2C 0
#define R2C 1
#define C2R 2
#define BATCHED(n) {"fft_batched/" #n, bench_setup_fft, {C2C, 1, n, 0, 0, 1, 1}, 0}

static const bench_case fft_cases[] = {
    {"fft_c2c/1024x4096", bench_setup_fft, {C2C, 1, 1024, 0, 0, 4096, 0}, 0},
    {"fft_c2c/4096x1024", bench_setup_fft, {C2C, 1, 4096, 0, 0, 1024, 0}, 0},
    {"fft_c2c/65536x64", bench_setup_fft, {C2C, 1, 65536, 0, 0, 64, 0}, 0},
    {"fft_c2c/16777216x1", bench_setup_fft, {C2C, 1, 16777216, 0, 0, 1, 0}, BENCH_GPU_ONLY},
    {"rfft2/64x256x256", bench_setup_fft, {R2C, 2, 256, 256, 0, 64, 0}, 0},
    {"irfft2/64x256x256", bench_setup_fft, {C2R, 2, 256, 256, 0, 64, 0}, 0},
    {"rfft2/16x512x512", bench_setup_fft, {R2C, 2, 512, 512, 0, 16, 0}, 0},
    {"irfft2/16x512x512", bench_setup_fft, {C2R, 2, 512, 512, 0, 16, 0}, 0},
    {"fft3_c2c/128", bench_setup_fft, {C2C, 3, 128, 128, 128, 1, 0}, 0},
    BATCHED(64), BATCHED(128), BATCHED(256), BATCHED(512), BATCHED(1024), BATCHED(2048),
    BATCHED(4096), BATCHED(8192), BATCHED(1000), BATCHED(1536), BATCHED(85),
    {"fno_spectral_conv/8x32x64x64m16", bench_setup_fno, {8, 32, 64, 64, 16, 16, 0}, 0},
    {"fno_layer/8x32x64x64m16", bench_setup_fno, {8, 32, 64, 64, 16, 16, 1}, 0},
};

const bench_suite bench_suite_fft = {"fft", fft_cases, (int)(sizeof fft_cases / sizeof fft_cases[0])};
