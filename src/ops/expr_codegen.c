/* OpenCL C for one expression structure (see the banner of cl_kernels/elementwise.cl, which is
 * prepended to this text). Generated from the canonical (compacted) node numbering, so equal
 * structures give byte-identical source and share one program in the cache. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/expr_internal.h"

typedef struct sbuf {
    char *data;
    size_t len, cap;
    int failed;
} sbuf;

static void put(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sbuf *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = 1;
            return;
        }
        if ((size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap * 2 + (size_t)n;
        char *p = realloc(b->data, cap);
        if (!p) {
            b->failed = 1;
            return;
        }
        b->data = p;
        b->cap = cap;
    }
}

static const char *binary_fmt(int op)
{
    switch (op) {
    case CLT_ADD: return "(v%d + v%d)";
    case CLT_SUB: return "(v%d - v%d)";
    case CLT_MUL: return "(v%d * v%d)";
    case CLT_DIV: return "(v%d / v%d)";
    case CLT_MIN: return "clt_minf(v%d, v%d)";
    case CLT_MAX: return "clt_maxf(v%d, v%d)";
    case CLT_POW: return "pow(v%d, v%d)";
    case CLT_EQ: return "(v%d == v%d ? 1.0f : 0.0f)";
    case CLT_NE: return "(v%d != v%d ? 1.0f : 0.0f)";
    case CLT_LT: return "(v%d < v%d ? 1.0f : 0.0f)";
    case CLT_LE: return "(v%d <= v%d ? 1.0f : 0.0f)";
    case CLT_GT: return "(v%d > v%d ? 1.0f : 0.0f)";
    default: return "(v%d >= v%d ? 1.0f : 0.0f)";
    }
}

/* inline float expr_f(float x0.., float s<slot>..) { const float v0 = ...; return vR; } */
static void gen_function(sbuf *b, const clt_expr *e, int root, const unsigned char *reach,
                         const clt__expr_plan *p)
{
    int pos_of_slot[CLT_EXPR_MAX_INPUTS];
    for (int k = 0; k < p->n_in; k++)
        pos_of_slot[p->in_slot[k]] = k;
    put(b, "\ninline float expr_f(");
    const char *sep = "";
    for (int k = 0; k < p->n_in; k++, sep = ", ")
        put(b, "%sfloat x%d", sep, k);
    for (int k = 0; k < p->n_sc; k++, sep = ", ")
        put(b, "%sfloat s%d", sep, p->sc_slot[k]);
    put(b, "%s)\n{\n", *sep ? "" : "void");

    int map[CLT_EXPR_MAX_NODES];
    int next = 0;
    for (int i = 0; i <= root; i++) {
        if (!reach[i])
            continue;
        const clt__expr_node *n = &e->nodes[i];
        int id = map[i] = next++;
        int a = n->a >= 0 ? map[n->a] : -1, c = n->c >= 0 ? map[n->c] : -1;
        int bb = n->b >= 0 ? map[n->b] : -1;
        put(b, "    const float v%d = ", id);
        switch (n->kind) {
        case CLT__NODE_INPUT: put(b, "x%d", pos_of_slot[n->index]); break;
        case CLT__NODE_SCALAR: put(b, "s%d", n->index); break;
        case CLT__NODE_UNARY:
        case CLT__NODE_GRAD: {
            const char *name = clt__unary_name(n->op);
            char alpha[16] = "0.0f";
            if (bb >= 0)
                snprintf(alpha, sizeof alpha, "v%d", bb);
            if (n->kind == CLT__NODE_UNARY)
                put(b, "clt_act_%s(v%d, %s)", name, a, alpha);
            else if (clt__unary_grad_uses_y(n->op) && !n->from_y)
                put(b, "clt_dact_%s(clt_act_%s(v%d, %s), %s)", name, name, a, alpha, alpha);
            else
                put(b, "clt_dact_%s(v%d, %s)", name, a, alpha);
            break;
        }
        case CLT__NODE_BINARY: put(b, binary_fmt(n->op), a, bb); break;
        default: put(b, "(v%d != 0.0f ? v%d : v%d)", a, bb, c); break;
        }
        put(b, ";\n");
    }
    put(b, "    return v%d;\n}\n", next - 1);
}

