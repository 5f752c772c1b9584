/*
 * Fake libcuda.so.1: the CUDA driver entry points imexprobe uses, behaving as the real driver 580 / CUDA 13.0
 * was seen to behave on an H200 (docs/gpu-validation.md records those runs), for machines without a GPU.
 *
 * Memory is real shared memory: every allocation is a file in FAKECUDA_STATE_DIR (a 64 KiB header, then the
 * data), device pointers are host virtual addresses, cuMemMap maps the file's data MAP_SHARED. So an export
 * in one process and an import, read-back and write-back in another are genuine, not bookkept.
 *
 * Only cuInit, cuDriverGetVersion, cuGetErrorName/String, cuGetProcAddress(_v2) and fakecudaInfo are
 * exported; everything else is reached through cuGetProcAddress by base name, as the loader does with the
 * real library. There is no multicast entry point of any kind.
 *
 * One mutex guards all state. Injected faults (fake_fault) run before it is taken, so a hung entry point
 * blocks only its caller.
 */
#include "cuda_abi.h"
#include "entry_points.h"
#include "fake_common.h"
#include "../src/pattern.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

const char fake_library[] = "libcuda";

#define MIB (1024ULL * 1024ULL)
#define GRANULARITY (2 * MIB)          /* minimum and recommended, measured on the H200 */
#define TOTAL_MEMORY (FAKE_TOTAL_MEMORY_MIB * MIB) /* H200 cuMemGetInfo total */
#define DRIVER_VERSION 13000           /* CUDA 13.0, driver 580.159.04 */

/* Event flags and cuGetProcAddress flags from cuda.h that cuda_abi.h does not carry. */
#define EVENT_FLAGS_KNOWN 0x7    /* BLOCKING_SYNC | DISABLE_TIMING | INTERPROCESS */
#define EVENT_DISABLE_TIMING 0x2
#define PROC_ADDRESS_FLAGS_KNOWN 0x3 /* LEGACY_STREAM | PER_THREAD_DEFAULT_STREAM */

/* ---- allocation files ------------------------------------------------------------------------------- */

/* The data starts after the header at an offset every Linux page size divides (arm64 uses 64 KiB pages),
 * so cuMemMap can mmap it directly. The header region is sparse: it costs one page. */
#define HEADER_SIZE 65536
#define FILE_PREFIX "alloc-"
static const char ALLOC_MAGIC[16] = "fakecuda-alloc1";

struct alloc_header {
    char magic[16];              /* written last: a reader that sees it sees the whole header */
    unsigned char file_id[16];   /* names the file: alloc-<32 hex> */
    unsigned char secret[16];    /* random; a fabric handle must carry it */
    char host[FAKE_HOST_MAX];    /* host id of the owner */
    char boot_id[40];            /* kernel boot of the owner */
    uint64_t owner_start;        /* /proc/<pid>/stat starttime, so pid reuse is caught */
    uint64_t owner_pidns;        /* inode of the owner's pid namespace: pids compare only within one */
    uint64_t size;
    int32_t owner_pid;
    int32_t owner_locked;        /* the owner holds an OFD read lock on byte 0 while it lives */
    int32_t gpu;                 /* physical index of the exporter's GPU */
    int32_t channel;             /* IMEX channel the allocation is bound to; -1 without FABRIC */
    uint32_t handle_types;
    int32_t fabric_state;        /* the exporter GPU's NVML fabric info, for the cross-host model */
    int32_t fabric_status;
    uint32_t fabric_clique;
    unsigned char fabric_cluster[16];
    char imex_domain[FAKE_HOST_MAX]; /* the exporter host's imex.domain, "" when unset */
};
_Static_assert(sizeof(struct alloc_header) <= HEADER_SIZE, "the header fits its region");

/* The 64-byte fabric handle. Every byte is re-derived from the file's header on import and compared, so a
 * random or mutated handle (any bit) is rejected; the secret makes a handle unguessable. */
struct fabric_wire {
    char magic[4];
    int32_t gpu;
    uint64_t size;
    unsigned char file_id[16];
    unsigned char secret[16];
    int32_t channel;
    uint32_t handle_types;
    uint64_t host_tag;
};
_Static_assert(sizeof(struct fabric_wire) == sizeof(CUmemFabricHandle), "a fabric handle is 64 bytes");

/* ---- in-process state (all under `lock`) ------------------------------------------------------------ */

struct CUctx_st {
    int ordinal;
    int refs;           /* primary context retains */
    int exclusive_fd;   /* EXCLUSIVE_PROCESS: the open lock file while refs > 0, else -1 (0 before discover) */
};

struct CUstream_st {
    struct CUstream_st *next;
};

struct CUevent_st {
    struct CUevent_st *next;
    unsigned int flags;
    int recorded;
    struct timespec when;
};

struct alloc {
    struct alloc *next;
    CUmemGenericAllocationHandle id;
    int fd;
    int owned; /* created by this process: release unlinks the file */
    struct alloc_header hdr;
};

struct mapping {
    struct mapping *next;
    uintptr_t addr;
    size_t size;
    unsigned char access[FAKE_MAX_GPUS]; /* CUmemAccess_flags per device ordinal */
};

