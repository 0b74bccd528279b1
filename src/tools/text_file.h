/* A text file that the tools read as untrusted input (the ISA check's resources.tsv, a saved NVIDIA
 * report): only a regular file (opened without blocking, so a FIFO or a device is refused, never
 * waited on), at most max bytes, no NUL byte. */
#ifndef CLT_TEXT_FILE_H
#define CLT_TEXT_FILE_H

#include <stddef.h>

enum { CLT__TEXT_OK = 0, CLT__TEXT_ABSENT = 1, CLT__TEXT_BAD = 2 };

/* The whole file into *out (heap, NUL-terminated, *len bytes before the NUL). CLT__TEXT_ABSENT when
 * it does not exist; CLT__TEXT_BAD with a message naming the path and the problem in err. */
int clt__read_text_file(const char *path, long max, char **out, size_t *len, char *err, size_t cap);

#endif
