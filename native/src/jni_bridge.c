/*
 * JNI face of the shim: one registration table per Java class (CudaNative, NvmlNative; FdPassing lives in
 * fd_passing.c). Natives return the driver's own result code as an int and fill caller-supplied arrays;
 * Java keeps the code as data. C throws only for JNI-level faults (a null or short array, no memory).
 * No policy here: which calls to make, in which order, and what a result means is decided in Java.
 */
#include <jni.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "loader.h"
#include "pattern.h"
#include "pattern_kernel.h"

#define CUDA_CLASS "dev/imexprobe/cuda/CudaNative"
#define NVML_CLASS "dev/imexprobe/cuda/NvmlNative"
#define ARRAY_LENGTH(a) (sizeof(a) / sizeof((a)[0]))

int imexprobe_register_fd_passing(JNIEnv *env);

/* The one place C raises a Java exception. Returns -1 so callers can `return jni_fault(...)`. */
static int jni_fault(JNIEnv *env, const char *message) {
    if (!(*env)->ExceptionCheck(env)) {
        jclass cls = (*env)->FindClass(env, "java/lang/IllegalArgumentException");
        if (cls) (*env)->ThrowNew(env, cls, message);
    }
    return -1;
}

static int need_array(JNIEnv *env, jarray array, jsize min_length) {
    if (array == NULL || (*env)->GetArrayLength(env, array) < min_length) {
        jni_fault(env, "native call: output array missing or too short");
        return 0;
    }
    return 1;
}

static void set_int(JNIEnv *env, jintArray out, jsize index, jint value) {
    (*env)->SetIntArrayRegion(env, out, index, 1, &value);
}

static void set_long(JNIEnv *env, jlongArray out, jsize index, jlong value) {
    (*env)->SetLongArrayRegion(env, out, index, 1, &value);
}

static void set_string(JNIEnv *env, jobjectArray out, jsize index, const char *value) {
    jstring s = value ? (*env)->NewStringUTF(env, value) : NULL;
    (*env)->SetObjectArrayElement(env, out, index, s);
    if (s) (*env)->DeleteLocalRef(env, s);
}

/* ---- contexts --------------------------------------------------------------------------------------
 * Every device-bound call makes that device's primary context current on the calling thread, retaining it
 * first if this process holds none. When to let it go is Java's decision (cuda/PrimaryContexts): ctxRelease
 * drops our one reference, and the next device-bound call retains it again. */
#define MAX_DEVICES 64
static CUcontext contexts[MAX_DEVICES];

/* Pinned host staging for the pattern (cuMemHostAlloc). A copy from or to pageable memory goes through the
 * driver's own bounce buffer: measured on the H200 (docs/performance.md, "staging"), 2 MiB fill + HtoD 446 us
 * from malloc'd memory against 259 us pinned, DtoH + compare 622 against 236 us. Pinned memory belongs to the
 * context that allocated it, so each GPU keeps at most STAGING_KEPT buffers while its context lives, and
 * cuda_ctx_release frees them before it drops the context; a buffer handed back after that (its generation
 * is gone) was freed with the context and is forgotten. More concurrent users than that, or no pinned memory,
 * take malloc'd memory as before. Guarded by contexts_lock. */
#define STAGING_KEPT 2
static void *staging_kept[MAX_DEVICES][STAGING_KEPT];
static int staging_count[MAX_DEVICES];
static unsigned context_generation[MAX_DEVICES];

/* The pattern's fill and compare kernels (pattern_kernel.h), loaded into a GPU's context by its first fill or check
 * and unloaded before the context is let go. When the driver cannot load them (no module entry points, a PTX it
 * cannot compile: kernel_rc), fills and checks go through host memory for the rest of that context's life. A lock
 * per GPU of its own: a JIT takes milliseconds (or hangs with the driver), and no other GPU's calls may wait on it. Lock order:
 * contexts_lock, then kernels_lock[ordinal]. */
static pthread_mutex_t kernels_lock[MAX_DEVICES] = {[0 ... MAX_DEVICES - 1] = PTHREAD_MUTEX_INITIALIZER};
static int kernel_tried[MAX_DEVICES];
static CUresult kernel_rc[MAX_DEVICES];
static CUmodule kernel_module[MAX_DEVICES];
static CUfunction kernel_fill[MAX_DEVICES];
static CUfunction kernel_compare[MAX_DEVICES];
/* A non-blocking stream made with the kernels, on which verify's copy-engine window runs beside the compare kernel
 * (NULL when the driver has no cuStreamCreate or cuMemcpyDtoHAsync: the window is then copied after the kernel). */
static CUstream kernel_stream[MAX_DEVICES];
static pthread_mutex_t contexts_lock = PTHREAD_MUTEX_INITIALIZER;

static CUresult use_device(jint ordinal) {
    if (!cu.cuInit) return CUDA_ERROR_NOT_INITIALIZED;
    if (ordinal < 0 || ordinal >= MAX_DEVICES) return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&contexts_lock);
    CUresult rc = CUDA_SUCCESS;
    if (contexts[ordinal] == NULL) {
        CUdevice dev;
        rc = cu.cuDeviceGet(&dev, ordinal);
        if (rc == CUDA_SUCCESS) rc = cu.cuDevicePrimaryCtxRetain(&contexts[ordinal], dev);
        if (rc != CUDA_SUCCESS) contexts[ordinal] = NULL;
    }
    CUcontext ctx = contexts[ordinal];
    pthread_mutex_unlock(&contexts_lock);
    return rc == CUDA_SUCCESS ? cu.cuCtxSetCurrent(ctx) : rc;
}

