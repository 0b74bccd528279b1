/* Opening files we read as untrusted input: a FIFO or a device at such a path must not block the
 * process (open(2) on a FIFO with no writer waits forever), and a directory must not be read as
 * data. So the open is non-blocking, the type is checked on the open descriptor (no window between
 * a stat and the open), and only then is the descriptor made blocking again for ordinary reads. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/runtime.h"

int clt__open_regular(const char *path, char *why, size_t cap)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        int saved = errno; /* callers tell a missing file (ENOENT) from a bad one */
        snprintf(why, cap, "cannot open %s: %s", path, strerror(saved));
        errno = saved;
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int saved = errno;
        close(fd);
        snprintf(why, cap, "cannot stat %s: %s", path, strerror(saved));
        errno = saved;
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        snprintf(why, cap, "%s is not a regular file (%s)", path,
                 S_ISDIR(st.st_mode)    ? "a directory"
                 : S_ISFIFO(st.st_mode) ? "a FIFO"
                 : S_ISCHR(st.st_mode)  ? "a character device"
                 : S_ISBLK(st.st_mode)  ? "a block device"
                 : S_ISSOCK(st.st_mode) ? "a socket"
                                        : "not a plain file");
        errno = EINVAL;
        return -1;
    }
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0)
        fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    return fd;
}

FILE *clt__fopen_regular(const char *path, char *why, size_t cap)
{
    int fd = clt__open_regular(path, why, cap);
    if (fd < 0)
        return NULL;
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        int saved = errno;
        close(fd);
        snprintf(why, cap, "cannot open %s: %s", path, strerror(saved));
        errno = saved;
    }
    return f;
}
