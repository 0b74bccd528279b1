/* tool_args.h: the checks every tool applies to its option values before doing any work. */
#include "tool_args.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cltensor.h"

int tool_parse_int(const char *tool, const char *option, const char *text, long min, long max, int *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (!*text || *end || errno == ERANGE || v < min || v > max || v < INT_MIN || v > INT_MAX) {
        fprintf(stderr, "%s: %s: '%s' is not an integer in [%ld, %ld]\n", tool, option, text, min, max);
        return -1;
    }
    *out = (int)v;
    return 0;
}

int tool_parse_positive(const char *tool, const char *option, const char *text, double min_exclusive,
                        double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (!*text || *end || errno == ERANGE || !isfinite(v) || !(v > min_exclusive)) {
        fprintf(stderr, "%s: %s: '%s' is not a number greater than %g\n", tool, option, text,
                min_exclusive);
        return -1;
    }
    *out = v;
    return 0;
}

int tool_check_output(const char *tool, const char *option, const char *path)
{
    if (!*path) {
        fprintf(stderr, "%s: %s: empty path\n", tool, option);
        return -1;
    }
    struct stat st;
    if (stat(path, &st) == 0) {
        if (!S_ISREG(st.st_mode) || access(path, W_OK) != 0) {
            fprintf(stderr, "%s: %s: %s is not a writable file\n", tool, option, path);
            return -1;
        }
        return 0;
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || access(dir, W_OK | X_OK) != 0) {
        fprintf(stderr, "%s: %s: cannot create %s (directory %s is missing or not writable)\n", tool,
                option, path, dir);
        return -1;
    }
    return 0;
}

void tool_print_version(const char *tool)
{
    printf("%s %s\n", tool, clt_version_string());
}