/* Drops this process's reference to a GPU's primary context; 1 when one was held, 0 when none, <0 a CUresult. */
static jint cuda_ctx_release(JNIEnv *env, jclass cls, jint ordinal) {
    if (!cu.cuInit) return -CUDA_ERROR_NOT_INITIALIZED;
    if (ordinal < 0 || ordinal >= MAX_DEVICES) return -CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&contexts_lock);
    jint result = 0;
    if (contexts[ordinal] != NULL) {
        /* freed in their own context, which is unbound again after (the next call binds its own: use_device) */
        pthread_mutex_lock(&kernels_lock[ordinal]);
        int loaded = kernel_tried[ordinal] && kernel_rc[ordinal] == CUDA_SUCCESS;
        if ((staging_count[ordinal] > 0 || loaded) && cu.cuCtxSetCurrent(contexts[ordinal]) == CUDA_SUCCESS) {
            for (int i = 0; i < staging_count[ordinal]; i++) cu.cuMemFreeHost(staging_kept[ordinal][i]);
            if (loaded) cu.cuModuleUnload(kernel_module[ordinal]);
            if (kernel_stream[ordinal]) cu.cuStreamDestroy(kernel_stream[ordinal]);
            cu.cuCtxSetCurrent(NULL);
        }
        kernel_tried[ordinal] = 0;
        kernel_stream[ordinal] = NULL;
        pthread_mutex_unlock(&kernels_lock[ordinal]);
        staging_count[ordinal] = 0;
        context_generation[ordinal]++;
        CUdevice dev;
        CUresult rc = cu.cuDeviceGet(&dev, ordinal);
        if (rc == CUDA_SUCCESS) rc = cu.cuDevicePrimaryCtxRelease(dev);
        if (rc == CUDA_SUCCESS) {
            /* threads that had it current rebind on their next device-bound call (use_device) */
            contexts[ordinal] = NULL;
            result = 1;
        } else {
            result = -(jint)rc;
        }
    }
    pthread_mutex_unlock(&contexts_lock);
    return result;
}

static jboolean cuda_ctx_held(JNIEnv *env, jclass cls, jint ordinal) {
    if (ordinal < 0 || ordinal >= MAX_DEVICES) return JNI_FALSE;
    pthread_mutex_lock(&contexts_lock);
    jboolean held = contexts[ordinal] != NULL;
    pthread_mutex_unlock(&contexts_lock);
    return held;
}

#define USE_DEVICE(ordinal)                        \
    do {                                           \
        CUresult use_rc = use_device(ordinal);     \
        if (use_rc != CUDA_SUCCESS) return use_rc; \
    } while (0)

/* ---- CudaNative ----------------------------------------------------------------------------------- */

/* The CUdevice of an ordinal, for the queries that take one (no context needed). */
#define DEVICE_OF(ordinal, dev)                                    \
    CUdevice dev;                                                  \
    do {                                                           \
        if (!cu.cuDeviceGet) return CUDA_ERROR_NOT_INITIALIZED;    \
        CUresult dev_rc = cu.cuDeviceGet(&dev, ordinal);           \
        if (dev_rc != CUDA_SUCCESS) return dev_rc;                 \
    } while (0)

/* out: {cudaLibrary, cudaMessage, nvmlLibrary, nvmlMessage}; returns bit 0 = CUDA usable, bit 1 = NVML usable. */
static jint cuda_open(JNIEnv *env, jclass cls, jstring cuda_path, jstring nvml_path, jobjectArray out) {
    if (!need_array(env, out, 4)) return -1;
    const char *cp = cuda_path ? (*env)->GetStringUTFChars(env, cuda_path, NULL) : NULL;
    const char *np = nvml_path ? (*env)->GetStringUTFChars(env, nvml_path, NULL) : NULL;
    /* imexprobe_load copies nothing it keeps from the paths after the first call returns. */
    const struct load_report *r = imexprobe_load(cp, np);
    if (cp) (*env)->ReleaseStringUTFChars(env, cuda_path, cp);
    if (np) (*env)->ReleaseStringUTFChars(env, nvml_path, np);
    set_string(env, out, 0, r->cuda_library);
    set_string(env, out, 1, r->cuda_message);
    set_string(env, out, 2, r->nvml_library);
    set_string(env, out, 3, r->nvml_message);
    return (r->cuda_loaded ? 1 : 0) | (r->nvml_loaded ? 2 : 0);
}

static jstring cuda_fake_info(JNIEnv *env, jclass cls) {
    const struct load_report *r = imexprobe_load(NULL, NULL);
    if (!r->fake_info) return NULL;
    const char *text = r->fake_info();
    return text ? (*env)->NewStringUTF(env, text) : NULL;
}

/* Names of the optional entry points this driver lacks (the required ones are reported by open). */
static jobjectArray cuda_missing_entry_points(JNIEnv *env, jclass cls) {
    const char *names[64];
    int n = 0;
#define COLLECT(name, version, need) \
    if (cu.cuInit && cu.name == NULL && n < 64) names[n++] = #name;
    CUDA_ENTRY_POINTS(COLLECT)
#undef COLLECT
    jobjectArray result = (*env)->NewObjectArray(env, n, (*env)->FindClass(env, "java/lang/String"), NULL);
    for (int i = 0; result && i < n; i++) set_string(env, result, i, names[i]);
    return result;
}

static jint cuda_init(JNIEnv *env, jclass cls) {
    return cu.cuInit ? cu.cuInit(0) : CUDA_ERROR_NOT_INITIALIZED;
}

static jint cuda_driver_get_version(JNIEnv *env, jclass cls, jintArray out) {
    if (!need_array(env, out, 1)) return -1;
    if (!cu.cuDriverGetVersion) return CUDA_ERROR_NOT_INITIALIZED;
    int v = 0;
    CUresult rc = cu.cuDriverGetVersion(&v);
    set_int(env, out, 0, v);
    return rc;
}

static jint cuda_device_get_count(JNIEnv *env, jclass cls, jintArray out) {
    if (!need_array(env, out, 1)) return -1;
    if (!cu.cuDeviceGetCount) return CUDA_ERROR_NOT_INITIALIZED;
    int n = 0;
    CUresult rc = cu.cuDeviceGetCount(&n);
    set_int(env, out, 0, n);
    return rc;
}

