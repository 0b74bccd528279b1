/* Private to the expression engine (expr_api.c, expr_codegen.c, expr_eval.c): the broadcast plan, the
 * structural key and the code generator. */
#ifndef CLT_EXPR_INTERNAL_H
#define CLT_EXPR_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "ops/elementwise/expr.h"

/* How one input is read, after adjacent dims that are contiguous for every operand are merged. */
typedef enum clt__access {
    CLT__ACC_SAME = 0,   /* same layout as out: in[i] */
    CLT__ACC_SCALAR = 1, /* one element, read once before the loop */
    CLT__ACC_WINDOW = 2, /* contiguous over a run of dims, broadcast elsewhere: in[(i / D) % M] */
    CLT__ACC_GENERAL = 3 /* per-dim strides */
} clt__access;

typedef struct clt__expr_plan {
    /* What the expression uses, in slot order. */
    int n_in, in_slot[CLT_EXPR_MAX_INPUTS];
    int n_sc, sc_slot[CLT_EXPR_MAX_SCALARS];
    /* Structure (part of the key). */
    int flat;        /* every input SAME: vectorised flat kernel */
    int idx32;       /* 32-bit indexing (numel < 2^31) */
    int offsets;     /* 0: every element offset zero; 1: some non-zero, all multiples of 4;
                        2: some not a multiple of 4 */
    int ndim;        /* collapsed rank, meaningful when some input is GENERAL */
    int vec;         /* 0: GPU layouts (float4 chunks); W: CPU layout, floatW per work item
                        (in the build options, -DCLT_EW_VEC=W; offsets then counts multiples of W) */
    clt__access acc[CLT_EXPR_MAX_INPUTS]; /* per used input (index into in_slot) */
    int win_div[CLT_EXPR_MAX_INPUTS], win_mod[CLT_EXPR_MAX_INPUTS]; /* WINDOW: D > 1, M < rest */
    /* Values (kernel arguments). */
    uint64_t n;
    uint64_t dims[CLT_MAX_DIMS];
    uint64_t strides[CLT_EXPR_MAX_INPUTS][CLT_MAX_DIMS];
    uint64_t win_d[CLT_EXPR_MAX_INPUTS], win_m[CLT_EXPR_MAX_INPUTS];
} clt__expr_plan;

/* Largest canonical key (nodes reachable from root plus the plan class). */
#define CLT__EXPR_KEY_MAX 2048

/* Marks the nodes reachable from root (reach[i] = 1) and the input/scalar slots they read. */
void clt__expr_reach(const clt_expr *e, int root, unsigned char *reach, unsigned *inputs_mask,
                     unsigned *scalars_mask);
/* Canonical structure key of (e, root, plan) into key (size CLT__EXPR_KEY_MAX); returns length,
 * or 0 if it did not fit. */
size_t clt__expr_key(const clt_expr *e, int root, const unsigned char *reach,
                     const clt__expr_plan *plan, char *key);
/* The kernel's source (without the shared header text, which the caller prepends), heap; NULL when
 * out of memory. The kernel is named "expr_kernel". */
char *clt__expr_codegen(const clt_expr *e, int root, const unsigned char *reach,
                        const clt__expr_plan *plan);

/* OpenCL name suffix of a unary op ("relu"), NULL for an invalid op. */
const char *clt__unary_name(int op);
/* Derivative of op reads the forward output y by default (SIGMOID, TANH, EXP). */
int clt__unary_grad_uses_y(int op);

#define CLT__EXPR_KERNEL_NAME "expr_kernel"

#endif