struct reservation {
    struct reservation *next;
    uintptr_t base;
    size_t size;
    struct mapping *maps;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int init_called;
static CUresult init_result;
static int device_count;
static int device_physical[FAKE_MAX_GPUS]; /* ordinal -> physical index */
static struct CUctx_st contexts[FAKE_MAX_GPUS];
static int context_creations; /* a retain that found no reference: the real driver creates the context then */

/* Page-locked host memory (cuMemHostAlloc): plain malloc'd memory here, owned by the context that allocated it
 * and freed when that context is destroyed, as cuda.h describes page-locked memory of a context (model, not
 * measured). Under `lock`. */
struct host_alloc {
    struct host_alloc *next;
    void *p;
    size_t bytes;
    int ordinal;
};
static struct host_alloc *host_allocs;

/* Modules (cuModuleLoadData): the fake runs no GPU code, but it knows the shim's two kernels by name
 * (native/src/pattern_kernel.cu) and does on the host what they do on a GPU: the fill writes pattern.h's words into
 * the device range, the compare reads the range and writes each block's first differing word index (all ones for
 * none) into page-locked host memory, both with the access rules of a copy. A module belongs to the context that loaded it and goes
 * with it. A module image must be PTX text with at least one `.entry`; anything else is CUDA_ERROR_INVALID_IMAGE
 * (model, not measured). Under `lock`. */
struct CUmod_st {
    struct CUmod_st *next;
    int ordinal;
    int has_fill;
    int has_compare;
};
struct CUfunc_st {
    struct CUmod_st *module;
};
static struct CUmod_st *modules;
/* One slot per loaded module at most, reused; which array a CUfunction lies in says which kernel it is, so that a
 * launch's fault (below) is found without the lock. */
static struct CUfunc_st fill_functions[FAKE_MAX_GPUS * 8], compare_functions[FAKE_MAX_GPUS * 8];
#define FUNCTION_SLOTS (sizeof fill_functions / sizeof fill_functions[0])

static void free_modules(int ordinal) {
    for (struct CUmod_st **m = &modules; *m;) {
        if ((*m)->ordinal == ordinal) {
            struct CUmod_st *dead = *m;
            *m = dead->next;
            for (size_t i = 0; i < FUNCTION_SLOTS; i++) {
                if (fill_functions[i].module == dead) fill_functions[i].module = NULL;
                if (compare_functions[i].module == dead) compare_functions[i].module = NULL;
            }
            free(dead);
        } else {
            m = &(*m)->next;
        }
    }
}

static void free_host_allocs(int ordinal) {
    for (struct host_alloc **h = &host_allocs; *h;) {
        if ((*h)->ordinal == ordinal) {
            struct host_alloc *dead = *h;
            *h = dead->next;
            free(dead->p);
            free(dead);
        } else {
            h = &(*h)->next;
        }
    }
}

/* FAKECUDA_CONTEXT_LOG=<file>: one line per context made or destroyed ("create <dev>" / "destroy <dev>"), so a
 * test outside the process sees what nvidia-smi would (a process holding a context on the GPU). Under `lock`. */
static void context_log(const char *what, int dev) {
    const char *path = getenv("FAKECUDA_CONTEXT_LOG");
    if (!path || !*path) return;
    FILE *f = fopen(path, "a");
    if (!f) return;
    fprintf(f, "%s %d\n", what, dev);
    fclose(f);
}
static _Thread_local struct CUctx_st *current_ctx;
static struct alloc *allocs;
static CUmemGenericAllocationHandle next_handle = 1;
static unsigned long long created_bytes;
static struct reservation *reservations;
static struct CUstream_st *streams;
static struct CUevent_st *events;

/* The fault check, the lock and the cuInit check every entry point shares; the body runs locked. An entry point
 * whose faults are more than its name's gives its own check (fault_check: an int expression of the parameters). */
#define ENTRY_FAULT(name, fault_check, params, args)                                    \
    static CUresult name##_locked params;                                               \
    static CUresult name params {                                                        \
        int fault = (fault_check);                                                       \
        if (fault) return (CUresult)fault;                                               \
        pthread_mutex_lock(&lock);                                                       \
        CUresult rc = init_called && init_result == CUDA_SUCCESS ? name##_locked args     \
                                                                 : CUDA_ERROR_NOT_INITIALIZED; \
        pthread_mutex_unlock(&lock);                                                     \
        return rc;                                                                       \
    }                                                                                    \
    static CUresult name##_locked params
#define ENTRY(name, params, args) ENTRY_FAULT(name, fake_fault(#name), params, args)

/* Ordinal of the calling thread's current context, or -1 (memory calls then return INVALID_CONTEXT). */
static int current_ordinal(void) {
    return current_ctx && current_ctx->refs > 0 ? current_ctx->ordinal : -1;
}

static int valid_device(CUdevice dev) {
    return dev >= 0 && dev < device_count;
}

/* ---- small helpers ---------------------------------------------------------------------------------- */

static void file_name(const unsigned char id[16], char out[48]) {
    int n = snprintf(out, 48, FILE_PREFIX);
    for (int i = 0; i < 16; i++) n += snprintf(out + n, (size_t)(48 - n), "%02x", id[i]);
}

static void file_path(const char *name, char *out, size_t cap) {
    snprintf(out, cap, "%s/%s", fake_config()->state_dir, name);
}

static int is_alloc_file_name(const char *name) {
    size_t plen = strlen(FILE_PREFIX);
    return strncmp(name, FILE_PREFIX, plen) == 0 && strlen(name) == plen + 32 &&
           strspn(name + plen, "0123456789abcdef") == 32;
}

static void read_small_file(const char *path, char *out, size_t cap) {
    out[0] = '\0';
    FILE *f = fopen(path, "re");
    if (!f) return;
    if (!fgets(out, (int)cap, f)) out[0] = '\0';
    fclose(f);
    out[strcspn(out, "\n")] = '\0';
}

/* starttime (field 22) of /proc/<pid>/stat, 0 when unknown. */
static uint64_t process_start(pid_t pid) {
    char path[64], line[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    read_small_file(path, line, sizeof line);
    char *p = strrchr(line, ')'); /* the command name (field 2) may hold spaces and parentheses */
    if (!p) return 0;
    p++; /* the space before field 3 */
    for (int field = 3; field < 22 && p; field++) p = strchr(p + 1, ' ');
    return p ? strtoull(p + 1, NULL, 10) : 0;
}

static uint64_t pid_namespace(void) {
    struct stat st;
    return stat("/proc/self/ns/pid", &st) == 0 ? (uint64_t)st.st_ino : 0;
}

static void boot_id(char out[40]) {
    read_small_file("/proc/sys/kernel/random/boot_id", out, 40);
}

static uint64_t host_tag(const char *host) {
    return fake_hash64(host, strlen(host), 0x686f7374ULL);
}

static int same_host(const struct alloc_header *h) {
    return strncmp(h->host, fake_config()->host, FAKE_HOST_MAX) == 0;
}

static void wire_from_header(const struct alloc_header *h, CUmemFabricHandle *out) {
    struct fabric_wire w;
    memset(&w, 0, sizeof w);
    memcpy(w.magic, "FKH1", 4);
    w.gpu = h->gpu;
    w.size = h->size;
    memcpy(w.file_id, h->file_id, 16);
    memcpy(w.secret, h->secret, 16);
    w.channel = h->channel;
    w.handle_types = h->handle_types;
    w.host_tag = host_tag(h->host);
    memcpy(out->data, &w, sizeof w);
}

/* Constant time, so the secret cannot be found byte by byte. */
static int same_bytes(const void *a, const void *b, size_t n) {
    const unsigned char *x = a, *y = b;
    unsigned char diff = 0;
    for (size_t i = 0; i < n; i++) diff |= (unsigned char)(x[i] ^ y[i]);
    return diff == 0;
}

/* Reads and checks the header of an open allocation file; 0 when it is a complete allocation file. */
static int read_header(int fd, struct alloc_header *h) {
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < HEADER_SIZE) return -1;
    if (pread(fd, h, sizeof *h, 0) != (ssize_t)sizeof *h) return -1;
    if (memcmp(h->magic, ALLOC_MAGIC, sizeof ALLOC_MAGIC) != 0) return -1;
    h->host[FAKE_HOST_MAX - 1] = '\0';
    h->imex_domain[FAKE_HOST_MAX - 1] = '\0';
    h->boot_id[sizeof h->boot_id - 1] = '\0';
    if (h->size == 0 || h->size % GRANULARITY != 0 || h->size > TOTAL_MEMORY ||
        (uint64_t)st.st_size != HEADER_SIZE + h->size)
        return -1;
    return 0;
}

/* 1 only when the owner is provably gone: its lock is free (the kernel drops it when the last descriptor of
 * the owner's open file closes, whatever the pid namespace), or, in our own boot and pid namespace, its pid
 * is free or belongs to a process started at another time. */
static int owner_dead(int fd, const struct alloc_header *h) {
    if (h->owner_locked) {
        struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1, .l_pid = 0};
        if (fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type == F_UNLCK) return 1;
    }
    char boot[40];
    boot_id(boot);
    if (boot[0] == '\0' || strcmp(boot, h->boot_id) != 0 || h->owner_pidns == 0 || h->owner_pidns != pid_namespace())
        return 0;
    if (kill((pid_t)h->owner_pid, 0) != 0 && errno == ESRCH) return 1;
    uint64_t start = process_start((pid_t)h->owner_pid);
    return start != 0 && h->owner_start != 0 && start != h->owner_start;
}

/* Files of dead owners on this host are released allocations: remove them (cuInit and import). */
static void collect_dead_files(void) {
    DIR *dir = opendir(fake_config()->state_dir);
    if (!dir) return;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        if (!is_alloc_file_name(entry->d_name)) continue;
        int fd = openat(dirfd(dir), entry->d_name, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0) continue;
        struct alloc_header h;
        struct stat st;
        if (read_header(fd, &h) == 0) {
            if (same_host(&h) && owner_dead(fd, &h)) unlinkat(dirfd(dir), entry->d_name, 0);
        } else if (fstat(fd, &st) == 0 && time(NULL) - st.st_mtime > 60) {
            /* Never completed: its creator died between creating and writing it. */
            unlinkat(dirfd(dir), entry->d_name, 0);
        }
        close(fd);
    }
    closedir(dir);
}

/* Creates the allocation file with its header complete before any other process can open it: an unnamed
 * O_TMPFILE linked in when done, or (filesystems without O_TMPFILE) the final name with the magic written
 * last. The owner's lock is taken before the file is reachable. Returns the fd or -1. */
static int write_alloc_file(struct alloc_header *h, int use_tmpfile) {
    const char *dir = fake_config()->state_dir;
    char name[48], path[4200];
    file_name(h->file_id, name);
    file_path(name, path, sizeof path);
    int fd = use_tmpfile ? open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600)
                         : open(path, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return -1;
    struct flock fl = {.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1, .l_pid = 0};
    h->owner_locked = fcntl(fd, F_OFD_SETLK, &fl) == 0;
    struct alloc_header unsealed = *h;
    memset(unsealed.magic, 0, sizeof unsealed.magic);
    int ok = ftruncate(fd, (off_t)(HEADER_SIZE + h->size)) == 0 &&
             pwrite(fd, &unsealed, sizeof unsealed, 0) == (ssize_t)sizeof unsealed &&
             pwrite(fd, h->magic, sizeof h->magic, 0) == (ssize_t)sizeof h->magic;
    if (ok && use_tmpfile) {
        char self[64];
        snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
        ok = linkat(AT_FDCWD, self, AT_FDCWD, path, AT_SYMLINK_FOLLOW) == 0;
    }
    if (!ok) {
        if (!use_tmpfile) unlink(path);
        close(fd);
        return -1;
    }
    return fd;
}

static struct alloc *find_alloc(CUmemGenericAllocationHandle id) {
    for (struct alloc *a = allocs; a; a = a->next)
        if (a->id == id) return a;
    return NULL;
}

