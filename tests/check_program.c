/* Program layer: source inlining (embedded and CLT_KERNEL_DIR), the disk cache file format, build
 * failures with their log, and the memory/disk program cache seen through its statistics. Kernels
 * of our own live in temp kernel dirs; each writes i * MUL + seed so results prove which program
 * (which source, which options) actually ran. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "program/program.h"
#include "util/test_util.h"

#define N_ITEMS 97 /* prime: no accidental multiple of any work-group size */

static void write_text(const char *dir, const char *name, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "cannot create %s", path);
    ck_assert_uint_eq(fwrite(text, 1, strlen(text), f), strlen(text));
    fclose(f);
}

static void make_subdir(const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    ck_assert_int_eq(mkdir(path, 0700), 0);
}

/* A family with kernel `scale`: out[i] = i * MUL + seed (MUL from -D options, else `fallback`). */
static void write_scale_family(const char *dir, const char *family, int fallback)
{
    char text[1024];
    snprintf(text, sizeof text,
             "#include \"common/scale.h\"\n"
             "__kernel void scale(__global uint *out, uint seed)\n"
             "{\n    uint i = get_global_id(0);\n    out[i] = i * SCALE_MUL + seed;\n}\n"
             "__kernel void other(__global uint *out) { out[get_global_id(0)] = 1u; }\n");
    char name[128];
    snprintf(name, sizeof name, "%s.cl", family);
    write_text(dir, name, text);
    struct stat st;
    char common[1024];
    snprintf(common, sizeof common, "%s/common", dir);
    if (stat(common, &st) != 0)
        make_subdir(dir, "common");
    snprintf(text, sizeof text,
             "#ifdef MUL\n#define SCALE_MUL ((uint)(MUL))\n#else\n#define SCALE_MUL %du\n#endif\n",
             fallback);
    write_text(dir, "common/scale.h", text);
}

/* Runs `scale` of family with options and checks out[i] == i * mul + seed. */
static void run_scale(clt_context *ctx, const char *family, const char *options, unsigned mul)
{
    cl_kernel k;
    TU_OK(clt__kernel_get(ctx, family, options, "scale", &k));
    cl_int err;
    cl_mem buf =
        clCreateBuffer(ctx->dev->cl_ctx, CL_MEM_READ_WRITE, N_ITEMS * sizeof(cl_uint), NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    cl_uint seed = (cl_uint)tu_rng_next();
    ck_assert_int_eq(clSetKernelArg(k, 0, sizeof buf, &buf), CL_SUCCESS);
    ck_assert_int_eq(clSetKernelArg(k, 1, sizeof seed, &seed), CL_SUCCESS);
    size_t global = N_ITEMS;
    ck_assert_int_eq(clEnqueueNDRangeKernel(ctx->queue, k, 1, NULL, &global, NULL, 0, NULL, NULL),
                     CL_SUCCESS);
    cl_uint out[N_ITEMS];
    ck_assert_int_eq(
        clEnqueueReadBuffer(ctx->queue, buf, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL),
        CL_SUCCESS);
    clReleaseMemObject(buf);
    for (cl_uint i = 0; i < N_ITEMS; i++)
        ck_assert_msg(out[i] == i * mul + seed, "%s %s: out[%u] = %u, expected %u", family, options,
                      i, out[i], i * mul + seed);
}

/* The path of the one .bin file in dir. */
static void find_bin_file(const char *dir, char *path, size_t cap)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    struct dirent *e;
    path[0] = '\0';
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n > 4 && strcmp(e->d_name + n - 4, ".bin") == 0)
            snprintf(path, cap, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    ck_assert_msg(path[0] != '\0', "no .bin file in %s", dir);
}

static clt_context *context_with_dirs(const char *kernel_dir, const char *cache_dir)
{
    clt_context_options opts;
    clt_context_options_init(&opts);
    opts.kernel_dir = kernel_dir;
    opts.cache_dir = cache_dir;
    return tu_context_with(&opts);
}

static clt_program_cache_stats stats_of(const clt_context *ctx)
{
    clt_program_cache_stats s;
    TU_OK(clt_program_cache_get_stats(ctx, &s));
    return s;
}

/* ------------------------------------------------------------------ sources */

