/* JSON output shared by the command-line tools (clt-info, clt-bench). */
#ifndef CLT_JSON_OUT_H
#define CLT_JSON_OUT_H

#include <stdio.h>

/* A JSON string literal: quotes, backslashes and control characters escaped. */
void json_out_string(FILE *f, const char *s);

#endif
