/* Device discovery (once per process), capability probe, and selection strings. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "runtime/runtime.h"

#define MAX_DEVICES 64

/* Vendor attribute queries (cl_nv_device_attribute_query, cl_amd_device_attribute_query). */
#define CLT_DEVICE_WARP_SIZE_NV 0x4003
#define CLT_DEVICE_WAVEFRONT_WIDTH_AMD 0x4043

static clt_device_entry devices[MAX_DEVICES];
static int device_count;
static clt_status enumerate_status = CLT_SUCCESS;
static char enumerate_error[512];
static pthread_once_t enumerate_once = PTHREAD_ONCE_INIT;

int clt__contains_nocase(const char *haystack, const char *needle)
{
    size_t n = strlen(needle);
    if (n == 0)
        return 1;
    for (const char *h = haystack; *h; h++) {
        size_t i = 0;
        while (i < n && h[i] && tolower((unsigned char)h[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n)
            return 1;
    }
    return 0;
}

static void get_string(cl_device_id d, cl_device_info what, char *buf, size_t size)
{
    buf[0] = '\0';
    if (clGetDeviceInfo(d, what, size, buf, NULL) != CL_SUCCESS)
        buf[0] = '\0';
    buf[size - 1] = '\0';
}

static clt_vendor detect_vendor(const char *platform, const char *device_vendor)
{
    if (clt__contains_nocase(platform, "nvidia"))
        return CLT_VENDOR_NVIDIA;
    if (clt__contains_nocase(platform, "portable computing language") ||
        clt__contains_nocase(platform, "pocl"))
        return CLT_VENDOR_POCL;
    if (clt__contains_nocase(platform, "amd") || clt__contains_nocase(device_vendor, "advanced micro") ||
        clt__contains_nocase(device_vendor, "amd"))
        return CLT_VENDOR_AMD;
    if (clt__contains_nocase(platform, "intel") || clt__contains_nocase(device_vendor, "intel"))
        return CLT_VENDOR_INTEL;
    return CLT_VENDOR_OTHER;
}

/* Inline PTX is the NVIDIA tensor-core fast path: only trust it if a kernel using it builds. The
 * context made for the probe is kept for the device's shared state: creating an NVIDIA context
 * costs far more than the probe itself. */
static int probe_inline_ptx(clt_device_entry *e)
{
    static const char *src =
        "__kernel void clt_probe_ptx(__global uint *out) {\n"
        "  uint lane;\n"
        "  asm volatile(\"mov.u32 %0, %%laneid;\" : \"=r\"(lane));\n"
        "  out[get_global_id(0)] = lane;\n"
        "}\n";
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)e->platform, 0};
    cl_int err;
    cl_context c = clCreateContext(props, 1, &e->device, NULL, NULL, &err);
    if (err != CL_SUCCESS)
        return 0;
    int ok = 0;
    cl_program p = clCreateProgramWithSource(c, 1, &src, NULL, &err);
    if (err == CL_SUCCESS) {
        ok = clBuildProgram(p, 1, &e->device, "", NULL, NULL) == CL_SUCCESS;
        clReleaseProgram(p);
    }
    e->probe_ctx = c;
    return ok;
}

