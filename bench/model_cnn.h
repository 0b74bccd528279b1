/* The small ResNet-style CNN of issue 20 on the device, built only from public cltensor calls:
 *   x [B, 3, 16, 16] -> conv1 3->16 k3 p1 -> BN -> ReLU -> maxpool 2 (a1 -> p1 [B, 16, 8, 8])
 *   -> residual block: conv2 16->16 k3 p1 -> BN -> ReLU -> conv3 16->16 k3 p1 -> BN, + p1, ReLU
 *   -> conv4 16->32 k3 s2 p1 -> BN -> ReLU [B, 32, 4, 4] -> global average -> linear 32->10
 *   -> mean cross-entropy; plain SGD. Convolutions have no bias (batch norm follows each); batch
 *   norm in training mode (batch statistics, eps 1e-5, no running statistics). Shared by the model
 *   test (tests/models/check_cnn.c, against tests/ref/cnn_ref.c) and the cnn bench suite.
 *   Parameters in one flat f32 tensor (cnn_layout), so one SGD launch updates all. */
#ifndef BENCH_MODEL_CNN_H
#define BENCH_MODEL_CNN_H

#include <stddef.h>
#include <stdint.h>

#include "cltensor_all.h"

#define CNN_IN_C 3
#define CNN_HW 16
#define CNN_C1 16
#define CNN_C4 32
#define CNN_CLASSES 10
#define CNN_BN_EPS 1e-5

typedef struct cnn_layout {
    size_t w1, g1, b1, w2, g2, b2, w3, g3, b3, w4, g4, b4, wfc, bfc, total;
} cnn_layout;

void cnn_layout_of(cnn_layout *l);

/* He-normal convolution weights, unit gains, zero shifts, normal(0, 1/sqrt(32)) classifier. */
void cnn_init_params(uint64_t seed, float *params);

typedef struct cnn_model cnn_model;

/* A model on ctx for `batch` images (>= 2: batch statistics) with the given flat parameters, images
 * x [batch, 3, 16, 16] and labels [batch] (host). */
clt_status cnn_model_create(clt_context *ctx, int batch, const float *params, const float *x,
                            const int32_t *labels, cnn_model **out);
void cnn_model_free(cnn_model *m);
/* Enqueue one training step; the loss lands in cnn_model_loss. Nothing blocks. */
clt_status cnn_model_step(cnn_model *m, float lr, int64_t step);
const clt_tensor *cnn_model_loss(const cnn_model *m);
const clt_tensor *cnn_model_params(const cnn_model *m);

#endif
