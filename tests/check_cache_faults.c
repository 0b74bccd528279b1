/* Faults of the on-disk program cache and of the other files we read: a damaged cache must cost
 * one rebuild, never a failed (or hung, or crashed) run, and no fault may leave a bad entry behind.
 * Every OpenCL use runs in a forked child process (this test process never initialises the driver,
 * so forking stays safe), because some faults may kill the process that meets them first: the
 * point is what the NEXT process sees. Children report their program-cache statistics through a
 * pipe; they run a tiny kernel family of our own (out[i] = i * MUL + seed) and check its output. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "program/program.h"
#include "util/test_util.h"

#define N_ITEMS 61
#define CHILD_ALARM_S 300 /* a child still running then is hung (a FIFO read): fail, don't wait */

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "cannot create %s", path);
    ck_assert_uint_eq(fwrite(text, 1, strlen(text), f), strlen(text));
    fclose(f);
}

static void write_family(const char *kdir)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/faulty.cl", kdir);
    write_text(path, "__kernel void scale(__global uint *out, uint seed)\n"
                     "{\n    uint i = get_global_id(0);\n    out[i] = i * (uint)(MUL) + seed;\n}\n");
}

typedef struct child_report {
    int ok;                      /* the kernel ran and its output was right */
    clt_status status;           /* first failing call, else CLT_SUCCESS */
    char message[512];           /* clt_last_error then */
    clt_program_cache_stats before, after;
} child_report;

/* In a child: one context on (kdir, cdir), the family built with -DMUL=mul, run and checked. */
static void child_body(const char *kdir, const char *cdir, unsigned mul, child_report *r)
{
    memset(r, 0, sizeof *r);
    clt_context_options o;
    clt_context_options_init(&o);
    o.kernel_dir = kdir;
    o.cache_dir = cdir;
    clt_context *ctx = NULL;
    if ((r->status = clt_context_create(&o, &ctx)) != CLT_SUCCESS) {
        snprintf(r->message, sizeof r->message, "%s", clt_last_error(NULL));
        return;
    }
    clt_program_cache_get_stats(ctx, &r->before);
    char options[32];
    snprintf(options, sizeof options, "-DMUL=%u", mul);
    cl_kernel k;
    if ((r->status = clt__kernel_get(ctx, "faulty", options, "scale", &k)) != CLT_SUCCESS) {
        snprintf(r->message, sizeof r->message, "%s", clt_last_error(ctx));
        clt_context_free(ctx);
        return;
    }
    cl_int err;
    cl_mem buf = clCreateBuffer(ctx->dev->cl_ctx, CL_MEM_READ_WRITE, N_ITEMS * 4, NULL, &err);
    cl_uint seed = 12345u + mul, out[N_ITEMS];
    size_t global = N_ITEMS;
    int ok = err == CL_SUCCESS && clSetKernelArg(k, 0, sizeof buf, &buf) == CL_SUCCESS &&
             clSetKernelArg(k, 1, sizeof seed, &seed) == CL_SUCCESS &&
             clEnqueueNDRangeKernel(ctx->queue, k, 1, NULL, &global, NULL, 0, NULL, NULL) ==
                 CL_SUCCESS &&
             clEnqueueReadBuffer(ctx->queue, buf, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL) ==
                 CL_SUCCESS;
    for (cl_uint i = 0; ok && i < N_ITEMS; i++)
        ok = out[i] == i * mul + seed;
    if (buf)
        clReleaseMemObject(buf);
    clt_program_cache_get_stats(ctx, &r->after);
    r->ok = ok;
    clt_context_free(ctx);
}

/* Runs child_body in a fresh process (setup, if any, runs in the child first); returns its wait
 * status and, when it reported, its report (ok = -1 when it died before reporting). quiet: the
 * child's stderr goes to /dev/null: it is a sacrificial process fed a garbage binary on purpose,
 * and what the driver does with it (POCL overflows its heap, which ASan reports, or asserts) is the
 * expected outcome there, not a finding; what is checked is that the NEXT process heals. */
