/* The one-launch shapes of our FFT backend (fft_shape.h): which kernel takes a pass of length n,
 * with which radices, group size, transforms per group and build options. fft_ours.c builds and
 * launches what this file decides. */
#include "ops/fft/fft_shape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/common/launch.h"

#define FFT_LOCAL_FAMILY "fft_local"
#define FFT_WIDE_FAMILY "fft_wide"
#define MAX_STAGES CLT_FFT_MAX_STAGES

/* fft_local (cl_kernels/fft/fft_local.cl): every stage of a pass in one launch, through local
 * memory, on GPU-style devices, for lengths up to LOCAL_CAP whose radices (local_factor) are at
 * most LOCAL_MAXR.
 * A group holds T transforms (LOCAL_GROUP_VALUES below) in two local buffers of T n complex values,
 * plus fft_local.cl's padding (local_bytes: at most ~34 KiB, at LOCAL_CAP, less where the device's
 * budget is smaller).
 * A/B runs: CLT_FFT_LOCAL=0 keeps the stage kernels, CLT_FFT_LOCAL_WG and CLT_FFT_LOCAL_T set the
 * group size and the transforms per group. */
#define LOCAL_CAP 2048
/* Transforms per group by default: as many as fill LOCAL_GROUP_VALUES values (one for longer
 * lengths): half the buffers of a full group let more groups share a compute unit. H200, 512 MiB
 * batched, us, 1024 values a group vs 2048: 64 286 vs 307, 256 276 vs 292, 512 284 vs 299, 1000
 * 378 vs 394, 1024 346 vs 346, 85 491 vs 485; H100: 1000 396 vs 441, 85 516 vs 552. */
#define LOCAL_GROUP_VALUES 1024
#define LOCAL_MAXR 17
#define LOCAL_MAX_STAGES 12
#define LOCAL_WG 256

int clt__fft_knob(const char *name, long lo, long hi)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return 0;
    char *end;
    long x = strtol(v, &end, 10);
    return *end == '\0' && x >= lo && x <= hi ? (int)x : 0;
}

/* fft_local's group size: LOCAL_WG, or CLT_FFT_LOCAL_WG (32 ... 1024, a power of two). */
static int local_wg(void)
{
    int wg = clt__fft_knob("CLT_FFT_LOCAL_WG", 32, 1024);
    return wg && !(wg & (wg - 1)) ? wg : LOCAL_WG;
}

/* fft_local's radices for n: 8s, then a 4 or a 2, then odd primes ascending (fewer stages, each a
 * barrier and a pass through local memory, than factor()'s 4s). */
static int local_factor(int64_t n, int *radix)
{
    int count = 0;
    while (n % 8 == 0 && count < MAX_STAGES) {
        radix[count++] = 8;
        n /= 8;
    }
    if (n % 4 == 0) {
        radix[count++] = 4;
        n /= 4;
    }
    if (n % 2 == 0) {
        radix[count++] = 2;
        n /= 2;
    }
    for (int64_t p = 3; p * p <= n && count < MAX_STAGES; p += 2)
        while (n % p == 0 && count < MAX_STAGES) {
            radix[count++] = (int)p;
            n /= p;
        }
    if (n > 1 && count < MAX_STAGES)
        radix[count++] = (int)n;
    return count;
}

/* fft_local's two buffers for `values` complex values a group: one pad slot per 16 and one more
 * each (LOCAL_SIZE in fft_local.cl, the upper bound: odd lengths take no padding). */
static size_t local_bytes(int64_t values)
{
    return (size_t)(values + values / 16 + 1) * 2 * 8;
}

/* Whether passes may run in one launch (fft_local, fft_wide) on ctx: GPU-style devices, unless
 * CLT_FFT_LOCAL=0. */
static int one_launch_allowed(const clt_context *ctx)
{
    const char *env = getenv("CLT_FFT_LOCAL");
    return !(env && !strcmp(env, "0")) && !clt__cpu_style(ctx);
}

/* Transforms per group of fft_local for length n within ctx's local memory budget, or 0 when it
 * cannot take n (or, with `running`, when ctx runs CPU-style kernels or CLT_FFT_LOCAL=0). */
static int local_transforms(const clt_context *ctx, int64_t n, int running)
{
    if (running && !one_launch_allowed(ctx))
        return 0;
    int64_t cap = LOCAL_CAP;
    while (cap > 1 && local_bytes(cap) > ctx->limits.local_mem_budget)
        cap /= 2;
    if (n > cap || n < 2)
        return 0;
    int radix[MAX_STAGES], stages = local_factor(n, radix);
    if (stages > LOCAL_MAX_STAGES)
        return 0;
    for (int j = 0; j < stages; j++)
        if (radix[j] > LOCAL_MAXR)
            return 0;
    int T = running ? clt__fft_knob("CLT_FFT_LOCAL_T", 1, cap / n) : 0;
    int64_t values = cap < LOCAL_GROUP_VALUES ? cap : LOCAL_GROUP_VALUES;
    return T ? T : (int)(n < values ? values / n : 1);
}