static jint cuda_device_get_name(JNIEnv *env, jclass cls, jint ordinal, jobjectArray out) {
    if (!need_array(env, out, 1)) return -1;
    DEVICE_OF(ordinal, dev);
    char name[256] = {0};
    CUresult rc = cu.cuDeviceGetName(name, sizeof name - 1, dev);
    if (rc == CUDA_SUCCESS) set_string(env, out, 0, name);
    return rc;
}

static jint cuda_device_get_uuid(JNIEnv *env, jclass cls, jint ordinal, jbyteArray out) {
    if (!need_array(env, out, 16)) return -1;
    DEVICE_OF(ordinal, dev);
    CUuuid uuid;
    CUresult rc = cu.cuDeviceGetUuid(&uuid, dev);
    if (rc == CUDA_SUCCESS) (*env)->SetByteArrayRegion(env, out, 0, 16, (const jbyte *)uuid.bytes);
    return rc;
}

static jint cuda_device_get_pci_bus_id(JNIEnv *env, jclass cls, jint ordinal, jobjectArray out) {
    if (!need_array(env, out, 1)) return -1;
    DEVICE_OF(ordinal, dev);
    char bus[64] = {0};
    CUresult rc = cu.cuDeviceGetPCIBusId(bus, sizeof bus - 1, dev);
    if (rc == CUDA_SUCCESS) set_string(env, out, 0, bus);
    return rc;
}

static jint cuda_device_get_attribute(JNIEnv *env, jclass cls, jint attribute, jint ordinal, jintArray out) {
    if (!need_array(env, out, 1)) return -1;
    DEVICE_OF(ordinal, dev);
    int value = 0;
    CUresult rc = cu.cuDeviceGetAttribute(&value, (CUdevice_attribute)attribute, dev);
    set_int(env, out, 0, value);
    return rc;
}

static jint cuda_mem_get_info(JNIEnv *env, jclass cls, jint ordinal, jlongArray out) {
    if (!need_array(env, out, 2)) return -1;
    USE_DEVICE(ordinal);
    size_t free_bytes = 0, total = 0;
    CUresult rc = cu.cuMemGetInfo(&free_bytes, &total);
    set_long(env, out, 0, (jlong)free_bytes);
    set_long(env, out, 1, (jlong)total);
    return rc;
}

static CUmemAllocationProp allocation_prop(jint ordinal, jint handle_types) {
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.requestedHandleTypes = (CUmemAllocationHandleType)handle_types;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = ordinal;
    return prop;
}

static jint cuda_mem_get_allocation_granularity(JNIEnv *env, jclass cls, jint ordinal, jint handle_types,
                                                jboolean recommended, jlongArray out) {
    if (!need_array(env, out, 1)) return -1;
    /* no context: the granularity is a property of the device (seen on the H200: CUDA_SUCCESS, none made) */
    if (!cu.cuInit) return CUDA_ERROR_NOT_INITIALIZED;
    CUmemAllocationProp prop = allocation_prop(ordinal, handle_types);
    size_t granularity = 0;
    CUresult rc = cu.cuMemGetAllocationGranularity(
        &granularity, &prop, recommended ? CU_MEM_ALLOC_GRANULARITY_RECOMMENDED : CU_MEM_ALLOC_GRANULARITY_MINIMUM);
    set_long(env, out, 0, (jlong)granularity);
    return rc;
}

static jint cuda_mem_create(JNIEnv *env, jclass cls, jint ordinal, jlong size, jint handle_types, jlongArray out) {
    if (!need_array(env, out, 1)) return -1;
    if (size <= 0) return CUDA_ERROR_INVALID_VALUE;
    USE_DEVICE(ordinal);
    CUmemAllocationProp prop = allocation_prop(ordinal, handle_types);
    CUmemGenericAllocationHandle handle = 0;
    CUresult rc = cu.cuMemCreate(&handle, (size_t)size, &prop, 0);
    set_long(env, out, 0, (jlong)handle);
    return rc;
}

static jint cuda_mem_release(JNIEnv *env, jclass cls, jint ordinal, jlong handle) {
    USE_DEVICE(ordinal);
    return cu.cuMemRelease((CUmemGenericAllocationHandle)handle);
}

static jint cuda_mem_export_fabric(JNIEnv *env, jclass cls, jint ordinal, jlong handle, jbyteArray out) {
    if (!need_array(env, out, CU_IPC_HANDLE_SIZE)) return -1;
    USE_DEVICE(ordinal);
    CUmemFabricHandle fabric;
    memset(&fabric, 0, sizeof fabric);
    CUresult rc = cu.cuMemExportToShareableHandle(&fabric, (CUmemGenericAllocationHandle)handle,
                                                  CU_MEM_HANDLE_TYPE_FABRIC, 0);
    if (rc == CUDA_SUCCESS)
        (*env)->SetByteArrayRegion(env, out, 0, CU_IPC_HANDLE_SIZE, (const jbyte *)fabric.data);
    return rc;
}