static int run_child_quiet(const char *kdir, const char *cdir, unsigned mul, void (*setup)(void),
                           child_report *r, int quiet)
{
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(fds[0]);
        alarm(CHILD_ALARM_S);
        if (quiet) {
            int null = open("/dev/null", O_WRONLY);
            if (null >= 0)
                dup2(null, 2);
        }
        if (setup)
            setup();
        child_report rep;
        child_body(kdir, cdir, mul, &rep);
        ssize_t n = write(fds[1], &rep, sizeof rep);
        _exit(n == (ssize_t)sizeof rep && rep.ok ? 0 : 3);
    }
    close(fds[1]);
    memset(r, 0, sizeof *r);
    r->ok = -1;
    size_t got = 0;
    while (got < sizeof *r) {
        ssize_t n = read(fds[0], (char *)r + got, sizeof *r - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    if (got != sizeof *r)
        r->ok = -1;
    close(fds[0]);
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    return status;
}

static int run_child(const char *kdir, const char *cdir, unsigned mul, void (*setup)(void),
                     child_report *r)
{
    return run_child_quiet(kdir, cdir, mul, setup, r, 0);
}

#define DELTA(r, field) ((r).after.field - (r).before.field)

/* A child that must succeed; returns its report. */
static child_report must_run(const char *kdir, const char *cdir, unsigned mul, const char *label)
{
    child_report r;
    int status = run_child(kdir, cdir, mul, NULL, &r);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0 && r.ok == 1,
                  "%s: child failed (wait status 0x%x, ok %d, status %d: %s)", label, status, r.ok,
                  (int)r.status, r.message);
    return r;
}

/* Counts the files in dir whose names end with suffix. */
static int count_suffix(const char *dir, const char *suffix)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    size_t ns = strlen(suffix);
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len >= ns && strcmp(e->d_name + len - ns, suffix) == 0)
            n++;
    }
    closedir(d);
    return n;
}

/* The key of the single .bin entry in dir. */
static clt_cache_key only_entry(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    clt_cache_key key;
    memset(&key, 0, sizeof key);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len == 36 && strcmp(e->d_name + 32, ".bin") == 0) {
            memcpy(key.hex, e->d_name, 32);
            n++;
        }
    }
    closedir(d);
    ck_assert_int_eq(n, 1);
    return key;
}

static void entry_path(char *buf, size_t cap, const char *dir, const clt_cache_key *key,
                       const char *suffix)
{
    snprintf(buf, cap, "%s/%s%s", dir, key->hex, suffix);
}

/* The state every test starts from: a cache holding one good entry for MUL = 7. */
static void warm_cache(char **kdir, char **cdir)
{
    *kdir = tu_make_temp_dir();
    *cdir = tu_make_temp_dir();
    write_family(*kdir);
    child_report r = must_run(*kdir, *cdir, 7, "cold");
    ck_assert_uint_eq(DELTA(r, source_builds), 1);
    ck_assert_uint_eq(DELTA(r, disk_writes), 1);
    ck_assert_int_eq(count_suffix(*cdir, ".bin"), 1);
}

/* After a fault, the next run rebuilds (or loads) and the one after that loads from disk. */
static void heals(const char *kdir, const char *cdir, const char *label)
{
    must_run(kdir, cdir, 7, label);
    child_report r = must_run(kdir, cdir, 7, label);
    ck_assert_msg(DELTA(r, disk_loads) == 1 && DELTA(r, source_builds) == 0 &&
                      DELTA(r, disk_rejects) == 0,
                  "%s: the run after the repair did not load the entry (loads %llu, builds %llu, "
                  "rejects %llu)",
                  label, (unsigned long long)DELTA(r, disk_loads),
                  (unsigned long long)DELTA(r, source_builds),
                  (unsigned long long)DELTA(r, disk_rejects));
    ck_assert_int_eq(count_suffix(cdir, ".trial"), 0);
    ck_assert_int_eq(count_suffix(cdir, ".tmp"), 0);
}

static void done(char *kdir, char *cdir)
{
    tu_remove_dir(kdir);
    tu_remove_dir(cdir);
    free(kdir);
    free(cdir);
}

