/* Plain-C double-precision references for every clt_unary_op and clt_binary_op: forward values and
 * derivatives. Shared by the expression-engine tests and the public elementwise-op tests. */
#ifndef CLT_REF_ACTIVATION_REF_H
#define CLT_REF_ACTIVATION_REF_H

#include "cltensor_all.h"

/* op(x); alpha is used by LEAKY_RELU and ELU only. */
double ref_unary(clt_unary_op op, double x, double alpha);
/* d op(x) / dx at x. Conventions at kinks: ABS and SIGN -> sign(x) and 0; RELU 0 at x <= 0;
 * LEAKY_RELU alpha at x <= 0; ELU alpha*exp(x) at x <= 0; HARDSWISH 0 for x < -3, (2x+3)/6 for
 * -3 <= x <= 3, 1 above. */
double ref_unary_deriv(clt_unary_op op, double x, double alpha);
/* The same derivative expressed from the forward output y (the form the device uses for ops that
 * read y: SIGMOID y(1-y), TANH 1-y^2, EXP y, RELU y > 0, LEAKY_RELU y > 0 ? 1 : alpha). For other
 * ops it returns NaN (they need x). */
double ref_unary_deriv_from_y(clt_unary_op op, double y, double alpha);
/* Non-zero when the op's derivative is computed from y by default (SIGMOID, TANH, EXP). */
int ref_unary_grad_uses_y(clt_unary_op op);
/* Non-zero when op takes alpha (LEAKY_RELU, ELU). */
int ref_unary_has_alpha(clt_unary_op op);
/* Printable name ("RELU"). */
const char *ref_unary_name(clt_unary_op op);

/* a op b. Comparisons give 1.0 / 0.0; MIN/MAX give NaN if either operand is NaN; POW follows pow. */
double ref_binary(clt_binary_op op, double a, double b);
/* Partial derivatives of a op b: *da = d/da, *db = d/db. MIN/MAX route the gradient to a on ties;
 * comparisons have zero gradient; POW: da = b*a^(b-1), db = a^b*log(a). */
void ref_binary_deriv(clt_binary_op op, double a, double b, double *da, double *db);
const char *ref_binary_name(clt_binary_op op);

/* cond != 0 ? a : b */
double ref_where(double cond, double a, double b);

#define REF_UNARY_OP_COUNT 22
#define REF_BINARY_OP_COUNT 13

#endif