static CUresult add_alloc(int fd, int owned, const struct alloc_header *h, CUmemGenericAllocationHandle *out) {
    struct alloc *a = calloc(1, sizeof *a);
    if (!a) return CUDA_ERROR_OUT_OF_MEMORY;
    a->id = next_handle++;
    a->fd = fd;
    a->owned = owned;
    a->hdr = *h;
    a->next = allocs;
    allocs = a;
    if (owned) created_bytes += h->size;
    *out = a->id;
    return CUDA_SUCCESS;
}

/* A new open file description of an allocation (not a dup: the owner's lock must not travel with it). */
static int reopen(const struct alloc *a) {
    char path[4200];
    snprintf(path, sizeof path, "/proc/self/fd/%d", a->fd);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd >= 0) return fd;
    char name[48];
    file_name(a->hdr.file_id, name);
    file_path(name, path, sizeof path);
    return open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
}

/* ---- reservations and mappings ---------------------------------------------------------------------- */

static struct reservation *reservation_containing(uintptr_t ptr, size_t size) {
    for (struct reservation *r = reservations; r; r = r->next)
        if (ptr >= r->base && size <= r->size && ptr - r->base <= r->size - size) return r;
    return NULL;
}

static struct mapping *mapping_at(uintptr_t addr, struct reservation **owner) {
    for (struct reservation *r = reservations; r; r = r->next)
        for (struct mapping *m = r->maps; m; m = m->next)
            if (addr >= m->addr && addr - m->addr < m->size) {
                if (owner) *owner = r;
                return m;
            }
    return NULL;
}

/* 1 when [ptr, ptr+size) is exactly whole mappings back to back, as cuMemUnmap and cuMemSetAccess require
 * ("the entire contiguous address range that was mapped", cuda.h). */
static int whole_mappings(uintptr_t ptr, size_t size) {
    if (size == 0 || ptr + size < ptr) return 0;
    uintptr_t cursor = ptr, end = ptr + size;
    while (cursor < end) {
        struct mapping *m = mapping_at(cursor, NULL);
        if (!m || m->addr != cursor || m->size > end - cursor) return 0;
        cursor += m->size;
    }
    return 1;
}

/* 1 when [ptr, ptr+size) lies in mappings that grant the device `ordinal` at least `need`. */
static int range_accessible(uintptr_t ptr, size_t size, int ordinal, int need) {
    if (ptr + size < ptr) return 0;
    uintptr_t cursor = ptr, end = ptr + size;
    while (cursor < end) {
        struct mapping *m = mapping_at(cursor, NULL);
        if (!m || (m->access[ordinal] & need) != need) return 0;
        cursor = m->addr + m->size;
    }
    return 1;
}

static int mapping_prot(const struct mapping *m) {
    int prot = PROT_NONE;
    for (int i = 0; i < device_count; i++) {
        if (m->access[i] == CU_MEM_ACCESS_FLAGS_PROT_READWRITE) return PROT_READ | PROT_WRITE;
        if (m->access[i] == CU_MEM_ACCESS_FLAGS_PROT_READ) prot = PROT_READ;
    }
    return prot;
}

/* Back to an inaccessible reserved range. */
static int make_reserved(uintptr_t addr, size_t size) {
    return mmap((void *)addr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0) ==
                   MAP_FAILED
               ? -1
               : 0;
}

/* Copies between a host buffer and device memory without ever faulting on a bad host pointer: the kernel
 * reports EFAULT instead. Falls back to memcpy where process_vm_readv is unavailable (seccomp). */
static int host_copy(void *dst, const void *src, size_t n) {
    unsigned char *to = dst;
    const unsigned char *from = src;
    while (n > 0) {
        size_t chunk = n < (1UL << 30) ? n : (1UL << 30); /* the kernel copies at most ~2 GiB per call */
        struct iovec local = {to, chunk}, remote = {(void *)from, chunk};
        ssize_t got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
        if (got < 0 && (errno == ENOSYS || errno == EPERM)) {
            memcpy(to, from, n);
            return 0;
        }
        if (got <= 0) return -1; /* EFAULT: a host pointer the caller does not own */
        to += got;
        from += got;
        n -= (size_t)got;
    }
    return 0;
}

/* ---- initialisation and devices --------------------------------------------------------------------- */

/* CUDA_VISIBLE_DEVICES as the real driver reads it: indices into the present GPUs or "GPU-" UUID prefixes
 * that match exactly one GPU; the list ends at the first entry that is invalid or repeats one. */
static int visible_devices(const int *present, int npresent, int out[FAKE_MAX_GPUS]) {
    const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
    if (!cvd) {
        memcpy(out, present, sizeof(int) * (size_t)npresent);
        return npresent;
    }
    const char *host = fake_config()->host;
    int n = 0;
    const char *p = cvd;
    for (;;) {
        size_t len = strcspn(p, ",");
        char token[128];
        if (len >= sizeof token) break;
        memcpy(token, p, len);
        token[len] = '\0';
        char *t = token;
        while (*t == ' ') t++;
        for (size_t end = strlen(t); end > 0 && t[end - 1] == ' ';) t[--end] = '\0';

        int physical = -1;
        size_t tlen = strlen(t);
        if (tlen > 0 && tlen <= 4 && strspn(t, "0123456789") == tlen) {
            int index = atoi(t);
            if (index < npresent) physical = present[index];
        } else if (tlen > 4 && strncmp(t, "GPU-", 4) == 0) {
            int matches = 0;
            for (int i = 0; i < npresent; i++) {
                unsigned char uuid[16];
                char text[FAKE_UUID_STRING_LEN];
                fake_gpu_uuid(host, present[i], uuid);
                fake_format_uuid(uuid, text);
                if (strncmp(text, t, tlen) == 0) {
                    matches++;
                    physical = present[i];
                }
            }
            if (matches != 1) physical = -1;
        }
        if (physical < 0) break;
        for (int i = 0; i < n; i++)
            if (out[i] == physical) physical = -1;
        if (physical < 0) break;
        out[n++] = physical;
        if (p[len] == '\0') break;
        p += len + 1;
    }
    return n;
}

static CUresult discover(void) {
    int present[FAKE_MAX_GPUS];
    int npresent = fake_present_gpus(present);
    device_count = visible_devices(present, npresent, device_physical);
    for (int i = 0; i < device_count; i++) {
        contexts[i].ordinal = i;
        contexts[i].exclusive_fd = -1;
    }
    if (device_count == 0) return CUDA_ERROR_NO_DEVICE;
    if (fake_ensure_state_dir() == 0) collect_dead_files();
    return CUDA_SUCCESS;
}

EXPORT CUresult cuInit(unsigned int flags) {
    int fault = fake_fault("cuInit");
    if (fault) return (CUresult)fault;
    if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    /* Like the real driver, the first call decides (CUDA_VISIBLE_DEVICES is read once). */
    if (!init_called) {
        init_result = discover();
        init_called = 1;
    }
    CUresult rc = init_result;
    pthread_mutex_unlock(&lock);
    return rc;
}

EXPORT CUresult cuDriverGetVersion(int *version) {
    int fault = fake_fault("cuDriverGetVersion");
    if (fault) return (CUresult)fault;
    if (!version) return CUDA_ERROR_INVALID_VALUE;
    *version = DRIVER_VERSION;
    return CUDA_SUCCESS;
}