static unsigned char *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *data = malloc((size_t)n);
    ck_assert_uint_eq(fread(data, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *size = (size_t)n;
    return data;
}

/* ------------------------------------------------------------------------------------- tests */

START_TEST(truncated_entry_costs_one_rebuild)
{
    char *kdir, *cdir;
    warm_cache(&kdir, &cdir);
    clt_cache_key key = only_entry(cdir);
    char path[1200];
    entry_path(path, sizeof path, cdir, &key, ".bin");
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(truncate(path, st.st_size / 2), 0);
    child_report r = must_run(kdir, cdir, 7, "truncated");
    ck_assert_uint_eq(DELTA(r, disk_rejects), 1);
    ck_assert_uint_eq(DELTA(r, source_builds), 1);
    ck_assert_uint_eq(DELTA(r, disk_writes), 1);
    heals(kdir, cdir, "truncated");
    done(kdir, cdir);
}
END_TEST

/* Our header and checksum are right, the payload is garbage (or a POCL binary with the empty
 * program.bc record POCL itself can write): whatever the driver does with it, even killing the
 * first process, the entry is tried once and the next process runs. */
static void garbage_case(int how)
{
    char *kdir, *cdir;
    warm_cache(&kdir, &cdir);
    clt_cache_key key = only_entry(cdir);
    char path[1200];
    entry_path(path, sizeof path, cdir, &key, ".bin");
    size_t size;
    unsigned char *file = read_file(path, &size);
    ck_assert_uint_gt(size, 60);
    unsigned char *payload = file + 60;
    size_t psize = size - 60;
    if (how == 0) {
        tu_random_bytes(payload, psize);
    } else if (how == 1) {
        /* Real header, garbage after it. */
        size_t keep = psize < 64 ? psize : 64;
        tu_random_bytes(payload + keep, psize - keep);
    } else {
        /* POCL only: the program.bc record emptied, as a failed read in POCL's serialiser makes. */
        static const char rec[] = "/program.bc";
        int found = 0;
        if (psize > 8 && memcmp(payload, "poclbin", 8) == 0)
            for (size_t at = 24; at + 19 < psize && at < 512 && !found; at++)
                if (payload[at] == 11 && !payload[at + 1] && !payload[at + 2] && !payload[at + 3] &&
                    memcmp(payload + at + 4, rec, 11) == 0) {
                    memset(payload + at + 15, 0, 4);
                    found = 1;
                }
        if (!found) { /* not POCL: nothing of that kind to simulate */
            free(file);
            done(kdir, cdir);
            return;
        }
    }
    ck_assert_int_eq(clt__disk_cache_store(cdir, &key, payload, psize), 1);
    free(file);
    child_report r;
    int status = run_child_quiet(kdir, cdir, 7, NULL, &r, 1);
    fprintf(stderr, "cache_faults: garbage %d: first process %s\n", how,
            WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "survived (driver refused the binary)"
            : WIFSIGNALED(status) ? "was killed by a signal while loading"
                                  : "failed while loading");
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        /* Survived: the driver refused it, the entry was replaced by a fresh build. */
        ck_assert_uint_eq(DELTA(r, disk_rejects), 1);
        ck_assert_uint_eq(DELTA(r, source_builds), 1);
    } else {
        /* Killed while loading: its trial mark stays behind and condemns the entry. */
        char mark[1200];
        entry_path(mark, sizeof mark, cdir, &key, ".trial");
        ck_assert_msg(access(mark, F_OK) == 0,
                      "garbage %d: the child died (wait status 0x%x) without a trial mark", how,
                      status);
        child_report r2 = must_run(kdir, cdir, 7, "after a killed load");
        ck_assert_uint_eq(DELTA(r2, disk_rejects), 1);
        ck_assert_uint_eq(DELTA(r2, source_builds), 1);
        ck_assert_uint_eq(DELTA(r2, disk_writes), 1);
    }
    heals(kdir, cdir, "garbage");
    done(kdir, cdir);
}

START_TEST(checksum_valid_garbage_is_tried_once)
{
    garbage_case(_i);
}
END_TEST