static jint cuda_mem_export_posix_fd(JNIEnv *env, jclass cls, jint ordinal, jlong handle, jintArray out) {
    if (!need_array(env, out, 1)) return -1;
    USE_DEVICE(ordinal);
    int fd = -1;
    CUresult rc = cu.cuMemExportToShareableHandle(&fd, (CUmemGenericAllocationHandle)handle,
                                                  CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    set_int(env, out, 0, rc == CUDA_SUCCESS ? fd : -1);
    return rc;
}

static jint cuda_mem_import_fabric(JNIEnv *env, jclass cls, jint ordinal, jbyteArray handle_bytes, jlongArray out) {
    if (!need_array(env, out, 1)) return -1;
    if (handle_bytes == NULL || (*env)->GetArrayLength(env, handle_bytes) != CU_IPC_HANDLE_SIZE)
        return jni_fault(env, "a fabric handle is exactly 64 bytes");
    USE_DEVICE(ordinal);
    CUmemFabricHandle fabric;
    (*env)->GetByteArrayRegion(env, handle_bytes, 0, CU_IPC_HANDLE_SIZE, (jbyte *)fabric.data);
    CUmemGenericAllocationHandle handle = 0;
    CUresult rc = cu.cuMemImportFromShareableHandle(&handle, &fabric, CU_MEM_HANDLE_TYPE_FABRIC);
    set_long(env, out, 0, (jlong)handle);
    return rc;
}

static jint cuda_mem_import_posix_fd(JNIEnv *env, jclass cls, jint ordinal, jint fd, jlongArray out) {
    if (!need_array(env, out, 1)) return -1;
    USE_DEVICE(ordinal);
    CUmemGenericAllocationHandle handle = 0;
    /* The POSIX_FD form passes the descriptor itself, cast to a pointer, as cuda.h documents. */
    CUresult rc = cu.cuMemImportFromShareableHandle(&handle, (void *)(uintptr_t)fd,
                                                    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    set_long(env, out, 0, (jlong)handle);
    return rc;
}

static jint cuda_mem_address_reserve(JNIEnv *env, jclass cls, jint ordinal, jlong size, jlong alignment,
                                     jlongArray out) {
    if (!need_array(env, out, 1)) return -1;
    if (size <= 0 || alignment < 0) return CUDA_ERROR_INVALID_VALUE;
    USE_DEVICE(ordinal);
    CUdeviceptr ptr = 0;
    CUresult rc = cu.cuMemAddressReserve(&ptr, (size_t)size, (size_t)alignment, 0, 0);
    set_long(env, out, 0, (jlong)ptr);
    return rc;
}

static jint cuda_mem_address_free(JNIEnv *env, jclass cls, jint ordinal, jlong ptr, jlong size) {
    USE_DEVICE(ordinal);
    return cu.cuMemAddressFree((CUdeviceptr)ptr, (size_t)size);
}

static jint cuda_mem_map(JNIEnv *env, jclass cls, jint ordinal, jlong ptr, jlong size, jlong handle) {
    USE_DEVICE(ordinal);
    return cu.cuMemMap((CUdeviceptr)ptr, (size_t)size, 0, (CUmemGenericAllocationHandle)handle, 0);
}

static jint cuda_mem_unmap(JNIEnv *env, jclass cls, jint ordinal, jlong ptr, jlong size) {
    USE_DEVICE(ordinal);
    return cu.cuMemUnmap((CUdeviceptr)ptr, (size_t)size);
}

static jint cuda_mem_set_access(JNIEnv *env, jclass cls, jint ordinal, jlong ptr, jlong size, jint access_device) {
    USE_DEVICE(ordinal);
    CUmemAccessDesc desc;
    memset(&desc, 0, sizeof desc);
    desc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    desc.location.id = access_device;
    desc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    return cu.cuMemSetAccess((CUdeviceptr)ptr, (size_t)size, &desc, 1);
}

/* ---- pattern (pattern.h) ------------------------------------------------------------------------ */

struct staging {
    uint64_t *buf;
    size_t bytes;
    int pinned;
    unsigned generation;
};

/* A staging buffer for `size` bytes on the calling thread's current context (use_device ran): a kept pinned one,
 * a new pinned one, or malloc'd memory. 0 when there is no host memory at all. */
static int staging_take(jint ordinal, size_t size, struct staging *st) {
    st->bytes = size < PATTERN_CHUNK ? size : PATTERN_CHUNK;
    st->pinned = 0;
    st->buf = NULL;
    pthread_mutex_lock(&contexts_lock);
    st->generation = context_generation[ordinal];
    if (staging_count[ordinal] > 0) st->buf = staging_kept[ordinal][--staging_count[ordinal]];
    pthread_mutex_unlock(&contexts_lock);
    if (st->buf) {
        st->bytes = PATTERN_CHUNK;
        st->pinned = 1;
        return 1;
    }
    void *p = NULL;
    if (cu.cuMemHostAlloc && cu.cuMemFreeHost && cu.cuMemHostAlloc(&p, PATTERN_CHUNK, 0) == CUDA_SUCCESS && p) {
        st->buf = p;
        st->bytes = PATTERN_CHUNK;
        st->pinned = 1;
        return 1;
    }
    st->buf = malloc(st->bytes);
    return st->buf != NULL;
}

static void staging_give(jint ordinal, struct staging *st) {
    if (!st->pinned) {
        free(st->buf);
        return;
    }
    int keep = 0, alive;
    pthread_mutex_lock(&contexts_lock);
    alive = st->generation == context_generation[ordinal];
    if (alive && staging_count[ordinal] < STAGING_KEPT) {
        staging_kept[ordinal][staging_count[ordinal]++] = st->buf;
        keep = 1;
    }
    pthread_mutex_unlock(&contexts_lock);
    /* The calling thread's context is still the buffer's (no release while its driver work is in flight). */
    if (alive && !keep) cu.cuMemFreeHost(st->buf);
}

/* The fill (compare = 0) or compare kernel of the calling thread's current context (use_device ran), loading the
 * module (and making the window's stream) on first use; NULL when this context cannot have it. *stream, when
 * given, gets the window's stream or NULL. */
static CUfunction pattern_kernel(jint ordinal, int compare, CUstream *stream) {
    pthread_mutex_lock(&kernels_lock[ordinal]);
    if (!kernel_tried[ordinal]) {
        kernel_rc[ordinal] =
            pattern_kernel_load(&kernel_module[ordinal], &kernel_fill[ordinal], &kernel_compare[ordinal]);
        kernel_tried[ordinal] = 1;
        kernel_stream[ordinal] = NULL;
        if (kernel_rc[ordinal] == CUDA_SUCCESS && cu.cuStreamCreate && cu.cuStreamDestroy && cu.cuMemcpyDtoHAsync &&
            cu.cuStreamCreate(&kernel_stream[ordinal], CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS)
            kernel_stream[ordinal] = NULL;
    }
    CUfunction fn = kernel_rc[ordinal] != CUDA_SUCCESS ? NULL
                    : compare                          ? kernel_compare[ordinal]
                                                       : kernel_fill[ordinal];
    if (stream) *stream = fn ? kernel_stream[ordinal] : NULL;
    pthread_mutex_unlock(&kernels_lock[ordinal]);
    return fn;
}

/* Why this GPU's context fills without the kernel: 0 when it has the kernel, -1 when no fill has run in it yet,
 * else the CUresult that refused it. */
static jint cuda_pattern_kernel(JNIEnv *env, jclass cls, jint ordinal) {
    if (ordinal < 0 || ordinal >= MAX_DEVICES) return -1;
    pthread_mutex_lock(&kernels_lock[ordinal]);
    jint rc = kernel_tried[ordinal] ? (jint)kernel_rc[ordinal] : -1;
    pthread_mutex_unlock(&kernels_lock[ordinal]);
    return rc;
}

static jint cuda_mem_fill_pattern(JNIEnv *env, jclass cls, jint ordinal, jlong ptr, jlong size, jlong seed) {
    if (size <= 0 || (size & 7) != 0) return CUDA_ERROR_INVALID_VALUE;
    USE_DEVICE(ordinal);
    CUfunction fn = pattern_kernel(ordinal, 0, NULL);
    if (fn) return pattern_kernel_fill(fn, (CUdeviceptr)ptr, (size_t)size, (uint64_t)seed);
    struct staging st;
    if (!staging_take(ordinal, (size_t)size, &st)) return jni_fault(env, "no host memory for the pattern staging buffer");
    CUresult rc = CUDA_SUCCESS;
    for (size_t off = 0; off < (size_t)size && rc == CUDA_SUCCESS; off += st.bytes) {
        size_t n = (size_t)size - off < st.bytes ? (size_t)size - off : st.bytes;
        pattern_fill(st.buf, n / 8, (uint64_t)seed, off / 8);
        rc = cu.cuMemcpyHtoD((CUdeviceptr)ptr + off, st.buf, n);
    }
    /* From pageable memory cuMemcpyHtoD may return before its DMA lands; another process reading the memory
     * next (the peer's verify, the exporter's write-back check) must see it all. Measured on the H200: without
     * this, a reader in another process found the last ~200 KiB of 2 MiB unwritten (docs/gpu-validation.md).
     * From pinned memory the copy is synchronous; the check costs ~1 us there and stays for the fallback. */
    if (rc == CUDA_SUCCESS) rc = cu.cuCtxSynchronize();
    staging_give(ordinal, &st);
    return rc;
}

/* Copies [ptr + off, ptr + off + bytes) into the staging buffer by cuMemcpyDtoH, a buffer at a time, and compares
 * it on the CPU; *mismatch gets the byte offset (from ptr) of the first differing word, or keeps -1. */
static CUresult copy_compare(const struct staging *st, CUdeviceptr ptr, size_t off, size_t bytes, uint64_t seed,
                             jlong *mismatch) {
    CUresult rc = CUDA_SUCCESS;
    for (size_t end = off + bytes; off < end && rc == CUDA_SUCCESS && *mismatch < 0; off += st->bytes) {
        size_t n = end - off < st->bytes ? end - off : st->bytes;
        rc = cu.cuMemcpyDtoH(st->buf, ptr + off, n);
        if (rc != CUDA_SUCCESS) break;
        size_t bad = pattern_first_mismatch(st->buf, n / 8, seed, off / 8);
        if (bad < n / 8) *mismatch = (jlong)(off + bad * 8);
    }
    return rc;
}

/* Checks [ptr, ptr + size) against the seed's pattern. out[0] = byte offset of the first differing word, or -1.
 * Compared on the GPU by the compare kernel, its answer written into a page-locked staging buffer; through host
 * memory (copied into the staging buffer, compared on the CPU) when the context has no kernel or the staging buffer
 * is not page-locked. Measured on the H200 (docs/performance.md): 2 MiB checked in 25 us against 236 us copied and
 * compared here.
 * Where the kernel runs and window_bytes > 0, a copy engine also reads [window_offset, + window_bytes) into the
 * staging buffer's upper half, on the window's own stream while the kernel runs (cuMemcpyDtoHAsync; after it by
 * cuMemcpyDtoH where there is no such stream), and the CPU compares it: out[1] = 1 when the window was read, out[2]
 * its first differing byte offset or -1, out[3] the copy's CUresult, out[4] = 1 when it ran beside the kernel. */
static jint cuda_mem_verify_pattern(JNIEnv *env, jclass cls, jint ordinal, jlong ptr, jlong size, jlong seed,
                                    jlong window_offset, jlong window_bytes, jlongArray out) {
    if (!need_array(env, out, 5)) return -1;
    if (size <= 0 || (size & 7) != 0) return CUDA_ERROR_INVALID_VALUE;
    if (window_bytes < 0 || window_offset < 0 || ((window_offset | window_bytes) & 7) != 0 ||
        window_bytes > (jlong)(PATTERN_CHUNK / 2) || window_offset > size - window_bytes)
        return CUDA_ERROR_INVALID_VALUE;
    USE_DEVICE(ordinal);
    CUstream stream;
    CUfunction compare = pattern_kernel(ordinal, 1, &stream);
    struct staging st;
    if (!staging_take(ordinal, (size_t)size, &st)) return jni_fault(env, "no host memory for the pattern staging buffer");
    CUresult rc = CUDA_SUCCESS, window_rc = CUDA_SUCCESS;
    jlong mismatch = -1, window_mismatch = -1, window_read = 0, beside = 0;
    if (compare && st.pinned) {
        /* the kernel's answers fill at most PATTERN_COMPARE_BLOCKS words at the start; the window lies above them */
        uint64_t *window = st.buf + PATTERN_CHUNK / 16;
        CUdeviceptr from = (CUdeviceptr)ptr + (CUdeviceptr)window_offset;
        window_read = window_bytes > 0;
        if (window_read && stream) {
            window_rc = cu.cuMemcpyDtoHAsync(window, from, (size_t)window_bytes, stream);
            beside = 1;
        }
        long long bad;
        /* its cuCtxSynchronize waits for the window's stream too */
        rc = pattern_kernel_compare(compare, (CUdeviceptr)ptr, (size_t)size, (uint64_t)seed, st.buf, &bad);
        if (rc == CUDA_SUCCESS && bad >= 0) mismatch = (jlong)bad * 8;
        if (rc == CUDA_SUCCESS && window_read && !stream)
            window_rc = cu.cuMemcpyDtoH(window, from, (size_t)window_bytes);
        if (rc == CUDA_SUCCESS && window_read && window_rc == CUDA_SUCCESS) {
            size_t words = (size_t)window_bytes / 8;
            size_t wbad = pattern_first_mismatch(window, words, (uint64_t)seed, (size_t)window_offset / 8);
            if (wbad < words) window_mismatch = window_offset + (jlong)wbad * 8;
        }
    } else {
        rc = copy_compare(&st, (CUdeviceptr)ptr, 0, (size_t)size, (uint64_t)seed, &mismatch);
    }
    staging_give(ordinal, &st);
    set_long(env, out, 0, mismatch);
    set_long(env, out, 1, window_read);
    set_long(env, out, 2, window_mismatch);
    set_long(env, out, 3, (jlong)window_rc);
    set_long(env, out, 4, beside);
    return rc;
}

/* Device-to-device copy on a private stream, timed with events: out[0] = milliseconds for all iterations.
 * Used to compare a copy through an imported mapping with a plain local copy. */
static jint cuda_memcpy_dtod_timed(JNIEnv *env, jclass cls, jint ordinal, jlong dst, jlong src, jlong size,
                                   jint iterations, jfloatArray out) {
    if (!need_array(env, out, 1)) return -1;
    if (size <= 0 || iterations <= 0) return CUDA_ERROR_INVALID_VALUE;
    if (!cu.cuMemcpyDtoDAsync || !cu.cuStreamCreate || !cu.cuStreamDestroy || !cu.cuStreamSynchronize ||
        !cu.cuEventCreate || !cu.cuEventDestroy || !cu.cuEventRecord || !cu.cuEventSynchronize ||
        !cu.cuEventElapsedTime)
        return CUDA_ERROR_NOT_SUPPORTED;
    USE_DEVICE(ordinal);
    CUstream stream = NULL;
    CUevent start = NULL, end = NULL;
    float ms = 0;
    CUresult rc = cu.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING);
    if (rc == CUDA_SUCCESS) rc = cu.cuEventCreate(&start, CU_EVENT_DEFAULT);
    if (rc == CUDA_SUCCESS) rc = cu.cuEventCreate(&end, CU_EVENT_DEFAULT);
    if (rc == CUDA_SUCCESS) rc = cu.cuEventRecord(start, stream);
    for (jint i = 0; rc == CUDA_SUCCESS && i < iterations; i++)
        rc = cu.cuMemcpyDtoDAsync((CUdeviceptr)dst, (CUdeviceptr)src, (size_t)size, stream);
    if (rc == CUDA_SUCCESS) rc = cu.cuEventRecord(end, stream);
    if (rc == CUDA_SUCCESS) rc = cu.cuEventSynchronize(end);
    if (rc == CUDA_SUCCESS) rc = cu.cuEventElapsedTime(&ms, start, end);
    /* Clean-up results are not allowed to hide the first failure. */
    if (stream) cu.cuStreamSynchronize(stream);
    if (end) cu.cuEventDestroy(end);
    if (start) cu.cuEventDestroy(start);
    if (stream) cu.cuStreamDestroy(stream);
    jfloat value = ms;
    (*env)->SetFloatArrayRegion(env, out, 0, 1, &value);
    return rc;
}

static jint cuda_ctx_synchronize(JNIEnv *env, jclass cls, jint ordinal) {
    USE_DEVICE(ordinal);
    return cu.cuCtxSynchronize();
}

static jstring cuda_get_error_name(JNIEnv *env, jclass cls, jint code) {
    const char *name = NULL;
    if (!cu.cuGetErrorName || cu.cuGetErrorName(code, &name) != CUDA_SUCCESS || !name) return NULL;
    return (*env)->NewStringUTF(env, name);
}

static jstring cuda_get_error_string(JNIEnv *env, jclass cls, jint code) {
    const char *text = NULL;
    if (!cu.cuGetErrorString || cu.cuGetErrorString(code, &text) != CUDA_SUCCESS || !text) return NULL;
    return (*env)->NewStringUTF(env, text);
}

static const JNINativeMethod cuda_methods[] = {
    {"open", "(Ljava/lang/String;Ljava/lang/String;[Ljava/lang/String;)I", (void *)cuda_open},
    {"fakeInfo", "()Ljava/lang/String;", (void *)cuda_fake_info},
    {"missingEntryPoints", "()[Ljava/lang/String;", (void *)cuda_missing_entry_points},
    {"init", "()I", (void *)cuda_init},
    {"driverGetVersion", "([I)I", (void *)cuda_driver_get_version},
    {"deviceGetCount", "([I)I", (void *)cuda_device_get_count},
    {"deviceGetName", "(I[Ljava/lang/String;)I", (void *)cuda_device_get_name},
    {"deviceGetUuid", "(I[B)I", (void *)cuda_device_get_uuid},
    {"deviceGetPciBusId", "(I[Ljava/lang/String;)I", (void *)cuda_device_get_pci_bus_id},
    {"deviceGetAttribute", "(II[I)I", (void *)cuda_device_get_attribute},
    {"memGetInfo", "(I[J)I", (void *)cuda_mem_get_info},
    {"memGetAllocationGranularity", "(IIZ[J)I", (void *)cuda_mem_get_allocation_granularity},
    {"memCreate", "(IJI[J)I", (void *)cuda_mem_create},
    {"memRelease", "(IJ)I", (void *)cuda_mem_release},
    {"memExportFabric", "(IJ[B)I", (void *)cuda_mem_export_fabric},
    {"memExportPosixFd", "(IJ[I)I", (void *)cuda_mem_export_posix_fd},
    {"memImportFabric", "(I[B[J)I", (void *)cuda_mem_import_fabric},
    {"memImportPosixFd", "(II[J)I", (void *)cuda_mem_import_posix_fd},
    {"memAddressReserve", "(IJJ[J)I", (void *)cuda_mem_address_reserve},
    {"memAddressFree", "(IJJ)I", (void *)cuda_mem_address_free},
    {"memMap", "(IJJJ)I", (void *)cuda_mem_map},
    {"memUnmap", "(IJJ)I", (void *)cuda_mem_unmap},
    {"memSetAccess", "(IJJI)I", (void *)cuda_mem_set_access},
    {"memFillPattern", "(IJJJ)I", (void *)cuda_mem_fill_pattern},
    {"patternKernel", "(I)I", (void *)cuda_pattern_kernel},
    {"memVerifyPattern", "(IJJJJJ[J)I", (void *)cuda_mem_verify_pattern},
    {"memcpyDtoDTimed", "(IJJJI[F)I", (void *)cuda_memcpy_dtod_timed},
    {"ctxSynchronize", "(I)I", (void *)cuda_ctx_synchronize},
    {"ctxRelease", "(I)I", (void *)cuda_ctx_release},
    {"ctxHeld", "(I)Z", (void *)cuda_ctx_held},
    {"getErrorName", "(I)Ljava/lang/String;", (void *)cuda_get_error_name},
    {"getErrorString", "(I)Ljava/lang/String;", (void *)cuda_get_error_string},
};

/* ---- NvmlNative ----------------------------------------------------------------------------------- */

#define NEED_NVML(fn) \
    if (!nvml.fn) return NVML_ERROR_LIBRARY_NOT_FOUND

static jint nvml_init(JNIEnv *env, jclass cls) {
    NEED_NVML(nvmlInit_v2);
    return nvml.nvmlInit_v2();
}

static jint nvml_system_get_driver_version(JNIEnv *env, jclass cls, jobjectArray out) {
    if (!need_array(env, out, 1)) return -1;
    NEED_NVML(nvmlSystemGetDriverVersion);
    char version[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {0};
    nvmlReturn_t rc = nvml.nvmlSystemGetDriverVersion(version, sizeof version);
    if (rc == NVML_SUCCESS) set_string(env, out, 0, version);
    return rc;
}

static jint nvml_device_get_count(JNIEnv *env, jclass cls, jintArray out) {
    if (!need_array(env, out, 1)) return -1;
    NEED_NVML(nvmlDeviceGetCount_v2);
    unsigned int n = 0;
    nvmlReturn_t rc = nvml.nvmlDeviceGetCount_v2(&n);
    set_int(env, out, 0, (jint)n);
    return rc;
}

static jint nvml_device_get_handle_by_index(JNIEnv *env, jclass cls, jint index, jlongArray out) {
    if (!need_array(env, out, 1)) return -1;
    NEED_NVML(nvmlDeviceGetHandleByIndex_v2);
    if (index < 0) return NVML_ERROR_INVALID_ARGUMENT;
    nvmlDevice_t device = NULL;
    nvmlReturn_t rc = nvml.nvmlDeviceGetHandleByIndex_v2((unsigned int)index, &device);
    set_long(env, out, 0, (jlong)(uintptr_t)device);
    return rc;
}

static jint nvml_device_get_handle_by_uuid(JNIEnv *env, jclass cls, jstring uuid, jlongArray out) {
    if (!need_array(env, out, 1)) return -1;
    if (uuid == NULL) return jni_fault(env, "uuid is null");
    NEED_NVML(nvmlDeviceGetHandleByUUID);
    const char *u = (*env)->GetStringUTFChars(env, uuid, NULL);
    if (!u) return -1;
    nvmlDevice_t device = NULL;
    nvmlReturn_t rc = nvml.nvmlDeviceGetHandleByUUID(u, &device);
    (*env)->ReleaseStringUTFChars(env, uuid, u);
    set_long(env, out, 0, (jlong)(uintptr_t)device);
    return rc;
}

static jint nvml_device_get_uuid(JNIEnv *env, jclass cls, jlong handle, jobjectArray out) {
    if (!need_array(env, out, 1)) return -1;
    NEED_NVML(nvmlDeviceGetUUID);
    char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {0};
    nvmlReturn_t rc = nvml.nvmlDeviceGetUUID((nvmlDevice_t)(uintptr_t)handle, uuid, sizeof uuid);
    if (rc == NVML_SUCCESS) set_string(env, out, 0, uuid);
    return rc;
}

/* Fabric info: the versioned call with v3, then v2, then the legacy call. out = {structVersion (3, 2 or 1),
 * status, cliqueId, state, healthMask, healthSummary}; cluster = the 16-byte cluster UUID. */
static jint nvml_device_get_gpu_fabric_info(JNIEnv *env, jclass cls, jlong handle, jintArray out,
                                            jbyteArray cluster) {
    if (!need_array(env, out, 6) || !need_array(env, cluster, NVML_GPU_FABRIC_UUID_LEN)) return -1;
    nvmlDevice_t device = (nvmlDevice_t)(uintptr_t)handle;
    jint values[6] = {0};
    unsigned char uuid[NVML_GPU_FABRIC_UUID_LEN] = {0};
    nvmlReturn_t rc = NVML_ERROR_FUNCTION_NOT_FOUND;
    if (nvml.nvmlDeviceGetGpuFabricInfoV) {
        nvmlGpuFabricInfo_v3_t v3;
        memset(&v3, 0, sizeof v3);
        v3.version = nvmlGpuFabricInfo_v3;
        rc = nvml.nvmlDeviceGetGpuFabricInfoV(device, &v3);
        if (rc == NVML_SUCCESS) {
            jint got[6] = {3, v3.status, (jint)v3.cliqueId, v3.state, (jint)v3.healthMask, v3.healthSummary};
            memcpy(values, got, sizeof got);
            memcpy(uuid, v3.clusterUuid, sizeof uuid);
        } else if (rc == NVML_ERROR_ARGUMENT_VERSION_MISMATCH) {
            /* A driver that predates v3 knows v2 under the same call; same leading layout. */
            nvmlGpuFabricInfo_v2_t v2;
            memset(&v2, 0, sizeof v2);
            v2.version = nvmlGpuFabricInfo_v2;
            rc = nvml.nvmlDeviceGetGpuFabricInfoV(device, (nvmlGpuFabricInfo_v3_t *)(void *)&v2);
            if (rc == NVML_SUCCESS) {
                jint got[6] = {2, v2.status, (jint)v2.cliqueId, v2.state, (jint)v2.healthMask, 0};
                memcpy(values, got, sizeof got);
                memcpy(uuid, v2.clusterUuid, sizeof uuid);
            }
        }
    }
    if (rc == NVML_ERROR_FUNCTION_NOT_FOUND && nvml.nvmlDeviceGetGpuFabricInfo) {
        nvmlGpuFabricInfo_t v1;
        memset(&v1, 0, sizeof v1);
        rc = nvml.nvmlDeviceGetGpuFabricInfo(device, &v1);
        if (rc == NVML_SUCCESS) {
            jint got[6] = {1, v1.status, (jint)v1.cliqueId, v1.state, 0, 0};
            memcpy(values, got, sizeof got);
            memcpy(uuid, v1.clusterUuid, sizeof uuid);
        }
    }
    (*env)->SetIntArrayRegion(env, out, 0, 6, values);
    (*env)->SetByteArrayRegion(env, cluster, 0, NVML_GPU_FABRIC_UUID_LEN, (const jbyte *)uuid);
    return rc;
}

/* An entry point this driver may lack: NVML missing altogether, or only this function. */
#define NEED_NVML_OPTIONAL(fn)                                  \
    if (!nvml.nvmlInit_v2) return NVML_ERROR_LIBRARY_NOT_FOUND; \
    if (!nvml.fn) return NVML_ERROR_FUNCTION_NOT_FOUND

/* out = {nvmlComputeMode_t}. */
static jint nvml_device_get_compute_mode(JNIEnv *env, jclass cls, jlong handle, jintArray out) {
    if (!need_array(env, out, 1)) return -1;
    NEED_NVML_OPTIONAL(nvmlDeviceGetComputeMode);
    nvmlComputeMode_t mode = 0;
    nvmlReturn_t rc = nvml.nvmlDeviceGetComputeMode((nvmlDevice_t)(uintptr_t)handle, &mode);
    if (rc == NVML_SUCCESS) set_int(env, out, 0, mode);
    return rc;
}

/* out = {currentMode, pendingMode}. */
static jint nvml_device_get_mig_mode(JNIEnv *env, jclass cls, jlong handle, jintArray out) {
    if (!need_array(env, out, 2)) return -1;
    NEED_NVML_OPTIONAL(nvmlDeviceGetMigMode);
    unsigned int current = 0, pending = 0;
    nvmlReturn_t rc = nvml.nvmlDeviceGetMigMode((nvmlDevice_t)(uintptr_t)handle, &current, &pending);
    if (rc == NVML_SUCCESS) {
        set_int(env, out, 0, (jint)current);
        set_int(env, out, 1, (jint)pending);
    }
    return rc;
}

/* out = {total, free, used} in bytes (no CUDA context needed). */
static jint nvml_device_get_memory_info(JNIEnv *env, jclass cls, jlong handle, jlongArray out) {
    if (!need_array(env, out, 3)) return -1;
    NEED_NVML_OPTIONAL(nvmlDeviceGetMemoryInfo);
    nvmlMemory_t memory = {0};
    nvmlReturn_t rc = nvml.nvmlDeviceGetMemoryInfo((nvmlDevice_t)(uintptr_t)handle, &memory);
    if (rc == NVML_SUCCESS) {
        set_long(env, out, 0, (jlong)memory.total);
        set_long(env, out, 1, (jlong)memory.free);
        set_long(env, out, 2, (jlong)memory.used);
    }
    return rc;
}

static jstring nvml_error_string(JNIEnv *env, jclass cls, jint code) {
    if (!nvml.nvmlErrorString) return NULL;
    const char *text = nvml.nvmlErrorString(code);
    return text ? (*env)->NewStringUTF(env, text) : NULL;
}

static const JNINativeMethod nvml_methods[] = {
    {"init", "()I", (void *)nvml_init},
    {"systemGetDriverVersion", "([Ljava/lang/String;)I", (void *)nvml_system_get_driver_version},
    {"deviceGetCount", "([I)I", (void *)nvml_device_get_count},
    {"deviceGetHandleByIndex", "(I[J)I", (void *)nvml_device_get_handle_by_index},
    {"deviceGetHandleByUuid", "(Ljava/lang/String;[J)I", (void *)nvml_device_get_handle_by_uuid},
    {"deviceGetUuid", "(J[Ljava/lang/String;)I", (void *)nvml_device_get_uuid},
    {"deviceGetGpuFabricInfo", "(J[I[B)I", (void *)nvml_device_get_gpu_fabric_info},
    {"deviceGetComputeMode", "(J[I)I", (void *)nvml_device_get_compute_mode},
    {"deviceGetMigMode", "(J[I)I", (void *)nvml_device_get_mig_mode},
    {"deviceGetMemoryInfo", "(J[J)I", (void *)nvml_device_get_memory_info},
    {"errorString", "(I)Ljava/lang/String;", (void *)nvml_error_string},
};

static int register_class(JNIEnv *env, const char *name, const JNINativeMethod *methods, jint count) {
    jclass cls = (*env)->FindClass(env, name);
    if (cls == NULL) return -1;
    return (*env)->RegisterNatives(env, cls, methods, count) == 0 ? 0 : -1;
}

__attribute__((visibility("default"))) JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM *vm, void *reserved) {
    JNIEnv *env;
    if ((*vm)->GetEnv(vm, (void **)&env, JNI_VERSION_10) != JNI_OK) return JNI_ERR;
    if (register_class(env, CUDA_CLASS, cuda_methods, ARRAY_LENGTH(cuda_methods)) != 0) return JNI_ERR;
    if (register_class(env, NVML_CLASS, nvml_methods, ARRAY_LENGTH(nvml_methods)) != 0) return JNI_ERR;
    if (imexprobe_register_fd_passing(env) != 0) return JNI_ERR;
    return JNI_VERSION_10;
}
