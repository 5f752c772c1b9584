/*
 * Opens libcuda and NVML once and resolves the entry point list of include/entry_points.h. Nothing is linked at build
 * time, so the agent starts (and says why it cannot probe) on a machine without any NVIDIA library.
 */
#include "loader.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cuda_api cu;
struct nvml_api nvml;

static struct load_report report;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static const char *requested_cuda;
static const char *requested_nvml;

/* Messages are built once at load and kept for the life of the process. */
static char cuda_message[2048];
static char nvml_message[2048];

static void appendf(char *buf, size_t cap, const char *fmt, ...) {
    size_t used = strlen(buf);
    if (used + 1 >= cap) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, cap - used, fmt, ap);
    va_end(ap);
}

/* Where driver containers put the library when the dynamic linker's cache does not know it (GPU Operator,
 * the NVIDIA container toolkit's legacy mode, distributions). Tried only when no file was named. */
static const char *const fallback_dirs[] = {"/usr/local/nvidia/lib64", "/usr/lib64", "/usr/lib/x86_64-linux-gnu",
                                            "/usr/lib/aarch64-linux-gnu", "/run/nvidia/driver/usr/lib64", NULL};

/* dlopen the file the caller or the environment names, else the soname, else the fallbacks; every failed
 * attempt is recorded so the user can see what was tried. */
static void *open_library(const char *explicit_path, const char *env_name, const char *soname, char *message,
                          size_t cap, const char **opened) {
    const char *path = explicit_path ? explicit_path : getenv(env_name);
    if (path && !*path) path = NULL;
    const char *name = path ? path : soname;
    void *handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *why = dlerror();
        appendf(message, cap, "tried %s%s: %s", name, path && !explicit_path ? " (named by the environment)" : "",
                why ? why : "not found");
    }
    for (int i = 0; !handle && !path && fallback_dirs[i]; i++) {
        char candidate[512];
        snprintf(candidate, sizeof candidate, "%s/%s", fallback_dirs[i], soname);
        handle = dlopen(candidate, RTLD_NOW | RTLD_LOCAL);
        if (handle) name = strdup(candidate);
        else appendf(message, cap, ", %s", candidate);
    }
    if (!handle) return NULL;
    message[0] = '\0'; /* found after all: the attempts are no longer news */
    *opened = name == soname || name == path ? strdup(name) : name;
    return handle;
}

static int resolve_cuda(void *lib) {
    PFN_cuGetProcAddress_v2 get_v2 = (PFN_cuGetProcAddress_v2)dlsym(lib, "cuGetProcAddress_v2");
    PFN_cuGetProcAddress_v1 get_v1 = get_v2 ? NULL : (PFN_cuGetProcAddress_v1)dlsym(lib, "cuGetProcAddress");
    if (!get_v2 && !get_v1) {
        appendf(cuda_message, sizeof cuda_message,
                "%s has no cuGetProcAddress: the driver is older than CUDA 11.3, which fabric memory needs anyway",
                report.cuda_library);
        return 0;
    }
    int ok = 1;
    int optional_missing = 0;
#define RESOLVE(name, version, need)                                                                    \
    {                                                                                                   \
        void *fn = NULL;                                                                                \
        CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;                            \
        CUresult rc = get_v2 ? get_v2(#name, &fn, version, CU_GET_PROC_ADDRESS_DEFAULT, &status)        \
                             : get_v1(#name, &fn, version, CU_GET_PROC_ADDRESS_DEFAULT);                \
        if (rc != CUDA_SUCCESS || status != CU_GET_PROC_ADDRESS_SUCCESS || fn == NULL) {                \
            fn = NULL;                                                                                  \
            if (need) {                                                                                 \
                if (ok) appendf(cuda_message, sizeof cuda_message, "missing required entry points:");   \
                appendf(cuda_message, sizeof cuda_message, " %s", #name);                               \
                ok = 0;                                                                                 \
            } else {                                                                                    \
                optional_missing++;                                                                     \
            }                                                                                           \
        }                                                                                               \
        cu.name = (PFN_##name)fn;                                                                       \
    }
#define REQUIRED 1
#define OPTIONAL 0
    CUDA_ENTRY_POINTS(RESOLVE)
#undef RESOLVE
    if (ok && optional_missing) {
        appendf(cuda_message, sizeof cuda_message, "optional entry points missing:");
#define LIST_MISSING(name, version, need) \
    if (!need && cu.name == NULL) appendf(cuda_message, sizeof cuda_message, " %s", #name);
        CUDA_ENTRY_POINTS(LIST_MISSING)
#undef LIST_MISSING
    }
    return ok;
}

static int resolve_nvml(void *lib) {
    int ok = 1;
#define RESOLVE(name, need)                                                                    \
    {                                                                                          \
        nvml.name = (PFN_##name)dlsym(lib, #name);                                             \
        if (nvml.name == NULL && need) {                                                       \
            if (ok) appendf(nvml_message, sizeof nvml_message, "missing required symbols:");   \
            appendf(nvml_message, sizeof nvml_message, " %s", #name);                          \
            ok = 0;                                                                            \
        }                                                                                      \
    }
    NVML_ENTRY_POINTS(RESOLVE)
#undef RESOLVE
#undef REQUIRED
#undef OPTIONAL
    return ok;
}

static void load_once(void) {
    cuda_message[0] = nvml_message[0] = '\0';
    void *cuda = open_library(requested_cuda, "IMEXPROBE_CUDA_LIBRARY", "libcuda.so.1", cuda_message,
                              sizeof cuda_message, &report.cuda_library);
    if (cuda) {
        report.cuda_loaded = resolve_cuda(cuda);
        report.fake_info = (const char *(*)(void))dlsym(cuda, "fakecudaInfo");
        if (!report.cuda_loaded) memset(&cu, 0, sizeof cu);
    }
    void *nv = open_library(requested_nvml, "IMEXPROBE_NVML_LIBRARY", "libnvidia-ml.so.1", nvml_message,
                            sizeof nvml_message, &report.nvml_library);
    if (nv) {
        report.nvml_loaded = resolve_nvml(nv);
        if (!report.nvml_loaded) memset(&nvml, 0, sizeof nvml);
    }
    /* Libraries stay open for the life of the process: the driver keeps state behind every handle. */
    report.cuda_message = cuda_message[0] ? cuda_message : NULL;
    report.nvml_message = nvml_message[0] ? nvml_message : NULL;
}

const struct load_report *imexprobe_load(const char *cuda_path, const char *nvml_path) {
    requested_cuda = cuda_path;
    requested_nvml = nvml_path;
    pthread_once(&once, load_once);
    return &report;
}
