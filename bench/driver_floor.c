/*
 * The driver floor of one probe: the driver calls a push probe makes, in two processes like two agents,
 * with nothing else — no JVM, no JNI, no HTTP, no thread pool. bench/build-floor.sh builds it with gcc from this file
 * and native/src/loader.c (the shim's own loader: same dlopen, same cuGetProcAddress versions), and prints
 * per-stage and total percentiles as JSON.
 *
 * Sequence per iteration, as the agents run it (docs/performance.md):
 *   exporter  create    cuMemCreate(FABRIC) + cuMemAddressReserve + cuMemMap + cuMemSetAccess + pattern written
 *             export    cuMemExportToShareableHandle(FABRIC)
 *   (handle → importer over a pipe: not timed; the HTTP floor stands for the transfer)
 *   importer  import, reserve, map, access, verify (the pattern compared; where by the kernel, a 64 KiB window
 *             also copied and compared, as the verify stage), writeback_write (a second pattern
 *             written), release_importer (cuMemUnmap + cuMemAddressFree + cuMemRelease)
 *   exporter  writeback_check (the second pattern compared), release_exporter
 * FLOOR_ORDER=agents: the importer answers after writeback_write and releases while the exporter checks and
 * releases, as an agent answers a push before its release (peer/PushExchange.java); the stages are timed as before
 * and the total is still their sum. On one GPU it shows which process's work the next create follows.
 * The pattern is written by the fill kernel and checked by the compare kernel, as native/src/jni_bridge.c
 * memFillPattern / memVerifyPattern do (FLOOR_NO_KERNEL, FLOOR_VERIFY below: through one reused page-locked
 * staging buffer in 2 MiB chunks; FLOOR_PAGEABLE=1: malloc'd per call and no kernel, the way before both). Each
 * process makes its primary context current once; the shim does that on every call, which is part of what the
 * bench calls JNI overhead.
 *
 * usage: driver_floor [--iterations N] [--warmup W] [--size BYTES] [--gpu ORDINAL] [--out FILE]
 * (or inside a JVM: bench/build-floor.sh LIB.so builds this file into a JNI library, bench/floor_jni.c, that
 * dev.imexprobe.bench.FloorInJvm runs with the same arguments)
 * The library comes from IMEXPROBE_CUDA_LIBRARY (the fake) or the soname libcuda.so.1, as in the agent.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "loader.h"
#include "pattern.h"
#include "pattern_kernel.h"

enum { S_CREATE, S_EXPORT, S_IMPORT, S_RESERVE, S_MAP, S_ACCESS, S_VERIFY, S_WB_WRITE, S_REL_IMP, S_WB_CHECK,
       S_REL_EXP, S_COUNT };
static const char *const stage_names[S_COUNT] = {"create", "export", "import", "reserve", "map", "access",
                                                 "verify", "writeback_write", "release_importer",
                                                 "writeback_check", "release_exporter"};
/* Which importer-side stages the importer process reports back (in this order). */
static const int importer_stages[] = {S_IMPORT, S_RESERVE, S_MAP, S_ACCESS, S_VERIFY, S_WB_WRITE, S_REL_IMP};
#define IMPORTER_STAGES ((int)(sizeof importer_stages / sizeof importer_stages[0]))

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void die(const char *what, CUresult rc) {
    const char *name = NULL;
    if (cu.cuGetErrorName) cu.cuGetErrorName(rc, &name);
    fprintf(stderr, "driver_floor: %s returned %d %s\n", what, rc, name ? name : "");
    exit(1);
}

/* FLOOR_SET_CURRENT=1: before each call an agent makes through its own JNI native, what the shim's use_device
 * does there (its lock taken and released, the primary context made current again); without it the floor makes the
 * context current once. It asks what that per-call binding costs (docs/performance.md). */
static int set_current;
static CUcontext bound_ctx;
static pthread_mutex_t bind_lock = PTHREAD_MUTEX_INITIALIZER;

static void rebind(void) {
    if (!set_current || !bound_ctx) return;
    pthread_mutex_lock(&bind_lock);
    CUcontext c = bound_ctx;
    pthread_mutex_unlock(&bind_lock);
    cu.cuCtxSetCurrent(c);
}