/* The store-side guard: a POCL binary is stored only with a non-empty program.bc record. */
START_TEST(pocl_binary_without_program_bc_is_not_stored)
{
    char *kdir, *cdir;
    warm_cache(&kdir, &cdir);
    clt_cache_key key = only_entry(cdir);
    char path[1200];
    entry_path(path, sizeof path, cdir, &key, ".bin");
    size_t size;
    unsigned char *file = read_file(path, &size), *bin = file + 60;
    size_t n = size - 60;
    if (n > 8 && memcmp(bin, "poclbin", 8) == 0) {
        ck_assert_ptr_null(clt__binary_defect(bin, n));
        size_t at = 24;
        while (at + 19 < n && !(bin[at] == 11 && memcmp(bin + at + 4, "/program.bc", 11) == 0))
            at++;
        ck_assert_uint_lt(at + 19, n);
        uint32_t len = (uint32_t)bin[at + 15] | (uint32_t)bin[at + 16] << 8 |
                       (uint32_t)bin[at + 17] << 16 | (uint32_t)bin[at + 18] << 24;
        /* POCL 3.1's form: the record left out entirely. */
        unsigned char *cut = malloc(n);
        memcpy(cut, bin, at);
        memcpy(cut + at, bin + at + 19 + len, n - (at + 19 + len));
        ck_assert_ptr_nonnull(clt__binary_defect(cut, n - (19 + len)));
        /* An empty record, and a truncated one. */
        memset(cut, 0, n);
        memcpy(cut, bin, n);
        memset(cut + at + 15, 0, 4);
        ck_assert_ptr_nonnull(clt__binary_defect(cut, n));
        ck_assert_ptr_nonnull(clt__binary_defect(bin, at + 19 + len / 2));
        free(cut);
    }
    ck_assert_ptr_nonnull(clt__binary_defect(bin, 0));
    free(file);
    done(kdir, cdir);
}
END_TEST

START_TEST(trial_marks_of_dead_and_live_processes)
{
    char *kdir, *cdir;
    warm_cache(&kdir, &cdir);
    clt_cache_key key = only_entry(cdir);
    char mark[1200], text[32];
    entry_path(mark, sizeof mark, cdir, &key, ".trial");

    /* A live process (our parent, the runner) is loading it: skip, compile, leave its mark. */
    snprintf(text, sizeof text, "%ld\n", (long)getppid());
    write_text(mark, text);
    child_report r = must_run(kdir, cdir, 7, "live mark");
    ck_assert_uint_eq(DELTA(r, disk_loads), 0);
    ck_assert_uint_eq(DELTA(r, disk_rejects), 0);
    ck_assert_uint_eq(DELTA(r, source_builds), 1);
    ck_assert_int_eq(access(mark, F_OK), 0);

    /* Its loader died: the entry is discarded and rebuilt. */
    pid_t dead = fork();
    if (dead == 0)
        _exit(0);
    ck_assert_int_eq(waitpid(dead, NULL, 0), dead);
    snprintf(text, sizeof text, "%ld\n", (long)dead);
    write_text(mark, text);
    r = must_run(kdir, cdir, 7, "dead mark");
    ck_assert_uint_eq(DELTA(r, disk_loads), 0);
    ck_assert_uint_eq(DELTA(r, disk_rejects), 1);
    ck_assert_uint_eq(DELTA(r, source_builds), 1);
    ck_assert_uint_eq(DELTA(r, disk_writes), 1);
    heals(kdir, cdir, "dead mark");

    /* An empty or unreadable mark counts as dead. */
    write_text(mark, "");
    r = must_run(kdir, cdir, 7, "empty mark");
    ck_assert_uint_eq(DELTA(r, disk_rejects), 1);
    heals(kdir, cdir, "empty mark");
    done(kdir, cdir);
}
END_TEST

