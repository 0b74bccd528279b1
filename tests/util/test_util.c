#include "util/test_util.h"
#include "cltensor_profile.h"
#include "program/program.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static clt_context *last_ctx;

clt_context *tu_ctx_for_msg(void) { return last_ctx; }

clt_context *tu_context_with(const clt_context_options *opts)
{
    clt_context *ctx = NULL;
    clt_status st = clt_context_create(opts, &ctx);
    ck_assert_msg(st == CLT_SUCCESS, "clt_context_create -> %s: %s", clt_status_string(st),
                  clt_last_error(NULL));
    last_ctx = ctx;
    return ctx;
}

clt_context *tu_context(void) { return tu_context_with(NULL); }

void tu_context_free(clt_context *ctx)
{
    if (ctx == last_ctx)
        last_ctx = NULL;
    clt_context_free(ctx);
}

static uint64_t rng_state;
static int rng_ready;

uint64_t tu_seed(void)
{
    static uint64_t seed;
    static int have;
    if (!have) {
        const char *env = getenv("CLT_TEST_SEED");
        if (env && *env) {
            seed = strtoull(env, NULL, 0);
        } else {
            FILE *f = fopen("/dev/urandom", "rb");
            if (!f || fread(&seed, sizeof seed, 1, f) != 1)
                seed = (uint64_t)getpid() * 0x9E3779B97F4A7C15ull;
            if (f)
                fclose(f);
        }
        have = 1;
        printf("random seed: CLT_TEST_SEED=0x%016llx\n", (unsigned long long)seed);
        fflush(stdout);
    }
    return seed;
}

uint64_t tu_rng_next(void)
{
    if (!rng_ready) {
        rng_state = tu_seed();
        rng_ready = 1;
    }
    /* splitmix64 */
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void tu_random_f32(float *x, size_t n, float lo, float hi)
{
    for (size_t i = 0; i < n; i++) {
        double u = (double)(tu_rng_next() >> 11) * (1.0 / 9007199254740992.0);
        x[i] = (float)(lo + (hi - lo) * u);
    }
}

void tu_random_bytes(void *x, size_t n)
{
    unsigned char *p = x;
    size_t i = 0;
    while (i < n) {
        uint64_t r = tu_rng_next();
        for (int b = 0; b < 8 && i < n; b++, i++)
            p[i] = (unsigned char)(r >> (8 * b));
    }
}

void tu_poison(clt_tensor *t)
{
    size_t n = clt_tensor_nbytes(t);
    if (n == 0)
        return;
    unsigned char *ff = malloc(n);
    ck_assert_ptr_nonnull(ff);
    memset(ff, 0xFF, n);
    TU_OK(clt_tensor_write(t, ff, n));
    free(ff);
}

char *tu_make_temp_dir(void)
{
    char *dir = strdup("/tmp/clt-test-XXXXXX");
    ck_assert_ptr_nonnull(dir);
    ck_assert_ptr_nonnull(mkdtemp(dir));
    return dir;
}

void tu_remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char path[4096];
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat sb;
        if (lstat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
            tu_remove_dir(path);
        else
            unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

char *tu_env_save(const char *name)
{
    const char *v = getenv(name);
    return v ? strdup(v) : NULL;
}

void tu_env_restore(const char *name, char *saved)
{
    if (saved)
        setenv(name, saved, 1);
    else
        unsetenv(name);
    free(saved);
}

uint64_t tu_launches(clt_context *ctx, const char *op, const char *impl)
{
    static clt_profile_entry rows[CLT_PROFILE_MAX_ROWS];
    size_t n = 0;
    uint64_t count = 0;
    TU_OK(clt_profile_collect(ctx));
    TU_OK(clt_profile_get(ctx, rows, CLT_PROFILE_MAX_ROWS, &n));
    for (size_t i = 0; i < n && i < CLT_PROFILE_MAX_ROWS; i++)
        if ((!op || !strcmp(rows[i].op, op)) && strstr(rows[i].impl, impl))
            count += rows[i].count;
    return count;
}

clt_context *tu_profiled_context(void)
{
    clt_context_options o;
    clt_context_options_init(&o);
    o.profiler = 1;
    return tu_context_with(&o);
}

clt_tensor *tu_uniform_1d(clt_context *ctx, int64_t n)
{
    clt_tensor *t = NULL;
    TU_OK(clt_tensor_create(ctx, CLT_F32, 1, &n, &t));
    TU_OK(clt_tensor_fill_uniform(t, tu_rng_next(), 0.0f, 1.0f));
    return t;
}

void tu_write_kernel_tree(const char *dir, const char *broken)
{
    for (int i = 0; i < clt__embedded_file_count; i++) {
        const clt_embedded_file *f = &clt__embedded_files[i];
        char path[1200];
        snprintf(path, sizeof path, "%s/%s", dir, f->name);
        for (char *s = path + strlen(dir) + 1; *s; s++)
            if (*s == '/') {
                *s = '\0';
                mkdir(path, 0700);
                *s = '/';
            }
        FILE *out = fopen(path, "wb");
        ck_assert_ptr_nonnull(out);
        ck_assert_uint_eq(fwrite(f->data, 1, f->length, out), f->length);
        if (!strncmp(f->name, broken, strlen(broken)))
            fputs("\n#error deliberately broken by a test\n", out);
        fclose(out);
    }
}
