/* The fused MLP family (include/cltensor_mlp.h): the network object shared by the entry points
 * (mlp_api.c), the fused path (mlp_fused.c), the CPU-shaped fused path (mlp_cpu.c) and the
 * per-layer path (mlp_layers.c). Internal. */
#ifndef CLT_OPS_MLP_H
#define CLT_OPS_MLP_H

#include "cltensor_mlp.h"
#include "runtime/runtime.h"

#define MLP_FUSED_GROUP 256 /* items of the fused kernels' group (COLS columns x NR rows) */
#define MLP_TILE 32         /* points per tile when local memory allows */
#define MLP_RT_GROUP 128    /* items of the register-tiled big tiles' group (mlp_fused.cl RT) */
#define MLP_RT_TILE_NV 40   /* points of an RT tile on NVIDIA (mlp_fused.c fused_options) */

/* The fused kernels' shape on one device (mlp_fused.cl's -D contract). */
typedef struct mlp_fused_cfg {
    int wg, cols, ppi; /* group, columns (a power of two >= every width), points per item */
    int64_t tp;        /* points per tile: the rows of items (wg / cols, or wg / (cols / 4) with
                          the register-tiled layers) times ppi */
    int max_groups;    /* persistent grid cap of the training launch */
    char options[640]; /* the -D list for this network */
    int64_t scratch;   /* floats of scratch per group */
} mlp_fused_cfg;

/* The CPU-shaped fused kernels' shape (mlp_cpu.cl's -D contract, mlp_cpu.c). */
typedef struct mlp_cpu_cfg {
    char options[640];
    int64_t rows, lds, sstride; /* scratch rows, dz stride, floats of scratch per group */
    int tp_max;                 /* points per tile at most */
    int train_groups, forward_groups, update_groups; /* group caps, update items */
} mlp_cpu_cfg;

struct clt_mlp {
    clt_context *ctx;
    clt_mlp_desc d;
    int fused;                          /* 1: fused path, 0: per-layer */
    int fused_cpu;                      /* 1: the CPU-shaped fused path (then fused is 0) */
    mlp_cpu_cfg cpu;
    int64_t width[CLT_MLP_MAX_LAYERS + 1]; /* width[0]: the encoding's, width[l + 1]: layer l's */
    int64_t poff[CLT_MLP_MAX_LAYERS];   /* layer l's W then b in the flat parameters */
    int64_t nparams;
    int64_t pstride; /* floats between two groups' partial-gradient slices: nparams rounded up to 32 */
    clt_tensor *params, *grads, *m, *v, *loss, *B; /* B: a [1] dummy for the identity encoding */
    clt_tensor *bias[CLT_MLP_MAX_LAYERS], *dbias[CLT_MLP_MAX_LAYERS]; /* views (per-layer path) */
    int64_t steps;
    /* fused path */
    mlp_fused_cfg cfg[2]; /* [0] big tiles, [1] small tiles for small N on GPUs */
    int variants;
    clt_tensor *scratch, *partial, *loss_part; /* grown to the largest grid used */
    clt_tensor *counter; /* mlp_train's last-group counter (I32 [1]; zero between launches) */
    int64_t groups_cap;
    /* per-layer path: activations act[0..layers] and two gradient buffers, for cap_n points */
    clt_tensor *act[CLT_MLP_MAX_LAYERS + 1], *gbuf[2];
    int64_t cap_n;
};

/* width[], poff[] and nparams of mlp->d (mlp_api.c) */
void clt__mlp_layout(clt_mlp *mlp);

/* fused path (mlp_fused.c): whether this network can run fused on ctx (cfg[0..variants-1] and
 * mlp->variants filled, else why) */
