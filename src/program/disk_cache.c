/* On-disk cache of program binaries: one file per key, <dir>/<32 hex>.bin, laid out as
 *   "CLTPROG1" | u32 format version | 32 key chars | u64 payload size | u64 payload checksum |
 * payload (integers little-endian). Files are written under a temp name and renamed, so a reader
 * never sees half a file; anything unexpected is a silent miss, because the cache only saves
 * compile time. A driver can abort the process while loading a binary it dislikes (POCL asserts),
 * which no caller can catch; so a load is bracketed by a trial mark, <dir>/<32 hex>.trial holding
 * the loader's pid, and a mark whose process is gone means that entry is discarded, never retried. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "program/program.h"

#define MAGIC "CLTPROG1"
#define HEADER_BYTES (8 + 4 + 32 + 8 + 8)
#define CHECKSUM_SEED 0x6c7470726f673031ull
/* Far beyond any real program binary; protects against a corrupt size field. */
#define MAX_PAYLOAD ((uint64_t)1 << 30)

static uint64_t mix64(uint64_t z)
{
    z ^= z >> 33;
    z *= 0xff51afd7ed558ccdull;
    z ^= z >> 33;
    z *= 0xc4ceb9fe1a85ec53ull;
    z ^= z >> 33;
    return z;
}

uint64_t clt__hash64(const void *data, size_t size, uint64_t seed)
{
    const unsigned char *p = data;
    uint64_t h = mix64(seed ^ ((uint64_t)size * 0x9e3779b97f4a7c15ull));
    size_t i = 0;
    for (; i + 8 <= size; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h ^= mix64(w + 0x165667b19e3779f9ull);
        h = ((h << 27) | (h >> 37)) * 0x9e3779b97f4a7c15ull + 0x27d4eb2f165667c5ull;
    }
    uint64_t tail = 0;
    for (size_t k = 0; i + k < size; k++)
        tail |= (uint64_t)p[i + k] << (8 * k);
    h ^= mix64(tail ^ 0x85ebca77c2b2ae63ull);
    return mix64(h);
}

/* Each field is hashed with its length folded in, so ("ab","c") and ("a","bc") differ. */
static void key_lane(uint64_t *h, const void *data, size_t size)
{
    *h = clt__hash64(data, size, *h);
}

clt_cache_key clt__cache_key(const char *source, size_t source_len, const char *options,
                             const clt_device_info *info)
{
    const char *fields[5] = {options ? options : "", info ? info->device_name : "",
                             info ? info->driver_version : "", info ? info->platform_version : "",
                             info ? info->device_version : ""};
    uint64_t lanes[2] = {0x636c74656e736f72ull, 0x70726f6772616d73ull};
    uint32_t version = CLT_CACHE_FORMAT_VERSION;
    for (int l = 0; l < 2; l++) {
        key_lane(&lanes[l], &version, sizeof version);
        key_lane(&lanes[l], source ? source : "", source ? source_len : 0);
        for (int f = 0; f < 5; f++)
            key_lane(&lanes[l], fields[f], strlen(fields[f]));
    }
    clt_cache_key key;
    snprintf(key.hex, sizeof key.hex, "%016llx%016llx", (unsigned long long)lanes[0],
             (unsigned long long)lanes[1]);
    return key;
}

static void put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get_u32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v |= (uint32_t)p[i] << (8 * i);
    return v;
}

static uint64_t get_u64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static int file_path(char *buf, size_t cap, const char *dir, const clt_cache_key *key)
{
    int n = snprintf(buf, cap, "%s/%s.bin", dir, key->hex);
    return n > 0 && (size_t)n < cap;
}

