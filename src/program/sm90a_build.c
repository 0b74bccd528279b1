/* Building OpenCL C kernels that use Hopper-only instructions (wgmma) on NVIDIA.
 *
 * NVIDIA's OpenCL compiles every program for PTX `.target sm_90`, and ptxas refuses the sm_90a-only
 * instructions there, inline asm included (driver 580: "Instruction 'wgmma.fence' not supported on
 * .target 'sm_90'"). A program built from PTX that says `.target sm_90a` runs them, and on NVIDIA a
 * program's "binary" is its PTX. So a kernel file writes each such instruction as an asm comment,
 * "//SM90A wgmma.fence.sync.aligned;": the compiler substitutes the asm operands (registers) into the
 * comment like into any asm text, and keeps it. After that build, this file takes the PTX, strips the
 * markers, raises the target, and builds the program again from that text. The disk cache then stores
 * the patched PTX, which loads like any other binary. */
#include <stdlib.h>
#include <string.h>

#include "program/program.h"

static const char marker[] = "//SM90A ";

int clt__sm90a_wanted(const clt_device_info *info, const char *source, size_t length)
{
    if (info->vendor != CLT_VENDOR_NVIDIA)
        return 0;
    const size_t n = sizeof marker - 1;
    for (size_t i = 0; i + n <= length; i++)
        if (source[i] == '/' && memcmp(source + i, marker, n) == 0)
            return 1;
    return 0;
}

/* text with every `from` replaced by `to`, heap; *count = replacements. */
static char *replaced(const char *text, const char *from, const char *to, int *count)
{
    size_t nf = strlen(from), nt = strlen(to), hits = 0;
    for (const char *p = strstr(text, from); p; p = strstr(p + nf, from))
        hits++;
    char *out = malloc(strlen(text) + hits * nt + 1);
    if (!out)
        return NULL;
    char *w = out;
    const char *p = text, *h;
    while ((h = strstr(p, from)) != NULL) {
        memcpy(w, p, (size_t)(h - p));
        w += h - p;
        memcpy(w, to, nt);
        w += nt;
        p = h + nf;
    }
    strcpy(w, p);
    *count = (int)hits;
    return out;
}

char *clt__sm90a_patch(const char *ptx, const char **why)
{
    int markers = 0, targets = 0;
    char *stripped = replaced(ptx, marker, "", &markers);
    if (!stripped) {
        *why = "out of host memory";
        return NULL;
    }
    /* ".target sm_90," (NVIDIA adds ", texmode_independent") or ".target sm_90\n" */
    char *out = replaced(stripped, ".target sm_90,", ".target sm_90a,", &targets);
    if (out && targets == 0) {
        free(out);
        out = replaced(stripped, ".target sm_90\n", ".target sm_90a\n", &targets);
    }
    free(stripped);
    if (!out)
        *why = "out of host memory";
    else if (markers == 0)
        *why = "the compiled PTX kept no //SM90A marker";
    else if (targets != 1)
        *why = "the compiled PTX is not for .target sm_90";
    if (out && (markers == 0 || targets != 1)) {
        free(out);
        out = NULL;
    }
    return out;
}

cl_int clt__sm90a_rebuild(cl_program *program, cl_context cl_ctx, cl_device_id dev,
                          const char *options, const char **why)
{
    *why = NULL;
    size_t size = 0;
    unsigned char *bin = clt__program_binary(*program, dev, &size);
    if (!bin) {
        *why = "the driver gave no PTX for the program";
        return CL_BUILD_PROGRAM_FAILURE;
    }
    char *ptx = realloc(bin, size + 1);
    if (!ptx) {
        free(bin);
        *why = "out of host memory";
        return CL_OUT_OF_HOST_MEMORY;
    }
    ptx[size] = '\0';
    char *text = clt__sm90a_patch(ptx, why);
    free(ptx);
    if (!text)
        return CL_BUILD_PROGRAM_FAILURE;
    size_t n = strlen(text);
    const unsigned char *p = (const unsigned char *)text;
    cl_int err, bin_status = CL_SUCCESS;
    cl_program rebuilt = clCreateProgramWithBinary(cl_ctx, 1, &dev, &n, &p, &bin_status, &err);
    free(text);
    if (err == CL_SUCCESS && bin_status != CL_SUCCESS)
        err = bin_status;
    if (err == CL_SUCCESS)
        err = clBuildProgram(rebuilt, 1, &dev, options, NULL, NULL);
    if (err != CL_SUCCESS) {
        *why = "the driver refused the sm_90a PTX";
        if (rebuilt) {
            /* keep the failed program: its build log says why */
            clReleaseProgram(*program);
            *program = rebuilt;
        }
        return err == CL_SUCCESS ? CL_BUILD_PROGRAM_FAILURE : err;
    }
    clReleaseProgram(*program);
    *program = rebuilt;
    return CL_SUCCESS;
}
