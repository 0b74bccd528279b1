/* The tuning file (src/tune/tuning_file.h): format round trip; corrupt and foreign files ignored
 * with the reason kept and the built-in tables in force; dispatch and kernel parameters following
 * a file; the gfx902 profile never taking a native file; clt-tune's writer read back identically.
 * Files go through CLT_TUNING_FILE into a fresh temp directory; contexts use the native profile
 * unless the test is about profiles. Nothing here times anything. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/gemm/gemm_dispatch.h"
#include "ops/conv/conv_dispatch.h"
#include "ops/gemm/gemm_params.h"
#include "ops/fft/fft_plan.h"
#include "tune/tuning_file.h"
#include "util/test_util.h"

/* Every test: CLT_TUNING_FILE saved and restored, a fresh temp directory removed afterwards, and
 * fx_path = <dir>/tuning.txt (a test may point it elsewhere inside the directory). */
static char *fx_saved_env, *fx_dir, fx_path[600];

static void fx_setup(void)
{
    fx_saved_env = tu_env_save("CLT_TUNING_FILE");
    fx_dir = tu_make_temp_dir();
    snprintf(fx_path, sizeof fx_path, "%s/tuning.txt", fx_dir);
}

static void fx_teardown(void)
{
    tu_remove_dir(fx_dir);
    free(fx_dir);
    tu_env_restore("CLT_TUNING_FILE", fx_saved_env);
}

static clt_context *ctx_with_file(const char *path, const char *profile)
{
    if (path)
        setenv("CLT_TUNING_FILE", path, 1);
    else
        unsetenv("CLT_TUNING_FILE");
    clt_context_options o;
    clt_context_options_init(&o);
    o.profile = profile;
    return tu_context_with(&o);
}

/* A complete, valid file for ctx's device: what clt-tune writes with the built-in values. */
static clt__tuning_entries *valid_entries(clt_context *ctx)
{
    clt__tuning_entries *e = calloc(1, sizeof *e);
    ck_assert_ptr_nonnull(e);
    ck_assert_int_eq(clt__tuning_header(ctx, e), 0);
    ck_assert_int_eq(clt__tuning_set(e, "header.date", "2026-01-02 03:04:05 UTC"), 0);
    ck_assert_int_eq(clt__tuning_set(e, "header.command", "clt-tune --quick"), 0);
    ck_assert_int_eq(clt__gemm_tuning_entries(clt__gemm_rule_builtin(ctx),
                                              clt__gemm_table_builtin(ctx), e), 0);
    ck_assert_int_eq(clt__conv_tuning_entries(clt__conv_rule_builtin(ctx), e), 0);
    const int64_t n[1] = {85}; /* ours on every device class by the built-in table too */
    const char *const b[1] = {"ours"};
    ck_assert_int_eq(clt__fft_tuning_entries(n, b, 1, e), 0);
    return e;
}

static void write_file(const char *path, const clt__tuning_entries *e)
{
    char why[300];
    ck_assert_msg(clt__tuning_write(path, e, why, sizeof why) == 0, "%s", why);
}

static void write_text(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(text, 1, len, f), len);
    fclose(f);
}

/* path must be ignored on a native context, the reason mentioning `needle`, built-ins in force. */
static void expect_ignored(const char *path, const char *needle)
{
    clt_context *ctx = ctx_with_file(path, "native");
    clt_tuning_info info;
    TU_OK(clt_context_get_tuning(ctx, &info));
    ck_assert_msg(info.source == CLT_TUNING_IGNORED, "%s: source %d", needle, (int)info.source);
    TU_EXPECT_MESSAGE(info.reason, needle);
    ck_assert_str_eq(info.path, path);
    char text[4096], want[900];
    TU_OK(clt_context_describe_dispatch(ctx, text, sizeof text));
    snprintf(want, sizeof want, "tuning file %s ignored: ", path);
    TU_EXPECT_MESSAGE(text, want);
    ck_assert_ptr_eq(clt__gemm_rule_for(ctx), clt__gemm_rule_builtin(ctx));
    ck_assert_ptr_eq(clt__gemm_table_for(ctx), clt__gemm_table_builtin(ctx));
    ck_assert_ptr_null(clt__tuning_value(ctx, "gemm.clblast_min_dim"));
    tu_context_free(ctx);
}