static int read_all(int fd, unsigned char *buf, size_t size)
{
    size_t done = 0;
    while (done < size) {
        ssize_t n = read(fd, buf + done, size - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return 0;
        done += (size_t)n;
    }
    return 1;
}

/* write(2), replaceable by tests to simulate a full disk (no portable way to fill one). */
ssize_t (*clt__disk_cache_write_fn)(int fd, const void *buf, size_t size) = write;

static int write_all(int fd, const unsigned char *buf, size_t size)
{
    size_t done = 0;
    while (done < size) {
        ssize_t n = clt__disk_cache_write_fn(fd, buf + done, size - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return 0;
        done += (size_t)n;
    }
    return 1;
}

/* Why a file was refused, for the debug log; NULL when it is fine. */
static const char *check_header(const unsigned char *h, const clt_cache_key *key,
                                uint64_t file_size, uint64_t *payload_size)
{
    if (memcmp(h, MAGIC, 8) != 0)
        return "bad magic";
    if (get_u32(h + 8) != CLT_CACHE_FORMAT_VERSION)
        return "other format version";
    if (memcmp(h + 12, key->hex, 32) != 0)
        return "other key";
    *payload_size = get_u64(h + 44);
    if (*payload_size == 0 || *payload_size > MAX_PAYLOAD ||
        *payload_size != file_size - HEADER_BYTES)
        return "payload size does not match the file";
    return NULL;
}

int clt__disk_cache_load(const char *dir, const clt_cache_key *key, unsigned char **data,
                         size_t *size, int *rejected)
{
    *data = NULL;
    *size = 0;
    *rejected = 0;
    char path[1100];
    if (!dir || !*dir || !file_path(path, sizeof path, dir, key))
        return 0;
    char why_open[1300];
    int fd = clt__open_regular(path, why_open, sizeof why_open); /* a FIFO must not block us */
    if (fd < 0) {
        if (errno != ENOENT) {
            *rejected = 1;
            clt__log("disk cache: rejecting entry: %s", why_open);
        }
        return 0;
    }
    *rejected = 1; /* until proven good */
    const char *why = NULL;
    unsigned char header[HEADER_BYTES];
    unsigned char *payload = NULL;
    uint64_t payload_size = 0;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size < HEADER_BYTES + 1)
        why = "not a regular file of plausible size";
    else if (!read_all(fd, header, HEADER_BYTES))
        why = "short header";
    else if ((why = check_header(header, key, (uint64_t)st.st_size, &payload_size)) != NULL)
        ;
    else if ((payload = malloc((size_t)payload_size)) == NULL)
        why = "out of host memory";
    else if (!read_all(fd, payload, (size_t)payload_size))
        why = "short payload";
    else if (clt__hash64(payload, (size_t)payload_size, CHECKSUM_SEED) != get_u64(header + 52))
        why = "checksum mismatch";
    close(fd);
    if (why) {
        clt__log("disk cache: rejecting %s: %s", path, why);
        free(payload);
        return 0;
    }
    *rejected = 0;
    *data = payload;
    *size = (size_t)payload_size;
    return 1;
}

/* mkdir -p, owner-only: cached binaries are code this library will load and run. */
static int make_dirs(const char *dir)
{
    char path[1024];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof path)
        return 0;
    memcpy(path, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (path[i] != '/' && path[i] != '\0')
            continue;
        char saved = path[i];
        path[i] = '\0';
        if (mkdir(path, 0700) != 0 && errno != EEXIST)
            return 0;
        path[i] = saved;
    }
    struct stat st;
    return stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Distinguishes temp files of concurrent writers, in this process and others. */
static uint64_t temp_nonce(void)
{
    static _Atomic uint64_t counter;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t n = counter++;
    return mix64(((uint64_t)ts.tv_sec << 32) ^ (uint64_t)ts.tv_nsec ^ (n * 0x9e3779b97f4a7c15ull) ^
                 (uint64_t)(uintptr_t)&ts);
}

int clt__disk_cache_store(const char *dir, const clt_cache_key *key, const unsigned char *data,
                          size_t size)
{
    if (!dir || !*dir || !data || size == 0 || (uint64_t)size > MAX_PAYLOAD)
        return 0;
    char path[1100], temp[1200];
    if (!file_path(path, sizeof path, dir, key))
        return 0;
    int n = snprintf(temp, sizeof temp, "%s/.%s.%ld.%016llx.tmp", dir, key->hex, (long)getpid(),
                     (unsigned long long)temp_nonce());
    if (n <= 0 || (size_t)n >= sizeof temp || !make_dirs(dir)) {
        clt__log("disk cache: cannot create directory %s", dir);
        return 0;
    }
    unsigned char header[HEADER_BYTES];
    memcpy(header, MAGIC, 8);
    put_u32(header + 8, CLT_CACHE_FORMAT_VERSION);
    memcpy(header + 12, key->hex, 32);
    put_u64(header + 44, (uint64_t)size);
    put_u64(header + 52, clt__hash64(data, size, CHECKSUM_SEED));

    int fd = open(temp, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0) {
        clt__log("disk cache: cannot create %s: %s", temp, strerror(errno));
        return 0;
    }
    int ok = write_all(fd, header, HEADER_BYTES) && write_all(fd, data, size);
    ok = (close(fd) == 0) && ok;
    if (ok && rename(temp, path) != 0)
        ok = 0;
    if (!ok) {
        clt__log("disk cache: cannot write %s: %s", path, strerror(errno));
        unlink(temp);
    }
    return ok;
}

static int mark_path(char *buf, size_t cap, const char *dir, const clt_cache_key *key)
{
    int n = snprintf(buf, cap, "%s/%s.trial", dir, key->hex);
    return n > 0 && (size_t)n < cap;
}

void clt__disk_cache_discard(const char *dir, const clt_cache_key *key)
{
    char path[1100];
    if (!dir || !*dir)
        return;
    if (file_path(path, sizeof path, dir, key))
        unlink(path);
    if (mark_path(path, sizeof path, dir, key))
        unlink(path);
}

/* The pid recorded in a trial mark; 0 when it cannot be read (marks are created whole, so an
 * unreadable one is garbage). */
static long mark_owner(const char *mark)
{
    char why[64], text[32];
    int fd = clt__open_regular(mark, why, sizeof why);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0)
        return 0;
    text[n] = '\0';
    char *end;
    long pid = strtol(text, &end, 10);
    return pid > 0 && (*end == '\n' || *end == '\0') ? pid : 0;
}

