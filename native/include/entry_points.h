/*
 * The one list of driver entry points imexprobe uses, expanded by the shim's loader (src/loader.h: the function
 * pointers, their resolution and the "missing symbols" report), by the fake driver's cuGetProcAddress table
 * (fake/fake_cuda.c) and by the ABI check (test/abi_real.c: each PFN_ typedef against the toolkit's
 * PFN_<name>_v<version>).
 * X(name, cudaVersion, need): REQUIRED ones must resolve or the library counts as unusable; OPTIONAL ones
 * leave a NULL pointer that callers treat as "unavailable".
 * The version is the CUDA release that introduced the ABI declared in cuda_abi.h: asking for less gives
 * VERSION_NOT_SUFFICIENT (seen on the H200 for cuDeviceGetPCIBusId at 4000; it needs 4010).
 */
#ifndef IMEXPROBE_ENTRY_POINTS_H
#define IMEXPROBE_ENTRY_POINTS_H

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
    X(cuMemHostAlloc, 2020, OPTIONAL)                     \
    X(cuMemFreeHost, 2000, OPTIONAL)                      \
    X(cuModuleLoadData, 2000, OPTIONAL)                   \
    X(cuModuleUnload, 2000, OPTIONAL)                     \
    X(cuModuleGetFunction, 2000, OPTIONAL)                \
    X(cuLaunchKernel, 4000, OPTIONAL)                     \
    X(cuMemcpyDtoDAsync, 3020, OPTIONAL)                  \
    X(cuMemcpyDtoHAsync, 3020, OPTIONAL)                  \
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
    X(nvmlDeviceGetGpuFabricInfo, OPTIONAL)               \
    X(nvmlDeviceGetComputeMode, OPTIONAL)                 \
    X(nvmlDeviceGetMigMode, OPTIONAL)                     \
    X(nvmlDeviceGetMemoryInfo, OPTIONAL)

#endif