START_TEST(format_round_trip)
{
    clt__tuning_entries *e = calloc(1, sizeof *e), *back = calloc(1, sizeof *back);
    ck_assert_int_eq(clt__tuning_set(e, "header.device", "  Some GPU (rev 2)  "), 0);
    ck_assert_int_eq(clt__tuning_set(e, "gemm.tiled.0", "128 128 16 16 16 4 1"), 0);
    ck_assert_int_eq(clt__tuning_set(e, "conv.clblast_min_flop", "1.5e9"), 0); /* another op's */
    ck_assert_int_eq(clt__tuning_set(e, "gemm.tiled.0", "64 64 16 16 16 4 1"), 0); /* replaces */
    ck_assert_int_eq(clt__tuning_set(e, "nosection", "1"), -1);
    ck_assert_int_eq(clt__tuning_set(e, "gemm.Bad", "1"), -1);
    ck_assert_int_eq(clt__tuning_set(e, "gemm.x", "line\nbreak"), -1);
    ck_assert_int_eq(e->n, 3);
    char *text = clt__tuning_format(e);
    ck_assert_ptr_nonnull(text);
    char why[300] = "";
    ck_assert_msg(clt__tuning_parse(text, strlen(text), back, why, sizeof why) == 0, "%s", why);
    ck_assert_int_eq(back->n, 3);
    for (int i = 0; i < 3; i++) {
        ck_assert_str_eq(back->kv[i].key, e->kv[i].key);
        ck_assert_str_eq(back->kv[i].value, e->kv[i].value);
    }
    ck_assert_str_eq(clt__tuning_find(back, "header.device"), "Some GPU (rev 2)");
    ck_assert_str_eq(clt__tuning_find(back, "gemm.tiled.0"), "64 64 16 16 16 4 1");
    /* Through a file (the directory is created). */
    char *path = fx_path;
    snprintf(path, sizeof fx_path, "%s/sub/t.txt", fx_dir);
    write_file(path, e);
    ck_assert_msg(clt__tuning_read(path, back, why, sizeof why) == 0, "%s", why);
    ck_assert_int_eq(back->n, 3);
    ck_assert_str_eq(clt__tuning_find(back, "conv.clblast_min_flop"), "1.5e9");
    /* Syntax the parser refuses, each with the line it is on. */
    static const char *const bad[][2] = {
        {"cltensor-tuning 1\na.b = 1\na.b = 2\n", "line 3: a.b given twice"},
        {"cltensor-tuning 1\nA.b = 1\n", "line 2: bad key"},
        {"cltensor-tuning 1\njunk\n", "line 2: not a \"key = value\""},
        {"cltensor-tuning 1\na.b = 1\n", "no checksum line"},
        {"cltensor-tuning 1\na.b = 1", "no newline at the end"},
        {"hello\n", "not a cltensor tuning file"},
        {"", "empty file"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_int_eq(clt__tuning_parse(bad[i][0], strlen(bad[i][0]), back, why, sizeof why), -1);
        TU_EXPECT_MESSAGE(why, bad[i][1]);
    }
    /* Text after the checksum. */
    size_t n = strlen(text);
    char *longer = malloc(n + 16);
    snprintf(longer, n + 16, "%sa.b = 1\n", text);
    ck_assert_int_eq(clt__tuning_parse(longer, strlen(longer), back, why, sizeof why), -1);
    TU_EXPECT_MESSAGE(why, "after the checksum");
    free(longer);
    free(text);
    free(e);
    free(back);
}
END_TEST

START_TEST(corrupt_or_foreign_files_are_ignored)
{
    char *path = fx_path;
    clt_context *ctx = ctx_with_file("off", "native");
    clt__tuning_entries *good = valid_entries(ctx);
    tu_context_free(ctx);
    char *text = clt__tuning_format(good);
    size_t len = strlen(text);

    write_text(path, text, len / 2); /* truncated */
    expect_ignored(path, "truncated");
    char garbage[400];
    tu_random_bytes(garbage, sizeof garbage);
    write_text(path, garbage, sizeof garbage);
    expect_ignored(path, "");
    text[strlen("cltensor-tuning ")] = '2'; /* a newer format */
    write_text(path, text, len);
    expect_ignored(path, "format version 2, this library reads 1");
    text[strlen("cltensor-tuning ")] = '1';
    char *edited = strstr(text, "gemm.small_volume = ");
    edited[strlen("gemm.small_volume = ")] ^= 1; /* a digit changed by hand */
    write_text(path, text, len);
    expect_ignored(path, "checksum mismatch");

    /* Well-formed files whose values are wrong; each starts from the good one. */
    static const char *const cases[][3] = {
        {"gemm.clblast_min_dim", "-5", "gemm.clblast_min_dim = -5: want an integer"},
        {"gemm.clblast_min_flop", "nan", "want a number"},
        {"gemm.tiled.0", "64 64 16 16 16 3 1", "VW must be 1, 2 or 4"},
        {"gemm.tiled.0", "64 64 16 16 16 4", "want 7 integers"},
        {"gemm.tiled.2", "32 32 16 8 8 4 1", "without gaps"},
        {"gemm.tiled.0", "512 512 128 128 128 4 1", "work-group larger than the device allows"},
        {"gemm.cpu", "9 16 16", "RPI must be 1..8"},
        {"gemm.gemv", "0 4", "want 2 local sizes"},
        {"gemm.small", "4096 4096", "want 2 local sizes"},
        {"gemm.fast", "1", "unknown gemm key"},
        {"conv.clblast_min_flop", "-1", "conv.clblast_min_flop = -1: want a number"},
        {"conv.clblast_min_k", "1.5", "want an integer"},
        {"conv.fast", "1", "unknown key"},
        {"fft.ours", "0", "fft.ours = 0: want 1 to 24 lengths in 1 .. 2^31"},
        {"fft.vkfft", "64 x", "fft.vkfft = 64 x: want 1 to 24 lengths"},
        {"fft.clfft", "2147483649", "want 1 to 24 lengths"},
        {"fft.ours", "-4", "want 1 to 24 lengths"},
        {"fft.ours", "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25", "want 1 to 24"},
        {"fft.vkfft", "64 85", "fft: length 85 in fft.ours and fft.vkfft"},
        {"fft.ours", "64 64", "fft: length 64 in fft.ours and fft.ours"},
        {"fft.fastest", "64", "fft.fastest = 64: unknown key (ours, vkfft, clfft)"},
        {"header.device", "Another GPU", "written for device \"Another GPU\""},
        {"header.driver", "0.0.1", "written for driver \"0.0.1\""},
        {"header.profile", "gfx902", "written for profile \"gfx902\""},
        {"header.colour", "blue", "unknown key header.colour"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        clt__tuning_entries *e = malloc(sizeof *e);
        *e = *good;
        if (!strcmp(cases[i][0], "gemm.tiled.2")) /* so that tiled.2 leaves a gap on every device */
            for (int j = 0; j < e->n; j++)
                if (!strcmp(e->kv[j].key, "gemm.tiled.1"))
                    e->kv[j--] = e->kv[--e->n];
        ck_assert_int_eq(clt__tuning_set(e, cases[i][0], cases[i][1]), 0);
        write_file(path, e);
        expect_ignored(path, cases[i][2]);
        free(e);
    }
    /* An explicitly named file that does not exist. */
    snprintf(path, sizeof fx_path, "%s/missing.txt", fx_dir);
    expect_ignored(path, "cannot open");
    free(text);
    free(good);
}
END_TEST

START_TEST(dispatch_and_parameters_follow_the_file)
{
    char *path = fx_path;
    clt_context *ctx = ctx_with_file("off", "native");
    clt__gemm_problem p;
    memset(&p, 0, sizeof p);
    p.m = 3;
    p.n = 5;
    p.k = 7;
    p.batch = 1;
    ck_assert_int_eq(clt__gemm_choose(ctx, &p), CLT_GEMM_IMPL_TILED);
    {
        clt__conv_problem cp;
        memset(&cp, 0, sizeof cp);
        const int64_t xs[4] = {1, 4, 9, 9}, ws[4] = {8, 4, 3, 3};
        clt_conv2d_params cpar;
        clt_conv2d_params_init(&cpar);
        TU_OK(clt__conv_geom_make(ctx, "test", xs, ws, &cpar, &cp.g));
        ck_assert_int_eq(clt__conv_choose(ctx, &cp), CLT_CONV_IMPL_TILED);
    }
    clt__tuning_entries *e = valid_entries(ctx);
    tu_context_free(ctx);
    /* CLBlast from 1 FLOP, and other kernel parameters (a partial file: the rest stays built-in). */
    clt__tuning_entries *part = calloc(1, sizeof *part);
    for (int i = 0; i < e->n; i++)
        if (!strncmp(e->kv[i].key, "header.", 7))
            part->kv[part->n++] = e->kv[i];
    ck_assert_int_eq(clt__tuning_set(part, "gemm.clblast_min_dim", "1"), 0);
    ck_assert_int_eq(clt__tuning_set(part, "gemm.clblast_min_flop", "1"), 0);
    ck_assert_int_eq(clt__tuning_set(part, "gemm.cpu", "3 8 4"), 0);
    ck_assert_int_eq(clt__tuning_set(part, "gemm.tiled.0", "32 32 8 8 8 2 0"), 0);
    ck_assert_int_eq(clt__tuning_set(part, "gemm.gemv", "8 2"), 0);
    ck_assert_int_eq(clt__tuning_set(part, "conv.clblast_min_flop", "1"), 0);
    ck_assert_int_eq(clt__tuning_set(part, "conv.clblast_min_k", "1"), 0);
    ck_assert_int_eq(clt__tuning_set(part, "norm.future_key", "anything"), 0);
    write_file(path, part);

    ctx = ctx_with_file(path, "native");
    clt_tuning_info info;
    TU_OK(clt_context_get_tuning(ctx, &info));
    ck_assert_int_eq(info.source, CLT_TUNING_FILE);
    ck_assert_str_eq(info.written, "2026-01-02 03:04:05 UTC");
    ck_assert_int_eq(clt__gemm_choose(ctx, &p), CLT_GEMM_IMPL_CLBLAST);
    const clt__gemm_table *t = clt__gemm_table_for(ctx), *b = clt__gemm_table_builtin(ctx);
    ck_assert_int_eq(t->cpu.rpi, 3);
    ck_assert_int_eq(t->cpu.local, 4);
    ck_assert_int_eq(t->n_tiled, 1);
    ck_assert_int_eq(t->tiled[0].vw, 2);
    ck_assert_int_eq(t->gemv_f * 100 + t->gemv_s, 802);
    ck_assert_int_eq(t->small_lx, b->small_lx); /* not in the file: built-in */
    ck_assert(t->small_volume == b->small_volume);
    ck_assert_str_eq(clt__tuning_value(ctx, "norm.future_key"), "anything");
    /* A 3x3 convolution: ours by the built-in rule on every device class, CLBlast by the file. */
    clt__conv_problem cp;
    memset(&cp, 0, sizeof cp);
    const int64_t xs[4] = {1, 4, 9, 9}, ws[4] = {8, 4, 3, 3};
    clt_conv2d_params cpar;
    clt_conv2d_params_init(&cpar);
    TU_OK(clt__conv_geom_make(ctx, "test", xs, ws, &cpar, &cp.g));
    ck_assert_int_eq(clt__conv_choose(ctx, &cp), CLT_CONV_IMPL_CLBLAST);
    ck_assert_str_eq(clt__conv_rule_for(ctx)->label, "tuning file");
    char text[4096], want[900];
    TU_OK(clt_context_describe_dispatch(ctx, text, sizeof text));
    snprintf(want, sizeof want, "tuning: tuning file %s (written 2026-01-02 03:04:05 UTC)", path);
    TU_EXPECT_MESSAGE(text, want);
    TU_EXPECT_MESSAGE(text, "gemm auto rule: tuning file: CLBlast when m, n, k >= 1 and 2mnk >= 1 FLOP");
    TU_EXPECT_MESSAGE(text, "3 rows x 8 columns per item, 4 items per group");
    TU_EXPECT_MESSAGE(text, "tiled 32x32 tile, K step 8, 8x8 items (16 per work item), float2");
    tu_context_free(ctx);

    /* Off, and no file at the default place: the built-in row, said so. */
    ctx = ctx_with_file("off", "native");
    TU_OK(clt_context_get_tuning(ctx, &info));
    ck_assert_int_eq(info.source, CLT_TUNING_BUILTIN);
    TU_EXPECT_MESSAGE(info.reason, "CLT_TUNING_FILE=off");
    ck_assert_str_eq(info.builtin, clt__gemm_rule_builtin(ctx)->label);
    tu_context_free(ctx);
    clt_context_options o;
    clt_context_options_init(&o);
    o.profile = "native";
    o.cache_dir = fx_dir;
    unsetenv("CLT_TUNING_FILE");
    ctx = tu_context_with(&o);
    TU_OK(clt_context_get_tuning(ctx, &info));
    ck_assert_int_eq(info.source, CLT_TUNING_BUILTIN);
    TU_EXPECT_MESSAGE(info.reason, "no tuning file at");
    TU_EXPECT_MESSAGE(info.path, fx_dir);
    TU_OK(clt_context_describe_dispatch(ctx, text, sizeof text));
    snprintf(want, sizeof want, "tuning: built-in table (%s row)", info.builtin);
    TU_EXPECT_MESSAGE(text, want);
    /* ... and the default place is where a context looks. */
    write_file(info.path, part);
    tu_context_free(ctx);
    ctx = tu_context_with(&o);
    TU_OK(clt_context_get_tuning(ctx, &info));
    ck_assert_int_eq(info.source, CLT_TUNING_FILE);
    TU_EXPECT_STATUS(clt_context_get_tuning(ctx, NULL), CLT_ERR_INVALID_ARGUMENT);
    TU_EXPECT_MESSAGE(clt_last_error(ctx), "clt_context_get_tuning");
    TU_EXPECT_STATUS(clt_context_get_tuning(NULL, &info), CLT_ERR_INVALID_ARGUMENT);
    tu_context_free(ctx);
    free(part);
    free(e);
}
END_TEST

START_TEST(gfx902_profile_ignores_a_native_file)
{
    char *path = fx_path;
    clt_context *ctx = ctx_with_file("off", "native");
    clt__tuning_entries *e = valid_entries(ctx);
    tu_context_free(ctx);
    ck_assert_int_eq(clt__tuning_set(e, "gemm.clblast_min_dim", "1"), 0);
    ck_assert_int_eq(clt__tuning_set(e, "gemm.clblast_min_flop", "1"), 0);
    write_file(path, e);
    ctx = ctx_with_file(path, "gfx902");
    clt_tuning_info info;
    TU_OK(clt_context_get_tuning(ctx, &info));
    ck_assert_int_eq(info.source, CLT_TUNING_IGNORED);
    TU_EXPECT_MESSAGE(info.reason, "profile gfx902");
    ck_assert_str_eq(info.builtin, "gfx902");
    ck_assert_ptr_eq(clt__gemm_rule_for(ctx), clt__gemm_rule_builtin(ctx));
    clt__gemm_problem p;
    memset(&p, 0, sizeof p);
    p.m = p.n = p.k = 3;
    p.batch = 1;
    ck_assert_int_eq(clt__gemm_choose(ctx, &p), CLT_GEMM_IMPL_TILED);
    tu_context_free(ctx);
    free(e);
}
END_TEST

/* What clt-tune writes (header + clt__gemm_tuning_entries + clt__tuning_write) reads back as the
 * same entries and the same rule and table. */
START_TEST(tuner_output_reads_back_identically)
{
    char *path = fx_path;
    clt_context *ctx = ctx_with_file("off", "native");
    clt__gemm_rule r = *clt__gemm_rule_builtin(ctx);
    clt__gemm_table tb = *clt__gemm_table_builtin(ctx);
    r.clblast_min_dim = 300;
    r.clblast_min_flop = 1.0 / 3.0 * 1e9; /* needs all 17 digits */
    tb.small_volume = 12345.678;
    clt__tuning_entries *e = valid_entries(ctx);
    ck_assert_int_eq(clt__gemm_tuning_entries(&r, &tb, e), 0);
    ck_assert_int_eq(clt__tuning_set(e, "header.library", clt_version_string()), 0);
    tu_context_free(ctx);
    write_file(path, e);
    ctx = ctx_with_file(path, "native");
    const clt__tuning *t = ctx->tuning;
    ck_assert_msg(t->source == CLT_TUNING_FILE, "%s", t->why);
    ck_assert_int_eq(t->entries.n, e->n);
    for (int i = 0; i < e->n; i++) {
        ck_assert_str_eq(t->entries.kv[i].key, e->kv[i].key);
        ck_assert_str_eq(t->entries.kv[i].value, e->kv[i].value);
    }
    const clt__gemm_rule *rr = clt__gemm_rule_for(ctx);
    const clt__gemm_table *tt = clt__gemm_table_for(ctx);
    ck_assert_int_eq(rr->clblast_min_dim, 300);
    ck_assert(rr->clblast_min_flop == r.clblast_min_flop);
    ck_assert(tt->small_volume == tb.small_volume);
    ck_assert_int_eq(tt->n_tiled, tb.n_tiled);
    ck_assert(!memcmp(tt->tiled, tb.tiled, sizeof tb.tiled[0] * (size_t)tb.n_tiled));
    ck_assert(!memcmp(&tt->cpu, &tb.cpu, sizeof tb.cpu));
    ck_assert_int_eq(tt->prefer_cpu, tb.prefer_cpu);
    ck_assert_int_eq(tt->skinny, tb.skinny);
    ck_assert_int_eq(tt->small_lx * 10000 + tt->small_ly, tb.small_lx * 10000 + tb.small_ly);
    ck_assert_int_eq(tt->gemv_f * 10000 + tt->gemv_s, tb.gemv_f * 10000 + tb.gemv_s);
    tu_context_free(ctx);
    free(e);
}
END_TEST

/* The fft lists: a listed 1-D length goes to its listed backend first, others (and 2-D plans) keep
 * the built-in order; what clt-tune writes reads back; a list that would not fit is refused. */
START_TEST(fft_backends_follow_the_file)
{
    char *path = fx_path;
    clt_context *ctx = ctx_with_file("off", "native");
    clt__tuning_entries *e = valid_entries(ctx);
    clt_device_info info;
    TU_OK(clt_context_device_info(ctx, &info));
    tu_context_free(ctx);
    const int vk = clt__fft_vkfft_available(), gpu = info.type != CLT_DEVICE_CPU;
    const int64_t n[3] = {64, 4096, 85};
    const char *const b[3] = {"vkfft", "ours", "ours"};
    ck_assert_int_eq(clt__fft_tuning_entries(n, b, 3, e), 0);
    ck_assert_str_eq(clt__tuning_find(e, "fft.ours"), "4096 85");
    ck_assert_str_eq(clt__tuning_find(e, "fft.vkfft"), "64");
    write_file(path, e);
    ctx = ctx_with_file(path, "native");
    ck_assert_msg(ctx->tuning->source == CLT_TUNING_FILE, "%s", ctx->tuning->why);
    static const struct {
        int rank;
        int64_t n0, n1;
        int want; /* 0 ours, 1 VkFFT where built in, 2 the built-in table's choice */
    } cases[] = {{1, 64, 0, 1}, {1, 4096, 0, 0}, {1, 128, 0, 2}, {2, 64, 64, 2}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        clt_fft_desc d;
        clt_fft_desc_init(&d);
        d.rank = cases[i].rank;
        d.n[0] = cases[i].n0;
        d.n[1] = cases[i].n1;
        clt_fft_plan *plan;
        TU_OK(clt_fft_plan_get(ctx, &d, &plan));
        int w = cases[i].want == 2 ? gpu && vk : cases[i].want;
        const char *want = w && vk ? "vkfft" : "ours";
        ck_assert_msg(!strcmp(clt_fft_plan_backend(plan), want), "rank %d n %lld: %s, expected %s",
                      cases[i].rank, (long long)cases[i].n0, clt_fft_plan_backend(plan), want);
    }
    char text[4096];
    TU_OK(clt_context_describe_dispatch(ctx, text, sizeof text));
    TU_EXPECT_MESSAGE(text, "fft auto rule: tuning file: ours first for 1-D 4096 85; vkfft first for 1-D 64; "
                            "otherwise ");
    tu_context_free(ctx);
    /* 25 lengths do not fit a list; values too long for a line do not either */
    int64_t many[25];
    const char *ours[25];
    for (int i = 0; i < 25; i++) {
        many[i] = 1000 + i;
        ours[i] = "ours";
    }
    clt__tuning_entries *f = calloc(1, sizeof *f);
    ck_assert_int_eq(clt__fft_tuning_entries(many, ours, 25, f), -1);
    for (int i = 0; i < 24; i++)
        many[i] = 1000000000 + i;
    ck_assert_int_eq(clt__fft_tuning_entries(many, ours, 24, f), -1);
    free(f);
    free(e);
}
END_TEST

Suite *tuning_file_suite(void)
{
    Suite *s = suite_create("tuning_file");
    TCase *tc = tcase_create("tuning_file");
    tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
    tcase_add_test(tc, format_round_trip);
    tcase_add_test(tc, corrupt_or_foreign_files_are_ignored);
    tcase_add_test(tc, dispatch_and_parameters_follow_the_file);
    tcase_add_test(tc, gfx902_profile_ignores_a_native_file);
    tcase_add_test(tc, tuner_output_reads_back_identically);
    tcase_add_test(tc, fft_backends_follow_the_file);
    suite_add_tcase(s, tc);
    return s;
}