static int process_alive(long pid)
{
    return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

/* Creates the mark holding our pid, atomically: written under a temp name, then link(2)ed to the
 * mark's name, which fails with EEXIST when a mark is there, so no reader ever sees a half-written
 * mark. 1 = created, 0 = one exists, -1 = cannot create (errno kept). */
static int create_mark(const char *dir, const clt_cache_key *key, const char *mark)
{
    char temp[1200], text[32];
    int n = snprintf(temp, sizeof temp, "%s/.%s.%ld.%016llx.trial.tmp", dir, key->hex,
                     (long)getpid(), (unsigned long long)temp_nonce());
    if (n <= 0 || (size_t)n >= sizeof temp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    n = snprintf(text, sizeof text, "%ld\n", (long)getpid());
    int ok = write_all(fd, (const unsigned char *)text, (size_t)n);
    ok = close(fd) == 0 && ok;
    int linked = ok ? link(temp, mark) : -1;
    int saved = errno;
    unlink(temp);
    if (linked == 0)
        return 1;
    errno = saved;
    return ok && saved == EEXIST ? 0 : -1;
}

clt_trial clt__disk_cache_trial_begin(const char *dir, const clt_cache_key *key)
{
    char mark[1100];
    if (!dir || !*dir || !mark_path(mark, sizeof mark, dir, key))
        return CLT_TRIAL_SKIP;
    int made = create_mark(dir, key, mark);
    if (made > 0)
        return CLT_TRIAL_STARTED;
    if (made < 0) {
        /* No mark, no protection: an entry that could kill us must not be loaded unguarded. */
        clt__log("disk cache: cannot create trial mark %s: %s", mark, strerror(errno));
        return CLT_TRIAL_SKIP;
    }
    long owner = mark_owner(mark);
    if (owner > 0 && owner != (long)getpid() && process_alive(owner))
        return CLT_TRIAL_SKIP; /* another process is trying this entry right now */
    /* The process that loaded this entry died doing it (or the mark is garbage): never again. */
    clt__log("disk cache: %s left by a load that never finished (pid %ld): discarding the entry",
             mark, owner);
    clt__disk_cache_discard(dir, key);
    return CLT_TRIAL_STALE;
}

void clt__disk_cache_trial_end(const char *dir, const clt_cache_key *key)
{
    char mark[1100];
    if (dir && *dir && mark_path(mark, sizeof mark, dir, key))
        unlink(mark);
}

static int ends_with_bin(const char *name)
{
    size_t n = strlen(name);
    return n > 4 && name[0] != '.' && strcmp(name + n - 4, ".bin") == 0;
}

void clt__disk_cache_usage(const char *dir, uint64_t *files, uint64_t *bytes)
{
    *files = 0;
    *bytes = 0;
    if (!dir || !*dir)
        return;
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!ends_with_bin(e->d_name))
            continue;
        char path[1400];
        int n = snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (n > 0 && (size_t)n < sizeof path && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            (*files)++;
            *bytes += (uint64_t)st.st_size;
        }
    }
    closedir(d);
}
