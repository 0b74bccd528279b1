/** @file
 * Every public header of cltensor in one include, for applications that use most of it.
 * The headers themselves include one way: cltensor.h holds the base types, and each family header
 * (cltensor_<family>.h) includes only cltensor.h. OpenCL interop (cltensor_cl.h) is not included here,
 * so an application that does not touch OpenCL types needs no OpenCL headers. */
#ifndef CLTENSOR_ALL_H
#define CLTENSOR_ALL_H

#include "cltensor.h"
#include "cltensor_cast.h"
#include "cltensor_attention.h"
#include "cltensor_conv.h"
#include "cltensor_fft.h"
#include "cltensor_gemm.h"
#include "cltensor_loss.h"
#include "cltensor_mlp.h"
#include "cltensor_multi.h"
#include "cltensor_norm.h"
#include "cltensor_ops.h"
#include "cltensor_profile.h"
#include "cltensor_train.h"
#include "cltensor_layout.h"
#include "cltensor_index.h"
#include "cltensor_random.h"

#endif /* CLTENSOR_ALL_H */
