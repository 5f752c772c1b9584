/*
 * One list of what we rely on in the CUDA and NVML ABIs, compiled twice: against our hand-written headers
 * (abi_ours.c) and against the vendor's (abi_real.c). abi_check.c compares the two tables by name.
 * V(name): an enum value or macro; S(type): a struct size; O(type, field): a field offset.
 */
#define CUDA_ABI_ENTRIES(V, S, O)                                         \
    V(CUDA_SUCCESS) V(CUDA_ERROR_INVALID_VALUE) V(CUDA_ERROR_OUT_OF_MEMORY) \
    V(CUDA_ERROR_NOT_INITIALIZED) V(CUDA_ERROR_NO_DEVICE)                  \
    V(CUDA_ERROR_DEVICE_UNAVAILABLE)                                      \
    V(CUDA_ERROR_INVALID_DEVICE) V(CUDA_ERROR_INVALID_IMAGE) V(CUDA_ERROR_INVALID_CONTEXT) \
    V(CUDA_ERROR_INVALID_HANDLE) V(CUDA_ERROR_ILLEGAL_STATE)               \
    V(CUDA_ERROR_NOT_FOUND) V(CUDA_ERROR_NOT_READY)                        \
    V(CUDA_ERROR_ILLEGAL_ADDRESS) V(CUDA_ERROR_NOT_PERMITTED)              \
    V(CUDA_ERROR_NOT_SUPPORTED) V(CUDA_ERROR_UNKNOWN)                      \
    V(CU_IPC_HANDLE_SIZE)                                                 \
    V(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID) V(CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID) \
    V(CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID)                                  \
    V(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)                       \
    V(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)                       \
    V(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED)            \
    V(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED)    \
    V(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED)        \
    V(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED)                   \
    V(CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED)                            \
    V(CU_MEM_HANDLE_TYPE_NONE) V(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) \
    V(CU_MEM_HANDLE_TYPE_WIN32) V(CU_MEM_HANDLE_TYPE_WIN32_KMT)            \
    V(CU_MEM_HANDLE_TYPE_FABRIC)                                          \
    V(CU_MEM_ACCESS_FLAGS_PROT_NONE) V(CU_MEM_ACCESS_FLAGS_PROT_READ)      \
    V(CU_MEM_ACCESS_FLAGS_PROT_READWRITE)                                 \
    V(CU_MEM_LOCATION_TYPE_DEVICE) V(CU_MEM_ALLOCATION_TYPE_PINNED)        \
    V(CU_MEM_ALLOC_GRANULARITY_MINIMUM) V(CU_MEM_ALLOC_GRANULARITY_RECOMMENDED) \
    V(CU_GET_PROC_ADDRESS_DEFAULT) V(CU_GET_PROC_ADDRESS_SUCCESS)          \
    V(CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND)                               \
    V(CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT)                         \
    V(CU_EVENT_DEFAULT) V(CU_STREAM_NON_BLOCKING)                          \
    S(CUuuid) S(CUmemFabricHandle) S(CUmemLocation) S(CUmemAllocationProp) \
    S(CUmemAccessDesc) S(CUdeviceptr) S(CUmemGenericAllocationHandle)      \
    S(CUdevice) S(CUresult) S(CUmemAllocationHandleType)                   \
    O(CUmemLocation, type) O(CUmemLocation, id)                            \
    O(CUmemAllocationProp, type) O(CUmemAllocationProp, requestedHandleTypes) \
    O(CUmemAllocationProp, location) O(CUmemAllocationProp, win32HandleMetaData) \
    O(CUmemAllocationProp, allocFlags) O(CUmemAllocationProp, allocFlags.compressionType) \
    O(CUmemAllocationProp, allocFlags.gpuDirectRDMACapable) O(CUmemAllocationProp, allocFlags.usage) \
    O(CUmemAccessDesc, location) O(CUmemAccessDesc, flags)

#define NVML_ABI_ENTRIES(V, S, O)                                          \
    V(NVML_SUCCESS) V(NVML_ERROR_UNINITIALIZED) V(NVML_ERROR_INVALID_ARGUMENT) \
    V(NVML_ERROR_NOT_SUPPORTED) V(NVML_ERROR_NOT_FOUND)                    \
    V(NVML_ERROR_INSUFFICIENT_SIZE) V(NVML_ERROR_LIBRARY_NOT_FOUND)        \
    V(NVML_ERROR_FUNCTION_NOT_FOUND) V(NVML_ERROR_ARGUMENT_VERSION_MISMATCH) \
    V(NVML_ERROR_UNKNOWN) V(NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE)        \
    V(NVML_DEVICE_UUID_V2_BUFFER_SIZE) V(NVML_GPU_FABRIC_UUID_LEN)          \
    V(NVML_GPU_FABRIC_STATE_NOT_SUPPORTED) V(NVML_GPU_FABRIC_STATE_NOT_STARTED) \
    V(NVML_GPU_FABRIC_STATE_IN_PROGRESS) V(NVML_GPU_FABRIC_STATE_COMPLETED) \
    V(nvmlGpuFabricInfo_v2) V(nvmlGpuFabricInfo_v3)                        \
    S(nvmlGpuFabricInfo_t) S(nvmlGpuFabricInfo_v2_t) S(nvmlGpuFabricInfo_v3_t) \
    O(nvmlGpuFabricInfo_v3_t, version) O(nvmlGpuFabricInfo_v3_t, clusterUuid) \
    O(nvmlGpuFabricInfo_v3_t, status) O(nvmlGpuFabricInfo_v3_t, cliqueId)  \
    O(nvmlGpuFabricInfo_v3_t, state) O(nvmlGpuFabricInfo_v3_t, healthMask) \
    O(nvmlGpuFabricInfo_v3_t, healthSummary)                              \
    O(nvmlGpuFabricInfo_v2_t, healthMask) O(nvmlGpuFabricInfo_t, state)   \
    V(NVML_COMPUTEMODE_DEFAULT) V(NVML_COMPUTEMODE_EXCLUSIVE_THREAD)      \
    V(NVML_COMPUTEMODE_PROHIBITED) V(NVML_COMPUTEMODE_EXCLUSIVE_PROCESS)  \
    S(nvmlComputeMode_t) V(NVML_DEVICE_MIG_DISABLE) V(NVML_DEVICE_MIG_ENABLE) \
    S(nvmlMemory_t) O(nvmlMemory_t, total) O(nvmlMemory_t, free) O(nvmlMemory_t, used)

struct abi_entry {
    const char *name;
    long long value;
};

#define ABI_V(name) {#name, (long long)(name)},
#define ABI_S(type) {"sizeof(" #type ")", (long long)sizeof(type)},
#define ABI_O(type, field) {"offsetof(" #type ", " #field ")", (long long)offsetof(type, field)},