/* The largest of a pass's radices, at least `least`. */
static int largest_radix(const int *radix, int stages, int least)
{
    for (int j = 0; j < stages; j++)
        least = radix[j] > least ? radix[j] : least;
    return least;
}

/* fft_local's and fft_wide's build options for a pass of length n in the given radices (T
 * transforms per group, wg items). */
static void radix_options(int64_t n, int T, int wg, int idx32, const int *radix, int stages,
                          char *options, size_t size)
{
    int count = stages < LOCAL_MAX_STAGES ? stages : LOCAL_MAX_STAGES;
    int len = snprintf(options, size, "-DFFT_N=%lld -DFFT_T=%d -DFFT_STAGES=%d -DLWG=%d -DFFT_IDX=%s",
                       (long long)n, T, count, wg, idx32 ? "int" : "long");
    for (int j = 0; j < count && len > 0 && (size_t)len < size; j++)
        len += snprintf(options + len, size - (size_t)len, " -DFFT_R%d=%d", j, radix[j]);
    if (len > 0 && (size_t)len < size)
        snprintf(options + len, size - (size_t)len, " -DFFT_MAXR=%d", largest_radix(radix, count, 1));
}

/* fft_wide's radices for n: 16s (each stage an exchange through local memory: 4096 in 3
 * stages instead of 4), then local_factor's order for the rest; a power of two 2^(4k+1) starts with
 * a 32 instead of ending on a 2 (8192: 32 16 16, not 16 16 16 2): H100, 512 MiB batched, 8192 476
 * -> 419 us with 256 items (VkFFT 431 in the same call), where 16 16 16 2 took 476 with 512 items
 * and 689 with 256. */
static int wide_factor(int64_t n, int *radix)
{
    int count = 0, e = 0;
    while (e < 62 && (n >> e) % 2 == 0)
        e++;
    if (n == (int64_t)1 << e && e >= 9 && e % 4 == 1) {
        radix[count++] = 32;
        n /= 32;
    }
    while (n % 16 == 0 && count < MAX_STAGES) {
        radix[count++] = 16;
        n /= 16;
    }
    return count + local_factor(n, radix + count);
}

/* fft_wide (cl_kernels/fft/fft_wide.cl): a pass too long for fft_local's two buffers whose radices
 * are at most LOCAL_MAXR: one transform per group, its values in registers between stages,
 * exchanged through one local buffer of complex values or, where that exceeds the device's local
 * budget (8192 in 48 KiB), of floats in two rounds (FFT_SPLIT); a length whose float buffer
 * exceeds the budget (16384 and up) keeps the stage kernels.
 * Radices: 16s first, 8192 as 32 16 16 (wide_factor). Items: the smallest power of two from
 * WIDE_WG up that gives an item one butterfly of the largest radix: 256 for 4096 and 8192. H100,
 * 512 MiB batched, us (VkFFT 359 / 431, copy ~368): 4096 663 -> 370-379, 8192 795 -> 419 with the
 * item index kept in the loop (fft_wide.cl), flat layouts compiled in, radix 16 and 32.
 * A group of fewer than WIDE_WG items, where the device's limit is smaller, or an item holding
 * more than WIDE_MAX_E values (an odd radix's uneven share; one butterfly of the largest radix is
 * always allowed), keeps the stage kernels. A/B runs:
 * CLT_FFT_LOCAL_WG sets the group size and lifts both limits (the run asked for that shape),
 * CLT_FFT_WIDE_SPLIT=1 takes the two rounds where one would fit (with fft_local's radices).
 * NVIDIA's compiler ignores -cl-nv-maxrregcount here (106 registers with =64 as without). */
#define WIDE_WG 256
#define WIDE_PER_ITEM 16
#define WIDE_MAX_E 16

/* fft_wide's local buffer for n values of `bytes` each (fft_wide.cl's PADI(n) + 1 slots). */
static size_t wide_bytes(int64_t n, size_t bytes)
{
    return (size_t)(n + n / 16 + 1) * bytes;
}

/* fft_wide's default group size for length n whose largest radix (wide_factor) is maxr: the
 * smallest power of two from WIDE_WG up that gives an item one butterfly of it (4096: 16 16 16 and
 * 8192: 32 16 16, 256), at least WIDE_PER_ITEM values. */