START_TEST(fifo_entry_neither_blocks_nor_stays)
{
    char *kdir, *cdir;
    warm_cache(&kdir, &cdir);
    clt_cache_key key = only_entry(cdir);
    char path[1200];
    entry_path(path, sizeof path, cdir, &key, ".bin");
    ck_assert_int_eq(unlink(path), 0);
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    child_report r = must_run(kdir, cdir, 7, "fifo entry");
    ck_assert_uint_eq(DELTA(r, disk_rejects), 1);
    ck_assert_uint_eq(DELTA(r, source_builds), 1);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_msg(S_ISREG(st.st_mode), "the FIFO was not replaced by a regular entry");
    heals(kdir, cdir, "fifo entry");
    done(kdir, cdir);
}
END_TEST

static const char *tuning_fifo;
static void set_tuning_fifo(void) { setenv("CLT_TUNING_FILE", tuning_fifo, 1); }

START_TEST(fifo_tuning_file_and_kernel_source_rejected)
{
    char *kdir = tu_make_temp_dir(), *cdir = tu_make_temp_dir();
    write_family(kdir);
    char fifo[1200];
    snprintf(fifo, sizeof fifo, "%s/tuning.txt", cdir);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    tuning_fifo = fifo;
    child_report r;
    int status = run_child(kdir, "off", 3, set_tuning_fifo, &r);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0 && r.ok == 1,
                  "a FIFO as CLT_TUNING_FILE: wait status 0x%x, status %d: %s", status,
                  (int)r.status, r.message);

    /* A FIFO where a kernel source should be: CLT_ERR_IO naming the file, no hang. */
    char src[1200];
    snprintf(src, sizeof src, "%s/faulty.cl", kdir);
    ck_assert_int_eq(unlink(src), 0);
    ck_assert_int_eq(mkfifo(src, 0600), 0);
    status = run_child(kdir, "off", 3, NULL, &r);
    ck_assert_msg(WIFEXITED(status) && r.ok == 0 && r.status == CLT_ERR_IO,
                  "a FIFO kernel source: wait status 0x%x, ok %d, status %d: %s", status, r.ok,
                  (int)r.status, r.message);
    TU_EXPECT_MESSAGE(r.message, "faulty.cl");
    TU_EXPECT_MESSAGE(r.message, "not a regular file");
    tu_remove_dir(kdir);
    tu_remove_dir(cdir);
    free(kdir);
    free(cdir);
}
END_TEST

START_TEST(unwritable_cache_dir_still_runs)
{
    char *kdir = tu_make_temp_dir(), *root = tu_make_temp_dir();
    write_family(kdir);
    /* A cache "directory" below a regular file can never be created, even by root. */
    char file[1200], cdir[1300];
    snprintf(file, sizeof file, "%s/plain", root);
    write_text(file, "x");
    snprintf(cdir, sizeof cdir, "%s/cache", file);
    child_report r = must_run(kdir, cdir, 5, "cache dir under a file");
    ck_assert_uint_eq(DELTA(r, disk_writes), 0);
    ck_assert_uint_eq(DELTA(r, source_builds), 1);
    /* A read-only directory (meaningful when not root: root writes anyway). */
    char ro[1300];
    snprintf(ro, sizeof ro, "%s/ro", root);
    ck_assert_int_eq(mkdir(ro, 0500), 0);
    r = must_run(kdir, ro, 5, "read-only cache dir");
    if (geteuid() != 0)
        ck_assert_uint_eq(DELTA(r, disk_writes), 0);
    ck_assert_int_eq(count_suffix(ro, ".tmp"), 0);
    ck_assert_int_eq(chmod(ro, 0700), 0);
    tu_remove_dir(kdir);
    tu_remove_dir(root);
    free(kdir);
    free(root);
}
END_TEST

/* A full disk: no portable way to fill one without root mounts (RLIMIT_FSIZE also breaks POCL's
 * own kernel cache writes), so the disk cache's write(2) is swapped for one that writes a little and
 * then fails with ENOSPC, leaving a partial temp file, as a real full disk does. */
static size_t disk_room;
static ssize_t full_disk_write(int fd, const void *buf, size_t size)
{
    if (disk_room == 0) {
        errno = ENOSPC;
        return -1;
    }
    size_t n = size < disk_room ? size : disk_room;
    disk_room -= n;
    return write(fd, buf, n);
}
static void disk_nearly_full(void)
{
    disk_room = 100;
    clt__disk_cache_write_fn = full_disk_write;
}