#define CHECK(call)                          \
    do {                                     \
        rebind();                            \
        CUresult rc_ = (call);               \
        if (rc_ != CUDA_SUCCESS) die(#call, rc_); \
    } while (0)

/* ---- the pattern: the shim's own (pattern.h), same words, same chunking, same host memory ---- */

/* As the shim (native/src/jni_bridge.c staging_take): one 2 MiB page-locked staging buffer, reused, made in this
 * process's context once it is current; malloc'd memory per call when the driver has no cuMemHostAlloc or
 * refuses it. FLOOR_PAGEABLE=1 measures the older way (malloc'd per call) for comparison. */
static uint64_t *pinned;
/* And as the shim fills and checks: by the pattern kernels (pattern_kernel.h) when the driver loads them.
 * FLOOR_NO_KERNEL=1 fills and checks through the staging buffer in both processes, FLOOR_NO_KERNEL=importer or
 * =exporter in that one only (which process's kernels cost what, on a GPU the two share); FLOOR_VERIFY=copy keeps
 * the kernel fill but reads the pattern back into the staging buffer and compares on the CPU (the shim before
 * the compare kernel). */
static CUfunction fill_fn, compare_fn;
static int copy_window = 1; /* FLOOR_VERIFY=kernel: the compare kernel alone, the agents' way before the window */
static CUstream window_stream; /* the window's copy runs on it beside the compare kernel, as in the shim */

static int env_is(const char *name) {
    const char *v = getenv(name);
    return v && strcmp(v, "1") == 0;
}

static void staging_open(const char *role) {
    if (env_is("FLOOR_PAGEABLE")) return;
    void *p = NULL;
    if (cu.cuMemHostAlloc && cu.cuMemHostAlloc(&p, PATTERN_CHUNK, 0) == CUDA_SUCCESS) pinned = p;
    const char *no_kernel = getenv("FLOOR_NO_KERNEL");
    if (no_kernel && (!strcmp(no_kernel, "1") || !strcmp(no_kernel, role))) return;
    CUmodule module;
    if (pattern_kernel_load(&module, &fill_fn, &compare_fn) != CUDA_SUCCESS) fill_fn = compare_fn = NULL;
    const char *verify = getenv("FLOOR_VERIFY");
    if (verify && !strcmp(verify, "copy")) compare_fn = NULL;
    if (verify && !strcmp(verify, "kernel")) copy_window = 0;
    if (compare_fn && cu.cuStreamCreate && cu.cuMemcpyDtoHAsync &&
        cu.cuStreamCreate(&window_stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS)
        window_stream = NULL;
}

/* FLOOR_GAP_US=N: N microseconds between the driver work at the three points where an agent does other work
 * (the caller's request before create; the import request before import; the importer's answer before the
 * write-back check), spent as FLOOR_GAP_MODE says: sleep (the thread blocked, its CPU free to idle), spin (busy,
 * the caches kept) or evict (busy writing FLOOR_EVICT_MB MiB, default 16, as a JVM's request handling moves the
 * caches' contents). It asks whether the agents' driver calls are slower than the floor's because of the gaps
 * between them rather than because of anything they call (docs/performance.md). Default: no gap. */
static long gap_us;
static int gap_mode; /* 0 sleep, 1 spin, 2 evict */
static unsigned char *evict_buf;
static size_t evict_bytes;

static void gap_open(void) {
    const char *g = getenv("FLOOR_GAP_US"), *m = getenv("FLOOR_GAP_MODE"), *mb = getenv("FLOOR_EVICT_MB");
    gap_us = g ? atol(g) : 0;
    gap_mode = !m || !strcmp(m, "sleep") ? 0 : !strcmp(m, "spin") ? 1 : 2;
    if (gap_mode == 2) {
        evict_bytes = (size_t)(mb ? atol(mb) : 16) << 20;
        evict_buf = malloc(evict_bytes);
        if (!evict_buf) gap_mode = 1;
    }
}

static void gap(void) {
    if (gap_us <= 0) return;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (gap_mode == 0) {
        struct timespec d = {gap_us / 1000000, (gap_us % 1000000) * 1000};
        nanosleep(&d, NULL);
        return;
    }
    static size_t at;
    long elapsed;
    do {
        if (gap_mode == 2)
            for (int k = 0; k < 64; k++, at = (at + 64) % evict_bytes) evict_buf[at]++;
        clock_gettime(CLOCK_MONOTONIC, &t);
        elapsed = (t.tv_sec - t0.tv_sec) * 1000000L + (t.tv_nsec - t0.tv_nsec) / 1000;
    } while (elapsed < gap_us);
}

static uint64_t *staging_take(size_t size, size_t *chunk) {
    if (pinned) {
        *chunk = PATTERN_CHUNK;
        return pinned;
    }
    *chunk = size < PATTERN_CHUNK ? size : PATTERN_CHUNK;
    return malloc(*chunk);
}

static void staging_give(uint64_t *buf) {
    if (buf != pinned) free(buf);
}

static CUresult fill_pattern(CUdeviceptr ptr, size_t size, uint64_t seed) {
    if (fill_fn) return pattern_kernel_fill(fill_fn, ptr, size, seed);
    size_t chunk;
    uint64_t *buf = staging_take(size, &chunk);
    if (!buf) return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult rc = CUDA_SUCCESS;
    for (size_t off = 0; off < size && rc == CUDA_SUCCESS; off += chunk) {
        size_t n = size - off < chunk ? size - off : chunk;
        pattern_fill(buf, n / 8, seed, off / 8);
        rc = cu.cuMemcpyHtoD(ptr + off, buf, n);
    }
    staging_give(buf);
    if (rc == CUDA_SUCCESS) rc = cu.cuCtxSynchronize(); /* as the shim: a pageable copy's DMA must have landed */
    return rc;
}

/* Copies [ptr + from, ptr + to) into the staging buffer and compares it on the CPU, as the shim's copy_compare:
 * the offset of the first differing word, -1 when all match; *rc gets the copy's result. */
static long long copy_compare(CUdeviceptr ptr, size_t from, size_t to, uint64_t seed, CUresult *rc) {
    size_t chunk;
    uint64_t *buf = staging_take(to - from, &chunk);
    *rc = buf ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
    long long mismatch = -1;
    for (size_t off = from; off < to && *rc == CUDA_SUCCESS && mismatch < 0; off += chunk) {
        size_t n = to - off < chunk ? to - off : chunk;
        *rc = cu.cuMemcpyDtoH(buf, ptr + off, n);
        if (*rc != CUDA_SUCCESS) break;
        size_t bad = pattern_first_mismatch(buf, n / 8, seed, off / 8);
        if (bad < n / 8) mismatch = (long long)(off + bad * 8);
    }
    staging_give(buf);
    return mismatch;
}

/* Returns the offset of the first differing word, -1 when all match; *rc gets the driver's result (the compare
 * kernel's or the copy's). With `window`, as the agents' verify stage (not their write-back check), a copy engine
 * also reads one 64 KiB window beside the compare kernel (on its own stream; after it where there is none). */
#define COPY_WINDOW ((size_t)64 << 10)
static long long verify_pattern(CUdeviceptr ptr, size_t size, uint64_t seed, int window, CUresult *rc) {
    if (compare_fn && pinned) {
        long long bad = -1;
        size_t w = size < COPY_WINDOW ? size : COPY_WINDOW, from = (size_t)(seed % (size / w)) * w;
        int beside = window && copy_window && window_stream;
        uint64_t *win = pinned + PATTERN_CHUNK / 16; /* above the kernel's answers, as in the shim */
        CUresult wrc = beside ? cu.cuMemcpyDtoHAsync(win, ptr + from, w, window_stream) : CUDA_SUCCESS;
        *rc = pattern_kernel_compare(compare_fn, ptr, size, seed, pinned, &bad); /* synchronises both */
        if (*rc == CUDA_SUCCESS && wrc != CUDA_SUCCESS) *rc = wrc;
        if (*rc != CUDA_SUCCESS || bad >= 0 || !window || !copy_window) return bad < 0 ? -1 : bad * 8;
        if (!beside) return copy_compare(ptr, from, from + w, seed, rc);
        size_t wbad = pattern_first_mismatch(win, w / 8, seed, from / 8);
        return wbad < w / 8 ? (long long)(from + wbad * 8) : -1;
    }
    return copy_compare(ptr, 0, size, seed, rc);
}

/* ---- driver set-up --------------------------------------------------------------------------------- */

static void open_driver(int ordinal, const char *role) {
    const struct load_report *r = imexprobe_load(NULL, NULL);
    if (!r->cuda_loaded) {
        fprintf(stderr, "driver_floor: no usable CUDA driver library (%s): %s\n",
                r->cuda_library ? r->cuda_library : "libcuda.so.1", r->cuda_message ? r->cuda_message : "");
        exit(2);
    }
    CHECK(cu.cuInit(0));
    CUdevice dev;
    CUcontext ctx;
    CHECK(cu.cuDeviceGet(&dev, ordinal));
    CHECK(cu.cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cu.cuCtxSetCurrent(ctx));
    set_current = env_is("FLOOR_SET_CURRENT");
    bound_ctx = ctx;
    staging_open(role);
    gap_open();
}

static CUmemAllocationProp fabric_prop(int ordinal) {
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_FABRIC;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = ordinal;
    return prop;
}

static CUmemAccessDesc rw_access(int ordinal) {
    CUmemAccessDesc d;
    memset(&d, 0, sizeof d);
    d.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    d.location.id = ordinal;
    d.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    return d;
}

static void write_all(int fd, const void *buf, size_t n) {
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) { perror("driver_floor: write"); exit(1); }
        p += w;
        n -= (size_t)w;
    }
}

