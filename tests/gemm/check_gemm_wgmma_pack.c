/* The wgmma operand pack (cl_kernels/gemm/gemm_wgmma_pack.cl through clt__gemm_wgmma_pack) against a host
 * model of its layout, value for value (bit for bit: TF32 rounding and its residual are exact), on every
 * device: the GEMM that uses it runs on sm_90 only, but the pack itself is plain OpenCL, so POCL and the
 * gfx902 profile check its three kernels (16-byte chunks copied for K-contiguous operands or turned in
 * local memory for the others, and the element-wise 32 x 32 transpose CLT_GEMM_WGMMA_PACK=tile forces) in both layouts
 * (row-major, and gemm_wgmma_bulk.cl's swizzled slices), for f32 with 1 or 3 segments and 16-bit values,
 * with offsets that break 16-byte alignment, ragged rows and K, batches, Inf and NaN. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/gemm/gemm.h"
#include "util/test_util.h"

/* cuBLAS's TF32 rounding as the kernel does it (nearest, ties away; Inf and NaN unchanged) */
static uint32_t tf32_bits(uint32_t u)
{
    return (u & 0x7f800000u) == 0x7f800000u ? u : (u + 0x1000u) & 0xffffe000u;
}

static uint32_t f32_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    return u;
}

static float bits_f32(uint32_t u)
{
    float x;
    memcpy(&x, &u, 4);
    return x;
}

/* The packed value of element x (f32 bits or a 16-bit value) for segment lo (the residual) */
static uint32_t packed_value(uint32_t x, int in16, int lo)
{
    if (in16)
        return x;
    if (!lo)
        return tf32_bits(x);
    if ((x & 0x7f800000u) == 0x7f800000u)
        return 0;
    return f32_bits(bits_f32(x) - bits_f32(tf32_bits(x)));
}

/* Where (r, c) of a packed [rows_p][ldp] matrix lands: row-major, or in bk-element slices of 128 rows whose
 * 16-byte chunks are XOR-swizzled by row as the hardware's 32/64/128-byte modes (common/wgmma_layout.h). */
static int64_t packed_at(int64_t r, int64_t c, int64_t ldp, int bk, int esz)
{
    if (!bk)
        return r * ldp + c;
    const int epc = 16 / esz, kc = bk * esz / 16, shift = kc == 8 ? 0 : kc == 4 ? 1 : 2;
    const int64_t rr = r % 128, e = c % bk;
    const int64_t chunk = (e / epc) ^ ((rr >> shift) & (kc - 1));
    return ((r / 128 * (ldp / bk) + c / bk) * 128 + rr) * bk + chunk * epc + e % epc;
}

typedef struct pack_case {
    int in16, bk, trans, segs, lo_mask;
    int64_t rows, k, ld, off, stride, batch;
} pack_case;