START_TEST(full_disk_leaves_no_partial_entry)
{
    char *kdir = tu_make_temp_dir(), *cdir = tu_make_temp_dir();
    write_family(kdir);
    child_report r;
    int status = run_child(kdir, cdir, 9, disk_nearly_full, &r);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0 && r.ok == 1,
                  "full disk: wait status 0x%x, status %d: %s", status, (int)r.status, r.message);
    ck_assert_uint_eq(DELTA(r, disk_writes), 0);
    ck_assert_int_eq(count_suffix(cdir, ".bin"), 0);
    ck_assert_int_eq(count_suffix(cdir, ".tmp"), 0);
    ck_assert_int_eq(count_suffix(cdir, ".trial"), 0);
    /* With room again, it is written and then loaded. */
    r = must_run(kdir, cdir, 9, "room again");
    ck_assert_uint_eq(DELTA(r, disk_writes), 1);
    r = must_run(kdir, cdir, 9, "room again, warm");
    ck_assert_uint_eq(DELTA(r, disk_loads), 1);
    done(kdir, cdir);
}
END_TEST

/* Four processes start cold on one cache directory at once, each building the same two programs:
 * every one runs right, and afterwards the cache holds exactly good entries. */
START_TEST(four_cold_processes_share_one_dir)
{
    char *kdir = tu_make_temp_dir(), *cdir = tu_make_temp_dir();
    write_family(kdir);
    int go[2];
    ck_assert_int_eq(pipe(go), 0);
    pid_t pids[4];
    for (int p = 0; p < 4; p++) {
        pids[p] = fork();
        ck_assert_int_ge(pids[p], 0);
        if (pids[p] == 0) {
            close(go[1]);
            char c;
            ssize_t n = read(go[0], &c, 1); /* all start together */
            (void)n;
            alarm(CHILD_ALARM_S);
            child_report a, b;
            child_body(kdir, cdir, 11, &a);
            child_body(kdir, cdir, 13, &b);
            _exit(a.ok == 1 && b.ok == 1 ? 0 : 3);
        }
    }
    close(go[0]);
    close(go[1]); /* EOF releases every child at once */
    for (int p = 0; p < 4; p++) {
        int status;
        ck_assert_int_eq(waitpid(pids[p], &status, 0), pids[p]);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                      "concurrent process %d failed (wait status 0x%x)", p, status);
    }
    ck_assert_int_eq(count_suffix(cdir, ".bin"), 2);
    ck_assert_int_eq(count_suffix(cdir, ".tmp"), 0);
    ck_assert_int_eq(count_suffix(cdir, ".trial"), 0);
    child_report r = must_run(kdir, cdir, 11, "after the race");
    ck_assert_uint_eq(DELTA(r, disk_loads), 1);
    ck_assert_uint_eq(DELTA(r, disk_rejects), 0);
    r = must_run(kdir, cdir, 13, "after the race");
    ck_assert_uint_eq(DELTA(r, disk_loads), 1);
    ck_assert_uint_eq(DELTA(r, disk_rejects), 0);
    done(kdir, cdir);
}
END_TEST

Suite *cache_faults_suite(void)
{
    Suite *s = suite_create("cache_faults");
    TCase *tc = tcase_create("faults");
    tcase_add_test(tc, truncated_entry_costs_one_rebuild);
    tcase_add_loop_test(tc, checksum_valid_garbage_is_tried_once, 0, 3);
    tcase_add_test(tc, pocl_binary_without_program_bc_is_not_stored);
    tcase_add_test(tc, trial_marks_of_dead_and_live_processes);
    tcase_add_test(tc, fifo_entry_neither_blocks_nor_stays);
    tcase_add_test(tc, fifo_tuning_file_and_kernel_source_rejected);
    tcase_add_test(tc, unwritable_cache_dir_still_runs);
    tcase_add_test(tc, full_disk_leaves_no_partial_entry);
    tcase_add_test(tc, four_cold_processes_share_one_dir);
    suite_add_tcase(s, tc);
    return s;
}