static int read_all(int fd, void *buf, size_t n) {
    char *p = buf;
    while (n > 0) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return 0;
        p += r;
        n -= (size_t)r;
    }
    return 1;
}

/* What travels exporter → importer per iteration (the same facts as the /v1/imports body). */
struct offer {
    CUmemFabricHandle handle;
    uint64_t seed, writeback_seed;
    int first_measured; /* the first iteration after the warm-up: start counting CPU time */
    int stop;
};

/* CPU time (user + system) of this process so far, ms: what the driver work costs the host, copies included. */
static double cpu_ms(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3;
}

/* The system (kernel) part of it. */
static double sys_ms(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_stime.tv_sec * 1e3 + u.ru_stime.tv_usec / 1e3;
}

/* ---- the importer process ----------------------------------------------------------------------------- */

static int agents_order; /* FLOOR_ORDER=agents, above */

static void importer(int in, int out, int ordinal, size_t size) {
    open_driver(ordinal, "importer");
    CUmemAccessDesc access = rw_access(ordinal);
    struct offer o;
    double cpu_start = 0, sys_start = 0;
    while (read_all(in, &o, sizeof o) && !o.stop) {
        gap();
        if (o.first_measured) {
            cpu_start = cpu_ms();
            sys_start = sys_ms();
        }
        double t[IMPORTER_STAGES];
        CUresult rc;
        CUmemGenericAllocationHandle h;
        CUdeviceptr ptr;
        double t0 = now_ms();
        CHECK(cu.cuMemImportFromShareableHandle(&h, &o.handle, CU_MEM_HANDLE_TYPE_FABRIC));
        double t1 = now_ms();
        CHECK(cu.cuMemAddressReserve(&ptr, size, 0, 0, 0));
        double t2 = now_ms();
        CHECK(cu.cuMemMap(ptr, size, 0, h, 0));
        double t3 = now_ms();
        CHECK(cu.cuMemSetAccess(ptr, size, &access, 1));
        double t4 = now_ms();
        rebind();
        long long bad = verify_pattern(ptr, size, o.seed, 1, &rc);
        if (rc != CUDA_SUCCESS) die("verify", rc);
        if (bad >= 0) { fprintf(stderr, "driver_floor: pattern mismatch at byte %lld\n", bad); exit(1); }
        double t5 = now_ms();
        CHECK(fill_pattern(ptr, size, o.writeback_seed));
        double t6 = now_ms();
        double got[IMPORTER_STAGES] = {t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t6 - t5, 0};
        if (agents_order) write_all(out, got, sizeof(double) * (IMPORTER_STAGES - 1));
        CHECK(cu.cuMemUnmap(ptr, size));
        CHECK(cu.cuMemAddressFree(ptr, size));
        CHECK(cu.cuMemRelease(h));
        got[IMPORTER_STAGES - 1] = now_ms() - t6;
        memcpy(t, got, sizeof t);
        if (agents_order) write_all(out, &t[IMPORTER_STAGES - 1], sizeof(double));
        else write_all(out, t, sizeof t);
    }
    double cpu[2] = {cpu_ms() - cpu_start, sys_ms() - sys_start};
    write_all(out, cpu, sizeof cpu);
    exit(0);
}

