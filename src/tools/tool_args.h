/* Option values of the command-line tools (clt-info, clt-tune, clt-bench): numbers parsed whole with
 * strtol/strtod and range-checked, output paths checked before any work, --version. Each failure
 * prints one line "<tool>: <option>: <why>" on stderr and returns -1. */
#ifndef CLT_TOOL_ARGS_H
#define CLT_TOOL_ARGS_H

/* text is a whole decimal integer in [min, max] -> *out. */
int tool_parse_int(const char *tool, const char *option, const char *text, long min, long max, int *out);
/* text is a whole finite number > min_exclusive -> *out. */
int tool_parse_positive(const char *tool, const char *option, const char *text, double min_exclusive,
                        double *out);
/* path can be written: its directory exists and is writable, and the file, if it exists, is a
 * writable regular file. Nothing is created. */
int tool_check_output(const char *tool, const char *option, const char *path);
/* "<tool> <library version>" on stdout. */
void tool_print_version(const char *tool);

#endif