/* The operand list of a call to expr_f: inputs as read[k] expressions, then scalars. */
static void gen_call(sbuf *b, const clt__expr_plan *p, const char *const *reads, const char *suffix)
{
    put(b, "expr_f(");
    const char *sep = "";
    for (int k = 0; k < p->n_in; k++, sep = ", ")
        put(b, "%s%s%s", sep, reads[k], suffix);
    for (int k = 0; k < p->n_sc; k++, sep = ", ")
        put(b, "%ss%d", sep, p->sc_slot[k]);
    put(b, ")");
}

static void gen_signature(sbuf *b, const clt__expr_plan *p, const char *ix)
{
    put(b, "\n__kernel void " CLT__EXPR_KERNEL_NAME "(__global float *out");
    for (int k = 0; k < p->n_in; k++)
        put(b, ", __global const float *in%d", k);
    put(b, ", const %s n", ix);
    if (p->offsets) {
        put(b, ", const ulong off_out");
        for (int k = 0; k < p->n_in; k++)
            put(b, ", const ulong off%d", k);
    }
    if (!p->flat) {
        for (int k = 0; k < p->n_in; k++) {
            if (p->acc[k] == CLT__ACC_WINDOW && p->win_div[k])
                put(b, ", const %s wd%d", ix, k);
            if (p->acc[k] == CLT__ACC_WINDOW && p->win_mod[k])
                put(b, ", const %s wm%d", ix, k);
        }
        int general = 0;
        for (int k = 0; k < p->n_in; k++)
            general |= p->acc[k] == CLT__ACC_GENERAL;
        if (general) {
            for (int d = 1; d < p->ndim; d++)
                put(b, ", const %s dim%d", ix, d);
            for (int k = 0; k < p->n_in; k++)
                for (int d = 0; d < p->ndim && p->acc[k] == CLT__ACC_GENERAL; d++)
                    put(b, ", const %s st%d_%d", ix, k, d);
        }
    }
    for (int k = 0; k < p->n_sc; k++)
        put(b, ", const float s%d", p->sc_slot[k]);
    put(b, ")\n{\n");
    if (p->offsets) {
        put(b, "    out += off_out;\n");
        for (int k = 0; k < p->n_in; k++)
            put(b, "    in%d += off%d;\n", k, k);
    }
    put(b, "    const %s gid = (%s)get_global_id(0), gsz = (%s)get_global_size(0);\n", ix, ix, ix);
}

static void gen_flat(sbuf *b, const clt__expr_plan *p, const char *ix)
{
    char reads[CLT_EXPR_MAX_INPUTS][16];
    const char *rp[CLT_EXPR_MAX_INPUTS];
    int aligned = p->offsets != 2; /* every buffer start is 16-byte aligned */
    put(b, "    const %s n4 = n >> 2;\n    for (%s i = gid; i < n4; i += gsz) {\n", ix, ix);
    for (int k = 0; k < p->n_in; k++) {
        if (aligned)
            put(b, "        const float4 a%d = ((__global const float4 *)in%d)[i];\n", k, k);
        else
            put(b, "        const float4 a%d = vload4(i, in%d);\n", k, k);
        snprintf(reads[k], sizeof reads[k], "a%d", k);
        rp[k] = reads[k];
    }
    put(b, "        float4 r;\n");
    static const char *const lanes[4] = {".x", ".y", ".z", ".w"};
    for (int l = 0; l < 4; l++) {
        put(b, "        r%s = ", lanes[l]);
        gen_call(b, p, rp, lanes[l]);
        put(b, ";\n");
    }
    if (aligned)
        put(b, "        ((__global float4 *)out)[i] = r;\n    }\n");
    else
        put(b, "        vstore4(r, i, out);\n    }\n");
    for (int k = 0; k < p->n_in; k++)
        snprintf(reads[k], sizeof reads[k], "in%d[i]", k);
    put(b, "    for (%s i = (n4 << 2) + gid; i < n; i += gsz)\n        out[i] = ", ix);
    gen_call(b, p, rp, "");
    put(b, ";\n}\n");
}

/* One element at index `i` (declared by the caller): strided offsets, then `target = expr_f(..)`.
 * `lane` non-NULL: inputs of out's layout come from the float4 a<k> already loaded. */