static int wide_wg(int64_t n, int maxr)
{
    int per = maxr > WIDE_PER_ITEM ? maxr : WIDE_PER_ITEM, wg = WIDE_WG;
    while (wg < 1024 && n > (int64_t)wg * per)
        wg *= 2;
    return wg;
}

/* fft_wide for length n in the given radices with wg items a group into *L, its build options for
 * a local budget of `budget` bytes; the values an item holds (FFT_E), 0 when fft_wide cannot take
 * n at all. */
static int64_t wide_build(int64_t n, const int *radix, int stages, int wg, uint64_t budget, int split,
                          int flat, int idx32, clt_fft_launch *L)
{
    if (stages < 2 || stages > LOCAL_MAX_STAGES || wide_bytes(n, 4) > budget)
        return 0;
    int64_t E = 0;
    for (int j = 0; j < stages; j++) {
        if (radix[j] > LOCAL_MAXR && radix[j] != 32) /* 32: wide_factor's, dft_even's */
            return 0;
        int64_t e = (n / radix[j] + wg - 1) / wg * radix[j];
        E = e > E ? e : E;
    }
    split = split || wide_bytes(n, 8) > budget;
    L->kernel = FFT_WIDE_FAMILY;
    L->T = 1;
    L->wg = wg;
    L->maxr = largest_radix(radix, stages, 1);
    radix_options(n, 1, wg, idx32, radix, stages, L->options, sizeof L->options);
    size_t len = strlen(L->options);
    snprintf(L->options + len, sizeof L->options - len, " -DFFT_E=%lld -DFFT_SPLIT=%d -DFFT_FLAT=%d",
             (long long)E, split, flat);
    return E;
}

/* fft_wide's shape for length n on ctx into *L; 0 when it does not serve n. */
static int wide_shape(const clt_context *ctx, int64_t n, int flat, int running, int idx32, clt_fft_launch *L)
{
    if ((running && !one_launch_allowed(ctx)) || local_transforms(ctx, n, 0))
        return 0;
    int radix[MAX_STAGES], stages = wide_factor(n, radix);
    int asked = running ? clt__fft_knob("CLT_FFT_LOCAL_WG", 32, 1024) : 0;
    asked = asked & (asked - 1) ? 0 : asked;
    int wg = asked ? asked : wide_wg(n, largest_radix(radix, stages, 1));
    if ((uint64_t)wg > ctx->limits.max_work_group_size)
        return 0;
    const char *env = running ? getenv("CLT_FFT_WIDE_SPLIT") : NULL;
    int split = env && !strcmp(env, "1");
    /* a forced split keeps fft_local's radices: POCL 3.1 fails an assertion building 4096 in
     * radix-16 stages with two rounds (ParallelRegion::Verify), a shape no default takes */
    if (split)
        stages = local_factor(n, radix);
    int64_t E = wide_build(n, radix, stages, wg, ctx->limits.local_mem_budget, split, flat, idx32, L);
    return E > 0 && (asked || E <= WIDE_MAX_E || E == L->maxr);
}

int clt__fft_one_launch(const clt_context *ctx, int64_t n, int flat, int running, int idx32,
                        clt_fft_launch *L)
{
    int T = local_transforms(ctx, n, running);
    if (!T)
        return wide_shape(ctx, n, flat, running, idx32, L);
    int radix[MAX_STAGES], stages = local_factor(n, radix);
    L->kernel = FFT_LOCAL_FAMILY;
    L->T = T;
    L->wg = running ? local_wg() : LOCAL_WG;
    L->maxr = largest_radix(radix, stages, 1);
    radix_options(n, T, L->wg, idx32, radix, stages, L->options, sizeof L->options);
    return 1;
}

const char *clt__fft_local_variant(const clt_context *ctx, int64_t n, int idx32, char *options, size_t size,
                                   int *wg)
{
    clt_fft_launch L;
    if (!clt__fft_one_launch(ctx, n, 0, 0, idx32, &L))
        return NULL;
    snprintf(options, size, "%s", L.options);
    *wg = L.wg;
    return L.kernel;
}

const char *clt__fft_wide_variant(const clt_context *ctx, int64_t n, int idx32, char *options, size_t size,
                                  int *wg)
{
    clt_fft_launch L;
    int radix[MAX_STAGES], stages = wide_factor(n, radix);
    int w = wide_wg(n, largest_radix(radix, stages, 1));
    while ((uint64_t)w > ctx->limits.max_work_group_size && w > 32)
        w /= 2;
    if (!wide_build(n, radix, stages, w, ctx->limits.local_mem_budget, 0, 0, idx32, &L))
        return NULL;
    snprintf(options, size, "%s", L.options);
    *wg = L.wg;
    return L.kernel;
}
