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
/* fft_tuning.c: the backend the tuning file in force lists 1-D length n under, into *backend;
 * 0 when no list names n (or no file is in force). */
int clt__fft_tuned_first(const clt_context *ctx, int64_t n, clt_fft_backend *backend);
/* fft_tuning.c: the lists of the tuning file in force as text ("ours first for 1-D 85 1000; ...")
 * into buf; the characters written ("" and 0 when no list is in force; cap when cut). */
size_t clt__fft_tuned_text(const clt_context *ctx, char *buf, size_t cap);
/* fft_table.c: the auto rule in force on ctx as one line of text (clt_context_describe_dispatch). */
void clt__fft_describe(const clt_context *ctx, char *buf, size_t cap);

/* The largest prime factor of n (1 for n = 1). */
int64_t clt__fft_largest_prime(int64_t n);

#endif /* CLT_FFT_PLAN_H */