static void gen_element(sbuf *b, const clt__expr_plan *p, const char *ix, const char *lane,
                        const char *target, const char *indent)
{
    char reads[CLT_EXPR_MAX_INPUTS][48];
    const char *rp[CLT_EXPR_MAX_INPUTS];
    int general = 0;
    for (int k = 0; k < p->n_in; k++) {
        rp[k] = reads[k];
        switch (p->acc[k]) {
        case CLT__ACC_SAME:
            if (lane)
                snprintf(reads[k], sizeof reads[k], "a%d%s", k, lane);
            else
                snprintf(reads[k], sizeof reads[k], "in%d[i]", k);
            break;
        case CLT__ACC_SCALAR: snprintf(reads[k], sizeof reads[k], "c%d", k); break;
        case CLT__ACC_WINDOW: {
            char idx[40] = "i";
            if (p->win_div[k])
                snprintf(idx, sizeof idx, "(i / wd%d)", k);
            if (p->win_mod[k])
                snprintf(reads[k], sizeof reads[k], "in%d[%s %% wm%d]", k, idx, k);
            else
                snprintf(reads[k], sizeof reads[k], "in%d[%s]", k, idx);
            break;
        }
        default:
            general = 1;
            snprintf(reads[k], sizeof reads[k], "in%d[o%d]", k, k);
            break;
        }
    }
    if (general) {
        /* One coordinate decomposition shared by every strided input. */
        put(b, "%s%s r = i;\n", indent, ix);
        for (int k = 0; k < p->n_in; k++)
            if (p->acc[k] == CLT__ACC_GENERAL)
                put(b, "%s%s o%d = 0;\n", indent, ix, k);
        for (int d = p->ndim - 1; d >= 1; d--) {
            put(b, "%s{\n%s    const %s c = r %% dim%d;\n%s    r /= dim%d;\n", indent, indent, ix,
                d, indent, d);
            for (int k = 0; k < p->n_in; k++)
                if (p->acc[k] == CLT__ACC_GENERAL)
                    put(b, "%s    o%d += c * st%d_%d;\n", indent, k, k, d);
            put(b, "%s}\n", indent);
        }
        for (int k = 0; k < p->n_in; k++)
            if (p->acc[k] == CLT__ACC_GENERAL)
                put(b, "%so%d += r * st%d_0;\n", indent, k, k);
    }
    put(b, "%s%s = ", indent, target);
    gen_call(b, p, rp, "");
    put(b, ";\n");
}

/* Chunks of 4 elements (float4 loads of the inputs in out's layout and of out), then a tail. */
static void gen_broadcast(sbuf *b, const clt__expr_plan *p, const char *ix)
{
    int aligned = p->offsets != 2;
    for (int k = 0; k < p->n_in; k++)
        if (p->acc[k] == CLT__ACC_SCALAR)
            put(b, "    const float c%d = in%d[0];\n", k, k);
    put(b, "    const %s n4 = n >> 2;\n    for (%s q = gid; q < n4; q += gsz) {\n", ix, ix);
    for (int k = 0; k < p->n_in; k++) {
        if (p->acc[k] != CLT__ACC_SAME)
            continue;
        if (aligned)
            put(b, "        const float4 a%d = ((__global const float4 *)in%d)[q];\n", k, k);
        else
            put(b, "        const float4 a%d = vload4(q, in%d);\n", k, k);
    }
    put(b, "        float4 v;\n");
    static const char *const lanes[4] = {".x", ".y", ".z", ".w"};
    for (int l = 0; l < 4; l++) {
        char target[8];
        snprintf(target, sizeof target, "v%s", lanes[l]);
        put(b, "        {\n            const %s i = (q << 2) + %d;\n", ix, l);
        gen_element(b, p, ix, lanes[l], target, "            ");
        put(b, "        }\n");
    }
    if (aligned)
        put(b, "        ((__global float4 *)out)[q] = v;\n    }\n");
    else
        put(b, "        vstore4(v, q, out);\n    }\n");
    put(b, "    for (%s i = (n4 << 2) + gid; i < n; i += gsz) {\n", ix);
    gen_element(b, p, ix, NULL, "out[i]", "        ");
    put(b, "    }\n}\n");
}

char *clt__expr_codegen(const clt_expr *e, int root, const unsigned char *reach,
                        const clt__expr_plan *plan)
{
    sbuf b = {malloc(4096), 0, 4096, 0};
    if (!b.data)
        return NULL;
    b.data[0] = '\0';
    const char *ix = plan->idx32 ? "uint" : "ulong";
    gen_function(&b, e, root, reach, plan);
    gen_signature(&b, plan, ix);
    if (plan->flat)
        gen_flat(&b, plan, ix);
    else
        gen_broadcast(&b, plan, ix);
    if (b.failed) {
        free(b.data);
        return NULL;
    }
    return b.data;
}
