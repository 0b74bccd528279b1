/* FFT plans inside the library: the normalised descriptor every backend works from, and the entry
 * points of each backend. Internal. */
#ifndef CLT_FFT_PLAN_H
#define CLT_FFT_PLAN_H

#include "cltensor_fft.h"
#include "runtime/runtime.h"

typedef enum clt_fft_backend {
    CLT_FFT_OURS = 0,
    CLT_FFT_CLFFT = 1,
    CLT_FFT_VKFFT = 2
} clt_fft_backend;

/* A descriptor with every default filled in: strides and distances explicit, direction fixed by the
 * kind, impl cleared. Two equal keys (memcmp) describe the same transform. */
typedef struct clt_fft_key {
    clt_fft_kind kind;
    int direction;
    clt_fft_norm norm;
    int rank;
    int backend_forced; /* -1 auto, else a clt_fft_backend */
    int64_t n[CLT_FFT_MAX_RANK];
    int64_t batch;
    int64_t in_stride[CLT_FFT_MAX_RANK], out_stride[CLT_FFT_MAX_RANK];
    int64_t in_dist, out_dist;
} clt_fft_key;

struct clt_fft_plan {
    clt_context *ctx;
    clt_fft_key key;
    clt_fft_backend backend;
    int64_t in_len[CLT_FFT_MAX_RANK], out_len[CLT_FFT_MAX_RANK]; /* per side: half on complex sides */
    int64_t in_span, out_span; /* elements from the first one to one past the last reached */
    double scale;              /* the normalisation factor this direction applies */
    void *impl;                /* backend state */
    void *ours;                /* our kernels' state, kept by every plan: the fallback when a
                                  library backend cannot take a tensor (an unaligned offset) */
    struct clt_fft_plan *next; /* in the context's cache */
};

/* Each backend: make its state for plan (plan fields above already set), enqueue, release. A make
 * that cannot serve the plan returns CLT_ERR_UNSUPPORTED with a message and leaves impl NULL. */
clt_status clt__fft_ours_make(clt_fft_plan *plan, const char *who);
clt_status clt__fft_ours_execute(const clt_fft_plan *plan, cl_mem in, size_t in_off, cl_mem out,
                                 size_t out_off, const char *who);
void clt__fft_ours_free(clt_fft_plan *plan);
/* The one-launch kernel (fft_local or fft_wide, also its family), its build options and group size
 * for a complex pass of length n on ctx (fft_ours.c), for the kernel variant list; NULL when such
 * a pass keeps the stage kernels. */
const char *clt__fft_local_variant(const clt_context *ctx, int64_t n, int idx32, char *options, size_t size,
                                   int *wg);
/* fft_wide's kernel name, build options and group size for length n on ctx with its default group
 * size cut to ctx's limit, the shape CLT_FFT_LOCAL_WG at that limit runs: the compile-only variants
 * of profiles that keep such lengths on the stage kernels; NULL when fft_wide cannot take n. */
const char *clt__fft_wide_variant(const clt_context *ctx, int64_t n, int idx32, char *options, size_t size,
                                  int *wg);

clt_status clt__fft_clfft_make(clt_fft_plan *plan, const char *who);
clt_status clt__fft_clfft_execute(const clt_fft_plan *plan, cl_mem in, size_t in_off, cl_mem out,
                                  size_t out_off, const char *who);
void clt__fft_clfft_free(clt_fft_plan *plan);

/* 1 when VkFFT was compiled in. */
int clt__fft_vkfft_available(void);
clt_status clt__fft_vkfft_make(clt_fft_plan *plan, const char *who);
clt_status clt__fft_vkfft_execute(const clt_fft_plan *plan, cl_mem in, size_t in_off, cl_mem out,
                                  size_t out_off, const char *who);
void clt__fft_vkfft_free(clt_fft_plan *plan);

/* fft_table.c: the backends to try for a plan on ctx's device, best first (auto). Returns the count
 * written to order (at most 3). */
int clt__fft_auto_order(const clt_context *ctx, const clt_fft_key *key, clt_fft_backend order[3]);
const char *clt__fft_backend_name(clt_fft_backend b);

/* The largest prime factor of n (1 for n = 1). */
int64_t clt__fft_largest_prime(int64_t n);

#endif /* CLT_FFT_PLAN_H */