START_TEST(embedded_tensor_source_is_inlined)
{
    ck_assert_int_ge(clt__embedded_source_count(), 1);
    ck_assert_ptr_nonnull(clt__embedded_source_find("elementwise/tensor.cl"));
    ck_assert_ptr_null(clt__embedded_source_name(clt__embedded_source_count()));
    char *src = NULL;
    size_t len = 0;
    TU_OK(clt__kernel_source(NULL, "tensor", "", &src, &len));
    ck_assert_uint_eq(len, strlen(src));
    ck_assert_ptr_nonnull(strstr(src, "tensor_fill_u32"));
    ck_assert_ptr_null(strstr(src, "#include \"common/"));
    /* Every embedded header that tensor.cl includes must now be there, once. */
    const clt_embedded_file *random_h = clt__embedded_source_find("common/random.h");
    if (random_h) {
        const char *at = strstr(src, (const char *)random_h->data);
        ck_assert_ptr_nonnull(at);
        ck_assert_ptr_null(strstr(at + 1, (const char *)random_h->data));
    }
    free(src);
}
END_TEST

/* The sm_90a pass's text step (src/program/sm90a_build.c): markers out, target raised, and refusals
 * for PTX it must not touch. */
START_TEST(sm90a_patch_text)
{
    const char *why = NULL;
    const char *ptx = ".version 9.0\n.target sm_90, texmode_independent\n{\n//SM90A wgmma.fence.sync.aligned;\n"
                      "\t//SM90A wgmma.mma_async %f1, %rd2;\n// plain comment\n}\n";
    char *out = clt__sm90a_patch(ptx, &why);
    ck_assert_ptr_nonnull(out);
    ck_assert_str_eq(out, ".version 9.0\n.target sm_90a, texmode_independent\n{\nwgmma.fence.sync.aligned;\n"
                          "\twgmma.mma_async %f1, %rd2;\n// plain comment\n}\n");
    free(out);
    out = clt__sm90a_patch(".target sm_90\n//SM90A x;\n", &why);
    ck_assert_ptr_nonnull(out);
    ck_assert_str_eq(out, ".target sm_90a\nx;\n");
    free(out);
    why = NULL;
    ck_assert_ptr_null(clt__sm90a_patch(".target sm_90, texmode_independent\nno markers\n", &why));
    ck_assert_ptr_nonnull(why);
    why = NULL;
    ck_assert_ptr_null(clt__sm90a_patch(".target sm_80, texmode_independent\n//SM90A x;\n", &why));
    ck_assert_ptr_nonnull(strstr(why, "sm_90"));
    why = NULL;
    ck_assert_ptr_null(clt__sm90a_patch(".target sm_90a\n//SM90A x;\n", &why)); /* already raised: not ours */
    ck_assert_ptr_nonnull(why);
    clt_device_info nv = {0}, other = {0};
    nv.vendor = CLT_VENDOR_NVIDIA;
    other.vendor = CLT_VENDOR_AMD;
    const char *src = "kernel void k() { asm(\"//SM90A wgmma.fence.sync.aligned;\"); }";
    ck_assert_int_eq(clt__sm90a_wanted(&nv, src, strlen(src)), 1);
    ck_assert_int_eq(clt__sm90a_wanted(&other, src, strlen(src)), 0);
    ck_assert_int_eq(clt__sm90a_wanted(&nv, "kernel void k() {}", 18), 0);
}
END_TEST

START_TEST(disk_source_inlines_each_header_once)
{
    char *dir = tu_make_temp_dir();
    make_subdir(dir, "common");
    make_subdir(dir, "elementwise"); /* a family's file sits in its op folder, as in cl_kernels/ */
    write_text(dir, "elementwise/tensor.cl",
               "// top\n#include \"common/a.h\"\n  #  include   \"common/a.h\"\nkernel_body\n");
    write_text(dir, "common/a.h", "A1\n#include \"b.h\"\n#include \"common/b.h\"\nA2"); /* no \n */
    write_text(dir, "common/b.h", "B\n");
    char *src = NULL;
    size_t len = 0;
    TU_OK(clt__kernel_source(NULL, "tensor", dir, &src, &len));
    ck_assert_str_eq(src, "// top\nA1\nB\nA2\nkernel_body\n");
    ck_assert_uint_eq(len, strlen(src));
    free(src);
    tu_remove_dir(dir);
    free(dir);
}
END_TEST

