/* The tuning file: measured dispatch thresholds and kernel parameters for one device, written by
 * clt-tune into the cache directory and read when a context is created. Internal.
 *
 * Format (text, one entry per line, '#' comments and blank lines allowed before the checksum):
 *   cltensor-tuning 1
 *   header.device = NVIDIA H200            header.* say what it was measured on and how
 *   header.driver = 550.54.15
 *   header.platform = OpenCL 3.0 CUDA 12.4.131
 *   header.profile = native
 *   header.date = 2026-11-29 17:50 UTC
 *   header.command = clt-tune --quick
 *   header.library = 0.1.0                  (informational)
 *   gemm.clblast_min_dim = 2048            <section>.<key> = <value>: one section per op family
 *   gemm.tiled.0 = 128 128 16 16 16 4 1
 *   ...
 *   checksum = 0123456789abcdef            clt__hash64 of every byte before this line; last line
 * Reading is strict: any syntax error, unknown version, checksum mismatch, foreign header, or a value
 * that a registered section (tuning_load.c) rejects makes the whole file ignored, with the reason
 * kept for clt-info. Sections nobody registered are kept as they are (a newer clt-tune may write
 * them), so an op can add its thresholds without a format change: register a section checker in
 * tuning_load.c and read the values with clt__tuning_value. */
#ifndef CLT_TUNING_FILE_H
#define CLT_TUNING_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "ops/conv/conv_tables.h"
#include "ops/gemm/gemm_tables.h"

#define CLT_TUNING_FORMAT_VERSION 1
#define CLT_TUNING_MAX_ENTRIES 128
#define CLT_TUNING_MAX_BYTES 65536
#define CLT_TUNING_KEY_MAX 64
#define CLT_TUNING_VALUE_MAX 192

typedef struct clt__tuning_kv {
    char key[CLT_TUNING_KEY_MAX];     /* "gemm.clblast_min_dim": [a-z0-9_.], with a section */
    char value[CLT_TUNING_VALUE_MAX]; /* trimmed, printable, no newline */
} clt__tuning_kv;

typedef struct clt__tuning_entries {
    int n;
    clt__tuning_kv kv[CLT_TUNING_MAX_ENTRIES];
} clt__tuning_entries;

/* What a context runs with. Built once at context creation; read-only afterwards. */
typedef struct clt__tuning {
    clt_tuning_source source; /* cltensor.h: CLT_TUNING_BUILTIN, _FILE or _IGNORED */
    char path[600]; /* the file looked for ("" when tuning files are off) */
    char why[256];  /* IGNORED: the reason; BUILTIN: why there is no file ("no file", "off") */
    char date[64];  /* FILE: header.date */
    clt__tuning_entries entries; /* FILE: every entry, header and unregistered sections included */
    int has_gemm_rule;           /* FILE with gemm.clblast_* keys: gemm_rule merges them */
    clt__gemm_rule gemm_rule;
    int has_gemm_table;          /* FILE with gemm kernel keys: gemm_table merges them */
    clt__gemm_table gemm_table;
    int has_conv_rule;           /* FILE with conv.clblast_* keys: conv_rule merges them */
    clt__conv_rule conv_rule;
} clt__tuning;

/* ---- format (tuning_file.c) */

/* Parse text (len bytes) into out. Returns 0, or -1 with a reason in why. */
int clt__tuning_parse(const char *text, size_t len, clt__tuning_entries *out, char *why, size_t cap);
/* Append an entry (replacing an existing key). Returns 0, or -1 when the key or value is invalid or
 * the list is full. */
int clt__tuning_set(clt__tuning_entries *e, const char *key, const char *value);
/* The value of key, or NULL. */
const char *clt__tuning_find(const clt__tuning_entries *e, const char *key);
/* Serialise (magic line, entries in order, checksum) into a heap string; NULL when out of memory. */
char *clt__tuning_format(const clt__tuning_entries *e);
/* Write e to path: temp file in the same directory, then rename; creates the directory. Returns 0,
 * or -1 with a reason in why. */
