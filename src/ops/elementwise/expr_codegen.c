/* OpenCL C for one expression structure (see the banner of cl_kernels/elementwise/elementwise.cl, which is
 * prepended to this text): the GPU layouts (flat, broadcast) or the cpu layout (plan->vec).
 * Generated from the canonical (compacted) node numbering, so equal structures give
 * byte-identical source and share one program in the cache. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/elementwise/expr_internal.h"

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

/* The same on CLT_VF vectors (cpu layout): comparisons give -1/0 per lane, so select. */
static const char *vbinary_fmt(int op)
{
    switch (op) {
    case CLT_MIN: return "clt_vminf(v%d, v%d)";
    case CLT_MAX: return "clt_vmaxf(v%d, v%d)";
    case CLT_EQ: return "CLT_VBOOL(v%d == v%d)";
    case CLT_NE: return "CLT_VBOOL(v%d != v%d)";
    case CLT_LT: return "CLT_VBOOL(v%d < v%d)";
    case CLT_LE: return "CLT_VBOOL(v%d <= v%d)";
    case CLT_GT: return "CLT_VBOOL(v%d > v%d)";
    case CLT_GE: return "CLT_VBOOL(v%d >= v%d)";
    default: return binary_fmt(op);
    }
}

/* static inline T expr_f(T x0.., float s<slot>..) { const T v0 = ...; return vR; }, T = float, or CLT_VF
 * in the cpu layout (scalars stay float arguments and are widened once). */
