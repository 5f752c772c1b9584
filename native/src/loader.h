/*
 * The one list of driver entry points the shim uses. Each X(name, cudaVersion, need) expands into the
 * function pointer (cu.name), its resolution through cuGetProcAddress with that API version, and the
 * "missing symbols" report. REQUIRED ones must resolve or the library counts as unusable; OPTIONAL ones
 * leave a NULL pointer that callers treat as "unavailable".
 * The version is the CUDA release that introduced the ABI declared in cuda_abi.h: asking for less gives
 * VERSION_NOT_SUFFICIENT (seen on the H200 for cuDeviceGetPCIBusId at 4000; it needs 4010).
 */
#ifndef IMEXPROBE_LOADER_H
#define IMEXPROBE_LOADER_H

#include "cuda_abi.h"
#include "nvml_abi.h"

#define CUDA_ENTRY_POINTS(X)                              \
    X(cuInit, 2000, REQUIRED)                             \
    X(cuDriverGetVersion, 2020, REQUIRED)                 \
    X(cuGetErrorName, 6000, REQUIRED)                     \
    X(cuGetErrorString, 6000, REQUIRED)                   \
    X(cuDeviceGetCount, 2000, REQUIRED)                   \
    X(cuDeviceGet, 2000, REQUIRED)                        \
    X(cuDeviceGetName, 2000, REQUIRED)                    \
    X(cuDeviceGetUuid, 11040, REQUIRED)                   \
    X(cuDeviceGetPCIBusId, 4010, REQUIRED)                \
    X(cuDeviceGetAttribute, 2000, REQUIRED)               \
    X(cuDevicePrimaryCtxRetain, 7000, REQUIRED)           \
    X(cuDevicePrimaryCtxRelease, 11000, REQUIRED)         \
    X(cuCtxSetCurrent, 4000, REQUIRED)                    \
    X(cuCtxSynchronize, 2000, REQUIRED)                   \
    X(cuMemGetInfo, 3020, REQUIRED)                       \
    X(cuMemGetAllocationGranularity, 10020, REQUIRED)     \
    X(cuMemCreate, 10020, REQUIRED)                       \
    X(cuMemRelease, 10020, REQUIRED)                      \
    X(cuMemExportToShareableHandle, 10020, REQUIRED)      \
    X(cuMemImportFromShareableHandle, 10020, REQUIRED)    \
    X(cuMemAddressReserve, 10020, REQUIRED)               \
    X(cuMemAddressFree, 10020, REQUIRED)                  \
    X(cuMemMap, 10020, REQUIRED)                          \
    X(cuMemUnmap, 10020, REQUIRED)                        \
    X(cuMemSetAccess, 10020, REQUIRED)                    \
    X(cuMemcpyHtoD, 3020, REQUIRED)                       \
    X(cuMemcpyDtoH, 3020, REQUIRED)                       \
    X(cuMemcpyDtoDAsync, 3020, OPTIONAL)                  \
    X(cuStreamCreate, 2000, OPTIONAL)                     \
    X(cuStreamDestroy, 4000, OPTIONAL)                    \
    X(cuStreamSynchronize, 2000, OPTIONAL)                \
    X(cuEventCreate, 2000, OPTIONAL)                      \
    X(cuEventDestroy, 4000, OPTIONAL)                     \
    X(cuEventRecord, 2000, OPTIONAL)                      \
    X(cuEventSynchronize, 2000, OPTIONAL)                 \
    X(cuEventElapsedTime, 2000, OPTIONAL)

/* NVML has no cuGetProcAddress: its versioned names are the symbols, resolved with dlsym. */
#define NVML_ENTRY_POINTS(X)                              \
    X(nvmlInit_v2, REQUIRED)                              \
    X(nvmlShutdown, REQUIRED)                             \
    X(nvmlErrorString, REQUIRED)                          \
    X(nvmlSystemGetDriverVersion, REQUIRED)               \
    X(nvmlDeviceGetCount_v2, REQUIRED)                    \
    X(nvmlDeviceGetHandleByIndex_v2, REQUIRED)            \
    X(nvmlDeviceGetHandleByUUID, REQUIRED)                \
    X(nvmlDeviceGetUUID, REQUIRED)                        \
    X(nvmlDeviceGetGpuFabricInfoV, OPTIONAL)              \
    X(nvmlDeviceGetGpuFabricInfo, OPTIONAL)

#define DECLARE_CUDA_POINTER(name, version, need) PFN_##name name;
#define DECLARE_NVML_POINTER(name, need) PFN_##name name;
struct cuda_api { CUDA_ENTRY_POINTS(DECLARE_CUDA_POINTER) };
struct nvml_api { NVML_ENTRY_POINTS(DECLARE_NVML_POINTER) };
#undef DECLARE_CUDA_POINTER
#undef DECLARE_NVML_POINTER

extern struct cuda_api cu;
extern struct nvml_api nvml;

/* What opening the libraries found; the strings live as long as the process. */
struct load_report {
    int cuda_loaded;          /* every REQUIRED CUDA entry point resolved */
    int nvml_loaded;          /* every REQUIRED NVML entry point resolved */
    const char *cuda_library; /* the file that was opened, or NULL */
    const char *cuda_message; /* why not loaded / which optional symbols are missing; NULL when all is well */
    const char *nvml_library;
    const char *nvml_message;
    const char *(*fake_info)(void); /* fakecudaInfo of the fake driver; NULL with the real one */
};

/* Opens both libraries once (later calls return the first result; the arguments of later calls are ignored).
 * cuda_path / nvml_path: a file to dlopen, or NULL for the sonames. */
const struct load_report *imexprobe_load(const char *cuda_path, const char *nvml_path);

#endif