int clt__tuning_write(const char *path, const clt__tuning_entries *e, char *why, size_t cap);
/* Read and parse path. Returns 0, or -1 with a reason ("cannot open: ...", "line 3: ...") in why. */
int clt__tuning_read(const char *path, clt__tuning_entries *out, char *why, size_t cap);

/* ---- per context (tuning_load.c) */

/* The default file of ctx's device: <cache_dir>/tuning-<hash of device, driver, platform>.txt, or
 * "" when the cache directory is off. */
void clt__tuning_default_path(const clt_context *ctx, char *buf, size_t cap);
/* The header.* entries for ctx's device (clt-tune adds date and command). */
int clt__tuning_header(const clt_context *ctx, clt__tuning_entries *e);
/* Build ctx->tuning: $CLT_TUNING_FILE (a path, or "off"), else the default path. Never fails the
 * context: a missing or rejected file leaves the built-in tables in force. Returns 0, or -1 when
 * out of host memory. */
int clt__tuning_load(clt_context *ctx);
/* Check entries against ctx (header, registered sections) and build t from them; on rejection
 * t->source is IGNORED with the reason. path is only recorded. */
void clt__tuning_apply(const clt_context *ctx, const char *path, const clt__tuning_entries *e,
                       clt__tuning *t);
void clt__tuning_free(clt__tuning *t);
/* The value of "section.key" in the file in force, or NULL (no file, ignored file, no such key). */
const char *clt__tuning_value(const clt_context *ctx, const char *key);

/* ---- the gemm section (gemm_tuning.c) */

/* Check every gemm.* entry and merge them over ctx's built-in rule and table into t. Returns 0, or
 * -1 with the reason. */
int clt__gemm_tuning_apply(const clt_context *ctx, const clt__tuning_entries *e, clt__tuning *t,
                           char *why, size_t cap);
/* The gemm.* entries that describe rule r and table tb (what clt-tune writes). */
int clt__gemm_tuning_entries(const clt__gemm_rule *r, const clt__gemm_table *tb,
                             clt__tuning_entries *e);
/* Whether c satisfies gemm_tiled.cl's #error constraints and ctx's limits; why says which not. */
int clt__gemm_tiled_cfg_ok(const clt_context *ctx, const clt__gemm_tiled_cfg *c, char *why, size_t cap);
int clt__gemm_cpu_cfg_ok(const clt_context *ctx, const clt__gemm_cpu_cfg *c, char *why, size_t cap);

/* ---- the conv section (conv_tuning.c) */

/* conv.clblast_min_flop = <number> (0 = never CLBlast), conv.clblast_min_k = <int>: merged over
 * ctx's built-in conv rule into t. Returns 0, or -1 with the reason. */
int clt__conv_tuning_apply(const clt_context *ctx, const clt__tuning_entries *e, clt__tuning *t,
                           char *why, size_t cap);
/* The conv.* entries of rule r (what clt-tune writes). */
int clt__conv_tuning_entries(const clt__conv_rule *r, clt__tuning_entries *e);

/* ---- the fft section (src/ops/fft/fft_tuning.c) */

#define CLT_FFT_TUNED_MAX 24 /* lengths per list */

/* Check the fft.* entries (fft.ours / fft.vkfft / fft.clfft = lengths). Returns 0, or -1 with the
 * reason. Nothing is merged into t: plans read the lists through clt__tuning_value. */
int clt__fft_tuning_apply(const clt_context *ctx, const clt__tuning_entries *e, clt__tuning *t,
                          char *why, size_t cap);
/* The fft.* entries for count measured lengths n[i], each under its fastest backend's name
 * ("ours", "vkfft" or "clfft"); -1 when a list would not fit a value. */
int clt__fft_tuning_entries(const int64_t *n, const char *const *backend, int count,
                            clt__tuning_entries *e);

#endif
