/*
 * The subset of NVML that imexprobe uses, declared by hand from nvml.h of driver 580 (NVML API 12).
 * Real names, so native/test/abi_check can compare this header with a real nvml.h where one is installed
 * (the CUDA toolkit ships it on GPU hosts). Decoding of states and health masks lives in Java (FabricInfo).
 */
#ifndef IMEXPROBE_NVML_ABI_H
#define IMEXPROBE_NVML_ABI_H

#ifdef __cplusplus
extern "C" {
#endif

typedef int nvmlReturn_t; /* enum nvmlReturn_enum: NvmlReturn.java holds the names */
typedef struct nvmlDevice_st *nvmlDevice_t;

#define NVML_SUCCESS 0
#define NVML_ERROR_UNINITIALIZED 1
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_NOT_FOUND 6
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_LIBRARY_NOT_FOUND 12
#define NVML_ERROR_FUNCTION_NOT_FOUND 13
#define NVML_ERROR_ARGUMENT_VERSION_MISMATCH 25
#define NVML_ERROR_UNKNOWN 999

#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96
#define NVML_GPU_FABRIC_UUID_LEN 16

#define NVML_GPU_FABRIC_STATE_NOT_SUPPORTED 0
#define NVML_GPU_FABRIC_STATE_NOT_STARTED 1
#define NVML_GPU_FABRIC_STATE_IN_PROGRESS 2
#define NVML_GPU_FABRIC_STATE_COMPLETED 3

typedef unsigned char nvmlGpuFabricState_t;

/* nvmlMemory_t (nvml.h, nvmlDeviceGetMemoryInfo): bytes; asked without a CUDA context. */
typedef struct nvmlMemory_st {
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
} nvmlMemory_t;

/* nvmlComputeMode_t (an enum in nvml.h): who may hold a context on the GPU. Policy lives in Java. */
typedef int nvmlComputeMode_t;
#define NVML_COMPUTEMODE_DEFAULT 0
#define NVML_COMPUTEMODE_EXCLUSIVE_THREAD 1
#define NVML_COMPUTEMODE_PROHIBITED 2
#define NVML_COMPUTEMODE_EXCLUSIVE_PROCESS 3

/* nvmlDeviceGetMigMode's current and pending modes. */
#define NVML_DEVICE_MIG_DISABLE 0x0
#define NVML_DEVICE_MIG_ENABLE 0x1

/* The legacy struct, for nvmlDeviceGetGpuFabricInfo (drivers before the versioned call). */
typedef struct nvmlGpuFabricInfo_st {
    unsigned char clusterUuid[NVML_GPU_FABRIC_UUID_LEN];
    nvmlReturn_t status;
    unsigned int cliqueId;
    nvmlGpuFabricState_t state;
} nvmlGpuFabricInfo_t;

typedef struct nvmlGpuFabricInfo_v2_st {
    unsigned int version;
    unsigned char clusterUuid[NVML_GPU_FABRIC_UUID_LEN];
    nvmlReturn_t status;
    unsigned int cliqueId;
    nvmlGpuFabricState_t state;
    unsigned int healthMask;
} nvmlGpuFabricInfo_v2_t;

typedef struct nvmlGpuFabricInfo_v3_st {
    unsigned int version;
    unsigned char clusterUuid[NVML_GPU_FABRIC_UUID_LEN];
    nvmlReturn_t status;
    unsigned int cliqueId;
    nvmlGpuFabricState_t state;
    unsigned int healthMask;
    unsigned char healthSummary;
} nvmlGpuFabricInfo_v3_t;

/* NVML_STRUCT_VERSION(GpuFabricInfo, N): the struct size in the low bits, N in the top byte. */
#define nvmlGpuFabricInfo_v2 ((unsigned int)(sizeof(nvmlGpuFabricInfo_v2_t) | (2U << 24U)))
#define nvmlGpuFabricInfo_v3 ((unsigned int)(sizeof(nvmlGpuFabricInfo_v3_t) | (3U << 24U)))

_Static_assert(sizeof(nvmlGpuFabricInfo_t) == 28, "legacy fabric info layout");
_Static_assert(sizeof(nvmlGpuFabricInfo_v2_t) == 36, "fabric info v2 layout (0x02000024)");
_Static_assert(sizeof(nvmlGpuFabricInfo_v3_t) == 40, "fabric info v3 layout (0x03000028)");

typedef nvmlReturn_t (*PFN_nvmlInit_v2)(void);
typedef nvmlReturn_t (*PFN_nvmlShutdown)(void);
typedef const char *(*PFN_nvmlErrorString)(nvmlReturn_t result);
typedef nvmlReturn_t (*PFN_nvmlSystemGetDriverVersion)(char *version, unsigned int length);
typedef nvmlReturn_t (*PFN_nvmlDeviceGetCount_v2)(unsigned int *count);
typedef nvmlReturn_t (*PFN_nvmlDeviceGetHandleByIndex_v2)(unsigned int index, nvmlDevice_t *device);
typedef nvmlReturn_t (*PFN_nvmlDeviceGetHandleByUUID)(const char *uuid, nvmlDevice_t *device);
typedef nvmlReturn_t (*PFN_nvmlDeviceGetUUID)(nvmlDevice_t device, char *uuid, unsigned int length);
typedef nvmlReturn_t (*PFN_nvmlDeviceGetGpuFabricInfoV)(nvmlDevice_t device, nvmlGpuFabricInfo_v3_t *info);
typedef nvmlReturn_t (*PFN_nvmlDeviceGetGpuFabricInfo)(nvmlDevice_t device, nvmlGpuFabricInfo_t *info);
typedef nvmlReturn_t (*PFN_nvmlDeviceGetComputeMode)(nvmlDevice_t device, nvmlComputeMode_t *mode);
typedef nvmlReturn_t (*PFN_nvmlDeviceGetMemoryInfo)(nvmlDevice_t device, nvmlMemory_t *memory);
typedef nvmlReturn_t (*PFN_nvmlDeviceGetMigMode)(nvmlDevice_t device, unsigned int *currentMode,
                                                 unsigned int *pendingMode);

#ifdef __cplusplus
}
#endif
#endif