/* ---- statistics ------------------------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of n sorted values (the Java side uses the same rule). */
static double pct(const double *sorted, int n, double q) {
    int rank = (int)(q * n + 0.999999);
    if (rank < 1) rank = 1;
    if (rank > n) rank = n;
    return sorted[rank - 1];
}

static void print_stats(FILE *f, const char *indent, const char *name, double *v, int n, int last) {
    double *s = malloc(sizeof(double) * (size_t)n);
    memcpy(s, v, sizeof(double) * (size_t)n);
    qsort(s, (size_t)n, sizeof(double), cmp_double);
    double sum = 0;
    for (int i = 0; i < n; i++) sum += s[i];
    fprintf(f, "%s\"%s\": {\"p50\": %.6f, \"p99\": %.6f, \"mean\": %.6f, \"min\": %.6f, \"max\": %.6f}%s\n", indent,
            name, pct(s, n, 0.5), pct(s, n, 0.99), sum / n, s[0], s[n - 1], last ? "" : ",");
    free(s);
}

int main(int argc, char **argv) {
    int iterations = 200, warmup = 20, ordinal = 0;
    size_t size = (size_t)2 << 20;
    const char *out_path = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--iterations") && i + 1 < argc) iterations = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--warmup") && i + 1 < argc) warmup = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--size") && i + 1 < argc) size = (size_t)strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--gpu") && i + 1 < argc) ordinal = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--out") && i + 1 < argc) out_path = argv[++i];
        else {
            fprintf(stderr, "usage: driver_floor [--iterations N] [--warmup W] [--size BYTES] [--gpu N] [--out FILE]\n");
            return 2;
        }
    }
    if (iterations < 1 || warmup < 0 || size == 0 || size % 8) {
        fprintf(stderr, "driver_floor: bad arguments\n");
        return 2;
    }
    const char *order = getenv("FLOOR_ORDER");
    agents_order = order && !strcmp(order, "agents");
    /* Fork before the driver is touched: a CUDA context does not survive fork. */
    int to_imp[2], from_imp[2];
    if (pipe(to_imp) || pipe(from_imp)) { perror("driver_floor: pipe"); return 1; }
    pid_t child = fork();
    if (child < 0) { perror("driver_floor: fork"); return 1; }
    if (child == 0) {
        close(to_imp[1]);
        close(from_imp[0]);
        importer(to_imp[0], from_imp[1], ordinal, size);
    }
    close(to_imp[0]);
    close(from_imp[1]);
    open_driver(ordinal, "exporter");
    CUmemAllocationProp prop = fabric_prop(ordinal);
    CUmemAccessDesc access = rw_access(ordinal);
    double *samples[S_COUNT];
    for (int s = 0; s < S_COUNT; s++) samples[s] = calloc((size_t)iterations, sizeof(double));
    double *total = calloc((size_t)iterations, sizeof(double));
    uint64_t seed = (uint64_t)now_ms() * 0x9E3779B97F4A7C15ULL;
    double cpu_start = 0, sys_start = 0;
    for (int it = -warmup; it < iterations; it++) {
        if (it == 0) {
            cpu_start = cpu_ms();
            sys_start = sys_ms();
        }
        double t[S_COUNT];
        CUmemGenericAllocationHandle h;
        CUdeviceptr ptr;
        struct offer o;
        memset(&o, 0, sizeof o);
        o.seed = ++seed;
        o.writeback_seed = ++seed;
        o.first_measured = it == 0;
        gap();
        double t0 = now_ms();
        CHECK(cu.cuMemCreate(&h, size, &prop, 0));
        CHECK(cu.cuMemAddressReserve(&ptr, size, 0, 0, 0));
        CHECK(cu.cuMemMap(ptr, size, 0, h, 0));
        CHECK(cu.cuMemSetAccess(ptr, size, &access, 1));
        CHECK(fill_pattern(ptr, size, o.seed));
        double t1 = now_ms();
        CHECK(cu.cuMemExportToShareableHandle(&o.handle, h, CU_MEM_HANDLE_TYPE_FABRIC, 0));
        double t2 = now_ms();
        t[S_CREATE] = t1 - t0;
        t[S_EXPORT] = t2 - t1;
        write_all(to_imp[1], &o, sizeof o);
        double imp[IMPORTER_STAGES] = {0};
        /* In the agents' order the importer's release comes after the exporter's (below). */
        if (!read_all(from_imp[0], imp, sizeof(double) * (IMPORTER_STAGES - agents_order))) {
            fprintf(stderr, "driver_floor: the importer process stopped (see its message above)\n");
            return 1;
        }
        for (int k = 0; k < IMPORTER_STAGES; k++) t[importer_stages[k]] = imp[k];
        gap();
        double t3 = now_ms();
        CUresult rc;
        rebind();
        long long bad = verify_pattern(ptr, size, o.writeback_seed, 0, &rc);
        if (rc != CUDA_SUCCESS) die("writeback check: cuMemcpyDtoH", rc);
        if (bad >= 0) { fprintf(stderr, "driver_floor: write-back mismatch at byte %lld\n", bad); return 1; }
        double t4 = now_ms();
        CHECK(cu.cuMemUnmap(ptr, size));
        CHECK(cu.cuMemAddressFree(ptr, size));
        CHECK(cu.cuMemRelease(h));
        double t5 = now_ms();
        t[S_WB_CHECK] = t4 - t3;
        t[S_REL_EXP] = t5 - t4;
        if (agents_order) {
            if (!read_all(from_imp[0], &imp[IMPORTER_STAGES - 1], sizeof(double))) {
                fprintf(stderr, "driver_floor: the importer process stopped (see its message above)\n");
                return 1;
            }
            t[S_REL_IMP] = imp[IMPORTER_STAGES - 1];
        }
        if (it < 0) continue;
        double sum = 0;
        for (int s = 0; s < S_COUNT; s++) {
            samples[s][it] = t[s];
            sum += t[s];
        }
        total[it] = sum;
    }
    double exporter_cpu = cpu_ms() - cpu_start, exporter_sys = sys_ms() - sys_start;
    struct offer stop;
    memset(&stop, 0, sizeof stop);
    stop.stop = 1;
    write_all(to_imp[1], &stop, sizeof stop);
    double importer[2] = {-1, -1};
    if (!read_all(from_imp[0], importer, sizeof importer)) importer[0] = importer[1] = -1;
    int status = 0;
    waitpid(child, &status, 0);
    FILE *f = out_path ? fopen(out_path, "w") : stdout;
    if (!f) { perror("driver_floor: output"); return 1; }
    const struct load_report *r = imexprobe_load(NULL, NULL);
    fprintf(f, "{\n  \"unit\": \"ms\",\n  \"sizeBytes\": %zu,\n  \"iterations\": %d,\n  \"warmup\": %d,\n", size,
            iterations, warmup);
    fprintf(f, "  \"library\": \"%s\",\n  \"fake\": %s,\n", r->cuda_library ? r->cuda_library : "",
            r->fake_info ? "true" : "false");
    fprintf(f, "  \"cpuMsPerIteration\": {\"exporter\": %.6f, \"importer\": %.6f, \"exporterSystem\": %.6f, "
            "\"importerSystem\": %.6f},\n", exporter_cpu / iterations, importer[0] / iterations,
            exporter_sys / iterations, importer[1] / iterations);
    fprintf(f, "  \"stages\": {\n");
    for (int s = 0; s < S_COUNT; s++) print_stats(f, "    ", stage_names[s], samples[s], iterations, s == S_COUNT - 1);
    fprintf(f, "  },\n");
    print_stats(f, "  ", "total", total, iterations, 1);
    fprintf(f, "}\n");
    if (f != stdout) fclose(f);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