int clt__mlp_fused_config(clt_mlp *mlp, mlp_fused_cfg *cfg, char *why, size_t why_size);
/* Bytes of local memory a group of the fused kernels may take on ctx (mlp_fused.c). */
uint64_t clt__mlp_fused_local_budget(const clt_context *ctx);
/* The fused kernels' options for desc on ctx exactly as clt_mlp_create chooses them (cfg[0] big
 * tiles, cfg[1] the small tiles of GPUs), for the kernel variant list: nothing built or launched,
 * desc assumed valid. Returns the count of shapes (0: too wide or too big for ctx; why). */
int clt__mlp_fused_programs(clt_context *ctx, const clt_mlp_desc *desc, mlp_fused_cfg cfg[2],
                            char *why, size_t why_size);
clt_status clt__mlp_fused_forward(clt_mlp *mlp, const clt_tensor *x, clt_tensor *y, int64_t n);
/* A step of the fused path: mlp_train (which also sums the loss when want_loss), then the loss's
 * read into *loss_out when given (its status in *read_st: the step goes on without it), then
 * mlp_update. */
clt_status clt__mlp_fused_step(clt_mlp *mlp, const clt_tensor *x, const clt_tensor *target, int64_t n,
                               int update, int want_loss, clt_future **loss_out,
                               clt_status *read_st, const char *who);

/* CPU-shaped fused path (mlp_cpu.c): whether this network can run it on ctx (mlp->cpu filled and
 * its kernels built, else why); scratch, partial and loss_part are then its buffers */
int clt__mlp_cpu_config(clt_mlp *mlp, char *why, size_t why_size);
clt_status clt__mlp_cpu_forward(clt_mlp *mlp, const clt_tensor *x, clt_tensor *y, int64_t n);
clt_status clt__mlp_cpu_step(clt_mlp *mlp, const clt_tensor *x, const clt_tensor *target, int64_t n,
                             int update, int want_loss, const char *who);

/* Shared by both fused paths (mlp_fused_shared.c). The scratch (scratch_per_group floats each),
 * partial-gradient (pstride floats each) and loss-part buffers for `groups` groups, grown and
 * never shrunk: a network trained on one N allocates once. */
clt_status clt__mlp_ensure_groups(clt_mlp *mlp, int64_t groups, int64_t scratch_per_group);
/* t's offset in floats (the kernels take the caller's x, y and target with element offsets) */
cl_ulong clt__mlp_elem_off(const clt_tensor *t);
/* Arguments 0..6 of a training kernel: x, B, params, target, scratch, partial, loss parts. */
clt_status clt__mlp_train_buffers(clt_mlp *mlp, cl_kernel k, const clt_tensor *x,
                                  const clt_tensor *target, const char *who);
/* (Fourier scale, 2 / (n * outputs): the MSE gradient's factor) of a training launch */
cl_float2 clt__mlp_train_scales(const clt_mlp *mlp, int64_t n);

/* per-layer path (mlp_layers.c) */
clt_status clt__mlp_layers_forward(clt_mlp *mlp, const clt_tensor *x, clt_tensor *y, int64_t n);
clt_status clt__mlp_layers_step(clt_mlp *mlp, const clt_tensor *x, const clt_tensor *target,
                                int64_t n, int update, const char *who);
void clt__mlp_layers_free(clt_mlp *mlp);

/* Launch 2 of a step / the per-layer path's optimizer (mlp_update.cl): grads = sum of `groups`
 * partial slices, then the optimizer when update, the loss from loss_part when want_loss (on
 * fused-cpu only: the GPU fused path's mlp_train sums the loss itself). */
/* mlp_update.cl's options on ctx ("-DUWG=n -DUSPLIT=s") into options; returns the group size n,
 * and s (items per parameter) in *split when given. */
size_t clt__mlp_update_options(const clt_context *ctx, char *options, size_t cap, size_t *split);
clt_status clt__mlp_update(clt_mlp *mlp, const clt_tensor *partial, int64_t groups,
                           const clt_tensor *loss_part, int64_t n, int update, int want_loss,
                           const char *who);

#endif