static void probe(clt_device_entry *e, const char *platform_name, const char *platform_version)
{
    clt_device_info *in = &e->info;
    cl_device_id d = e->device;
    snprintf(in->platform_name, sizeof in->platform_name, "%s", platform_name);
    snprintf(in->platform_version, sizeof in->platform_version, "%s", platform_version);
    get_string(d, CL_DEVICE_NAME, in->device_name, sizeof in->device_name);
    get_string(d, CL_DEVICE_VENDOR, in->device_vendor, sizeof in->device_vendor);
    get_string(d, CL_DEVICE_VERSION, in->device_version, sizeof in->device_version);
    get_string(d, CL_DRIVER_VERSION, in->driver_version, sizeof in->driver_version);
    get_string(d, CL_DEVICE_OPENCL_C_VERSION, in->opencl_c_version, sizeof in->opencl_c_version);

    cl_device_type type = 0;
    clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof type, &type, NULL);
    in->type = (type & CL_DEVICE_TYPE_GPU)           ? CLT_DEVICE_GPU
               : (type & CL_DEVICE_TYPE_CPU)         ? CLT_DEVICE_CPU
               : (type & CL_DEVICE_TYPE_ACCELERATOR) ? CLT_DEVICE_ACCELERATOR
                                                     : CLT_DEVICE_OTHER;
    in->vendor = detect_vendor(platform_name, in->device_vendor);

    cl_uint u = 0;
    size_t sz = 0;
    cl_ulong ul = 0;
    cl_bool b = CL_FALSE;
    clGetDeviceInfo(d, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof u, &u, NULL);
    in->compute_units = u;
    u = 0;
    clGetDeviceInfo(d, CL_DEVICE_MAX_CLOCK_FREQUENCY, sizeof u, &u, NULL);
    in->max_clock_mhz = u;
    clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof sz, &sz, NULL);
    in->max_work_group_size = sz;
    clGetDeviceInfo(d, CL_DEVICE_LOCAL_MEM_SIZE, sizeof ul, &ul, NULL);
    in->local_mem_bytes = ul;
    cl_device_local_mem_type lmt = CL_LOCAL;
    clGetDeviceInfo(d, CL_DEVICE_LOCAL_MEM_TYPE, sizeof lmt, &lmt, NULL);
    in->local_mem_is_global = lmt == CL_GLOBAL;
    ul = 0;
    clGetDeviceInfo(d, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof ul, &ul, NULL);
    in->global_mem_bytes = ul;
    ul = 0;
    clGetDeviceInfo(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof ul, &ul, NULL);
    in->max_alloc_bytes = ul;
    clGetDeviceInfo(d, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof b, &b, NULL);
    in->unified_memory = b == CL_TRUE;

    size_t ext_len = 0;
    clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, 0, NULL, &ext_len);
    char *ext = calloc(ext_len + 1, 1);
    if (ext && clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, ext_len, ext, NULL) == CL_SUCCESS) {
        in->has_fp16 = strstr(ext, "cl_khr_fp16") != NULL;
        in->has_fp64 = strstr(ext, "cl_khr_fp64") != NULL;
        in->has_subgroups = strstr(ext, "cl_khr_subgroups") != NULL ||
                            strstr(ext, "cl_intel_subgroups") != NULL;
        if (in->vendor == CLT_VENDOR_NVIDIA && strstr(ext, "cl_nv_device_attribute_query")) {
            u = 0;
            if (clGetDeviceInfo(d, CLT_DEVICE_WARP_SIZE_NV, sizeof u, &u, NULL) == CL_SUCCESS)
                in->preferred_work_group_multiple = u;
        }
        if (in->vendor == CLT_VENDOR_AMD && strstr(ext, "cl_amd_device_attribute_query")) {
            u = 0;
            if (clGetDeviceInfo(d, CLT_DEVICE_WAVEFRONT_WIDTH_AMD, sizeof u, &u, NULL) == CL_SUCCESS)
                in->preferred_work_group_multiple = u;
        }
    }
    free(ext);
    if (in->preferred_work_group_multiple == 0) {
        if (in->vendor == CLT_VENDOR_NVIDIA)
            in->preferred_work_group_multiple = 32;
        else if (in->vendor == CLT_VENDOR_AMD)
            in->preferred_work_group_multiple = 64;
        else {
            u = 0;
            clGetDeviceInfo(d, CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT, sizeof u, &u, NULL);
            in->preferred_work_group_multiple = u ? u : 1;
        }
    }
    in->has_inline_ptx = in->vendor == CLT_VENDOR_NVIDIA && probe_inline_ptx(e);
}

static void enumerate(void)
{
    cl_uint np = 0;
    cl_int err = clGetPlatformIDs(0, NULL, &np);
    if (err == -1001 /* CL_PLATFORM_NOT_FOUND_KHR: ICD loader found no platform */ || np == 0)
        return;
    if (err != CL_SUCCESS) {
        enumerate_status = CLT_ERR_OPENCL;
        snprintf(enumerate_error, sizeof enumerate_error, "clGetPlatformIDs: %s (%d)",
                 clt__cl_error_name(err), (int)err);
        return;
    }
    cl_platform_id platforms[16];
    if (np > 16)
        np = 16;
    clGetPlatformIDs(np, platforms, NULL);
    for (cl_uint p = 0; p < np; p++) {
        char pname[128] = "", pversion[128] = "";
        clGetPlatformInfo(platforms[p], CL_PLATFORM_NAME, sizeof pname, pname, NULL);
        clGetPlatformInfo(platforms[p], CL_PLATFORM_VERSION, sizeof pversion, pversion, NULL);
        pname[sizeof pname - 1] = pversion[sizeof pversion - 1] = '\0';
        cl_uint nd = 0;
        if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) != CL_SUCCESS || nd == 0)
            continue;
        cl_device_id ids[MAX_DEVICES];
        if (nd > MAX_DEVICES)
            nd = MAX_DEVICES;
        clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, nd, ids, NULL);
        for (cl_uint i = 0; i < nd && device_count < MAX_DEVICES; i++) {
            clt_device_entry *e = &devices[device_count];
            e->platform = platforms[p];
            e->device = ids[i];
            e->info.platform_index = (int)p;
            e->info.device_index = (int)i;
            e->info.global_index = device_count;
            probe(e, pname, pversion);
            device_count++;
        }
    }
}

clt_status clt__device_list(const clt_device_entry **list, int *count)
{
    pthread_once(&enumerate_once, enumerate);
    *list = devices;
    *count = device_count;
    if (enumerate_status != CLT_SUCCESS)
        return clt__fail(NULL, enumerate_status, "%s", enumerate_error);
    return CLT_SUCCESS;
}

clt_status clt_device_count(int *count)
{
    CLT_PUBLIC_CALL();
    if (!count)
        return clt__fail(NULL, CLT_ERR_INVALID_ARGUMENT, "clt_device_count: count is NULL");
    const clt_device_entry *list;
    *count = 0;
    return clt__device_list(&list, count);
}

