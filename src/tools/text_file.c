/* Bounded reading of untrusted text files; see text_file.h. */
#include "tools/text_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
    /* O_NONBLOCK: opening a FIFO without a writer must not hang; fstat then refuses it */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return CLT__TEXT_ABSENT;
        return failf(err, cap, "%s: cannot open: %s", path, strerror(errno));
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return failf(err, cap, "%s: cannot stat: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return failf(err, cap, "%s: not a regular file", path);
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

