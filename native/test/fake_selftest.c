/*
 * Self-test of the fake driver (native/fake): loads the built libcuda.so.1 and libnvidia-ml.so.1 the way
 * the shim does (dlopen, cuGetProcAddress) in real fork()ed processes, one per role, and checks each rule
 * of native/fake/README.md. One line per check; exit status non-zero when any check fails or a child dies.
 *
 *   fake_selftest <directory holding libcuda.so.1 and libnvidia-ml.so.1>
 *
 * The parent never loads the fake: every child starts from a clean library state with its own environment
 * (CUDA_VISIBLE_DEVICES, FAKECUDA_*), as separate containers would. All files live under one mkdtemp root,
 * removed at the end.
 */
#include "cuda_abi.h"
#include "nvml_abi.h"
#include "../src/pattern.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The bad-host-pointer checks pass invalid pointers on purpose; under valgrind they would count as errors. */
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#ifndef VALGRIND_DISABLE_ERROR_REPORTING
#define VALGRIND_DISABLE_ERROR_REPORTING
#define VALGRIND_ENABLE_ERROR_REPORTING
#endif

#define MIB (1024UL * 1024UL)
#define TOTAL_MEMORY (143771UL * MIB)

/* ---- reporting -------------------------------------------------------------------------------------- */

static struct tally {
    int checks;
    int failed;
} *tally; /* shared with every child (MAP_SHARED) */
static char scenario[32] = "main";

static void vreport(int ok, int quiet, const char *fmt, va_list ap) {
    if (ok && quiet) return; /* a set-up step that worked is not a check of its own */
    __atomic_add_fetch(&tally->checks, 1, __ATOMIC_SEQ_CST);
    if (!ok) __atomic_add_fetch(&tally->failed, 1, __ATOMIC_SEQ_CST);
    char line[1024];
    int n = snprintf(line, sizeof line, "%s %-9s ", ok ? "ok  " : "FAIL", scenario);
    vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    size_t len = strlen(line);
    line[len++] = '\n';
    /* One write per line: children report concurrently. */
    ssize_t ignored = write(STDOUT_FILENO, line, len);
    (void)ignored;
}

static int check(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int check(int ok, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vreport(ok, 0, fmt, ap);
    va_end(ap);
    return ok;
}

/* Set-up steps: silent when they work, a failure like any other when they do not. */
static int require(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int require(int ok, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vreport(ok, 1, fmt, ap);
    va_end(ap);
    return ok;
}

#define EXPECT(call, want, ...)                                                                   \
    do {                                                                                          \
        int got_ = (int)(call);                                                                   \
        char what_[400];                                                                          \
        snprintf(what_, sizeof what_, __VA_ARGS__);                                               \
        if (got_ == (int)(want))                                                                  \
            check(1, "%s = %d", what_, got_);                                                     \
        else                                                                                      \
            check(0, "%s: got %d, want %d", what_, got_, (int)(want));                            \
    } while (0)

#define REQUIRE_OK(call) require((call) == 0, "%s:%d: %s", __FILE__, __LINE__, #call)

/* ---- the driver, as a child loads it ---------------------------------------------------------------- */

#define CUDA_FNS(X)                                                                                           \
    X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString) X(cuDeviceGetCount) X(cuDeviceGet)   \
    X(cuDeviceGetName) X(cuDeviceGetUuid) X(cuDeviceGetPCIBusId) X(cuDeviceGetAttribute)                       \
    X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent) X(cuCtxSynchronize)            \
    X(cuMemGetInfo) X(cuMemGetAllocationGranularity) X(cuMemCreate) X(cuMemRelease)                            \
    X(cuMemExportToShareableHandle) X(cuMemImportFromShareableHandle) X(cuMemAddressReserve)                   \
    X(cuMemAddressFree) X(cuMemMap) X(cuMemUnmap) X(cuMemSetAccess) X(cuMemcpyHtoD) X(cuMemcpyDtoH)            \
    X(cuMemHostAlloc) X(cuMemFreeHost) X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction)           \
    X(cuLaunchKernel) X(cuMemcpyDtoDAsync) X(cuMemcpyDtoHAsync) X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamSynchronize) X(cuEventCreate)          \
    X(cuEventDestroy) X(cuEventRecord) X(cuEventSynchronize) X(cuEventElapsedTime)

#define NVML_FNS(X)                                                                                         \
    X(nvmlInit_v2) X(nvmlShutdown) X(nvmlErrorString) X(nvmlSystemGetDriverVersion) X(nvmlDeviceGetCount_v2) \
    X(nvmlDeviceGetHandleByIndex_v2) X(nvmlDeviceGetHandleByUUID) X(nvmlDeviceGetUUID)                       \
    X(nvmlDeviceGetGpuFabricInfoV) X(nvmlDeviceGetGpuFabricInfo) X(nvmlDeviceGetComputeMode)                \
    X(nvmlDeviceGetMigMode) X(nvmlDeviceGetMemoryInfo)

static const char *fake_dir;
static struct {
    void *cuda_lib;
    void *nvml_lib;
    PFN_cuGetProcAddress_v2 getProc;
    PFN_cuGetProcAddress_v1 getProcV1;
    const char *(*info)(void);
#define DECLARE(name) PFN_##name name;
    CUDA_FNS(DECLARE) NVML_FNS(DECLARE)
#undef DECLARE
} d;

/* dlopen + cuGetProcAddress for CUDA, dlsym for NVML, exactly the shim's way. A child that cannot load the
 * fake cannot test anything: it reports and exits. */
static void load(void) {
    char path[1024];
    snprintf(path, sizeof path, "%s/libcuda.so.1", fake_dir);
    d.cuda_lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    snprintf(path, sizeof path, "%s/libnvidia-ml.so.1", fake_dir);
    d.nvml_lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!require(d.cuda_lib && d.nvml_lib, "dlopen the fakes in %s: %s", fake_dir, dlerror())) exit(1);
    d.getProc = (PFN_cuGetProcAddress_v2)dlsym(d.cuda_lib, "cuGetProcAddress_v2");
    d.getProcV1 = (PFN_cuGetProcAddress_v1)dlsym(d.cuda_lib, "cuGetProcAddress");
    d.info = (const char *(*)(void))dlsym(d.cuda_lib, "fakecudaInfo");
    if (!require(d.getProc && d.getProcV1 && d.info, "cuGetProcAddress_v2, cuGetProcAddress, fakecudaInfo exported"))
        exit(1);
