/*
 * What the fake libcuda.so.1 and libnvidia-ml.so.1 share: the fake host (config file, host identity, GPU
 * UUIDs, which GPUs this process can see), IMEX channels, the state directory and injected faults.
 * Each library links its own copy of fake_common.c; both read the same environment and files, so they
 * agree about the host without talking to each other. Everything here is internal (hidden visibility).
 * README.md in this directory lists the switches and which rule follows which measured fact.
 */
#ifndef IMEXPROBE_FAKE_COMMON_H
#define IMEXPROBE_FAKE_COMMON_H

#include <stddef.h>

#define FAKE_MAX_GPUS 64         /* upper bound of FAKECUDA_GPUS / gpus= */
#define FAKE_MAX_CHANNEL 2047    /* ImexChannelCount: 2048 on the measured host */
#define FAKE_HOST_MAX 128        /* host id bytes, NUL included */
#define FAKE_UUID_STRING_LEN 41  /* "GPU-" + 36 + NUL, as NVML prints it */
#define FAKE_TOTAL_MEMORY_MIB 143771ULL /* an H200's memory, as cuMemGetInfo and NVML report its total */

/* NVML fabric info of one physical GPU, as FAKECUDA_CONFIG sets it (default: NOT_SUPPORTED, measured). */
struct fake_fabric {
    int state;             /* nvmlGpuFabricState_t 0..3 */
    int status;            /* nvmlReturn_t */
    unsigned int clique;
    unsigned char cluster[16];
    unsigned int health;   /* healthMask */
    int summary;           /* healthSummary 0..3 */
};

/* The process-wide view of the fake host, read once from the environment and FAKECUDA_CONFIG. */
struct fake_config {
    char host[FAKE_HOST_MAX];
    int gpus;                                 /* physical GPUs of the host, before any hiding */
    struct fake_fabric fabric[FAKE_MAX_GPUS]; /* by physical index */
    int compute_mode[FAKE_MAX_GPUS];          /* nvmlComputeMode_t by physical index: 0, 2 or 3 (default 0) */
    int mig[FAKE_MAX_GPUS];                   /* MIG mode by physical index: 0 off (default), 1 on */
    int no_fabric_handles[FAKE_MAX_GPUS];     /* gpu.N.handle_type_fabric=0: 1 when the GPU cannot export FABRIC */
    unsigned long long memory_used_mib[FAKE_MAX_GPUS]; /* gpu.N.memory_used_mib: memory others (a job) hold there */
    char channel_dir[4096];
    char state_dir[4096];
    char dev_dir[4096];                       /* "" when FAKECUDA_DEV_DIR is unset: every GPU present */
    char imex_domain[FAKE_HOST_MAX];          /* imex.domain: the IMEX daemon ensemble this host is in; "" unset */
    char faults[4096];                        /* FAKECUDA_FAULTS or ""; "@file" means re-read per call */
};

/* Loaded on first use, thread-safe, never freed. */
const struct fake_config *fake_config(void);

/* Messages go to stderr as "fakecuda: <library>: ...": the fake never fails silently and never aborts.
 * Both libraries read the same configuration, so a bad line is reported by each one that reads it. */
void fake_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern const char fake_library[]; /* "libcuda" or "libnvidia-ml", defined by each library */

/* GPU identity, a pure function of the host id and the physical index, so NVML and CUDA agree. */
void fake_gpu_uuid(const char *host, int physical, unsigned char out[16]);
void fake_format_uuid(const unsigned char uuid[16], char out[FAKE_UUID_STRING_LEN]);
/* Parses "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (36 chars); 0 on success. */
int fake_parse_uuid(const char *text, unsigned char out[16]);

/* Physical GPUs present to this process (FAKECUDA_DEV_DIR), in physical order; returns the count. */
int fake_present_gpus(int physical[FAKE_MAX_GPUS]);

/* IMEX channels, looked up afresh on every call: the lowest accessible channel number or -1; whether
 * channel n is accessible. */
int fake_lowest_channel(void);
int fake_has_channel(int n);

/* Makes sure the state directory exists (0700, parents too); 0 on success. */
int fake_ensure_state_dir(void);

/* Injected faults for one entry point (base name). Returns 0 to go on with the real work, or the code the
 * entry point must return. Delays and hangs happen here, with no lock held. */
int fake_fault(const char *entry);

/* Cryptographic randomness for secrets and file names; 0 on success. */
int fake_random(void *buf, size_t n);

/* FNV-1a, for deriving identities (not for security). */
unsigned long long fake_hash64(const void *data, size_t n, unsigned long long seed);

#endif