static void gen_function(sbuf *b, const clt_expr *e, int root, const unsigned char *reach,
                         const clt__expr_plan *p)
{
    int pos_of_slot[CLT_EXPR_MAX_INPUTS];
    for (int k = 0; k < p->n_in; k++)
        pos_of_slot[p->in_slot[k]] = k;
    const char *t = p->vec ? "CLT_VF" : "float", *v = p->vec ? "v" : "";
    put(b, "\nstatic inline %s expr_f(", t);
    const char *sep = "";
    for (int k = 0; k < p->n_in; k++, sep = ", ")
        put(b, "%s%s x%d", sep, t, k);
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
        put(b, "    const %s v%d = ", t, id);
        switch (n->kind) {
        case CLT__NODE_INPUT: put(b, "x%d", pos_of_slot[n->index]); break;
        case CLT__NODE_SCALAR: put(b, p->vec ? "(CLT_VF)(s%d)" : "s%d", n->index); break;
        case CLT__NODE_UNARY:
        case CLT__NODE_GRAD: {
            const char *name = clt__unary_name(n->op);
            char alpha[24];
            if (bb >= 0)
                snprintf(alpha, sizeof alpha, "v%d", bb);
            else
                snprintf(alpha, sizeof alpha, p->vec ? "CLT_VK(0.0f)" : "0.0f");
            if (n->kind == CLT__NODE_UNARY)
                put(b, "clt_%sact_%s(v%d, %s)", v, name, a, alpha);
            else if (clt__unary_grad_uses_y(n->op) && !n->from_y)
                put(b, "clt_%sdact_%s(clt_%sact_%s(v%d, %s), %s)", v, name, v, name, a, alpha,
                    alpha);
            else
                put(b, "clt_%sdact_%s(v%d, %s)", v, name, a, alpha);
            break;
        }
        case CLT__NODE_BINARY:
            put(b, p->vec ? vbinary_fmt(n->op) : binary_fmt(n->op), a, bb);
            break;
        default:
            if (p->vec)
                put(b, "select(v%d, v%d, v%d != 0.0f)", c, bb, a);
            else
                put(b, "(v%d != 0.0f ? v%d : v%d)", a, bb, c);
            break;
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
    if (p->vec)
        put(b, "    const %s q = (%s)get_global_id(0);\n", ix, ix);
    else
        put(b, "    const %s gid = (%s)get_global_id(0), gsz = (%s)get_global_size(0);\n", ix, ix,
            ix);
}

/* GPUs: a grid-stride loop over float4s, then the scalar tail. (Two float4s per iteration, their
 * loads first, measured no faster on the H200: add/16M 49.9 vs 49.4 us, tanh/16M 35.6 vs 35.6.) */
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

/* The read of input k (not SAME) at element index `i`: in<k>[o<k>] for GENERAL inputs, whose
 * offsets gen_offsets computes. */
static void read_text(const clt__expr_plan *p, int k, char *out, size_t cap)
{
    switch (p->acc[k]) {
    case CLT__ACC_SAME: snprintf(out, cap, "in%d[i]", k); break;
    case CLT__ACC_SCALAR: snprintf(out, cap, "c%d", k); break;
    case CLT__ACC_WINDOW: {
        char idx[40] = "i";
        if (p->win_div[k])
            snprintf(idx, sizeof idx, "(i / wd%d)", k);
        if (p->win_mod[k])
            snprintf(out, cap, "in%d[%s %% wm%d]", k, idx, k);
        else
            snprintf(out, cap, "in%d[%s]", k, idx);
        break;
    }
    default: snprintf(out, cap, "in%d[o%d]", k, k); break;
    }
}

/* o<k> for every GENERAL input at index `i`: one coordinate decomposition shared by all. */
static void gen_offsets(sbuf *b, const clt__expr_plan *p, const char *ix, const char *indent)
{
    int general = 0;
    for (int k = 0; k < p->n_in; k++)
        general |= p->acc[k] == CLT__ACC_GENERAL;
    if (!general)
        return;
    put(b, "%s%s r = i;\n", indent, ix);
    for (int k = 0; k < p->n_in; k++)
        if (p->acc[k] == CLT__ACC_GENERAL)
            put(b, "%s%s o%d = 0;\n", indent, ix, k);
    for (int d = p->ndim - 1; d >= 1; d--) {
        put(b, "%s{\n%s    const %s c = r %% dim%d;\n%s    r /= dim%d;\n", indent, indent, ix, d,
            indent, d);
        for (int k = 0; k < p->n_in; k++)
            if (p->acc[k] == CLT__ACC_GENERAL)
                put(b, "%s    o%d += c * st%d_%d;\n", indent, k, k, d);
        put(b, "%s}\n", indent);
    }
    for (int k = 0; k < p->n_in; k++)
        if (p->acc[k] == CLT__ACC_GENERAL)
            put(b, "%so%d += r * st%d_0;\n", indent, k, k);
}

/* One element at index `i` (declared by the caller): strided offsets, then `target = expr_f(..)`.
 * `lane` non-NULL: inputs of out's layout come from the float4 a<k> already loaded. */
static void gen_element(sbuf *b, const clt__expr_plan *p, const char *ix, const char *lane,
                        const char *target, const char *indent)
{
    char reads[CLT_EXPR_MAX_INPUTS][48];
    const char *rp[CLT_EXPR_MAX_INPUTS];
    for (int k = 0; k < p->n_in; k++) {
        rp[k] = reads[k];
        if (p->acc[k] == CLT__ACC_SAME && lane)
            snprintf(reads[k], sizeof reads[k], "a%d%s", k, lane);
        else
            read_text(p, k, reads[k], sizeof reads[k]);
    }
    gen_offsets(b, p, ix, indent);
    put(b, "%s%s = ", indent, target);
    gen_call(b, p, rp, "");
    put(b, ";\n");
}

/* Lane by lane: t<k>[l] = input k at element i0 + l, for every input that `pick` selects. */
static void gen_lanes(sbuf *b, const clt__expr_plan *p, int pick, const char *ix, const char *indent)
{
    put(b, "%sfor (uint l = 0; l < CLT_EW_VEC; l++) {\n%s    const %s i = i0 + l;\n", indent,
        indent, ix);
    char in2[40];
    snprintf(in2, sizeof in2, "%s    ", indent);
    if (p->acc[pick] == CLT__ACC_GENERAL)
        gen_offsets(b, p, ix, in2);
    for (int k = 0; k < p->n_in; k++) {
        if (p->acc[k] != p->acc[pick] || (p->acc[k] == CLT__ACC_WINDOW && k != pick))
            continue;
        char r[48];
        read_text(p, k, r, sizeof r);
        put(b, "%s    t%d[l] = %s;\n", indent, k, r);
    }
    put(b, "%s}\n", indent);
}

/* A WINDOW input in[(i / D) % M] over the chunk: one division per chunk, not per lane. When the
 * chunk stays inside one run of D, every lane reads the same element; with D = 1, when it stays
 * inside one period of M, the lanes are contiguous; otherwise lane by lane. */
static void gen_cpu_window(sbuf *b, const clt__expr_plan *p, int k, const char *ix,
                           const char *indent)
{
    char mod[24] = "";
    if (p->win_mod[k])
        snprintf(mod, sizeof mod, " %% wm%d", k);
    put(b, "%sCLT_VF x%d;\n%s{\n", indent, k, indent);
    if (p->win_div[k]) {
        put(b, "%s    const %s u = i0 / wd%d, rem = i0 - u * wd%d;\n", indent, ix, k, k);
        put(b, "%s    if (rem + CLT_EW_VEC <= wd%d) {\n", indent, k);
        put(b, "%s        x%d = (CLT_VF)(in%d[u%s]);\n", indent, k, k, mod);
    } else {
        put(b, "%s    const %s j = i0%s;\n", indent, ix, mod);
        if (p->win_mod[k])
            put(b, "%s    if (j + CLT_EW_VEC <= wm%d) {\n", indent, k);
        else
            put(b, "%s    if (1) {\n", indent); /* not reached: no window has neither D nor M */
        put(b, "%s        x%d = CLT_VLOAD(0, in%d + j);\n", indent, k, k);
    }
    put(b, "%s    } else {\n%s        float t%d[CLT_EW_VEC];\n", indent, indent, k);
    char in2[40];
    snprintf(in2, sizeof in2, "%s        ", indent);
    gen_lanes(b, p, k, ix, in2);
    put(b, "%s        x%d = CLT_VLOAD(0, t%d);\n%s    }\n%s}\n", indent, k, k, indent, indent);
}

/* GENERAL inputs over the chunk: one coordinate decomposition at i0; when the chunk stays inside
 * one innermost row, lane l is at o<k> + l * (innermost stride); otherwise lane by lane. */
static void gen_cpu_general(sbuf *b, const clt__expr_plan *p, const char *ix, const char *indent)
{
    int first = -1;
    for (int k = p->n_in - 1; k >= 0; k--)
        if (p->acc[k] == CLT__ACC_GENERAL)
            first = k;
    if (first < 0)
        return;
    int last = p->ndim - 1;
    for (int k = 0; k < p->n_in; k++)
        if (p->acc[k] == CLT__ACC_GENERAL)
            put(b, "%sfloat t%d[CLT_EW_VEC];\n", indent, k);
    put(b, "%sif (i0 %% dim%d + CLT_EW_VEC <= dim%d) {\n%s    const %s i = i0;\n", indent, last,
        last, indent, ix);
    char in2[40];
    snprintf(in2, sizeof in2, "%s    ", indent);
    gen_offsets(b, p, ix, in2);
    put(b, "%s    for (uint l = 0; l < CLT_EW_VEC; l++) {\n", indent);
    for (int k = 0; k < p->n_in; k++)
        if (p->acc[k] == CLT__ACC_GENERAL)
            put(b, "%s        t%d[l] = in%d[o%d + l * st%d_%d];\n", indent, k, k, k, k, last);
    put(b, "%s    }\n%s} else {\n", indent, indent);
    gen_lanes(b, p, first, ix, in2);
    put(b, "%s}\n", indent);
    for (int k = 0; k < p->n_in; k++)
        if (p->acc[k] == CLT__ACC_GENERAL)
            put(b, "%sconst CLT_VF x%d = CLT_VLOAD(0, t%d);\n", indent, k, k);
}

/* cpu layout, one chunk q of W elements in range: inputs of out's layout as floatW, the others
 * gathered lane by lane, one vector expr_f, one floatW store. */
static void gen_cpu_chunk(sbuf *b, const clt__expr_plan *p, const char *ix, const char *indent)
{
    int aligned = p->offsets != 2; /* every offset a multiple of W */
    char reads[CLT_EXPR_MAX_INPUTS][16];
    const char *rp[CLT_EXPR_MAX_INPUTS];
    put(b, "%sconst %s i0 = q * CLT_EW_VEC;\n", indent, ix);
    for (int k = 0; k < p->n_in; k++) {
        rp[k] = reads[k];
        snprintf(reads[k], sizeof reads[k], "x%d", k);
        if (p->acc[k] == CLT__ACC_SCALAR) {
            snprintf(reads[k], sizeof reads[k], "c%d", k);
        } else if (p->acc[k] == CLT__ACC_SAME) {
            if (aligned)
                put(b, "%sconst CLT_VF x%d = ((__global const CLT_VF *)in%d)[q];\n", indent, k, k);
            else
                put(b, "%sconst CLT_VF x%d = CLT_VLOAD(q, in%d);\n", indent, k, k);
        }
    }
    for (int k = 0; k < p->n_in; k++)
        if (p->acc[k] == CLT__ACC_WINDOW)
            gen_cpu_window(b, p, k, ix, indent);
    gen_cpu_general(b, p, ix, indent);
    put(b, aligned ? "%sCLT_VSTREAM(q, out, " : "%sCLT_VSTORE(", indent);
    gen_call(b, p, rp, "");
    put(b, aligned ? ");\n" : ", q, out);\n");
}

/* cpu layout, the chunk that straddles n: lanes read with a guard (0 past the end), one vector
 * expr_f, lanes stored with the guard, so every element goes through the same vector code. */
static void gen_cpu_tail(sbuf *b, const clt__expr_plan *p, const char *ix)
{
    char reads[CLT_EXPR_MAX_INPUTS][16];
    const char *rp[CLT_EXPR_MAX_INPUTS];
    for (int k = 0; k < p->n_in; k++) {
        rp[k] = reads[k];
        if (p->acc[k] == CLT__ACC_SCALAR) {
            snprintf(reads[k], sizeof reads[k], "c%d", k);
            continue;
        }
        snprintf(reads[k], sizeof reads[k], "x%d", k);
        put(b, "        float t%d[CLT_EW_VEC];\n", k);
    }
    put(b, "        for (uint l = 0; l < CLT_EW_VEC; l++) {\n");
    put(b, "            const %s i = q * CLT_EW_VEC + l;\n", ix);
    put(b, "            if (i < n) {\n");
    gen_offsets(b, p, ix, "                ");
    for (int k = 0; k < p->n_in; k++) {
        if (p->acc[k] == CLT__ACC_SCALAR)
            continue;
        char r[48];
        read_text(p, k, r, sizeof r);
        put(b, "                t%d[l] = %s;\n", k, r);
    }
    put(b, "            } else {\n");
    for (int k = 0; k < p->n_in; k++)
        if (p->acc[k] != CLT__ACC_SCALAR)
            put(b, "                t%d[l] = 0.0f;\n", k);
    put(b, "            }\n        }\n");
    for (int k = 0; k < p->n_in; k++)
        if (p->acc[k] != CLT__ACC_SCALAR)
            put(b, "        const CLT_VF x%d = CLT_VLOAD(0, t%d);\n", k, k);
    put(b, "        float res[CLT_EW_VEC];\n        CLT_VSTORE(");
    gen_call(b, p, rp, "");
    put(b, ", 0, res);\n");
    put(b, "        for (uint l = 0; l < CLT_EW_VEC && q * CLT_EW_VEC + l < n; l++)\n");
    put(b, "            out[q * CLT_EW_VEC + l] = res[l];\n");
}

/* cpu layout: the bounds check is uniform per group (see the banner), so POCL keeps the common
 * path straight-line; only the last group checks per item. */
static void gen_cpu(sbuf *b, const clt__expr_plan *p, const char *ix)
{
    for (int k = 0; k < p->n_in; k++)
        if (p->acc[k] == CLT__ACC_SCALAR)
            put(b, "    const CLT_VF c%d = (CLT_VF)(in%d[0]);\n", k, k);
    put(b, "    const %s span = (%s)get_local_size(0) * CLT_EW_VEC;\n", ix, ix);
    put(b, "    if ((%s)get_group_id(0) * span + span <= n) {\n", ix);
    gen_cpu_chunk(b, p, ix, "        ");
    put(b, "    } else if (q * CLT_EW_VEC + CLT_EW_VEC <= n) {\n");
    gen_cpu_chunk(b, p, ix, "        ");
    put(b, "    } else if (q * CLT_EW_VEC < n) {\n");
    gen_cpu_tail(b, p, ix);
    put(b, "    }\n}\n");
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
    if (plan->vec)
        gen_cpu(&b, plan, ix);
    else if (plan->flat)
        gen_flat(&b, plan, ix);
    else
        gen_broadcast(&b, plan, ix);
    if (b.failed) {
        free(b.data);
        return NULL;
    }
    return b.data;
}
