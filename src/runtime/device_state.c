/* Process-wide shared state per device: one cl_context and one program cache, reference counted,
 * so that every cltensor context on a device shares compiled programs. */
#include <stdlib.h>

#include "program/program.h"
#include "runtime/runtime.h"

#define MAX_STATES 64

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static clt_device_state *states[MAX_STATES];
/* States on an application's cl_context (clt_context_create_from_cl), one per (cl_context, device):
 * programs are objects of one cl_context, so they cannot be shared with ours. */
static clt_device_state *adopted;

clt_status clt__device_state_acquire(int global_index, clt_device_state **out)
{
    const clt_device_entry *list;
    int n;
    clt_status st = clt__device_list(&list, &n);
    if (st != CLT_SUCCESS)
        return st;
    if (global_index < 0 || global_index >= n || global_index >= MAX_STATES)
        return clt__fail(NULL, CLT_ERR_DEVICE_NOT_FOUND, "device index %d out of range", global_index);

    pthread_mutex_lock(&registry_lock);
    clt_device_state *ds = states[global_index];
    if (ds) {
        pthread_mutex_lock(&ds->lock);
        ds->refcount++;
        pthread_mutex_unlock(&ds->lock);
        pthread_mutex_unlock(&registry_lock);
        *out = ds;
        return CLT_SUCCESS;
    }
    ds = calloc(1, sizeof *ds);
    if (!ds) {
        pthread_mutex_unlock(&registry_lock);
        return clt__fail(NULL, CLT_ERR_OUT_OF_HOST_MEMORY, "device state: out of host memory");
    }
    ds->global_index = global_index;
    ds->entry = &list[global_index];
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)ds->entry->platform,
                                     0};
    cl_int err = CL_SUCCESS;
    /* The entries are process-lifetime; the probe's context is taken over once (under the lock). */
    clt_device_entry *entry = (clt_device_entry *)ds->entry;
    if (entry->probe_ctx) {
        ds->cl_ctx = entry->probe_ctx;
        entry->probe_ctx = NULL;
    } else {
        ds->cl_ctx = clCreateContext(props, 1, &ds->entry->device, NULL, NULL, &err);
    }
    if (err != CL_SUCCESS) {
        free(ds);
        pthread_mutex_unlock(&registry_lock);
        return clt__cl_fail(NULL, err, "clCreateContext");
    }
    pthread_mutex_init(&ds->lock, NULL);
    st = clt__program_cache_create(ds, &ds->programs);
    if (st != CLT_SUCCESS) {
        clReleaseContext(ds->cl_ctx);
        pthread_mutex_destroy(&ds->lock);
        free(ds);
        pthread_mutex_unlock(&registry_lock);
        return st;
    }
    ds->refcount = 1;
    states[global_index] = ds;
    pthread_mutex_unlock(&registry_lock);
    clt__log("device %d (%s) opened", global_index, ds->entry->info.device_name);
    *out = ds;
    return CLT_SUCCESS;
}

clt_status clt__device_state_adopt(int global_index, cl_context cl_ctx, clt_device_state **out)
{
    const clt_device_entry *list;
    int n;
    clt_status st = clt__device_list(&list, &n);
    if (st != CLT_SUCCESS)
        return st;
    if (global_index < 0 || global_index >= n)
        return clt__fail(NULL, CLT_ERR_DEVICE_NOT_FOUND, "device index %d out of range", global_index);
    pthread_mutex_lock(&registry_lock);
    for (clt_device_state *ds = adopted; ds; ds = ds->next_adopted) {
        if (ds->cl_ctx == cl_ctx && ds->global_index == global_index) {
            pthread_mutex_lock(&ds->lock);
            ds->refcount++;
            pthread_mutex_unlock(&ds->lock);
            pthread_mutex_unlock(&registry_lock);
            *out = ds;
            return CLT_SUCCESS;
        }
    }
    clt_device_state *ds = calloc(1, sizeof *ds);
    if (!ds) {
        pthread_mutex_unlock(&registry_lock);
        return clt__fail(NULL, CLT_ERR_OUT_OF_HOST_MEMORY, "device state: out of host memory");
    }
    ds->global_index = global_index;
    ds->entry = &list[global_index];
    ds->is_adopted = 1;
    pthread_mutex_init(&ds->lock, NULL);
    st = clt__program_cache_create(ds, &ds->programs);
    if (st != CLT_SUCCESS) {
        pthread_mutex_destroy(&ds->lock);
        free(ds);
        pthread_mutex_unlock(&registry_lock);
        return st;
    }
    cl_int err = clRetainContext(cl_ctx); /* the application keeps its own reference */
    if (err != CL_SUCCESS) {
        clt__program_cache_destroy(ds->programs);
        pthread_mutex_destroy(&ds->lock);
        free(ds);
        pthread_mutex_unlock(&registry_lock);
        return clt__cl_fail(NULL, err, "clRetainContext");
    }
    ds->cl_ctx = cl_ctx;
    ds->refcount = 1;
    ds->next_adopted = adopted;
    adopted = ds;
    pthread_mutex_unlock(&registry_lock);
    clt__log("device %d (%s) adopted on an application cl_context", global_index,
             ds->entry->info.device_name);
    *out = ds;
    return CLT_SUCCESS;
}

static void unlink_adopted(clt_device_state *ds)
{
    for (clt_device_state **p = &adopted; *p; p = &(*p)->next_adopted) {
        if (*p == ds) {
            *p = ds->next_adopted;
            return;
        }
    }
}

void clt__device_state_release(clt_device_state *ds)
{
    if (!ds)
        return;
    pthread_mutex_lock(&registry_lock);
    pthread_mutex_lock(&ds->lock);
    int left = --ds->refcount;
    pthread_mutex_unlock(&ds->lock);
    if (left == 0) {
        /* The last context is gone: programs and the cl_context go too (an adopted cl_context only
         * loses our reference); the disk cache keeps the binaries for the next process or context. */
        if (ds->is_adopted)
            unlink_adopted(ds);
        else
            states[ds->global_index] = NULL;
        clt__program_cache_destroy(ds->programs);
        clReleaseContext(ds->cl_ctx);
        pthread_mutex_destroy(&ds->lock);
        free(ds);
    }
    pthread_mutex_unlock(&registry_lock);
}
