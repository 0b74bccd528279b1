/* Bounded reading of untrusted text files; see text_file.h. */
#include "tools/text_file.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/runtime.h"

static int failf(char *err, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
    return CLT__TEXT_BAD;
}

int clt__read_text_file(const char *path, long max, char **out, size_t *len, char *err, size_t cap)
{
    /* clt__open_regular: a FIFO or a device is refused without blocking, as the library's own
     * cache and tuning-file reads are */
    int fd = clt__open_regular(path, err, cap);
    if (fd < 0)
        return errno == ENOENT ? CLT__TEXT_ABSENT : CLT__TEXT_BAD;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return failf(err, cap, "%s: cannot stat: %s", path, strerror(e));
    }
    if (st.st_size > max) {
        close(fd);
        return failf(err, cap, "%s: %lld bytes, more than the %ld accepted", path,
                     (long long)st.st_size, max);
    }
    size_t n = (size_t)st.st_size;
    char *buf = malloc(n + 1);
    size_t got = 0;
    int rerr = 0;
    while (buf && got < n) { /* the file may shrink while read: stop at end of file */
        ssize_t k = read(fd, buf + got, n - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            rerr = errno;
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    close(fd);
    if (!buf)
        return failf(err, cap, "%s: out of host memory", path);
    if (rerr) {
        free(buf);
        return failf(err, cap, "%s: read failed: %s", path, strerror(rerr));
    }
    buf[got] = '\0';
    if (memchr(buf, '\0', got)) {
        free(buf);
        return failf(err, cap, "%s: contains a NUL byte (not a text report)", path);
    }
    *out = buf;
    *len = got;
    return CLT__TEXT_OK;
}

