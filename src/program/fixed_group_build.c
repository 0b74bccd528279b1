/* Building a program whose kernels declare their work-group with CLT_FIXED_GROUP
 * (cl_kernels/common/fixed_group.h) on NVIDIA: with the attribute, and again without it when
 * ptxas spilled.
 *
 * Why both: the attribute becomes PTX's .reqntid, and ptxas then lowers a kernel's registers to
 * the count at which one more block fits an SM, even at the price of local-memory spills
 * (bench/results/h200/nv_spills.md). Dropping it everywhere removes those spills but costs speed
 * where the attribute helped: H200, stop 16, the same call: matmul/2048 497 us without it against
 * 420 us with it, matmul/1024 85.6 against 80.3 us. So each program keeps the attribute unless its
 * own build log shows a spill; then the build without it (-DCLT_REQD=0) is the one kept, cached
 * and reported (clt-kernels --nv-report builds through the same function). */
#include <stdlib.h>
#include <string.h>

#include "program/program.h"

char *clt__program_build_log(cl_program program, cl_device_id dev)
{
    size_t size = 0;
    if (clGetProgramBuildInfo(program, dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &size) != CL_SUCCESS)
        return strdup("(build log unavailable)");
    char *log = malloc(size + 1);
    if (!log)
        return NULL;
    if (clGetProgramBuildInfo(program, dev, CL_PROGRAM_BUILD_LOG, size, log, NULL) != CL_SUCCESS)
        size = 0;
    log[size] = '\0';
    return log;
}

int clt__log_has_spills(const char *log)
{
    static const char tag[] = " bytes spill ";
    for (const char *p = log ? strstr(log, tag) : NULL; p; p = strstr(p + 1, tag)) {
        const char *d = p; /* the count is the digits just before the tag */
        while (d > log && d[-1] >= '0' && d[-1] <= '9')
            d--;
        for (const char *q = d; q < p; q++)
            if (*q != '0')
                return 1;
    }
    return 0;
}

int clt__fixed_group_guarded(const clt_device_info *info, const char *source, size_t length,
                             const char *options)
{
    if (info->vendor != CLT_VENDOR_NVIDIA || strstr(options, "-DCLT_REQD=0"))
        return 0;
    /* the kernel file itself spells the macro (an include would only define it) */
    static const char use[] = "CLT_FIXED_GROUP(";
    const size_t n = sizeof use - 1;
    for (size_t i = 0; i + n <= length; i++)
        if (source[i] == 'C' && memcmp(source + i, use, n) == 0)
            return 1;
    return 0;
}

/* options + suffix, heap. */
static char *joined(const char *options, const char *suffix)
{
    size_t a = strlen(options), b = strlen(suffix);
    char *s = malloc(a + b + 1);
    if (s) {
        memcpy(s, options, a);
        memcpy(s + a, suffix, b + 1);
    }
    return s;
}

cl_int clt__build_fixed_group(cl_program *program, cl_context cl_ctx, cl_device_id dev,
                              const char *source, size_t length, const char *options,
                              int *dropped)
{
    *dropped = 0;
    char *with = joined(options, " -cl-nv-verbose");
    char *without = joined(options, " -DCLT_REQD=0 -cl-nv-verbose");
    cl_int err = with && without ? CL_SUCCESS : CL_OUT_OF_HOST_MEMORY;
    if (err == CL_SUCCESS)
        err = clBuildProgram(*program, 1, &dev, with, NULL, NULL);
    char *log = err == CL_SUCCESS ? clt__program_build_log(*program, dev) : NULL;
    if (log && clt__log_has_spills(log)) {
        cl_int e2;
        cl_program second = clCreateProgramWithSource(cl_ctx, 1, &source, &length, &e2);
        if (e2 == CL_SUCCESS && clBuildProgram(second, 1, &dev, without, NULL, NULL) == CL_SUCCESS) {
            clReleaseProgram(*program); /* the attribute's build: spills, so not kept */
            *program = second;
            *dropped = 1;
        } else if (e2 == CL_SUCCESS) {
            clReleaseProgram(second); /* keep the first, which built */
        }
    }
    free(log);
    free(with);
    free(without);
    return err;
}