static const struct {
    CUresult code;
    const char *name;
    const char *text;
} errors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {4, "CUDA_ERROR_DEINITIALIZED", "driver shutting down"},
    {34, "CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library"},
    {46, "CUDA_ERROR_DEVICE_UNAVAILABLE", "CUDA-capable device(s) is/are busy or unavailable"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {CUDA_ERROR_ILLEGAL_STATE, "CUDA_ERROR_ILLEGAL_STATE", "the operation cannot be performed in the present state"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
    {709, "CUDA_ERROR_CONTEXT_IS_DESTROYED", "context is destroyed"},
    {CUDA_ERROR_NOT_PERMITTED, "CUDA_ERROR_NOT_PERMITTED", "operation not permitted"},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {802, "CUDA_ERROR_SYSTEM_NOT_READY", "system not yet initialized"},
    {909, "CUDA_ERROR_TIMEOUT", "timeout"},
    {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

/* Unknown codes: CUDA_ERROR_INVALID_VALUE and *out = NULL, as the real driver answers. */
static CUresult error_lookup(CUresult error, const char **out, int want_name) {
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        if (errors[i].code == error) {
            *out = want_name ? errors[i].name : errors[i].text;
            return CUDA_SUCCESS;
        }
    *out = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuGetErrorName(CUresult error, const char **name) {
    int fault = fake_fault("cuGetErrorName");
    if (fault) return (CUresult)fault;
    return error_lookup(error, name, 1);
}

EXPORT CUresult cuGetErrorString(CUresult error, const char **text) {
    int fault = fake_fault("cuGetErrorString");
    if (fault) return (CUresult)fault;
    return error_lookup(error, text, 0);
}

ENTRY(cuDeviceGetCount, (int *count), (count)) {
    if (!count) return CUDA_ERROR_INVALID_VALUE;
    *count = device_count;
    return CUDA_SUCCESS;
}

ENTRY(cuDeviceGet, (CUdevice *device, int ordinal), (device, ordinal)) {
    if (!device) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(ordinal)) return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
}

ENTRY(cuDeviceGetName, (char *name, int len, CUdevice dev), (name, len, dev)) {
    if (!name || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    snprintf(name, (size_t)len, "NVIDIA H200");
    return CUDA_SUCCESS;
}

ENTRY(cuDeviceGetUuid, (CUuuid *uuid, CUdevice dev), (uuid, dev)) {
    if (!uuid) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    unsigned char bytes[16];
    fake_gpu_uuid(fake_config()->host, device_physical[dev], bytes);
    memcpy(uuid->bytes, bytes, 16);
    return CUDA_SUCCESS;
}

/* HGX H100/H200 boards put their eight GPUs on these buses; further GPUs go to further PCI domains.
 * The string has the runtime's shape, a 4-digit domain and upper-case hex ("0000:0E:00.0" as reported from
 * cudaDeviceGetPCIBusId), not NVML's 8-digit domain. */
static const int pci_buses[8] = {0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb};

ENTRY(cuDeviceGetPCIBusId, (char *pciBusId, int len, CUdevice dev), (pciBusId, len, dev)) {
    if (!pciBusId || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    int physical = device_physical[dev];
    snprintf(pciBusId, (size_t)len, "%04X:%02X:00.0", physical / 8, pci_buses[physical % 8]);
    return CUDA_SUCCESS;
}

ENTRY(cuDeviceGetAttribute, (int *pi, CUdevice_attribute attrib, CUdevice dev), (pi, attrib, dev)) {
    if (!pi) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    int physical = device_physical[dev];
    switch (attrib) {
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: *pi = pci_buses[physical % 8]; break;
    case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: *pi = 0; break;
    case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID: *pi = physical / 8; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *pi = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *pi = 0; break;
    /* Measured on the H200: VMM, POSIX fd and FABRIC handles supported, multicast not. */
    case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: *pi = 1; break;
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED: *pi = 1; break;
    case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED: *pi = 1; break;
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED: *pi = !fake_config()->no_fabric_handles[physical]; break;
    case CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED: *pi = 0; break;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

/* ---- contexts --------------------------------------------------------------------------------------- */

/* EXCLUSIVE_PROCESS across processes: the context's owner holds an OFD write lock on
 * <state dir>/exclusive-<host tag>-gpu<physical> while its context lives; the kernel drops it when the owner
 * closes it or dies. Returns the open descriptor, or -1 when another process holds the GPU (or no lock could be
 * taken: refusing is the safe answer for a mode that exists to keep a GPU to one process). */
static int take_exclusive(int physical) {
    if (fake_ensure_state_dir() != 0) return -1;
    char path[4200];
    snprintf(path, sizeof path, "%s/exclusive-%016llx-gpu%d", fake_config()->state_dir,
             (unsigned long long)host_tag(fake_config()->host), physical);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        fake_log("cannot open %s: %s; the context is refused", path, strerror(errno));
        return -1;
    }
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1, .l_pid = 0};
    if (fcntl(fd, F_OFD_SETLK, &fl) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

ENTRY(cuDevicePrimaryCtxRetain, (CUcontext *pctx, CUdevice dev), (pctx, dev)) {
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    if (contexts[dev].refs == 0) { /* under `lock`, as every ENTRY: this retain creates the context */
        int mode = fake_config()->compute_mode[device_physical[dev]];
        /* cuda.h, cuDevicePrimaryCtxRetain: "Retaining the primary context for the first time will fail with
         * CUDA_ERROR_UNKNOWN if the compute mode of the device is CU_COMPUTEMODE_PROHIBITED". */
        if (mode == 2) return CUDA_ERROR_UNKNOWN;
        if (mode == 3) {
            /* cuda.h, CUDA_ERROR_DEVICE_UNAVAILABLE (46): "requested CUDA device is unavailable at the current
             * time. Devices are often unavailable due to use of CU_COMPUTEMODE_EXCLUSIVE_PROCESS or ..." */
            int fd = take_exclusive(device_physical[dev]);
            if (fd < 0) return CUDA_ERROR_DEVICE_UNAVAILABLE;
            contexts[dev].exclusive_fd = fd;
        }
        context_creations++;
        context_log("create", dev);
    }
    contexts[dev].refs++;
    *pctx = &contexts[dev];
    return CUDA_SUCCESS;
}

ENTRY(cuDevicePrimaryCtxRelease, (CUdevice dev), (dev)) {
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    CUresult rc = contexts[dev].refs == 0 ? CUDA_ERROR_INVALID_CONTEXT : CUDA_SUCCESS;
    if (rc == CUDA_SUCCESS && --contexts[dev].refs == 0) {
        context_log("destroy", dev);
        free_host_allocs(dev);
        free_modules(dev);
        if (contexts[dev].exclusive_fd >= 0) {
            close(contexts[dev].exclusive_fd); /* drops the lock: another process may now make its context */
            contexts[dev].exclusive_fd = -1;
        }
    }
    return rc;
}

ENTRY(cuCtxSetCurrent, (CUcontext ctx), (ctx)) {
    if (ctx == NULL) { /* NULL unbinds, as in the real API */
        current_ctx = NULL;
        return CUDA_SUCCESS;
    }
    /* Compare addresses only: a foreign pointer is never dereferenced. */
    for (int i = 0; i < device_count; i++)
        if (ctx == &contexts[i]) {
            if (contexts[i].refs == 0) return CUDA_ERROR_INVALID_CONTEXT;
            current_ctx = ctx;
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_INVALID_CONTEXT;
}

ENTRY(cuCtxSynchronize, (void), ()) {
    return current_ordinal() < 0 ? CUDA_ERROR_INVALID_CONTEXT : CUDA_SUCCESS;
}

/* ---- memory ----------------------------------------------------------------------------------------- */

ENTRY(cuMemGetInfo, (size_t *free, size_t *total), (free, total)) {
    if (!free || !total) return CUDA_ERROR_INVALID_VALUE;
    if (current_ordinal() < 0) return CUDA_ERROR_INVALID_CONTEXT;
    unsigned long long others = fake_config()->memory_used_mib[device_physical[current_ordinal()]] << 20;
    *total = TOTAL_MEMORY;
    *free = others + created_bytes > TOTAL_MEMORY ? 0 : TOTAL_MEMORY - others - created_bytes;
    return CUDA_SUCCESS;
}

/* PINNED on a visible device; INVALID_DEVICE for a bad ordinal, INVALID_VALUE for the rest. */
static CUresult check_prop(const CUmemAllocationProp *prop) {
    if (!prop || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED || prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(prop->location.id)) return CUDA_ERROR_INVALID_DEVICE;
    return CUDA_SUCCESS;
}

ENTRY(cuMemGetAllocationGranularity,
      (size_t *granularity, const CUmemAllocationProp *prop, CUmemAllocationGranularity_flags option),
      (granularity, prop, option)) {
    if (!granularity) return CUDA_ERROR_INVALID_VALUE;
    if (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM && option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = check_prop(prop);
    if (rc != CUDA_SUCCESS) return rc;
    *granularity = GRANULARITY;
    return CUDA_SUCCESS;
}

ENTRY(cuMemCreate, (CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop,
                    unsigned long long flags),
      (handle, size, prop, flags)) {
    if (!handle || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    if (current_ordinal() < 0) return CUDA_ERROR_INVALID_CONTEXT;
    CUresult rc = check_prop(prop);
    if (rc != CUDA_SUCCESS) return rc;
    unsigned int types = (unsigned int)prop->requestedHandleTypes;
    if (types & ~(unsigned int)(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR | CU_MEM_HANDLE_TYPE_FABRIC))
        return CUDA_ERROR_INVALID_VALUE;
    if (size == 0 || size % GRANULARITY != 0) return CUDA_ERROR_INVALID_VALUE;
    int channel = -1;
    if (types & CU_MEM_HANDLE_TYPE_FABRIC) {
        /* gpu.N.handle_type_fabric=0, model, not measured (no such GPU was lent): 801, the code NCCL's allocator
         * takes, with 800, for "no FABRIC here" before it falls back to POSIX fd handles. */
        if (fake_config()->no_fabric_handles[device_physical[prop->location.id]]) return CUDA_ERROR_NOT_SUPPORTED;
        /* Measured: FABRIC without an IMEX channel is 800; with several, the lowest is the one bound. */
        channel = fake_lowest_channel();
        if (channel < 0) return CUDA_ERROR_NOT_PERMITTED;
    }
    const struct fake_config *c = fake_config();
    int physical = device_physical[prop->location.id];
    /* Measured on an H100 beside a job holding all but 8 (and 64) MiB: the primary context is still retained, and
     * cuMemCreate(2 MiB) returns 2 (docs/gpu-validation.md, 2026-12-07, twenty-fifth session). So what other
     * processes hold (gpu.N.memory_used_mib) counts here, and not at the context's retain. */
    unsigned long long others = c->memory_used_mib[physical] << 20;
    if (others > TOTAL_MEMORY || size > TOTAL_MEMORY - others - created_bytes) return CUDA_ERROR_OUT_OF_MEMORY;
    if (fake_ensure_state_dir() != 0) return CUDA_ERROR_OUT_OF_MEMORY;

    struct alloc_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, ALLOC_MAGIC, sizeof h.magic);
    if (fake_random(h.file_id, sizeof h.file_id) != 0 || fake_random(h.secret, sizeof h.secret) != 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    snprintf(h.host, sizeof h.host, "%s", c->host);
    boot_id(h.boot_id);
    h.owner_pid = (int32_t)getpid();
    h.owner_start = process_start(getpid());
    h.owner_pidns = pid_namespace();
    h.size = size;
    h.gpu = physical;
    h.channel = channel;
    h.handle_types = types;
    h.fabric_state = c->fabric[physical].state;
    h.fabric_status = c->fabric[physical].status;
    h.fabric_clique = c->fabric[physical].clique;
    memcpy(h.fabric_cluster, c->fabric[physical].cluster, 16);
    snprintf(h.imex_domain, sizeof h.imex_domain, "%s", c->imex_domain);

    int fd = write_alloc_file(&h, 1);
    if (fd < 0) fd = write_alloc_file(&h, 0);
    if (fd < 0) {
        fake_log("cannot create an allocation file in %s: %s", c->state_dir, strerror(errno));
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    rc = add_alloc(fd, 1, &h, handle);
    if (rc != CUDA_SUCCESS) {
        char name[48], path[4200];
        file_name(h.file_id, name);
        file_path(name, path, sizeof path);
        unlink(path);
        close(fd);
    }
    return rc;
}

ENTRY(cuMemRelease, (CUmemGenericAllocationHandle handle), (handle)) {
    if (current_ordinal() < 0) return CUDA_ERROR_INVALID_CONTEXT;
    struct alloc **link = &allocs;
    while (*link && (*link)->id != handle) link = &(*link)->next;
    struct alloc *a = *link;
    if (!a) return CUDA_ERROR_INVALID_VALUE;
    *link = a->next;
    if (a->owned) {
        /* Gone for new importers (measured: a released handle imports as 801); existing mappings, here and
         * in importers, keep the memory, as the driver keeps it while mapped. */
        char name[48], path[4200];
        file_name(a->hdr.file_id, name);
        file_path(name, path, sizeof path);
        unlink(path);
        created_bytes -= a->hdr.size;
    }
    close(a->fd);
    free(a);
    return CUDA_SUCCESS;
}

ENTRY(cuMemExportToShareableHandle, (void *shareableHandle, CUmemGenericAllocationHandle handle,
                                     CUmemAllocationHandleType handleType, unsigned long long flags),
      (shareableHandle, handle, handleType, flags)) {
    if (!shareableHandle || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    if (current_ordinal() < 0) return CUDA_ERROR_INVALID_CONTEXT;
    struct alloc *a = find_alloc(handle);
    if (!a) return CUDA_ERROR_INVALID_VALUE;
    /* Only a type requested at cuMemCreate can be exported (model: the code is not measured). */
    if (handleType != CU_MEM_HANDLE_TYPE_FABRIC && handleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
        return CUDA_ERROR_INVALID_VALUE;
    if (!(a->hdr.handle_types & (unsigned int)handleType)) return CUDA_ERROR_INVALID_VALUE;
    if (handleType == CU_MEM_HANDLE_TYPE_FABRIC) {
        wire_from_header(&a->hdr, (CUmemFabricHandle *)shareableHandle);
        return CUDA_SUCCESS;
    }
    int fd = reopen(a);
    if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
    *(int *)shareableHandle = fd;
    return CUDA_SUCCESS;
}

/* Both GPUs registered in one NVLink fabric (state COMPLETED, status success, same cluster and clique).
 * Model, not measured: the H200 host had no fabric. */
static int same_fabric(const struct alloc_header *h, int importer_physical) {
    const struct fake_fabric *mine = &fake_config()->fabric[importer_physical];
    return h->fabric_state == 3 && h->fabric_status == 0 && mine->state == 3 && mine->status == 0 &&
           h->fabric_clique == mine->clique && memcmp(h->fabric_cluster, mine->cluster, 16) == 0;
}

/* Another host's export imports only within one IMEX domain. With imex.domain set on either host, that decides:
 * the same name imports (even across cliques: two domains that should be apart but are not), another name is
 * 801 (even within one clique: a clique split into two IMEX daemon ensembles, DRA driver issue #892). Unset on
 * both, the NVLink fabric decides (same_fabric). Model, not measured. */
static int same_imex_domain(const struct alloc_header *h, int importer_physical) {
    const char *mine = fake_config()->imex_domain;
    if (mine[0] != '\0' || h->imex_domain[0] != '\0')
        return strncmp(mine, h->imex_domain, FAKE_HOST_MAX) == 0;
    return same_fabric(h, importer_physical);
}

/* 1 when physical GPU `physical` has its device node in this process's view (FAKECUDA_DEV_DIR), whatever
 * CUDA_VISIBLE_DEVICES says. */
static int gpu_node_present(int physical) {
    int present[FAKE_MAX_GPUS];
    int n = fake_present_gpus(present);
    for (int i = 0; i < n; i++)
        if (present[i] == physical) return 1;
    return 0;
}

static CUresult import_fabric(const CUmemFabricHandle *handle, CUmemGenericAllocationHandle *out) {
    /* An importing GPU that cannot take FABRIC handles: 801, model, not measured (as cuMemCreate above). */
    if (fake_config()->no_fabric_handles[device_physical[current_ordinal()]]) return CUDA_ERROR_NOT_SUPPORTED;
    /* Measured: an importer without any IMEX channel gets 800. */
    if (fake_lowest_channel() < 0) return CUDA_ERROR_NOT_PERMITTED;
    struct fabric_wire w;
    memcpy(&w, handle->data, sizeof w);
    /* Measured: garbled, unknown, released handles and handles of exited exporters are 801. */
    if (memcmp(w.magic, "FKH1", 4) != 0) return CUDA_ERROR_NOT_SUPPORTED;
    char name[48], path[4200];
    file_name(w.file_id, name);
    file_path(name, path, sizeof path);
    int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return CUDA_ERROR_NOT_SUPPORTED;
    struct alloc_header h;
    CUmemFabricHandle expected;
    CUresult rc = CUDA_SUCCESS;
    if (read_header(fd, &h) != 0 || !(h.handle_types & CU_MEM_HANDLE_TYPE_FABRIC)) {
        rc = CUDA_ERROR_NOT_SUPPORTED;
    } else {
        wire_from_header(&h, &expected);
        if (!same_bytes(expected.data, handle->data, sizeof expected.data)) {
            rc = CUDA_ERROR_NOT_SUPPORTED;
        } else if (owner_dead(fd, &h)) {
            if (same_host(&h)) unlink(path);
            rc = CUDA_ERROR_NOT_SUPPORTED;
        } else if (!fake_has_channel(h.channel)) {
            /* Measured: the importer needs the channel the export is bound to, whatever else it holds. */
            rc = CUDA_ERROR_NOT_PERMITTED;
        } else if (same_host(&h)) {
            /* Measured on two H200s (driver 580.159.04): a same-host import goes through the exporter's GPU, and
             * fails with 801 when that GPU's device node is hidden from the importer; CUDA_VISIBLE_DEVICES alone
             * does not matter. */
            if (!gpu_node_present(h.gpu)) rc = CUDA_ERROR_NOT_SUPPORTED;
        } else if (!same_imex_domain(&h, device_physical[current_ordinal()])) {
            rc = CUDA_ERROR_NOT_SUPPORTED;
        }
    }
    if (rc == CUDA_SUCCESS) rc = add_alloc(fd, 0, &h, out);
    if (rc != CUDA_SUCCESS) close(fd);
    return rc;
}

/* A POSIX fd names the allocation file itself and keeps it alive, like a real fd keeps the memory. */
static CUresult import_fd(int shared, CUmemGenericAllocationHandle *out) {
    struct alloc_header h;
    if (shared < 0 || read_header(shared, &h) != 0 || !(h.handle_types & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
        return CUDA_ERROR_INVALID_VALUE;
    if (!same_host(&h)) return CUDA_ERROR_NOT_SUPPORTED; /* an fd cannot come from another host */
    /* Measured on two H200s: with the exporter GPU's device node hidden, a POSIX_FD import is 101. */
    if (!gpu_node_present(h.gpu)) return CUDA_ERROR_INVALID_DEVICE;
    int fd = fcntl(shared, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult rc = add_alloc(fd, 0, &h, out);
    if (rc != CUDA_SUCCESS) close(fd);
    return rc;
}

ENTRY(cuMemImportFromShareableHandle,
      (CUmemGenericAllocationHandle *handle, void *osHandle, CUmemAllocationHandleType shHandleType),
      (handle, osHandle, shHandleType)) {
    if (!handle) return CUDA_ERROR_INVALID_VALUE;
    if (current_ordinal() < 0) return CUDA_ERROR_INVALID_CONTEXT;
    if (shHandleType == CU_MEM_HANDLE_TYPE_FABRIC) {
        if (!osHandle) return CUDA_ERROR_INVALID_VALUE;
        return import_fabric((const CUmemFabricHandle *)osHandle, handle);
    }
    if (shHandleType == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) return import_fd((int)(intptr_t)osHandle, handle);
    return CUDA_ERROR_INVALID_VALUE;
}

ENTRY(cuMemAddressReserve,
      (CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr, unsigned long long flags),
      (ptr, size, alignment, addr, flags)) {
    (void)addr; /* a hint the real driver may ignore too */
    if (!ptr || flags != 0 || size == 0 || size % GRANULARITY != 0) return CUDA_ERROR_INVALID_VALUE;
    if (current_ordinal() < 0) return CUDA_ERROR_INVALID_CONTEXT;
    if (alignment & (alignment - 1)) return CUDA_ERROR_INVALID_VALUE;
    if (alignment < GRANULARITY) alignment = GRANULARITY;
    if (size > SIZE_MAX - alignment) return CUDA_ERROR_OUT_OF_MEMORY;
    struct reservation *r = calloc(1, sizeof *r);
    if (!r) return CUDA_ERROR_OUT_OF_MEMORY;
    /* Over-reserve, then trim to the aligned part: mmap itself only aligns to a page. */
    size_t span = size + alignment;
    void *raw = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == MAP_FAILED) {
        free(r);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    uintptr_t start = (uintptr_t)raw, base = (start + alignment - 1) & ~(uintptr_t)(alignment - 1);
    if (base > start) munmap(raw, base - start);
    if (start + span > base + size) munmap((void *)(base + size), start + span - (base + size));
    r->base = base;
    r->size = size;
    r->next = reservations;
    reservations = r;
    *ptr = (CUdeviceptr)base;
    return CUDA_SUCCESS;
}

ENTRY(cuMemAddressFree, (CUdeviceptr ptr, size_t size), (ptr, size)) {
    if (current_ordinal() < 0) return CUDA_ERROR_INVALID_CONTEXT;
    struct reservation **link = &reservations;
    while (*link && (*link)->base != (uintptr_t)ptr) link = &(*link)->next;
    struct reservation *r = *link;
    /* The size must be the reserved one and nothing may still be mapped there. */
    if (!r || r->size != size || r->maps) return CUDA_ERROR_INVALID_VALUE;
    *link = r->next;
    munmap((void *)r->base, r->size);
    free(r);
    return CUDA_SUCCESS;
}

ENTRY(cuMemMap, (CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                 unsigned long long flags),
      (ptr, size, offset, handle, flags)) {
    if (current_ordinal() < 0) return CUDA_ERROR_INVALID_CONTEXT;
    /* cuda.h: offset must currently be zero, flags zero; the range lies in one reservation, unmapped. */
    if (offset != 0 || flags != 0 || size == 0 || size % GRANULARITY != 0 || ptr % GRANULARITY != 0)
        return CUDA_ERROR_INVALID_VALUE;
    struct alloc *a = find_alloc(handle);
    if (!a || size > a->hdr.size) return CUDA_ERROR_INVALID_VALUE;
    uintptr_t addr = (uintptr_t)ptr;
    struct reservation *r = reservation_containing(addr, size);
    if (!r) return CUDA_ERROR_INVALID_VALUE;
    for (struct mapping *m = r->maps; m; m = m->next)
        if (addr < m->addr + m->size && m->addr < addr + size) return CUDA_ERROR_INVALID_VALUE;
    struct mapping *m = calloc(1, sizeof *m);
    if (!m) return CUDA_ERROR_OUT_OF_MEMORY;
    /* No access until cuMemSetAccess, as on the device. */
    if (mmap((void *)addr, size, PROT_NONE, MAP_SHARED | MAP_FIXED, a->fd, HEADER_SIZE) == MAP_FAILED) {
        make_reserved(addr, size);
        free(m);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    m->addr = addr;
    m->size = size;
    m->next = r->maps;
    r->maps = m;
    return CUDA_SUCCESS;
}

ENTRY(cuMemUnmap, (CUdeviceptr ptr, size_t size), (ptr, size)) {
    if (current_ordinal() < 0) return CUDA_ERROR_INVALID_CONTEXT;
    uintptr_t start = (uintptr_t)ptr;
    if (!whole_mappings(start, size)) return CUDA_ERROR_INVALID_VALUE;
    struct reservation *r = NULL;
    mapping_at(start, &r);
    for (struct mapping **link = &r->maps; *link;) {
        struct mapping *m = *link;
        if (m->addr >= start && m->addr - start < size) {
            make_reserved(m->addr, m->size);
            *link = m->next;
            free(m);
        } else {
            link = &m->next;
        }
    }
    return CUDA_SUCCESS;
}

ENTRY(cuMemSetAccess, (CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count),
      (ptr, size, desc, count)) {
    if (current_ordinal() < 0) return CUDA_ERROR_INVALID_CONTEXT;
    uintptr_t start = (uintptr_t)ptr;
    if (!desc || count == 0 || !whole_mappings(start, size)) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < count; i++) {
        if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE) return CUDA_ERROR_INVALID_VALUE;
        if (!valid_device(desc[i].location.id)) return CUDA_ERROR_INVALID_DEVICE;
        if (desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_NONE && desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READ &&
            desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
            return CUDA_ERROR_INVALID_VALUE;
    }
    for (uintptr_t cursor = start; cursor < start + size;) {
        struct mapping *m = mapping_at(cursor, NULL);
        for (size_t i = 0; i < count; i++) m->access[desc[i].location.id] = (unsigned char)desc[i].flags;
        if (mprotect((void *)m->addr, m->size, mapping_prot(m)) != 0) return CUDA_ERROR_OUT_OF_MEMORY;
        cursor = m->addr + m->size;
    }
    return CUDA_SUCCESS;
}

ENTRY(cuMemcpyHtoD, (CUdeviceptr dst, const void *src, size_t bytes), (dst, src, bytes)) {
    int ordinal = current_ordinal();
    if (ordinal < 0) return CUDA_ERROR_INVALID_CONTEXT;
    if (bytes == 0) return CUDA_SUCCESS;
    if (!src || !range_accessible((uintptr_t)dst, bytes, ordinal, CU_MEM_ACCESS_FLAGS_PROT_READWRITE))
        return CUDA_ERROR_INVALID_VALUE;
    return host_copy((void *)(uintptr_t)dst, src, bytes) == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

ENTRY(cuMemcpyDtoH, (void *dst, CUdeviceptr src, size_t bytes), (dst, src, bytes)) {
    int ordinal = current_ordinal();
    if (ordinal < 0) return CUDA_ERROR_INVALID_CONTEXT;
    if (bytes == 0) return CUDA_SUCCESS;
    if (!dst || !range_accessible((uintptr_t)src, bytes, ordinal, CU_MEM_ACCESS_FLAGS_PROT_READ))
        return CUDA_ERROR_INVALID_VALUE;
    return host_copy(dst, (const void *)(uintptr_t)src, bytes) == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static int valid_stream(CUstream stream) {
    if (stream == NULL) return 1; /* the legacy default stream */
    for (struct CUstream_st *s = streams; s; s = s->next)
        if (s == stream) return 1;
    return 0;
}

/* As cuMemcpyDtoH, on a stream: the fake copies at once (model, not measured: on a GPU the copy engine runs it
 * beside the stream's other work, and it has landed at the next synchronisation). */
ENTRY(cuMemcpyDtoHAsync, (void *dst, CUdeviceptr src, size_t bytes, CUstream stream), (dst, src, bytes, stream)) {
    int ordinal = current_ordinal();
    if (ordinal < 0) return CUDA_ERROR_INVALID_CONTEXT;
    if (!valid_stream(stream)) return CUDA_ERROR_INVALID_HANDLE;
    if (bytes == 0) return CUDA_SUCCESS;
    if (!dst || !range_accessible((uintptr_t)src, bytes, ordinal, CU_MEM_ACCESS_FLAGS_PROT_READ))
        return CUDA_ERROR_INVALID_VALUE;
    return host_copy(dst, (const void *)(uintptr_t)src, bytes) == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* cuda.h: flags are CU_MEMHOSTALLOC_PORTABLE (1), DEVICEMAP (2), WRITECOMBINED (4). The fake copies from any
 * host memory alike; what this models is the ownership (a current context, freed with it) and the errors. */
ENTRY(cuMemHostAlloc, (void **pp, size_t bytesize, unsigned int flags), (pp, bytesize, flags)) {
    int ordinal = current_ordinal();
    if (ordinal < 0) return CUDA_ERROR_INVALID_CONTEXT;
    if (!pp || bytesize == 0 || (flags & ~7u) != 0) return CUDA_ERROR_INVALID_VALUE;
    struct host_alloc *h = calloc(1, sizeof *h);
    void *p = h ? malloc(bytesize) : NULL;
    if (!p) {
        free(h);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    h->p = p;
    h->bytes = bytesize;
    h->ordinal = ordinal;
    h->next = host_allocs;
    host_allocs = h;
    *pp = p;
    return CUDA_SUCCESS;
}

ENTRY(cuMemFreeHost, (void *p), (p)) {
    if (current_ordinal() < 0) return CUDA_ERROR_INVALID_CONTEXT;
    for (struct host_alloc **h = &host_allocs; *h; h = &(*h)->next)
        if ((*h)->p == p) {
            struct host_alloc *dead = *h;
            *h = dead->next;
            free(dead->p);
            free(dead);
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_INVALID_VALUE;
}

static struct CUmod_st *find_module(CUmodule m) {
    for (struct CUmod_st *x = modules; x; x = x->next)
        if (x == m) return x;
    return NULL;
}

ENTRY(cuModuleLoadData, (CUmodule *module, const void *image), (module, image)) {
    int ordinal = current_ordinal();
    if (ordinal < 0) return CUDA_ERROR_INVALID_CONTEXT;
    if (!module || !image) return CUDA_ERROR_INVALID_VALUE;
    const char *text = image;
    if (!strstr(text, ".version") || !strstr(text, ".entry")) return CUDA_ERROR_INVALID_IMAGE;
    struct CUmod_st *m = calloc(1, sizeof *m);
    if (!m) return CUDA_ERROR_OUT_OF_MEMORY;
    m->ordinal = ordinal;
    m->has_fill = strstr(text, ".entry imexprobe_pattern_fill(") != NULL;
    m->has_compare = strstr(text, ".entry imexprobe_pattern_compare(") != NULL;
    m->next = modules;
    modules = m;
    *module = m;
    return CUDA_SUCCESS;
}

ENTRY(cuModuleUnload, (CUmodule hmod), (hmod)) {
    struct CUmod_st *m = find_module(hmod);
    if (!m) return CUDA_ERROR_INVALID_HANDLE;
    for (struct CUmod_st **x = &modules; *x; x = &(*x)->next)
        if (*x == m) {
            *x = m->next;
            break;
        }
    for (size_t i = 0; i < FUNCTION_SLOTS; i++) {
        if (fill_functions[i].module == m) fill_functions[i].module = NULL;
        if (compare_functions[i].module == m) compare_functions[i].module = NULL;
    }
    free(m);
    return CUDA_SUCCESS;
}

ENTRY(cuModuleGetFunction, (CUfunction *hfunc, CUmodule hmod, const char *name), (hfunc, hmod, name)) {
    if (!hfunc || !name) return CUDA_ERROR_INVALID_VALUE;
    struct CUmod_st *m = find_module(hmod);
    if (!m) return CUDA_ERROR_INVALID_HANDLE;
    int compare = strcmp(name, "imexprobe_pattern_compare") == 0;
    if (compare ? !m->has_compare : !m->has_fill || strcmp(name, "imexprobe_pattern_fill") != 0)
        return CUDA_ERROR_NOT_FOUND;
    struct CUfunc_st *slots = compare ? compare_functions : fill_functions;
    for (size_t i = 0; i < FUNCTION_SLOTS; i++)
        if (slots[i].module == m || slots[i].module == NULL) {
            slots[i].module = m;
            *hfunc = &slots[i];
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_OUT_OF_MEMORY;
}

static int function_in(CUfunction f, struct CUfunc_st *slots) {
    return (uintptr_t)f >= (uintptr_t)slots && (uintptr_t)f < (uintptr_t)(slots + FUNCTION_SLOTS);
}

/* cuda.h: a launch with a block of more than 1024 threads or an empty grid is CUDA_ERROR_INVALID_VALUE. A kernel
 * runs at once (the fake has no streams to order work on); a range the context may not write (the fill) or read
 * (the compare) is CUDA_ERROR_ILLEGAL_ADDRESS, which a GPU reports at the next synchronisation instead (model, not
 * measured). Besides cuLaunchKernel, each kernel's name is an entry point for faults (imexprobe_pattern_fill,
 * imexprobe_pattern_compare), so that a test can fail or slow one kernel and not the other. */
static int launch_fault(CUfunction f) {
    int fault = fake_fault("cuLaunchKernel");
    if (!fault && function_in(f, compare_functions)) fault = fake_fault("imexprobe_pattern_compare");
    if (!fault && function_in(f, fill_functions)) fault = fake_fault("imexprobe_pattern_fill");
    return fault;
}

ENTRY_FAULT(cuLaunchKernel, launch_fault(f),
            (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx, unsigned int by,
             unsigned int bz, unsigned int shared, CUstream stream, void **params, void **extra),
            (f, gx, gy, gz, bx, by, bz, shared, stream, params, extra)) {
    int ordinal = current_ordinal();
    if (ordinal < 0) return CUDA_ERROR_INVALID_CONTEXT;
    int compare = function_in(f, compare_functions);
    struct CUfunc_st *fn = compare || function_in(f, fill_functions) ? f : NULL;
    if (!fn || !fn->module) return CUDA_ERROR_INVALID_HANDLE;
    if (fn->module->ordinal != ordinal) return CUDA_ERROR_INVALID_CONTEXT;
    if (!valid_stream(stream)) return CUDA_ERROR_INVALID_HANDLE;
    if (gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0 || (unsigned long long)bx * by * bz > 1024 ||
        !params || extra)
        return CUDA_ERROR_INVALID_VALUE;
    CUdeviceptr ptr = *(CUdeviceptr *)params[0];
    unsigned long long words = *(unsigned long long *)params[1], seed = *(unsigned long long *)params[2],
                       first = *(unsigned long long *)params[3];
    if (words == 0) return CUDA_SUCCESS;
    if (compare) {
        /* The answer must be page-locked memory of this process, one word per block (what a GPU could write). */
        uint64_t *answer = *(uint64_t **)params[4];
        int reachable = 0;
        for (struct host_alloc *h = host_allocs; h; h = h->next)
            if ((char *)answer >= (char *)h->p && (size_t)((char *)answer - (char *)h->p) + (size_t)gx * 8 <= h->bytes)
                reachable = 1;
        if (!reachable || words > SIZE_MAX / 8 ||
            !range_accessible((uintptr_t)ptr, words * 8, ordinal, CU_MEM_ACCESS_FLAGS_PROT_READ))
            return CUDA_ERROR_ILLEGAL_ADDRESS;
        size_t bad = pattern_first_mismatch((const uint64_t *)(uintptr_t)ptr, words, seed, first);
        for (unsigned int b = 0; b < gx; b++) answer[b] = ~0ULL;
        if (bad < words) answer[(bad % ((size_t)gx * bx)) / bx] = bad; /* the block whose share holds the word */
        return CUDA_SUCCESS;
    }
    if (words > SIZE_MAX / 8 || !range_accessible((uintptr_t)ptr, words * 8, ordinal, CU_MEM_ACCESS_FLAGS_PROT_READWRITE))
        return CUDA_ERROR_ILLEGAL_ADDRESS;
    pattern_fill((uint64_t *)(uintptr_t)ptr, words, seed, first);
    return CUDA_SUCCESS;
}

ENTRY(cuMemcpyDtoDAsync, (CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream),
      (dst, src, bytes, stream)) {
    int ordinal = current_ordinal();
    if (ordinal < 0) return CUDA_ERROR_INVALID_CONTEXT;
    if (!valid_stream(stream)) return CUDA_ERROR_INVALID_HANDLE;
    if (bytes == 0) return CUDA_SUCCESS;
    if (!range_accessible((uintptr_t)src, bytes, ordinal, CU_MEM_ACCESS_FLAGS_PROT_READ) ||
        !range_accessible((uintptr_t)dst, bytes, ordinal, CU_MEM_ACCESS_FLAGS_PROT_READWRITE))
        return CUDA_ERROR_INVALID_VALUE;
    /* Both ranges are checked mappings with the right protection: a plain copy cannot fault. Synchronous. */
    memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, bytes);
    return CUDA_SUCCESS;
}

/* ---- streams and events (copies are synchronous, so these only keep time) --------------------------- */

ENTRY(cuStreamCreate, (CUstream *stream, unsigned int flags), (stream, flags)) {
    if (!stream || (flags & ~(unsigned int)CU_STREAM_NON_BLOCKING)) return CUDA_ERROR_INVALID_VALUE;
    if (current_ordinal() < 0) return CUDA_ERROR_INVALID_CONTEXT;
    struct CUstream_st *s = calloc(1, sizeof *s);
    if (!s) return CUDA_ERROR_OUT_OF_MEMORY;
    s->next = streams;
    streams = s;
    *stream = s;
    return CUDA_SUCCESS;
}

ENTRY(cuStreamDestroy, (CUstream stream), (stream)) {
    struct CUstream_st **link = &streams;
    while (*link && *link != stream) link = &(*link)->next;
    if (!stream || !*link) return CUDA_ERROR_INVALID_HANDLE;
    *link = stream->next;
    free(stream);
    return CUDA_SUCCESS;
}

ENTRY(cuStreamSynchronize, (CUstream stream), (stream)) {
    if (!valid_stream(stream)) return CUDA_ERROR_INVALID_HANDLE;
    return current_ordinal() < 0 ? CUDA_ERROR_INVALID_CONTEXT : CUDA_SUCCESS;
}

static struct CUevent_st *find_event(CUevent event) {
    for (struct CUevent_st *e = events; e; e = e->next)
        if (e == event) return e;
    return NULL;
}

ENTRY(cuEventCreate, (CUevent *event, unsigned int flags), (event, flags)) {
    if (!event || (flags & ~(unsigned int)EVENT_FLAGS_KNOWN)) return CUDA_ERROR_INVALID_VALUE;
    if (current_ordinal() < 0) return CUDA_ERROR_INVALID_CONTEXT;
    struct CUevent_st *e = calloc(1, sizeof *e);
    if (!e) return CUDA_ERROR_OUT_OF_MEMORY;
    e->flags = flags;
    e->next = events;
    events = e;
    *event = e;
    return CUDA_SUCCESS;
}

ENTRY(cuEventDestroy, (CUevent event), (event)) {
    struct CUevent_st **link = &events;
    while (*link && *link != event) link = &(*link)->next;
    if (!event || !*link) return CUDA_ERROR_INVALID_HANDLE;
    *link = event->next;
    free(event);
    return CUDA_SUCCESS;
}

ENTRY(cuEventRecord, (CUevent event, CUstream stream), (event, stream)) {
    struct CUevent_st *e = find_event(event);
    if (!e || !valid_stream(stream)) return CUDA_ERROR_INVALID_HANDLE;
    clock_gettime(CLOCK_MONOTONIC, &e->when);
    e->recorded = 1;
    return CUDA_SUCCESS;
}

ENTRY(cuEventSynchronize, (CUevent event), (event)) {
    return find_event(event) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

ENTRY(cuEventElapsedTime, (float *ms, CUevent start, CUevent end), (ms, start, end)) {
    if (!ms) return CUDA_ERROR_INVALID_VALUE;
    struct CUevent_st *a = find_event(start), *b = find_event(end);
    /* cuda.h: unrecorded events or events without timing give INVALID_HANDLE. */
    if (!a || !b || !a->recorded || !b->recorded || ((a->flags | b->flags) & EVENT_DISABLE_TIMING))
        return CUDA_ERROR_INVALID_HANDLE;
    double ns = (double)(b->when.tv_sec - a->when.tv_sec) * 1e9 + (double)(b->when.tv_nsec - a->when.tv_nsec);
    *ms = (float)(ns / 1e6);
    return CUDA_SUCCESS;
}

/* ---- cuGetProcAddress ------------------------------------------------------------------------------- */

static CUresult get_proc_address(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                 CUdriverProcAddressQueryResult *symbolStatus);
static CUresult get_proc_address_v1(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags);

/* Base name, function, and the CUDA version that introduced the ABI we implement: the loader's own list. */
#define PROC(name, since, need) {#name, (void *)name, since},
static const struct {
    const char *name;
    void *fn;
    int since;
} procs[] = {
    /* cuDeviceGetPCIBusId at 4010, not 4000: the H200 driver answered VERSION_NOT_SUFFICIENT for 4000. */
    CUDA_ENTRY_POINTS(PROC)
};
#undef PROC

static CUresult get_proc_address(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                 CUdriverProcAddressQueryResult *symbolStatus) {
    int fault = fake_fault("cuGetProcAddress");
    if (fault) return (CUresult)fault;
    if (!symbol || !pfn || (flags & ~(cuuint64_t)PROC_ADDRESS_FLAGS_KNOWN)) return CUDA_ERROR_INVALID_VALUE;
    *pfn = NULL;
    /* cuda.h: a version above the driver's is INVALID_VALUE. */
    if (cudaVersion > DRIVER_VERSION) return CUDA_ERROR_INVALID_VALUE;
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    void *fn = NULL;
    if (strcmp(symbol, "cuGetProcAddress") == 0) {
        status = cudaVersion >= 11030 ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
        fn = cudaVersion >= 12000 ? (void *)get_proc_address : (void *)get_proc_address_v1;
    }
    for (size_t i = 0; i < sizeof procs / sizeof procs[0]; i++)
        if (strcmp(symbol, procs[i].name) == 0) {
            status = cudaVersion >= procs[i].since ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
            fn = procs[i].fn;
        }
    if (symbolStatus) *symbolStatus = status;
    if (status != CU_GET_PROC_ADDRESS_SUCCESS) return CUDA_ERROR_NOT_FOUND;
    *pfn = fn;
    return CUDA_SUCCESS;
}

static CUresult get_proc_address_v1(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags) {
    return get_proc_address(symbol, pfn, cudaVersion, flags, NULL);
}

EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                    CUdriverProcAddressQueryResult *symbolStatus) {
    return get_proc_address(symbol, pfn, cudaVersion, flags, symbolStatus);
}

EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags) {
    return get_proc_address(symbol, pfn, cudaVersion, flags, NULL);
}

/* ---- fakecudaInfo ----------------------------------------------------------------------------------- */

/* Not in the real libcuda: its presence (dlsym) is how the agent knows everything it reports is simulated. */
EXPORT const char *fakecudaInfo(void) {
    static _Thread_local char text[16384];
    const struct fake_config *c = fake_config();
    int allocations = 0, reserved = 0, mapped = 0, live_contexts = 0, host = 0;
    pthread_mutex_lock(&lock);
    for (struct host_alloc *h = host_allocs; h; h = h->next) host++;
    for (int i = 0; i < device_count; i++) live_contexts += contexts[i].refs > 0;
    int creations = context_creations;
    for (struct alloc *a = allocs; a; a = a->next) allocations++;
    for (struct reservation *r = reservations; r; r = r->next) {
        reserved++;
        for (struct mapping *m = r->maps; m; m = m->next) mapped++;
    }
    pthread_mutex_unlock(&lock);
    snprintf(text, sizeof text,
             "fake=1\nhost=%s\nchannelDir=%s\nstateDir=%s\ndevDir=%s\n"
             "liveAllocations=%d\nliveReservations=%d\nliveMappings=%d\nliveContexts=%d\ncontextCreations=%d\n"
             "liveHostAllocations=%d\n",
             c->host, c->channel_dir, c->state_dir, c->dev_dir, allocations, reserved, mapped,
             live_contexts, creations, host);
    return text;
}
