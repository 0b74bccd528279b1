/* A small ResNet-style CNN in double, the reference of tests/models/check_cnn.c:
 *   x [B, 3, 16, 16] -> conv1 3->16 k3 p1 -> BN -> ReLU -> maxpool 2 (a1 -> p1 [B, 16, 8, 8])
 *   -> residual block: conv2 16->16 k3 p1 -> BN -> ReLU -> conv3 16->16 k3 p1 -> BN, + p1, ReLU
 *   -> conv4 16->32 k3 s2 p1 -> BN -> ReLU [B, 32, 4, 4] -> global average -> linear 32->10
 *   -> mean cross-entropy. Convolutions have no bias (batch norm follows each); batch norm in
 *   training mode (batch statistics, eps 1e-5). Parameters in one flat array (cnn_layout). */
#ifndef CLT_CNN_REF_H
#define CLT_CNN_REF_H

#include <stddef.h>
#include <stdint.h>

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

/* One SGD step in double on images x [batch, 3, 16, 16] and labels [batch]; returns the loss
 * before the update. */
double ref_cnn_step(double *params, const float *x, const int32_t *labels, int batch, double lr);

#endif