clt_status clt_device_get_info(int global_index, clt_device_info *info)
{
    CLT_PUBLIC_CALL();
    if (!info)
        return clt__fail(NULL, CLT_ERR_INVALID_ARGUMENT, "clt_device_get_info: info is NULL");
    const clt_device_entry *list;
    int n;
    clt_status st = clt__device_list(&list, &n);
    if (st != CLT_SUCCESS)
        return st;
    if (global_index < 0 || global_index >= n)
        return clt__fail(NULL, CLT_ERR_INVALID_ARGUMENT,
                         "clt_device_get_info: index %d out of range (%d devices)", global_index, n);
    *info = list[global_index].info;
    return CLT_SUCCESS;
}

static int parse_index(const char *s, int *value)
{
    if (!*s)
        return 0;
    long v = 0;
    for (const char *p = s; *p; p++) {
        if (!isdigit((unsigned char)*p) || v > 1000000)
            return 0;
        v = v * 10 + (*p - '0');
    }
    *value = (int)v;
    return 1;
}

static int default_device(const clt_device_entry *list, int n)
{
    for (int i = 0; i < n; i++)
        if (list[i].info.type == CLT_DEVICE_GPU)
            return i;
    for (int i = 0; i < n; i++)
        if (list[i].info.type == CLT_DEVICE_CPU)
            return i;
    return n > 0 ? 0 : -1;
}

static int first_of_type(const clt_device_entry *list, int n, clt_device_type type)
{
    for (int i = 0; i < n; i++)
        if (list[i].info.type == type)
            return i;
    return -1;
}

clt_status clt__device_resolve(const char *selection, int *global_index)
{
    const clt_device_entry *list;
    int n;
    clt_status st = clt__device_list(&list, &n);
    if (st != CLT_SUCCESS)
        return st;
    if (n == 0)
        return clt__fail(NULL, CLT_ERR_DEVICE_NOT_FOUND,
                         "no OpenCL device: the ICD loader found no platform (is an ICD such as "
                         "pocl-opencl-icd installed?)");
    const char *source = "selection";
    if (!selection || !*selection) {
        selection = getenv("CLT_DEVICE");
        source = "CLT_DEVICE";
    }
    int found = -1;
    if (!selection || !*selection) {
        found = default_device(list, n);
    } else {
        const char *colon = strchr(selection, ':');
        int a, b;
        char head[32];
        if (parse_index(selection, &a)) {
            found = a < n ? a : -1;
        } else if (colon && (size_t)(colon - selection) < sizeof head) {
            memcpy(head, selection, (size_t)(colon - selection));
            head[colon - selection] = '\0';
            if (parse_index(head, &a) && parse_index(colon + 1, &b)) {
                for (int i = 0; i < n; i++)
                    if (list[i].info.platform_index == a && list[i].info.device_index == b)
                        found = i;
            }
        }
        if (found < 0 && !parse_index(selection, &a)) {
            if (!strcasecmp(selection, "gpu"))
                found = first_of_type(list, n, CLT_DEVICE_GPU);
            else if (!strcasecmp(selection, "cpu"))
                found = first_of_type(list, n, CLT_DEVICE_CPU);
            else if (!strcasecmp(selection, "accelerator"))
                found = first_of_type(list, n, CLT_DEVICE_ACCELERATOR);
            else
                for (int i = 0; i < n && found < 0; i++) {
                    /* Names alone miss common words: POCL's platform is "Portable Computing
                     * Language"; its version string says "PoCL". */
                    char all[700];
                    const clt_device_info *in = &list[i].info;
                    snprintf(all, sizeof all, "%s / %s / %s / %s", in->platform_name,
                             in->device_name, in->platform_version, in->device_vendor);
                    if (clt__contains_nocase(all, selection))
                        found = i;
                }
        }
    }
    if (found < 0) {
        char avail[1024] = "";
        size_t used = 0;
        for (int i = 0; i < n && used < sizeof avail; i++)
            used += (size_t)snprintf(avail + used, sizeof avail - used, "%s[%d] %d:%d %s / %s",
                                     i ? "; " : "", i, list[i].info.platform_index,
                                     list[i].info.device_index, list[i].info.platform_name,
                                     list[i].info.device_name);
        return clt__fail(NULL, CLT_ERR_DEVICE_NOT_FOUND,
                         "device %s \"%s\" matches no device (use an index \"N\", \"platform:device\", "
                         "\"gpu\", \"cpu\" or a name substring); available: %s",
                         source, selection ? selection : "", avail);
    }
    *global_index = found;
    return CLT_SUCCESS;
}

clt_status clt_device_select(const char *selection, int *global_index)
{
    CLT_PUBLIC_CALL();
    if (!global_index)
        return clt__fail(NULL, CLT_ERR_INVALID_ARGUMENT, "clt_device_select: global_index is NULL");
    clt_status st = clt__device_resolve(selection, global_index);
    return st;
}