START_TEST(missing_include_is_io_error)
{
    char *dir = tu_make_temp_dir();
    write_text(dir, "fam.cl", "#include \"common/nowhere_xyz.h\"\n__kernel void k() {}\n");
    char *src = (char *)1;
    ck_assert_int_eq(clt__kernel_source(NULL, "fam", dir, &src, NULL), CLT_ERR_IO);
    ck_assert_ptr_null(src);
    ck_assert_ptr_nonnull(strstr(clt_last_error(NULL), "common/nowhere_xyz.h"));
    /* Embedded sources: unknown family; disk: missing file; bad names never reach the disk. */
    ck_assert_int_eq(clt__kernel_source(NULL, "no_such_family", "", &src, NULL),
                     CLT_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(clt__kernel_source(NULL, "absent", dir, &src, NULL), CLT_ERR_IO);
    ck_assert_ptr_nonnull(strstr(clt_last_error(NULL), "absent.cl"));
    ck_assert_int_eq(clt__kernel_source(NULL, "../fam", dir, &src, NULL), CLT_ERR_INVALID_ARGUMENT);
    tu_remove_dir(dir);
    free(dir);
}
END_TEST

/* --------------------------------------------------------------- disk cache */

static clt_device_info fake_info(void)
{
    clt_device_info info;
    memset(&info, 0, sizeof info);
    snprintf(info.device_name, sizeof info.device_name, "dev");
    snprintf(info.driver_version, sizeof info.driver_version, "1.0");
    snprintf(info.platform_version, sizeof info.platform_version, "OpenCL 1.2 x");
    return info;
}

START_TEST(cache_key_covers_every_input)
{
    clt_device_info a = fake_info(), b;
    clt_cache_key k0 = clt__cache_key("src", 3, "-DX=1", &a);
    ck_assert_uint_eq(strlen(k0.hex), 32);
    ck_assert_uint_eq(strspn(k0.hex, "0123456789abcdef"), 32);
    ck_assert_str_eq(clt__cache_key("src", 3, "-DX=1", &a).hex, k0.hex);
    ck_assert_str_ne(clt__cache_key("srd", 3, "-DX=1", &a).hex, k0.hex);
    ck_assert_str_ne(clt__cache_key("src", 3, "-DX=2", &a).hex, k0.hex);
    ck_assert_str_ne(clt__cache_key("sr", 2, "c-DX=1", &a).hex, k0.hex);
    b = a;
    b.device_name[0] = 'D';
    ck_assert_str_ne(clt__cache_key("src", 3, "-DX=1", &b).hex, k0.hex);
    b = a;
    b.driver_version[0] = '2';
    ck_assert_str_ne(clt__cache_key("src", 3, "-DX=1", &b).hex, k0.hex);
    b = a;
    b.platform_version[0] = 'o';
    ck_assert_str_ne(clt__cache_key("src", 3, "-DX=1", &b).hex, k0.hex);
}
END_TEST

static void corrupt(const char *path, int how)
{
    FILE *f = fopen(path, "r+b");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    if (how == 0) { /* flip a byte in the payload */
        long at = 60 + (long)(tu_rng_next() % (uint64_t)(size - 60));
        fseek(f, at, SEEK_SET);
        int c = fgetc(f);
        fseek(f, at, SEEK_SET);
        fputc(c ^ 0x5a, f);
        fclose(f);
    } else if (how == 1) { /* truncate */
        fclose(f);
        ck_assert_int_eq(truncate(path, size - 1 - (long)(tu_rng_next() % 16)), 0);
    } else { /* wrong magic */
        fseek(f, 0, SEEK_SET);
        fputs("NOTPROG1", f);
        fclose(f);
    }
}

START_TEST(disk_cache_round_trip_and_rejects)
{
    char *root = tu_make_temp_dir();
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/nested/cache", root); /* store creates it */
    clt_device_info info = fake_info();
    clt_cache_key key = clt__cache_key("src", 3, "", &info);
    size_t size = 1000 + tu_rng_next() % 3000;
    unsigned char *payload = malloc(size);
    tu_random_bytes(payload, size);

    unsigned char *data;
    size_t got;
    int rejected = 7;
    ck_assert_int_eq(clt__disk_cache_load(dir, &key, &data, &got, &rejected), 0);
    ck_assert_int_eq(rejected, 0);
    ck_assert_int_eq(clt__disk_cache_store(dir, &key, payload, size), 1);
    uint64_t files, bytes;
    clt__disk_cache_usage(dir, &files, &bytes);
    ck_assert_uint_eq(files, 1);
    ck_assert_uint_eq(bytes, size + 60);

    char path[1200];
    snprintf(path, sizeof path, "%s/%s.bin", dir, key.hex);
    for (int how = -1; how < 3; how++) {
        if (how >= 0) {
            ck_assert_int_eq(clt__disk_cache_store(dir, &key, payload, size), 1);
            corrupt(path, how);
        }
        int ok = clt__disk_cache_load(dir, &key, &data, &got, &rejected);
        if (how < 0) {
            ck_assert_int_eq(ok, 1);
            ck_assert_int_eq(rejected, 0);
            ck_assert_uint_eq(got, size);
            ck_assert_int_eq(memcmp(data, payload, size), 0);
            free(data);
        } else {
            ck_assert_msg(ok == 0 && rejected == 1, "corruption %d not rejected", how);
            ck_assert_ptr_null(data);
        }
    }
    /* A valid file under another key's name is not that key's binary. */
    ck_assert_int_eq(clt__disk_cache_store(dir, &key, payload, size), 1);
    clt_cache_key other = clt__cache_key("other", 5, "", &info);
    char other_path[1200];
    snprintf(other_path, sizeof other_path, "%s/%s.bin", dir, other.hex);
    ck_assert_int_eq(rename(path, other_path), 0);
    ck_assert_int_eq(clt__disk_cache_load(dir, &other, &data, &got, &rejected), 0);
    ck_assert_int_eq(rejected, 1);
    free(payload);
    tu_remove_dir(root);
    free(root);
}
END_TEST

/* ------------------------------------------------------- programs on a device */

START_TEST(embedded_family_builds)
{
    clt_context *ctx = context_with_dirs("", "off");
    cl_kernel k1, k2;
    TU_OK(clt__kernel_get(ctx, "tensor", "", "tensor_fill_u32", &k1));
    TU_OK(clt__kernel_get(ctx, "tensor", "", "tensor_fill_u32", &k2));
    ck_assert_ptr_eq(k1, k2);
    ck_assert_int_eq(clt__kernel_get(ctx, "tensor", "", "no_such_kernel", &k1),
                     CLT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(k1);
    ck_assert_ptr_nonnull(strstr(clt_last_error(ctx), "no_such_kernel"));
    const char *base = clt__base_build_options(ctx);
    ck_assert_ptr_nonnull(strstr(base, "-cl-std=CL1.2"));
    ck_assert_ptr_null(strstr(base, "fast-relaxed"));
    char wave[64];
    snprintf(wave, sizeof wave, "-DCLT_WAVE=%u", (unsigned)ctx->limits.wave_width);
    ck_assert_ptr_nonnull(strstr(base, wave));
    clt_program_cache_stats s;
    ck_assert_int_eq(clt_program_cache_get_stats(NULL, &s), CLT_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(clt_program_cache_get_stats(ctx, NULL), CLT_ERR_INVALID_ARGUMENT);
    tu_context_free(ctx);
}
END_TEST

START_TEST(build_failure_reports_log_and_recovers)
{
    char *kdir = tu_make_temp_dir();
    write_text(kdir, "broken.cl",
               "__kernel void scale(__global uint *out, uint seed)\n"
               "{ out[0] = undeclared_thing_qq7 + seed; }\n");
    clt_context *ctx = context_with_dirs(kdir, "off");
    cl_kernel k = (cl_kernel)1;
    ck_assert_int_eq(clt__kernel_get(ctx, "broken", "-DMUL=3", "scale", &k), CLT_ERR_BUILD_FAILED);
    ck_assert_ptr_null(k);
    const char *msg = clt_last_error(ctx);
    ck_assert_ptr_nonnull(strstr(msg, "broken"));
    ck_assert_ptr_nonnull(strstr(msg, "-DMUL=3"));
    ck_assert_ptr_nonnull(strstr(msg, "undeclared_thing_qq7")); /* from the build log */

    /* Another family builds, and the fixed source of the same family builds too. */
    write_scale_family(kdir, "good", 1);
    run_scale(ctx, "good", "-DMUL=3", 3);
    write_scale_family(kdir, "broken", 1);
    run_scale(ctx, "broken", "-DMUL=3", 3);
    tu_context_free(ctx);
    tu_remove_dir(kdir);
    free(kdir);
}
END_TEST

START_TEST(disk_cache_survives_device_state_and_rejects_corruption)
{
    char *kdir = tu_make_temp_dir(), *cdir = tu_make_temp_dir();
    write_scale_family(kdir, "cached", 1);
    unsigned mul = 2 + (unsigned)(tu_rng_next() % 1000);
    char options[64];
    snprintf(options, sizeof options, "-DMUL=%u", mul);

    /* Cold: compiled and written. Only contexts of this test exist, so the state is fresh. */
    clt_context *ctx = context_with_dirs(kdir, cdir);
    clt_program_cache_stats s0 = stats_of(ctx);
    run_scale(ctx, "cached", options, mul);
    clt_program_cache_stats s1 = stats_of(ctx);
    ck_assert_uint_eq(s1.source_builds - s0.source_builds, 1);
    ck_assert_uint_eq(s1.disk_writes - s0.disk_writes, 1);
    ck_assert_uint_eq(s1.disk_loads - s0.disk_loads, 0);
    ck_assert_uint_eq(s1.disk_files, 1);
    ck_assert_uint_gt(s1.disk_bytes, 60);
    tu_context_free(ctx);

    /* Warm, as a new process would be: the device state was released with the last context. */
    ctx = context_with_dirs(kdir, cdir);
    s0 = stats_of(ctx);
    run_scale(ctx, "cached", options, mul);
    s1 = stats_of(ctx);
    ck_assert_uint_ge(s1.disk_loads - s0.disk_loads, 1);
    ck_assert_uint_eq(s1.source_builds - s0.source_builds, 0);
    ck_assert_uint_eq(s1.disk_rejects - s0.disk_rejects, 0);
    tu_context_free(ctx);

    uint64_t files, bytes;
    clt__disk_cache_usage(cdir, &files, &bytes);
    ck_assert_uint_eq(files, 1);
    char bin[1200];
    find_bin_file(cdir, bin, sizeof bin);

    for (int how = 0; how < 3; how++) {
        corrupt(bin, how);
        ctx = context_with_dirs(kdir, cdir);
        s0 = stats_of(ctx);
        run_scale(ctx, "cached", options, mul);
        s1 = stats_of(ctx);
        ck_assert_msg(s1.disk_rejects - s0.disk_rejects == 1, "corruption %d not rejected", how);
        ck_assert_uint_eq(s1.source_builds - s0.source_builds, 1);
        ck_assert_uint_eq(s1.disk_writes - s0.disk_writes, 1); /* repaired */
        ck_assert_uint_eq(s1.disk_files, 1);
        tu_context_free(ctx);
    }
    tu_remove_dir(kdir);
    tu_remove_dir(cdir);
    free(kdir);
    free(cdir);
}
END_TEST

START_TEST(cache_off_writes_nothing)
{
    char *kdir = tu_make_temp_dir();
    write_scale_family(kdir, "uncached", 4);
    clt_context *ctx = context_with_dirs(kdir, "off");
    ck_assert_str_eq(ctx->limits.cache_dir, "");
    clt_program_cache_stats s0 = stats_of(ctx);
    run_scale(ctx, "uncached", "", 4);
    clt_program_cache_stats s1 = stats_of(ctx);
    ck_assert_uint_eq(s1.source_builds - s0.source_builds, 1);
    ck_assert_uint_eq(s1.disk_writes - s0.disk_writes, 0);
    ck_assert_uint_eq(s1.disk_files, 0);
    tu_context_free(ctx);
    tu_remove_dir(kdir);
    free(kdir);
}
END_TEST

START_TEST(second_context_shares_programs)
{
    char *kdir = tu_make_temp_dir();
    write_scale_family(kdir, "shared", 9);
    clt_context *a = context_with_dirs(kdir, "off");
    clt_context *b = context_with_dirs(kdir, "off");
    clt_program_cache_stats s0 = stats_of(a);
    run_scale(a, "shared", "-DMUL=11", 11);
    clt_program_cache_stats s1 = stats_of(b); /* same device: same counters */
    ck_assert_uint_eq(s1.source_builds - s0.source_builds, 1);
    run_scale(b, "shared", "-DMUL=11", 11);
    clt_program_cache_stats s2 = stats_of(a);
    ck_assert_uint_eq(s2.source_builds, s1.source_builds);
    ck_assert_uint_eq(s2.memory_hits - s1.memory_hits, 1);
    /* Kernel objects are per context even though the program is shared. */
    cl_kernel ka, kb;
    TU_OK(clt__kernel_get(a, "shared", "-DMUL=11", "scale", &ka));
    TU_OK(clt__kernel_get(b, "shared", "-DMUL=11", "scale", &kb));
    ck_assert_ptr_ne(ka, kb);
    /* A second kernel of a known program costs no build either. */
    TU_OK(clt__kernel_get(a, "shared", "-DMUL=11", "other", &ka));
    ck_assert_uint_eq(stats_of(a).source_builds, s1.source_builds);
    tu_context_free(b);
    tu_context_free(a);
    tu_remove_dir(kdir);
    free(kdir);
}
END_TEST

START_TEST(different_options_are_different_programs)
{
    char *kdir = tu_make_temp_dir();
    write_scale_family(kdir, "opts", 1);
    clt_context *ctx = context_with_dirs(kdir, "off");
    clt_program_cache_stats s0 = stats_of(ctx);
    unsigned m1 = 2 + (unsigned)(tu_rng_next() % 500),
             m2 = m1 + 1 + (unsigned)(tu_rng_next() % 500);
    char o1[32], o2[32];
    snprintf(o1, sizeof o1, "-DMUL=%u", m1);
    snprintf(o2, sizeof o2, "-DMUL=%u", m2);
    run_scale(ctx, "opts", o1, m1);
    run_scale(ctx, "opts", o2, m2);
    run_scale(ctx, "opts", "", 1);
    run_scale(ctx, "opts", o1, m1);
    ck_assert_uint_eq(stats_of(ctx).source_builds - s0.source_builds, 3);
    tu_context_free(ctx);

    /* Same family and options, changed file: a context made afterwards must not get the old
     * program from memory while an earlier context keeps the device state alive. */
    clt_context *keep = context_with_dirs(kdir, "off");
    run_scale(keep, "opts", "", 1);
    write_scale_family(kdir, "opts", 5);
    clt_context *fresh = context_with_dirs(kdir, "off");
    run_scale(fresh, "opts", "", 5);
    tu_context_free(fresh);
    tu_context_free(keep);
    tu_remove_dir(kdir);
    free(kdir);
}
END_TEST

Suite *program_suite(void)
{
    Suite *s = suite_create("program");
    TCase *unit = tcase_create("sources_and_files");
    tcase_add_test(unit, embedded_tensor_source_is_inlined);
    tcase_add_test(unit, disk_source_inlines_each_header_once);
    tcase_add_test(unit, sm90a_patch_text);
    tcase_add_test(unit, missing_include_is_io_error);
    tcase_add_test(unit, cache_key_covers_every_input);
    tcase_add_test(unit, disk_cache_round_trip_and_rejects);
    suite_add_tcase(s, unit);
    TCase *dev = tcase_create("programs");
    tcase_add_test(dev, embedded_family_builds);
    tcase_add_test(dev, build_failure_reports_log_and_recovers);
    tcase_add_test(dev, disk_cache_survives_device_state_and_rejects_corruption);
    tcase_add_test(dev, cache_off_writes_nothing);
    tcase_add_test(dev, second_context_shares_programs);
    tcase_add_test(dev, different_options_are_different_programs);
    suite_add_tcase(s, dev);
    return s;
}