static void check_case(clt_context *ctx, const pack_case *c, const char *mode)
{
    const int esz = c->in16 ? 2 : 4;
    const int64_t kq = c->bk > 32 ? c->bk : 32; /* K padding: whole pack tiles and slices */
    const int64_t rows_p = (c->rows + 127) / 128 * 128, kp = (c->k + kq - 1) / kq * kq, ldp = kp * c->segs;
    /* source: X(r, k) at off + b stride + (trans ? k ld + r : r ld + k) */
    const int64_t span = c->off + (c->batch - 1) * c->stride + (c->trans ? c->k : c->rows) * c->ld;
    const int64_t out_n = rows_p * ldp * c->batch, dst_off = 37 * 8; /* 16-byte aligned */
    uint32_t *src = malloc((size_t)span * 4);
    ck_assert_ptr_nonnull(src);
    for (int64_t i = 0; i < span; i++) {
        uint32_t u = (uint32_t)tu_rng_next();
        float f = (float)((int64_t)(u % 2000001) - 1000000) * 1e-3f * ldexpf(1.0f, (int)(u >> 24) % 40 - 20);
        uint32_t v = f32_bits(f);
        if (i % 97 == 5)
            v = 0x7f800000u | (i % 2 ? 0x80000000u : 0); /* +-Inf */
        if (i % 89 == 7)
            v = 0x7fc00000u; /* NaN */
        if (i % 83 == 11)
            v = (v & 0xffffe000u) | 0x1000u; /* a tie */
        src[i] = c->in16 ? (uint32_t)(u & 0xffffu) : v;
    }
    cl_int err;
    cl_mem x = clCreateBuffer(ctx->dev->cl_ctx, CL_MEM_READ_WRITE, (size_t)span * (size_t)esz, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    size_t dst_bytes = (size_t)(dst_off + out_n) * (size_t)esz;
    cl_mem dst = clCreateBuffer(ctx->dev->cl_ctx, CL_MEM_READ_WRITE, dst_bytes, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    unsigned char *host = malloc((size_t)span * (size_t)esz), *out = malloc(dst_bytes);
    ck_assert(host && out);
    for (int64_t i = 0; i < span; i++) {
        if (c->in16) {
            uint16_t h = (uint16_t)src[i];
            memcpy(host + i * 2, &h, 2);
        } else {
            memcpy(host + i * 4, &src[i], 4);
        }
    }
    ck_assert_int_eq(clEnqueueWriteBuffer(ctx->queue, x, CL_TRUE, 0, (size_t)span * (size_t)esz, host, 0, NULL, NULL),
                     CL_SUCCESS);
    memset(out, 0xa5, dst_bytes); /* poison: every packed element must be written */
    ck_assert_int_eq(clEnqueueWriteBuffer(ctx->queue, dst, CL_TRUE, 0, dst_bytes, out, 0, NULL, NULL), CL_SUCCESS);
    clt__wgmma_pack a = {c->in16, c->bk, x, (uint64_t)c->off, c->stride, c->ld, c->trans, c->rows, c->k,
                         dst, (uint64_t)dst_off, rows_p, kp, c->segs, c->lo_mask, c->batch};
    TU_OK(clt__gemm_wgmma_pack(ctx, &a, "check_gemm_wgmma_pack"));
    ck_assert_int_eq(clEnqueueReadBuffer(ctx->queue, dst, CL_TRUE, 0, dst_bytes, out, 0, NULL, NULL), CL_SUCCESS);
    for (int64_t i = 0; i < dst_off * esz; i++)
        ck_assert_msg(out[i] == 0xa5, "%s: byte %lld before the destination offset written", mode, (long long)i);
    for (int64_t b = 0; b < c->batch; b++)
        for (int64_t r = 0; r < rows_p; r++)
            for (int64_t col = 0; col < ldp; col++) {
                int seg = (int)(col / kp);
                int64_t k = col % kp;
                uint32_t want = 0;
                if (r < c->rows && k < c->k) {
                    int64_t at = c->off + b * c->stride + (c->trans ? k * c->ld + r : r * c->ld + k);
                    want = packed_value(src[at], c->in16, (c->lo_mask >> seg) & 1);
                }
                int64_t at = dst_off + b * rows_p * ldp + packed_at(r, col, ldp, c->bk, esz);
                uint32_t got = 0;
                if (c->in16) {
                    uint16_t h;
                    memcpy(&h, out + at * 2, 2);
                    got = h;
                } else {
                    memcpy(&got, out + at * 4, 4);
                }
                ck_assert_msg(got == want,
                              "%s: in16 %d bk %d trans %d segs %d rows %lld k %lld ld %lld off %lld batch %lld: "
                              "[%lld][%lld][%lld] = 0x%08x, expected 0x%08x",
                              mode, c->in16, c->bk, c->trans, c->segs, (long long)c->rows, (long long)c->k,
                              (long long)c->ld, (long long)c->off, (long long)c->batch, (long long)b, (long long)r,
                              (long long)col, got, want);
            }
    clReleaseMemObject(x);
    clReleaseMemObject(dst);
    free(src);
    free(host);
    free(out);
}

START_TEST(layouts_match_the_model)
{
    char *saved = tu_env_save("CLT_GEMM_WGMMA_PACK");
    clt_context *ctx = tu_context();
    static const int64_t shapes[][2] = {{1, 1}, {37, 5}, {130, 33}, {64, 70}, {200, 96}};
    for (int force = 0; force < 2; force++) {
        if (force)
            setenv("CLT_GEMM_WGMMA_PACK", "tile", 1);
        else
            unsetenv("CLT_GEMM_WGMMA_PACK");
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int v = 0; v < 8; v++) {
                pack_case c = {0};
                c.in16 = v & 1;
                c.trans = (v >> 1) & 1;
                int tiled = (v >> 2) & 1;
                /* bulk kernel slices are 32 bytes; 64 and 128 bytes are the layout's other modes */
                c.bk = tiled ? (int)((32 << (s % 3)) / (c.in16 ? 2 : 4)) : 0;
                c.segs = !c.in16 && s % 2 ? 3 : 1;
                c.lo_mask = c.segs == 3 ? (v & 2 ? 2 : 1) : 0;
                c.rows = shapes[s][0];
                c.k = shapes[s][1];
                int64_t inner = c.trans ? c.rows : c.k;
                /* odd leading dimensions or an odd offset break 16-byte rows; the others keep them */
                c.ld = s % 2 ? inner + 3 : (inner + 7) / 8 * 8 + 8;
                c.off = s == 4 ? 5 : 0;
                c.batch = s == 2 ? 3 : 1;
                c.stride = (c.trans ? c.k : c.rows) * c.ld + (s == 2 ? 8 : 0);
                check_case(ctx, &c, force ? "tile forced" : "default");
            }
    }
    tu_context_free(ctx);
    tu_env_restore("CLT_GEMM_WGMMA_PACK", saved);
}
END_TEST

Suite *gemm_wgmma_pack_suite(void)
{
    Suite *s = suite_create("gemm_wgmma_pack");
    TCase *tc = tcase_create("layouts");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, layouts_match_the_model);
    suite_add_tcase(s, tc);
    return s;
}