#define RESOLVE(name)                                                                                   \
    {                                                                                                   \
        void *fn = NULL;                                                                                \
        CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;                       \
        CUresult rc = d.getProc(#name, &fn, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &st);                  \
        if (!require(rc == CUDA_SUCCESS && st == CU_GET_PROC_ADDRESS_SUCCESS && fn, "resolve %s", #name)) \
            exit(1);                                                                                    \
        d.name = (PFN_##name)fn;                                                                        \
    }
    CUDA_FNS(RESOLVE)
#undef RESOLVE
#define RESOLVE(name)                                                                   \
    d.name = (PFN_##name)dlsym(d.nvml_lib, #name);                                      \
    if (!require(d.name != NULL, "dlsym %s", #name)) exit(1);
    NVML_FNS(RESOLVE)
#undef RESOLVE
}

/* One value of fakecudaInfo(), or -1. */
static long info_number(const char *key) {
    const char *text = d.info();
    size_t len = strlen(key);
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (strncmp(p, key, len) == 0 && p[len] == '=') return strtol(p + len + 1, NULL, 10);
    return -1;
}

static int info_has(const char *line) {
    char needle[512];
    snprintf(needle, sizeof needle, "\n%s\n", line);
    char text[16384];
    snprintf(text, sizeof text, "\n%s", d.info());
    return strstr(text, needle) != NULL;
}

static void check_nothing_live(const char *when) {
    long a = info_number("liveAllocations"), r = info_number("liveReservations"), m = info_number("liveMappings");
    check(a == 0 && r == 0 && m == 0, "fakecudaInfo counts back to 0 %s (allocations %ld, reservations %ld, mappings %ld)",
          when, a, r, m);
}

/* cuInit, then the primary context of `ordinal` made current. */
static int open_driver(int ordinal) {
    CUresult rc = d.cuInit(0);
    if (!require(rc == CUDA_SUCCESS, "cuInit = %d", rc)) return 0;
    CUdevice dev;
    CUcontext ctx;
    return REQUIRE_OK(d.cuDeviceGet(&dev, ordinal)) && REQUIRE_OK(d.cuDevicePrimaryCtxRetain(&ctx, dev)) &&
           REQUIRE_OK(d.cuCtxSetCurrent(ctx));
}

static CUmemAllocationProp prop_for(int ordinal, unsigned int types) {
    CUmemAllocationProp p;
    memset(&p, 0, sizeof p);
    p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.requestedHandleTypes = (CUmemAllocationHandleType)types;
    p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p.location.id = ordinal;
    return p;
}

static CUresult create(CUmemGenericAllocationHandle *h, size_t size, int ordinal, unsigned int types) {
    CUmemAllocationProp p = prop_for(ordinal, types);
    return d.cuMemCreate(h, size, &p, 0);
}

static CUresult set_access(CUdeviceptr va, size_t size, int ordinal, CUmemAccess_flags flags) {
    CUmemAccessDesc desc;
    memset(&desc, 0, sizeof desc);
    desc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    desc.location.id = ordinal;
    desc.flags = flags;
    return d.cuMemSetAccess(va, size, &desc, 1);
}

/* reserve + map + read/write access for device 0: the probe's own sequence. */
static CUresult map_rw(CUmemGenericAllocationHandle h, size_t size, CUdeviceptr *va) {
    CUresult rc = d.cuMemAddressReserve(va, size, 0, 0, 0);
    if (rc != CUDA_SUCCESS) return rc;
    rc = d.cuMemMap(*va, size, 0, h, 0);
    if (rc == CUDA_SUCCESS) rc = set_access(*va, size, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    return rc;
}

static void unmap_free(CUdeviceptr va, size_t size) {
    REQUIRE_OK(d.cuMemUnmap(va, size));
    REQUIRE_OK(d.cuMemAddressFree(va, size));
}

static void fill(unsigned char *buf, size_t n, int seed) {
    for (size_t i = 0; i < n; i++) buf[i] = (unsigned char)(i * 31u + (unsigned)seed * 97u + (i >> 12));
}

/* Reads `size` bytes of device memory and compares them with the pattern of `seed`. */
static int holds_pattern(CUdeviceptr va, size_t size, int seed) {
    unsigned char *want = malloc(size), *got = malloc(size);
    int ok = want && got;
    if (ok) {
        fill(want, size, seed);
        memset(got, 0, size);
        ok = d.cuMemcpyDtoH(got, va, size) == CUDA_SUCCESS && memcmp(want, got, size) == 0;
    }
    free(want);
    free(got);
    return ok;
}

static CUresult write_pattern(CUdeviceptr va, size_t size, int seed) {
    unsigned char *buf = malloc(size);
    if (!buf) return CUDA_ERROR_OUT_OF_MEMORY;
    fill(buf, size, seed);
    CUresult rc = d.cuMemcpyHtoD(va, buf, size);
    free(buf);
    return rc;
}

/* ---- files and processes ---------------------------------------------------------------------------- */

static char root[256];

static void mkdirs(const char *path) {
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(buf, 0755);
            *p = '/';
        }
    mkdir(buf, 0755);
}

static void touch(const char *path) {
    int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    if (fd >= 0) close(fd);
}

/* A directory with a readable channelN for each listed N: one process's view of /dev/nvidia-caps-imex-channels. */
static void make_channel_dir(const char *dir, const int *channels, int n) {
    mkdirs(dir);
    for (int i = 0; i < n; i++) {
        char path[1100];
        snprintf(path, sizeof path, "%s/channel%d", dir, channels[i]);
        touch(path);
    }
}

static int count_files(const char *dir) {
    DIR *dp = opendir(dir);
    if (!dp) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dp)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
    closedir(dp);
    return n;
}

/* Replaces a file's content atomically, so the fake never reads half a fault spec. */
static void write_file(const char *path, const char *text) {
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    int fd = open(tmp, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0) return;
    ssize_t ignored = write(fd, text, strlen(text));
    (void)ignored;
    close(fd);
    rename(tmp, path);
}

static long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* The environment of one child, "KEY=VALUE" each, on top of the cleaned parent's. Fixed buffers, no heap. */
struct env {
    char kv[12][1200];
    int n;
};

static void env_set(struct env *e, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void env_set(struct env *e, const char *key, const char *fmt, ...) {
    if (e->n >= 12) return;
    int used = snprintf(e->kv[e->n], sizeof e->kv[0], "%s=", key);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->kv[e->n] + used, sizeof e->kv[0] - (size_t)used, fmt, ap);
    va_end(ap);
    e->n++;
}

/* The usual child environment: this scenario's state directory and the given channel directory. */
static struct env base_env(const char *name, const char *channel_dir) {
    struct env e;
    memset(&e, 0, sizeof e);
    env_set(&e, "FAKECUDA_STATE_DIR", "%s/%s/state", root, name);
    env_set(&e, "FAKECUDA_CHANNEL_DIR", "%s", channel_dir);
    return e;
}

typedef void (*body_fn)(void *arg);

/* Forks a child that applies `env`, loads the fake and runs `body`; its checks count in the shared tally. */
static pid_t spawn(const char *name, const struct env *env, body_fn body, void *arg) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid != 0) return pid;
    snprintf(scenario, sizeof scenario, "%s", name);
    for (int i = 0; env && i < env->n; i++) {
        char kv[1200];
        snprintf(kv, sizeof kv, "%s", env->kv[i]);
        char *eq = strchr(kv, '=');
        if (!eq) continue;
        *eq = '\0';
        setenv(kv, eq + 1, 1);
    }
    load();
    body(arg);
    exit(0);
}

/* A child that crashed, or exited non-zero (valgrind --error-exitcode), is a failure of its own. */
static void reap(pid_t pid, const char *what) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFSIGNALED(status))
        check(0, "%s: child killed by signal %d", what, WTERMSIG(status));
    else if (WEXITSTATUS(status) != 0)
        check(0, "%s: child exited %d", what, WEXITSTATUS(status));
}

static void run(const char *name, const struct env *env, body_fn body, void *arg) {
    reap(spawn(name, env, body, arg), name);
}

/* Like run, with the child's stderr (the fake's messages) going to `log`. */
static void run_logged(const char *name, const struct env *env, body_fn body, void *arg, const char *log) {
    int saved = dup(STDERR_FILENO);
    int fd = open(log, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
    dup2(fd, STDERR_FILENO);
    pid_t pid = spawn(name, env, body, arg);
    dup2(saved, STDERR_FILENO);
    close(saved);
    close(fd);
    reap(pid, name);
}

static int read_full(int fd, void *buf, size_t n) {
    unsigned char *p = buf;
    while (n > 0) {
        ssize_t got = read(fd, p, n);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return -1;
        p += got;
        n -= (size_t)got;
    }
    return 0;
}

static int write_full(int fd, const void *buf, size_t n) {
    return write(fd, buf, n) == (ssize_t)n ? 0 : -1;
}

/* ---- an exporter process that serves a fabric handle to importer processes -------------------------- */

/* The exporter creates `size` bytes of FABRIC memory on device 0, writes pattern 1, exports and sends the
 * handle; then obeys commands: 'v' answers whether memory holds pattern 2 (an importer's write-back),
 * 'q' releases everything and exits, 'x' exits without releasing (a dead owner). */
struct exporter {
    pid_t pid;
    int cmd[2];
    int reply[2];
    size_t size;
    int ordinal;
    CUresult rc;               /* create + export result */
    CUmemFabricHandle handle;
};

static void exporter_body(void *arg) {
    struct exporter *x = arg;
    close(x->cmd[1]);
    close(x->reply[0]);
    CUmemGenericAllocationHandle h = 0;
    CUdeviceptr va = 0;
    CUmemFabricHandle fh;
    memset(&fh, 0, sizeof fh);
    CUresult rc = CUDA_ERROR_UNKNOWN;
    if (open_driver(x->ordinal)) {
        rc = create(&h, x->size, x->ordinal, CU_MEM_HANDLE_TYPE_FABRIC);
        if (rc == CUDA_SUCCESS) rc = d.cuMemExportToShareableHandle(&fh, h, CU_MEM_HANDLE_TYPE_FABRIC, 0);
        if (rc == CUDA_SUCCESS) {
            REQUIRE_OK(map_rw(h, x->size, &va));
            REQUIRE_OK(write_pattern(va, x->size, 1));
        }
    }
    if (write_full(x->reply[1], &rc, sizeof rc) != 0 || write_full(x->reply[1], &fh, sizeof fh) != 0) exit(1);
    char c;
    while (read_full(x->cmd[0], &c, 1) == 0) {
        if (c == 'v') {
            char ok = rc == CUDA_SUCCESS && holds_pattern(va, x->size, 2);
            if (write_full(x->reply[1], &ok, 1) != 0) exit(1);
        } else if (c == 'x') {
            exit(0);
        } else if (c == 'q') {
            break;
        }
    }
    if (rc == CUDA_SUCCESS) {
        unmap_free(va, x->size);
        REQUIRE_OK(d.cuMemRelease(h));
        check_nothing_live("after the exporter released");
    }
    char done = 1;
    if (write_full(x->reply[1], &done, 1) != 0) exit(1);
}

static int start_exporter(struct exporter *x, const char *name, const struct env *env, int ordinal, size_t size) {
    x->size = size;
    x->ordinal = ordinal;
    if (pipe(x->cmd) != 0 || pipe(x->reply) != 0) return -1;
    x->pid = spawn(name, env, exporter_body, x);
    close(x->cmd[0]);
    close(x->reply[1]);
    if (read_full(x->reply[0], &x->rc, sizeof x->rc) != 0 || read_full(x->reply[0], &x->handle, sizeof x->handle) != 0)
        x->rc = CUDA_ERROR_UNKNOWN;
    return x->rc == CUDA_SUCCESS ? 0 : -1;
}

static int exporter_sees_writeback(struct exporter *x) {
    char c = 'v', ok = 0;
    if (write_full(x->cmd[1], &c, 1) != 0 || read_full(x->reply[0], &ok, 1) != 0) return 0;
    return ok;
}

/* 'q' (release, then wait for its answer) or 'x' (die holding the allocation). */
static void stop_exporter(struct exporter *x, char how) {
    char done;
    if (write_full(x->cmd[1], &how, 1) == 0 && how == 'q') read_full(x->reply[0], &done, 1);
    close(x->cmd[1]);
    close(x->reply[0]);
    reap(x->pid, "exporter");
}

/* What an importer child does with the handle it was given (inherited through fork). */
struct import_case {
    CUmemFabricHandle handle;
    CUresult want;
    int ordinal;
    int verify;    /* read pattern 1 back and write pattern 2 */
    size_t size;
    const char *what;
};

static void importer_body(void *arg) {
    struct import_case *c = arg;
    if (!open_driver(c->ordinal)) return;
    CUmemGenericAllocationHandle h = 0;
    CUresult rc = d.cuMemImportFromShareableHandle(&h, &c->handle, CU_MEM_HANDLE_TYPE_FABRIC);
    EXPECT(rc, c->want, "%s", c->what);
    if (rc == CUDA_SUCCESS) {
        if (c->verify) {
            CUdeviceptr va = 0;
            REQUIRE_OK(map_rw(h, c->size, &va));
            check(holds_pattern(va, c->size, 1), "importer reads back the exporter's bytes (%zu MiB)", c->size / MIB);
            EXPECT(write_pattern(va, c->size, 2), CUDA_SUCCESS, "importer writes back");
            unmap_free(va, c->size);
        }
        REQUIRE_OK(d.cuMemRelease(h));
    }
    check_nothing_live("in the importer");
}

static void import_case(const char *name, const struct env *env, const struct exporter *x, CUresult want,
                        int verify, const char *what) {
    struct import_case c;
    memset(&c, 0, sizeof c);
    c.handle = x->handle;
    c.want = want;
    c.verify = verify;
    c.size = x->size;
    c.what = what;
    run(name, env, importer_body, &c);
}

/* ---- 1. entry points, versions, error names --------------------------------------------------------- */

static void t_entry_points(void *arg) {
    (void)arg;
    static const char *exported[] = {"cuInit", "cuDriverGetVersion", "cuGetErrorName", "cuGetErrorString",
                                     "cuGetProcAddress", "cuGetProcAddress_v2", "fakecudaInfo"};
    for (size_t i = 0; i < sizeof exported / sizeof exported[0]; i++)
        require(dlsym(d.cuda_lib, exported[i]) != NULL, "%s exported", exported[i]);
    check(1, "libcuda exports cuInit, cuDriverGetVersion, cuGetErrorName/String, cuGetProcAddress(_v2), fakecudaInfo");
    check(dlsym(d.cuda_lib, "cuMemCreate") == NULL, "other entry points are reached only through cuGetProcAddress");

    static const char *multicast[] = {"cuMulticastCreate", "cuMulticastAddDevice", "cuMulticastBindMem",
                                      "cuMulticastBindAddr", "cuMulticastUnbind", "cuMulticastGetGranularity"};
    int none = 1;
    for (size_t i = 0; i < sizeof multicast / sizeof multicast[0]; i++) {
        void *fn = (void *)1;
        CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SUCCESS;
        CUresult rc = d.getProc(multicast[i], &fn, 13000, 0, &st);
        none &= rc == CUDA_ERROR_NOT_FOUND && st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND && fn == NULL &&
                dlsym(d.cuda_lib, multicast[i]) == NULL;
    }
    check(none, "no multicast entry point: cuMulticast* -> CUDA_ERROR_NOT_FOUND, SYMBOL_NOT_FOUND, pfn NULL");

    void *fn = (void *)1;
    CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SUCCESS;
    EXPECT(d.getProc("cuNoSuchThing", &fn, 13000, 0, &st), CUDA_ERROR_NOT_FOUND, "unknown symbol");
    check(fn == NULL && st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND, "unknown symbol: pfn NULL, SYMBOL_NOT_FOUND");
    EXPECT(d.getProc("cuMemCreate_v2", &fn, 13000, 0, &st), CUDA_ERROR_NOT_FOUND, "versioned names are not base names");
    EXPECT(d.getProc("cuMemCreate", &fn, 10010, 0, &st), CUDA_ERROR_NOT_FOUND, "cuMemCreate asked for CUDA 10.1");
    check(st == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT && fn == NULL, "older version: VERSION_NOT_SUFFICIENT");
    EXPECT(d.getProc("cuMemCreate", &fn, 13010, 0, &st), CUDA_ERROR_INVALID_VALUE, "version above the driver's");
    EXPECT(d.getProc(NULL, &fn, 13000, 0, &st), CUDA_ERROR_INVALID_VALUE, "NULL symbol");
    EXPECT(d.getProc("cuInit", NULL, 13000, 0, &st), CUDA_ERROR_INVALID_VALUE, "NULL pfn");
    EXPECT(d.getProcV1("cuMemMap", &fn, 12000, 0), CUDA_SUCCESS, "cuGetProcAddress v1 (4 arguments)");
    check(fn == (void *)d.cuMemMap, "v1 and v2 resolve the same function");
    EXPECT(d.getProc("cuGetProcAddress", &fn, 12000, 0, &st), CUDA_SUCCESS, "cuGetProcAddress resolves itself");

    int version = 0;
    EXPECT(d.cuDriverGetVersion(&version), CUDA_SUCCESS, "cuDriverGetVersion before cuInit");
    check(version == 13000, "driver version %d (CUDA 13.0)", version);
    EXPECT(d.cuDriverGetVersion(NULL), CUDA_ERROR_INVALID_VALUE, "cuDriverGetVersion(NULL)");

    static const struct {
        CUresult code;
        const char *name;
    } names[] = {{0, "CUDA_SUCCESS"}, {1, "CUDA_ERROR_INVALID_VALUE"}, {2, "CUDA_ERROR_OUT_OF_MEMORY"},
                 {3, "CUDA_ERROR_NOT_INITIALIZED"}, {100, "CUDA_ERROR_NO_DEVICE"}, {101, "CUDA_ERROR_INVALID_DEVICE"},
                 {201, "CUDA_ERROR_INVALID_CONTEXT"}, {400, "CUDA_ERROR_INVALID_HANDLE"},
                 {401, "CUDA_ERROR_ILLEGAL_STATE"}, {500, "CUDA_ERROR_NOT_FOUND"}, {600, "CUDA_ERROR_NOT_READY"},
                 {700, "CUDA_ERROR_ILLEGAL_ADDRESS"}, {800, "CUDA_ERROR_NOT_PERMITTED"},
                 {801, "CUDA_ERROR_NOT_SUPPORTED"}, {999, "CUDA_ERROR_UNKNOWN"}};
    int all = 1;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *name = NULL, *text = NULL;
        all &= d.cuGetErrorName(names[i].code, &name) == CUDA_SUCCESS && name && strcmp(name, names[i].name) == 0 &&
               d.cuGetErrorString(names[i].code, &text) == CUDA_SUCCESS && text && *text;
    }
    check(all, "cuGetErrorName/String know every code cuda_abi.h defines, by their real names");
    const char *text = NULL;
    d.cuGetErrorString(801, &text);
    check(text && strcmp(text, "operation not supported") == 0, "cuGetErrorString(801) = \"%s\"", text ? text : "(null)");
    const char *name = "x";
    EXPECT(d.cuGetErrorName(12345, &name), CUDA_ERROR_INVALID_VALUE, "cuGetErrorName of an unknown code");
    check(name == NULL, "unknown code: *name = NULL, as the real driver");

    int count = -1;
    size_t free_b, total_b;
    EXPECT(d.cuDeviceGetCount(&count), CUDA_ERROR_NOT_INITIALIZED, "cuDeviceGetCount before cuInit");
    EXPECT(d.cuMemGetInfo(&free_b, &total_b), CUDA_ERROR_NOT_INITIALIZED, "cuMemGetInfo before cuInit");
    EXPECT(d.cuInit(1), CUDA_ERROR_INVALID_VALUE, "cuInit(flags=1)");
    EXPECT(d.cuInit(0), CUDA_SUCCESS, "cuInit(0)");
    EXPECT(d.cuDeviceGetCount(&count), CUDA_SUCCESS, "cuDeviceGetCount after cuInit");
    check(count == 1, "FAKECUDA_GPUS unset: one GPU (%d)", count);
    EXPECT(d.cuDeviceGetCount(NULL), CUDA_ERROR_INVALID_VALUE, "cuDeviceGetCount(NULL)");
    check(info_has("fake=1") && !info_has("sameNode101") && info_has("devDir="), "fakecudaInfo: fake=1, devDir empty");

    unsigned int n = 0;
    EXPECT(d.nvmlDeviceGetCount_v2(&n), NVML_ERROR_UNINITIALIZED, "nvmlDeviceGetCount_v2 before nvmlInit_v2");
    EXPECT(d.nvmlInit_v2(), NVML_SUCCESS, "nvmlInit_v2");
    char version_text[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
    EXPECT(d.nvmlSystemGetDriverVersion(version_text, sizeof version_text), NVML_SUCCESS, "nvmlSystemGetDriverVersion");
    check(strcmp(version_text, "580.159.04") == 0, "driver version \"%s\"", version_text);
    EXPECT(d.nvmlSystemGetDriverVersion(version_text, 4), NVML_ERROR_INSUFFICIENT_SIZE, "driver version into 4 bytes");
    check(strcmp(d.nvmlErrorString(NVML_ERROR_NOT_SUPPORTED), "Not Supported") == 0, "nvmlErrorString(3)");
    EXPECT(d.nvmlShutdown(), NVML_SUCCESS, "nvmlShutdown");
    EXPECT(d.nvmlShutdown(), NVML_ERROR_UNINITIALIZED, "second nvmlShutdown");
}

/* ---- 2. enumeration: FAKECUDA_GPUS, CUDA_VISIBLE_DEVICES, FAKECUDA_DEV_DIR, FAKECUDA_CONFIG ----------- */

static char uuid_text[2][48]; /* physical GPUs 0 and 1 of the default host, learnt from NVML */

static void uuid_string(const CUuuid *u, char out[48]) {
    const unsigned char *b = (const unsigned char *)u->bytes;
    snprintf(out, 48, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2],
             b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

/* The physical index (0/1) of CUDA ordinal `dev`, by UUID; -1 if neither. */
static int physical_of(int dev) {
    CUuuid u;
    char text[48];
    if (d.cuDeviceGetUuid(&u, dev) != CUDA_SUCCESS) return -1;
    uuid_string(&u, text);
    for (int i = 0; i < 2; i++)
        if (strcmp(text, uuid_text[i]) == 0) return i;
    return -1;
}

static void t_two_gpus(void *arg) {
    int out = *(int *)arg;
    EXPECT(d.nvmlInit_v2(), NVML_SUCCESS, "nvmlInit_v2");
    unsigned int n = 0;
    d.nvmlDeviceGetCount_v2(&n);
    check(n == 2, "NVML sees 2 GPUs (%u)", n);
    for (unsigned int i = 0; i < 2 && i < n; i++) {
        nvmlDevice_t dev;
        REQUIRE_OK(d.nvmlDeviceGetHandleByIndex_v2(i, &dev));
        REQUIRE_OK(d.nvmlDeviceGetUUID(dev, uuid_text[i], sizeof uuid_text[i]));
        nvmlDevice_t again = NULL;
        EXPECT(d.nvmlDeviceGetHandleByUUID(uuid_text[i], &again), NVML_SUCCESS, "nvmlDeviceGetHandleByUUID(%s)", uuid_text[i]);
        check(again == dev, "handle by UUID == handle by index %u", i);
        char small[8];
        EXPECT(d.nvmlDeviceGetUUID(dev, small, sizeof small), NVML_ERROR_INSUFFICIENT_SIZE, "UUID into 8 bytes");

        nvmlGpuFabricInfo_v3_t v3;
        memset(&v3, 0xee, sizeof v3);
        v3.version = nvmlGpuFabricInfo_v3;
        EXPECT(d.nvmlDeviceGetGpuFabricInfoV(dev, &v3), NVML_SUCCESS, "nvmlDeviceGetGpuFabricInfoV v3, GPU %u", i);
        check(v3.state == NVML_GPU_FABRIC_STATE_NOT_SUPPORTED && v3.status == NVML_SUCCESS &&
                  v3.healthMask == 0 && v3.healthSummary == 0,
              "default fabric as measured on the H200: state NOT_SUPPORTED, status 0, health 0, summary 0");
        unsigned char buf[sizeof(nvmlGpuFabricInfo_v2_t) + 8];
        memset(buf, 0xab, sizeof buf);
        nvmlGpuFabricInfo_v2_t v2;
        memset(&v2, 0, sizeof v2);
        v2.version = nvmlGpuFabricInfo_v2;
        memcpy(buf, &v2, sizeof v2);
        EXPECT(d.nvmlDeviceGetGpuFabricInfoV(dev, (nvmlGpuFabricInfo_v3_t *)(void *)buf), NVML_SUCCESS, "fabric info v2");
        int untouched = 1;
        for (size_t k = sizeof v2; k < sizeof buf; k++) untouched &= buf[k] == 0xab;
        check(untouched, "a v2 request writes nothing past the v2 struct");
        v3.version = 0x01000010;
        EXPECT(d.nvmlDeviceGetGpuFabricInfoV(dev, &v3), NVML_ERROR_ARGUMENT_VERSION_MISMATCH, "fabric info, unknown version");
        nvmlGpuFabricInfo_t legacy;
        EXPECT(d.nvmlDeviceGetGpuFabricInfo(dev, &legacy), NVML_SUCCESS, "legacy nvmlDeviceGetGpuFabricInfo");
        EXPECT(d.nvmlDeviceGetGpuFabricInfoV(NULL, &v3), NVML_ERROR_INVALID_ARGUMENT, "fabric info of a NULL device");
    }
    nvmlDevice_t none;
    EXPECT(d.nvmlDeviceGetHandleByIndex_v2(2, &none), NVML_ERROR_INVALID_ARGUMENT, "NVML index 2 of 2");
    EXPECT(d.nvmlDeviceGetHandleByUUID("GPU-00000000-0000-0000-0000-000000000000", &none), NVML_ERROR_NOT_FOUND,
           "unknown UUID");

    if (!open_driver(0)) return;
    int count = 0;
    d.cuDeviceGetCount(&count);
    check(count == 2, "CUDA sees 2 GPUs without CUDA_VISIBLE_DEVICES (%d)", count);
    check(physical_of(0) == 0 && physical_of(1) == 1, "CUDA and NVML give the same UUIDs, in the same order");
    char bus0[32] = "", bus1[32] = "", name[64] = "";
    REQUIRE_OK(d.cuDeviceGetPCIBusId(bus0, sizeof bus0, 0));
    REQUIRE_OK(d.cuDeviceGetPCIBusId(bus1, sizeof bus1, 1));
    check(strcmp(bus0, "0000:18:00.0") == 0 && strcmp(bus1, "0000:2A:00.0") == 0, "PCI bus ids %s and %s", bus0, bus1);
    REQUIRE_OK(d.cuDeviceGetName(name, sizeof name, 1));
    check(strcmp(name, "NVIDIA H200") == 0, "name \"%s\"", name);
    static const struct {
        CUdevice_attribute attr;
        int want;
        const char *what;
    } attrs[] = {{CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 9, "compute capability major"},
                 {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0, "compute capability minor"},
                 {CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 1, "VIRTUAL_MEMORY_MANAGEMENT"},
                 {CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, 1, "HANDLE_TYPE_POSIX_FILE_DESCRIPTOR"},
                 {CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, 1, "HANDLE_TYPE_FABRIC"},
                 {CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED, 1, "GPU_DIRECT_RDMA_WITH_CUDA_VMM"},
                 {CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, 0, "MULTICAST"},
                 {CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, 0x18, "PCI bus of GPU 0"}};
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
        int v = -1;
        REQUIRE_OK(d.cuDeviceGetAttribute(&v, attrs[i].attr, 0));
        check(v == attrs[i].want, "attribute %s = %d", attrs[i].what, v);
    }
    int v;
    EXPECT(d.cuDeviceGetAttribute(&v, (CUdevice_attribute)9999, 0), CUDA_ERROR_INVALID_VALUE, "unknown attribute");
    EXPECT(d.cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, 2), CUDA_ERROR_INVALID_DEVICE, "attribute of device 2");
    CUdevice dev;
    EXPECT(d.cuDeviceGet(&dev, 2), CUDA_ERROR_INVALID_DEVICE, "cuDeviceGet(2) of 2");
    size_t g = 0;
    CUmemAllocationProp p = prop_for(1, CU_MEM_HANDLE_TYPE_FABRIC);
    EXPECT(d.cuMemGetAllocationGranularity(&g, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM), CUDA_SUCCESS, "granularity");
    check(g == 2 * MIB, "granularity minimum %zu = 2 MiB", g);
    g = 0;
    d.cuMemGetAllocationGranularity(&g, &p, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
    check(g == 2 * MIB, "granularity recommended %zu = 2 MiB", g);
    size_t free_b = 0, total_b = 0;
    REQUIRE_OK(d.cuMemGetInfo(&free_b, &total_b));
    check(total_b == TOTAL_MEMORY && free_b == total_b, "cuMemGetInfo total %zu MiB, all free", total_b / MIB);
    if (write_full(out, uuid_text, sizeof uuid_text) != 0) check(0, "send UUIDs to the parent");
}

/* One CUDA_VISIBLE_DEVICES case: the physical GPUs expected in ordinal order (count 0: NO_DEVICE). */
struct visible_case {
    char cvd[160];
    int unset_cvd;
    int want[2];
    int count;
};

static void t_visible(void *arg) {
    struct visible_case *c = arg;
    if (!c->unset_cvd) setenv("CUDA_VISIBLE_DEVICES", c->cvd, 1);
    const char *label = c->unset_cvd ? "(unset)" : c->cvd;
    CUresult rc = d.cuInit(0);
    if (c->count == 0) {
        EXPECT(rc, CUDA_ERROR_NO_DEVICE, "CUDA_VISIBLE_DEVICES=\"%s\": cuInit", label);
        int n = -1;
        EXPECT(d.cuDeviceGetCount(&n), CUDA_ERROR_NOT_INITIALIZED, "calls after a failed cuInit");
        return;
    }
    int n = 0;
    if (!require(rc == CUDA_SUCCESS, "cuInit with CUDA_VISIBLE_DEVICES=\"%s\" = %d", label, rc)) return;
    d.cuDeviceGetCount(&n);
    int ok = n == c->count;
    char seen[64] = "";
    for (int i = 0, used = 0; i < n && i < 8; i++)
        used += snprintf(seen + used, sizeof seen - (size_t)used, "%s%d", i ? "," : "", physical_of(i));
    for (int i = 0; ok && i < n; i++) ok = physical_of(i) == c->want[i];
    check(ok, "CUDA_VISIBLE_DEVICES=\"%s\": ordinals map to physical GPUs [%s]", label, seen);
    REQUIRE_OK(d.nvmlInit_v2());
    unsigned int nv = 0;
    d.nvmlDeviceGetCount_v2(&nv);
    check(nv == 2, "NVML still sees both GPUs (%u): it ignores CUDA_VISIBLE_DEVICES", nv);
}

static void t_dev_dir(void *arg) {
    (void)arg;
    REQUIRE_OK(d.nvmlInit_v2());
    unsigned int nv = 0;
    d.nvmlDeviceGetCount_v2(&nv);
    nvmlDevice_t dev;
    char uuid[48] = "";
    if (nv > 0) {
        d.nvmlDeviceGetHandleByIndex_v2(0, &dev);
        d.nvmlDeviceGetUUID(dev, uuid, sizeof uuid);
    }
    check(nv == 1 && strcmp(uuid, uuid_text[1]) == 0, "FAKECUDA_DEV_DIR with nvidia1 only: NVML sees GPU 1 alone (%u)", nv);
    if (!open_driver(0)) return;
    int n = 0;
    d.cuDeviceGetCount(&n);
    check(n == 1 && physical_of(0) == 1, "FAKECUDA_DEV_DIR with nvidia1 only: CUDA ordinal 0 is physical GPU 1");
    check(info_number("liveAllocations") == 0 && strstr(d.info(), "devDir=/") != NULL, "fakecudaInfo names the devDir");
}

static void t_no_gpu(void *arg) {
    (void)arg;
    EXPECT(d.cuInit(0), CUDA_ERROR_NO_DEVICE, "gpus=0: cuInit");
    REQUIRE_OK(d.nvmlInit_v2());
    unsigned int nv = 7;
    d.nvmlDeviceGetCount_v2(&nv);
    check(nv == 0, "gpus=0: NVML count 0");
}

/* Lines a library wrote to stderr: "fakecuda: <library>: ...". */
static int count_messages(const char *path, const char *library) {
    FILE *f = fopen(path, "re");
    if (!f) return 0;
    char line[1024], prefix[64];
    int n = 0;
    int len = snprintf(prefix, sizeof prefix, "fakecuda: %s: ", library);
    while (fgets(line, sizeof line, f))
        if (strncmp(line, prefix, (size_t)len) == 0) n++;
    fclose(f);
    return n;
}

static void t_config(void *arg) {
    const char *log = arg;
    /* stderr was redirected before load: the bad lines are reported when the config is first read. */
    if (!open_driver(0)) return;
    int n = 0;
    d.cuDeviceGetCount(&n);
    check(n == 3, "gpus=3 in FAKECUDA_CONFIG overrides FAKECUDA_GPUS=2 (%d)", n);
    check(info_has("host=host-a"), "host=host-a from the config");
    check(physical_of(0) == -1 && physical_of(1) == -1, "UUIDs derive from the host id: host-a's differ from the default host's");
    REQUIRE_OK(d.nvmlInit_v2());
    nvmlDevice_t dev;
    REQUIRE_OK(d.nvmlDeviceGetHandleByIndex_v2(1, &dev));
    nvmlGpuFabricInfo_v3_t v3;
    memset(&v3, 0, sizeof v3);
    v3.version = nvmlGpuFabricInfo_v3;
    REQUIRE_OK(d.nvmlDeviceGetGpuFabricInfoV(dev, &v3));
    static const unsigned char cluster[16] = {0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0,
                                              0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef};
    check(v3.state == NVML_GPU_FABRIC_STATE_COMPLETED && v3.status == 0 && v3.cliqueId == 7 && v3.healthMask == 5 &&
              v3.healthSummary == 1 && memcmp(v3.clusterUuid, cluster, 16) == 0,
          "gpu.1.fabric.*: state 3, status 0 (default for state 3), clique 7, cluster, health 5, summary 1");
    nvmlGpuFabricInfo_t legacy;
    REQUIRE_OK(d.nvmlDeviceGetGpuFabricInfo(dev, &legacy));
    check(legacy.state == 3 && legacy.cliqueId == 7, "legacy fabric info agrees");
    REQUIRE_OK(d.nvmlDeviceGetHandleByIndex_v2(2, &dev));
    REQUIRE_OK(d.nvmlDeviceGetGpuFabricInfoV(dev, &v3));
    check(v3.state == 2 && v3.status == 17, "gpu.2.fabric.status=17 kept with state 2");
    int cuda = count_messages(log, "libcuda"), nvml = count_messages(log, "libnvidia-ml");
    check(cuda == 7 && nvml == 7,
          "each bad config line and the bad FAKECUDA_GPUS reported on stderr as \"fakecuda: <library>:\" by both "
          "libraries (%d and %d of 7)", cuda, nvml);
}

static void t_bad_gpus(void *arg) {
    (void)arg;
    if (!open_driver(0)) return;
    int n = 0;
    d.cuDeviceGetCount(&n);
    check(n == 1, "FAKECUDA_GPUS=lots ignored: default 1 GPU");
}

static void enumeration(void) {
    snprintf(scenario, sizeof scenario, "%s", "enum"); /* checks made by the parent */
    char dir[600], path[700], log[700];
    snprintf(dir, sizeof dir, "%s/enum", root);
    snprintf(path, sizeof path, "%s/channels", dir);
    struct env e = base_env("enum", path);
    env_set(&e, "FAKECUDA_GPUS", "2");
    int fds[2];
    if (pipe(fds) != 0) return;
    pid_t pid = spawn("enum", &e, t_two_gpus, &fds[1]);
    close(fds[1]);
    int got = read_full(fds[0], uuid_text, sizeof uuid_text);
    close(fds[0]);
    reap(pid, "enum");
    if (!check(got == 0 && strcmp(uuid_text[0], uuid_text[1]) != 0, "two distinct GPU UUIDs: %s %s", uuid_text[0], uuid_text[1]))
        return;

    struct visible_case cases[] = {
        {"", 1, {0, 1}, 2}, {"1", 0, {1, 0}, 1}, {"1,0", 0, {1, 0}, 2}, {"0,7,1", 0, {0, 0}, 1},
        {"1,1", 0, {1, 0}, 1}, {"", 0, {0, 0}, 0}, {"abc", 0, {0, 0}, 0}, {"-1,0", 0, {0, 0}, 0},
        {"GPU-", 0, {0, 0}, 0}, {"", 0, {1, 0}, 1}, {"", 0, {0, 1}, 2}, {"GPU-zzzz", 0, {0, 0}, 0},
    };
    snprintf(cases[9].cvd, sizeof cases[9].cvd, "%.12s", uuid_text[1]);                /* a UUID prefix */
    snprintf(cases[10].cvd, sizeof cases[10].cvd, "%s,1", uuid_text[0]);                /* full UUID, then index */
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run("visible", &e, t_visible, &cases[i]);

    snprintf(path, sizeof path, "%s/dev", dir);
    mkdirs(path);
    snprintf(path, sizeof path, "%s/dev/nvidia1", dir);
    touch(path);
    struct env hidden = e;
    env_set(&hidden, "FAKECUDA_DEV_DIR", "%s/dev", dir);
    run("devdir", &hidden, t_dev_dir, NULL);
    struct visible_case renumbered = {"1", 0, {0, 0}, 0};
    run("devdir", &hidden, t_visible, &renumbered); /* index 1 no longer exists: ordinals renumber the present GPUs */

    snprintf(path, sizeof path, "%s/none.conf", dir);
    write_file(path, "gpus=0\n");
    struct env none = e;
    env_set(&none, "FAKECUDA_CONFIG", "%s", path);
    run("nogpu", &none, t_no_gpu, NULL);

    snprintf(path, sizeof path, "%s/a.conf", dir);
    write_file(path, "# a fake host\n"
                     "host = host-a\n"
                     "gpus=3\n"
                     "gpu.1.fabric.state=3   # completed\n"
                     "gpu.1.fabric.cluster=12345678-9abc-def0-0123-456789abcdef\n"
                     "gpu.1.fabric.clique=7\n"
                     "gpu.1.fabric.health=0x5\n"
                     "gpu.1.fabric.summary=1\n"
                     "gpu.2.fabric.state=2\n"
                     "gpu.2.fabric.status=17\n"
                     "gpus=99\n"
                     "this line has no equals sign\n"
                     "gpu.1.fabric.state=9\n"
                     "gpu.70.fabric.state=1\n"
                     "gpu.0.fabric.cluster=not-a-uuid\n"
                     "colour=blue\n");
    snprintf(log, sizeof log, "%s/a.log", dir);
    struct env conf = e;
    env_set(&conf, "FAKECUDA_CONFIG", "%s", path);
    env_set(&conf, "FAKECUDA_GPUS", "lots");
    run_logged("config", &conf, t_config, log, log);
    struct env bad = base_env("enum", path);
    env_set(&bad, "FAKECUDA_GPUS", "lots");
    run_logged("config", &bad, t_bad_gpus, NULL, log);
}

/* ---- 3. memory in one process ------------------------------------------------------------------------ */

static void t_memory(void *arg) {
    const char *state = arg;
    CUmemGenericAllocationHandle h = 0, h2 = 0, posix = 0;
    CUdeviceptr va = 0, va2 = 0;
    size_t free_b, total_b;
    CUmemAllocationProp p = prop_for(0, CU_MEM_HANDLE_TYPE_FABRIC);

    REQUIRE_OK(d.cuInit(0));
    EXPECT(create(&h, 2 * MIB, 0, CU_MEM_HANDLE_TYPE_FABRIC), CUDA_ERROR_INVALID_CONTEXT, "cuMemCreate without a current context");
    size_t g = 0;
    EXPECT(d.cuMemGetAllocationGranularity(&g, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM), CUDA_SUCCESS, "granularity needs no context");
    if (!open_driver(0)) return;

    EXPECT(create(&h, 1 * MIB, 0, CU_MEM_HANDLE_TYPE_FABRIC), CUDA_ERROR_INVALID_VALUE, "cuMemCreate 1 MiB (not a multiple of 2 MiB)");
    EXPECT(create(&h, 0, 0, CU_MEM_HANDLE_TYPE_FABRIC), CUDA_ERROR_INVALID_VALUE, "cuMemCreate 0 bytes");
    EXPECT(create(&h, 2 * MIB, 5, CU_MEM_HANDLE_TYPE_FABRIC), CUDA_ERROR_INVALID_DEVICE, "cuMemCreate on device 5");
    EXPECT(create(&h, 2 * MIB, 0, CU_MEM_HANDLE_TYPE_WIN32), CUDA_ERROR_INVALID_VALUE, "cuMemCreate with a WIN32 handle type");
    p.type = CU_MEM_ALLOCATION_TYPE_INVALID;
    EXPECT(d.cuMemCreate(&h, 2 * MIB, &p, 0), CUDA_ERROR_INVALID_VALUE, "cuMemCreate not PINNED");
    p = prop_for(0, CU_MEM_HANDLE_TYPE_FABRIC);
    EXPECT(d.cuMemCreate(&h, 2 * MIB, &p, 1), CUDA_ERROR_INVALID_VALUE, "cuMemCreate flags=1");
    EXPECT(d.cuMemCreate(NULL, 2 * MIB, &p, 0), CUDA_ERROR_INVALID_VALUE, "cuMemCreate(NULL handle)");
    EXPECT(d.cuMemCreate(&h, 2 * MIB, NULL, 0), CUDA_ERROR_INVALID_VALUE, "cuMemCreate(NULL prop)");
    EXPECT(d.cuMemCreate(&h, (size_t)1 << 50, &p, 0), CUDA_ERROR_OUT_OF_MEMORY, "cuMemCreate 1 PiB");
    check(count_files(state) == 0, "failed creates leave no file");

    const size_t size = 4 * MIB;
    EXPECT(create(&h, size, 0, CU_MEM_HANDLE_TYPE_FABRIC | CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), CUDA_SUCCESS,
           "cuMemCreate 4 MiB FABRIC|POSIX_FD");
    check(count_files(state) == 1, "one file in the state directory per live allocation");
    REQUIRE_OK(d.cuMemGetInfo(&free_b, &total_b));
    check(total_b == TOTAL_MEMORY && free_b == TOTAL_MEMORY - size, "cuMemGetInfo: free = total - 4 MiB");

    EXPECT(d.cuMemAddressReserve(&va, 3 * MIB, 0, 0, 0), CUDA_ERROR_INVALID_VALUE, "reserve 3 MiB");
    EXPECT(d.cuMemAddressReserve(&va, 8 * MIB, 3 * MIB, 0, 0), CUDA_ERROR_INVALID_VALUE, "reserve with alignment 3 MiB");
    EXPECT(d.cuMemAddressReserve(&va, 8 * MIB, 16 * MIB, 0, 0), CUDA_SUCCESS, "reserve 8 MiB aligned to 16 MiB");
    check(va % (16 * MIB) == 0, "the reservation honours the alignment");

    unsigned char buf[64] = {0};
    EXPECT(d.cuMemcpyHtoD(va, buf, sizeof buf), CUDA_ERROR_INVALID_VALUE, "copy into a reserved, unmapped range");
    EXPECT(d.cuMemMap(va, size, 2 * MIB, h, 0), CUDA_ERROR_INVALID_VALUE, "map at offset 2 MiB");
    EXPECT(d.cuMemMap(va, 6 * MIB, 0, h, 0), CUDA_ERROR_INVALID_VALUE, "map 6 MiB of a 4 MiB allocation");
    EXPECT(d.cuMemMap(va + 6 * MIB, size, 0, h, 0), CUDA_ERROR_INVALID_VALUE, "map past the end of the reservation");
    EXPECT(d.cuMemMap((CUdeviceptr)(uintptr_t)buf & ~(CUdeviceptr)(2 * MIB - 1), 2 * MIB, 0, h, 0),
           CUDA_ERROR_INVALID_VALUE, "map onto an address that was never reserved");
    EXPECT(d.cuMemMap(va, size, 0, h + 1000, 0), CUDA_ERROR_INVALID_VALUE, "map an unknown handle");
    EXPECT(d.cuMemMap(va, size, 0, h, 0), CUDA_SUCCESS, "cuMemMap");
    EXPECT(d.cuMemMap(va + 2 * MIB, 2 * MIB, 0, h, 0), CUDA_ERROR_INVALID_VALUE, "map over an existing mapping");

    EXPECT(d.cuMemcpyHtoD(va, buf, sizeof buf), CUDA_ERROR_INVALID_VALUE, "copy before cuMemSetAccess");
    EXPECT(set_access(va, size, 3, CU_MEM_ACCESS_FLAGS_PROT_READWRITE), CUDA_ERROR_INVALID_DEVICE, "set access for device 3");
    EXPECT(set_access(va, 2 * MIB, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE), CUDA_ERROR_INVALID_VALUE,
           "set access on part of a mapping");
    EXPECT(set_access(va, 8 * MIB, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE), CUDA_ERROR_INVALID_VALUE,
           "set access past the mapping");
    EXPECT(d.cuMemSetAccess(va, size, NULL, 1), CUDA_ERROR_INVALID_VALUE, "set access with NULL desc");
    EXPECT(set_access(va, size, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE), CUDA_SUCCESS, "cuMemSetAccess read/write");
    EXPECT(write_pattern(va, size, 1), CUDA_SUCCESS, "cuMemcpyHtoD 4 MiB");
    check(holds_pattern(va, size, 1), "cuMemcpyDtoH reads the same bytes back");

    VALGRIND_DISABLE_ERROR_REPORTING;
    EXPECT(d.cuMemcpyDtoH((void *)8, va, 64), CUDA_ERROR_INVALID_VALUE, "DtoH into host address 8");
    EXPECT(d.cuMemcpyHtoD(va, (const void *)16, 64), CUDA_ERROR_INVALID_VALUE, "HtoD from host address 16");
    VALGRIND_ENABLE_ERROR_REPORTING;
    EXPECT(d.cuMemcpyHtoD(va, NULL, 64), CUDA_ERROR_INVALID_VALUE, "HtoD from NULL");
    EXPECT(d.cuMemcpyDtoH(buf, 0x1000, 64), CUDA_ERROR_INVALID_VALUE, "DtoH from device address 0x1000");
    EXPECT(d.cuMemcpyDtoH(buf, va + size - 16, 32), CUDA_ERROR_INVALID_VALUE, "DtoH running off the mapping");
    EXPECT(d.cuMemcpyDtoH(buf, ~(CUdeviceptr)0 - 8, 32), CUDA_ERROR_INVALID_VALUE, "DtoH wrapping the address space");
    EXPECT(d.cuMemcpyDtoH(buf, va, 0), CUDA_SUCCESS, "a 0-byte copy");

    EXPECT(set_access(va, size, 0, CU_MEM_ACCESS_FLAGS_PROT_READ), CUDA_SUCCESS, "cuMemSetAccess read-only");
    EXPECT(d.cuMemcpyHtoD(va, buf, sizeof buf), CUDA_ERROR_INVALID_VALUE, "HtoD into read-only memory");
    check(holds_pattern(va, size, 1), "DtoH from read-only memory");
    REQUIRE_OK(set_access(va, size, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE));

    CUstream stream = NULL;
    EXPECT(d.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS, "cuStreamCreate");
    EXPECT(d.cuMemcpyDtoDAsync(va + 2 * MIB, va, 2 * MIB, stream), CUDA_SUCCESS, "cuMemcpyDtoDAsync 2 MiB");
    REQUIRE_OK(d.cuStreamSynchronize(stream));
    unsigned char *first = malloc(2 * MIB), *second = malloc(2 * MIB);
    if (first && second) {
        REQUIRE_OK(d.cuMemcpyDtoH(first, va, 2 * MIB));
        REQUIRE_OK(d.cuMemcpyDtoH(second, va + 2 * MIB, 2 * MIB));
        check(memcmp(first, second, 2 * MIB) == 0, "device-to-device copy landed");
    }
    if (first) {
        /* as verify's copy-engine window: a random 64 KiB of the source, on the stream, equal to a plain DtoH */
        size_t at = (size_t)(rand() % 32) * 65536;
        memset(first, 0, 65536);
        EXPECT(d.cuMemcpyDtoHAsync(first, va + at, 65536, stream), CUDA_SUCCESS, "cuMemcpyDtoHAsync 64 KiB");
        REQUIRE_OK(d.cuStreamSynchronize(stream));
        REQUIRE_OK(d.cuMemcpyDtoH(second ? second : first, va + at, 65536));
        check(!second || memcmp(first, second, 65536) == 0, "DtoH on a stream reads what DtoH reads");
        EXPECT(d.cuMemcpyDtoHAsync(first, va, 64, (CUstream)(uintptr_t)0x40), CUDA_ERROR_INVALID_HANDLE,
               "DtoH on a stream that does not exist");
        EXPECT(d.cuMemcpyDtoHAsync(first, va + 10 * MIB, 64, stream), CUDA_ERROR_INVALID_VALUE,
               "DtoH on a stream from an unmapped range");
    }
    free(first);
    free(second);
    EXPECT(d.cuMemcpyDtoDAsync(va, va + 2 * MIB, 64, (CUstream)(uintptr_t)0x40), CUDA_ERROR_INVALID_HANDLE,
           "DtoD on a stream that does not exist");
    EXPECT(d.cuMemcpyDtoDAsync(va + 10 * MIB, va, 64, stream), CUDA_ERROR_INVALID_VALUE, "DtoD to an unmapped range");
    REQUIRE_OK(write_pattern(va, size, 1));

    CUevent start = NULL, end = NULL, untimed = NULL;
    REQUIRE_OK(d.cuEventCreate(&start, CU_EVENT_DEFAULT));
    REQUIRE_OK(d.cuEventCreate(&end, CU_EVENT_DEFAULT));
    REQUIRE_OK(d.cuEventCreate(&untimed, 0x2));
    float ms = -1;
    EXPECT(d.cuEventElapsedTime(&ms, start, end), CUDA_ERROR_INVALID_HANDLE, "elapsed time of unrecorded events");
    REQUIRE_OK(d.cuEventRecord(start, stream));
    sleep_ms(20);
    REQUIRE_OK(d.cuEventRecord(end, NULL));
    REQUIRE_OK(d.cuEventSynchronize(end));
    EXPECT(d.cuEventElapsedTime(&ms, start, end), CUDA_SUCCESS, "cuEventElapsedTime");
    check(ms >= 19.0f && ms < 5000.0f, "20 ms sleep measures %.2f ms (CLOCK_MONOTONIC)", (double)ms);
    REQUIRE_OK(d.cuEventRecord(untimed, NULL));
    EXPECT(d.cuEventElapsedTime(&ms, start, untimed), CUDA_ERROR_INVALID_HANDLE, "elapsed time with a DISABLE_TIMING event");
    REQUIRE_OK(d.cuEventDestroy(start));
    REQUIRE_OK(d.cuEventDestroy(end));
    REQUIRE_OK(d.cuEventDestroy(untimed));
    EXPECT(d.cuEventDestroy(start), CUDA_ERROR_INVALID_HANDLE, "destroying an event twice");
    EXPECT(d.cuStreamDestroy(stream), CUDA_SUCCESS, "cuStreamDestroy");
    EXPECT(d.cuStreamDestroy(stream), CUDA_ERROR_INVALID_HANDLE, "destroying a stream twice");
    REQUIRE_OK(d.cuCtxSynchronize());

    /* NCCL imports its own handle: the same memory appears at a second address. */
    CUmemFabricHandle fh;
    EXPECT(d.cuMemExportToShareableHandle(&fh, h, CU_MEM_HANDLE_TYPE_FABRIC, 0), CUDA_SUCCESS, "export FABRIC");
    EXPECT(d.cuMemExportToShareableHandle(&fh, h, CU_MEM_HANDLE_TYPE_FABRIC, 1), CUDA_ERROR_INVALID_VALUE, "export flags=1");
    EXPECT(d.cuMemImportFromShareableHandle(&h2, &fh, CU_MEM_HANDLE_TYPE_FABRIC), CUDA_SUCCESS, "import in the exporting process");
    REQUIRE_OK(map_rw(h2, size, &va2));
    check(va2 != va && holds_pattern(va2, size, 1), "the self-import maps the same bytes at another address");
    check(info_number("liveAllocations") == 2 && info_number("liveReservations") == 2 && info_number("liveMappings") == 2,
          "fakecudaInfo counts 2 allocations, 2 reservations, 2 mappings");
    EXPECT(d.cuMemImportFromShareableHandle(&h2, &fh, (CUmemAllocationHandleType)0x4), CUDA_ERROR_INVALID_VALUE,
           "import with handle type WIN32_KMT");
    EXPECT(d.cuMemImportFromShareableHandle(&h2, NULL, CU_MEM_HANDLE_TYPE_FABRIC), CUDA_ERROR_INVALID_VALUE,
           "import from NULL");
    EXPECT(d.cuMemImportFromShareableHandle(&h2, (void *)(intptr_t)-1, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
           CUDA_ERROR_INVALID_VALUE, "POSIX_FD import of fd -1");
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    EXPECT(d.cuMemImportFromShareableHandle(&h2, (void *)(intptr_t)devnull, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
           CUDA_ERROR_INVALID_VALUE, "POSIX_FD import of /dev/null");
    close(devnull);

    EXPECT(create(&posix, 2 * MIB, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), CUDA_SUCCESS,
           "POSIX_FD-only create needs no IMEX channel");
    EXPECT(d.cuMemExportToShareableHandle(&fh, posix, CU_MEM_HANDLE_TYPE_FABRIC, 0), CUDA_ERROR_INVALID_VALUE,
           "FABRIC export of a POSIX_FD-only allocation");
    int fd = -1;
    EXPECT(d.cuMemExportToShareableHandle(&fd, posix, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0), CUDA_SUCCESS,
           "POSIX_FD export");
    check(fd >= 0 && (fcntl(fd, F_GETFD) & FD_CLOEXEC), "the exported fd is real and close-on-exec");
    CUmemGenericAllocationHandle again = 0;
    EXPECT(d.cuMemImportFromShareableHandle(&again, (void *)(intptr_t)fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
           CUDA_SUCCESS, "POSIX_FD import in the same process");
    close(fd);
    REQUIRE_OK(d.cuMemRelease(again));
    REQUIRE_OK(d.cuMemRelease(posix));

    EXPECT(d.cuMemAddressFree(va, 8 * MIB), CUDA_ERROR_INVALID_VALUE, "cuMemAddressFree while mapped");
    EXPECT(d.cuMemUnmap(va, 2 * MIB), CUDA_ERROR_INVALID_VALUE, "cuMemUnmap of half a mapping");
    EXPECT(d.cuMemUnmap(va, size), CUDA_SUCCESS, "cuMemUnmap");
    EXPECT(d.cuMemcpyDtoH(buf, va, sizeof buf), CUDA_ERROR_INVALID_VALUE, "copy after unmap");
    EXPECT(d.cuMemAddressFree(va, 4 * MIB), CUDA_ERROR_INVALID_VALUE, "cuMemAddressFree with the wrong size");
    EXPECT(d.cuMemAddressFree(va + 2 * MIB, 6 * MIB), CUDA_ERROR_INVALID_VALUE, "cuMemAddressFree inside a reservation");
    EXPECT(d.cuMemAddressFree(va, 8 * MIB), CUDA_SUCCESS, "cuMemAddressFree");
    EXPECT(d.cuMemRelease(h), CUDA_SUCCESS, "cuMemRelease of the creator's handle");
    check(count_files(state) == 0, "the creator's release removes the file");
    check(holds_pattern(va2, size, 1), "the other mapping stays valid after the release, as the driver keeps mapped memory");
    EXPECT(d.cuMemRelease(h), CUDA_ERROR_INVALID_VALUE, "releasing a handle twice");
    EXPECT(d.cuMemRelease(0xdeadbeef), CUDA_ERROR_INVALID_VALUE, "releasing an unknown handle");
    unmap_free(va2, size);
    REQUIRE_OK(d.cuMemRelease(h2));
    REQUIRE_OK(d.cuMemGetInfo(&free_b, &total_b));
    check(free_b == TOTAL_MEMORY, "all memory free again");
    check_nothing_live("after everything was released");

    REQUIRE_OK(d.cuDevicePrimaryCtxRelease(0));
    EXPECT(d.cuMemGetInfo(&free_b, &total_b), CUDA_ERROR_INVALID_CONTEXT, "cuMemGetInfo once the primary context is released");
    EXPECT(d.cuDevicePrimaryCtxRelease(0), CUDA_ERROR_INVALID_CONTEXT, "releasing an unretained primary context");
    EXPECT(d.cuCtxSetCurrent((CUcontext)(uintptr_t)0x1234), CUDA_ERROR_INVALID_CONTEXT, "cuCtxSetCurrent of a stranger");
}

/* Concurrent probes in one process: the fake is thread-safe and its counts stay exact. */
static CUcontext shared_ctx;
static void *thread_probe(void *arg) {
    int *failures = arg;
    if (d.cuCtxSetCurrent(shared_ctx) != CUDA_SUCCESS) (*failures)++;
    for (int i = 0; i < 10; i++) {
        CUmemGenericAllocationHandle h, h2;
        CUmemFabricHandle fh;
        CUdeviceptr va;
        int ok = create(&h, 2 * MIB, 0, CU_MEM_HANDLE_TYPE_FABRIC) == CUDA_SUCCESS &&
                 d.cuMemExportToShareableHandle(&fh, h, CU_MEM_HANDLE_TYPE_FABRIC, 0) == CUDA_SUCCESS &&
                 d.cuMemImportFromShareableHandle(&h2, &fh, CU_MEM_HANDLE_TYPE_FABRIC) == CUDA_SUCCESS &&
                 map_rw(h2, 2 * MIB, &va) == CUDA_SUCCESS && write_pattern(va, 2 * MIB, i) == CUDA_SUCCESS &&
                 holds_pattern(va, 2 * MIB, i) && d.cuMemUnmap(va, 2 * MIB) == CUDA_SUCCESS &&
                 d.cuMemAddressFree(va, 2 * MIB) == CUDA_SUCCESS && d.cuMemRelease(h2) == CUDA_SUCCESS &&
                 d.cuMemRelease(h) == CUDA_SUCCESS;
        if (!ok) (*failures)++;
    }
    return NULL;
}

static void t_threads(void *arg) {
    const char *state = arg;
    if (!open_driver(0)) return;
    REQUIRE_OK(d.cuDevicePrimaryCtxRetain(&shared_ctx, 0));
    pthread_t threads[6];
    int failures[6] = {0};
    for (int i = 0; i < 6; i++) pthread_create(&threads[i], NULL, thread_probe, &failures[i]);
    int total = 0;
    for (int i = 0; i < 6; i++) {
        pthread_join(threads[i], NULL);
        total += failures[i];
    }
    check(total == 0, "6 threads x 10 create/export/import/map/write/read/release cycles (%d failed)", total);
    check_nothing_live("after the threads");
    check(count_files(state) == 0, "state directory empty after the threads");
}

/* Page-locked host memory, as the shim's pattern staging uses it: needs a context, copies like any host memory,
 * freed once, and what is left is freed with the context. */
static void t_pinned(void *arg) {
    (void)arg;
    void *p = NULL;
    if (!require(d.cuInit(0) == CUDA_SUCCESS, "cuInit")) return;
    EXPECT(d.cuMemHostAlloc(&p, 2 * MIB, 0), CUDA_ERROR_INVALID_CONTEXT, "cuMemHostAlloc without a context");
    if (!open_driver(0)) return;
    EXPECT(d.cuMemHostAlloc(NULL, 2 * MIB, 0), CUDA_ERROR_INVALID_VALUE, "cuMemHostAlloc(NULL)");
    EXPECT(d.cuMemHostAlloc(&p, 0, 0), CUDA_ERROR_INVALID_VALUE, "cuMemHostAlloc of 0 bytes");
    EXPECT(d.cuMemHostAlloc(&p, 2 * MIB, 8), CUDA_ERROR_INVALID_VALUE, "cuMemHostAlloc with flag 8 (none such)");
    EXPECT(d.cuMemHostAlloc(&p, 2 * MIB, 0), CUDA_SUCCESS, "cuMemHostAlloc 2 MiB");
    CUmemGenericAllocationHandle h;
    CUdeviceptr va;
    REQUIRE_OK(create(&h, 2 * MIB, 0, CU_MEM_HANDLE_TYPE_FABRIC));
    REQUIRE_OK(map_rw(h, 2 * MIB, &va));
    fill(p, 2 * MIB, 7);
    EXPECT(d.cuMemcpyHtoD(va, p, 2 * MIB), CUDA_SUCCESS, "HtoD from pinned memory");
    check(holds_pattern(va, 2 * MIB, 7), "the pinned buffer's bytes landed");
    memset(p, 0, 2 * MIB);
    EXPECT(d.cuMemcpyDtoH(p, va, 2 * MIB), CUDA_SUCCESS, "DtoH into pinned memory");
    unsigned char *want = malloc(2 * MIB);
    if (want) {
        fill(want, 2 * MIB, 7);
        check(memcmp(p, want, 2 * MIB) == 0, "the pinned buffer holds what was read");
    }
    free(want);
    unmap_free(va, 2 * MIB);
    REQUIRE_OK(d.cuMemRelease(h));
    check(info_number("liveHostAllocations") == 1, "fakecudaInfo counts 1 host allocation");
    EXPECT(d.cuMemFreeHost(p), CUDA_SUCCESS, "cuMemFreeHost");
    EXPECT(d.cuMemFreeHost(p), CUDA_ERROR_INVALID_VALUE, "cuMemFreeHost twice");
    EXPECT(d.cuMemHostAlloc(&p, 64, 0), CUDA_SUCCESS, "one more, left to the context");
    REQUIRE_OK(d.cuDevicePrimaryCtxRelease(0));
    check(info_number("liveHostAllocations") == 0, "the context's destruction freed its host memory (%ld left)",
          info_number("liveHostAllocations"));
}

/* The one kernel the fake knows, the shim's pattern fill: found by name in PTX text, run on the host with a copy's
 * access rules, gone with its context. */
static void t_kernel(void *arg) {
    (void)arg;
    static const char ptx[] = ".version 7.0\n.target sm_70\n.address_size 64\n"
                              ".visible .entry imexprobe_pattern_fill(\n.param .u64 a\n)\n{\nret;\n}\n";
    CUmodule mod = NULL;
    CUfunction fn = NULL;
    if (!require(d.cuInit(0) == CUDA_SUCCESS, "cuInit")) return;
    EXPECT(d.cuModuleLoadData(&mod, ptx), CUDA_ERROR_INVALID_CONTEXT, "cuModuleLoadData without a context");
    if (!open_driver(0)) return;
    EXPECT(d.cuModuleLoadData(&mod, "not an image"), CUDA_ERROR_INVALID_IMAGE, "cuModuleLoadData of text that is no PTX");
    EXPECT(d.cuModuleLoadData(NULL, ptx), CUDA_ERROR_INVALID_VALUE, "cuModuleLoadData(NULL)");
    EXPECT(d.cuModuleLoadData(&mod, ptx), CUDA_SUCCESS, "cuModuleLoadData of the fill's PTX");
    EXPECT(d.cuModuleGetFunction(&fn, mod, "other"), CUDA_ERROR_NOT_FOUND, "a function the module lacks");
    EXPECT(d.cuModuleGetFunction(&fn, mod, "imexprobe_pattern_fill"), CUDA_SUCCESS, "cuModuleGetFunction");
    CUmemGenericAllocationHandle h;
    CUdeviceptr va;
    REQUIRE_OK(create(&h, 4 * MIB, 0, CU_MEM_HANDLE_TYPE_FABRIC));
    REQUIRE_OK(map_rw(h, 4 * MIB, &va));
    unsigned long long words = 4 * MIB / 8, seed = 0x5eed0000ULL + (unsigned long long)getpid(), first = 0;
    CUdeviceptr p = va;
    void *params[] = {&p, &words, &seed, &first};
    EXPECT(d.cuLaunchKernel(fn, 1024, 1, 1, 2048, 1, 1, 0, NULL, params, NULL), CUDA_ERROR_INVALID_VALUE,
           "a block of 2048 threads");
    EXPECT(d.cuLaunchKernel(fn, 1024, 1, 1, 256, 1, 1, 0, NULL, NULL, NULL), CUDA_ERROR_INVALID_VALUE, "no parameters");
    CUdeviceptr off_end = va + 2 * MIB;
    void *past[] = {&off_end, &words, &seed, &first};
    EXPECT(d.cuLaunchKernel(fn, 1024, 1, 1, 256, 1, 1, 0, NULL, past, NULL), CUDA_ERROR_ILLEGAL_ADDRESS,
           "a fill running past the mapping");
    EXPECT(d.cuLaunchKernel(fn, 1024, 1, 1, 256, 1, 1, 0, NULL, params, NULL), CUDA_SUCCESS, "cuLaunchKernel: the fill");
    uint64_t *back = malloc(4 * MIB);
    if (back && REQUIRE_OK(d.cuMemcpyDtoH(back, va, 4 * MIB)))
        check(pattern_first_mismatch(back, words, seed, 0) == words, "the device holds pattern.h's words of the seed");
    free(back);
    /* The compare: each block's first differing word into page-locked memory, the least of them the first. */
    static const char both[] = ".version 7.0\n.target sm_70\n.address_size 64\n"
                               ".visible .entry imexprobe_pattern_fill(\n.param .u64 a\n)\n{\nret;\n}\n"
                               ".visible .entry imexprobe_pattern_compare(\n.param .u64 a\n)\n{\nret;\n}\n";
    CUmodule mod2 = NULL;
    CUfunction cmp = NULL;
    EXPECT(d.cuModuleGetFunction(&cmp, mod, "imexprobe_pattern_compare"), CUDA_ERROR_NOT_FOUND,
           "a fill-only module has no compare");
    REQUIRE_OK(d.cuModuleLoadData(&mod2, both));
    EXPECT(d.cuModuleGetFunction(&cmp, mod2, "imexprobe_pattern_compare"), CUDA_SUCCESS, "cuModuleGetFunction(compare)");
    void *answer_mem = NULL;
    REQUIRE_OK(d.cuMemHostAlloc(&answer_mem, 1024 * 8, 0));
    uint64_t *answer = answer_mem;
    uint64_t *plain = malloc(1024 * 8);
    void *cparams[] = {&p, &words, &seed, &first, &answer};
    void *cplain[] = {&p, &words, &seed, &first, &plain};
    EXPECT(d.cuLaunchKernel(cmp, 1024, 1, 1, 256, 1, 1, 0, NULL, cplain, NULL), CUDA_ERROR_ILLEGAL_ADDRESS,
           "a compare answering into pageable memory");
    EXPECT(d.cuLaunchKernel(cmp, 1024, 1, 1, 256, 1, 1, 0, NULL, cparams, NULL), CUDA_SUCCESS, "the compare");
    uint64_t least = ~0ULL;
    for (int b = 0; b < 1024; b++) least = answer[b] < least ? answer[b] : least;
    check(least == ~0ULL, "the compare finds every word of the seed (least %llu)", (unsigned long long)least);
    srand((unsigned)getpid());
    size_t at = 1 + (size_t)rand() % (words - 2), later = at + 1 + (size_t)rand() % (words - at - 1);
    uint64_t bad = ~pattern_word(seed, at);
    REQUIRE_OK(d.cuMemcpyHtoD(va + at * 8, &bad, 8));
    if (later < words) REQUIRE_OK(d.cuMemcpyHtoD(va + later * 8, &bad, 8));
    EXPECT(d.cuLaunchKernel(cmp, 1024, 1, 1, 256, 1, 1, 0, NULL, cparams, NULL), CUDA_SUCCESS, "the compare again");
    least = ~0ULL;
    for (int b = 0; b < 1024; b++) least = answer[b] < least ? answer[b] : least;
    check(least == at, "the compare's least answer is the first changed word (%llu, changed %zu)",
          (unsigned long long)least, at);
    free(plain);
    REQUIRE_OK(d.cuMemFreeHost(answer_mem));
    REQUIRE_OK(d.cuModuleUnload(mod2));
    REQUIRE_OK(set_access(va, 4 * MIB, 0, CU_MEM_ACCESS_FLAGS_PROT_READ));
    EXPECT(d.cuLaunchKernel(fn, 1024, 1, 1, 256, 1, 1, 0, NULL, params, NULL), CUDA_ERROR_ILLEGAL_ADDRESS,
           "a fill of read-only memory");
    unmap_free(va, 4 * MIB);
    REQUIRE_OK(d.cuMemRelease(h));
    REQUIRE_OK(d.cuDevicePrimaryCtxRelease(0));
    EXPECT(d.cuModuleUnload(mod), CUDA_ERROR_INVALID_HANDLE, "the module went with its context");
}

static void memory(void) {
    snprintf(scenario, sizeof scenario, "%s", "memory"); /* checks made by the parent */
    char dir[600], channels[700], state[700];
    snprintf(dir, sizeof dir, "%s/memory", root);
    snprintf(channels, sizeof channels, "%s/channels", dir);
    snprintf(state, sizeof state, "%s/state", dir);
    make_channel_dir(channels, (const int[]){0}, 1);
    struct env e = base_env("memory", channels);
    run("memory", &e, t_memory, state);
    run("threads", &e, t_threads, state);
    run("pinned", &e, t_pinned, state);
    run("kernel", &e, t_kernel, state);
}

/* ---- 4. across processes: fabric export -> import -> read-back -> write-back, and POSIX_FD ----------- */

static void cross_process(void) {
    snprintf(scenario, sizeof scenario, "%s", "cross"); /* checks made by the parent */
    char channels[700], state[700];
    snprintf(channels, sizeof channels, "%s/cross/channels", root);
    snprintf(state, sizeof state, "%s/cross/state", root);
    make_channel_dir(channels, (const int[]){0}, 1);
    struct env e = base_env("cross", channels);
    struct exporter x;
    int started = start_exporter(&x, "exporter", &e, 0, 64 * MIB);
    if (!check(started == 0, "exporter process: create 64 MiB FABRIC, map, write, export (%d)", x.rc)) return;
    check(count_files(state) == 1, "the live allocation is one file in the state directory");
    import_case("importer", &e, &x, CUDA_SUCCESS, 1, "import in another process");
    check(exporter_sees_writeback(&x), "the exporter reads the importer's write-back");
    stop_exporter(&x, 'q');
    check(count_files(state) == 0, "state directory empty after the exporter released");
}

/* POSIX_FD travels over SCM_RIGHTS between processes of one host. */
static int send_fd(int sock, int fd) {
    char byte = 'f';
    struct iovec iov = {&byte, 1};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } u;
    memset(&u, 0, sizeof u);
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof fd);
    return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock) {
    char byte;
    struct iovec iov = {&byte, 1};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } u;
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
    if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1) return -1;
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    if (!c || c->cmsg_type != SCM_RIGHTS) return -1;
    int fd;
    memcpy(&fd, CMSG_DATA(c), sizeof fd);
    return fd;
}

static int sockets[2];

static void t_posix_exporter(void *arg) {
    (void)arg;
    close(sockets[1]);
    if (!open_driver(0)) return;
    CUmemGenericAllocationHandle h;
    CUdeviceptr va;
    int fd = -1;
    REQUIRE_OK(create(&h, 2 * MIB, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
    REQUIRE_OK(map_rw(h, 2 * MIB, &va));
    REQUIRE_OK(write_pattern(va, 2 * MIB, 1));
    REQUIRE_OK(d.cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    require(send_fd(sockets[0], fd) == 0, "send the fd over SCM_RIGHTS");
    close(fd);
    char done;
    if (read_full(sockets[0], &done, 1) == 0) check(holds_pattern(va, 2 * MIB, 2), "POSIX_FD: the exporter sees the write-back");
    unmap_free(va, 2 * MIB);
    REQUIRE_OK(d.cuMemRelease(h));
    check_nothing_live("in the POSIX_FD exporter");
}

static void t_posix_importer(void *arg) {
    (void)arg;
    close(sockets[0]);
    if (!open_driver(0)) return;
    int fd = recv_fd(sockets[1]);
    CUmemGenericAllocationHandle h;
    CUdeviceptr va;
    EXPECT(d.cuMemImportFromShareableHandle(&h, (void *)(intptr_t)fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
           CUDA_SUCCESS, "POSIX_FD import of an fd received over SCM_RIGHTS");
    close(fd); /* the imported handle keeps its own reference, like a real one */
    REQUIRE_OK(map_rw(h, 2 * MIB, &va));
    check(holds_pattern(va, 2 * MIB, 1), "POSIX_FD: the importer reads the exporter's bytes");
    REQUIRE_OK(write_pattern(va, 2 * MIB, 2));
    char done = 1;
    if (write_full(sockets[1], &done, 1) != 0) check(0, "signal the exporter");
    unmap_free(va, 2 * MIB);
    REQUIRE_OK(d.cuMemRelease(h));
    check_nothing_live("in the POSIX_FD importer");
}

static void posix_fd(void) {
    snprintf(scenario, sizeof scenario, "%s", "posix"); /* checks made by the parent */
    char state[700];
    snprintf(state, sizeof state, "%s/posix/state", root);
    struct env e = base_env("posix", "/nonexistent-channel-dir");
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0) return;
    pid_t a = spawn("posix", &e, t_posix_exporter, NULL);
    pid_t b = spawn("posix", &e, t_posix_importer, NULL);
    close(sockets[0]);
    close(sockets[1]);
    reap(a, "posix exporter");
    reap(b, "posix importer");
    check(count_files(state) == 0, "state directory empty after the POSIX_FD exchange");
}

/* ---- 5. IMEX channels: the measured table -------------------------------------------------------------- */

static void t_create_needs_channel(void *arg) {
    const char *channels = arg;
    if (!open_driver(0)) return;
    CUmemGenericAllocationHandle h;
    char from[800], to[800];
    snprintf(from, sizeof from, "%s/channel0", channels);
    snprintf(to, sizeof to, "%s/hidden0", channels);
    EXPECT(create(&h, 2 * MIB, 0, CU_MEM_HANDLE_TYPE_FABRIC), CUDA_SUCCESS, "cuMemCreate FABRIC with channel0");
    REQUIRE_OK(d.cuMemRelease(h));
    rename(from, to);
    EXPECT(create(&h, 2 * MIB, 0, CU_MEM_HANDLE_TYPE_FABRIC), CUDA_ERROR_NOT_PERMITTED,
           "cuMemCreate FABRIC after channel0 is removed at run time (measured: 800)");
    rename(to, from);
    EXPECT(create(&h, 2 * MIB, 0, CU_MEM_HANDLE_TYPE_FABRIC), CUDA_SUCCESS, "cuMemCreate FABRIC once channel0 is back");
    REQUIRE_OK(d.cuMemRelease(h));
    check_nothing_live("after the channel run");
}

static void t_create_without_channel(void *arg) {
    const char *what = arg;
    if (!open_driver(0)) return;
    CUmemGenericAllocationHandle h;
    EXPECT(create(&h, 2 * MIB, 0, CU_MEM_HANDLE_TYPE_FABRIC), CUDA_ERROR_NOT_PERMITTED, "cuMemCreate FABRIC, %s (measured: 800)", what);
}

static void channels(void) {
    snprintf(scenario, sizeof scenario, "%s", "chan"); /* checks made by the parent */
    char dir[600], path[800], state[700];
    snprintf(dir, sizeof dir, "%s/chan", root);
    snprintf(state, sizeof state, "%s/state", dir);

    snprintf(path, sizeof path, "%s/only0", dir);
    make_channel_dir(path, (const int[]){0}, 1);
    struct env e = base_env("chan", path);
    run("chan", &e, t_create_needs_channel, path);

    snprintf(path, sizeof path, "%s/empty", dir);
    mkdirs(path);
    e = base_env("chan", path);
    run("chan", &e, t_create_without_channel, "empty channel directory");
    snprintf(path, sizeof path, "%s/missing", dir);
    e = base_env("chan", path);
    run("chan", &e, t_create_without_channel, "channel directory hidden");
    snprintf(path, sizeof path, "%s/notachannel/channel0", dir);
    mkdirs(path); /* a directory named channel0 is no channel */
    snprintf(path, sizeof path, "%s/notachannel", dir);
    e = base_env("chan", path);
    run("chan", &e, t_create_without_channel, "channel0 is a directory");
    snprintf(path, sizeof path, "%s/oddnames", dir);
    make_channel_dir(path, (const int[]){2048, 99999}, 2);
    snprintf(path, sizeof path, "%s/oddnames/channel01", dir);
    touch(path);
    snprintf(path, sizeof path, "%s/oddnames", dir);
    e = base_env("chan", path);
    run("chan", &e, t_create_without_channel, "only channel2048, channel99999, channel01");

    /* Measured, exporter -> importer channel sets: an export binds the exporter's lowest channel. */
    static const struct {
        int exp[2], nexp, imp[2], nimp;
        CUresult want;
    } table[] = {
        {{0, 1}, 2, {1}, 1, CUDA_ERROR_NOT_PERMITTED}, {{1}, 1, {0, 1}, 2, CUDA_SUCCESS},
        {{0}, 1, {0, 1}, 2, CUDA_SUCCESS},             {{0, 1}, 2, {0}, 1, CUDA_SUCCESS},
        {{0}, 1, {1}, 1, CUDA_ERROR_NOT_PERMITTED},    {{2047}, 1, {2047}, 1, CUDA_SUCCESS},
        {{0}, 1, {0}, 0, CUDA_ERROR_NOT_PERMITTED},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        char exp_dir[800], imp_dir[800], label[128];
        snprintf(exp_dir, sizeof exp_dir, "%s/row%zu-exporter", dir, i);
        snprintf(imp_dir, sizeof imp_dir, "%s/row%zu-importer", dir, i);
        make_channel_dir(exp_dir, table[i].exp, table[i].nexp);
        make_channel_dir(imp_dir, table[i].imp, table[i].nimp);
        int n = snprintf(label, sizeof label, "channels {");
        for (int k = 0; k < table[i].nexp; k++) n += snprintf(label + n, sizeof label - (size_t)n, "%s%d", k ? "," : "", table[i].exp[k]);
        n += snprintf(label + n, sizeof label - (size_t)n, "} -> {");
        for (int k = 0; k < table[i].nimp; k++) n += snprintf(label + n, sizeof label - (size_t)n, "%s%d", k ? "," : "", table[i].imp[k]);
        snprintf(label + n, sizeof label - (size_t)n, "}: import (measured)");
        struct env ex = base_env("chan", exp_dir), im = base_env("chan", imp_dir);
        struct exporter x;
        if (!require(start_exporter(&x, "chan", &ex, 0, 2 * MIB) == 0, "exporter for row %zu", i)) continue;
        import_case("chan", &im, &x, table[i].want, 1, label);
        stop_exporter(&x, 'q');
    }
    check(count_files(state) == 0, "state directory empty after the channel table");
}

/* ---- 6. handles: random, mutated, released, dead owner --------------------------------------------------- */

static unsigned long long rng_state = 0x243f6a8885a308d3ULL;
static unsigned long long rng(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void t_garbage(void *arg) {
    struct import_case *c = arg;
    if (!open_driver(0)) return;
    CUmemGenericAllocationHandle h;
    CUmemFabricHandle fh;
    int others = 0;
    for (int i = 0; i < 4000; i++) {
        for (int k = 0; k < 8; k++) {
            unsigned long long r = rng();
            memcpy(fh.data + 8 * k, &r, 8);
        }
        if (i % 2) memcpy(fh.data, "FKH1", 4); /* half of them get past the magic and look for a file */
        CUresult rc = d.cuMemImportFromShareableHandle(&h, &fh, CU_MEM_HANDLE_TYPE_FABRIC);
        if (rc != CUDA_ERROR_NOT_SUPPORTED) others++;
        if (rc == CUDA_SUCCESS) d.cuMemRelease(h);
    }
    check(others == 0, "4,000 random 64-byte handles -> 801, no crash (%d answered otherwise; measured: 801)", others);
    others = 0;
    int tried = 0;
    for (int byte = 0; byte < 64; byte++)
        for (int bit = 0; bit < 8; bit++) {
            fh = c->handle;
            fh.data[byte] ^= (unsigned char)(1u << bit);
            tried++;
            CUresult rc = d.cuMemImportFromShareableHandle(&h, &fh, CU_MEM_HANDLE_TYPE_FABRIC);
            if (rc != CUDA_ERROR_NOT_SUPPORTED) others++;
            if (rc == CUDA_SUCCESS) d.cuMemRelease(h);
        }
    check(others == 0, "%d one-bit mutations of a live handle -> 801 (%d answered otherwise; measured: 801)", tried, others);
    EXPECT(d.cuMemImportFromShareableHandle(&h, &c->handle, CU_MEM_HANDLE_TYPE_FABRIC), CUDA_SUCCESS,
           "the unmutated handle still imports");
    REQUIRE_OK(d.cuMemRelease(h));
    check_nothing_live("after the garbage");
}

static void t_gc_only(void *arg) {
    (void)arg;
    REQUIRE_OK(d.cuInit(0));
}

static void handles(void) {
    snprintf(scenario, sizeof scenario, "%s", "handles"); /* checks made by the parent */
    char dir[600], channels[700], state[700], path[800];
    snprintf(dir, sizeof dir, "%s/handles", root);
    snprintf(channels, sizeof channels, "%s/channels", dir);
    snprintf(state, sizeof state, "%s/state", dir);
    make_channel_dir(channels, (const int[]){0}, 1);
    struct env e = base_env("handles", channels);
    snprintf(path, sizeof path, "%s/none", dir);
    mkdirs(path);
    struct env no_channel = base_env("handles", path);

    struct exporter x;
    if (!require(start_exporter(&x, "handles", &e, 0, 2 * MIB) == 0, "exporter")) return;
    struct import_case c;
    memset(&c, 0, sizeof c);
    c.handle = x.handle;
    c.size = x.size;
    run("handles", &e, t_garbage, &c);
    import_case("handles", &no_channel, &x, CUDA_ERROR_NOT_PERMITTED, 0, "importer without any channel (measured: 800)");
    CUmemFabricHandle released = x.handle;
    stop_exporter(&x, 'q');
    struct exporter gone = x;
    gone.handle = released;
    import_case("handles", &e, &gone, CUDA_ERROR_NOT_SUPPORTED, 0, "released handle (measured: 801)");
    import_case("handles", &no_channel, &gone, CUDA_ERROR_NOT_PERMITTED, 0,
                "released handle, importer without channel: the channel is checked first (model)");

    if (!require(start_exporter(&x, "handles", &e, 0, 2 * MIB) == 0, "exporter 2")) return;
    stop_exporter(&x, 'x');
    check(count_files(state) == 1, "an exporter that exits without releasing leaves its file");
    import_case("handles", &e, &x, CUDA_ERROR_NOT_SUPPORTED, 0, "handle of an exporter that exited (measured: 801)");
    check(count_files(state) == 0, "the import removed the dead owner's file (same host)");

    if (!require(start_exporter(&x, "handles", &e, 0, 2 * MIB) == 0, "exporter 3")) return;
    stop_exporter(&x, 'x');
    run("handles", &e, t_gc_only, NULL);
    check(count_files(state) == 0, "cuInit removes files of dead owners on the same host");
    snprintf(path, sizeof path, "%s/alloc-0123456789abcdef0123456789abcdef", state);
    touch(path);
    snprintf(path, sizeof path, "%s/notes.txt", state);
    touch(path);
    run("handles", &e, t_gc_only, NULL);
    check(count_files(state) == 2, "cuInit leaves a fresh incomplete file and foreign files alone");
    snprintf(path, sizeof path, "%s/alloc-0123456789abcdef0123456789abcdef", state);
    unlink(path);
    snprintf(path, sizeof path, "%s/notes.txt", state);
    unlink(path);
}

/* ---- 7. the seed scenario (one host, two GPUs) and other hosts --------------------------------------------------------- */

static void seed_model(void) {
    snprintf(scenario, sizeof scenario, "%s", "seed"); /* checks made by the parent */
    char dir[600], channels[700], state[700], path[800];
    snprintf(dir, sizeof dir, "%s/seed", root);
    snprintf(channels, sizeof channels, "%s/channels", dir);
    snprintf(state, sizeof state, "%s/state", dir);
    make_channel_dir(channels, (const int[]){0}, 1);
    struct env e = base_env("seed", channels);
    env_set(&e, "FAKECUDA_GPUS", "2");
    struct env ex = e;
    env_set(&ex, "CUDA_VISIBLE_DEVICES", "0");
    struct exporter x;
    if (!require(start_exporter(&x, "seed", &ex, 0, 2 * MIB) == 0, "exporter on GPU 0")) return;

    /* Measured on two H200s (driver 580.159.04): CUDA_VISIBLE_DEVICES alone does not stop a same-host import;
     * hiding the exporter GPU's device node does (FABRIC 801). */
    struct env im = e;
    env_set(&im, "CUDA_VISIBLE_DEVICES", "1");
    import_case("seed", &im, &x, CUDA_SUCCESS, 1, "importer limited to GPU 1 by CUDA_VISIBLE_DEVICES alone imports");
    snprintf(path, sizeof path, "%s/dev", dir);
    mkdirs(path);
    snprintf(path, sizeof path, "%s/dev/nvidia1", dir);
    touch(path);
    im = e;
    env_set(&im, "FAKECUDA_DEV_DIR", "%s/dev", dir);
    import_case("seed", &im, &x, CUDA_ERROR_NOT_SUPPORTED, 0,
                "GPU 0's device node hidden by FAKECUDA_DEV_DIR: 801, as on two H200s");
    im = e;
    env_set(&im, "FAKECUDA_DEV_DIR", "%s/dev", dir);
    env_set(&im, "FAKECUDA_SAME_NODE_101", "1");
    import_case("seed", &im, &x, CUDA_ERROR_NOT_SUPPORTED, 0, "the retired FAKECUDA_SAME_NODE_101 changes nothing");
    snprintf(path, sizeof path, "%s/dev/nvidia0", dir);
    touch(path);
    im = e;
    env_set(&im, "FAKECUDA_DEV_DIR", "%s/dev", dir);
    env_set(&im, "CUDA_VISIBLE_DEVICES", "1");
    import_case("seed", &im, &x, CUDA_SUCCESS, 0, "both device nodes present, GPU 1 visible: imports");
    check(exporter_sees_writeback(&x), "the exporter sees the write-back of the importer on GPU 1");
    stop_exporter(&x, 'q');
    check(count_files(state) == 0, "state directory empty after the seed model");
}

static void write_host_config(const char *path, const char *host, int state, const char *cluster, int clique) {
    char text[512];
    snprintf(text, sizeof text, "host=%s\ngpu.0.fabric.state=%d\ngpu.0.fabric.cluster=%s\ngpu.0.fabric.clique=%d\n", host,
             state, cluster, clique);
    write_file(path, text);
}

static void other_hosts(void) {
    snprintf(scenario, sizeof scenario, "%s", "hosts"); /* checks made by the parent */
    char dir[600], channels[700], state[700], conf[6][800];
    snprintf(dir, sizeof dir, "%s/hosts", root);
    snprintf(channels, sizeof channels, "%s/channels", dir);
    snprintf(state, sizeof state, "%s/state", dir);
    make_channel_dir(channels, (const int[]){0}, 1);
    mkdirs(dir);
    const char *cluster = "11111111-2222-3333-4444-555555555555";
    for (int i = 0; i < 6; i++) snprintf(conf[i], sizeof conf[i], "%s/host%d.conf", dir, i);
    write_host_config(conf[0], "node-a", 3, cluster, 1);
    write_host_config(conf[1], "node-b", 3, cluster, 1);
    write_host_config(conf[2], "node-c", 3, cluster, 2);
    write_host_config(conf[3], "node-d", 3, "99999999-2222-3333-4444-555555555555", 1);
    write_host_config(conf[4], "node-e", 0, cluster, 1);
    write_host_config(conf[5], "node-f", 2, cluster, 1);

    struct env ex = base_env("hosts", channels);
    env_set(&ex, "FAKECUDA_CONFIG", "%s", conf[0]);
    struct exporter x;
    if (!require(start_exporter(&x, "hosts", &ex, 0, 2 * MIB) == 0, "exporter on node-a")) return;
    static const struct {
        CUresult want;
        const char *what;
    } rows[] = {
        {CUDA_SUCCESS, "node-a -> node-b, both fabric COMPLETED, same cluster and clique (model)"},
        {CUDA_ERROR_NOT_SUPPORTED, "node-a -> node-c, another clique: 801 (model)"},
        {CUDA_ERROR_NOT_SUPPORTED, "node-a -> node-d, another cluster: 801 (model)"},
        {CUDA_ERROR_NOT_SUPPORTED, "node-a -> node-e, importer fabric NOT_SUPPORTED: 801 (model)"},
        {CUDA_ERROR_NOT_SUPPORTED, "node-a -> node-f, importer fabric IN_PROGRESS: 801 (model)"},
    };
    for (int i = 0; i < 5; i++) {
        struct env im = base_env("hosts", channels);
        env_set(&im, "FAKECUDA_CONFIG", "%s", conf[i + 1]);
        import_case("hosts", &im, &x, rows[i].want, rows[i].want == CUDA_SUCCESS, rows[i].what);
    }
    check(exporter_sees_writeback(&x), "node-a sees node-b's write-back");
    stop_exporter(&x, 'q');

    /* An exporter without fabric cannot reach other hosts, even if the importer has one. */
    ex = base_env("hosts", channels);
    env_set(&ex, "FAKECUDA_CONFIG", "%s", conf[4]);
    if (!require(start_exporter(&x, "hosts", &ex, 0, 2 * MIB) == 0, "exporter on node-e")) return;
    struct env im = base_env("hosts", channels);
    env_set(&im, "FAKECUDA_CONFIG", "%s", conf[1]);
    import_case("hosts", &im, &x, CUDA_ERROR_NOT_SUPPORTED, 0, "node-e (no fabric) -> node-b: 801 (model)");
    stop_exporter(&x, 'x');
    run("hosts", &im, t_gc_only, NULL);
    check(count_files(state) == 1, "cuInit on node-b leaves node-e's dead file: only the same host collects");
    run("hosts", &ex, t_gc_only, NULL);
    check(count_files(state) == 0, "cuInit on node-e collects it");
}

/* ---- 8. faults --------------------------------------------------------------------------------------- */

static void t_fault_code(void *arg) {
    const char *state = arg;
    if (!open_driver(0)) return;
    CUmemGenericAllocationHandle h;
    EXPECT(create(&h, 2 * MIB, 0, CU_MEM_HANDLE_TYPE_FABRIC), CUDA_ERROR_OUT_OF_MEMORY, "FAKECUDA_FAULTS=cuMemCreate=2");
    check(count_files(state) == 0 && info_number("liveAllocations") == 0, "a faulted cuMemCreate does no work");
    CUdeviceptr va;
    EXPECT(d.cuMemAddressReserve(&va, 2 * MIB, 0, 0, 0), CUDA_SUCCESS, "other entry points unaffected");
    long t0 = now_ms();
    EXPECT(d.cuMemAddressFree(va, 2 * MIB), CUDA_SUCCESS, "cuMemAddressFree=delay:200 does the work");
    long took = now_ms() - t0;
    check(took >= 195, "... after the delay (%ld ms)", took);
    REQUIRE_OK(d.nvmlInit_v2());
    nvmlDevice_t dev;
    REQUIRE_OK(d.nvmlDeviceGetHandleByIndex_v2(0, &dev));
    nvmlGpuFabricInfo_v3_t v3;
    memset(&v3, 0, sizeof v3);
    v3.version = nvmlGpuFabricInfo_v3;
    EXPECT(d.nvmlDeviceGetGpuFabricInfoV(dev, &v3), NVML_ERROR_NOT_SUPPORTED, "NVML fault nvmlDeviceGetGpuFabricInfoV=3");
}

static void t_fault_init(void *arg) {
    (void)arg;
    EXPECT(d.cuInit(0), CUDA_ERROR_NO_DEVICE, "FAKECUDA_FAULTS=cuInit=100");
    int n;
    EXPECT(d.cuDeviceGetCount(&n), CUDA_ERROR_NOT_INITIALIZED, "nothing initialised after the faulted cuInit");
    EXPECT(d.nvmlInit_v2(), 9, "NVML fault nvmlInit_v2=9");
}

static void t_fault_malformed(void *arg) {
    const char *log = arg;
    if (!open_driver(0)) return;
    CUmemGenericAllocationHandle h;
    EXPECT(create(&h, 2 * MIB, 0, CU_MEM_HANDLE_TYPE_FABRIC), CUDA_SUCCESS, "malformed fault items are ignored");
    REQUIRE_OK(d.cuMemRelease(h));
    EXPECT(d.cuMemMap(0, 2 * MIB, 0, 1, 0), 7, "the well-formed item beside them applies (cuMemMap=7)");
    int messages = count_messages(log, "libcuda");
    check(messages == 5, "each malformed item reported once as \"fakecuda: libcuda:\" (%d of 5)", messages);
}

struct hang {
    CUcontext ctx;
    CUmemFabricHandle handle;
    CUresult rc;
    int done;
};

static void *hang_thread(void *arg) {
    struct hang *hg = arg;
    d.cuCtxSetCurrent(hg->ctx);
    CUmemGenericAllocationHandle h = 0;
    hg->rc = d.cuMemImportFromShareableHandle(&h, &hg->handle, CU_MEM_HANDLE_TYPE_FABRIC);
    if (hg->rc == CUDA_SUCCESS) d.cuMemRelease(h);
    __atomic_store_n(&hg->done, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

static void t_fault_file(void *arg) {
    const char *file = arg;
    if (!open_driver(0)) return;
    CUmemGenericAllocationHandle h;
    struct hang hg;
    memset(&hg, 0, sizeof hg);
    REQUIRE_OK(create(&h, 2 * MIB, 0, CU_MEM_HANDLE_TYPE_FABRIC));
    REQUIRE_OK(d.cuMemExportToShareableHandle(&hg.handle, h, CU_MEM_HANDLE_TYPE_FABRIC, 0));
    REQUIRE_OK(d.cuDevicePrimaryCtxRetain(&hg.ctx, 0));

    write_file(file, "cuMemSetAccess=1\n");
    CUdeviceptr va;
    REQUIRE_OK(d.cuMemAddressReserve(&va, 2 * MIB, 0, 0, 0));
    REQUIRE_OK(d.cuMemMap(va, 2 * MIB, 0, h, 0));
    EXPECT(set_access(va, 2 * MIB, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE), CUDA_ERROR_INVALID_VALUE,
           "fault file says cuMemSetAccess=1 (the users' INVALID_VALUE at set access)");
    write_file(file, "# cleared\n");
    EXPECT(set_access(va, 2 * MIB, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE), CUDA_SUCCESS, "fault file cleared: set access works");

    write_file(file, "cuMemImportFromShareableHandle=hang");
    pthread_t thread;
    pthread_create(&thread, NULL, hang_thread, &hg);
    sleep_ms(300);
    check(!__atomic_load_n(&hg.done, __ATOMIC_SEQ_CST), "import hangs while the fault file says hang");
    size_t free_b, total_b;
    EXPECT(d.cuMemGetInfo(&free_b, &total_b), CUDA_SUCCESS, "other calls go on during the hang (no lock held)");
    write_file(file, "cuMemImportFromShareableHandle=delay:50");
    long t0 = now_ms();
    while (!__atomic_load_n(&hg.done, __ATOMIC_SEQ_CST) && now_ms() - t0 < 10000) sleep_ms(5);
    pthread_join(thread, NULL);
    check(hg.done && hg.rc == CUDA_SUCCESS, "the hang ends once the file changes, and the import is done (%d)", hg.rc);
    unlink(file);
    EXPECT(d.cuMemUnmap(va, 2 * MIB), CUDA_SUCCESS, "a missing fault file means no faults");
    REQUIRE_OK(d.cuMemAddressFree(va, 2 * MIB));
    REQUIRE_OK(d.cuMemRelease(h));
    REQUIRE_OK(d.cuDevicePrimaryCtxRelease(0));
    check_nothing_live("after the fault-file run");
}

static void t_hang_forever(void *arg) {
    (void)arg;
    d.cuInit(0); /* FAKECUDA_FAULTS=cuInit=hang from the environment: never returns */
    check(0, "cuInit=hang from the environment returned");
}

static void faults(void) {
    snprintf(scenario, sizeof scenario, "%s", "faults"); /* checks made by the parent */
    char dir[600], channels[700], state[700], log[800], file[800];
    snprintf(dir, sizeof dir, "%s/faults", root);
    snprintf(channels, sizeof channels, "%s/channels", dir);
    snprintf(state, sizeof state, "%s/state", dir);
    make_channel_dir(channels, (const int[]){0}, 1);
    struct env e = base_env("faults", channels);
    env_set(&e, "FAKECUDA_FAULTS", "cuMemCreate=2, cuMemAddressFree=delay:200,nvmlDeviceGetGpuFabricInfoV=3");
    run("faults", &e, t_fault_code, state);
    e = base_env("faults", channels);
    env_set(&e, "FAKECUDA_FAULTS", "cuInit=100,nvmlInit_v2=9");
    run("faults", &e, t_fault_init, NULL);

    snprintf(log, sizeof log, "%s/malformed.log", dir);
    e = base_env("faults", channels);
    env_set(&e, "FAKECUDA_FAULTS", "cuMemCreate=abc,=5,cuInit=0,justtext,cuMemMap=7,cuMemUnmap=delay:x");
    run_logged("faults", &e, t_fault_malformed, log, log);

    snprintf(file, sizeof file, "%s/faults.txt", dir);
    e = base_env("faults", channels);
    env_set(&e, "FAKECUDA_FAULTS", "@%s", file);
    run("faults", &e, t_fault_file, file);

    e = base_env("faults", channels);
    env_set(&e, "FAKECUDA_FAULTS", "cuInit=hang");
    pid_t pid = spawn("faults", &e, t_hang_forever, NULL);
    sleep_ms(500);
    int status;
    check(waitpid(pid, &status, WNOHANG) == 0, "cuInit=hang from the environment blocks (still running after 500 ms)");
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    check(count_files(state) == 0, "state directory empty after the fault runs");
}

/* ---- main -------------------------------------------------------------------------------------------- */

static void remove_tree(const char *path) {
    DIR *dp = opendir(path);
    if (dp) {
        struct dirent *e;
        while ((e = readdir(dp)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
            char child[1200];
            snprintf(child, sizeof child, "%s/%s", path, e->d_name);
            remove_tree(child);
        }
        closedir(dp);
        rmdir(path);
    } else {
        unlink(path);
    }
}

/* ---- compute modes: gpu.0 EXCLUSIVE_PROCESS, gpu.1 PROHIBITED with MIG on, gpu.2 DEFAULT ------------------ */

static int modes_pipe[2][2]; /* [0]: holder -> parent ("holding"), [1]: parent -> holder ("release") */

static void t_modes_nvml(void *arg) {
    (void)arg;
    if (!REQUIRE_OK(d.nvmlInit_v2())) return;
    static const int want_mode[3] = {NVML_COMPUTEMODE_EXCLUSIVE_PROCESS, NVML_COMPUTEMODE_PROHIBITED,
                                     NVML_COMPUTEMODE_DEFAULT};
    static const unsigned int want_mig[3] = {NVML_DEVICE_MIG_DISABLE, NVML_DEVICE_MIG_ENABLE, NVML_DEVICE_MIG_DISABLE};
    for (unsigned int i = 0; i < 3; i++) {
        nvmlDevice_t dev;
        if (!REQUIRE_OK(d.nvmlDeviceGetHandleByIndex_v2(i, &dev))) continue;
        nvmlComputeMode_t mode = -1;
        EXPECT(d.nvmlDeviceGetComputeMode(dev, &mode), NVML_SUCCESS, "nvmlDeviceGetComputeMode, GPU %u", i);
        check(mode == want_mode[i], "GPU %u: compute mode %d from gpu.%u.compute_mode (want %d)", i, mode, i,
              want_mode[i]);
        unsigned int current = 9, pending = 9;
        EXPECT(d.nvmlDeviceGetMigMode(dev, &current, &pending), NVML_SUCCESS, "nvmlDeviceGetMigMode, GPU %u", i);
        check(current == want_mig[i] && pending == want_mig[i], "GPU %u: MIG mode current %u pending %u (want %u)", i,
              current, pending, want_mig[i]);
    }
    EXPECT(d.nvmlDeviceGetComputeMode(NULL, NULL), NVML_ERROR_INVALID_ARGUMENT, "compute mode of a NULL device");
    /* gpu.1.memory_used_mib=140000 (a job's memory), the others none */
    for (unsigned int i = 0; i < 3; i++) {
        nvmlDevice_t dev;
        if (!REQUIRE_OK(d.nvmlDeviceGetHandleByIndex_v2(i, &dev))) continue;
        nvmlMemory_t m = {0};
        EXPECT(d.nvmlDeviceGetMemoryInfo(dev, &m), NVML_SUCCESS, "nvmlDeviceGetMemoryInfo, GPU %u", i);
        unsigned long long used = i == 1 ? 140000ULL << 20 : 0;
        check(m.total == 143771ULL << 20 && m.used == used && m.free == m.total - used,
              "GPU %u: memory total %llu free %llu used %llu (want used %llu of an H200's)", i, m.total, m.free, m.used,
              used);
    }
    EXPECT(d.nvmlDeviceGetMemoryInfo(NULL, NULL), NVML_ERROR_INVALID_ARGUMENT, "memory of a NULL device");
    REQUIRE_OK(d.nvmlShutdown());
}

static void t_modes_holder(void *arg) {
    (void)arg;
    close(modes_pipe[0][0]);
    close(modes_pipe[1][1]);
    char c = 0;
    CUcontext ctx, again;
    CUdevice dev0;
    if (REQUIRE_OK(d.cuInit(0)) && REQUIRE_OK(d.cuDeviceGet(&dev0, 0))) {
        EXPECT(d.cuDevicePrimaryCtxRetain(&ctx, dev0), CUDA_SUCCESS, "EXCLUSIVE_PROCESS: the first process's context");
        EXPECT(d.cuDevicePrimaryCtxRetain(&again, dev0), CUDA_SUCCESS, "EXCLUSIVE_PROCESS: a second retain in the same process");
        c = 1;
    }
    if (write_full(modes_pipe[0][1], &c, 1) != 0 || read_full(modes_pipe[1][0], &c, 1) != 0) exit(1);
    REQUIRE_OK(d.cuDevicePrimaryCtxRelease(dev0));
    REQUIRE_OK(d.cuDevicePrimaryCtxRelease(dev0));
    check(info_number("liveContexts") == 0, "the holder released its context");
}

/* arg: the result expected for GPU 0 (46 while another process holds it, 0 after). */
static void t_modes_other(void *arg) {
    CUresult want0 = (CUresult)(intptr_t)arg;
    if (!REQUIRE_OK(d.cuInit(0))) return;
    CUdevice dev;
    CUcontext ctx;
    REQUIRE_OK(d.cuDeviceGet(&dev, 0));
    EXPECT(d.cuDevicePrimaryCtxRetain(&ctx, dev), want0, "EXCLUSIVE_PROCESS GPU 0, %s",
           want0 ? "another process holds it (CUDA_ERROR_DEVICE_UNAVAILABLE)" : "after the holder released it");
    if (want0 == CUDA_SUCCESS) REQUIRE_OK(d.cuDevicePrimaryCtxRelease(dev));
    REQUIRE_OK(d.cuDeviceGet(&dev, 1));
    EXPECT(d.cuDevicePrimaryCtxRetain(&ctx, dev), CUDA_ERROR_UNKNOWN, "PROHIBITED GPU 1 (cuda.h: CUDA_ERROR_UNKNOWN)");
    REQUIRE_OK(d.cuDeviceGet(&dev, 2));
    EXPECT(d.cuDevicePrimaryCtxRetain(&ctx, dev), CUDA_SUCCESS, "DEFAULT GPU 2");
    REQUIRE_OK(d.cuDevicePrimaryCtxRelease(dev));
    check(info_number("contextCreations") == (want0 == CUDA_SUCCESS ? 2 : 1),
          "only contexts that were made count as creations (%ld)", info_number("contextCreations"));
}

static void compute_modes(void) {
    snprintf(scenario, sizeof scenario, "%s", "modes");
    char dir[600], channels[700], conf[800];
    snprintf(dir, sizeof dir, "%s/modes", root);
    snprintf(channels, sizeof channels, "%s/channels", dir);
    snprintf(conf, sizeof conf, "%s/modes.conf", dir);
    make_channel_dir(channels, (const int[]){0}, 1);
    write_file(conf, "gpus=3\ngpu.0.compute_mode=3\ngpu.1.compute_mode=2\ngpu.1.mig=1\ngpu.2.compute_mode=0\n"
                     "gpu.2.compute_mode=1\n" /* EXCLUSIVE_THREAD is refused: GPU 2 stays DEFAULT */
                     "gpu.1.memory_used_mib=140000\ngpu.2.memory_used_mib=143772\n"); /* beyond the total: refused */
    struct env e = base_env("modes", channels);
    env_set(&e, "FAKECUDA_CONFIG", "%s", conf);
    char log[700];
    snprintf(log, sizeof log, "%s/nvml.log", dir);
    run_logged("modes-nvml", &e, t_modes_nvml, NULL, log);
    if (pipe(modes_pipe[0]) != 0 || pipe(modes_pipe[1]) != 0) {
        check(0, "pipes for the holder");
        return;
    }
    pid_t holder = spawn("modes-holder", &e, t_modes_holder, NULL);
    close(modes_pipe[0][1]);
    close(modes_pipe[1][0]);
    char c = 0;
    if (read_full(modes_pipe[0][0], &c, 1) == 0 && c == 1)
        run("modes-second", &e, t_modes_other, (void *)(intptr_t)CUDA_ERROR_DEVICE_UNAVAILABLE);
    else
        check(0, "the holder process made its context");
    c = 'r';
    if (write_full(modes_pipe[1][1], &c, 1) != 0) check(0, "tell the holder to release");
    reap(holder, "modes-holder");
    close(modes_pipe[0][0]);
    close(modes_pipe[1][1]);
    run("modes-after", &e, t_modes_other, (void *)(intptr_t)CUDA_SUCCESS);
}

/* ---- gpu.1.handle_type_fabric=0: a GPU that cannot take FABRIC handles (model, not measured) -------------- */

static void t_no_fabric(void *arg) {
    (void)arg;
    if (!open_driver(0)) return;
    CUdevice dev0, dev1;
    CUcontext ctx1;
    REQUIRE_OK(d.cuDeviceGet(&dev0, 0));
    REQUIRE_OK(d.cuDeviceGet(&dev1, 1));
    int v0 = -1, v1 = -1, posix1 = -1;
    EXPECT(d.cuDeviceGetAttribute(&v0, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, dev0), CUDA_SUCCESS,
           "HANDLE_TYPE_FABRIC_SUPPORTED of GPU 0");
    EXPECT(d.cuDeviceGetAttribute(&v1, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, dev1), CUDA_SUCCESS,
           "HANDLE_TYPE_FABRIC_SUPPORTED of GPU 1");
    EXPECT(d.cuDeviceGetAttribute(&posix1, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, dev1),
           CUDA_SUCCESS, "HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED of GPU 1");
    check(v0 == 1 && v1 == 0 && posix1 == 1, "FABRIC supported: GPU 0 %d (want 1), GPU 1 %d (want 0); POSIX fd on GPU 1 %d",
          v0, v1, posix1);
    CUmemGenericAllocationHandle on0, on1, imported;
    if (!REQUIRE_OK(create(&on0, 2 * MIB, 0, CU_MEM_HANDLE_TYPE_FABRIC))) return;
    CUmemFabricHandle wire;
    REQUIRE_OK(d.cuMemExportToShareableHandle(&wire, on0, CU_MEM_HANDLE_TYPE_FABRIC, 0));
    EXPECT(create(&on1, 2 * MIB, 1, CU_MEM_HANDLE_TYPE_FABRIC), CUDA_ERROR_NOT_SUPPORTED,
           "cuMemCreate FABRIC on GPU 1 (handle_type_fabric=0)");
    if (REQUIRE_OK(create(&on1, 2 * MIB, 1, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)))
        REQUIRE_OK(d.cuMemRelease(on1)); /* POSIX fd handles on GPU 1 still work */
    if (REQUIRE_OK(d.cuDevicePrimaryCtxRetain(&ctx1, dev1)) && REQUIRE_OK(d.cuCtxSetCurrent(ctx1))) {
        EXPECT(d.cuMemImportFromShareableHandle(&imported, &wire, CU_MEM_HANDLE_TYPE_FABRIC), CUDA_ERROR_NOT_SUPPORTED,
               "import of GPU 0's FABRIC handle with GPU 1 current");
        REQUIRE_OK(d.cuDevicePrimaryCtxRelease(dev1));
    }
    CUcontext ctx0;
    REQUIRE_OK(d.cuDevicePrimaryCtxRetain(&ctx0, dev0));
    REQUIRE_OK(d.cuCtxSetCurrent(ctx0));
    REQUIRE_OK(d.cuDevicePrimaryCtxRelease(dev0));
    if (REQUIRE_OK(d.cuMemImportFromShareableHandle(&imported, &wire, CU_MEM_HANDLE_TYPE_FABRIC)))
        REQUIRE_OK(d.cuMemRelease(imported)); /* the same handle imports with GPU 0 current */
    REQUIRE_OK(d.cuMemRelease(on0));
    check_nothing_live("after the no-FABRIC run");
}

/* GPU 0 with 4 MiB left by another process (gpu.0.memory_used_mib): the context is retained as on the H100 beside a
 * full GPU; cuMemGetInfo counts the others' memory; two 2 MiB allocations fit, the third is 2. */
static void t_full_gpu(void *arg) {
    (void)arg;
    if (!open_driver(0)) return;
    size_t free = 0, total = 0;
    REQUIRE_OK(d.cuMemGetInfo(&free, &total));
    check(free == 4 * MIB && total == 143771ULL * MIB, "cuMemGetInfo beside a job: free %zu (want 4 MiB), total %zu",
          free, total);
    CUmemGenericAllocationHandle h[3];
    REQUIRE_OK(create(&h[0], 2 * MIB, 0, CU_MEM_HANDLE_TYPE_FABRIC));
    REQUIRE_OK(create(&h[1], 2 * MIB, 0, CU_MEM_HANDLE_TYPE_FABRIC));
    EXPECT(create(&h[2], 2 * MIB, 0, CU_MEM_HANDLE_TYPE_FABRIC), CUDA_ERROR_OUT_OF_MEMORY,
           "cuMemCreate past what the job left (measured on an H100: 2)");
    REQUIRE_OK(d.cuMemGetInfo(&free, &total));
    check(free == 0, "cuMemGetInfo after both: free %zu (want 0)", free);
    REQUIRE_OK(d.cuMemRelease(h[0]));
    REQUIRE_OK(d.cuMemRelease(h[1]));
    if (REQUIRE_OK(create(&h[2], 2 * MIB, 0, CU_MEM_HANDLE_TYPE_FABRIC))) REQUIRE_OK(d.cuMemRelease(h[2]));
}

static void full_gpu(void) {
    snprintf(scenario, sizeof scenario, "%s", "full");
    char dir[600], channels[700], conf[800];
    snprintf(dir, sizeof dir, "%s/full", root);
    snprintf(channels, sizeof channels, "%s/channels", dir);
    snprintf(conf, sizeof conf, "%s/full.conf", dir);
    make_channel_dir(channels, (const int[]){0}, 1);
    write_file(conf, "gpus=1\ngpu.0.memory_used_mib=143767\n");
    struct env e = base_env("full", channels);
    env_set(&e, "FAKECUDA_CONFIG", "%s", conf);
    run("full", &e, t_full_gpu, NULL);
}

static void no_fabric(void) {
    snprintf(scenario, sizeof scenario, "%s", "nofabric");
    char dir[600], channels[700], conf[800], log[800];
    snprintf(dir, sizeof dir, "%s/nofabric", root);
    snprintf(channels, sizeof channels, "%s/channels", dir);
    snprintf(conf, sizeof conf, "%s/nofabric.conf", dir);
    snprintf(log, sizeof log, "%s/driver.log", dir);
    make_channel_dir(channels, (const int[]){0}, 1);
    write_file(conf, "gpus=2\ngpu.1.handle_type_fabric=0\ngpu.0.handle_type_fabric=2\n"); /* 2 is refused */
    struct env e = base_env("nofabric", channels);
    env_set(&e, "FAKECUDA_CONFIG", "%s", conf);
    run_logged("nofabric", &e, t_no_fabric, NULL, log);
    check(count_messages(log, "libcuda") == 1, "the bad handle_type_fabric line is reported once by libcuda (%d)",
          count_messages(log, "libcuda"));
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s <directory with the fake libcuda.so.1 and libnvidia-ml.so.1>\n", argv[0]);
        return 2;
    }
    fake_dir = argv[1];
    tally = mmap(NULL, sizeof *tally, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (tally == MAP_FAILED) return 2;
    const char *tmp = getenv("TMPDIR");
    snprintf(root, sizeof root, "%s/fake-selftest-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        return 2;
    }
    /* Children start from a known environment: nothing of the caller's driver setup leaks in. */
    static const char *cleared[] = {"CUDA_VISIBLE_DEVICES", "FAKECUDA_GPUS", "FAKECUDA_CONFIG", "FAKECUDA_STATE_DIR",
                                    "FAKECUDA_CHANNEL_DIR", "FAKECUDA_DEV_DIR", "FAKECUDA_SAME_NODE_101",
                                    "FAKECUDA_FAULTS"};
    for (size_t i = 0; i < sizeof cleared / sizeof cleared[0]; i++) unsetenv(cleared[i]);
    setvbuf(stdout, NULL, _IONBF, 0);

    char entry_channels[700];
    snprintf(entry_channels, sizeof entry_channels, "%s/entry/channels", root);
    struct env e = base_env("entry", entry_channels);
    run("entry", &e, t_entry_points, NULL);
    enumeration();
    memory();
    cross_process();
    posix_fd();
    channels();
    handles();
    seed_model();
    other_hosts();
    faults();
    compute_modes();
    no_fabric();
    full_gpu();

    remove_tree(root);
    printf("fake-selftest: %d checks, %d failed\n", tally->checks, tally->failed);
    int failed = tally->failed;
    munmap(tally, sizeof *tally);
    return failed ? 1 : 0;
}
