/*
 * Fake libnvidia-ml.so.1: the NVML calls imexprobe uses, answering for the same fake host as the fake
 * libcuda (fake_common.c). Like the real NVML it sees every GPU of the host whatever CUDA_VISIBLE_DEVICES
 * says, but only those whose /dev/nvidiaN the process has (FAKECUDA_DEV_DIR). Fabric info defaults to what
 * the H200 reported: state NOT_SUPPORTED with status NVML_SUCCESS (docs/gpu-validation.md).
 */
#include "nvml_abi.h"
#include "fake_common.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))
#define DRIVER_VERSION "580.159.04"

const char fake_library[] = "libnvidia-ml";

struct nvmlDevice_st {
    int physical;
    char uuid[FAKE_UUID_STRING_LEN];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int init_count; /* nvmlInit_v2 / nvmlShutdown pairs, as the real library counts them */
static int device_count;
static struct nvmlDevice_st devices[FAKE_MAX_GPUS];

/* NVML has had thread-safety bugs, so callers must serialise their NVML calls (NCCL does; so does imexprobe,
 * in cuda/NvmlNative). The fake holds them to it: a call that starts while another of this process is still in
 * it (an injected delay included) fails with NVML_ERROR_UNKNOWN and says so on stderr. */
static atomic_int in_flight;

static int enter(const char *name) {
    if (atomic_fetch_add(&in_flight, 1) == 0) return 1;
    fake_log("%s called while another NVML call of this process was in flight: NVML calls must be serialised "
             "(NVML_ERROR_UNKNOWN)", name);
    return 0;
}

static void leave(void) { atomic_fetch_sub(&in_flight, 1); }

/* Serialisation and fault checks, then the lock and the initialisation check; the body runs locked. */
#define ENTRY(name, params, args)                                                                  \
    static nvmlReturn_t name##_locked params;                                                     \
    static nvmlReturn_t name##_checked params {                                                   \
        int fault = fake_fault(#name);                                                             \
        if (fault) return (nvmlReturn_t)fault;                                                     \
        pthread_mutex_lock(&lock);                                                                 \
        nvmlReturn_t rc = init_count > 0 ? name##_locked args : NVML_ERROR_UNINITIALIZED;          \
        pthread_mutex_unlock(&lock);                                                               \
        return rc;                                                                                 \
    }                                                                                              \
    EXPORT nvmlReturn_t name params {                                                              \
        nvmlReturn_t rc = enter(#name) ? name##_checked args : NVML_ERROR_UNKNOWN;                 \
        leave();                                                                                   \
        return rc;                                                                                 \
    }                                                                                              \
    static nvmlReturn_t name##_locked params

/* A device handle is one of ours or nothing: foreign pointers are compared, never dereferenced. */
static const struct nvmlDevice_st *device_of(nvmlDevice_t device) {
    for (int i = 0; i < device_count; i++)
        if (device == &devices[i]) return &devices[i];
    return NULL;
}

static nvmlReturn_t init_checked(void);

EXPORT nvmlReturn_t nvmlInit_v2(void) {
    nvmlReturn_t rc = enter("nvmlInit_v2") ? init_checked() : NVML_ERROR_UNKNOWN;
    leave();
    return rc;
}

static nvmlReturn_t init_checked(void) {
    int fault = fake_fault("nvmlInit_v2");
    if (fault) return (nvmlReturn_t)fault;
    const struct fake_config *c = fake_config();
    pthread_mutex_lock(&lock);
    if (init_count++ == 0) {
        int present[FAKE_MAX_GPUS];
        device_count = fake_present_gpus(present);
        for (int i = 0; i < device_count; i++) {
            unsigned char uuid[16];
            fake_gpu_uuid(c->host, present[i], uuid);
            devices[i].physical = present[i];
            fake_format_uuid(uuid, devices[i].uuid);
        }
    }
    pthread_mutex_unlock(&lock);
    return NVML_SUCCESS;
}

static nvmlReturn_t shutdown_checked(void);

EXPORT nvmlReturn_t nvmlShutdown(void) {
    nvmlReturn_t rc = enter("nvmlShutdown") ? shutdown_checked() : NVML_ERROR_UNKNOWN;
    leave();
    return rc;
}

static nvmlReturn_t shutdown_checked(void) {
    int fault = fake_fault("nvmlShutdown");
    if (fault) return (nvmlReturn_t)fault;
    pthread_mutex_lock(&lock);
    nvmlReturn_t rc = init_count > 0 ? NVML_SUCCESS : NVML_ERROR_UNINITIALIZED;
    if (init_count > 0) init_count--;
    pthread_mutex_unlock(&lock);
    return rc;
}

EXPORT const char *nvmlErrorString(nvmlReturn_t result) {
    switch (result) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case 4: return "Insufficient Permissions";
    case NVML_ERROR_NOT_FOUND: return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
    case 9: return "Driver Not Loaded";
    case NVML_ERROR_LIBRARY_NOT_FOUND: return "NVML Shared Library Not Found";
    case NVML_ERROR_FUNCTION_NOT_FOUND: return "Function Not Found";
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH: return "Argument Version Mismatch";
    default: return "Unknown Error";
    }
}

ENTRY(nvmlSystemGetDriverVersion, (char *version, unsigned int length), (version, length)) {
    if (!version) return NVML_ERROR_INVALID_ARGUMENT;
    if (length < sizeof DRIVER_VERSION) return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(version, DRIVER_VERSION, sizeof DRIVER_VERSION);
    return NVML_SUCCESS;
}

ENTRY(nvmlDeviceGetCount_v2, (unsigned int *count), (count)) {
    if (!count) return NVML_ERROR_INVALID_ARGUMENT;
    *count = (unsigned int)device_count;
    return NVML_SUCCESS;
}

ENTRY(nvmlDeviceGetHandleByIndex_v2, (unsigned int index, nvmlDevice_t *device), (index, device)) {
    if (!device || index >= (unsigned int)device_count) return NVML_ERROR_INVALID_ARGUMENT;
    *device = &devices[index];
    return NVML_SUCCESS;
}

ENTRY(nvmlDeviceGetHandleByUUID, (const char *uuid, nvmlDevice_t *device), (uuid, device)) {
    if (!uuid || !device) return NVML_ERROR_INVALID_ARGUMENT;
    for (int i = 0; i < device_count; i++)
        if (strcmp(devices[i].uuid, uuid) == 0) {
            *device = &devices[i];
            return NVML_SUCCESS;
        }
    return NVML_ERROR_NOT_FOUND;
}

ENTRY(nvmlDeviceGetUUID, (nvmlDevice_t device, char *uuid, unsigned int length), (device, uuid, length)) {
    const struct nvmlDevice_st *d = device_of(device);
    if (!d || !uuid) return NVML_ERROR_INVALID_ARGUMENT;
    if (length < FAKE_UUID_STRING_LEN) return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(uuid, d->uuid, FAKE_UUID_STRING_LEN);
    return NVML_SUCCESS;
}

ENTRY(nvmlDeviceGetGpuFabricInfoV, (nvmlDevice_t device, nvmlGpuFabricInfo_v3_t *info), (device, info)) {
    const struct nvmlDevice_st *d = device_of(device);
    if (!d || !info) return NVML_ERROR_INVALID_ARGUMENT;
    unsigned int version = info->version;
    if (version != nvmlGpuFabricInfo_v3 && version != nvmlGpuFabricInfo_v2) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    const struct fake_fabric *f = &fake_config()->fabric[d->physical];
    /* A v2 caller passed the smaller struct: fill it through its own type so nothing past it is written. */
    nvmlGpuFabricInfo_v2_t *v2 = (nvmlGpuFabricInfo_v2_t *)info;
    memcpy(v2->clusterUuid, f->cluster, NVML_GPU_FABRIC_UUID_LEN);
    v2->status = f->status;
    v2->cliqueId = f->clique;
    v2->state = (nvmlGpuFabricState_t)f->state;
    v2->healthMask = f->health;
    if (version == nvmlGpuFabricInfo_v3) info->healthSummary = (unsigned char)f->summary;
    return NVML_SUCCESS;
}

ENTRY(nvmlDeviceGetGpuFabricInfo, (nvmlDevice_t device, nvmlGpuFabricInfo_t *info), (device, info)) {
    const struct nvmlDevice_st *d = device_of(device);
    if (!d || !info) return NVML_ERROR_INVALID_ARGUMENT;
    const struct fake_fabric *f = &fake_config()->fabric[d->physical];
    memcpy(info->clusterUuid, f->cluster, NVML_GPU_FABRIC_UUID_LEN);
    info->status = f->status;
    info->cliqueId = f->clique;
    info->state = (nvmlGpuFabricState_t)f->state;
    return NVML_SUCCESS;
}

/* FAKECUDA_CONFIG gpu.N.compute_mode (default 0, DEFAULT). */
ENTRY(nvmlDeviceGetComputeMode, (nvmlDevice_t device, nvmlComputeMode_t *mode), (device, mode)) {
    const struct nvmlDevice_st *d = device_of(device);
    if (!d || !mode) return NVML_ERROR_INVALID_ARGUMENT;
    *mode = fake_config()->compute_mode[d->physical];
    return NVML_SUCCESS;
}

/* FAKECUDA_CONFIG gpu.N.memory_used_mib (default 0): the memory other processes (a job) hold on the GPU, as
 * nvidia-smi shows it. A model: this process's own contexts and allocations are not counted. */
ENTRY(nvmlDeviceGetMemoryInfo, (nvmlDevice_t device, nvmlMemory_t *memory), (device, memory)) {
    const struct nvmlDevice_st *d = device_of(device);
    if (!d || !memory) return NVML_ERROR_INVALID_ARGUMENT;
    memory->total = FAKE_TOTAL_MEMORY_MIB << 20;
    memory->used = fake_config()->memory_used_mib[d->physical] << 20;
    memory->free = memory->total - memory->used;
    return NVML_SUCCESS;
}

/* FAKECUDA_CONFIG gpu.N.mig (default 0): current and pending alike (no change is ever pending here). */
ENTRY(nvmlDeviceGetMigMode, (nvmlDevice_t device, unsigned int *currentMode, unsigned int *pendingMode),
      (device, currentMode, pendingMode)) {
    const struct nvmlDevice_st *d = device_of(device);
    if (!d || !currentMode || !pendingMode) return NVML_ERROR_INVALID_ARGUMENT;
    *currentMode = *pendingMode = (unsigned int)fake_config()->mig[d->physical];
    return NVML_SUCCESS;
}
